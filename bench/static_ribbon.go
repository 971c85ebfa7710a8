package main

// bloomlab's Standard Ribbon filters in the -static table: r = 7 and 8
// (group "8-bit") and r = 16 (group "16-bit"), built from the 16-byte keys
// (New hashes each with hashing.Sum64) and queried with Contains and
// ContainsBatch.

import (
	"fmt"

	"github.com/bloomlab/bloomlab/ribbon"
)

func init() {
	for _, r := range []int{7, 8, 16} {
		c := ribbon.Config{ResultBits: r, Seed: 0}
		group := "8-bit"
		if r > 8 {
			group = "16-bit"
		}
		staticLibs = append(staticLibs, staticLib{
			name: fmt.Sprintf("bloomlab-ribbon-r%d", r), group: group, bound: float64(r),
			build: func(keys [][]byte) (staticFilter, error) {
				f, err := ribbon.New(keys, c)
				if err != nil {
					return nil, err
				}
				return bloomlabRibbon{f}, nil
			},
		})
	}
}

type bloomlabRibbon struct{ f *ribbon.Filter }

func (b bloomlabRibbon) contains(keys [][]byte) int {
	c := 0
	for _, k := range keys {
		if b.f.Contains(k) {
			c++
		}
	}
	return c
}

func (b bloomlabRibbon) containsBatch(keys [][]byte, out []bool) (int, bool) {
	c := 0
	for _, v := range b.f.ContainsBatch(keys, out) {
		if v {
			c++
		}
	}
	return c, true
}

func (b bloomlabRibbon) bits() uint64 { return b.f.Bits() }
