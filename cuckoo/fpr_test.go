package cuckoo

import (
	"cmp"
	"math"
	"testing"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/stats"
	"github.com/bloomlab/bloomlab/theory"
)

// fill adds keys key(from), key(from+1), … until an insert fails, and
// returns how many were added.
func fill(f *Filter, from int) int {
	n := 0
	for f.Add(key(from+n)) == nil {
		n++
	}
	return n
}

// TestLoadFactor is issue 15's goal: with buckets of 4 and 500
// relocations, a table takes at least 95% of its slots before its first
// insert fails (CF §5.1 reports 95%). Tables of 2^16 buckets (2^13 under
// -short), plain and semi-sorted, five key sets each; the other bucket
// sizes against CF's 50/84/98% with their own margins; a table whose
// bucket count is not a power of two (c·2^j, blocks of 2^j) at least 94%.
// Keys are fixed, so the test is deterministic.
func TestLoadFactor(t *testing.T) {
	m := uint64(1 << 16)
	if testing.Short() {
		m = 1 << 13
	}
	for _, c := range []struct {
		cfg  Config
		want float64
	}{
		{Config{Buckets: m, FingerprintBits: 12}, 0.95},
		{Config{Buckets: m, FingerprintBits: 16, Semisort: true}, 0.95},
		{Config{Buckets: m, FingerprintBits: 8}, 0.95},
		{Config{Buckets: 2 * m, FingerprintBits: 12, BucketSize: 2}, 0.84},
		{Config{Buckets: 4 * m, FingerprintBits: 12, BucketSize: 1}, 0.45},
		{Config{Buckets: m / 2, FingerprintBits: 12, BucketSize: 8}, 0.98},
		{Config{Buckets: 7 << 13, FingerprintBits: 12}, 0.94},
	} {
		lo, sum := 1.0, 0.0
		for run := 0; run < 5; run++ {
			f := must(New(c.cfg))
			n := fill(f, run<<28)
			load := float64(n) / float64(f.Info().Slots)
			lo, sum = min(lo, load), sum+load
		}
		t.Logf("b = %d, f = %d, semi-sorted %v, %d buckets: first failure at load %.4f (mean of 5), smallest %.4f",
			cmp.Or(c.cfg.BucketSize, 4), c.cfg.FingerprintBits, c.cfg.Semisort, c.cfg.Buckets, sum/5, lo)
		if lo < c.want {
			t.Errorf("b = %d, %d buckets: first failure at load %.4f, want ≥ %.2f", c.cfg.BucketSize, c.cfg.Buckets, lo, c.want)
		}
	}
	// RedisBloom's walk always starts at the first bucket and evicts slots
	// 0, 1, …, b − 1 in turn: for the record, where its tables fill.
	for _, c := range [][3]int{{2, 20}, {2, 500}, {4, 20}, {4, 500}} {
		f := must(NewRedisBloom(uint64(c[0])*m, c[0], c[1], 0))
		n := fill(f, 0)
		t.Logf("RedisBloom profile, b = %d, MAXITERATIONS %d, %d buckets: first failure at load %.4f", c[0], c[1], f.Info().Buckets, float64(n)/float64(f.Info().Slots))
	}
}

// TestFPR: a filter at its design load (93% for b = 4) is queried with q absent keys (10^6;
// 2·10^5 under -short). Given the table, each query is a false positive
// with probability EstimatedFPR, so the count lies in the two-sided
// binomial acceptance region at α = 10^-6; EstimatedFPR lies within 3% of
// theory.FPCuckoo at the load, which is below the CF §5.1 bound. Fixed
// keys and seeds.
func TestFPR(t *testing.T) {
	q := 1_000_000
	if testing.Short() {
		q = 200_000
	}
	for _, c := range []Config{
		{Buckets: 1 << 14, FingerprintBits: 8, Seed: 1},
		{Buckets: 1 << 14, FingerprintBits: 12, Seed: 2},
		{Buckets: 1 << 14, FingerprintBits: 12, Semisort: true, Seed: 3},
		{Buckets: 1 << 15, FingerprintBits: 10, BucketSize: 2, Seed: 4},
		{Buckets: 1 << 13, FingerprintBits: 9, BucketSize: 8, Seed: 5},
	} {
		f := must(New(c))
		n := int(designLoad(f.Info().BucketSize) * float64(f.Info().Slots))
		for i := 0; i < n; i++ {
			if err := f.Add(key(i)); err != nil {
				t.Fatal(err)
			}
		}
		load := f.Info().LoadFactor
		est, formula := f.EstimatedFPR(), theory.FPCuckoo(c.FingerprintBits, f.Info().BucketSize, load)
		fp := 0
		for i := 0; i < q; i++ {
			if f.ContainsHash(hashing.Sum(key(1<<30+i), c.Seed+1000)) {
				fp++
			}
		}
		lo, hi := stats.BinomialQuantileBounds(uint64(q), est, 1e-6)
		t.Logf("b = %d, f = %d, semi %v, load %.3f: %d false positives in %d (%.5g), state %.5g, formula %.5g, bound %.5g; region [%d, %d]",
			f.Info().BucketSize, c.FingerprintBits, c.Semisort, load, fp, q, float64(fp)/float64(q), est, formula, theory.FPCuckooBound(c.FingerprintBits, f.Info().BucketSize), lo, hi)
		if uint64(fp) < lo || uint64(fp) > hi {
			t.Errorf("b = %d, f = %d: %d false positives, the state predicts %.5g → [%d, %d]", f.Info().BucketSize, c.FingerprintBits, fp, est, lo, hi)
		}
		if math.Abs(est-formula) > 0.03*formula || est > theory.FPCuckooBound(c.FingerprintBits, f.Info().BucketSize) {
			t.Errorf("b = %d, f = %d: state %.5g, formula %.5g", f.Info().BucketSize, c.FingerprintBits, est, formula)
		}
		if math.Abs(f.formulaFPR()-formula) > 1e-12 {
			t.Errorf("FormulaFPR %v, theory %v", f.formulaFPR(), formula)
		}
	}
}

// TestFPRRedisBloom: RedisBloom's fingerprint h mod 255 + 1 and bucket h
// mod 2^j come from one hash; the measured rate of a filter at 55% of its
// slots (buckets of 2, 2^15 of them, no growth: RedisBloom's walk fills
// such a table to about 60%) matches the formula within 5%, and the
// binomial region of EstimatedFPR at α = 10^-6.
func TestFPRRedisBloom(t *testing.T) {
	q := 1_000_000
	if testing.Short() {
		q = 200_000
	}
	f := must(NewRedisBloom(1<<16, 2, 500, 0))
	n := int(0.55 * float64(f.Info().Slots))
	for i := 0; i < n; i++ {
		if err := f.Add(key(i)); err != nil {
			t.Fatal(err)
		}
	}
	fp := 0
	for i := 0; i < q; i++ {
		if f.Contains(key(1<<30 + i)) {
			fp++
		}
	}
	est, formula := f.EstimatedFPR(), f.formulaFPR()
	lo, hi := stats.BinomialQuantileBounds(uint64(q), est, 1e-6)
	t.Logf("RedisBloom b = 2 at load %.3f: %d false positives in %d (%.5g), state %.5g, formula %.5g; region [%d, %d]", f.Info().LoadFactor, fp, q, float64(fp)/float64(q), est, formula, lo, hi)
	if uint64(fp) < lo || uint64(fp) > hi || math.Abs(est-formula) > 0.05*formula {
		t.Errorf("%d false positives, state %.5g → [%d, %d], formula %.5g", fp, est, lo, hi, formula)
	}
}
