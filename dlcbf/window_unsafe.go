//go:build (amd64 || arm64) && !purego

// The static check's window as one unaligned load: on a little-endian
// machine whose loads need no alignment, bits pos … pos+56 of the payload
// are the 8 bytes from byte pos/8, shifted right by pos mod 8. This file is
// the package's only use of unsafe; window_safe.go is its portable twin
// and TestWindow compares the two.

package dlcbf

import "unsafe"

// window returns at least windowBits bits of w from bit pos, as
// windowSafe does (the bits above may differ). The caller guarantees
// pos < 64·(len(w) − 1), so that the 8 bytes read lie within w.
func window(w []uint64, pos uint64) uint64 {
	p := unsafe.Add(unsafe.Pointer(unsafe.SliceData(w)), pos>>3)
	return *(*uint64)(p) >> (pos & 7)
}
