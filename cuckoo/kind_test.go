package cuckoo

import (
	"bytes"
	"errors"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/bloomlab/bloomlab/internal/filtertest"
	"github.com/bloomlab/bloomlab/internal/format"
	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/theory"
)

func spec(t *testing.T) *kind.Spec {
	s, ok := kind.Lookup("cuckoo")
	if !ok {
		t.Fatal("kind cuckoo not registered")
	}
	return s
}

func planWith(t *testing.T, args []string, tg kind.Target) (kind.Plan, error) {
	t.Helper()
	v := spec(t).Defaults()
	if err := v.ParseArgs(args); err != nil {
		t.Fatal(err)
	}
	return spec(t).Planner(v)(tg)
}

// TestKindBuild: every option set builds through Plan.New, Add and Finish
// with no false negative, the planned size and capacity, and N = keys.
func TestKindBuild(t *testing.T) {
	filtertest.CheckBuild(t, "cuckoo", [][]string{
		nil, {"-semisort"}, {"-bucket-size", "2"}, {"-bucket-size", "8", "-max-kicks", "100"}, {"-expansion", "2"},
	}, []kind.Target{{N: 1000, FPR: 0.01, Seed: 1}, {N: 5000, BitsPerKey: 12, Seed: 2}, {N: 30000, FPR: 0.0001}})
	filtertest.CheckBuild(t, "cuckoo", [][]string{{"-profile", "redisbloom"}, {"-profile", "redisbloom", "-bucket-size", "4", "-expansion", "0"}},
		[]kind.Target{{N: 600}, {N: 5000, FPR: 0.5}})
}

// TestKindPlan: plans meet their targets by theory.FPCuckoo at n keys,
// stay within a bit budget, refuse what does not apply, and allocate
// nothing of the filter's size.
func TestKindPlan(t *testing.T) {
	s := spec(t)
	if s.Format != format.KindCuckoo || s.Decode == nil || s.Combine == nil || s.Growing || len(s.Exports) != 1 || s.Exports[0].Name != "redisbloom" {
		t.Fatalf("spec %+v", s)
	}
	for _, args := range [][]string{nil, {"-semisort"}, {"-bucket-size", "2"}, {"-bucket-size", "8"}, {"-bucket-size", "1"}} {
		for _, n := range []uint64{1, 7, 1000, 100_000, 3_000_000} {
			for _, fpr := range []float64{0.3, 0.01, 0.0001, 1e-7} {
				p, err := planWith(t, args, kind.Target{N: n, FPR: fpr})
				if err != nil {
					t.Fatalf("%q n=%d fpr=%v: %v", args, n, fpr, err)
				}
				b, f := int(p.Extra[0].Value.(int)), int(p.Extra[1].Value.(int))
				load := float64(n) / float64(p.M*uint64(b))
				if r := theory.FPCuckoo(f, b, load); !(r <= fpr) || p.FPR != r || load > designLoad(b) || !validBuckets(p.M) {
					t.Errorf("%q n=%d fpr=%v: %d buckets, f = %d: rate %v, plan %v, load %v", args, n, fpr, p.M, f, r, p.FPR, load)
				}
				if f > minFingerprintBits && theory.FPCuckoo(f-1, b, load) <= fpr {
					t.Errorf("%q n=%d fpr=%v: f = %d is not the shortest", args, n, fpr, f)
				}
			}
			for _, bpk := range []float64{8, 12.5, 33.3} {
				p, err := planWith(t, args, kind.Target{N: n, BitsPerKey: bpk})
				if errors.Is(err, ErrParam) && strings.Contains(err.Error(), "too few") {
					continue // a small table rounded up to a power of two
				}
				if err != nil {
					t.Fatalf("%q n=%d bpk=%v: %v", args, n, bpk, err)
				}
				if float64(p.Bits) > bpk*float64(n) {
					t.Errorf("%q n=%d bpk=%v: %d bits over the budget", args, n, bpk, p.Bits)
				}
			}
		}
	}
	// The redisbloom profile: RedisBloom's geometry for capacity n.
	p, err := planWith(t, []string{"-profile", "redisbloom"}, kind.Target{N: 1000, FPR: 0.001})
	if err != nil || p.M != 512 || p.Bits != 512*2*8 || p.Scheme != "redisbloom" || len(p.Notices) != 1 {
		t.Errorf("redisbloom plan %+v, %v", p, err)
	}
	for _, c := range []struct {
		args []string
		t    kind.Target
	}{
		{nil, kind.Target{N: 100, M: 1000, K: 3}},
		{nil, kind.Target{N: 100, FPR: 0.01, BitsPerKey: 10}},
		{nil, kind.Target{N: 100, FPR: 1}},
		{nil, kind.Target{N: 100, FPR: 1e-12}},
		{nil, kind.Target{N: 100, BitsPerKey: 2}},
		{nil, kind.Target{N: 1e15, FPR: 0.01}},
		{[]string{"-bucket-size", "3"}, kind.Target{N: 100, FPR: 0.01}},
		{[]string{"-bucket-size", "0"}, kind.Target{N: 100, FPR: 0.01}},
		{[]string{"-fingerprint-bits", "33"}, kind.Target{N: 100}},
		{[]string{"-fingerprint-bits", "12"}, kind.Target{N: 100, BitsPerKey: 12}},
		{[]string{"-max-kicks", "0"}, kind.Target{N: 100, FPR: 0.01}},
		{[]string{"-max-kicks", "70000"}, kind.Target{N: 100, FPR: 0.01}},
		{[]string{"-expansion", "3"}, kind.Target{N: 100, FPR: 0.01}},
		{[]string{"-semisort", "-bucket-size", "2"}, kind.Target{N: 100, FPR: 0.01}},
		{[]string{"-profile", "bloom"}, kind.Target{N: 100, FPR: 0.01}},
		{[]string{"-profile", "redisbloom"}, kind.Target{N: 100, BitsPerKey: 10}},
		{[]string{"-profile", "redisbloom", "-semisort"}, kind.Target{N: 100}},
		{[]string{"-profile", "redisbloom", "-fingerprint-bits", "12"}, kind.Target{N: 100}},
		{[]string{"-profile", "redisbloom", "-bucket-size", "256"}, kind.Target{N: 1000}},
		{[]string{"-profile", "redisbloom", "-bucket-size", "4"}, kind.Target{N: 7}},
		{[]string{"-profile", "redisbloom"}, kind.Target{N: 100, Seed: 1}},
	} {
		if _, err := planWith(t, c.args, c.t); !errors.Is(err, ErrParam) {
			t.Errorf("%q %+v: %v, want ErrParam", c.args, c.t, err)
		}
	}
	for _, args := range [][]string{nil, {"-profile", "redisbloom"}} {
		if _, err := planWith(t, args, kind.Target{FPR: 0.01}); !errors.Is(err, kind.ErrNeedN) {
			t.Errorf("%q without n: %v, want ErrNeedN", args, err)
		}
	}
	// -fingerprint-bits with -n alone, and a notice when it misses -fpr.
	p, err = planWith(t, []string{"-fingerprint-bits", "6"}, kind.Target{N: 10000, FPR: 0.001})
	if err != nil || p.Extra[1].Value != 6 || len(p.Notices) != 1 {
		t.Errorf("-fingerprint-bits 6: %+v, %v", p, err)
	}
	// Planning a filter of 10^12 keys allocates nothing of its size.
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	p, err = kind.PlanDefault(s, kind.Target{N: 1e12, FPR: 0.01})
	runtime.ReadMemStats(&after)
	if err != nil || p.Bits < 1e13 {
		t.Fatalf("plan for 10^12 keys: %+v %v", p, err)
	}
	if d := after.TotalAlloc - before.TotalAlloc; d > 1<<20 {
		t.Errorf("planning %d bits allocated %d bytes", p.Bits, d)
	}
}

// TestKindDescribeAndExport: describe lists the structure; the redisbloom
// export writes CF.SCANDUMP chunks that read back equal, and Detect tells
// them from a BF dump; Combine merges.
func TestKindDescribeAndExport(t *testing.T) {
	s := spec(t)
	f := must(NewRedisBloom(1000, 2, 20, 1))
	for i := 0; i < 3000; i++ {
		must(0, f.Add(key(i)))
	}
	fields := s.Describe(f)
	var names []string
	for _, fd := range fields {
		names = append(names, fd.Name)
	}
	for _, want := range []string{"profile", "bucket size", "load factor", "sub-filters", "sub-filter 2", "redisbloom size", "fpr at keys added", "next sub-filter"} {
		if !strings.Contains(strings.Join(names, "|"), want) {
			t.Errorf("describe lacks %q: %v", want, names)
		}
	}
	var buf bytes.Buffer
	if err := s.Exports[0].Write(f, &buf); err != nil {
		t.Fatal(err)
	}
	if !s.Exports[0].Detect(buf.Bytes()[:kind.DetectLen]) {
		t.Error("Detect does not recognise a CF dump")
	}
	g, err := s.Exports[0].Read(bytes.NewReader(buf.Bytes()))
	if err != nil || !g.(*Filter).Equal(f) {
		t.Fatalf("export/import: %v", err)
	}
	if err := s.Exports[0].Write(must(NewWithEstimates(100, 0.01, 0)), &buf); !errors.Is(err, ErrParam) {
		t.Errorf("export of a bloomlab-profile filter: %v", err)
	}
	a := must(NewWithEstimates(2000, 0.01, 5))
	b := must(NewWithEstimates(2000, 0.01, 5))
	for i := 0; i < 900; i++ {
		must(0, a.Add(key(i)))
		must(0, b.Add(key(i+900)))
	}
	if err := s.Combine(a, b); err != nil || a.N() != 1800 {
		t.Fatalf("combine: %v, N %d", err, a.N())
	}
	for i := 0; i < 1800; i++ {
		if !a.Contains(key(i)) {
			t.Fatal("false negative after combine")
		}
	}
	if err := s.Combine(a, must(NewWithEstimates(2000, 0.01, 6))); !errors.Is(err, ErrIncompatible) {
		t.Errorf("combine with another seed: %v", err)
	}
	_ = math.NaN
}
