//go:build (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64 || wasm) && !purego

// The payload read in place: on a little-endian machine a file's payload
// words are the bytes of the []uint64 that holds them, so the reader fills
// the result directly, with no buffer and no copy. This file is the only
// one in the package that uses unsafe (and PutWords, PutBytes copy the
// same way); words_safe.go is its portable twin
// (big-endian machines, or -tags purego), and TestFillInPlace compares the
// two. The architectures are encoding/binary's little-endian ones
// (native_endian_little.go).

package format

import "unsafe"

// PutWords stores the little-endian words of src (8·len(dst) bytes) in
// dst: one copy of memory here.
func PutWords(dst []uint64, src []byte) {
	copy(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(dst))), 8*len(dst)), src[:8*len(dst)])
}

// PutBytes stores the words of src as 8·len(src) little-endian bytes in
// dst: one copy of memory here.
func PutBytes(dst []byte, src []uint64) {
	copy(dst[:8*len(src)], unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(src))), 8*len(src)))
}

// fill reads len(dst) payload words into dst.
func (d *Decoder) fill(dst []uint64) error { return d.fillInPlace(dst) }

// fillInPlace reads the payload bytes of dst straight into its memory: a
// little-endian word's bytes, in memory order, are its file bytes.
func (d *Decoder) fillInPlace(dst []uint64) error {
	if len(dst) == 0 {
		return nil
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(dst))), 8*len(dst))
	return d.read(b, "payload")
}
