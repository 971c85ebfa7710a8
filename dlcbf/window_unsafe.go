//go:build (amd64 || arm64) && !purego

// The static check's window as one unaligned load: on a little-endian
// machine whose loads need no alignment, bits pos … pos+56 of the payload
// are the 8 bytes from byte pos/8 (load64), shifted right by pos mod 8. This file is
// the package's only use of unsafe; window_safe.go is its portable twin
// and TestWindow compares the two.

package dlcbf

import "unsafe"

// window returns at least windowBits bits of w from bit pos, as
// windowSafe does (the bits above may differ). The caller guarantees
// pos < 64·(len(w) − 1), so that the 8 bytes read lie within w.
func window(w []uint64, pos uint64) uint64 { return load64(w, pos>>3) >> (pos & 7) }

// load64 returns the 64 bits of w from byte b (bit 8b), as
// windowSafe(w, 8b) does; b < 8·(len(w) − 1).
func load64(w []uint64, b uint64) uint64 {
	return *(*uint64)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(w)), b))
}
