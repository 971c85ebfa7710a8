//go:build !((386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64 || wasm) && !purego)

// The portable payload read, for big-endian machines and -tags purego: the
// twin of words_unsafe.go.

package format

import "encoding/binary"

// PutWords stores the little-endian words of src (8·len(dst) bytes) in
// dst.
func PutWords(dst []uint64, src []byte) {
	src = src[:8*len(dst)]
	for i := range dst {
		dst[i] = binary.LittleEndian.Uint64(src[8*i:])
	}
}

// PutBytes stores the words of src as 8·len(src) little-endian bytes in
// dst.
func PutBytes(dst []byte, src []uint64) {
	dst = dst[:8*len(src)]
	for i, w := range src {
		binary.LittleEndian.PutUint64(dst[8*i:], w)
	}
}

// fill reads len(dst) payload words into dst.
func (d *Decoder) fill(dst []uint64) error { return d.fillSafe(dst) }
