package counting_test

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/bloomlab/bloomlab/counting"
)

// Sink receives benchmark results so the compiler cannot delete the work.
var Sink uint64

const benchN = 1 << 20 // keys per benchmark (about a million)

var benchWidths = []int{2, 4, 8, 16, 32}

// benchKeys returns n distinct 16-byte keys; bench keys with seed 1 are
// present, seed 2 absent.
func benchKeys(n int, seed uint64) [][]byte {
	r := rand.New(rand.NewPCG(seed, 0x9E3779B97F4A7C15))
	buf := make([]byte, 16*n)
	out := make([][]byte, n)
	for i := range out {
		k := buf[16*i : 16*i+16 : 16*i+16]
		binary.LittleEndian.PutUint64(k, uint64(i)|seed<<56)
		binary.LittleEndian.PutUint64(k[8:], r.Uint64())
		out[i] = k
	}
	return out
}

// Built on first use, so that plain test runs do not pay for them.
var benchKeySets = sync.OnceValues(func() ([][]byte, [][]byte) {
	return benchKeys(benchN, 1), benchKeys(benchN, 2)
})

// benchFilter returns a filter sized for benchN keys at 1% (m ≈ 9.6 bits
// per key, k = 7) with w-bit counters, holding the present keys if full.
func benchFilter(b *testing.B, w int, full bool) *counting.Filter {
	f, err := counting.NewWithEstimates(benchN, 0.01, counting.WithCounterBits(w))
	if err != nil {
		b.Fatal(err)
	}
	if full {
		present, _ := benchKeySets()
		f.AddBatch(present)
	}
	return f
}

func BenchmarkAdd(b *testing.B) {
	present, _ := benchKeySets()
	for _, w := range benchWidths {
		b.Run(fmt.Sprintf("w=%d", w), func(b *testing.B) {
			f := benchFilter(b, w, false)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				j := i & (benchN - 1)
				if j == 0 && i > 0 {
					b.StopTimer()
					f.Clear() // never more than benchN keys: no saturation build-up
					b.StartTimer()
				}
				f.Add(present[j])
			}
			Sink += f.N()
		})
	}
}

func BenchmarkContains(b *testing.B) {
	present, absent := benchKeySets()
	for _, w := range benchWidths {
		f := benchFilter(b, w, true)
		for _, c := range []struct {
			name string
			keys [][]byte
		}{{"present", present}, {"absent", absent}} {
			b.Run(fmt.Sprintf("w=%d/%s", w, c.name), func(b *testing.B) {
				b.ReportAllocs()
				var hits uint64
				for i := 0; i < b.N; i++ {
					if f.Contains(c.keys[i&(benchN-1)]) {
						hits++
					}
				}
				Sink += hits
			})
		}
	}
}

func BenchmarkCount(b *testing.B) {
	present, _ := benchKeySets()
	for _, w := range []int{4} {
		f := benchFilter(b, w, true)
		b.Run(fmt.Sprintf("w=%d", w), func(b *testing.B) {
			b.ReportAllocs()
			var s uint64
			for i := 0; i < b.N; i++ {
				s += f.Count(present[i&(benchN-1)])
			}
			Sink += s
		})
	}
}

func BenchmarkRemove(b *testing.B) {
	present, _ := benchKeySets()
	for _, w := range benchWidths {
		b.Run(fmt.Sprintf("w=%d", w), func(b *testing.B) {
			f := benchFilter(b, w, true)
			b.ReportAllocs()
			b.ResetTimer()
			var failed uint64
			for i := 0; i < b.N; i++ {
				j := i & (benchN - 1)
				if j == 0 && i > 0 {
					b.StopTimer()
					f.AddBatch(present) // put back what was removed
					b.StartTimer()
				}
				if f.Remove(present[j]) != nil {
					failed++
				}
			}
			if failed != 0 {
				b.Fatalf("%d removals of present keys failed", failed)
			}
			Sink += f.N()
		})
	}
}

func BenchmarkContainsBatch(b *testing.B) {
	_, absent := benchKeySets()
	f := benchFilter(b, 4, true)
	const batch = 256
	out := make([]bool, batch)
	b.ReportAllocs()
	b.ResetTimer()
	var hits uint64
	for i := 0; i < b.N; i++ {
		j := (i * batch) & (benchN - 1)
		out = f.ContainsBatch(absent[j:j+batch], out)
		if out[0] {
			hits++
		}
	}
	Sink += hits
}
