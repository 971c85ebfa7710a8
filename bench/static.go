package main

// The static-filter run (go run . -static): bloomlab's fuse and ribbon
// filters beside FastFilter/xorfilter's binary fuse filters, at 10^6 and
// 10^8 keys, in one process with the sides interleaved (issue 27).
//
// Every library registers its rows in staticLibs from an init function
// (static_fuse.go, static_ribbon.go, static_xor.go). A row is built from
// the 16-byte keys (hashing included: the libraries taking uint64 keys get
// xxh3.Hash of each key inside the timed build and query loops), then
// queried one key at a time and, where the library has one, in batches.

// staticLib is one static filter of the -static table.
type staticLib struct {
	// name is the row's name: "bloomlab-fuse3-8", "xorfilter-bfuse8",
	// "bloomlab-ribbon-r8", …
	name string
	// group names the rows compared with each other (equal ε): "8-bit",
	// "16-bit", "r=7", …; ratios are taken within a group against its
	// reference row (ref).
	group string
	ref   bool
	// build builds the filter of keys (timed: hashing included).
	build func(keys [][]byte) (staticFilter, error)
}

// staticFilter is a built filter. The harness calls each method once per
// chunk of keys, never per key: the loops over keys live in the library's
// own file and call its methods directly.
type staticFilter interface {
	// contains queries keys one at a time and returns how many answered
	// true.
	contains(keys [][]byte) int
	// containsBatch queries keys with the library's batched query and
	// returns how many answered true; ok is false if it has none.
	containsBatch(keys [][]byte, out []bool) (hits int, ok bool)
	// bits is the filter's size in bits (its whole state).
	bits() uint64
}

// staticLibs is every row of the -static table, in registration order.
var staticLibs []staticLib
