package scalable

import (
	"encoding/binary"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/theory"
)

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func key(i int) []byte {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:], uint64(i)*0x9E3779B97F4A7C15^0x5ca1ab1e)
	binary.LittleEndian.PutUint64(b[8:], uint64(i))
	return b[:]
}

var profiles = []Profile{Bloomlab, RedisBloom, Blocked}

// TestNoFalseNegatives: across many links, with repeats, every key added
// stays present, in both profiles and for expansions 1, 2 and 5.
func TestNoFalseNegatives(t *testing.T) {
	for _, p := range profiles {
		for _, s := range []uint32{1, 2, 5} {
			f := must(New(Config{Capacity: 50, FPR: 0.02, Expansion: s, Profile: p}))
			n := 20000
			if s == 1 {
				n = 1500 // 30 links; rates halving, k reaches 64 near 55 links
			}
			for i := 0; i < n; i++ {
				if _, err := f.Add(key(i)); err != nil {
					t.Fatal(err)
				}
				if i%7 == 0 {
					if present, err := f.Add(key(i / 2)); err != nil || !present {
						t.Fatalf("%v s=%d: repeat of key %d: present %v, %v", p, s, i/2, present, err)
					}
				}
			}
			for i := 0; i < n; i++ {
				if !f.Contains(key(i)) {
					t.Fatalf("%v s=%d: false negative for key %d", p, s, i)
				}
			}
			if f.Links() < 3 || f.N() > uint64(n) || f.N() < uint64(n)*9/10 {
				t.Errorf("%v s=%d: %d links, N = %d for %d keys", p, s, f.Links(), f.N(), n)
			}
		}
	}
}

// TestGrowth checks the chain's geometry: link i holds n0·s^i keys at rate
// ε(1 − r)·r^i, the links fill in order, each to exactly its capacity,
// and N is the sum of the links' counts.
func TestGrowth(t *testing.T) {
	for _, p := range profiles {
		for _, c := range []Config{
			{Capacity: 100, FPR: 0.01, Profile: p},
			{Capacity: 1000, FPR: 0.001, Expansion: 4, Profile: p},
			{Capacity: 7, FPR: 0.1, Expansion: 3, Ratio: 0.8, Profile: p},
		} {
			if p == RedisBloom && c.Ratio != 0 {
				continue
			}
			f := must(New(c))
			for i := 0; f.Links() < 5; i++ {
				if _, err := f.Add(key(i)); err != nil {
					t.Fatal(err)
				}
			}
			r := f.ratio
			st := f.Stats().Links
			capacity, sum := c.Capacity, uint64(0)
			for i, l := range st {
				want := c.FPR * (1 - r) * math.Pow(r, float64(i))
				if l.Capacity != capacity || math.Abs(l.Rate-want) > 1e-15*want {
					t.Errorf("%v %+v link %d: capacity %d rate %v, want %d %v", p, c, i, l.Capacity, l.Rate, capacity, want)
				}
				if i < len(st)-1 && l.Keys != l.Capacity || i == len(st)-1 && l.Keys != 1 {
					t.Errorf("%v link %d holds %d of %d", p, i, l.Keys, l.Capacity)
				}
				if p == Bloomlab && (l.M%64 != 0 || theory.FPExact(float64(l.M), float64(l.Capacity), l.K) > l.Rate) {
					t.Errorf("bloomlab link %d: m = %d, k = %d misses rate %v at capacity", i, l.M, l.K, l.Rate)
				}
				sum += l.Keys
				capacity *= uint64(f.growth)
			}
			if sum != f.N() || f.Capacity() != func() (s uint64) {
				for _, l := range st {
					s += l.Capacity
				}
				return
			}() {
				t.Errorf("%v: N %d, links hold %d", p, f.N(), sum)
			}
			if b := f.Stats().Bound; b > c.FPR || b < c.FPR*(1-math.Pow(r, 5))*(1-1e-12) {
				t.Errorf("%v: bound %v for target %v", p, b, c.FPR)
			}
			if math.Abs(f.Config().FPR-c.FPR) > 1e-15 {
				t.Errorf("%v: Config().FPR %v, want %v", p, f.Config().FPR, c.FPR)
			}
		}
	}
}

// TestRedisGeometry pins RedisBloom's link sizing against BF.INFO-visible
// numbers of the transcripts and bloom.c's formulas.
func TestRedisGeometry(t *testing.T) {
	for _, c := range []struct {
		entries uint64
		eps     float64
		bits    uint64
		k       int
	}{
		{100, 0.005, 1152, 8},          // 144 bytes (transcript "small", link 0)
		{200, 0.0025, 2496, 9},         // 312 bytes (link 1)
		{20, 0.01, 192, 7},             // 24 bytes ("ns")
		{200000, 0.00005, 4122624, 15}, // 515328 bytes ("big")
	} {
		g, err := redisInit(c.entries, c.eps, redisOptions)
		if err != nil || g.bits != c.bits || g.k != c.k || g.entries != c.entries || g.n2 != 0 {
			t.Errorf("%d at %v: %+v, %v; want %d bits, k = %d", c.entries, c.eps, g, err, c.bits, c.k)
		}
	}
	// Without NOROUND (chains from RedisBloom < 2.2): a power of two, and
	// the entries raised by what the rounding leaves room for.
	g, err := redisInit(100, 0.005, optForce64)
	bpe := redisBPE(0.005)
	wantEntries := uint64(100) + uint64(float64(uint64(2048-100*bpe))/bpe)
	if err != nil || g.n2 != 11 || g.bits != 2048 || g.entries != wantEntries {
		t.Errorf("power of two: %+v, %v (want n2 = 11, entries %d)", g, err, wantEntries)
	}
	if _, err := redisInit(1<<50, 0.01, redisOptions); !errors.Is(err, errCannotGrow) {
		t.Errorf("a 2^50-entry link: %v", err)
	}
}

func TestTestAndAddCounts(t *testing.T) {
	for _, p := range profiles {
		f := must(New(Config{Capacity: 1000, Profile: p}))
		news := 0
		for i := 0; i < 5000; i++ {
			present, err := f.Add(key(i % 3000))
			if err != nil {
				t.Fatal(err)
			}
			if i >= 3000 && !present {
				t.Fatalf("%v: repeat %d answered new", p, i)
			}
			if !present {
				news++
			}
		}
		if f.N() != uint64(news) || news > 3000 || news < 2950 {
			t.Errorf("%v: %d new answers, N = %d", p, news, f.N())
		}
	}
}

// TestNonScaling: a full non-scaling filter refuses a new key with
// ErrFull and stays exactly as it was, but answers a present key.
func TestNonScaling(t *testing.T) {
	for _, p := range profiles {
		f := must(New(Config{Capacity: 20, FPR: 0.01, NonScaling: true, Profile: p}))
		if got := f.Stats().Links[0].Rate; got != 0.01 {
			t.Errorf("%v: non-scaling link at rate %v, want the target 0.01", p, got)
		}
		i := 0
		for f.N() < 20 {
			if _, err := f.Add(key(i)); err != nil {
				t.Fatal(err)
			}
			i++
		}
		if !f.full() {
			t.Errorf("%v: not full at capacity", p)
		}
		before := f.Clone()
		for j := i; j < i+50; j++ {
			present, err := f.Add(key(j))
			if present {
				continue
			}
			if !errors.Is(err, ErrFull) {
				t.Fatalf("%v: new key into a full non-scaling filter: %v", p, err)
			}
		}
		if present, err := f.Add(key(0)); !present || err != nil {
			t.Errorf("%v: present key: %v, %v", p, present, err)
		}
		if !f.Equal(before) || f.Links() != 1 {
			t.Errorf("%v: refused adds changed the filter", p)
		}
		if info := f.RedisInfo(); info.Expansion != 0 {
			t.Errorf("%v: non-scaling expansion %d", p, info.Expansion)
		}
	}
}

// TestCannotGrow: a chain whose next link would exceed its memory budget
// refuses new keys with ErrFull and changes nothing, in both profiles.
// Links of one key at rates halving (expansion 1) grow by √2 per link, so
// without a budget the chain would reach 2^48-bit links after about 90.
// (Before links were sized for the pair floor, their k reached 65 after
// about 55 links and that stopped them.)
func TestCannotGrow(t *testing.T) {
	for _, p := range profiles {
		const budget = 1 << 12
		f := must(New(Config{Capacity: 1, FPR: 0.5, Expansion: 1, Profile: p, MaxBits: budget}))
		var err error
		for i := 0; i < 10000 && err == nil; i++ {
			_, err = f.Add(key(i))
		}
		if !errors.Is(err, ErrFull) || !strings.Contains(err.Error(), "budget") {
			t.Fatalf("%v: expected ErrFull for the budget, got %v", p, err)
		}
		if f.Bits() > budget {
			t.Errorf("%v: %d bits, budget %d", p, f.Bits(), budget)
		}
		before := f.Clone()
		if _, err := f.Add([]byte("another new key")); !errors.Is(err, ErrFull) || !f.Equal(before) {
			t.Errorf("%v: second refusal: %v, changed %v", p, err, !f.Equal(before))
		}
		if _, err := f.NextLinkBits(); !errors.Is(err, ErrFull) {
			t.Errorf("%v: NextLinkBits: %v", p, err)
		}
		// A larger budget lets it grow again.
		f.SetMaxBits(4 * budget)
		if _, err := f.Add([]byte("another new key")); err != nil || f.MaxBits() != 4*budget {
			t.Errorf("%v: after raising the budget: %v", p, err)
		}
		if last := f.Stats().Links[f.Links()-1]; last.K > hashing.MaxK {
			t.Errorf("%v: link with k = %d", p, last.K)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []Config{
		{FPR: 1}, {FPR: -0.1}, {FPR: math.NaN()}, {Ratio: 1}, {Ratio: -1}, {Profile: 4},
		{Profile: RedisBloom, Ratio: 0.25}, {Profile: RedisBloom, Seed: 1},
		{Capacity: 1 << 60, FPR: 0.01}, {FPR: math.Copysign(0, -1)}, {Ratio: math.Copysign(0, -1)},
		{Expansion: MaxExpansion + 1},
	} {
		if _, err := New(c); !errors.Is(err, ErrParam) {
			t.Errorf("New(%+v): %v", c, err)
		}
	}
	if _, err := NewRedisBloom(0.01, 0, 2, false); !errors.Is(err, ErrParam) {
		t.Errorf("capacity 0: %v", err)
	}
	if _, err := NewRedisBloom(math.Copysign(0, -1), 100, 2, false); !errors.Is(err, ErrParam) {
		t.Errorf("rate -0: %v", err)
	}
	if _, err := ParseProfile("redis"); !errors.Is(err, ErrParam) {
		t.Error("ParseProfile accepted redis")
	}
	for _, p := range profiles {
		if q, err := ParseProfile(p.String()); q != p || err != nil {
			t.Errorf("ParseProfile(%v) = %v, %v", p, q, err)
		}
	}
}

// TestZeroValue: the zero Filter is empty with no room in it.
func TestZeroValue(t *testing.T) {
	var f Filter
	if f.Contains([]byte("x")) || f.N() != 0 || f.Bits() != 0 || f.Capacity() != 0 || f.EstimatedFPR() != 0 || f.Links() != 0 || f.full() {
		t.Error("zero Filter is not empty")
	}
	if _, err := f.Add([]byte("x")); !errors.Is(err, ErrParam) {
		t.Errorf("Add: %v", err)
	}
	if _, err := f.WriteTo(new(discard)); !errors.Is(err, ErrParam) {
		t.Errorf("WriteTo: %v", err)
	}
	if _, err := f.MarshalBinary(); !errors.Is(err, ErrParam) {
		t.Errorf("MarshalBinary: %v", err)
	}
	if _, err := f.Dump(0); !errors.Is(err, ErrParam) {
		t.Errorf("Dump: %v", err)
	}
	g := must(New(Config{}))
	if err := f.Union(g); !errors.Is(err, ErrParam) {
		t.Errorf("Union: %v", err)
	}
	if err := g.Union(&f); !errors.Is(err, ErrParam) {
		t.Errorf("Union: %v", err)
	}
	if f.Equal(g) || !f.Equal(&Filter{}) {
		t.Error("Equal on zero values")
	}
	if c := f.Clone(); c.Links() != 0 {
		t.Error("Clone of the zero Filter has links")
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// TestUnion: chains from one Config combine whatever their lengths; the
// result holds every key of both, its counts add up, and mismatched
// chains are refused without change.
func TestUnion(t *testing.T) {
	for _, p := range profiles {
		c := Config{Capacity: 100, FPR: 0.01, Profile: p}
		a, b := must(New(c)), must(New(c))
		for i := 0; i < 150; i++ {
			must(a.Add(key(i)))
		}
		for i := 1000; i < 1900; i++ {
			must(b.Add(key(i)))
		}
		na, nb := a.N(), b.N()
		if err := a.Union(b); err != nil {
			t.Fatal(err)
		}
		if a.Links() != b.Links() || a.N() != na+nb {
			t.Errorf("%v: %d links, N = %d after union", p, a.Links(), a.N())
		}
		for _, r := range [][2]int{{0, 150}, {1000, 1900}} {
			for i := r[0]; i < r[1]; i++ {
				if !a.Contains(key(i)) {
					t.Fatalf("%v: union lost key %d", p, i)
				}
			}
		}
		sum := uint64(0)
		for _, l := range a.Stats().Links {
			sum += l.Keys
		}
		if sum != a.N() {
			t.Errorf("%v: link counts %d, N %d", p, sum, a.N())
		}
		if err := a.Union(a); err != nil {
			t.Errorf("self-union: %v", err)
		}
		for _, d := range []Config{
			{Capacity: 101, FPR: 0.01, Profile: p}, {Capacity: 100, FPR: 0.02, Profile: p},
			{Capacity: 100, FPR: 0.01, Expansion: 3, Profile: p}, {Capacity: 100, FPR: 0.01, NonScaling: true, Profile: p},
		} {
			o := must(New(d))
			before := a.Clone()
			if err := a.Union(o); !errors.Is(err, ErrIncompatible) || !a.Equal(before) {
				t.Errorf("%v: union with %+v: %v", p, d, err)
			}
		}
	}
	a := must(New(Config{}))
	b := must(New(Config{Profile: RedisBloom}))
	if err := a.Union(b); !errors.Is(err, ErrIncompatible) {
		t.Errorf("profiles: %v", err)
	}
	if err := a.Union(must(New(Config{Seed: 9}))); !errors.Is(err, ErrIncompatible) {
		t.Errorf("seeds: %v", err)
	}
}

// TestAllocs: Contains, Add of a present key and Add of a new key into a
// link with room allocate nothing; over 10^6 adds (a few links opened)
// the average is 0 allocations per add.
func TestAllocs(t *testing.T) {
	for _, p := range profiles {
		f := must(New(Config{Capacity: 1 << 20, Profile: p}))
		k := key(1)
		ds := []hashing.Digest{f.Digest(key(1)), f.Digest(key(2)), f.Digest(key(3))}
		i := 0
		for name, fn := range map[string]func(){
			"Contains":    func() { f.Contains(k) },
			"Add present": func() { f.Add(k) },
			"Add new":     func() { i++; f.Add(key(i)) },
			"Add":         func() { i++; f.Add(key(i)) },
			"Prefetch":    func() { f.Prefetch(ds, false); f.Prefetch(ds, true) },
		} {
			if a := testing.AllocsPerRun(1000, fn); a != 0 {
				t.Errorf("%v %s: %v allocs", p, name, a)
			}
		}
		n := 1000000
		if testing.Short() {
			n = 100000
		}
		g := must(New(Config{Capacity: 1000, Profile: p}))
		buf := make([]byte, 0, 20)
		j := 0
		a := testing.AllocsPerRun(n, func() {
			j++
			g.Add(strconv.AppendInt(buf[:0], int64(j), 10))
		})
		if a != 0 || g.Links() < 7 {
			t.Errorf("%v: %v allocs per add over %d adds (%d links)", p, a, n, g.Links())
		}
	}
}

// TestPrefetch: Prefetch changes no answer and no count, on chains of
// one and several links and on the zero Filter.
func TestPrefetch(t *testing.T) {
	var zero Filter
	zero.Prefetch([]hashing.Digest{{H1: 1, H2: 2}}, true)
	zero.Prefetch(nil, false)
	for _, p := range profiles {
		f := must(New(Config{Capacity: 100, Profile: p}))
		var keys [][]byte
		for i := 0; i < 1000; i++ {
			keys = append(keys, key(i))
		}
		for i := 0; i < 500; i++ {
			f.Add(keys[i])
		}
		before := make([]bool, len(keys))
		for i, k := range keys {
			before[i] = f.Contains(k)
		}
		n, links := f.N(), f.Links()
		var ds []hashing.Digest
		for _, k := range keys {
			ds = append(ds, f.Digest(k))
		}
		f.Prefetch(ds, false)
		f.Prefetch(ds, true)
		f.Prefetch(nil, true)
		for i, k := range keys {
			if f.Contains(k) != before[i] {
				t.Fatalf("%v: key %d's answer changed after Prefetch", p, i)
			}
		}
		if f.N() != n || f.Links() != links || links < 2 {
			t.Errorf("%v: N %d -> %d, links %d -> %d", p, n, f.N(), links, f.Links())
		}
	}
}

// TestNextLinkBits: NextLinkBits predicts the link the next growth
// allocates, 0 for a non-scaling chain, ErrFull when it cannot grow.
func TestNextLinkBits(t *testing.T) {
	for _, p := range profiles {
		f := must(New(Config{Capacity: 10, Profile: p}))
		for i := 0; f.Links() < 6; i++ {
			want, err := f.NextLinkBits()
			links := f.Links()
			must(f.Add(key(i)))
			if err != nil || f.Links() > links && f.Stats().Links[links].Bits != want {
				t.Fatalf("%v: NextLinkBits %d, %v; link %d", p, want, err, links)
			}
		}
		if b, err := must(New(Config{NonScaling: true, Profile: p})).NextLinkBits(); b != 0 || err != nil {
			t.Errorf("%v non-scaling: %d, %v", p, b, err)
		}
	}
	for _, p := range profiles {
		if _, err := New(Config{Capacity: 100000, Expansion: MaxExpansion + 1, Profile: p}); !errors.Is(err, ErrParam) {
			t.Errorf("%v: expansion %d: %v", p, MaxExpansion+1, err)
		}
		// A file or dump may record any expansion (as a crafted one
		// with 2,566,914,049 did, whose next link asked for 10 GB): a
		// bloomlab chain with more than MaxExpansion does not grow; the
		// RedisBloom one's link of 4·10^14 entries exceeds 2^48 bits.
		g := must(New(Config{Capacity: 100000, Profile: p}))
		g.growth = math.MaxUint32
		before := g.Clone()
		if _, err := g.NextLinkBits(); !errors.Is(err, ErrFull) {
			t.Errorf("%v: 4·10^14-entry link: %v", p, err)
		}
		var err error
		for i := 0; err == nil && i < 200000; i++ {
			_, err = g.Add(key(i))
		}
		if !errors.Is(err, ErrFull) || g.Links() != 1 || g.N() != 100000 || !g.Contains(key(0)) || before.Contains(key(0)) {
			t.Errorf("%v: adds past the first link: %v, %d links", p, err, g.Links())
		}
	}
}

// TestConfigReportsTheChain: Config gives back what made the chain (the
// defaults a zero field stood for, DefaultConfig's), also after a round
// trip through the file format (the budget excepted, which files do not
// store) and for a RedisBloom NONSCALING chain recording expansion 0;
// Stats and RedisInfo agree with the links.
func TestConfigReportsTheChain(t *testing.T) {
	if d := DefaultConfig(); d != (Config{Capacity: 100, FPR: 0.01, Expansion: 2, Ratio: 0.5, Profile: Bloomlab}) {
		t.Fatalf("DefaultConfig %+v", d)
	}
	var zero Filter
	if c := zero.Config(); c != (Config{}) {
		t.Errorf("zero Filter: Config %+v, want the zero Config", c)
	}
	if st := zero.Stats(); len(st.Links) != 0 || st.FPR != 0 || st.Formula != 0 || st.Growth != 0 || st.Bound != 0 {
		t.Errorf("zero Filter: Stats %+v", st)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-15*b }
	for _, c := range []Config{
		{MaxBits: 1 << 20},
		{Capacity: 1000, FPR: 0.001, Expansion: 4, Ratio: 0.8, Seed: 7},
		{Capacity: 50, FPR: 0.02, NonScaling: true, Profile: Blocked, Seed: 3},
		{Capacity: 500, Profile: RedisBloom},
	} {
		f := must(New(c))
		want := DefaultConfig()
		if c.Capacity != 0 {
			want.Capacity = c.Capacity
		}
		if c.FPR != 0 {
			want.FPR = c.FPR
		}
		if c.Expansion != 0 {
			want.Expansion = c.Expansion
		}
		if c.Ratio != 0 {
			want.Ratio = c.Ratio
		}
		if c.Profile != 0 {
			want.Profile = c.Profile
		}
		want.NonScaling, want.Seed, want.MaxBits = c.NonScaling, c.Seed, c.MaxBits
		got := f.Config()
		if !near(got.FPR, want.FPR) {
			t.Errorf("%+v: Config().FPR %v, want %v", c, got.FPR, want.FPR)
		}
		got.FPR = want.FPR
		if got != want {
			t.Errorf("%+v: Config %+v, want %+v", c, got, want)
		}
		for i := 0; i < 3000; i++ {
			if _, err := f.Add([]byte(strconv.Itoa(i))); err != nil && !errors.Is(err, ErrFull) {
				t.Fatal(err)
			}
		}
		var g Filter
		if err := g.UnmarshalBinary(must(f.MarshalBinary())); err != nil {
			t.Fatal(err)
		}
		want = f.Config()
		want.MaxBits = 0
		if got := g.Config(); got != want {
			t.Errorf("%+v: read back, Config %+v, want %+v", c, got, want)
		}
		st, info := f.Stats(), f.RedisInfo()
		if len(st.Links) != f.Links() || len(info.Links) != f.Links() || info.Filters != f.Links() || info.Items != f.N() {
			t.Fatalf("%+v: %d links, Stats %d, RedisInfo %d (%d)", c, f.Links(), len(st.Links), len(info.Links), info.Filters)
		}
		var bound float64
		for i, l := range st.Links {
			r := info.Links[i]
			if r.Bytes != l.Bits/8 || r.Bits != l.Bits || r.Hashes != l.K || r.Capacity != l.Capacity || r.Size != l.Keys || r.Ratio != l.Rate {
				t.Errorf("%+v link %d: RedisInfo %+v, Stats %+v", c, i, r, l)
			}
			bound += l.Rate
		}
		if st.FPR != f.EstimatedFPR() || st.Bound != bound || !(st.Formula > 0) || !(st.Growth >= st.Formula*(1-1e-12)) {
			t.Errorf("%+v: Stats FPR %v (EstimatedFPR %v), bound %v (Σ %v), formula %v, growth %v",
				c, st.FPR, f.EstimatedFPR(), st.Bound, bound, st.Formula, st.Growth)
		}
	}
	ns := must(NewRedisBloom(0.01, 10, 0, true))
	if c := ns.Config(); c.Expansion != 0 || !c.NonScaling || c.Capacity != 10 || c.FPR != 0.01 || c.Profile != RedisBloom {
		t.Errorf("NONSCALING RedisBloom chain: Config %+v", c)
	}
}
