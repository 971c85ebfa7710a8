package dlcbf

import (
	"fmt"
	"math"

	"github.com/bloomlab/bloomlab/internal/format"
	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/internal/sizing"
)

var _ kind.Filter = (*Filter)(nil)

func init() {
	kind.Register(kind.Spec{
		Name:      "dlcbf",
		Summary:   "d-left counting Bloom filter: remainders with small counters in d subtables of buckets; keys can be removed (ESA 2006, 002 §III)",
		Order:     70,
		Format:    format.KindDlcbf,
		Decode:    kind.Decoded(decode),
		Options:   []kind.Option{{Name: "variant", Type: kind.String, Default: Static.String(), Usage: "construction: static (ESA 2006), dynamic (002 §III-A) or two-sizes (002 §III-B)"}},
		Plan:      planner,
		FPRMethod: "1 − Π over subtables of (1 − mean over buckets of Σ over cells of 2^−ℓ), ℓ each cell's remainder length, from the cells",
		Describe:  describe,
	})
}

// planner plans with the option variant.
func planner(opts *kind.Values) kind.Planner {
	name := opts.String("variant")
	return func(t kind.Target) (kind.Plan, error) {
		v, err := ParseVariant(name)
		if err != nil {
			return kind.Plan{}, err
		}
		return planKind(v, t)
	}
}

// planKind sizes variant v for t: PlanFPR or PlanBitsPerKey.
func planKind(v Variant, t kind.Target) (kind.Plan, error) {
	p, err := sizeFor(v, t)
	if err != nil {
		return kind.Plan{}, err
	}
	cells := uint64(p.Subtables) * p.Buckets * uint64(p.Cells)
	kp := kind.Plan{
		Kind: "dlcbf", Scheme: "-", M: cells, MUnit: "cells", K: p.Subtables, Bits: p.Bits(),
		Capacity: p.N, FPR: p.FPR, Hashes: 1, Accesses: p.Subtables, Removes: true,
		Note: fmt.Sprintf("d-left counting, %v (002 §III): %d × %d buckets of %d cells, %d bits each", v, p.Subtables, p.Buckets, p.Cells, bucketBits(p.Config)),
		Extra: []kind.Field{
			{Name: "variant", Value: v.String()},
			{Name: "remainder bits", Value: p.RemainderBits, Note: remainderNote(v)},
			{Name: "counter bits", Value: p.CounterBits},
			{Name: "cell bits per bucket", Value: p.BucketBits, Note: "R"},
			{Name: "keys per bucket", Value: p.Load},
			{Name: "fpr after removals", Value: p.WorstFPR, Note: "bound at n keys after any additions and removals: every cell at its shortest remainder"},
			{Name: "overflow", Value: p.Overflow, Note: "fluid-limit fraction of buckets beyond their cells: about the fraction of inserts refused"},
		},
	}
	if v != Static {
		kp.Notices = append(kp.Notices, fmt.Sprintf("fpr %.3g is the rate with no removals; removals can raise it up to %.3g", p.FPR, p.WorstFPR))
	}
	kp.New = func() (kind.Builder, error) {
		f, err := p.new(t.Seed)
		if err != nil {
			return nil, err
		}
		return kind.FilterBuilder(f)
	}
	return kp, nil
}

// sizeFor returns PlanFPR or PlanBitsPerKey for t; an explicit size is an
// error.
func sizeFor(v Variant, t kind.Target) (Plan, error) {
	switch err := sizing.Check("dlcbf", t); {
	case t.M != 0 || t.K != 0:
		return Plan{}, fmt.Errorf("dlcbf: sized by a false-positive rate or by bits per key, with n (d = 4 subtables of buckets of 8 cells, 6 keys per bucket on average); m and k do not apply: %w", kind.ErrParam)
	case err != nil:
		return Plan{}, err
	case t.FPR > 0:
		return PlanFPR(v, t.N, t.FPR)
	}
	return PlanBitsPerKey(v, t.N, t.BitsPerKey)
}

func remainderNote(v Variant) string {
	if v == Static {
		return "r, every cell's"
	}
	return "r, the minimal remainder; cells hold more while their bucket has held few keys"
}

// describe lists the structure of f, its loads and its rates by formula.
func describe(g kind.Filter) []kind.Field {
	f := g.(*Filter)
	loads := f.LoadHistogram()
	maxLoad, used := 0, uint64(0)
	for j, c := range loads {
		if c > 0 {
			maxLoad = j
		}
		used += uint64(j) * c
	}
	rem := f.RemainderHistogram()
	minRem, sumRem := -1, 0.0
	for l, c := range rem {
		if c > 0 && minRem < 0 {
			minRem = l
		}
		sumRem += float64(l) * float64(c)
	}
	out := []kind.Field{
		{Name: "variant", Value: f.cfg.Variant.String()},
		{Name: "d", Value: f.d, Note: "subtables"},
		{Name: "buckets per subtable", Value: f.nb},
		{Name: "cells per bucket", Value: f.h},
		{Name: "remainder bits", Value: f.r, Note: remainderNote(f.cfg.Variant)},
		{Name: "counter bits", Value: f.c},
		{Name: "bucket bits", Value: f.bbits, Note: "header included"},
		{Name: "cells", Value: f.Cells(), Note: "d·B·h: no more distinct keys fit"},
		{Name: "cells used", Value: used},
		{Name: "load histogram", Value: loads, Note: "buckets holding 0 … h cells"},
		{Name: "max load", Value: maxLoad, Note: "cells in the fullest bucket"},
	}
	if ml := f.MaxLoadHistogram(); ml != nil {
		out = append(out, kind.Field{Name: "largest-load histogram", Value: ml, Note: "buckets by the largest load they have had, which sets their remainder length (002 §III-C)"})
	}
	if used > 0 {
		out = append(out,
			kind.Field{Name: "shortest remainder", Value: minRem, Note: "bits, over the cells"},
			kind.Field{Name: "mean remainder", Value: sumRem / float64(used), Note: "bits, over the cells"})
	}
	buckets := float64(uint64(f.d) * f.nb)
	fpr, _, _ := Predict(f.cfg, float64(f.n)/buckets)
	out = append(out, rate("fpr at keys added", fpr, "formula (Predict), n = keys in the filter, no removals"))
	if f.capacity > 0 {
		fpr, worst, _ := Predict(f.cfg, float64(f.capacity)/buckets)
		out = append(out,
			rate("fpr at design n", fpr, "formula (Predict), no removals"),
			rate("fpr after removals at design n", worst, "bound: every cell at its shortest remainder"))
	}
	return out
}

// rate is a field holding a predicted rate, "unknown" where the formula
// does not reach (a NaN would not survive JSON).
func rate(name string, fpr float64, note string) kind.Field {
	if math.IsNaN(fpr) {
		return kind.Field{Name: name, Value: "unknown", Note: "more keys per bucket than the formula covers"}
	}
	return kind.Field{Name: name, Value: fpr, Note: note}
}
