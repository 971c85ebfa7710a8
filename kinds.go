package bloomlab

// The table of kinds: each package registers its kinds (internal/kind)
// from its init function. Adding a kind is its package and one line here.
import (
	_ "github.com/bloomlab/bloomlab/blocked"
	_ "github.com/bloomlab/bloomlab/bloom"
	_ "github.com/bloomlab/bloomlab/choices"
	_ "github.com/bloomlab/bloomlab/counting"
	_ "github.com/bloomlab/bloomlab/countmin"
	_ "github.com/bloomlab/bloomlab/cuckoo"
	_ "github.com/bloomlab/bloomlab/dlcbf"
	_ "github.com/bloomlab/bloomlab/dleft"
	_ "github.com/bloomlab/bloomlab/fuse"
	_ "github.com/bloomlab/bloomlab/ribbon"
	_ "github.com/bloomlab/bloomlab/sbbf"
	_ "github.com/bloomlab/bloomlab/scalable"
)
