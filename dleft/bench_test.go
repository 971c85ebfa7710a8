package dleft

import (
	"encoding/binary"
	"testing"

	"github.com/bloomlab/bloomlab/bloom"
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
