package countmin

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/format"
	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/internal/stats"
	"github.com/bloomlab/bloomlab/rdb"
)

// TestDimensionsFPR: the smallest sketch whose rate at n keys, the pair
// floor of two-hash rows included, is at most the target: with rows of a
// prime width (two-hash rows), the prime below misses it, and no other
// depth does it in fewer counters. Independent rows: one counter fewer
// misses it.
func TestDimensionsFPR(t *testing.T) {
	prevPrime := func(p uint64) uint64 {
		for p--; p > 2 && !hashing.IsPrime(p); p-- {
		}
		return p
	}
	for _, s := range []hashing.Scheme{hashing.Double, hashing.Enhanced, hashing.Independent} {
		for _, c := range []struct {
			n   uint64
			fpr float64
		}{{1000, 0.01}, {1e6, 0.001}, {1e6, 0.5}, {1, 0.01}, {3, 1e-4}, {1e5, 1e-5}, {1e9, 1e-6}} {
			w, d, err := DimensionsFPRScheme(s, c.n, c.fpr)
			if err != nil {
				t.Fatalf("%v %+v: %v", s, c, err)
			}
			rate := func(w uint64, d int) float64 { return FPRScheme(s, w, d, c.n) }
			below := w - 1
			if s != hashing.Independent && d > 1 {
				below = prevPrime(w)
				if !hashing.IsPrime(w) {
					t.Errorf("%v %+v: w = %d not prime", s, c, w)
				}
			}
			if rate(w, d) > c.fpr || (below >= 1 && rate(below, d) <= c.fpr) {
				t.Errorf("%v %+v: w = %d, d = %d: %g; w = %d: %g", s, c, w, d, rate(w, d), below, rate(below, d))
			}
			for dd := 1; dd <= MaxDepth; dd++ {
				ww := (w*uint64(d) - 1) / uint64(dd) // the widest with fewer counters
				if s != hashing.Independent && dd > 1 && ww > 2 && !hashing.IsPrime(ww) {
					ww = prevPrime(ww)
				}
				if ww >= 1 && rate(ww, dd) <= c.fpr {
					t.Errorf("%v %+v: %d × %d beats %d × %d", s, c, dd, ww, d, w)
				}
			}
			// Without the floor the optimum is near the partitioned Bloom
			// filter's, d ≈ log2(1/fpr); the floor, which falls with w
			// only, favours fewer, wider rows.
			opt := math.Log2(1 / c.fpr)
			if c.n >= 1000 && (float64(d) > opt+1.5 || s == hashing.Independent && float64(d) < opt-1.5) {
				t.Errorf("%v %+v: d = %d, want about %.1f", s, c, d, opt)
			}
		}
	}
	for _, c := range [][2]float64{{0, 0.01}, {10, 0}, {10, 1}, {10, math.NaN()}, {1e12, 1e-9}} {
		if _, _, err := DimensionsFPR(uint64(c[0]), c[1]); !errors.Is(err, ErrParam) {
			t.Errorf("DimensionsFPR(%v, %v): %v", c[0], c[1], err)
		}
	}
	w, d, err := DimensionsBitsPerKey(1000, 640)
	// 10,000 counters; the optimum is near ln2 · 10 counters per key, 7
	// rows, but with the pair floor of two-hash rows 6 rows of 1666 give
	// 9.18e-3 against 7 of 1428's 9.22e-3.
	if err != nil || w*uint64(d) > 10000 || w*uint64(d) <= 10000-uint64(d) || d != 6 {
		t.Errorf("640 bits per key: %d × %d, %v", d, w, err)
	}
	for _, bpk := range []float64{0, 0.01, math.NaN(), 1e30} {
		if _, _, err := DimensionsBitsPerKey(1000, bpk); !errors.Is(err, ErrParam) {
			t.Errorf("%v bits per key: %v", bpk, err)
		}
	}
}

// TestMembershipRate: a sketch sized by DimensionsFPR answers Contains for
// absent keys at the predicted rate: the count of false positives among
// 10^6 absent keys lies within the binomial bounds (alpha 1e-6) of
// EstimatedFPR, which is within 5% of FPR.
func TestMembershipRate(t *testing.T) {
	if testing.Short() {
		t.Skip("a million probes")
	}
	const n, fpr, probes = 20000, 0.01, 1_000_000
	w, d, _ := DimensionsFPR(n, fpr)
	s, _ := New(Config{Width: w, Depth: d, Seed: 7})
	for i := 0; i < n; i++ {
		s.AddHash(key(i), 1)
	}
	est, formula := s.EstimatedFPR(), FPRScheme(hashing.Double, w, d, n)
	if math.Abs(est-formula) > 0.05*formula {
		t.Fatalf("state rate %g, formula %g", est, formula)
	}
	fp := uint64(0)
	for i := n; i < n+probes; i++ {
		if s.ContainsHash(key(i)) {
			fp++
		}
	}
	lo, hi := stats.BinomialQuantileBounds(probes, est, 1e-6)
	if fp < lo || fp > hi {
		t.Fatalf("%d false positives in %d probes, want [%d, %d] (rate %g)", fp, probes, lo, hi, est)
	}
}

func planner(t *testing.T, args ...string) kind.Planner {
	t.Helper()
	spec, ok := kind.Lookup("countmin")
	if !ok {
		t.Fatal("countmin not registered")
	}
	v := spec.Defaults()
	if err := v.ParseArgs(args); err != nil {
		t.Fatal(err)
	}
	return spec.Planner(v)
}

func TestKind(t *testing.T) {
	spec, _ := kind.Lookup("countmin")
	if spec.Format != format.KindCountMin || spec.Decode == nil || spec.Combine == nil {
		t.Fatal("countmin registered wrongly")
	}
	def := planner(t)
	// Sized by (n, fpr): DimensionsFPR, capacity n.
	w, d, _ := DimensionsFPR(100000, 0.01)
	p, err := def(kind.Target{N: 100000, FPR: 0.01})
	if err != nil || p.M != w || p.K != d || p.Bits != 64*w*uint64(d) || p.Capacity != 100000 || p.FPR != FPRScheme(hashing.Double, w, d, 100000) {
		t.Fatalf("fpr plan %+v, %v", p, err)
	}
	// By -m/-k: width and depth.
	if p, err = def(kind.Target{M: 1000, K: 4}); err != nil || p.M != 1000 || p.K != 4 || p.Capacity != 0 || !math.IsNaN(p.FPR) {
		t.Fatalf("explicit plan %+v, %v", p, err)
	}
	// By -eps/-delta: Dimensions.
	w, d, _ = Dimensions(0.001, 0.01)
	if p, err = planner(t, "-eps", "0.001", "-delta", "0.01")(kind.Target{}); err != nil || p.M != w || p.K != d {
		t.Fatalf("eps plan %+v, %v", p, err)
	}
	for name, c := range map[string]struct {
		args []string
		t    kind.Target
	}{
		"nothing":        {nil, kind.Target{N: 10}},
		"no n":           {nil, kind.Target{FPR: 0.01}},
		"eps and fpr":    {[]string{"-eps", "0.01", "-delta", "0.1"}, kind.Target{N: 10, FPR: 0.01}},
		"eps alone":      {[]string{"-eps", "0.01"}, kind.Target{}},
		"bad scheme":     {[]string{"-scheme", "partition"}, kind.Target{N: 10, FPR: 0.01}},
		"too wide":       {nil, kind.Target{M: 1 << 36, K: 2}},
		"k without m":    {nil, kind.Target{K: 2}},
		"fpr and bits":   {nil, kind.Target{N: 10, FPR: 0.01, BitsPerKey: 100}},
		"too many rows:": {nil, kind.Target{M: 10, K: 65}},
	} {
		if _, err := planner(t, c.args...)(c.t); !errors.Is(err, kind.ErrParam) {
			t.Errorf("%s: %v, want ErrParam", name, err)
		}
	}
	// Build: count 1 per key; options reach the sketch.
	p, err = planner(t, "-scheme", "independent", "-conservative")(kind.Target{N: 1000, BitsPerKey: 640, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.New()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a", "b", "a"} {
		if err := b.Add([]byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	g, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	s := g.(*Sketch)
	if s.N() != 3 || s.Estimate([]byte("a")) != 2 || s.Capacity() != 1000 || s.Seed() != 4 || s.Bits() != p.Bits ||
		s.Config().Scheme != hashing.Independent || !s.Config().Conservative {
		t.Fatalf("built %+v, n %d, capacity %d", s.Config(), s.N(), s.Capacity())
	}
	// Combine merges.
	other := s.Clone()
	if err := spec.Combine(s, other); err != nil || s.N() != 6 || s.Estimate([]byte("a")) != 4 {
		t.Fatalf("combine: %v, n %d", err, s.N())
	}
	fields := map[string]kind.Field{}
	for _, f := range spec.Describe(s) {
		fields[f.Name] = f
	}
	for _, name := range []string{"width", "depth", "scheme", "eps", "delta", "error bound", "row fill", "fpr at design n"} {
		if _, ok := fields[name]; !ok {
			t.Errorf("Describe lacks %q", name)
		}
	}
}

// TestEstimatedFPR: Π over rows of the fraction of nonzero counters for
// independent rows; for two-hash rows, the exact fraction of (start, step)
// pairs whose counters are nonzero.
func TestEstimatedFPR(t *testing.T) {
	s, _ := New(Config{Width: 4, Depth: 2, Scheme: hashing.Independent})
	if s.EstimatedFPR() != 0 {
		t.Fatal("empty sketch")
	}
	copy(s.cells, []uint64{1, 0, 2, 0, 5, 5, 5, 0})
	if got := s.EstimatedFPR(); got != 0.5*0.75 {
		t.Fatalf("independent: %g, want 0.375", got)
	}
	// Width 4: starts 0 … 3, odd steps 1, 3. Starts 0 and 2 are nonzero in
	// row 0; row 1 holds x + b: 0+1 = 1 yes, 0+3 = 3 no, 2+1 = 3 no,
	// 2+3 = 1 yes. 2 of the 8 pairs.
	s, _ = New(Config{Width: 4, Depth: 2})
	copy(s.cells, []uint64{1, 0, 2, 0, 5, 5, 5, 0})
	if got := s.EstimatedFPR(); got != 0.25 {
		t.Fatalf("double: %g, want 0.25", got)
	}
}

// TestZeroValue: every exported method of the zero Sketch answers as for an
// empty sketch, refuses with an error wrapping ErrParam, or panics naming
// the constructors before changing anything (docs/API.md). Estimate and
// Contains used to panic on a nil pointer (and without that, the minimum
// over no rows is 2^64 − 1), WriteTo wrote a file that does not load, and
// Merge of two zero sketches succeeded.
func TestZeroValue(t *testing.T) {
	dg := hashing.Sum([]byte("k"), 0)
	errParam := func(err error) string {
		if !errors.Is(err, ErrParam) || !strings.Contains(err.Error(), "create one with New") {
			return "want an ErrParam naming the constructors"
		}
		return ""
	}
	want := func(ok bool, msg string) string {
		if ok {
			return ""
		}
		return msg
	}
	made := func() *Sketch { s, _ := New(Config{Width: 2, Depth: 1}); return s }
	cases := map[string]func(s *Sketch) string{
		"Config":         func(s *Sketch) string { return want(s.Config() == Config{}, "non-zero") },
		"Width":          func(s *Sketch) string { return want(s.Width() == 0, "non-zero") },
		"Depth":          func(s *Sketch) string { return want(s.Depth() == 0, "non-zero") },
		"N":              func(s *Sketch) string { return want(s.N() == 0, "non-zero") },
		"Capacity":       func(s *Sketch) string { return want(s.Capacity() == 0, "non-zero") },
		"Kind":           func(s *Sketch) string { return want(s.Kind() == "countmin", s.Kind()) },
		"Seed":           func(s *Sketch) string { return want(s.Seed() == 0, "non-zero") },
		"Bits":           func(s *Sketch) string { return want(s.Bits() == 0, "non-zero") },
		"Digest":         func(s *Sketch) string { return want(s.Digest([]byte("k")) == dg, "wrong digest") },
		"Estimate":       func(s *Sketch) string { return want(s.Estimate([]byte("k")) == 0, "non-zero") },
		"EstimateString": func(s *Sketch) string { return want(s.EstimateString("k") == 0, "non-zero") },
		"EstimateHash":   func(s *Sketch) string { return want(s.EstimateHash(dg) == 0, "non-zero") },
		"Contains":       func(s *Sketch) string { return want(!s.Contains([]byte("k")), "true") },
		"ContainsString": func(s *Sketch) string { return want(!s.ContainsString("k"), "true") },
		"ContainsHash":   func(s *Sketch) string { return want(!s.ContainsHash(dg), "true") },
		"EstimatedFPR":   func(s *Sketch) string { return want(s.EstimatedFPR() == 0, "non-zero") },
		"Add":            func(s *Sketch) string { return mustPanic(func() { s.Add([]byte("k"), 1) }) },
		"AddString":      func(s *Sketch) string { return mustPanic(func() { s.AddString("k", 1) }) },
		"AddHash":        func(s *Sketch) string { return mustPanic(func() { s.AddHash(dg, 1) }) },
		"SetCapacity":    func(s *Sketch) string { return mustPanic(func() { s.SetCapacity(3) }) },
		"IncrBy":         func(s *Sketch) string { return mustPanic(func() { _, _ = s.IncrBy([]byte("k"), 1) }) },
		"TryAdd":         func(s *Sketch) string { return mustPanic(func() { _, _ = s.TryAdd([]byte("k"), 1) }) },
		"Profile":        func(s *Sketch) string { return want(s.Profile() == 0, "non-zero") },
		"MergeWeighted": func(s *Sketch) string {
			r, _ := NewRedisBloom(4, 2)
			if m := errParam(s.MergeWeighted([]*Sketch{r}, []int64{1})); m != "" {
				return m
			}
			g := r.Clone()
			if m := errParam(g.MergeWeighted([]*Sketch{s}, []int64{1})); m != "" || !g.Equal(r) {
				return "merging the zero Sketch in: " + m
			}
			return ""
		},
		"Merge": func(s *Sketch) string {
			if m := errParam(s.Merge(&Sketch{})); m != "" {
				return m
			}
			if m := errParam(s.Merge(made())); m != "" {
				return m
			}
			g := made()
			if m := errParam(g.Merge(s)); m != "" || !g.Equal(made()) {
				return "merging the zero Sketch in: " + m
			}
			return ""
		},
		"MergeScaled": func(s *Sketch) string {
			if m := errParam(s.MergeScaled(made(), 2)); m != "" {
				return m
			}
			g := made()
			if m := errParam(g.MergeScaled(s, 2)); m != "" || !g.Equal(made()) {
				return "merging the zero Sketch in: " + m
			}
			return ""
		},
		"Clear": func(s *Sketch) string { s.Clear(); return "" },
		"Clone": func(s *Sketch) string { return want(reflect.DeepEqual(s.Clone(), &Sketch{}), "not zero") },
		"Equal": func(s *Sketch) string {
			return want(s.Equal(&Sketch{}) && !s.Equal(made()) && !made().Equal(s), "wrong")
		},
		"WriteTo": func(s *Sketch) string {
			var buf bytes.Buffer
			n, err := s.WriteTo(&buf)
			if n != 0 || buf.Len() != 0 {
				return "wrote bytes"
			}
			return errParam(err)
		},
		"MarshalBinary": func(s *Sketch) string {
			b, err := s.MarshalBinary()
			if b != nil {
				return "returned bytes"
			}
			return errParam(err)
		},
		"WriteRedisBloomRDB": func(s *Sketch) string {
			d := rdb.NewDumpWriter(false)
			m, _ := d.Module(RDBTypeName, RDBEncVer)
			before := d.Payload(10)
			err := s.WriteRedisBloomRDB(m)
			if !bytes.Equal(d.Payload(10), before) {
				return "wrote fields"
			}
			return errParam(err)
		},
		// The loaders replace the receiver: the zero Sketch is a fine one.
		"UnmarshalBinary": func(s *Sketch) string {
			g := made()
			b, _ := g.MarshalBinary()
			return want(s.UnmarshalBinary(b) == nil && s.Equal(g), "failed")
		},
		"ReadFrom": func(s *Sketch) string {
			g := made()
			b, _ := g.MarshalBinary()
			_, err := s.ReadFrom(bytes.NewReader(b))
			return want(err == nil && s.Equal(g), "failed")
		},
	}
	typ := reflect.TypeOf(&Sketch{})
	for i := 0; i < typ.NumMethod(); i++ {
		if _, ok := cases[typ.Method(i).Name]; !ok {
			t.Errorf("no zero-value case for method %s", typ.Method(i).Name)
		}
	}
	for name, c := range cases {
		var s Sketch
		msg := func() (msg string) {
			defer func() {
				if r := recover(); r != nil {
					msg = "panicked"
				}
			}()
			return c(&s)
		}()
		if msg != "" {
			t.Errorf("zero Sketch: %s: %s", name, msg)
		}
		if name != "UnmarshalBinary" && name != "ReadFrom" && !reflect.DeepEqual(s, Sketch{}) {
			t.Errorf("zero Sketch: %s changed it", name)
		}
	}
}

// mustPanic returns "" if fn panics with a message naming a constructor.
func mustPanic(fn func()) (msg string) {
	defer func() {
		s, _ := recover().(string)
		if !strings.Contains(s, "create one with New") {
			msg = "did not panic naming the constructors"
		}
	}()
	fn()
	return ""
}

// TestNoExportedFields: the Sketch's state is reachable only through its
// methods.
func TestNoExportedFields(t *testing.T) {
	typ := reflect.TypeOf(Sketch{})
	for i := 0; i < typ.NumField(); i++ {
		if typ.Field(i).IsExported() {
			t.Errorf("Sketch has an exported field %s", typ.Field(i).Name)
		}
	}
}
