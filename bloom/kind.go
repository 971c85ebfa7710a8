package bloom

import (
	"math"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/bitvec"
	"github.com/bloomlab/bloomlab/internal/format"
	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/internal/sizing"
)

var _ kind.Filter = (*Filter)(nil)

func init() {
	for _, s := range []struct {
		name, summary, method string
		order                 int
		scheme                hashing.Scheme
	}{
		{"bloom", "standard Bloom filter: k hash functions over one array of m bits (003, 004 §3; schemes of 001)",
			"fill^k from the bits, with the pair floor of double hashing (exact for a small filter)", 10, hashing.DefaultScheme},
		{"partitioned", "partitioned Bloom filter: k subarrays of m/k bits, one probe in each (004 §5, 001 §4.1)",
			"product of the subarrays' fills from the bits, with the pair floor of the partition scheme (exact for a small filter)", 20, hashing.Partition},
	} {
		spec := kind.Spec{
			Name: s.name, Summary: s.summary, Order: s.order, Format: format.KindBloom, FPRMethod: s.method,
			Options:  []kind.Option{{Name: "scheme", Type: kind.String, Default: s.scheme.String(), Usage: "index scheme: " + schemeList(s.scheme.Partitioned())}},
			Plan:     schemePlanner(s.name, s.scheme),
			Describe: describe,
			Combine:  kind.Union[*Filter](),
		}
		if s.name == "bloom" {
			spec.Decode = kind.Decoded(decode)
		}
		kind.Register(spec)
	}
}

// schemePlanner plans the kind named name with its option scheme (which
// must be partitioned exactly when def is).
func schemePlanner(name string, def hashing.Scheme) func(v *kind.Values) kind.Planner {
	return func(v *kind.Values) kind.Planner {
		schemeName := v.String("scheme")
		return func(t kind.Target) (kind.Plan, error) {
			s, err := hashing.ParseScheme(schemeName)
			switch {
			case err == nil && s.Partitioned() && !def.Partitioned():
				return kind.Plan{}, kind.Paramf(name, "{scheme} %v is partitioned: use {kind} partitioned", s)
			case err == nil && !s.Partitioned() && def.Partitioned():
				return kind.Plan{}, kind.Paramf(name, "{scheme} %v is not partitioned: use {kind} bloom", s)
			case err != nil:
				return kind.Plan{}, kind.Paramf(name, "unknown {scheme} %q (want one of %s)", schemeName, schemeList(def.Partitioned()))
			}
			return plan(name, s, t)
		}
	}
}

func schemeList(partitioned bool) string {
	s := ""
	for _, sc := range hashing.Schemes() {
		if sc.Partitioned() == partitioned {
			if s != "" {
				s += ", "
			}
			s += sc.String()
		}
	}
	return s
}

func plan(name string, s hashing.Scheme, t kind.Target) (kind.Plan, error) {
	m, k, notices, err := sizing.Standard(name, s, t)
	if err != nil {
		return kind.Plan{}, err
	}
	note := "standard filter (003, 004 §3)"
	if s.Partitioned() {
		note = "k subarrays of m/k bits (004 §5); never a lower rate than bloom"
	}
	p := kind.Plan{
		Kind: name, Scheme: s.String(), M: m, MUnit: "bits", K: k, Bits: m,
		Capacity: t.N, FPR: sizing.FP(s, m, t.N, k), Hashes: 1, Accesses: k,
		Note: note, Notices: notices,
	}
	if t.N == 0 {
		p.FPR = math.NaN()
	}
	p.New = func() (kind.Builder, error) {
		f, err := New(m, k, WithScheme(s), WithSeed(t.Seed))
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
		{Name: "m", Value: f.m, Note: "bits"},
		{Name: "k", Value: f.k},
		{Name: "fill ratio", Value: f.FillRatio()},
		{Name: "fpr at keys added", Value: sizing.FP(f.scheme, f.m, f.N(), f.k), Note: "formula with the scheme's pair floor (theory.FPScheme), n = keys added"},
		{Name: "design n", Value: dn, Note: dnote},
		{Name: "fpr at design n", Value: sizing.FP(f.scheme, f.m, dn, f.k), Note: "formula with the scheme's pair floor (theory.FPScheme)"},
		{Name: "approx count", Value: f.ApproxCount(), Note: "distinct keys, from the fill"},
	}
}

// Bits returns the memory of the filter in bits: m.
func (f *Filter) Bits() uint64 { return f.m }
