package dleft

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// scanVerdict runs scan over words as the decoder would, in chunks ending
// at the given group counts, and returns its verdict and count.
func scanVerdict(f *Filter, words []uint64, cuts []int) (bool, uint64) {
	s := newScan(f)
	from := 0
	for _, c := range append(cuts, len(words)/f.wpg) {
		to := c * f.wpg
		if to > from && to <= len(words) {
			s.each(words[:to], from)
			from = to
		}
	}
	return !s.bad, s.stored
}

// TestScanAgrees: scan, the check decode runs as the table arrives,
// accepts exactly the tables check accepts and counts the same
// fingerprints, for every bucket size, semi-sorting form and group size,
// on filled tables with single bits flipped and words replaced.
func TestScanAgrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 13))
	var cfgs []Config
	for _, bb := range []int{64, 128} {
		for _, ss := range []Semisort{SemisortNone, Semisort1, Semisort2} {
			for _, g := range []int{1, 2, 4, 8} {
				for _, minBits := range []int{4, 7, 20} {
					cfgs = append(cfgs, Config{D: 2, Buckets: 16, BucketBits: bb, Semisort: ss, Group: g, MinFingerprintBits: minBits, Seed: 5})
				}
			}
		}
	}
	tried := 0
	for _, cfg := range cfgs {
		f, err := New(cfg)
		if err != nil {
			continue // not a valid combination
		}
		tried++
		for i := range 60 {
			f.AddString(strconv.Itoa(i))
		}
		g := f.Clone()
		check := func(what string, words []uint64) {
			t.Helper()
			g.words = words
			want, werr := g.check()
			cuts := []int{rng.IntN(int(f.groups) * cfg.D)}
			ok, got := scanVerdict(g, words, cuts)
			if ok != (werr == nil) || ok && got != want {
				t.Fatalf("%+v, %s: scan says %v (%d stored), check %v (%d stored)", cfg, what, ok, got, werr, want)
			}
		}
		good := f.words
		check("as built", good)
		check("empty", make([]uint64, len(good)))
		w := append([]uint64(nil), good...)
		for bit := range 64 * len(good) {
			w[bit/64] ^= 1 << (bit % 64)
			check("bit "+strconv.Itoa(bit)+" flipped", w)
			w[bit/64] ^= 1 << (bit % 64)
		}
		for range 500 {
			w := append([]uint64(nil), good...)
			w[rng.IntN(len(w))] = rng.Uint64() >> rng.UintN(64)
			check("word replaced", w)
		}
	}
	if tried < 12 {
		t.Fatalf("only %d configurations", tried)
	}
}
