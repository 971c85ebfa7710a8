package hashing_test

import (
	"fmt"

	"github.com/bloomlab/bloomlab/hashing"
)

// A key is hashed once, to a 128-bit Digest (seeded xxh3-128); a scheme
// then derives its k positions in [0, m) from the digest alone. The
// positions are pinned by known-answer tests: a file written today is read
// the same way forever. Double and enhanced double hashing share their
// first two probes (h1 and h1 + h2); independent positions may repeat, as
// k separate hashes may.
func Example() {
	d := hashing.SumString("alice", 0)
	for _, s := range []hashing.Scheme{hashing.Enhanced, hashing.Double, hashing.Independent} {
		ix, err := hashing.NewIndexer(s, 1000, 4)
		if err != nil {
			panic(err)
		}
		fmt.Println(s, ix.Positions(d, make([]uint64, ix.K())))
	}
	// Output:
	// enhanced [787 72 358 646]
	// double [787 72 357 642]
	// independent [774 530 153 530]
}
