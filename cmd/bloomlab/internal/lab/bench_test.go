package lab

import (
	"fmt"
	"testing"

	"github.com/bloomlab/bloomlab/bloom"
	"github.com/bloomlab/bloomlab/hashing"
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

// BenchmarkFigure1Kernel bounds from below what any Go loop on this
// machine spends per bit of less-hashing/figure1, with no structure around
// it: one trial's keys by keyDigest and their positions at the figure's
// cheapest point per bit (c = 16, k = 11, n = 25,000), written without the
// filter's bookkeeping.
//
//   - double: the double-hashing walk as two interleaved chains of
//     additions modulo m, each key's start and odd step by one
//     multiply-shift, and the bit set. Partition and the extended schemes
//     do at least this much per bit (an extra addition for the offsets).
//   - double-arith: the same without the bit sets (the positions are
//     summed): what the arithmetic alone costs.
//   - bitset: the bit sets alone, from one trial's double-hashing
//     positions computed before the timer starts: what memory costs.
//   - independent: the Independent scheme's positions (the format fixes
//     its mixing: a 128-bit multiply, SplitMix64's two multiplications and
//     a multiply-shift per position), two positions per iteration.
//
// The figure sets 3.85·10^11 bits, a fifth of them per scheme
// (TestFigure1BitSets); at these rates per bit its inserts alone take
// 7.7·10^10 × (independent + 4 × double) / 2 cores, before a single query.
func BenchmarkFigure1Kernel(b *testing.B) {
	const n, k = 25000, 11
	const m = 16 * n
	v := make([]uint64, (m+63)/64)
	var sum uint64
	report := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n*k), "ns/bit")
	}
	double := func(b *testing.B, store bool) {
		for i := 0; i < b.N; i++ {
			clear(v)
			for j := 0; j < n; j++ {
				d := keyDigest(uint64(i), j)
				x := hashing.Reduce(d.H1, m)
				step := 2*hashing.Reduce(d.H2, m/2) + 1
				y := hashing.AddMod(x, step, m)
				step2 := hashing.AddMod(step, step, m)
				for t := 0; t < k-1; t += 2 {
					if store {
						v[x>>6] |= 1 << (x & 63)
						v[y>>6] |= 1 << (y & 63)
					} else {
						sum += x ^ y
					}
					x = hashing.AddMod(x, step2, m)
					y = hashing.AddMod(y, step2, m)
				}
				if store { // k is odd
					v[x>>6] |= 1 << (x & 63)
				} else {
					sum += x
				}
			}
		}
		report(b)
	}
	b.Run("double", func(b *testing.B) { double(b, true) })
	b.Run("double-arith", func(b *testing.B) { double(b, false) })
	b.Run("bitset", func(b *testing.B) {
		pos := make([]uint64, 0, n*k)
		for j := 0; j < n; j++ {
			d := keyDigest(1, j)
			x := hashing.Reduce(d.H1, m)
			step := 2*hashing.Reduce(d.H2, m/2) + 1
			for range k {
				pos = append(pos, x)
				x = hashing.AddMod(x, step, m)
			}
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			clear(v)
			for _, p := range pos {
				v[p>>6] |= 1 << (p & 63)
			}
		}
		report(b)
	})
	b.Run("independent", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			clear(v)
			for j := 0; j < n; j++ {
				d := keyDigest(uint64(i), j)
				t := 0
				for ; t < k-1; t += 2 {
					p := hashing.Reduce(hashing.IndependentHash(d, t), m)
					q := hashing.Reduce(hashing.IndependentHash(d, t+1), m)
					v[p>>6] |= 1 << (p & 63)
					v[q>>6] |= 1 << (q & 63)
				}
				p := hashing.Reduce(hashing.IndependentHash(d, t), m)
				v[p>>6] |= 1 << (p & 63)
			}
		}
		report(b)
	})
	if sum == 1 {
		b.Log(sum) // keeps double-arith's sums alive
	}
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
