package scalable

import (
	"fmt"
	"testing"

	"github.com/bloomlab/bloomlab/hashing"
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

// BenchmarkLarge measures Add and Contains of random keys on a 12 MB
// RedisBloom-profile filter (10^7 keys at 1%, half full), larger than the
// processor's caches: one key at a time, and in groups of 16 after
// Prefetch, as BF.MADD and BF.MEXISTS do. The filter's words ask for huge
// pages (internal/hugepage); BLOOMLAB_NO_HUGEPAGES=1 measures without.
func BenchmarkLarge(b *testing.B) {
	f := must(NewRedisBloom(0.01, 10_000_000, 2, true))
	for i := 0; i < 5_000_000; i++ {
		f.Add(key(-1 - i))
	}
	keys := make([][]byte, 1<<16)
	for i := range keys {
		keys[i] = key(i)
	}
	var ds [16]hashing.Digest
	for _, group := range []int{1, 16} {
		for _, op := range []string{"add", "contains"} {
			b.Run(fmt.Sprintf("%s/group=%d", op, group), func(b *testing.B) {
				b.ReportAllocs()
				g := f
				if op == "add" {
					g = f.Clone()
				}
				for i := 0; i < b.N; i += group {
					j := i & (len(keys) - 1)
					ks := keys[j:min(j+group, len(keys))]
					for i, k := range ks {
						ds[i] = g.Digest(k)
					}
					if group > 1 {
						g.Prefetch(ds[:len(ks)], op == "add")
					}
					for _, d := range ds[:len(ks)] {
						if op == "add" {
							g.AddHash(d)
						} else {
							sink = g.ContainsHash(d)
						}
					}
				}
			})
		}
	}
}
