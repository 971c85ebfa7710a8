package counting

import (
	"fmt"
	"testing"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/filtertest"
	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/internal/stats"
	"github.com/bloomlab/bloomlab/theory"
)

// TestFPRate: with n keys in a filter sized for 1%, the number of false
// positives among a million absent keys is the binomial count predicted by
// theory.FPScheme (the formula with the scheme's pair floor): it lies in
// the binomial acceptance region of level 1e-6 (each scheme's check fails by
// chance with probability at most 1e-6, and the seeds are fixed). Removing
// keys and adding them back leaves the rate where it was.
func TestFPRate(t *testing.T) {
	schemes := []hashing.Scheme{hashing.DefaultScheme}
	if !testing.Short() {
		schemes = []hashing.Scheme{hashing.Enhanced, hashing.Double, hashing.Independent, hashing.Partition, hashing.PrimePartition}
	}
	const n, trials = 100000, 1000000
	present := keys16(n, 21)
	absent := keys16(trials, 22)
	for i := range absent {
		absent[i][7] = 0xFF // keys16 puts the index in bytes 0..7: disjoint from present
	}
	for _, s := range schemes {
		t.Run(s.String(), func(t *testing.T) {
			f, err := NewWithEstimates(n, 0.01, WithScheme(s), WithSeed(1234))
			if err != nil {
				t.Fatal(err)
			}
			f.AddBatch(present)
			// Churn: remove a fifth of the keys and add them back.
			for _, k := range present[:n/5] {
				if err := f.Remove(k); err != nil {
					t.Fatal(err)
				}
			}
			f.AddBatch(present[:n/5])
			if f.N() != n {
				t.Fatalf("N = %d", f.N())
			}
			fp := 0
			for _, k := range absent {
				if f.Contains(k) {
					fp++
				}
			}
			p := theory.FPScheme(s, f.M(), float64(n), f.K())
			lo, hi := stats.BinomialQuantileBounds(trials, p, 1e-6)
			t.Logf("%v: m = %d, k = %d, %d false positives in %d, expected %.0f, bounds [%d, %d]", s, f.M(), f.K(), fp, trials, p*trials, lo, hi)
			if uint64(fp) < lo || uint64(fp) > hi {
				t.Errorf("%v: %d false positives in %d probes, want within [%d, %d] (p = %.5f)", s, fp, trials, lo, hi, p)
			}
		})
	}
}

// TestTargetMet: a counting filter built by NewWithEstimates meets its
// target at tiny n, where the pair floor of double hashing rules (before
// it was counted: 0.5% at n = 1 and 1e-4), and answers at the rate
// EstimatedFPR and theory.FPScheme state (the checks of package bloom's
// test of the same name).
func TestTargetMet(t *testing.T) {
	for _, c := range []struct {
		s     hashing.Scheme
		n     int
		eps   float64
		quick [2]int
		full  [2]int
	}{
		{hashing.Enhanced, 1, 1e-4, [2]int{200, 1e4}, [2]int{2000, 5e4}},
		{hashing.Partition, 3, 0.01, [2]int{200, 1e4}, [2]int{2000, 1e4}},
	} {
		fp := c.quick
		if !testing.Short() {
			fp = c.full
		}
		keys := filtertest.Keys(c.n, 78)
		var m uint64
		var k int
		build := func(seed uint64) (kind.Filter, error) {
			f, err := NewWithEstimates(uint64(c.n), c.eps, WithScheme(c.s), WithSeed(seed))
			if err != nil {
				return nil, err
			}
			f.AddBatch(keys)
			m, k = f.M(), f.K()
			return f, nil
		}
		if _, err := build(0); err != nil {
			t.Fatal(err)
		}
		filtertest.CheckRates(t, filtertest.RateCheck{
			Name: fmt.Sprintf("%v n=%d m=%d k=%d", c.s, c.n, m, k), Filters: fp[0], Probes: fp[1], Build: build,
			Target: c.eps, Predicted: theory.FPScheme(c.s, m, float64(c.n), k),
		})
	}
}
