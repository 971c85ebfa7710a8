package countmin

import (
	"fmt"
	"testing"

	"github.com/bloomlab/bloomlab/hashing"
)

var sink uint64

// BenchmarkSketch: Add (count 1) and Estimate of 16-byte keys, hashing
// included, for ε = 1e-3, δ = 1e-2 (w = 2719, d = 5) and ε = 1e-5
// (w = 271,829: counters beyond the caches), for both row schemes and
// conservative update.
func BenchmarkSketch(b *testing.B) {
	keys := make([][]byte, 1<<16)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("key-%011d", i))
	}
	for _, eps := range []float64{1e-3, 1e-5} {
		for _, s := range []hashing.Scheme{hashing.Double, hashing.Independent} {
			for _, cons := range []bool{false, true} {
				sk, err := NewWithEstimates(eps, 0.01, Config{Scheme: s, Conservative: cons})
				if err != nil {
					b.Fatal(err)
				}
				name := fmt.Sprintf("eps=%g/scheme=%v/conservative=%v", eps, s, cons)
				b.Run(name+"/op=add", func(b *testing.B) {
					b.ReportAllocs()
					for i := range b.N {
						sk.Add(keys[i&(len(keys)-1)], 1)
					}
				})
				b.Run(name+"/op=estimate", func(b *testing.B) {
					b.ReportAllocs()
					var x uint64
					for i := range b.N {
						x += sk.Estimate(keys[i&(len(keys)-1)])
					}
					sink = x
				})
			}
		}
	}
}

// BenchmarkRedisBloom: Add (count 1) and Estimate of 16-byte keys in the
// redisbloom profile, for CMS.INITBYPROB 0.001 0.01 (w = 2000, d = 7) and
// 0.00001 0.01 (w = 200,000: counters beyond the caches): d MurmurHash2
// per key, against one xxh3-128 in the bloomlab profile.
func BenchmarkRedisBloom(b *testing.B) {
	keys := make([][]byte, 1<<16)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("key-%011d", i))
	}
	for _, eps := range []float64{1e-3, 1e-5} {
		w, d, err := RedisDimensions(eps, 0.01)
		if err != nil {
			b.Fatal(err)
		}
		sk, err := NewRedisBloom(w, d)
		if err != nil {
			b.Fatal(err)
		}
		name := fmt.Sprintf("w=%d/d=%d", w, d)
		b.Run(name+"/op=add", func(b *testing.B) {
			b.ReportAllocs()
			for i := range b.N {
				sk.Add(keys[i&(len(keys)-1)], 1)
			}
		})
		b.Run(name+"/op=estimate", func(b *testing.B) {
			b.ReportAllocs()
			var x uint64
			for i := range b.N {
				x += sk.Estimate(keys[i&(len(keys)-1)])
			}
			sink = x
		})
	}
}

// BenchmarkSketchHash: AddHash and EstimateHash of pre-hashed keys for
// ε = 1e-3, δ = 1e-2 (w = 2719, d = 5), the sketches of the lab's
// countmin/two-hashes: the sketch's own cost, without the key hash.
func BenchmarkSketchHash(b *testing.B) {
	ds := make([]hashing.Digest, 1<<16)
	for i := range ds {
		ds[i] = hashing.SumUint64(uint64(i), 1)
	}
	for _, s := range []hashing.Scheme{hashing.Double, hashing.Independent} {
		for _, cons := range []bool{false, true} {
			sk, err := NewWithEstimates(1e-3, 0.01, Config{Scheme: s, Conservative: cons})
			if err != nil {
				b.Fatal(err)
			}
			name := fmt.Sprintf("scheme=%v/conservative=%v", s, cons)
			b.Run(name+"/op=add", func(b *testing.B) {
				b.ReportAllocs()
				for i := range b.N {
					sk.AddHash(ds[i&(len(ds)-1)], 1)
				}
			})
			b.Run(name+"/op=estimate", func(b *testing.B) {
				b.ReportAllocs()
				var x uint64
				for i := range b.N {
					x += sk.EstimateHash(ds[i&(len(ds)-1)])
				}
				sink = x
			})
		}
	}
}
