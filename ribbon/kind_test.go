package ribbon

import (
	"errors"
	"strings"
	"testing"

	"github.com/bloomlab/bloomlab/internal/filtertest"
	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/theory"
)

// TestPlanner: rate plans pick r = ⌈log2(1/fpr)⌉; bits-per-key plans the
// largest r whose filter fits (1 bit with a notice when none does); -r
// fixes r; -m/-k, bad -r and a -r above -fpr are refused with ErrParam.
func TestPlanner(t *testing.T) {
	filtertest.CheckPlanner(t, "ribbon", filtertest.PlannerChecks{
		Options: [][]string{nil, {"-r", "20"}},
		Rate: func(p kind.Plan, _ []string, n uint64) float64 {
			return theory.FPRibbon(p.K)
		},
		MinM:       1 << 17,
		Unit:       "slots",
		BadOptions: [][]string{{"-r", "33"}, {"-r", "-1"}},
	})
	for _, c := range []struct {
		fpr float64
		r   int
	}{{0.5, 1}, {0.3, 2}, {1.0 / 128, 7}, {0.007, 8}, {1.0 / 256, 8}, {1.0 / 65536, 16}, {1e-5, 17}, {1e-9, 30}} {
		p, err := filtertest.Plan(t, "ribbon", nil, kind.Target{N: 1000, FPR: c.fpr})
		if err != nil || p.K != c.r || p.FPR != theory.FPRibbon(c.r) || p.Bits != theory.RibbonBits(1000, c.r) {
			t.Errorf("-fpr %g: r=%d, %v; want %d", c.fpr, p.K, err, c.r)
		}
	}
	if _, err := filtertest.Plan(t, "ribbon", nil, kind.Target{N: 1000, FPR: 1e-10}); !errors.Is(err, kind.ErrParam) {
		t.Errorf("-fpr 1e-10: %v, want ErrParam", err)
	}
	for _, c := range []struct {
		bpk  float64
		r    int
		note bool
	}{{0.5, 1, true}, {7.3, 7, false}, {8.3, 8, false}, {16.6, 16, false}, {100, 32, false}} {
		p, err := filtertest.Plan(t, "ribbon", nil, kind.Target{N: 100_000, BitsPerKey: c.bpk})
		if err != nil || p.K != c.r || (len(p.Notices) > 0) != c.note {
			t.Errorf("-bits-per-key %g: r=%d, notices %q, %v; want %d", c.bpk, p.K, p.Notices, err, c.r)
		}
	}
	if _, err := filtertest.Plan(t, "ribbon", nil, kind.Target{M: 1000, K: 3}); !errors.Is(err, kind.ErrParam) || !strings.Contains(err.Error(), "follows from its keys") {
		t.Errorf("-m -k: %v", err)
	}
	if _, err := filtertest.Plan(t, "ribbon", []string{"-r", "4"}, kind.Target{N: 100, FPR: 0.01}); !errors.Is(err, kind.ErrParam) {
		t.Errorf("-r 4 -fpr 0.01: %v, want ErrParam", err)
	}
	p, err := filtertest.Plan(t, "ribbon", []string{"-r", "11"}, kind.Target{N: 1e6, FPR: 0.01})
	if err != nil || p.K != 11 || p.M != theory.RibbonSlots(1e6) {
		t.Errorf("-r 11 for 10^6 keys: %+v, %v", p, err)
	}
}

func TestPlanBuild(t *testing.T) {
	filtertest.CheckBuild(t, "ribbon", [][]string{nil, {"-r", "21"}},
		[]kind.Target{{N: 2000, FPR: 0.01}, {N: 500, FPR: 1e-6, Seed: 3}, {N: 700, BitsPerKey: 20}})
}

func TestKindRegistered(t *testing.T) {
	s, ok := kind.Lookup("ribbon")
	if !ok || !s.Static || s.Combine != nil || s.Decode == nil {
		t.Fatal("ribbon is not registered as a static kind with a decoder")
	}
	names := map[string]bool{}
	for _, f := range s.Describe(goldenFilter()) {
		names[f.Name] = true
	}
	for _, want := range []string{"result bits", "slots", "shards", "fpr", "bits per key", "static"} {
		if !names[want] {
			t.Errorf("Describe lacks %q", want)
		}
	}
	if err := s.Defaults().Set("r", "1"); err != nil {
		t.Error("ribbon does not declare -r")
	}
}
