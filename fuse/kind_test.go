package fuse

import (
	"errors"
	"strings"
	"testing"

	"github.com/bloomlab/bloomlab/internal/filtertest"
	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/theory"
)

// planBits reads a plan's fingerprint width from its Extra fields.
func planBits(p kind.Plan) int {
	for _, f := range p.Extra {
		if f.Name == "fingerprint bits" {
			return f.Value.(int)
		}
	}
	return 0
}

// TestPlanner: rate plans pick the narrowest width meeting the rate;
// bits-per-key plans the widest whose filter fits (8 bits with a notice
// when none does: MinM admits the 8-bit filter of 10^5 keys, 4-wise or
// 3-wise); -m/-k and bad arities are refused with ErrParam.
func TestPlanner(t *testing.T) {
	filtertest.CheckPlanner(t, "fuse", filtertest.PlannerChecks{
		Options: [][]string{nil, {"-arity", "4"}},
		Rate: func(p kind.Plan, _ []string, n uint64) float64 {
			return theory.FPFuse(planBits(p))
		},
		MinM:       1 << 17,
		Unit:       "cells",
		BigN:       3e9,
		BadOptions: [][]string{{"-arity", "2"}, {"-arity", "5"}},
	})
	for _, c := range []struct {
		fpr   float64
		fbits int
	}{{0.5, 8}, {1.0 / 256, 8}, {0.003, 16}, {1.0 / 65536, 16}, {1e-5, 32}, {1e-9, 32}} {
		p, err := filtertest.Plan(t, "fuse", nil, kind.Target{N: 1000, FPR: c.fpr})
		if err != nil || planBits(p) != c.fbits || p.FPR != theory.FPFuse(c.fbits) || p.K != 3 || p.Accesses != 3 {
			t.Errorf("-fpr %g: %d bits, %v; want %d", c.fpr, planBits(p), err, c.fbits)
		}
	}
	if _, err := filtertest.Plan(t, "fuse", nil, kind.Target{N: 1000, FPR: 1e-10}); !errors.Is(err, kind.ErrParam) {
		t.Errorf("-fpr 1e-10: %v, want ErrParam", err)
	}
	for _, c := range []struct {
		bpk   float64
		fbits int
		note  bool
	}{{4, 8, true}, {9.6, 8, false}, {19.1, 16, false}, {38.1, 32, false}, {100, 32, false}} {
		p, err := filtertest.Plan(t, "fuse", nil, kind.Target{N: 100_000, BitsPerKey: c.bpk})
		if err != nil || planBits(p) != c.fbits || (len(p.Notices) > 0) != c.note {
			t.Errorf("-bits-per-key %g: %d bits, notices %q, %v; want %d", c.bpk, planBits(p), p.Notices, err, c.fbits)
		}
	}
	if _, err := filtertest.Plan(t, "fuse", nil, kind.Target{M: 1000, K: 3}); !errors.Is(err, kind.ErrParam) || !strings.Contains(err.Error(), "follows from its keys") {
		t.Errorf("-m -k: %v", err)
	}
	p, err := filtertest.Plan(t, "fuse", []string{"-arity", "4"}, kind.Target{N: 1e6, FPR: 0.01})
	if err != nil || p.K != 4 || p.M != 1_077_248 {
		t.Errorf("-arity 4 for 10^6 keys: %+v, %v", p, err)
	}
}

func TestPlanBuild(t *testing.T) {
	filtertest.CheckBuild(t, "fuse", [][]string{nil, {"-arity", "4"}},
		[]kind.Target{{N: 2000, FPR: 0.01}, {N: 500, FPR: 1e-6, Seed: 3}, {N: 700, BitsPerKey: 20}})
}

func TestKindRegistered(t *testing.T) {
	s, ok := kind.Lookup("fuse")
	if !ok || !s.Static || s.Combine != nil || s.Decode == nil {
		t.Fatal("fuse is not registered as a static kind with a decoder")
	}
	names := map[string]bool{}
	for _, f := range s.Describe(goldenFilter()) {
		names[f.Name] = true
	}
	for _, want := range []string{"arity", "fingerprint bits", "cells", "segment length", "fpr", "bits per key", "static"} {
		if !names[want] {
			t.Errorf("Describe lacks %q", want)
		}
	}
	if err := s.Defaults().Set("arity", "1"); err != nil {
		t.Error("fuse does not declare -arity")
	}
}

// TestInlining: the position helpers cost no call.
func TestInlining(t *testing.T) {
	filtertest.Inlinable(t, "github.com/bloomlab/bloomlab/fuse", "mix", "(*layout).positions3", "(*layout).positions4", "fourth")
}
