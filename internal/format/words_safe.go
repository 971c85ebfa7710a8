//go:build !((386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64 || wasm) && !purego)

// The portable payload read, for big-endian machines and -tags purego: the
// twin of words_unsafe.go.

package format

// fill reads len(dst) payload words into dst.
func (d *Decoder) fill(dst []uint64) error { return d.fillSafe(dst) }
