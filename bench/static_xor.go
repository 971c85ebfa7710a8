package main

// xorfilter's binary fuse filters in the -static table: BinaryFuse8, the
// reference of the "8-bit" group, and BinaryFuse[uint16], of "16-bit".
// They take uint64 keys: the build and the queries hash each 16-byte key
// with xxh3.Hash inside the timed loops.

import (
	"github.com/FastFilter/xorfilter"
	"github.com/zeebo/xxh3"
)

func init() {
	staticLibs = append(staticLibs,
		staticLib{name: "xorfilter-bfuse8", group: "8-bit", ref: true, bound: 8, build: func(keys [][]byte) (staticFilter, error) {
			f, err := xorfilter.PopulateBinaryFuse8(xorHashes(keys))
			if err != nil {
				return nil, err
			}
			return xorFuse8{f}, nil
		}},
		staticLib{name: "xorfilter-bfuse16", group: "16-bit", ref: true, bound: 16, build: func(keys [][]byte) (staticFilter, error) {
			f, err := xorfilter.NewBinaryFuse[uint16](xorHashes(keys))
			if err != nil {
				return nil, err
			}
			return xorFuse16{f}, nil
		}},
	)
}

func xorHashes(keys [][]byte) []uint64 {
	h := make([]uint64, len(keys))
	for i, k := range keys {
		h[i] = xxh3.Hash(k)
	}
	return h
}

type xorFuse8 struct{ f *xorfilter.BinaryFuse8 }

func (x xorFuse8) contains(keys [][]byte) int {
	c := 0
	for _, k := range keys {
		if x.f.Contains(xxh3.Hash(k)) {
			c++
		}
	}
	return c
}

func (x xorFuse8) containsBatch([][]byte, []bool) (int, bool) { return 0, false }
func (x xorFuse8) bits() uint64                               { return uint64(len(x.f.Fingerprints)) * 8 }

type xorFuse16 struct{ f *xorfilter.BinaryFuse[uint16] }

func (x xorFuse16) contains(keys [][]byte) int {
	c := 0
	for _, k := range keys {
		if x.f.Contains(xxh3.Hash(k)) {
			c++
		}
	}
	return c
}

func (x xorFuse16) containsBatch([][]byte, []bool) (int, bool) { return 0, false }
func (x xorFuse16) bits() uint64                               { return uint64(len(x.f.Fingerprints)) * 16 }
