package cuckoo

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/bloomlab/bloomlab/hashing"
)

func key(i int) []byte {
	var k [12]byte
	binary.LittleEndian.PutUint64(k[:], uint64(i)*0x9E3779B97F4A7C15)
	binary.LittleEndian.PutUint32(k[8:], uint32(i))
	return k[:]
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// configs covers every code path: plain buckets of one load (b·f ≤ 64),
// wide buckets (two halves), semi-sorted buckets with and without stored
// bits, sub-filters, and the RedisBloom profile with odd bucket sizes.
var configs = []struct {
	name string
	new  func() *Filter
}{
	{"b1f12", func() *Filter {
		return must(New(Config{Buckets: 64, FingerprintBits: 12, BucketSize: 1, MaxKicks: 50}))
	}},
	{"b2f9", func() *Filter { return must(New(Config{Buckets: 64, FingerprintBits: 9, BucketSize: 2})) }},
	{"b4f4", func() *Filter { return must(New(Config{Buckets: 64, FingerprintBits: 4})) }},
	{"b4f16", func() *Filter { return must(New(Config{Buckets: 64, FingerprintBits: 16, Seed: 9})) }},
	{"b4f23-wide", func() *Filter { return must(New(Config{Buckets: 64, FingerprintBits: 23})) }},
	{"b8f13-wide", func() *Filter { return must(New(Config{Buckets: 32, FingerprintBits: 13, BucketSize: 8})) }},
	{"b8f8", func() *Filter { return must(New(Config{Buckets: 32, FingerprintBits: 8, BucketSize: 8})) }},
	{"semi-f4", func() *Filter { return must(New(Config{Buckets: 64, FingerprintBits: 4, Semisort: true})) }},
	{"semi-f13", func() *Filter { return must(New(Config{Buckets: 64, FingerprintBits: 13, Semisort: true})) }},
	{"semi-f31", func() *Filter { return must(New(Config{Buckets: 64, FingerprintBits: 31, Semisort: true})) }},
	{"grow-e1", func() *Filter { return must(New(Config{Buckets: 16, FingerprintBits: 10, Expansion: 1, MaxKicks: 20})) }},
	{"grow-e2-semi", func() *Filter {
		return must(New(Config{Buckets: 16, FingerprintBits: 10, Expansion: 2, Semisort: true, MaxKicks: 30}))
	}},
	{"grow-e4-b2", func() *Filter { return must(New(Config{Buckets: 8, FingerprintBits: 7, Expansion: 4, BucketSize: 2})) }},
	{"redis-b2", func() *Filter { return must(NewRedisBloom(128, 2, 20, 0)) }},
	{"redis-b3-e2", func() *Filter { return must(NewRedisBloom(48, 3, 5, 2)) }},
	{"redis-b1-e1", func() *Filter { return must(NewRedisBloom(32, 1, 1, 1)) }},
	{"redis-b4-e0", func() *Filter { return must(NewRedisBloom(256, 4, 500, 0)) }},
}

// TestNoFalseNegatives is the property of the package doc: under random
// sequences of adds (some repeated), unique adds and deletes of keys that
// were added, at and past full load, every key added more often than
// deleted is present after every operation; an add that fails leaves the
// filter exactly as it was; N is the number of copies held.
func TestNoFalseNegatives(t *testing.T) {
	ops := 6000
	if testing.Short() {
		ops = 2000
	}
	for _, c := range configs {
		for seed := uint64(1); seed <= 3; seed++ {
			t.Run(fmt.Sprintf("%s/seed%d", c.name, seed), func(t *testing.T) {
				f := c.new()
				r := rand.New(rand.NewPCG(seed, 7))
				held := map[int]int{} // key → copies
				var live []int
				failed, added, deleted := 0, 0, 0
				for op := 0; op < ops; op++ {
					switch x := r.IntN(10); {
					case x < 6 || len(live) == 0: // add a new key or a copy
						k := r.IntN(3 * ops)
						if x == 0 && len(live) > 0 {
							k = live[r.IntN(len(live))]
						}
						before := f.Clone()
						var err error
						if x == 1 {
							var ok bool
							ok, err = f.AddUnique(key(k))
							if err == nil && !ok {
								if !before.Equal(f) {
									t.Fatal("AddUnique of a present key changed the filter")
								}
								continue
							}
						} else {
							err = f.Add(key(k))
						}
						if err != nil {
							failed++
							if !errors.Is(err, ErrFull) || !before.Equal(f) {
								t.Fatalf("op %d: failed add (%v) changed the filter", op, err)
							}
							continue
						}
						added++
						if held[k] == 0 {
							live = append(live, k)
						}
						held[k]++
					default: // delete a key that was added
						i := r.IntN(len(live))
						k := live[i]
						if !f.Delete(key(k)) {
							t.Fatalf("op %d: delete of held key %d found nothing", op, k)
						}
						deleted++
						if held[k]--; held[k] == 0 {
							live[i] = live[len(live)-1]
							live = live[:len(live)-1]
							delete(held, k)
						}
					}
					if op%97 == 0 || op == ops-1 {
						copies := 0
						for k, n := range held {
							copies += n
							if !f.Contains(key(k)) {
								t.Fatalf("op %d: false negative for key %d (held %d times)", op, k, n)
							}
							if got := f.Count(key(k)); got < uint64(n) {
								t.Fatalf("op %d: Count(%d) = %d < %d copies", op, k, got, n)
							}
						}
						if f.N() != uint64(copies) {
							t.Fatalf("op %d: N = %d, %d copies held", op, f.N(), copies)
						}
					}
				}
				if f.profile != RedisBloom && f.expansion == 0 && failed == 0 {
					t.Errorf("no insert failed: the test did not reach full load (load %.3f)", f.Info().LoadFactor)
				}
				// Compaction and a round trip keep every key.
				f.Compact()
				g := must(unmarshal(must(f.MarshalBinary())))
				for k := range held {
					if !f.Contains(key(k)) || !g.Contains(key(k)) {
						t.Fatalf("false negative for key %d after Compact / round trip", k)
					}
				}
				t.Logf("%d adds, %d refused, %d deletes; %d sub-filters, load %.3f", added, failed, deleted, f.Info().SubFilters, f.Info().LoadFactor)
			})
		}
	}
}

// TestFullLoadRelocationsFail: a non-growing filter filled until inserts
// fail, then offered many more keys, each of which runs the whole walk of
// MaxKicks relocations and undoes it: the filter never changes and every
// key stays present.
func TestFullLoadRelocationsFail(t *testing.T) {
	for _, c := range []Config{
		{Buckets: 1 << 10, FingerprintBits: 12},
		{Buckets: 1 << 10, FingerprintBits: 12, Semisort: true},
		{Buckets: 1 << 10, FingerprintBits: 20},
		{Buckets: 1 << 9, FingerprintBits: 12, BucketSize: 8},
		{Buckets: 1 << 11, FingerprintBits: 6, BucketSize: 2},
	} {
		f := must(New(c))
		n := 0
		for ; f.Add(key(n)) == nil; n++ {
		}
		held := n
		snapshot := f.Clone()
		refused := 0
		var later []int
		for i := n + 1; i < n+2000; i++ {
			if err := f.Add(key(i)); err != nil {
				refused++
				if !errors.Is(err, ErrFull) || errors.Is(err, ErrCannotGrow) {
					t.Fatalf("%+v: %v", c, err)
				}
				if !f.Equal(snapshot) {
					t.Fatalf("%+v: a refused insert changed the table", c)
				}
				continue
			}
			snapshot = f.Clone()
			later = append(later, i)
		}
		for i := 0; i < held; i++ {
			if !f.Contains(key(i)) {
				t.Fatalf("%+v: key %d lost", c, i)
			}
		}
		for _, i := range later {
			if !f.Contains(key(i)) {
				t.Fatalf("%+v: key %d lost", c, i)
			}
		}
		if refused < 1000 {
			t.Errorf("%+v: only %d of 1999 refused at load %.3f", c, refused, f.Info().LoadFactor)
		}
		t.Logf("%+v: first failure after %d keys (load %.4f), %d refused after", c, n, f.Info().LoadFactor, refused)
	}
}

// TestAllocs: the hot paths allocate nothing (the first relocation walk
// allocates its scratch once; AllocsPerRun's warm-up run takes it).
func TestAllocs(t *testing.T) {
	for _, c := range configs {
		f := c.new()
		i := 0
		d := f.Hash(key(1))
		for _, op := range []struct {
			name string
			fn   func()
		}{
			{"Add+Delete", func() { i++; _ = f.Add(key(i)); f.Delete(key(i)) }},
			{"Contains", func() { f.Contains(key(7)) }},
			{"ContainsHash", func() { f.ContainsHash(d) }},
			{"Count", func() { f.Count(key(7)) }},
			{"AddHash", func() { _ = f.AddHash(d); f.DeleteHash(d) }},
			{"AddHashReserve", func() { _ = tryAddHash(f, d); f.DeleteHash(d) }},
		} {
			if a := testing.AllocsPerRun(200, op.fn); a != 0 {
				t.Errorf("%s: %s allocates %v per call", c.name, op.name, a)
			}
		}
	}
}

// TestAddHashReserve: AddHashReserve adds as AddHash does, without
// calling reserve, while the key finds room; where Add would grow it
// calls reserve once with the bits of the next sub-filter, and a refusal
// is returned as it is, with nothing changed (a filter that may not grow
// answers ErrFull as Add does, without asking); accepted, the filter grows
// by exactly those bits and takes the key. Replaying the same keys with
// Add alone gives an equal filter.
func TestAddHashReserve(t *testing.T) {
	for _, c := range configs {
		f, plain := c.new(), c.new()
		grown := 0
		for i := 0; i < 3000 && grown < 3; i++ {
			d := f.Hash(key(i))
			before := f.Clone()
			var asked []uint64
			err := f.AddHashReserve(d, func(bits uint64) error { asked = append(asked, bits); return errWouldGrow })
			switch {
			case err == nil:
				if len(asked) != 0 {
					t.Fatalf("%s: key %d: reserve called (%v) for a key that found room", c.name, i, asked)
				}
			case errors.Is(err, errWouldGrow):
				if f.Info().Expansion == 0 || !f.Equal(before) || len(asked) != 1 {
					t.Fatalf("%s: key %d: a refused reservation from a filter of expansion %d, a change, or %d calls", c.name, i, f.Info().Expansion, len(asked))
				}
				next, nerr := f.nextSubFilterBits()
				if nerr != nil || asked[0] != next {
					t.Fatalf("%s: key %d: reserve asked for %d bits, the next sub-filter has %d (%v)", c.name, i, asked[0], next, nerr)
				}
				bits := f.Bits()
				asked = asked[:0]
				if err := f.AddHashReserve(d, func(bits uint64) error { asked = append(asked, bits); return nil }); err != nil {
					t.Fatalf("%s: key %d: add with the reservation accepted: %v", c.name, i, err)
				}
				if len(asked) != 1 || f.Bits() != bits+asked[0] || f.Info().SubFilters != before.Info().SubFilters+1 {
					t.Fatalf("%s: the growth took %d bits, reserve was asked for %v", c.name, f.Bits()-bits, asked)
				}
				grown++
			case errors.Is(err, ErrFull):
				if f.Info().Expansion != 0 || !f.Equal(before) || len(asked) != 0 {
					t.Fatalf("%s: key %d: %v from a filter of expansion %d, a change, or reserve called", c.name, i, err, f.Info().Expansion)
				}
				continue
			default:
				t.Fatalf("%s: key %d: %v", c.name, i, err)
			}
			if err := plain.Add(key(i)); err != nil {
				t.Fatalf("%s: key %d: Add refused what AddHashReserve took: %v", c.name, i, err)
			}
			if !f.Contains(key(i)) {
				t.Fatalf("%s: key %d absent after its add", c.name, i)
			}
		}
		if !f.Equal(plain) {
			t.Fatalf("%s: AddHashReserve built another filter than Add", c.name)
		}
		if f.Info().Expansion != 0 && grown == 0 {
			t.Fatalf("%s: never grew", c.name)
		}
	}
}

// errWouldGrow is the reservation refusal of tryAddHash.
var errWouldGrow = errors.New("the key needs a new sub-filter")

// tryAddHash is AddHash without growth: AddHashReserve with every
// reservation refused (errWouldGrow).
func tryAddHash(f *Filter, d hashing.Digest) error {
	return f.AddHashReserve(d, func(uint64) error { return errWouldGrow })
}

func TestCount(t *testing.T) {
	for _, c := range configs {
		f := c.new()
		copies := min(3, 2*f.Info().BucketSize) // a key's copies share its 2b slots
		for i := 0; i < copies; i++ {
			if err := f.Add([]byte("x")); err != nil {
				t.Fatal(err)
			}
			if got := f.Count([]byte("x")); got < uint64(i+1) {
				t.Fatalf("%s: Count after %d adds = %d", c.name, i+1, got)
			}
		}
		for i := copies; i > 0; i-- {
			if !f.Delete([]byte("x")) {
				t.Fatalf("%s: delete %d failed", c.name, i)
			}
		}
		if f.Count([]byte("x")) != 0 || f.Contains([]byte("x")) || f.N() != 0 || f.Info().Deletes != uint64(copies) && f.profile == Bloomlab {
			t.Fatalf("%s: after deleting every copy: count %d, contains %v, N %d, deletes %d", c.name, f.Count([]byte("x")), f.Contains([]byte("x")), f.N(), f.Info().Deletes)
		}
		if f.Delete([]byte("x")) {
			t.Fatalf("%s: deleted an absent key", c.name)
		}
		if err := f.Remove([]byte("x")); !errors.Is(err, ErrNotPresent) {
			t.Fatalf("%s: Remove of an absent key: %v", c.name, err)
		}
	}
}

// TestHashForms: the string and pre-hashed forms agree with []byte.
func TestHashForms(t *testing.T) {
	for _, c := range configs {
		f := c.new()
		_ = f.AddString("abc")
		if !f.Contains([]byte("abc")) || !f.ContainsString("abc") || !f.ContainsHash(f.hashString("abc")) || f.Hash([]byte("abc")) != f.hashString("abc") {
			t.Fatalf("%s: forms disagree", c.name)
		}
		if f.profile == RedisBloom && f.Hash([]byte("abc")).H1 != hashing.MurmurHash64A([]byte("abc"), 0) {
			t.Fatal("RedisBloom hash is not MurmurHash64A seed 0")
		}
	}
}

// TestKnownAnswers pins the bloomlab profile's hashing (docs/FORMAT.md,
// kind 9) against the formulas evaluated with big integers, and two
// literal answers.
func TestKnownAnswers(t *testing.T) {
	mulHi := func(a, b uint64) uint64 {
		var x big.Int
		x.Mul(new(big.Int).SetUint64(a), new(big.Int).SetUint64(b))
		return x.Rsh(&x, 64).Uint64()
	}
	for _, m := range []uint64{1, 64, 1 << 20, 17 << 13, 31 << 20} {
		for _, fb := range []int{4, 9, 16, 32} {
			f := must(New(Config{Buckets: m, FingerprintBits: fb, Seed: 42}))
			s := &f.subs[0]
			j := bits.TrailingZeros64(m)
			for _, k := range []string{"", "a", "hello, cuckoo", "key-123456789"} {
				d := hashing.Sum([]byte(k), 42)
				fp := mulHi(d.H2, 1<<fb-1) + 1
				i1 := mulHi(d.H1, m)
				i2 := i1
				if j > 0 {
					i2 = i1 ^ (fp*0x9E3779B97F4A7C15)>>(64-j)
				}
				if f.fingerprint(d.H2) != fp || s.index(d.H1) != i1 || s.alt(i1, fp) != i2 || s.alt(i2, fp) != i1 || i2 >= m || i2>>j != i1>>j {
					t.Fatalf("m=%d f=%d key %q: got (%d, %d, %d), want (%d, %d, %d)", m, fb, k, f.fingerprint(d.H2), s.index(d.H1), s.alt(i1, fp), fp, i1, i2)
				}
			}
		}
	}
	f := must(New(Config{Buckets: 1 << 20, FingerprintBits: 12, Seed: 1}))
	d := f.Hash([]byte("cuckoo"))
	fp, i1 := f.fingerprint(d.H2), f.subs[0].index(d.H1)
	got := fmt.Sprint(fp, i1, f.subs[0].alt(i1, fp))
	if want := "333 475966 762283"; got != want {
		t.Errorf("key \"cuckoo\", seed 1, 2^20 buckets, f = 12: (fp, i1, i2) = %s, want %s", got, want)
	}
}

// TestInfo: Info's Config makes, with New, an empty filter of the same
// parameters (Equal to the filter cleared, with Info's Config again, and
// Merge takes the filter into it), for a filter grown to several
// sub-filters and for a RedisBloom filter loaded from chunks, whose
// capacity is its first sub-filter's slots; the counts are those the
// filter holds.
func TestInfo(t *testing.T) {
	for _, c := range configs {
		f := c.new()
		for i := 0; i < 300; i++ {
			if f.Add(key(i)) != nil {
				break
			}
		}
		f.Delete(key(0))
		check := func(name string, f *Filter) {
			in := f.Info()
			g, err := New(in.Config)
			if err != nil {
				t.Fatalf("%s: New(Info().Config) %+v: %v", name, in.Config, err)
			}
			cleared := f.Clone()
			cleared.Clear()
			if g.Info().Config != in.Config || !g.Equal(cleared) {
				t.Errorf("%s: New(Info().Config) has %+v, want %+v, or differs from the filter cleared", name, g.Info().Config, in.Config)
			}
			if err := g.Merge(f); err != nil {
				t.Errorf("%s: Merge into New(Info().Config): %v", name, err)
			}
			var slots uint64
			for i := range f.subs {
				slots += f.subs[i].m * uint64(f.lay.b)
			}
			if in.SubFilters != len(f.subs) || in.Slots != slots || in.N != f.N() || in.Deletes != f.deletes ||
				in.LoadFactor != float64(f.N())/float64(slots) || in.DefaultMaxBits != f.defaultMaxBits() || in.FPR != 0 || in.MaxBits != 0 {
				t.Errorf("%s: Info %+v", name, in)
			}
		}
		check(c.name, f)
		if f.profile == RedisBloom {
			chunks, err := f.Dump(0)
			if err != nil {
				t.Fatal(err)
			}
			g := must(loadChunks(chunks))
			if g.Info().Capacity != g.Info().Buckets*uint64(g.Info().BucketSize) {
				t.Errorf("%s: loaded from chunks: capacity %d, want the first sub-filter's slots", c.name, g.Info().Capacity)
			}
			check(c.name+" from chunks", g)
		}
	}
	if _, err := New(Config{Profile: RedisBloom, Capacity: 1000, Buckets: 256}); !errors.Is(err, ErrParam) {
		t.Errorf("RedisBloom Buckets other than Capacity's: %v", err)
	}
}
