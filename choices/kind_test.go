package choices

import (
	"errors"
	"strconv"
	"testing"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/filtertest"
	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/theory"
)

// cOf returns the -c option in args (2 by default).
func cOf(args []string) int {
	for i, a := range args {
		if a == "-c" {
			c, _ := strconv.Atoi(args[i+1])
			return c
		}
	}
	return 2
}

func TestPlanner(t *testing.T) {
	opts := [][]string{nil, {"-c", "3"}, {"-c", "1", "-scheme", "independent", "-rounds", "5"}}
	if testing.Short() {
		opts = opts[:1]
	}
	filtertest.CheckPlanner(t, "choices", filtertest.PlannerChecks{
		Options: opts,
		Rate: func(p kind.Plan, args []string, n uint64) float64 {
			s, _ := hashing.ParseScheme(p.Scheme)
			return theory.FPChoicesScheme(s, p.M, float64(n), p.K, cOf(args))
		},
		MinM: 1,
		Unit: "bits",
		// theory.SizeChoices solves the ODE of 000 §3.1 at every step of
		// its search (seconds at ε = 0.3): a few n and ε keep the test
		// short.
		Ns:   []uint64{1, 1000, 100_000},
		FPRs: []float64{0.05, 0.0001},
		Explicit: []filtertest.Explicit{
			{M: 1000, K: 7, WantM: 1000},
			{Args: []string{"-c", "8"}, M: 12345, K: 64, WantM: 12345},
		},
		BadOptions: [][]string{
			{"-c", "0"}, {"-c", "9"}, {"-rounds", "-1"}, {"-rounds", "100001"},
			{"-scheme", "partition"}, {"-scheme", "bogus"},
		},
	})
	p, err := filtertest.Plan(t, "choices", []string{"-c", "3"}, kind.Target{N: 1000, FPR: 0.01})
	if err != nil || p.Accesses != 3*p.K || p.Hashes != 1 || p.Removes || len(p.Notices) != 0 {
		t.Errorf("plan %+v, %v", p, err)
	}
	p, err = filtertest.Plan(t, "choices", []string{"-rounds", "10"}, kind.Target{N: 1000, FPR: 0.01})
	if err != nil || len(p.Notices) != 1 {
		t.Errorf("an offline plan says nothing of the keys it holds: %+v, %v", p, err)
	}
}

// TestPlanBuild builds online and offline through the kind: the offline
// Builder collects the keys' digests and runs the rounds in Finish.
func TestPlanBuild(t *testing.T) {
	filtertest.CheckBuild(t, "choices",
		[][]string{nil, {"-c", "1"}, {"-c", "3", "-scheme", "double"}, {"-rounds", "4"}, {"-c", "4", "-rounds", "1", "-scheme", "independent"}},
		[]kind.Target{{N: 2000, FPR: 0.01, Seed: 5}, {N: 300, BitsPerKey: 6}, {M: 4000, K: 3, Seed: 1}})
	// The offline build sets fewer bits than online insertion of the same
	// keys, and records its rounds.
	build := func(args []string) *Filter {
		p, err := filtertest.Plan(t, "choices", args, kind.Target{N: 5000, BitsPerKey: 12, Seed: 2})
		if err != nil {
			t.Fatal(err)
		}
		b, err := p.New()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range filtertest.Keys(5000, 9) {
			if err := b.Add(k); err != nil {
				t.Fatal(err)
			}
		}
		f, err := b.Finish()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.Finish(); args != nil && !errors.Is(err, kind.ErrParam) {
			t.Errorf("second Finish of an offline build: %v", err)
		}
		return f.(*Filter)
	}
	on, off := build(nil), build([]string{"-rounds", "10"})
	if off.Rounds() != 10 || on.Rounds() != 0 || off.Ones() >= on.Ones() {
		t.Errorf("offline: %d rounds, %d ones; online: %d rounds, %d ones", off.Rounds(), off.Ones(), on.Rounds(), on.Ones())
	}
}

func TestKindRegistered(t *testing.T) {
	s, ok := kind.Lookup("choices")
	if !ok || s.Combine == nil || s.Decode == nil {
		t.Fatal("choices is not registered with a decoder and Combine")
	}
	cfg := Config{M: 1024, K: 4}
	a, b := must(New(cfg)), must(New(cfg))
	a.AddString("a")
	b.AddString("b")
	if err := s.Combine(a, b); err != nil || !a.ContainsString("a") || !a.ContainsString("b") || a.N() != 2 {
		t.Errorf("Combine: %v", err)
	}
	if err := s.Combine(a, must(New(Config{M: 1024, K: 4, C: 3}))); !errors.Is(err, kind.ErrIncompatible) {
		t.Errorf("Combine of mismatched filters: %v", err)
	}
	names := map[string]bool{}
	for _, f := range s.Describe(a) {
		names[f.Name] = true
	}
	for _, want := range []string{"c", "rounds", "scheme", "m", "k", "fill ratio", "fpr at keys added", "design n", "fpr at design n"} {
		if !names[want] {
			t.Errorf("Describe lacks %q", want)
		}
	}
	if len(s.Describe(&Filter{})) == 0 {
		t.Error("Describe of the zero Filter")
	}
}
