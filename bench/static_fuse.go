package main

// bloomlab's binary fuse filters in the -static table: 3- and 4-wise with
// 8-, 16- and 32-bit fingerprints, built from the 16-byte keys (New hashes
// each with hashing.Sum64) and queried with Contains and ContainsBatch.

import (
	"fmt"

	"github.com/bloomlab/bloomlab/fuse"
)

func init() {
	for _, fb := range []int{8, 16, 32} {
		for _, arity := range []int{3, 4} {
			c := fuse.Config{Arity: arity, FingerprintBits: fb, Seed: 0}
			staticLibs = append(staticLibs, staticLib{
				name: fmt.Sprintf("bloomlab-fuse%d-%d", arity, fb), group: fmt.Sprintf("%d-bit", fb), bound: float64(fb),
				build: func(keys [][]byte) (staticFilter, error) {
					f, err := fuse.New(keys, c)
					if err != nil {
						return nil, err
					}
					return bloomlabFuse{f}, nil
				},
			})
		}
	}
}

type bloomlabFuse struct{ f *fuse.Filter }

func (b bloomlabFuse) contains(keys [][]byte) int {
	c := 0
	for _, k := range keys {
		if b.f.Contains(k) {
			c++
		}
	}
	return c
}

func (b bloomlabFuse) containsBatch(keys [][]byte, out []bool) (int, bool) {
	c := 0
	for _, v := range b.f.ContainsBatch(keys, out) {
		if v {
			c++
		}
	}
	return c, true
}

func (b bloomlabFuse) bits() uint64 { return b.f.Bits() }
