package bloom

import (
	"testing"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/filtertest"
	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/internal/sizing"
)

// TestPlanBuild: a plan is the filter its New builds. Before, a rate plan
// with -scheme prime-partition kept theory.SizePartitioned's m (a multiple
// of k, k times a prime only by chance) while New rounded it up, so the
// plan's m, memory and rate were not the filter's.
func TestPlanBuild(t *testing.T) {
	targets := []kind.Target{{N: 2000, FPR: 0.01, Seed: 5}, {N: 300, BitsPerKey: 6}, {M: 4000, K: 3, Seed: 1}}
	filtertest.CheckBuild(t, "bloom", [][]string{nil, {"-scheme", "independent"}}, targets)
	filtertest.CheckBuild(t, "partitioned", [][]string{nil, {"-scheme", "prime-partition"}}, targets)
}

func TestPlanner(t *testing.T) {
	rate := func(p kind.Plan, _ []string, n uint64) float64 {
		s, _ := hashing.ParseScheme(p.Scheme)
		return sizing.FP(s, p.M, n, p.K)
	}
	filtertest.CheckPlanner(t, "bloom", filtertest.PlannerChecks{
		Options: [][]string{nil, {"-scheme", "double"}}, Rate: rate, MinM: 1, Unit: "bits",
		Explicit:   []filtertest.Explicit{{M: 1000, K: 7, WantM: 1000}},
		BadOptions: [][]string{{"-scheme", "partition"}},
	})
	filtertest.CheckPlanner(t, "partitioned", filtertest.PlannerChecks{
		Options: [][]string{nil, {"-scheme", "prime-partition"}}, Rate: rate, MinM: 2, Unit: "bits",
		Explicit:   []filtertest.Explicit{{M: 1000, K: 7, WantM: 1001, Notice: true}},
		BadOptions: [][]string{{"-scheme", "enhanced"}},
	})
}

// TestInlining: the zero-value check costs the mutators one predictable
// branch, not a call.
func TestInlining(t *testing.T) {
	filtertest.Inlinable(t, "github.com/bloomlab/bloomlab/bloom", "(*Filter).mustBeMade", "(*Filter).ContainsHash")
}
