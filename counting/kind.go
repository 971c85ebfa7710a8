package counting

import (
	"fmt"
	"math"
	"strings"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/bitvec"
	"github.com/bloomlab/bloomlab/internal/format"
	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/internal/sizing"
)

var _ kind.Filter = (*Filter)(nil)

func init() {
	kind.Register(kind.Spec{
		Name:    "counting",
		Summary: "counting Bloom filter: a w-bit counter per position instead of a bit, so keys can be removed (000 §2.1, 004 §9)",
		Order:   30, Format: format.KindCounting, Decode: kind.Decoded(decode),
		FPRMethod: "fill^k with fill the fraction of nonzero counters (the product of the subarrays' fills for a partitioned scheme), with the pair floor of double hashing (exact for a small filter)",
		Options: []kind.Option{
			{Name: "scheme", Type: kind.String, Default: hashing.DefaultScheme.String(), Usage: "index scheme: " + schemeNames()},
			{Name: "counter-bits", Type: kind.Int, Default: DefaultCounterBits, Usage: "counter width in bits: 2, 4, 8, 16 or 32"},
		},
		Plan:     kindPlanner,
		Describe: describe,
		Combine:  kind.Merge[*Filter](),
	})
}

// counterBits lists the counter widths, as -counter-bits takes them.
var counterBits = []int{2, 4, 8, 16, 32}

// kindPlanner plans with the options scheme and counter-bits.
func kindPlanner(v *kind.Values) kind.Planner {
	schemeName, w := v.String("scheme"), v.Int("counter-bits")
	return func(t kind.Target) (kind.Plan, error) {
		s, err := hashing.ParseScheme(schemeName)
		if err != nil {
			return kind.Plan{}, kind.Paramf("counting", "unknown {scheme} %q (want one of %s)", schemeName, schemeNames())
		}
		if checkBits(w) != nil {
			return kind.Plan{}, kind.Paramf("counting", "{counter-bits} %d is not one of 2, 4, 8, 16, 32", w)
		}
		return plan(s, w, t)
	}
}

func schemeNames() string {
	var names []string
	for _, s := range hashing.Schemes() {
		names = append(names, s.String())
	}
	return strings.Join(names, ", ")
}

// plan sizes a counting filter as a standard (or partitioned) filter of m
// counters, each w bits wide. A bits-per-key target is a memory budget, as
// for every kind: B bits per key are B/w counters per key.
func plan(s hashing.Scheme, w int, t kind.Target) (kind.Plan, error) {
	ct := t
	ct.BitsPerKey /= float64(w)
	m, k, notices, err := sizing.Standard("counting", s, ct)
	if err != nil {
		return kind.Plan{}, err
	}
	lay := newLayout(w)
	if m<<lay.logw > hashing.MaxM || lay.nwords(m) > math.MaxInt/8 {
		return kind.Plan{}, fmt.Errorf("counting: m = %d counters of %d bits exceed %s: %w", m, w, memLimit(), kind.ErrParam)
	}
	p := kind.Plan{
		Kind: "counting", Scheme: s.String(), M: m, MUnit: "counters", K: k, Bits: m * uint64(w),
		Capacity: t.N, FPR: sizing.FP(s, m, t.N, k), Hashes: 1, Accesses: k, Removes: true,
		Note:    fmt.Sprintf("%d-bit counters: supports remove (004 §9)", w),
		Notices: notices,
		Extra:   []kind.Field{{Name: "counter bits", Value: w}},
	}
	if t.N == 0 {
		p.FPR = math.NaN()
	}
	p.New = func() (kind.Builder, error) {
		f, err := New(m, k, WithScheme(s), WithSeed(t.Seed), WithCounterBits(w))
		if err != nil {
			return nil, err
		}
		f.capacity = t.N
		return kind.FilterBuilder(f)
	}
	return p, nil
}

func describe(g kind.Filter) []kind.Field {
	f := g.(*Filter)
	dn, dnote := bitvec.DesignN(f.m, f.k, f.capacity)
	return []kind.Field{
		{Name: "scheme", Value: f.scheme.String()},
		{Name: "m", Value: f.m, Note: "counters"},
		{Name: "k", Value: f.k},
		{Name: "counter bits", Value: f.CounterBits()},
		{Name: "saturated counters", Value: f.Saturated(), Note: fmt.Sprintf("counter max %d; a saturated counter never returns to zero", f.CounterMax()), Warn: f.Saturated() > 0},
		{Name: "fill ratio", Value: f.FillRatio(), Note: "fraction of nonzero counters"},
		{Name: "fpr at keys added", Value: sizing.FP(f.scheme, f.m, f.N(), f.k), Note: "formula with the scheme's pair floor (theory.FPScheme), n = keys added"},
		{Name: "design n", Value: dn, Note: dnote},
		{Name: "fpr at design n", Value: sizing.FP(f.scheme, f.m, dn, f.k), Note: "formula with the scheme's pair floor (theory.FPScheme)"},
		{Name: "approx count", Value: f.ApproxCount(), Note: "distinct keys, from the fill"},
	}
}
