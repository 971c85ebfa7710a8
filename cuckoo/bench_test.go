package cuckoo

import (
	"fmt"
	"testing"
)

// Sink keeps the compiler from deleting benchmarked work.
var Sink int

func benchKeys(n int, salt int) [][]byte {
	ks := make([][]byte, n)
	for i := range ks {
		ks[i] = key(i + salt)
	}
	return ks
}

// BenchmarkFilter: 10^6 keys at the design load (f = 12 and the 8-bit
// fingerprints of seiflotfy/cuckoofilter, buckets of 4), plain and
// semi-sorted, and RedisBloom's profile: Add into an empty filter, and
// Contains of present and absent keys, each including the hash.
func BenchmarkFilter(b *testing.B) {
	const n = 1 << 20
	present, absent := benchKeys(n, 0), benchKeys(n, 1<<30)
	for _, c := range []struct {
		name string
		new  func() *Filter
	}{
		{"f8", func() *Filter { return must(New(Config{Capacity: n, FingerprintBits: 8})) }},
		{"f12", func() *Filter { return must(New(Config{Capacity: n, FingerprintBits: 12})) }},
		{"f12-semi", func() *Filter { return must(New(Config{Capacity: n, FingerprintBits: 12, Semisort: true})) }},
		{"f20-wide", func() *Filter { return must(New(Config{Capacity: n, FingerprintBits: 20})) }},
		{"redisbloom", func() *Filter { return must(NewRedisBloom(n, 4, 500, 0)) }},
	} {
		full := c.new()
		for _, k := range present[:n*9/10] {
			if err := full.Add(k); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(c.name+"/add", func(b *testing.B) {
			f := c.new()
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if i%(n*9/10) == 0 {
					b.StopTimer()
					f.Clear()
					b.StartTimer()
				}
				_ = f.Add(present[i%(n*9/10)])
			}
		})
		for _, q := range []struct {
			name string
			keys [][]byte
		}{{"present", present[:n*9/10]}, {"absent", absent}} {
			b.Run(fmt.Sprintf("%s/%s", c.name, q.name), func(b *testing.B) {
				b.ReportAllocs()
				hits := 0
				for i := 0; i < b.N; i++ {
					if full.Contains(q.keys[i%len(q.keys)]) {
						hits++
					}
				}
				Sink = hits
			})
		}
		b.Run(c.name+"/delete+add", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				k := present[i%(n*9/10)]
				full.Delete(k)
				_ = full.Add(k)
			}
		})
	}
}
