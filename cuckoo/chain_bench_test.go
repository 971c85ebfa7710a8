package cuckoo

import (
	"fmt"
	"testing"
)

// BenchmarkRedisBloomChain: N copies of one key into CF.RESERVE k 2
// BUCKETSIZE 1 EXPANSION 1 (RedisBloom's test_cuckoo.py
// test_counter_overflow_with_large_number_of_items): every full
// sub-filter adds another to the chain, so the whole run is quadratic in
// N. One op is the whole run of N inserts.
func BenchmarkRedisBloomChain(b *testing.B) {
	for _, n := range []int{5_000, 40_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				f, err := NewRedisBloom(2, 1, 20, 1) // MAXITERATIONS 20, RedisBloom's default
				if err != nil {
					b.Fatal(err)
				}
				f.SetMaxBits(NoMaxBits)
				for i := 0; i < n; i++ {
					if err := f.Add([]byte("item")); err != nil {
						b.Fatalf("add %d: %v", i, err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/insert")
		})
	}
}
