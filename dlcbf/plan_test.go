package dlcbf

import (
	"encoding/binary"
	"errors"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/bloomlab/bloomlab/internal/format"
	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/theory"
)

// TestSizeLimit: a configuration beyond MaxBits is an ErrParam. New used to
// hand its size to make, which panics ("len out of range") rather than
// return an error.
func TestSizeLimit(t *testing.T) {
	huge := Config{Subtables: 16, Buckets: 1 << 40, Cells: 8, RemainderBits: 14, CounterBits: 2}
	if _, err := New(huge); !errors.Is(err, ErrParam) || !strings.Contains(err.Error(), "2^48") {
		t.Fatalf("New(%+v) = %v, want an ErrParam naming the limit", huge, err)
	}
	// The largest allowed size is planned, not allocated.
	at := Config{Subtables: 2, Buckets: 1 << 40, Cells: 8, RemainderBits: 14, CounterBits: 2}
	if _, err := normalize(at); err != nil {
		t.Fatalf("%+v: %v", at, err)
	}
	// A file claiming more is rejected by its parameters.
	g, _ := goldenFilter(t, Static).MarshalBinary()
	b := append([]byte(nil), g...)
	b[format.HeaderSize+1] = 16                                        // d
	binary.LittleEndian.PutUint64(b[format.HeaderSize+9:], MaxBuckets) // B
	var f Filter
	if err := f.UnmarshalBinary(reseal(b)); !errors.Is(err, format.ErrFormat) || !strings.Contains(err.Error(), "2^48") {
		t.Fatalf("oversized file: %v", err)
	}
}

// TestPlanStatic: NewWithEstimates keeps its design (the configuration the
// command built before plans existed), and the plan's rate is theory's.
func TestPlanStatic(t *testing.T) {
	for _, fpr := range []float64{0.1, 0.01, 0.001, 1e-6} {
		n := uint64(100000)
		p, err := PlanFPR(Static, n, fpr)
		if err != nil {
			t.Fatal(err)
		}
		r := int(math.Ceil(math.Log2(24 / fpr)))
		want := Config{Variant: Static, Subtables: 4, Buckets: (n + 23) / 24, Cells: 8, RemainderBits: r, CounterBits: 2, BucketBits: 8 * (r + 2)}
		if p.Config != want {
			t.Fatalf("fpr %v: %+v, want %+v", fpr, p.Config, want)
		}
		if th := theory.FPDlcbfStatic(4, p.Load, r); math.Abs(p.FPR-th) > 1e-12*th || p.WorstFPR != p.FPR || p.FPR > fpr {
			t.Fatalf("fpr %v: plan %g, worst %g, theory %g", fpr, p.FPR, p.WorstFPR, th)
		}
		f, err := NewWithEstimates(n, fpr, 9)
		if err != nil {
			t.Fatal(err)
		}
		if f.Bits() != p.Bits() || f.Capacity() != n || f.Seed() != 9 || f.Config().RemainderBits != r {
			t.Fatalf("fpr %v: filter %d bits, capacity %d; plan %d bits", fpr, f.Bits(), f.Capacity(), p.Bits())
		}
	}
	// Bits per key: the rule the command used, r = ⌊6·B/8⌋ − 2.
	for _, bpk := range []float64{4, 16, 21.5, 45.4} {
		p, err := PlanBitsPerKey(Static, 1000, bpk)
		if err != nil {
			t.Fatal(err)
		}
		if r := int(bpk*6/8) - 2; p.RemainderBits != r || p.BitsPerKey > bpk*1.01 {
			t.Fatalf("%v bits per key: r = %d (want %d), %v bits per key", bpk, p.RemainderBits, r, p.BitsPerKey)
		}
	}
	for _, bpk := range []float64{3.9, 47, 0, math.NaN(), -1} {
		if _, err := PlanBitsPerKey(Static, 1000, bpk); !errors.Is(err, ErrParam) {
			t.Errorf("%v bits per key: %v", bpk, err)
		}
	}
}

// TestPlanNoAllocation: planning 2·10^10 keys allocates nothing
// proportional to n (the command used to build the filter to read its
// parameters and died out of memory).
func TestPlanNoAllocation(t *testing.T) {
	for _, v := range variants {
		var ms0, ms1 runtime.MemStats
		runtime.ReadMemStats(&ms0)
		p, err := PlanFPR(v, 20_000_000_000, 0.01)
		runtime.ReadMemStats(&ms1)
		if err != nil {
			t.Fatal(err)
		}
		if a := ms1.TotalAlloc - ms0.TotalAlloc; a > 1<<20 {
			t.Fatalf("%v: planning allocated %d bytes", v, a)
		}
		if p.Bits() < 20_000_000_000*8 || p.N != 20_000_000_000 {
			t.Fatalf("%v: %d bits", v, p.Bits())
		}
	}
}

// TestPlanDynamic: the dynamic plans meet the rate after any removals,
// take about the static plan's memory (Dynamic less: semi-sorting and a
// 1-bit counter; TwoSizes its 22-bit header more), and predict the rate of
// the state a real filter reaches.
func TestPlanDynamic(t *testing.T) {
	const n = 48000
	st, _ := PlanFPR(Static, n, 0.001)
	for _, v := range []Variant{Dynamic, TwoSizes} {
		p, err := PlanFPR(v, n, 0.001)
		if err != nil {
			t.Fatal(err)
		}
		if p.WorstFPR > 0.001 || p.FPR >= p.WorstFPR/2 || (v == Dynamic) != (p.Bits() < st.Bits()) || p.Bits() > st.Bits()*9/8 {
			t.Fatalf("%v: fpr %g, worst %g, %d bits (static %d)", v, p.FPR, p.WorstFPR, p.Bits(), st.Bits())
		}
		f, err := p.new(3)
		if err != nil {
			t.Fatal(err)
		}
		for j := 0; j < n; j++ {
			if err := f.AddHash(digest(3, j)); err != nil {
				t.Fatal(err)
			}
		}
		// EstimatedFPR is the expectation given the state; the fluid limit
		// predicts it to a few percent at 8,000 buckets.
		if got := f.EstimatedFPR(); math.Abs(got-p.FPR) > 0.05*p.FPR {
			t.Fatalf("%v: state rate %g, predicted %g", v, got, p.FPR)
		}
		// Churn: whatever the removals, the rate stays under the bound.
		for j := 0; j < 4*n; j++ {
			if err := f.RemoveHash(digest(3, j)); err != nil {
				t.Fatal(err)
			}
			if err := f.AddHash(digest(3, n+j)); err != nil {
				t.Fatal(err)
			}
		}
		if got := f.EstimatedFPR(); got > p.WorstFPR || got < p.FPR {
			t.Fatalf("%v: after churn %g, want in [%g, %g]", v, got, p.FPR, p.WorstFPR)
		}
	}
	for _, bpk := range []float64{12, 20, 700} {
		for _, v := range []Variant{Dynamic, TwoSizes} {
			p, err := PlanBitsPerKey(v, n, bpk)
			if err != nil {
				t.Fatal(err)
			}
			if p.BitsPerKey > bpk*1.01 || p.BitsPerKey < min(bpk, 680)*0.95 {
				t.Fatalf("%v, %v bits per key: %v", v, bpk, p.BitsPerKey)
			}
		}
	}
}

// TestKind: the kind is registered and its planner follows the contract.
func TestKind(t *testing.T) {
	spec, ok := kind.Lookup("dlcbf")
	if !ok || spec.Format != format.KindDlcbf || spec.Decode == nil || spec.Combine != nil {
		t.Fatal("dlcbf not registered as expected")
	}
	for _, bad := range []kind.Target{
		{N: 100, M: 1000, K: 4},
		{N: 100},
		{FPR: 0.01},
		{N: 100, FPR: 0.01, BitsPerKey: 10},
		{N: 100, FPR: 2},
	} {
		if _, err := kind.PlanDefault(spec, bad); !errors.Is(err, kind.ErrParam) {
			t.Errorf("%+v: %v, want ErrParam", bad, err)
		}
	}
	if _, err := kind.PlanDefault(spec, kind.Target{N: 100, M: 1000, K: 4}); err == nil || !strings.Contains(err.Error(), "bits per key") {
		t.Errorf("an explicit size should say which sizings dlcbf takes: %v", err)
	}
	p, err := kind.PlanDefault(spec, kind.Target{N: 20_000_000_000, FPR: 0.01})
	if err != nil || p.Capacity != 20_000_000_000 || p.Bits < 8*p.Capacity || !p.Removes || p.MUnit != "cells" {
		t.Fatalf("plan: %+v, %v", p, err)
	}
	for _, v := range variants {
		vals := spec.Defaults()
		if err := vals.Set("variant", v.String()); err != nil {
			t.Fatal(err)
		}
		planner := spec.Planner(vals)
		p, err := planner(kind.Target{N: 3000, BitsPerKey: 20, Seed: 5})
		if err != nil {
			t.Fatal(err)
		}
		b, err := p.New()
		if err != nil {
			t.Fatal(err)
		}
		for j := 0; j < 3000; j++ {
			if err := b.Add([]byte{byte(j), byte(j >> 8)}); err != nil {
				t.Fatal(err)
			}
		}
		g, err := b.Finish()
		if err != nil {
			t.Fatal(err)
		}
		f := g.(*Filter)
		if f.Variant() != v || f.Bits() != p.Bits || f.Capacity() != 3000 || f.N() != 3000 || f.Seed() != 5 {
			t.Fatalf("%v: built %v, %d bits (plan %d), capacity %d", v, f.Variant(), f.Bits(), p.Bits, f.Capacity())
		}
		fields := map[string]kind.Field{}
		for _, fd := range spec.Describe(f) {
			fields[fd.Name] = fd
		}
		for _, name := range []string{"variant", "d", "buckets per subtable", "cells per bucket", "remainder bits", "counter bits", "cells", "load histogram", "max load", "fpr at design n"} {
			if _, ok := fields[name]; !ok {
				t.Errorf("%v: Describe lacks %q", v, name)
			}
		}
		if fpr := fields["fpr at design n"].Value.(float64); math.Abs(fpr-p.FPR) > 1e-12 {
			t.Errorf("%v: described rate %g, planned %g", v, fpr, p.FPR)
		}
	}
	vals := spec.Defaults()
	_ = vals.Set("variant", "huge")
	planner := spec.Planner(vals)
	if _, err := planner(kind.Target{N: 10, FPR: 0.01}); !errors.Is(err, kind.ErrParam) {
		t.Errorf("unknown variant: %v", err)
	}
}

// TestPlanTinyRates: a rate below what the remainders reach is refused,
// one they reach is met. PlanFPR took r = ⌈log2(24/fpr)⌉ with 24/fpr = +Inf
// below 1.3e-307, and int(+Inf) made r = 1: `build -kind dlcbf -fpr
// 1e-307` built a filter at rate ≈ 1 and exited 0.
func TestPlanTinyRates(t *testing.T) {
	for _, v := range []Variant{Static, Dynamic, TwoSizes} {
		for _, fpr := range []float64{5e-324, 1e-310, 1e-307, 1.3e-307, 2e-307, 1e-300, 1e-15, 24 * math.Ldexp(1, -MaxRemainder) * 0.99} {
			if p, err := PlanFPR(v, 1000, fpr); !errors.Is(err, ErrParam) {
				t.Errorf("%v fpr = %g: r = %d, WorstFPR %g, %v; want ErrParam", v, fpr, p.RemainderBits, p.WorstFPR, err)
			}
		}
		for _, fpr := range []float64{0.5, 0.01, 1e-6, 24 * math.Ldexp(1, -MaxRemainder)} {
			p, err := PlanFPR(v, 1000, fpr)
			if err != nil || p.WorstFPR > fpr {
				t.Errorf("%v fpr = %g: WorstFPR %g, %v", v, fpr, p.WorstFPR, err)
			}
		}
	}
}
