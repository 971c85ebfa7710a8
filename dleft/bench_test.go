package dleft

import (
	"encoding/binary"
	"testing"

	"github.com/bloomlab/bloomlab/bloom"
	"github.com/bloomlab/bloomlab/hashing"
)

// Sink keeps benchmarked results alive.
var Sink int

func benchKeys(n int, seed uint64) [][]byte {
	buf := make([]byte, 16*n)
	x := seed
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
		binary.LittleEndian.PutUint64(buf[16*i:], x)
		binary.LittleEndian.PutUint64(buf[16*i+8:], x^0x9E3779B97F4A7C15)
	}
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = buf[16*i : 16*i+16]
	}
	return keys
}

// BenchmarkContains: 10^6 keys at 16 bits per key (64-bit buckets, load
// 4), present and absent queries, against bloom.Filter at 16 bits per key.
func BenchmarkContains(b *testing.B) {
	const n = 1_000_000
	present, absent := benchKeys(n, 1), benchKeys(n, 2)
	f, err := NewWithBitsPerKey(n, 16, 0)
	if err != nil {
		b.Fatal(err)
	}
	g, _ := bloom.New(16*n, 11)
	for _, k := range present {
		f.Add(k)
		g.Add(k)
	}
	for _, c := range []struct {
		name string
		keys [][]byte
	}{{"present", present}, {"absent", absent}} {
		b.Run("dleft/"+c.name, benchContains(f, c.keys))
		b.Run("bloom16/"+c.name, benchContains(g, c.keys))
	}
}

// benchContains measures f.Contains over keys; both filters are measured
// through the same generic call.
func benchContains[F interface{ Contains([]byte) bool }](f F, keys [][]byte) func(*testing.B) {
	return func(b *testing.B) {
		b.ReportAllocs()
		s := 0
		for i := 0; i < b.N; i++ {
			if f.Contains(keys[i%len(keys)]) {
				s++
			}
		}
		Sink = s
	}
}

// labConfigs are the tables of the lab's 002 §II experiments: n keys into
// 3 subtables (Table II; the FP rows at loads 4 and 6.4; grouping).
var labConfigs = []struct {
	name string
	cfg  Config
	n    int
}{
	{"table2/128-none", Config{Buckets: 65536, BucketBits: 128, Semisort: SemisortNone, MinFingerprintBits: 4}, 1258291},
	{"fp/64-semi1", Config{Buckets: 4096, BucketBits: 64, Semisort: Semisort1}, 49152},
	{"fp/128-semi2", Config{Buckets: 4096, BucketBits: 128, Semisort: Semisort2}, 78643},
	{"grouping/64-semi1-g4", Config{Buckets: 4096, BucketBits: 64, Semisort: Semisort1, Group: 4}, 49152},
	{"grouping/128-semi2-g4", Config{Buckets: 4096, BucketBits: 128, Semisort: Semisort2, Group: 4}, 78643},
}

// BenchmarkLab measures AddHash (per key, the filter cleared every n keys,
// as a lab trial does) and ContainsHash of absent keys in a full filter,
// for the tables of labConfigs.
func BenchmarkLab(b *testing.B) {
	for _, lc := range labConfigs {
		f := must(New(lc.cfg))
		b.Run(lc.name+"/add", func(b *testing.B) {
			b.ReportAllocs()
			j := 0
			for i := 0; i < b.N; i++ {
				if j == lc.n {
					f.Clear()
					j = 0
				}
				f.AddHash(benchDigest(3, j))
				j++
			}
		})
		f.Clear()
		for j := range lc.n {
			f.AddHash(benchDigest(3, j))
		}
		b.Run(lc.name+"/absent", func(b *testing.B) {
			b.ReportAllocs()
			s := 0
			for i := 0; i < b.N; i++ {
				if f.ContainsHash(benchDigest(4, i)) {
					s++
				}
			}
			Sink = s
		})
	}
}

// benchDigest is a random digest for key j of a stream (two SplitMix64
// outputs, as the lab's trials draw them): cheaper than hashing a key.
func benchDigest(seed uint64, j int) hashing.Digest {
	x := seed + uint64(2*j)*0x9E3779B97F4A7C15
	return hashing.Digest{H1: splitmix64(x), H2: splitmix64(x + 0x9E3779B97F4A7C15)}
}

func splitmix64(x uint64) uint64 {
	x += 0x9E3779B97F4A7C15
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9
	x = (x ^ (x >> 27)) * 0x94D049BB133111EB
	return x ^ (x >> 31)
}
