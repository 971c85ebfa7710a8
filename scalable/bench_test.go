package scalable

import (
	"fmt"
	"testing"
)

var sink bool

// BenchmarkChain measures Add of new keys, and Contains of present and
// absent keys, on chains of 1 to 14 links (1,000 keys at 1% growing to
// 10^7).
func BenchmarkChain(b *testing.B) {
	for _, p := range profiles {
		for _, n := range []int{1000, 100_000, 10_000_000} {
			f := must(New(Config{Capacity: 1000, Profile: p}))
			for i := 0; i < n; i++ {
				f.Add(key(i))
			}
			name := fmt.Sprintf("%v/links=%d", p, f.Links())
			b.Run(name+"/contains-present", func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					sink = f.Contains(key(i % n))
				}
			})
			b.Run(name+"/contains-absent", func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					sink = f.Contains(key(n + i))
				}
			})
			b.Run(name+"/add-new", func(b *testing.B) {
				b.ReportAllocs()
				g := f.Clone()
				for i := 0; i < b.N; i++ {
					g.Add(key(2*n + i))
				}
			})
		}
	}
}
