package counting

import (
	"errors"
	"testing"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/filtertest"
	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/internal/sizing"
)

func TestPlanner(t *testing.T) {
	filtertest.CheckPlanner(t, "counting", filtertest.PlannerChecks{
		Options: [][]string{nil, {"-counter-bits", "8"}, {"-scheme", "partition"}, {"-scheme", "double", "-counter-bits", "2"}},
		Rate: func(p kind.Plan, _ []string, n uint64) float64 {
			s, _ := hashing.ParseScheme(p.Scheme)
			return sizing.FP(s, p.M, n, p.K)
		},
		MinM: 1,
		Unit: "counters",
		Explicit: []filtertest.Explicit{
			{M: 1000, K: 7, WantM: 1000},
			{Args: []string{"-scheme", "partition"}, M: 1000, K: 7, WantM: 1001, Notice: true},
			{Args: []string{"-counter-bits", "32"}, M: 1 << 43, K: 3, WantM: 1 << 43},
		},
		BadOptions: [][]string{
			{"-counter-bits", "3"}, {"-counter-bits", "64"}, {"-scheme", "bogus"},
		},
	})
	// m·w beyond 2^48 bits: refused by the planner, not by New.
	if _, err := filtertest.Plan(t, "counting", []string{"-counter-bits", "32"}, kind.Target{M: 1 << 44, K: 3}); !errors.Is(err, kind.ErrParam) {
		t.Errorf("2^44 counters of 32 bits: %v, want ErrParam", err)
	}
	p, err := filtertest.Plan(t, "counting", []string{"-counter-bits", "8"}, kind.Target{N: 1000, FPR: 0.01})
	if err != nil || p.Bits != 8*p.M || !p.Removes || p.Accesses != p.K || p.Hashes != 1 {
		t.Errorf("plan %+v, %v", p, err)
	}
}

func TestPlanBuild(t *testing.T) {
	filtertest.CheckBuild(t, "counting",
		[][]string{nil, {"-counter-bits", "2"}, {"-scheme", "prime-partition", "-counter-bits", "16"}, {"-scheme", "independent"}},
		[]kind.Target{{N: 2000, FPR: 0.01, Seed: 5}, {N: 300, BitsPerKey: 6}, {M: 4000, K: 3, Seed: 1}})
}

func TestKindRegistered(t *testing.T) {
	s, ok := kind.Lookup("counting")
	if !ok || s.Combine == nil || s.Decode == nil {
		t.Fatal("counting is not registered with a decoder and Combine")
	}
	a, b := mustNew(t, 1000, 4), mustNew(t, 1000, 4)
	a.AddString("a")
	b.AddString("b")
	if err := s.Combine(a, b); err != nil || !a.ContainsString("b") || a.Count([]byte("a")) != 1 || a.N() != 2 {
		t.Errorf("Combine: %v", err)
	}
	if err := s.Combine(a, mustNew(t, 1001, 4)); !errors.Is(err, kind.ErrIncompatible) {
		t.Errorf("Combine of mismatched filters: %v", err)
	}
	a.AddString("x")
	b.AddString("x")
	a.AddString("x")
	fields := s.Describe(a)
	names := map[string]bool{}
	for _, f := range fields {
		names[f.Name] = true
	}
	for _, want := range []string{"scheme", "m", "k", "counter bits", "saturated counters", "fill ratio", "fpr at keys added", "design n", "fpr at design n"} {
		if !names[want] {
			t.Errorf("Describe lacks %q", want)
		}
	}
}
