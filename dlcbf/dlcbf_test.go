package dlcbf

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/stats"
)

var variants = []Variant{Static, Dynamic, TwoSizes}

// digest returns the digest of random key j of a stream.
func digest(seed uint64, j int) hashing.Digest {
	x := seed + uint64(2*j)*0x9E3779B97F4A7C15
	return hashing.Digest{H1: splitmix(x), H2: splitmix(x + 0x9E3779B97F4A7C15)}
}

func splitmix(x uint64) uint64 {
	x += 0x9E3779B97F4A7C15
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9
	x = (x ^ (x >> 27)) * 0x94D049BB133111EB
	return x ^ (x >> 31)
}

// paperConfig is the 002 §III-C structure: 4 × 2048 buckets, 120 bits of
// cells per bucket (8 cells of a 14-bit remainder and a 1-bit counter).
func paperConfig(v Variant) Config {
	return Config{Variant: v, Subtables: 4, Buckets: 2048, Cells: 8, RemainderBits: 14, CounterBits: 1, BucketBits: 120}
}

func TestConfigErrors(t *testing.T) {
	cases := []struct {
		cfg   Config
		field string
	}{
		{Config{}, "Buckets"},
		{Config{Buckets: 1, Subtables: 17}, "Subtables"},
		{Config{Buckets: 1, Cells: 16}, "Cells"},
		{Config{Buckets: 1, RemainderBits: 33}, "RemainderBits"},
		{Config{Buckets: 1, CounterBits: 9}, "CounterBits"},
		{Config{Buckets: 1, CounterBits: -1}, "CounterBits"},
		{Config{Buckets: 1, Variant: Dynamic, CounterBits: -2}, "CounterBits"},
		{Config{Buckets: 1, Variant: 9}, "Variant"},
		{Config{Buckets: 1, Variant: Dynamic, BucketBits: 50}, "BucketBits"},
		{Config{Buckets: 1, Variant: TwoSizes, BucketBits: 5000}, "BucketBits"},
		{Config{Buckets: 1 << 41}, "Buckets"},
		{Config{Buckets: 1, Ties: 2}, "Ties"},
	}
	for _, c := range cases {
		_, err := New(c.cfg)
		if !errors.Is(err, ErrParam) || !strings.Contains(err.Error(), c.field) || !strings.HasPrefix(err.Error(), "dlcbf: ") {
			t.Errorf("New(%+v) = %v, want an ErrParam naming %s", c.cfg, err, c.field)
		}
	}
	if _, err := NewWithEstimates(0, 0.01, 0); !errors.Is(err, ErrParam) {
		t.Errorf("n = 0: %v", err)
	}
	if _, err := NewWithEstimates(10, 1.5, 0); !errors.Is(err, ErrParam) {
		t.Errorf("fpr = 1.5: %v", err)
	}
	if _, err := NewWithEstimates(10, 1e-12, 0); !errors.Is(err, ErrParam) {
		t.Errorf("fpr = 1e-12: %v", err)
	}
}

// The permutations are bijections of [B]×[2^r]: every true fingerprint maps
// to a distinct (bucket, remainder) in every subtable, also for B not a
// power of two.
func TestPermutationsAreBijections(t *testing.T) {
	for _, nb := range []uint64{1, 7, 64, 100} {
		f, err := New(Config{Buckets: nb, RemainderBits: 6, Subtables: 5})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < f.d; i++ {
			seen := map[[2]uint64]bool{}
			for b := uint64(0); b < nb; b++ {
				for r := uint64(0); r < 64; r++ {
					pos, rho := f.locate(i, b, r, 0)
					k := [2]uint64{pos, rho}
					if seen[k] {
						t.Fatalf("B = %d subtable %d: (%d, %d) collides", nb, i, b, r)
					}
					if pos < uint64(i)*nb*f.bbits || pos >= uint64(i+1)*nb*f.bbits || rho >= 64 {
						t.Fatalf("B = %d subtable %d: (%d, %d) → out of range (%d, %d)", nb, i, b, r, pos, rho)
					}
					seen[k] = true
				}
			}
		}
	}
}

// Known answers pin the fingerprint and the permutations (docs/FORMAT.md).
func TestKnownAnswers(t *testing.T) {
	f, err := New(paperConfig(Static))
	if err != nil {
		t.Fatal(err)
	}
	dg := hashing.SumString("bloomlab", 0)
	b, rr, z := f.fingerprint(dg)
	var got []string
	got = append(got, fmt.Sprintf("b=%d r=%d z=%#x", b, rr, z))
	for i := 0; i < 4; i++ {
		pos, rho := f.locate(i, b, rr, z)
		got = append(got, fmt.Sprintf("%d:%d/%#x", i, pos/f.bbits-uint64(i)*f.nb, rho&(1<<14-1)))
	}
	want := knownAnswers
	if g := strings.Join(got, " "); g != want {
		t.Errorf("known answers changed:\n got %s\nwant %s", g, want)
	}
	if k := permKey(0, 0); k != 0x91bc137d214edb20 {
		t.Errorf("permKey(0, 0) = %#x", k)
	}
}

const knownAnswers = "b=1303 r=9970 z=0x38be04270691c 0:51/0x10ed 1:1003/0x1450 2:1009/0x2f8c 3:1523/0x899"

// model is a multiset of key indices.
type model map[int]int

// TestNoFalseNegatives: random Add/Remove sequences, with repeated keys,
// keys sharing a true fingerprint, full buckets and saturated counters, in
// every variant: every key in the model is always found with at least its
// multiplicity, a refused Add or a Remove of an absent key changes nothing.
func TestNoFalseNegatives(t *testing.T) {
	steps := 60000
	if testing.Short() {
		steps = 15000
	}
	for _, v := range variants {
		for _, cfg := range []Config{
			{Variant: v, Subtables: 2, Buckets: 3, Cells: 4, RemainderBits: 3, CounterBits: 1},
			{Variant: v, Subtables: 4, Buckets: 16, Cells: 8, RemainderBits: 4, CounterBits: 2, Ties: TieHash},
			{Variant: v, Subtables: 3, Buckets: 5, Cells: 6, RemainderBits: 2, CounterBits: 1, BucketBits: 40},
			{Variant: v, Subtables: 1, Buckets: 1, Cells: 15, RemainderBits: 1, CounterBits: 1},
		} {
			if v == Static {
				cfg.BucketBits = 0
			}
			if v != Static && cfg.CounterBits == 2 {
				cfg.CounterBits = NoCounter // copies only
			}
			t.Run(fmt.Sprintf("%v/d%d-B%d-h%d-r%d-c%d", v, cfg.Subtables, cfg.Buckets, cfg.Cells, cfg.RemainderBits, cfg.CounterBits), func(t *testing.T) {
				propertyRun(t, cfg, steps)
			})
		}
	}
}

func propertyRun(t *testing.T, cfg Config, steps int) {
	f, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(uint64(cfg.Variant), cfg.Buckets))
	m := model{}
	var keys []int // present, with repeats
	const universe = 60
	// Keys 0..universe-1; key j and j+universe share H1 and the low H2
	// bits (the same true fingerprint), differing in z.
	dg := func(j int) hashing.Digest {
		base := digest(99, j%universe)
		if j >= universe {
			base.H2 ^= uint64(j/universe) << 40
		}
		return base
	}
	var full, absent int
	for s := 0; s < steps; s++ {
		switch op := rng.IntN(10); {
		case op < 5 || len(keys) == 0:
			j := rng.IntN(3 * universe)
			before := f.Clone()
			err := f.AddHash(dg(j))
			switch {
			case errors.Is(err, ErrFull):
				full++
				if !f.Equal(before) {
					t.Fatalf("step %d: refused Add changed the filter", s)
				}
			case err != nil:
				t.Fatal(err)
			default:
				m[j]++
				keys = append(keys, j)
			}
		case op < 9:
			i := rng.IntN(len(keys))
			j := keys[i]
			if err := f.RemoveHash(dg(j)); err != nil {
				t.Fatalf("step %d: Remove of present key %d: %v", s, j, err)
			}
			keys[i] = keys[len(keys)-1]
			keys = keys[:len(keys)-1]
			if m[j]--; m[j] == 0 {
				delete(m, j)
			}
		default:
			j := rng.IntN(3 * universe)
			if m[j] > 0 || f.ContainsHash(dg(j)) {
				continue
			}
			before := f.Clone()
			if err := f.RemoveHash(dg(j)); !errors.Is(err, ErrNotPresent) {
				t.Fatalf("step %d: Remove of absent key: %v", s, err)
			}
			absent++
			if !f.Equal(before) {
				t.Fatalf("step %d: failed Remove changed the filter", s)
			}
		}
		if f.N() != uint64(len(keys)) {
			t.Fatalf("step %d: N = %d, model holds %d", s, f.N(), len(keys))
		}
		if s%7 == 0 || s > steps-100 {
			for j, c := range m {
				if !f.ContainsHash(dg(j)) {
					t.Fatalf("step %d: FALSE NEGATIVE for key %d (multiplicity %d)", s, j, c)
				}
				if got := f.CountHash(dg(j)); got < uint64(c) {
					t.Fatalf("step %d: Count(%d) = %d < multiplicity %d", s, j, got, c)
				}
			}
		}
		if s%1000 == 0 {
			checkInvariants(t, f)
		}
	}
	if full == 0 {
		t.Logf("no bucket overflow occurred")
	}
	t.Logf("%d refused adds, %d removes of absent keys, %d keys at the end", full, absent, len(keys))
	// Round trip through the file format preserves everything.
	b, err := f.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var g Filter
	if err := g.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if !g.Equal(f) {
		t.Fatal("round trip changed the filter")
	}
}

// checkInvariants decodes every bucket and checks the encoding's rules.
func checkInvariants(t *testing.T, f *Filter) {
	t.Helper()
	if err := f.validate(); err != nil {
		t.Fatal(err)
	}
}

// TestStaticFPRate: the 002 §III-C dlCBF after 49,152 inserts; a million
// absent queries give a false-positive count inside the binomial acceptance
// region (alpha 1e-6) of the rate computed from the state, and that rate is
// within 2% of d·(n/dB)·2^−r = 24·2^−14.
func TestFPRates(t *testing.T) {
	const n, queries = 49152, 1_000_000
	for _, v := range variants {
		t.Run(v.String(), func(t *testing.T) {
			f, err := New(paperConfig(v))
			if err != nil {
				t.Fatal(err)
			}
			for j := 0; j < n; j++ {
				if err := f.AddHash(digest(7, j)); err != nil {
					t.Fatal(err)
				}
			}
			fp := 0
			for j := n; j < n+queries; j++ {
				if f.ContainsHash(digest(7, j)) {
					fp++
				}
			}
			p := f.EstimatedFPR()
			lo, hi := stats.BinomialQuantileBounds(queries, p, 1e-6)
			t.Logf("%v: %d false positives in %d, state rate %.6g, bounds [%d, %d]", v, fp, queries, p, lo, hi)
			if uint64(fp) < lo || uint64(fp) > hi {
				t.Errorf("%d false positives, want within [%d, %d]", fp, lo, hi)
			}
			if v == Static {
				if want := 24 * math.Ldexp(1, -14); math.Abs(p-want)/want > 0.02 {
					t.Errorf("state rate %g, want within 2%% of %g", p, want)
				}
			} else if p > 0.5*24*math.Ldexp(1, -14) {
				t.Errorf("%v: state rate %g is not below half the static rate", v, p)
			}
		})
	}
}

func TestHotPathsAllocateNothing(t *testing.T) {
	for _, v := range variants {
		f, err := New(paperConfig(v))
		if err != nil {
			t.Fatal(err)
		}
		key := []byte("a key")
		j := 0
		if a := testing.AllocsPerRun(200, func() {
			j++
			_ = f.AddHash(digest(3, j))
			_ = f.Add(key)
			_ = f.ContainsHash(digest(3, j+1))
			_ = f.Contains(key)
			_ = f.CountString("a key")
			_ = f.Remove(key)
			_ = f.RemoveHash(digest(3, j))
		}); a != 0 {
			t.Errorf("%v: %v allocations per run", v, a)
		}
	}
}

// TestChurnAllocatesNothing: the in-place paths a loaded filter takes
// (addCell, addTwo, freeCell, the static windows) allocate nothing either.
func TestChurnAllocatesNothing(t *testing.T) {
	for _, v := range variants {
		f, err := New(paperConfig(v))
		if err != nil {
			t.Fatal(err)
		}
		const n = 49152
		for j := range n {
			if err := f.AddHash(digest(13, j)); err != nil {
				t.Fatal(err)
			}
		}
		j := 0
		if a := testing.AllocsPerRun(2000, func() {
			_ = f.RemoveHash(digest(13, j))
			_ = f.AddHash(digest(13, j+n))
			_ = f.ContainsHash(digest(14, j))
			j++
		}); a != 0 {
			t.Errorf("%v: %v allocations per run", v, a)
		}
	}
}

func TestStringAndBytesAgree(t *testing.T) {
	f, _ := New(Config{Buckets: 64, Seed: 5})
	if err := f.AddString("x"); err != nil {
		t.Fatal(err)
	}
	if !f.Contains([]byte("x")) || f.Count([]byte("x")) != 1 || !f.ContainsHash(f.Digest([]byte("x"))) {
		t.Fatal("string and []byte forms disagree")
	}
	if err := f.RemoveString("x"); err != nil {
		t.Fatal(err)
	}
	if err := f.RemoveString("x"); !errors.Is(err, ErrNotPresent) {
		t.Fatalf("second remove: %v", err)
	}
}

// A key added more often than a counter holds takes further cells; when
// no cell is left, Add refuses and every copy is still counted.
func TestCounterOverflowTakesCells(t *testing.T) {
	for _, v := range variants {
		f, _ := New(Config{Variant: v, Subtables: 2, Buckets: 1, Cells: 3, RemainderBits: 8, CounterBits: 1})
		added := 0
		for {
			if err := f.AddString("k"); err != nil {
				if !errors.Is(err, ErrFull) {
					t.Fatal(err)
				}
				break
			}
			added++
		}
		if want := 6 * int(f.cmax); added != want {
			t.Errorf("%v: %d copies fit, want %d", v, added, want)
		}
		if c := f.CountString("k"); c != uint64(added) {
			t.Errorf("%v: Count = %d, want %d", v, c, added)
		}
		for i := 0; i < added; i++ {
			if !f.ContainsString("k") {
				t.Fatalf("%v: false negative after %d removes", v, i)
			}
			if err := f.RemoveString("k"); err != nil {
				t.Fatal(err)
			}
		}
		if f.ContainsString("k") || f.N() != 0 {
			t.Errorf("%v: not empty after removing every copy", v)
		}
	}
}

// Dynamic buckets: the remainder length follows the largest load so far
// and never grows back; two-size buckets give freed bits to new cells.
func TestRemainderLengths(t *testing.T) {
	f, _ := New(Config{Variant: Dynamic, Subtables: 1, Buckets: 1, Cells: 8, RemainderBits: 14, CounterBits: 1, BucketBits: 120})
	for j := 0; j < 7; j++ {
		if err := f.AddHash(digest(1, j)); err != nil {
			t.Fatal(err)
		}
	}
	h := f.RemainderHistogram()
	if h[120/7] != 7 { // ⌊120/7⌋ − 1 + 1
		t.Fatalf("dynamic, load 7: remainder lengths %v", nonzero(h))
	}
	for j := 0; j < 5; j++ {
		_ = f.RemoveHash(digest(1, j))
	}
	if h := f.RemainderHistogram(); h[17] != 2 || f.MaxLoadHistogram()[7] != 1 {
		t.Fatalf("dynamic after removes: %v, max loads %v", nonzero(h), f.MaxLoadHistogram())
	}

	g, _ := New(Config{Variant: TwoSizes, Subtables: 1, Buckets: 1, Cells: 8, RemainderBits: 14, CounterBits: 1, BucketBits: 120})
	for j := 0; j < 7; j++ {
		_ = g.AddHash(digest(1, j))
	}
	for j := 0; j < 3; j++ {
		_ = g.RemoveHash(digest(1, j))
	}
	_ = g.AddHash(digest(1, 100))
	got := nonzero(g.RemainderHistogram())
	// Four old cells keep their lengths, the new one takes the free bits:
	// 120 − (cells of 7 sharing 120) … at most two lengths.
	if len(got) > 2 {
		t.Fatalf("two-size bucket holds more than two lengths: %v", got)
	}
	if err := g.validate(); err != nil {
		t.Fatal(err)
	}
	t.Logf("two-size lengths after 7 adds, 3 removes, 1 add: %v", got)
}

func nonzero(h []uint64) map[int]uint64 {
	out := map[int]uint64{}
	for i, c := range h {
		if c != 0 {
			out[i] = c
		}
	}
	return out
}

func TestNewWithEstimates(t *testing.T) {
	for _, p := range []float64{0.01, 0.001, 0.0001} {
		f, err := NewWithEstimates(100000, p, 1)
		if err != nil {
			t.Fatal(err)
		}
		cfg := f.Config()
		if est := 24 * math.Ldexp(1, -cfg.RemainderBits); est > p || est*2 < p*0.99 {
			t.Errorf("fpr %v: r = %d gives %g", p, cfg.RemainderBits, est)
		}
		if f.Cells() < 100000*8/6 {
			t.Errorf("fpr %v: %d cells", p, f.Cells())
		}
		// Capacity is the design n (docs/API.md), not the number of cells.
		if f.Capacity() != 100000 {
			t.Errorf("fpr %v: capacity %d, want 100000", p, f.Capacity())
		}
	}
}

func TestHistograms(t *testing.T) {
	f, _ := New(paperConfig(Dynamic))
	for j := 0; j < 1000; j++ {
		_ = f.AddHash(digest(2, j))
	}
	lh, mh := f.LoadHistogram(), f.MaxLoadHistogram()
	var cells, buckets uint64
	for j, c := range lh {
		cells += uint64(j) * c
		buckets += c
	}
	if cells != 1000 || buckets != 8192 || !slices.Equal(lh, mh) {
		t.Fatalf("load %v, max load %v", lh, mh)
	}
	s, _ := New(paperConfig(Static))
	if s.MaxLoadHistogram() != nil {
		t.Fatal("static filter reports max loads")
	}
}

// Concurrent readers see every key (run with -race: reads share nothing
// mutable).
func TestConcurrentReaders(t *testing.T) {
	for _, v := range variants {
		f, _ := New(paperConfig(v))
		for j := 0; j < 20000; j++ {
			if err := f.AddHash(digest(5, j)); err != nil {
				t.Fatal(err)
			}
		}
		done := make(chan error, 4)
		for g := 0; g < 4; g++ {
			go func() {
				for j := g; j < 20000; j += 4 {
					if !f.ContainsHash(digest(5, j)) || f.CountHash(digest(5, j)) == 0 {
						done <- fmt.Errorf("%v: false negative for key %d", v, j)
						return
					}
				}
				done <- nil
			}()
		}
		for range 4 {
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
	}
}
