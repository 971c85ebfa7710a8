package bloomlab_test

import (
	"errors"
	"math"
	"testing"

	"github.com/bloomlab/bloomlab/internal/kind"
)

// TestPlannersBounded: every registered kind plans any n and any rate in
// (0, 1), subnormal rates included, with a plan or an error wrapping
// ErrParam, after a bounded number of search evaluations (counted by
// kind.PlanSteps, not timed). Count-Min's sizing once walked its width one
// counter at a time, ~2^36 steps per depth once math.Pow lost precision
// (`bloomlab plan -n 10 -fpr 1e-310` ran for minutes); dlcbf turned
// 24/fpr = +Inf into one remainder bit and planned a filter at rate ≈ 1.
func TestPlannersBounded(t *testing.T) {
	const maxSteps = 200_000
	ns := []uint64{1, 2, 3, 10, 1000, 1e6, 1e9, 1 << 40, 1 << 53, math.MaxUint64}
	rates := []float64{5e-324, 1e-310, 2e-308, 1e-300, 1e-15, 0.01, 0.5, math.Nextafter(1, 0)}
	if testing.Short() { // 12 s → 2 s: the choices ODE and d-left grids
		ns, rates = []uint64{1, 1000, math.MaxUint64}, []float64{5e-324, 1e-310, 1e-300, 1e-15}
	}
	most := uint64(0)
	for _, s := range kind.All() {
		for _, n := range ns {
			for _, fpr := range rates {
				before := kind.PlanSteps()
				p, err := kind.PlanDefault(s, kind.Target{N: n, FPR: fpr})
				steps := kind.PlanSteps() - before
				most = max(most, steps)
				switch {
				case steps > maxSteps:
					t.Errorf("%s n=%d fpr=%g: %d search steps", s.Name, n, fpr, steps)
				case err != nil && !errors.Is(err, kind.ErrParam):
					t.Errorf("%s n=%d fpr=%g: %v, want a plan or ErrParam", s.Name, n, fpr, err)
				case err == nil && p.FPR > fpr*(1+1e-9) && p.FPR > 0:
					t.Errorf("%s n=%d fpr=%g: planned rate %g", s.Name, n, fpr, p.FPR)
				}
			}
		}
	}
	t.Logf("at most %d search steps per plan", most)
}
