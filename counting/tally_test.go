package counting

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
)

// sumRef is the sum of the counters of words, counter by counter (mod
// 2^64): the reference for tally.
func sumRef(l layout, words []uint64) uint64 {
	var s uint64
	for _, x := range words {
		for ; x != 0; x >>= l.w & 63 {
			s += x & l.max
		}
	}
	return s
}

// TestTallyAgrees: tally, which decode runs on each chunk as it arrives,
// counts the saturated counters as countSaturated does and sums the
// counters as sumRef does, for every width, for words of random counters,
// of saturated counters and of counters one below saturation, however the
// words are split into chunks.
func TestTallyAgrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, w := range widths {
		l := newLayout(w)
		for _, n := range []int{0, 1, 7, 8, 9, 200, 5000} {
			for _, fill := range []string{"random", "max", "max-1", "mixed"} {
				words := make([]uint64, n)
				for i := range words {
					var x uint64
					for j := uint64(0); j < 64; j += l.w {
						var c uint64
						switch fill {
						case "random":
							c = rng.Uint64() & l.max
						case "max":
							c = l.max
						case "max-1":
							c = l.max - 1
						case "mixed":
							c = []uint64{0, 1, l.max, l.max - 1}[rng.IntN(4)]
						}
						x |= c << j
					}
					words[i] = x
				}
				f := &Filter{words: words, lay: l}
				var tl tally
				tl.lay = l
				for from := 0; from < n; {
					to := min(n, from+1+rng.IntN(300))
					tl.each(words[:to], from)
					from = to
				}
				if tl.sat != f.countSaturated() || tl.sum != sumRef(l, words) {
					t.Fatalf("w = %d, %d %s words: tally %d saturated, sum %d; want %d, %d",
						w, n, fill, tl.sat, tl.sum, f.countSaturated(), sumRef(l, words))
				}
			}
		}
	}
}

// BenchmarkTally: the load-time tally per counter width, in cache (the
// decoder hands it 256 KiB chunks), over the counters of a filter holding
// its capacity (saturation rare) and over random counters (saturation in
// every word).
func BenchmarkTally(b *testing.B) {
	for _, w := range widths {
		f, err := NewWithEstimates(1<<15, 0.01, WithCounterBits(w))
		if err != nil {
			b.Fatal(err)
		}
		for i := range 1 << 15 {
			f.AddString(strconv.Itoa(i))
		}
		rng := rand.New(rand.NewPCG(7, 8))
		random := make([]uint64, len(f.words))
		for i := range random {
			random[i] = rng.Uint64()
		}
		for _, in := range []struct {
			name  string
			words []uint64
		}{{"full", f.words}, {"random", random}} {
			b.Run(fmt.Sprintf("w=%d/%s", w, in.name), func(b *testing.B) {
				b.SetBytes(int64(8 * len(in.words)))
				t := tally{lay: newLayout(w)}
				for b.Loop() {
					t.each(in.words, 0)
				}
			})
		}
	}
}
