package dlcbf

import (
	"testing"
)

// BenchmarkChurn measures one delete+insert pair at the 002 §III-C design
// point (4 × 2048 buckets, 49,152 keys).
func BenchmarkChurn(b *testing.B) {
	for _, v := range variants {
		b.Run("variant="+v.String(), func(b *testing.B) {
			f, _ := New(paperConfig(v))
			const n = 49152
			ids := make([]int, n)
			for j := range ids {
				ids[j] = j
				if err := f.AddHash(digest(11, j)); err != nil {
					b.Fatal(err)
				}
			}
			next := n
			x := uint64(1)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				x = splitmix(x)
				i := x % n
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

// BenchmarkContains measures a query for an absent key at the design
// point.
func BenchmarkContains(b *testing.B) {
	for _, v := range variants {
		b.Run("variant="+v.String(), func(b *testing.B) {
			f, _ := New(paperConfig(v))
			for j := 0; j < 49152; j++ {
				_ = f.AddHash(digest(11, j))
			}
			b.ReportAllocs()
			b.ResetTimer()
			c := 0
			for i := range b.N {
				if f.ContainsHash(digest(12, i)) {
					c++
				}
			}
			sink = c
		})
	}
}

var sink int
