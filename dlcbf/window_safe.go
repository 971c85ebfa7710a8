//go:build !((amd64 || arm64) && !purego)

// The portable twin of window_unsafe.go.

package dlcbf

// window returns at least windowBits bits of w from bit pos; w[pos/64+1]
// must exist.
func window(w []uint64, pos uint64) uint64 { return windowSafe(w, pos) }

// load64 returns the 64 bits of w from byte b; w[b/8+1] must exist.
func load64(w []uint64, b uint64) uint64 { return windowSafe(w, 8*b) }
