package blocked

import (
	"errors"
	"flag"
	"testing"

	"github.com/bloomlab/bloomlab/internal/filtertest"
	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/theory"
)

func TestPlanner(t *testing.T) {
	filtertest.CheckPlanner(t, "blocked", filtertest.PlannerChecks{
		Rate: func(p kind.Plan, _ []string, n uint64) float64 {
			return theory.FPBlocked(float64(n), float64(p.M/BlockBits), BlockBits, p.K)
		},
		MinM: BlockBits,
		Unit: "bits",
		Explicit: []filtertest.Explicit{
			{M: 1024, K: 7, WantM: 1024},
			{M: 1000, K: 7, WantM: 1024, Notice: true},
			{M: 1, K: 64, WantM: 512, Notice: true},
		},
	})
	p, err := filtertest.Plan(t, "blocked", nil, kind.Target{N: 1000, FPR: 0.01})
	if err != nil || p.Accesses != 1 || p.Hashes != 1 || p.Removes || p.M%BlockBits != 0 || p.Bits != p.M {
		t.Errorf("plan %+v, %v", p, err)
	}
	// blocked declares no options: -scheme is not one of them.
	s, _ := kind.Lookup("blocked")
	if len(s.Options) != 0 {
		t.Error("blocked declares -scheme")
	}
}

func TestPlanBuild(t *testing.T) {
	filtertest.CheckBuild(t, "blocked", nil,
		[]kind.Target{{N: 2000, FPR: 0.01, Seed: 5}, {N: 300, BitsPerKey: 6}, {N: 3, BitsPerKey: 1}, {M: 4000, K: 3, Seed: 1}})
}

func TestKindRegistered(t *testing.T) {
	s, ok := kind.Lookup("blocked")
	if !ok || s.Combine == nil || s.Decode == nil {
		t.Fatal("blocked is not registered with a decoder and Combine")
	}
	a, b := must(New(1024, 4)), must(New(1024, 4))
	a.AddString("a")
	b.AddString("b")
	if err := s.Combine(a, b); err != nil || !a.ContainsString("a") || !a.ContainsString("b") || a.N() != 2 {
		t.Errorf("Combine: %v", err)
	}
	if err := s.Combine(a, must(New(2048, 4))); !errors.Is(err, kind.ErrIncompatible) {
		t.Errorf("Combine of mismatched filters: %v", err)
	}
	names := map[string]bool{}
	for _, f := range s.Describe(a) {
		names[f.Name] = true
	}
	for _, want := range []string{"blocks", "k", "fill ratio", "fpr at keys added", "design n", "fpr at design n"} {
		if !names[want] {
			t.Errorf("Describe lacks %q", want)
		}
	}
	b.SetCapacity(0)
	if len(s.Describe(&Filter{})) == 0 {
		t.Error("Describe of the zero Filter")
	}
}

func newFlagSet() *flag.FlagSet { return flag.NewFlagSet("blocked", flag.ContinueOnError) }

// TestInlining: the zero-value check costs the mutators one predictable
// branch, not a call; the block and probe-word helpers cost no call.
func TestInlining(t *testing.T) {
	filtertest.Inlinable(t, "github.com/bloomlab/bloomlab/blocked",
		"(*Filter).mustBeMade", "(*Filter).blockAt", "probeWord")
}
