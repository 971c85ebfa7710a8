package lab

import (
	"fmt"
	"testing"

	"github.com/bloomlab/bloomlab/bloom"
)

// BenchmarkFigure1Insert is the cost that dominates less-hashing/figure1:
// one trial's inserts (n = 25,000 keys by keyDigest and bloom.AddHash into
// c·n bits), reported per bit set (ns/bit) for each scheme and c of the
// figure. The figure sets 3.85·10^11 bits at the full 10,000 trials per
// point (sum over its points of n·k·trials), so its run time is about
// that count times ns/bit, divided by the cores.
func BenchmarkFigure1Insert(b *testing.B) {
	for _, c := range []int{4, 8, 12, 16} {
		k := figure1K(float64(c))
		for _, s := range figure1Schemes {
			n := 25000
			b.Run(fmt.Sprintf("c=%d/k=%d/%s", c, k, s.scheme), func(b *testing.B) {
				f, err := bloom.New(uint64(c*n), k, bloom.WithScheme(s.scheme))
				if err != nil {
					b.Fatal(err)
				}
				for i := 0; i < b.N; i++ {
					f.Clear()
					for j := 0; j < n; j++ {
						f.AddHash(keyDigest(uint64(i), j))
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n*k), "ns/bit")
			})
		}
	}
}

// BenchmarkBitSetFloor is the floor under any Bloom filter trial on this
// machine: setting bits at random positions of a vector of c·25,000 bits
// (the figure's largest c and mean n) with a position generator of one
// addition and one shift, no hashing and no structure around it.
func BenchmarkBitSetFloor(b *testing.B) {
	const bits = 16 * 25000
	v := make([]uint64, bits/64+1)
	x := uint64(1)
	for i := 0; i < b.N; i++ {
		x += 0x9E3779B97F4A7C15
		p := (x >> 40) * bits >> 24
		v[p>>6] |= 1 << (p & 63)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/bit")
}

func TestFigure1BitSets(t *testing.T) {
	// The count BenchmarkFigure1Insert's doc quotes.
	var sum float64
	for _, c := range []int{4, 8, 12, 16} {
		k := figure1K(float64(c))
		for n := 5000; n <= 50000; n += 5000 {
			sum += float64(len(figure1Schemes) * n * k * 10000)
		}
	}
	if sum != 3.85e11 {
		t.Errorf("figure 1 sets %g bits at full size, the doc says 3.85e11", sum)
	}
}
