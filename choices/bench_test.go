package choices

import (
	"fmt"
	"testing"

	"github.com/bloomlab/bloomlab/hashing"
)

var sink bool

// BenchmarkFilter measures Add and Contains (present and absent keys) for
// n = 2^20 keys at 16 bits per key, c = 1, 2, 3, with the paper's k (000
// Table 1) and two schemes.
func BenchmarkFilter(b *testing.B) {
	const n = 1 << 20
	keys := keyset(n, 77)
	absent := keyset(n, 78)
	for _, c := range []int{1, 2, 3} {
		k := map[int]int{1: 11, 2: 13, 3: 13}[c]
		for _, s := range []hashing.Scheme{hashing.Enhanced, hashing.Independent} {
			f := must(New(Config{M: 16 * n, K: k, C: c, Scheme: s}))
			name := fmt.Sprintf("c=%d/k=%d/%v", c, k, s)
			b.Run(name+"/add", func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					f.Add(keys[i&(n-1)])
				}
			})
			f.Clear()
			f.AddBatch(keys)
			b.Run(name+"/present", func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					sink = f.Contains(keys[i&(n-1)])
				}
			})
			b.Run(name+"/absent", func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					sink = f.Contains(absent[i&(n-1)])
				}
			})
		}
	}
}

// BenchmarkBuild measures one offline build of 000 Table 3's largest row
// (n = 10,000, m/n = 32, c = 3, k = 27, 40 rounds), per build.
func BenchmarkBuild(b *testing.B) {
	for _, tc := range []struct{ bpk, c, k, rounds int }{{8, 2, 7, 10}, {32, 3, 27, 40}} {
		b.Run(fmt.Sprintf("m/n=%d/c=%d/k=%d/rounds=%d", tc.bpk, tc.c, tc.k, tc.rounds), func(b *testing.B) {
			const n = 10000
			ds := digests(n, 1)
			f := must(New(Config{M: uint64(tc.bpk * n), K: tc.k, C: tc.c, Scheme: hashing.Independent}))
			var bl Builder
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if err := bl.Build(f, ds, tc.rounds); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAddSmall measures AddHash into the filters of 000's tables (n =
// 10,000 keys at 8, 16 and 32 bits per key, which fit in the caches): per
// key, the filter cleared every 10,000 keys, as a lab trial does.
func BenchmarkAddSmall(b *testing.B) {
	const n = 10000
	ds := digests(n, 5)
	for _, tc := range []struct{ bpk, c, k int }{{8, 2, 7}, {16, 1, 11}, {16, 3, 13}, {32, 3, 25}} {
		for _, s := range []hashing.Scheme{hashing.Independent, hashing.Double} {
			f := must(New(Config{M: uint64(tc.bpk * n), K: tc.k, C: tc.c, Scheme: s}))
			b.Run(fmt.Sprintf("m/n=%d/c=%d/k=%d/%v", tc.bpk, tc.c, tc.k, s), func(b *testing.B) {
				b.ReportAllocs()
				j := 0
				for i := 0; i < b.N; i++ {
					if j == n {
						f.Clear()
						j = 0
					}
					f.AddHash(ds[j])
					j++
				}
			})
		}
	}
}

// BenchmarkContainsSmall measures ContainsHash of absent keys in the full
// filters of BenchmarkAddSmall: the queries of a lab trial's measured rate.
func BenchmarkContainsSmall(b *testing.B) {
	const n = 10000
	ds, absent := digests(n, 5), digests(1<<16, 6)
	for _, tc := range []struct{ bpk, c, k int }{{8, 2, 7}, {16, 2, 13}, {16, 3, 13}} {
		for _, s := range []hashing.Scheme{hashing.Independent, hashing.Double} {
			f := must(New(Config{M: uint64(tc.bpk * n), K: tc.k, C: tc.c, Scheme: s}))
			for _, d := range ds {
				f.AddHash(d)
			}
			b.Run(fmt.Sprintf("m/n=%d/c=%d/k=%d/%v", tc.bpk, tc.c, tc.k, s), func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					sink = f.ContainsHash(absent[i&(1<<16-1)])
				}
			})
		}
	}
}
