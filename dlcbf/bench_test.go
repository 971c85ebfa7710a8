package dlcbf

import (
	"testing"
)

// benchN is the number of keys of the 002 §III-C design point: 6 per
// bucket of 4 × 2048 buckets.
const benchN = 49152

// benchFilter returns the design-point filter of variant v holding keys
// digest(11, 0 … n−1).
func benchFilter(b *testing.B, v Variant, n int) *Filter {
	f, err := New(paperConfig(v))
	if err != nil {
		b.Fatal(err)
	}
	for j := range n {
		if err := f.AddHash(digest(11, j)); err != nil {
			b.Fatal(err)
		}
	}
	return f
}

// BenchmarkAdd measures an insert into the design-point filter while it
// fills from empty to 49,152 keys (average load 0 … 6), then starts over.
func BenchmarkAdd(b *testing.B) {
	for _, v := range variants {
		b.Run("variant="+v.String(), func(b *testing.B) {
			f := benchFilter(b, v, 0)
			b.ReportAllocs()
			b.ResetTimer()
			j := 0
			for range b.N {
				if j == benchN {
					b.StopTimer()
					f.Clear()
					j = 0
					b.StartTimer()
				}
				if err := f.AddHash(digest(11, j)); err != nil {
					b.Fatal(err)
				}
				j++
			}
		})
	}
}

// BenchmarkRemove measures the removal of a present key while the
// design-point filter empties from 49,152 keys, then is refilled.
func BenchmarkRemove(b *testing.B) {
	for _, v := range variants {
		b.Run("variant="+v.String(), func(b *testing.B) {
			f := benchFilter(b, v, benchN)
			b.ReportAllocs()
			b.ResetTimer()
			j := 0
			for range b.N {
				if j == benchN {
					b.StopTimer()
					f = benchFilter(b, v, benchN)
					j = 0
					b.StartTimer()
				}
				if err := f.RemoveHash(digest(11, j)); err != nil {
					b.Fatal(err)
				}
				j++
			}
		})
	}
}

// BenchmarkChurn measures one delete+insert pair at the 002 §III-C design
// point (4 × 2048 buckets, 49,152 keys).
func BenchmarkChurn(b *testing.B) {
	for _, v := range variants {
		b.Run("variant="+v.String(), func(b *testing.B) {
			f := benchFilter(b, v, benchN)
			ids := make([]int, benchN)
			for j := range ids {
				ids[j] = j
			}
			next := benchN
			x := uint64(1)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				x = splitmix(x)
				i := x % benchN
				if err := f.RemoveHash(digest(11, ids[i])); err != nil {
					b.Fatal(err)
				}
				ids[i] = next
				if err := f.AddHash(digest(11, next)); err != nil {
					b.Fatal(err)
				}
				next++
			}
		})
	}
}

// BenchmarkContains measures a query at the design point, for an absent
// key (all d buckets scanned) and for a present one.
func BenchmarkContains(b *testing.B) {
	for _, v := range variants {
		f := benchFilter(b, v, benchN)
		b.Run("variant="+v.String()+"/absent", func(b *testing.B) {
			b.ReportAllocs()
			c := 0
			for i := range b.N {
				if f.ContainsHash(digest(12, i)) {
					c++
				}
			}
			sink = c
		})
		b.Run("variant="+v.String()+"/present", func(b *testing.B) {
			b.ReportAllocs()
			c := 0
			for i := range b.N {
				if f.ContainsHash(digest(11, i%benchN)) {
					c++
				}
			}
			sink = c
		})
	}
}

var sink int
