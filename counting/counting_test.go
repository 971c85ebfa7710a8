package counting

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/theory"
)

var widths = []int{2, 4, 8, 16, 32}

// get returns counter p, read the slow, obvious way: bit p·w of the array.
func (f *Filter) get(p uint64) uint64 {
	w := uint64(f.lay.width())
	bit := p * w
	return f.words[bit/64] >> (bit % 64) & (1<<w - 1)
}

// checkInvariants verifies the derived state against the counters.
func checkInvariants(t *testing.T, f *Filter) {
	t.Helper()
	var sat, sum uint64
	for p := uint64(0); p < f.m; p++ {
		c := f.get(p)
		sum += c
		if c == f.lay.max {
			sat++
		}
	}
	if sat != f.sat || sat != f.Saturated() {
		t.Fatalf("Saturated() = %d, counters show %d", f.sat, sat)
	}
	if sat == 0 && sum != uint64(f.k)*f.n {
		t.Fatalf("no saturated counter, counters sum to %d, k·N = %d·%d", sum, f.k, f.n)
	}
	if tail := (f.m * uint64(f.lay.width())) % 64; tail != 0 && f.words[len(f.words)-1]>>tail != 0 {
		t.Fatalf("bits set beyond the last counter")
	}
}

func key(prefix string, i int) []byte { return []byte(fmt.Sprintf("%s-%d", prefix, i)) }

// keys16 returns n distinct pseudo-random 16-byte keys.
func keys16(n int, seed uint64) [][]byte {
	r := rand.New(rand.NewPCG(seed, seed^0x5851F42D4C957F2D))
	out := make([][]byte, n)
	buf := make([]byte, 16*n)
	for i := range out {
		k := buf[16*i : 16*i+16 : 16*i+16]
		binary.LittleEndian.PutUint64(k, uint64(i)) // distinct
		binary.LittleEndian.PutUint64(k[8:], r.Uint64())
		out[i] = k
	}
	return out
}

// TestProperty runs random Add/Remove sequences on small filters, where
// collisions, repeated positions and saturation are common, against a
// model of the counters, for every scheme and the narrow widths.
func TestProperty(t *testing.T) {
	ops := 3000
	if testing.Short() {
		ops = 800
	}
	for _, s := range hashing.Schemes() {
		for _, w := range []int{2, 4} {
			for _, mk := range []struct {
				m uint64
				k int
			}{{37, 3}, {64, 4}, {200, 7}} {
				t.Run(fmt.Sprintf("%v/w=%d/m=%d/k=%d", s, w, mk.m, mk.k), func(t *testing.T) {
					propertyRun(t, s, w, mk.m, mk.k, ops)
				})
			}
		}
	}
}

func propertyRun(t *testing.T, s hashing.Scheme, w int, m uint64, k int, ops int) {
	f, err := New(m, k, WithScheme(s), WithCounterBits(w), WithSeed(uint64(w)*1000+uint64(s)))
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(uint64(s), uint64(w)<<32|m))
	const universe = 40
	present := make([]int, universe) // multiplicity of key("in", i)
	var total uint64
	model := make([]uint64, f.M()) // counters, with saturation, the obvious way
	max := uint64(1)<<w - 1
	var buf [hashing.MaxK]uint64
	positions := func(b []byte) []uint64 { return f.ix.Positions(f.Digest(b), buf[:]) }
	absentRefused, fpRemoves := 0, 0
	for op := 0; op < ops; op++ {
		i := r.IntN(universe)
		switch x := r.IntN(10); {
		case x < 5 || total == 0: // add
			f.Add(key("in", i))
			present[i]++
			total++
			for _, p := range positions(key("in", i)) {
				if model[p] != max {
					model[p]++
				}
			}
		case x < 9: // remove a key that is present
			for present[i] == 0 {
				i = (i + 1) % universe
			}
			if err := f.Remove(key("in", i)); err != nil {
				t.Fatalf("op %d: Remove of a key present %d times: %v", op, present[i], err)
			}
			present[i]--
			total--
			for _, p := range positions(key("in", i)) {
				if model[p] != max {
					model[p]--
				}
			}
		default: // try to remove a key never added, on a clone
			a := key("out", r.IntN(1000))
			g := f.Clone()
			err := g.Remove(a)
			switch {
			case f.Count(a) == 0 && !errors.Is(err, ErrNotPresent):
				t.Fatalf("op %d: Remove of a certainly absent key: err = %v, want ErrNotPresent", op, err)
			case err != nil:
				if !errors.Is(err, ErrNotPresent) {
					t.Fatalf("op %d: Remove error %v does not wrap ErrNotPresent", op, err)
				}
				if !g.Equal(f) || g.N() != f.N() || g.Saturated() != f.Saturated() {
					t.Fatalf("op %d: refused Remove changed the filter", op)
				}
				absentRefused++
			default:
				fpRemoves++ // a false positive: removable, but not on f
			}
		}
		if f.N() != total {
			t.Fatalf("op %d: N() = %d, want %d", op, f.N(), total)
		}
		for p, c := range model {
			if got := f.get(uint64(p)); got != c {
				t.Fatalf("op %d: counter %d = %d, model says %d", op, p, got, c)
			}
		}
		for j, c := range present {
			if c > 0 && !f.Contains(key("in", j)) {
				t.Fatalf("op %d: false negative for a key present %d times", op, c)
			}
			if c > 0 && f.Count(key("in", j)) < uint64(min(c, int(max))) {
				t.Fatalf("op %d: Count = %d below multiplicity %d", op, f.Count(key("in", j)), c)
			}
		}
		checkInvariants(t, f)
	}
	if absentRefused == 0 {
		t.Errorf("no Remove of an absent key was exercised (%d false positives)", fpRemoves)
	}
}

// TestRemoveMultiplicity: a position listed twice among a key's positions
// must hold at least 2 for the key to be removable, and a refused Remove
// undoes the decrements it already made.
func TestRemoveMultiplicity(t *testing.T) {
	const seed = 7
	x, y := hashing.SumString("x", seed), hashing.SumString("y", seed)
	fn := func(d hashing.Digest, i int) uint64 {
		switch d {
		case x:
			return []uint64{5, 9, 5}[i] // 5 twice
		case y:
			return []uint64{5, 9, 11}[i]
		}
		return uint64(20 + i)
	}
	f, err := New(32, 3, WithIndexFunc(fn), WithSeed(seed))
	if err != nil {
		t.Fatal(err)
	}
	f.AddString("y")
	if !f.ContainsString("x") {
		t.Fatal("x should be a false positive: its counters 5 and 9 are nonzero")
	}
	before := f.Clone()
	if err := f.RemoveString("x"); !errors.Is(err, ErrNotPresent) {
		t.Fatalf("RemoveString(x) = %v, want ErrNotPresent (counter 5 is 1, x lists it twice)", err)
	}
	if !f.Equal(before) || f.N() != 1 {
		t.Fatal("refused Remove changed the filter")
	}
	f.AddString("x")
	if f.get(5) != 3 || f.get(9) != 2 || f.get(11) != 1 {
		t.Fatalf("counters 5, 9, 11 = %d, %d, %d, want 3, 2, 1", f.get(5), f.get(9), f.get(11))
	}
	if err := f.RemoveString("x"); err != nil {
		t.Fatal(err)
	}
	if !f.Equal(before) {
		t.Fatal("Add then Remove of x did not restore the counters")
	}
	if err := f.RemoveString("y"); err != nil {
		t.Fatal(err)
	}
	if f.Nonzero() != 0 || f.N() != 0 {
		t.Fatalf("after removing everything: %d nonzero counters, N = %d", f.Nonzero(), f.N())
	}
	if err := f.RemoveString("y"); !errors.Is(err, ErrNotPresent) {
		t.Fatalf("second RemoveString(y) = %v, want ErrNotPresent", err)
	}
}

// TestSaturation hammers one key past the 4-bit maximum and removes it as
// often, with other keys sharing its counters.
func TestSaturation(t *testing.T) {
	for _, s := range []hashing.Scheme{hashing.Enhanced, hashing.Double, hashing.Partition, hashing.Independent} {
		t.Run(s.String(), func(t *testing.T) {
			f, err := New(128, 4, WithScheme(s), WithSeed(3))
			if err != nil {
				t.Fatal(err)
			}
			others := make([][]byte, 60) // ~240 probes into 128 counters: much sharing
			for i := range others {
				others[i] = key("other", i)
				f.Add(others[i])
			}
			hot := []byte("hot")
			for range 100 {
				f.Add(hot)
			}
			if f.Saturated() == 0 {
				t.Fatal("Saturated() = 0 after 100 Adds of one key into 4-bit counters")
			}
			if c := f.Count(hot); c != 15 || c != f.CounterMax() {
				t.Fatalf("Count(hot) = %d, want 15", c)
			}
			checkInvariants(t, f)
			sat := f.Saturated()
			for i := range 100 {
				if err := f.Remove(hot); err != nil {
					t.Fatalf("Remove %d of hot: %v", i, err)
				}
				for _, o := range others {
					if !f.Contains(o) {
						t.Fatalf("false negative for %q after %d removals of the saturated key", o, i+1)
					}
				}
			}
			if f.Saturated() != sat {
				t.Fatalf("Saturated() changed from %d to %d by removals", sat, f.Saturated())
			}
			if f.Count(hot) != 15 {
				t.Fatalf("saturated counters moved: Count(hot) = %d", f.Count(hot))
			}
			for _, o := range others {
				if err := f.Remove(o); err != nil {
					t.Fatal(err)
				}
			}
			if f.N() != 0 || f.Nonzero() != f.Saturated() {
				t.Fatalf("after removing everything: N = %d, %d nonzero counters, %d saturated", f.N(), f.Nonzero(), f.Saturated())
			}
			checkInvariants(t, f)
		})
	}
}

func TestWidths(t *testing.T) {
	for _, w := range widths {
		f, err := New(1000, 5, WithCounterBits(w))
		if err != nil {
			t.Fatal(err)
		}
		if f.CounterBits() != w || f.CounterMax() != 1<<w-1 {
			t.Fatalf("w=%d: CounterBits = %d, CounterMax = %d", w, f.CounterBits(), f.CounterMax())
		}
		if want := (1000*w + 63) / 64; len(f.words) != want {
			t.Fatalf("w=%d: %d words, want %d", w, len(f.words), want)
		}
		k := []byte("k")
		for i := uint64(1); i <= 40; i++ {
			f.Add(k)
			if c := f.Count(k); c != min(i, f.CounterMax()) {
				t.Fatalf("w=%d: Count after %d adds = %d", w, i, c)
			}
		}
		checkInvariants(t, f)
	}
	f, _ := New(1000, 5)
	if f.CounterBits() != DefaultCounterBits || DefaultCounterBits != 4 {
		t.Fatalf("default width %d", f.CounterBits())
	}
}

func TestParamErrors(t *testing.T) {
	cases := []struct {
		name string
		make func() (*Filter, error)
		want string
	}{
		{"m=0", func() (*Filter, error) { return New(0, 3) }, "m = 0"},
		{"m>max", func() (*Filter, error) { return New(hashing.MaxM+1, 3) }, "m = 281474976710657"},
		{"k=0", func() (*Filter, error) { return New(100, 0) }, "k = 0"},
		{"k=65", func() (*Filter, error) { return New(100, 65) }, "k = 65"},
		{"bits=3", func() (*Filter, error) { return New(100, 3, WithCounterBits(3)) }, "counter bits = 3, want one of 2, 4, 8, 16, 32"},
		{"bits=64", func() (*Filter, error) { return New(100, 3, WithCounterBits(64)) }, "counter bits = 64"},
		{"bits=1", func() (*Filter, error) { return New(100, 3, WithCounterBits(1)) }, "counter bits = 1"},
		{"scheme", func() (*Filter, error) { return New(100, 3, WithScheme(99)) }, "scheme 99"},
		{"nilfunc", func() (*Filter, error) { return New(100, 3, WithIndexFunc(nil)) }, "custom index function is nil"},
		{"n=0", func() (*Filter, error) { return NewWithEstimates(0, 0.01) }, "n = 0"},
		{"fpr=0", func() (*Filter, error) { return NewWithEstimates(10, 0) }, "fpr = 0"},
		{"fpr=1", func() (*Filter, error) { return NewWithEstimates(10, 1) }, "fpr = 1"},
		{"fpr=NaN", func() (*Filter, error) { return NewWithEstimates(10, math.NaN()) }, "fpr = NaN"},
		{"estimates bits", func() (*Filter, error) { return NewWithEstimates(10, 0.01, WithCounterBits(5)) }, "counter bits = 5"},
	}
	for _, c := range cases {
		f, err := c.make()
		if f != nil || !errors.Is(err, ErrParam) {
			t.Errorf("%s: got %v, %v; want an error wrapping ErrParam", c.name, f, err)
			continue
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "counting: ") || !strings.Contains(msg, c.want) {
			t.Errorf("%s: error %q: want prefix \"counting: \" and %q", c.name, msg, c.want)
		}
	}
}

func TestPartitionRounding(t *testing.T) {
	for _, s := range hashing.Schemes() {
		f, err := New(1000, 7, WithScheme(s))
		if err != nil {
			t.Fatal(err)
		}
		if want := hashing.PartitionSize(s, 1000, 7); f.M() != want {
			t.Errorf("%v: M() = %d, want %d", s, f.M(), want)
		}
	}
}

func TestNewWithEstimates(t *testing.T) {
	for _, s := range []hashing.Scheme{hashing.Enhanced, hashing.Partition} {
		f, err := NewWithEstimates(10000, 0.001, WithScheme(s), WithCounterBits(8))
		if err != nil {
			t.Fatal(err)
		}
		m, k, _ := theory.SizeScheme(s, 10000, 0.001, hashing.MaxK)
		if f.M() != m || f.K() != k || f.CounterBits() != 8 || f.Scheme() != s {
			t.Errorf("%v: m, k, w = %d, %d, %d; want %d, %d, 8", s, f.M(), f.K(), f.CounterBits(), m, k)
		}
	}
}

func TestAccessors(t *testing.T) {
	f, err := New(100, 3, WithSeed(42), WithScheme(hashing.Double), WithCounterBits(8))
	if err != nil {
		t.Fatal(err)
	}
	if f.M() != 100 || f.K() != 3 || f.Seed() != 42 || f.Scheme() != hashing.Double || f.Kind() != "counting" || f.N() != 0 {
		t.Fatalf("accessors: %d %d %d %v %q %d", f.M(), f.K(), f.Seed(), f.Scheme(), f.Kind(), f.N())
	}
	if f.Digest([]byte("a")) != hashing.Sum([]byte("a"), 42) {
		t.Fatal("Digest does not use the seed")
	}
}

// TestStringAndHashForms: the string, []byte and pre-hashed entry points
// agree.
func TestStringAndHashForms(t *testing.T) {
	f, _ := New(500, 4, WithSeed(9))
	g := f.Clone()
	h := f.Clone()
	for i := range 50 {
		s := fmt.Sprintf("key-%d", i)
		f.Add([]byte(s))
		g.AddString(s)
		h.AddHash(hashing.SumString(s, 9))
	}
	if !f.Equal(g) || !f.Equal(h) {
		t.Fatal("Add, AddString and AddHash disagree")
	}
	b := f.Clone()
	b.Clear()
	keys := make([][]byte, 50)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("key-%d", i))
	}
	b.AddBatch(keys)
	if !b.Equal(f) || b.N() != 50 {
		t.Fatal("AddBatch disagrees with Add")
	}
	ds := make([]hashing.Digest, 0, 100)
	all := make([][]byte, 0, 100)
	for i := range 100 {
		s := fmt.Sprintf("key-%d", i)
		all = append(all, []byte(s))
		ds = append(ds, f.Digest([]byte(s)))
		if f.ContainsString(s) != f.Contains([]byte(s)) || f.ContainsHash(ds[i]) != f.Contains([]byte(s)) {
			t.Fatal("Contains forms disagree")
		}
		if f.CountString(s) != f.Count([]byte(s)) || f.CountHash(ds[i]) != f.Count([]byte(s)) {
			t.Fatal("Count forms disagree")
		}
	}
	out := f.ContainsBatch(all, nil)
	out2 := f.ContainsHashBatch(ds, make([]bool, 3, 200))
	for i := range all {
		if out[i] != f.Contains(all[i]) || out2[i] != out[i] {
			t.Fatal("batch forms disagree")
		}
	}
	if len(out) != 100 || len(out2) != 100 {
		t.Fatal("batch result length")
	}
	for i := range 50 {
		s := fmt.Sprintf("key-%d", i)
		var err error
		switch i % 3 {
		case 0:
			err = f.Remove([]byte(s))
		case 1:
			err = f.RemoveString(s)
		case 2:
			err = f.RemoveHash(hashing.SumString(s, 9))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if f.Nonzero() != 0 || f.N() != 0 {
		t.Fatal("filter not empty after removing every key")
	}
}

// TestPositionsAgree: the inline fast paths of Add, Contains and Count
// probe exactly ix.Positions.
func TestPositionsAgree(t *testing.T) {
	for _, s := range hashing.Schemes() {
		for _, w := range widths {
			f, err := New(997, 9, WithScheme(s), WithCounterBits(w))
			if err != nil {
				t.Fatal(err)
			}
			for i := range 200 {
				d := f.Digest(key("p", i))
				f.Clear()
				f.AddHash(d)
				var buf [hashing.MaxK]uint64
				want := make(map[uint64]uint64)
				for _, p := range f.ix.Positions(d, buf[:]) {
					want[p]++
				}
				for p := uint64(0); p < f.M(); p++ {
					if f.get(p) != want[p] {
						t.Fatalf("%v w=%d key %d: counter %d = %d, want %d", s, w, i, p, f.get(p), want[p])
					}
				}
				least := uint64(math.MaxUint64)
				for _, c := range want {
					least = min(least, c)
				}
				if f.CountHash(d) != least || !f.ContainsHash(d) {
					t.Fatalf("%v w=%d: CountHash = %d, want %d", s, w, f.CountHash(d), least)
				}
			}
		}
	}
}

func TestMerge(t *testing.T) {
	for _, w := range widths {
		f, _ := New(300, 3, WithCounterBits(w), WithSeed(5))
		g, _ := New(300, 3, WithCounterBits(w), WithSeed(5))
		for i := range 40 {
			f.Add(key("f", i))
			g.Add(key("g", i))
		}
		hot := []byte("hot")
		for range 20 {
			f.Add(hot)
			g.Add(hot)
		}
		want := make([]uint64, f.M())
		for p := range want {
			want[p] = min(f.get(uint64(p))+g.get(uint64(p)), f.CounterMax())
		}
		gBefore := g.Clone()
		if err := f.Merge(g); err != nil {
			t.Fatal(err)
		}
		if !g.Equal(gBefore) {
			t.Fatal("Merge changed its argument")
		}
		for p, c := range want {
			if f.get(uint64(p)) != c {
				t.Fatalf("w=%d: merged counter %d = %d, want %d", w, p, f.get(uint64(p)), c)
			}
		}
		if f.N() != 120 {
			t.Fatalf("N after merge = %d, want 120", f.N())
		}
		for i := range 40 {
			if !f.Contains(key("f", i)) || !f.Contains(key("g", i)) {
				t.Fatal("merged filter lost a key")
			}
		}
		if c := f.Count(hot); c != min(40, f.CounterMax()) {
			t.Fatalf("w=%d: Count(hot) after merge = %d", w, c)
		}
		checkInvariants(t, f)
		for i := range 40 {
			if err := f.Remove(key("g", i)); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestMergeIncompatible(t *testing.T) {
	base := func(opts ...Option) *Filter {
		f, err := New(120, 3, append([]Option{WithSeed(1)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	fn := func(d hashing.Digest, i int) uint64 { return d.H1 + uint64(i) }
	cases := []struct {
		g    *Filter
		want string
	}{
		{func() *Filter { g, _ := New(121, 3, WithSeed(1)); return g }(), "m differs (120 vs 121)"},
		{func() *Filter { g, _ := New(120, 4, WithSeed(1)); return g }(), "k differs (3 vs 4)"},
		{base(WithCounterBits(8)), "counter bits differ (4 vs 8)"},
		{base(WithScheme(hashing.Double)), "scheme differs (enhanced vs double)"},
		{base(WithSeed(2)), "seed differs (1 vs 2)"},
		{base(WithIndexFunc(fn)), "scheme differs (enhanced vs custom)"},
	}
	for _, c := range cases {
		f := base()
		f.AddString("a")
		before := f.Clone()
		err := f.Merge(c.g)
		if !errors.Is(err, ErrIncompatible) || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "counting: merge: ") {
			t.Errorf("Merge: %v, want ErrIncompatible naming %q", err, c.want)
		}
		if !f.Equal(before) || f.N() != 1 {
			t.Error("failed Merge changed the filter")
		}
		if f.Equal(c.g) {
			t.Errorf("Equal of incompatible filters (%s)", c.want)
		}
	}
	c1, c2 := base(WithIndexFunc(fn)), base(WithIndexFunc(fn))
	if err := c1.Merge(c2); !errors.Is(err, ErrIncompatible) {
		t.Errorf("Merge of two custom filters: %v", err)
	}
	if err := c1.Merge(c1.Clone()); err != nil {
		t.Errorf("Merge of a custom filter with its clone: %v", err)
	}
}

func TestCloneClearEqual(t *testing.T) {
	f, _ := New(256, 4, WithCounterBits(2))
	for i := range 100 {
		f.Add(key("a", i))
	}
	g := f.Clone()
	if !f.Equal(g) || g.N() != f.N() || g.Saturated() != f.Saturated() {
		t.Fatal("clone differs")
	}
	g.Add([]byte("extra"))
	if f.Equal(g) {
		t.Fatal("clone shares counters with the original")
	}
	f.Clear()
	if f.N() != 0 || f.Saturated() != 0 || f.Nonzero() != 0 || f.FillRatio() != 0 {
		t.Fatal("Clear left state behind")
	}
	if f.Contains(key("a", 0)) {
		t.Fatal("cleared filter contains a key")
	}
}

// TestFillAndEstimates: FillRatio, EstimatedFPR and ApproxCount follow the
// nonzero counters like the standard filter's formulas follow its ones.
func TestFillAndEstimates(t *testing.T) {
	for _, s := range []hashing.Scheme{hashing.Enhanced, hashing.Partition} {
		for _, w := range widths {
			f, err := New(20000, 5, WithScheme(s), WithCounterBits(w))
			if err != nil {
				t.Fatal(err)
			}
			const n = 2000
			for i := range n {
				f.Add(key("e", i))
			}
			var nz uint64
			for p := uint64(0); p < f.M(); p++ {
				if f.get(p) != 0 {
					nz++
				}
			}
			if f.Nonzero() != nz || f.FillRatio() != float64(nz)/float64(f.M()) {
				t.Fatalf("%v w=%d: Nonzero = %d, counted %d", s, w, f.Nonzero(), nz)
			}
			b := f.ToBloom()
			if got, want := f.EstimatedFPR(), b.EstimatedFPR(); math.Abs(got-want) > 1e-12*want {
				t.Errorf("%v w=%d: EstimatedFPR = %g, the standard filter's is %g", s, w, got, want)
			}
			if got, want := f.ApproxCount(), b.ApproxCount(); math.Abs(got-want) > 1e-9*want {
				t.Errorf("%v w=%d: ApproxCount = %g, the standard filter's is %g", s, w, got, want)
			}
			if a := f.ApproxCount(); math.Abs(a-n)/n > 0.05 {
				t.Errorf("%v w=%d: ApproxCount = %g for %d keys", s, w, a, n)
			}
		}
	}
	f, _ := New(10, 1)
	for i := range 1000 {
		f.Add(key("full", i))
	}
	if f.FillRatio() != 1 || !math.IsInf(f.ApproxCount(), 1) || f.EstimatedFPR() != 1 {
		t.Errorf("full filter: fill %g, count %g, fpr %g", f.FillRatio(), f.ApproxCount(), f.EstimatedFPR())
	}
}

// TestToBloom: the standard filter answers exactly as the counting filter,
// for present and absent keys, after removals, for every width.
func TestToBloom(t *testing.T) {
	n := 100000
	if testing.Short() {
		n = 20000
	}
	present, absent := keys16(n, 11), keys16(n, 12)
	for _, w := range widths {
		for _, s := range []hashing.Scheme{hashing.Enhanced, hashing.PrimePartition} {
			f, err := NewWithEstimates(uint64(n), 0.01, WithCounterBits(w), WithScheme(s), WithSeed(77))
			if err != nil {
				t.Fatal(err)
			}
			f.AddBatch(present)
			for _, k := range present[:n/10] {
				if err := f.Remove(k); err != nil {
					t.Fatal(err)
				}
			}
			b := f.ToBloom()
			if b.M() != f.M() || b.K() != f.K() || b.Scheme() != f.Scheme() || b.Seed() != f.Seed() || b.N() != f.N() {
				t.Fatalf("w=%d %v: ToBloom parameters differ", w, s)
			}
			if b.Ones() != f.Nonzero() {
				t.Fatalf("w=%d %v: %d ones, %d nonzero counters", w, s, b.Ones(), f.Nonzero())
			}
			fp := 0
			for i := range n {
				for _, k := range [][]byte{present[i], absent[i]} {
					if got, want := b.Contains(k), f.Contains(k); got != want {
						t.Fatalf("w=%d %v: bloom.Contains = %v, counting.Contains = %v", w, s, got, want)
					}
				}
				if f.Contains(absent[i]) {
					fp++
				}
			}
			if fp == 0 {
				t.Errorf("w=%d %v: no false positive among %d absent keys; the absent half tests nothing", w, s, n)
			}
		}
	}
}

func TestToBloomCustom(t *testing.T) {
	f, _ := New(10, 2, WithIndexFunc(func(d hashing.Digest, i int) uint64 { return d.H1 + uint64(3*i) }))
	f.AddHash(hashing.Digest{H1: 2})
	b := f.ToBloom()
	if b == nil || b.Scheme() != hashing.Custom {
		t.Fatalf("ToBloom of a custom filter: %v", b)
	}
	for x := uint64(0); x < 10; x++ {
		d := hashing.Digest{H1: x}
		if b.ContainsHash(d) != f.ContainsHash(d) {
			t.Errorf("x=%d: bloom %v, counting %v", x, b.ContainsHash(d), f.ContainsHash(d))
		}
	}
}

func TestZeroAllocs(t *testing.T) {
	for _, s := range []hashing.Scheme{hashing.Enhanced, hashing.Double, hashing.Partition, hashing.Independent} {
		f, err := New(10000, 7, WithScheme(s))
		if err != nil {
			t.Fatal(err)
		}
		key := []byte("0123456789abcdef")
		keys := keys16(64, 1)
		out := make([]bool, 0, len(keys))
		f.AddBatch(keys)
		var sink uint64
		for name, fn := range map[string]func(){
			"Add":            func() { f.Add(key) },
			"AddString":      func() { f.AddString("k") },
			"Contains":       func() { sink += b2u(f.Contains(key)) },
			"ContainsString": func() { sink += b2u(f.ContainsString("k")) },
			"Count":          func() { sink += f.Count(key) },
			"Remove":         func() { f.Add(key); _ = f.Remove(key) },
			"RemoveAbsent":   func() { _ = f.RemoveString("never added, hopefully absent") },
			"ContainsBatch":  func() { out = f.ContainsBatch(keys, out) },
			"AddBatch":       func() { f.AddBatch(keys[:4]) },
		} {
			if a := testing.AllocsPerRun(100, fn); a != 0 {
				t.Errorf("%v %s: %v allocations per run, want 0", s, name, a)
			}
		}
		_ = sink
	}
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
