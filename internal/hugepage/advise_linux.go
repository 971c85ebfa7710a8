package hugepage

import (
	"syscall"
	"unsafe"
)

// advise asks for huge pages on the aligned part of n bytes at p; a
// refusal (a kernel without transparent huge pages) changes nothing.
func advise(p unsafe.Pointer, n uintptr) {
	from, to := aligned(uintptr(p), n)
	if to == from {
		return
	}
	syscall.Madvise(unsafe.Slice((*byte)(unsafe.Add(p, from)), to-from), syscall.MADV_HUGEPAGE)
}
