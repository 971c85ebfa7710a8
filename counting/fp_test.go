package counting

import (
	"testing"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/stats"
	"github.com/bloomlab/bloomlab/theory"
)

// TestFPRate: with n keys in a filter sized for 1%, the number of false
// positives among a million absent keys is the binomial count predicted by
// theory.FPExact (theory.FPPartitioned for partitioned schemes): it lies in
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
			m, nf := float64(f.M()), float64(n)
			p := theory.FPExact(m, nf, f.K())
			if s.Partitioned() {
				p = theory.FPPartitioned(m, nf, f.K())
			}
			lo, hi := stats.BinomialQuantileBounds(trials, p, 1e-6)
			t.Logf("%v: m = %d, k = %d, %d false positives in %d, expected %.0f, bounds [%d, %d]", s, f.M(), f.K(), fp, trials, p*trials, lo, hi)
			if uint64(fp) < lo || uint64(fp) > hi {
				t.Errorf("%v: %d false positives in %d probes, want within [%d, %d] (p = %.5f)", s, fp, trials, lo, hi, p)
			}
		})
	}
}
