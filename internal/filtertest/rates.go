package filtertest

import (
	"encoding/binary"
	"testing"

	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/internal/stats"
)

// RateCheck is a configuration whose false-positive rate CheckRates
// measures: Filters filters built by Build (one per seed 1 … Filters), each
// queried with Probes keys that were never added.
type RateCheck struct {
	Name    string
	Filters int
	Probes  int
	// Build returns a filter, built with the given seed, holding its keys
	// (none of them a key CheckRates queries: see AbsentKey).
	Build func(seed uint64) (kind.Filter, error)
	// Predicted is the formula's expected rate over filters (the kind's
	// plan FPR); 0 skips that check. Target is the rate the filters were
	// built for; 0 skips that check.
	Predicted, Target float64
	// Alpha is the level of each binomial check (default 1e-6).
	Alpha float64
}

// AbsentKey writes the i-th queried key into buf (16 bytes) and returns it.
// Its last byte is 0xA5; keys from Keys end in the high byte of their
// index, so the two never meet below 2^56 keys.
func AbsentKey(buf *[16]byte, i uint64) []byte {
	binary.LittleEndian.PutUint64(buf[:8], i*0xD6E8FEB86659FD93+0x5851F42D4C957F2D)
	binary.LittleEndian.PutUint64(buf[8:], i)
	buf[15] = 0xA5
	return buf[:]
}

// CheckRates builds and queries c's filters and checks, each at level
// c.Alpha with fixed seeds:
//
//   - the false positives are the binomial count of the filters' own
//     rates: within the region of Binomial(Filters·Probes, mean
//     EstimatedFPR) (the sum of independent binomials with those rates is
//     more concentrated than that);
//   - they are the count the formula predicts, Binomial(Filters·Probes,
//     Predicted) (which includes the filters' scatter around it: use
//     enough filters where it is wide);
//   - Predicted is at most Target, and the false positives are not above
//     Binomial(Filters·Probes, Target)'s region: the target is met.
//
// It returns the measured rate.
func CheckRates(t *testing.T, c RateCheck) float64 {
	t.Helper()
	alpha := c.Alpha
	if alpha == 0 {
		alpha = 1e-6
	}
	var hits uint64
	var sumState float64
	var buf [16]byte
	for s := 1; s <= c.Filters; s++ {
		f, err := c.Build(uint64(s))
		if err != nil {
			t.Fatalf("%s: seed %d: %v", c.Name, s, err)
		}
		sumState += f.EstimatedFPR()
		for i := range uint64(c.Probes) {
			if f.Contains(AbsentKey(&buf, i)) {
				hits++
			}
		}
	}
	trials := uint64(c.Filters) * uint64(c.Probes)
	rate := float64(hits) / float64(trials)
	state := sumState / float64(c.Filters)
	t.Logf("%s: %d false positives in %d probes (%d filters): rate %.4g; state %.4g, predicted %.4g, target %.4g",
		c.Name, hits, trials, c.Filters, rate, state, c.Predicted, c.Target)
	check := func(what string, p float64, upperOnly bool) {
		lo, hi := stats.BinomialQuantileBounds(trials, p, alpha)
		if (!upperOnly && hits < lo) || hits > hi {
			t.Errorf("%s: %d false positives in %d probes (rate %.4g), outside [%d, %d], the binomial region of %s %.4g",
				c.Name, hits, trials, rate, lo, hi, what, p)
		}
	}
	check("the filters' EstimatedFPR", state, false)
	if c.Predicted > 0 {
		check("the predicted rate", c.Predicted, false)
	}
	if c.Target > 0 {
		if c.Predicted > c.Target*(1+1e-12) {
			t.Errorf("%s: predicted rate %.4g above the target %.4g", c.Name, c.Predicted, c.Target)
		}
		check("the target", c.Target, true)
	}
	return rate
}
