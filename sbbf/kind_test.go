package sbbf

import (
	"errors"
	"strings"
	"testing"

	"github.com/bloomlab/bloomlab/internal/filtertest"
	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/theory"
)

func TestPlanner(t *testing.T) {
	filtertest.CheckPlanner(t, "sbbf", filtertest.PlannerChecks{
		Rate: func(p kind.Plan, _ []string, n uint64) float64 {
			return theory.FPSplitBlock(float64(n), float64(p.M/theory.SplitBlockBits))
		},
		MinM: theory.SplitBlockBits,
		Unit: "bits",
		BigN: 5e10, // 60 GB at 1 %: the format stops at 64 GiB
		Explicit: []filtertest.Explicit{
			{M: 512, K: 8, WantM: 512},
			{M: 1000, K: 8, WantM: 1024, Notice: true},
			{M: 1, K: 8, WantM: 256, Notice: true},
		},
	})
	p, err := filtertest.Plan(t, "sbbf", nil, kind.Target{N: 1000, FPR: 0.01})
	if err != nil || p.Accesses != 1 || p.Hashes != 1 || p.Removes || p.K != 8 || p.M%256 != 0 || p.Bits != p.M {
		t.Errorf("plan %+v, %v", p, err)
	}
	// The fewest blocks meeting the rate.
	if below := theory.FPSplitBlock(1000, float64(p.M/256-1)); below <= 0.01 {
		t.Errorf("plan of %d blocks, but one fewer gives %g", p.M/256, below)
	}
	if _, err := filtertest.Plan(t, "sbbf", nil, kind.Target{M: 1024, K: 7}); !errors.Is(err, kind.ErrParam) {
		t.Errorf("-k 7: %v, want ErrParam", err)
	}
	// -parquet-sizing: parquet-go's blocks (1025 keys at 10 bits: 1282
	// bytes, 41 blocks, one block over the budget's 40).
	q, err := filtertest.Plan(t, "sbbf", []string{"-parquet-sizing"}, kind.Target{N: 1025, BitsPerKey: 10})
	if err != nil || q.M != 41*256 {
		t.Errorf("-parquet-sizing: m = %d, %v; want %d", q.M, err, 41*256)
	}
	// With -fpr or -m and -k, -parquet-sizing sizes nothing: a notice
	// says so (the user asked for parquet-go's sizing and does not get it).
	for _, tg := range []kind.Target{{N: 1025, FPR: 0.01}, {M: 1024, K: 8}} {
		q, err := filtertest.Plan(t, "sbbf", []string{"-parquet-sizing"}, tg)
		if err != nil || len(q.Notices) != 1 || !strings.Contains(q.Notices[0], "-parquet-sizing ignored") {
			t.Errorf("-parquet-sizing with %+v: notices %q, %v; want one saying it is ignored", tg, q.Notices, err)
		}
	}
	d, err := filtertest.Plan(t, "sbbf", nil, kind.Target{N: 1025, BitsPerKey: 10})
	if err != nil || d.M != 40*256 {
		t.Errorf("default bits-per-key sizing: m = %d, %v; want %d", d.M, err, 40*256)
	}
	s, err := filtertest.Plan(t, "sbbf", nil, kind.Target{N: 10, FPR: 0.01, Seed: 3})
	if err != nil || len(s.Notices) != 1 {
		t.Errorf("a seed: notices %q, %v; want one saying it is ignored", s.Notices, err)
	}
}

func TestPlanBuild(t *testing.T) {
	// Seeds are ignored (the format's is 0), so the targets have none.
	filtertest.CheckBuild(t, "sbbf", [][]string{nil, {"-parquet-sizing"}},
		[]kind.Target{{N: 2000, FPR: 0.01}, {N: 300, BitsPerKey: 6}, {N: 3, BitsPerKey: 1}, {M: 4000, K: 8}})
}

func TestKindRegistered(t *testing.T) {
	s, ok := kind.Lookup("sbbf")
	if !ok || s.Combine == nil || s.Decode == nil {
		t.Fatal("sbbf is not registered with a decoder and Combine")
	}
	a, b := must(New(4)), must(New(4))
	a.AddString("a")
	b.AddString("b")
	if err := s.Combine(a, b); err != nil || !a.ContainsString("a") || !a.ContainsString("b") || a.N() != 2 {
		t.Errorf("Combine: %v", err)
	}
	if err := s.Combine(a, must(New(8))); !errors.Is(err, kind.ErrIncompatible) {
		t.Errorf("Combine of mismatched filters: %v", err)
	}
	names := map[string]bool{}
	a.SetCapacity(10)
	for _, f := range s.Describe(a) {
		names[f.Name] = true
	}
	for _, want := range []string{"blocks", "k", "hash", "fill ratio", "fpr at keys added", "fpr at capacity"} {
		if !names[want] {
			t.Errorf("Describe lacks %q", want)
		}
	}
	if len(s.Describe(&Filter{})) == 0 {
		t.Error("Describe of the zero Filter")
	}
	if err := s.Defaults().Set("parquet-sizing", "1"); err != nil {
		t.Error("sbbf does not declare -parquet-sizing")
	}
}

// TestInlining: the block and mask helpers cost no call.
func TestInlining(t *testing.T) {
	filtertest.Inlinable(t, "github.com/bloomlab/bloomlab/sbbf", "(*Filter).block", "masks")
}
