package fuse

import (
	"testing"

	"github.com/bloomlab/bloomlab/internal/filtertest"
)

// BenchmarkBuild: construction from 10^6 16-byte keys, hashing included
// (ns/op is per key).
func BenchmarkBuild(b *testing.B) {
	keys := filtertest.Keys(1_000_000, 1)
	for _, c := range []Config{{Arity: 3}, {Arity: 4}} {
		b.Run(map[int]string{3: "arity=3", 4: "arity=4"}[c.Arity], func(b *testing.B) {
			for b.Loop() {
				if _, err := New(keys, c); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ns/key")
		})
	}
}

// BenchmarkContains: single and batched queries of a 10^6-key 8-bit
// filter, half present keys.
func BenchmarkContains(b *testing.B) {
	keys := filtertest.Keys(1_000_000, 1)
	f, _ := New(keys, Config{})
	q := filtertest.Keys(2_000_000, 1)[:1<<20]
	b.Run("single", func(b *testing.B) {
		i := 0
		for b.Loop() {
			f.Contains(q[i&(1<<20-1)])
			i++
		}
	})
	out := make([]bool, 1024)
	b.Run("batch", func(b *testing.B) {
		i := 0
		for b.Loop() {
			f.ContainsBatch(q[i&(1<<20-1):i&(1<<20-1)+1024], out)
			i += 1024
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1024, "ns/key")
	})
}
