// Package hugepage allocates the large arrays of bloomlab's filters so
// that the kernel may back them with huge pages.
//
// A filter's probes land on random words of its array: once the array is
// larger than the processor's TLB covers with 4 KiB pages (a few MiB),
// each probe that misses the cache also misses the TLB, and the page walk
// costs another memory access or more (two levels of them in a virtual
// machine). Backed by 2 MiB pages, an array of a few GiB fits the TLB. On
// Linux, Words and Bytes ask for huge pages (madvise MADV_HUGEPAGE) on the
// 2 MiB-aligned part of an array of at least MinBytes, before anything is
// written to it, so that the pages it touches first are huge where the
// system allows (transparent_hugepage "madvise" or "always"); elsewhere,
// or if the kernel refuses, they are ordinary allocations. The memory is
// the Go heap's as any slice's (the garbage collector frees it); advice
// changes only how the kernel maps it. Huge pages make a sparsely used
// array resident in 2 MiB steps: a filter's memory is counted whole
// anyway (the server's maxmemory, `bloomlab plan`). The environment
// variable BLOOMLAB_NO_HUGEPAGES=1 turns the advice off (to compare, as
// scalable's BenchmarkLarge does, or where huge pages are unwanted).
package hugepage

import (
	"os"
	"unsafe"
)

// MinBytes is the smallest array given huge-page advice (four huge pages:
// below it the TLB covers the array anyway, and advice would split the
// heap's mappings for nothing).
const MinBytes = 8 << 20

// off is BLOOMLAB_NO_HUGEPAGES, read once.
var off = os.Getenv("BLOOMLAB_NO_HUGEPAGES") != ""

// Words returns a zeroed slice of n words, advised as the package says.
func Words(n uint64) []uint64 { return WordsCap(n, n) }

// WordsCap is Words with capacity c ≥ n.
func WordsCap(n, c uint64) []uint64 {
	w := make([]uint64, n, c)
	if c*8 >= MinBytes && !off {
		advise(unsafe.Pointer(unsafe.SliceData(w)), uintptr(c)*8)
	}
	return w
}

// Bytes returns a zeroed slice of n bytes, advised as the package says.
func Bytes(n uint64) []byte { return BytesCap(n, n) }

// BytesCap is Bytes with capacity c ≥ n.
func BytesCap(n, c uint64) []byte {
	b := make([]byte, n, c)
	if c >= MinBytes && !off {
		advise(unsafe.Pointer(unsafe.SliceData(b)), uintptr(c))
	}
	return b
}

const huge = 2 << 20

// aligned returns the 2 MiB-aligned part of n bytes at address a, as
// offsets [from, to) from a (empty when there is none).
func aligned(a, n uintptr) (from, to uintptr) {
	start := (a + huge - 1) &^ (huge - 1)
	end := (a + n) &^ (huge - 1)
	if end < start {
		end = start
	}
	return start - a, end - a
}
