package choices

import (
	"fmt"
	"testing"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/filtertest"
	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/theory"
)

// TestTargetMet: a c-choice filter built by NewWithEstimates meets its
// target where the pair floor of double hashing rules (n = 1: a query
// group whose (h1, h2) is the key's chosen group's hits all its k bits;
// before it was counted, 0.5% at n = 1 and 1e-4), and answers at the rate
// its EstimatedFPR and theory.FPChoicesScheme state (filtertest.CheckRates,
// binomial checks at level 1e-6).
func TestTargetMet(t *testing.T) {
	for _, c := range []struct {
		s       hashing.Scheme
		n, c    int
		eps     float64
		quick   [2]int
		full    [2]int
		formula bool // the ODE's prediction is the expected rate here
	}{
		{hashing.Enhanced, 1, 2, 1e-4, [2]int{200, 1e4}, [2]int{2000, 5e4}, true},
		{hashing.Enhanced, 1, 3, 1e-4, [2]int{200, 1e4}, [2]int{2000, 5e4}, true},
		{hashing.Double, 1, 2, 1e-4, [2]int{200, 1e4}, [2]int{2000, 5e4}, true},
		{hashing.Enhanced, 10000, 2, 1e-4, [2]int{1, 1e6}, [2]int{4, 5e6}, true},
	} {
		fp := c.quick
		if !testing.Short() {
			fp = c.full
		}
		keys := keyset(c.n, 80)
		// The sizing (an ODE solved at every step) once; the filters of
		// every seed are that size.
		sized, err := NewWithEstimates(uint64(c.n), c.eps, c.c, Config{Scheme: c.s})
		if err != nil {
			t.Fatal(err)
		}
		m, k := sized.M(), sized.K()
		build := func(seed uint64) (kind.Filter, error) {
			f, err := New(Config{M: m, K: k, C: c.c, Scheme: c.s, Seed: seed, TieSeed: seed})
			if err != nil {
				return nil, err
			}
			for _, key := range keys {
				f.Add(key)
			}
			return f, nil
		}
		rc := filtertest.RateCheck{
			Name: fmt.Sprintf("%v n=%d c=%d m=%d k=%d", c.s, c.n, c.c, m, k), Filters: fp[0], Probes: fp[1], Build: build, Target: c.eps,
		}
		pred := theory.FPChoicesScheme(c.s, m, float64(c.n), k, c.c)
		if pred > c.eps {
			t.Errorf("%s: FPChoicesScheme %g above the target", rc.Name, pred)
		}
		if c.formula {
			rc.Predicted = pred
		}
		filtertest.CheckRates(t, rc)
	}
}
