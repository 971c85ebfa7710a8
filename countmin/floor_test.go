package countmin

import (
	"fmt"
	"testing"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/filtertest"
	"github.com/bloomlab/bloomlab/internal/kind"
)

// TestTargetMet: a sketch sized by DimensionsFPR for n keys at rate ε
// answers Contains (estimate > 0) for absent keys at most at ε, and at the
// rate EstimatedFPR and FPRScheme state. Before the pair floor of two-hash
// rows was counted (a key whose (h1, h2) is the query's hits all d
// counters), n = 10^5 at 1e-5 measured 1.4–1.7e-5, and 7.1% at n = 3 and
// 1%. Under -short fewer probes, still a binomial check (filtertest.
// CheckRates, level 1e-6).
func TestTargetMet(t *testing.T) {
	for _, c := range []struct {
		s     hashing.Scheme
		n     int
		eps   float64
		quick [2]int
		full  [2]int
	}{
		{hashing.Double, 100000, 1e-5, [2]int{1, 2e6}, [2]int{4, 25e6}},
		{hashing.Double, 3, 0.01, [2]int{200, 1e4}, [2]int{2000, 1e4}},
		{hashing.Enhanced, 1000, 1e-4, [2]int{4, 1e6}, [2]int{20, 1e6}},
		{hashing.Independent, 1000, 1e-4, [2]int{4, 1e6}, [2]int{20, 1e6}},
	} {
		fp := c.quick
		if !testing.Short() {
			fp = c.full
		}
		w, d, err := DimensionsFPRScheme(c.s, uint64(c.n), c.eps)
		if err != nil {
			t.Fatal(err)
		}
		keys := filtertest.Keys(c.n, 79)
		filtertest.CheckRates(t, filtertest.RateCheck{
			Name: fmt.Sprintf("%v n=%d w=%d d=%d", c.s, c.n, w, d), Filters: fp[0], Probes: fp[1],
			Build: func(seed uint64) (kind.Filter, error) {
				s, err := New(Config{Width: w, Depth: d, Scheme: c.s, Seed: seed})
				if err != nil {
					return nil, err
				}
				for _, k := range keys {
					s.Add(k, 1)
				}
				return s, nil
			},
			Target: c.eps, Predicted: FPRScheme(c.s, w, d, uint64(c.n)),
		})
	}
}
