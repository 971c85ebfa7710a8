package bitvec

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/filtertest"
	"github.com/bloomlab/bloomlab/internal/format"
	"github.com/bloomlab/bloomlab/internal/kind"
)

func digests(n int, seed uint64) []hashing.Digest {
	r := rand.New(rand.NewPCG(seed, 1))
	ds := make([]hashing.Digest, n)
	for i := range ds {
		ds[i] = hashing.Digest{H1: r.Uint64(), H2: r.Uint64()}
	}
	return ds
}

// TestProbeAgreesWithPositions: the inline probe sequence is exactly the
// positions the Indexer computes, for every double-hashing scheme and for
// sizes around powers of two and near 2^48 (where the running sum is
// largest).
func TestProbeAgreesWithPositions(t *testing.T) {
	var buf [hashing.MaxK]uint64
	for _, s := range []hashing.Scheme{hashing.Double, hashing.Enhanced, hashing.ExtendedSquare, hashing.ExtendedCube} {
		for _, m := range []uint64{1, 2, 3, 64, 1000, 1 << 20, 1<<20 + 1, hashing.MaxM - 1, hashing.MaxM} {
			for _, k := range []int{1, 3, 4, 7, 8, 64} {
				ix, err := hashing.NewIndexer(s, m, k)
				if err != nil {
					t.Fatal(err)
				}
				for _, d := range digests(50, m^uint64(k)) {
					want := ix.Positions(d, buf[:])
					p := NewProbe(ix, d)
					for i, o := range ix.Offsets() {
						if got := p.At(o); got != want[i] {
							t.Fatalf("%v m=%d k=%d: probe %d = %d, Positions says %d", s, m, k, i, got, want[i])
						}
						p = p.Next()
					}
				}
			}
		}
	}
}

// TestProbeScale: the scaled sequence yields w times each position, for
// every double-hashing scheme and width, up to w·m = 2^48 (the largest
// running sum).
func TestProbeScale(t *testing.T) {
	var buf [hashing.MaxK]uint64
	for _, s := range []hashing.Scheme{hashing.Double, hashing.Enhanced, hashing.ExtendedSquare, hashing.ExtendedCube} {
		for _, w := range []uint64{1, 2, 4, 8, 16, 32} {
			for _, m := range []uint64{1, 5, 1000, 1<<20 + 7, hashing.MaxM / w} {
				ix, err := hashing.NewIndexer(s, m, 64)
				if err != nil {
					t.Fatal(err)
				}
				offw, recip := ScaledOffsets(ix, w)
				for _, d := range digests(20, m*w) {
					want := ix.Positions(d, buf[:])
					p := NewProbe(ix, d).Scale(w, recip)
					for i, o := range offw {
						if got := p.At(o); got != w*want[i] {
							t.Fatalf("%v w=%d m=%d: scaled probe %d = %d, want %d·%d", s, w, m, i, got, w, want[i])
						}
						p = p.Next()
					}
				}
			}
		}
	}
	ix, _ := hashing.NewIndexer(hashing.Independent, 100, 3)
	if off, r := ScaledOffsets(ix, 4); off != nil || r != 0 {
		t.Error("ScaledOffsets of a scheme that is not double hashing")
	}
}

// TestKeyOps: SetKey and SetKeyAtomic set exactly the positions of the
// key, HasKey finds every key set (no false negatives) and agrees with a
// test of the positions one by one, for every scheme.
func TestKeyOps(t *testing.T) {
	var buf [hashing.MaxK]uint64
	for _, s := range hashing.Schemes() {
		for _, k := range []int{1, 3, 4, 5, 8, 9} {
			m := hashing.PartitionSize(s, 3000, k)
			ix, err := hashing.NewIndexer(s, m, k)
			if err != nil {
				t.Fatal(err)
			}
			a, b := New(m), New(m)
			ds := digests(200, uint64(k))
			for i, d := range ds[:100] {
				if i%2 == 0 {
					a.SetKey(ix, d)
					b.SetKeyAtomic(ix, d)
				} else {
					a.SetKeyAtomic(ix, d)
					b.SetKey(ix, d)
				}
			}
			if !a.Equal(b) {
				t.Fatalf("%v k=%d: SetKey and SetKeyAtomic set different bits", s, k)
			}
			want := New(m)
			for _, d := range ds[:100] {
				for _, p := range ix.Positions(d, buf[:]) {
					want.Set(p)
				}
			}
			if !a.Equal(want) || !a.TailClear(m) {
				t.Fatalf("%v k=%d: SetKey set other bits than the key's positions", s, k)
			}
			for i, d := range ds {
				all := true
				for _, p := range ix.Positions(d, buf[:]) {
					all = all && a.Has(p)
				}
				if got := a.HasKey(ix, d); got != all || i < 100 && !got {
					t.Fatalf("%v k=%d key %d: HasKey = %v, positions say %v", s, k, i, got, all)
				}
			}
		}
	}
}

func TestVec(t *testing.T) {
	const m = 1000
	v := New(m)
	if len(v) != 16 || Words(m) != 16 || Words(0) != 0 || Words(64) != 1 || Words(65) != 2 {
		t.Fatal("Words wrong")
	}
	set := map[uint64]bool{}
	r := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		p := r.Uint64N(m)
		v.Set(p)
		set[p] = true
	}
	if v.Ones() != uint64(len(set)) {
		t.Fatalf("Ones = %d, want %d", v.Ones(), len(set))
	}
	for range 200 {
		lo := r.Uint64N(m)
		hi := lo + r.Uint64N(m-lo+1)
		want := uint64(0)
		for p := range set {
			if p >= lo && p < hi {
				want++
			}
		}
		if got := v.OnesIn(lo, hi); got != want {
			t.Fatalf("OnesIn(%d, %d) = %d, want %d", lo, hi, got, want)
		}
	}
	c := v.Clone()
	if !c.Equal(v) || &c[0] == &v[0] {
		t.Fatal("Clone not an equal, independent copy")
	}
	u := New(m)
	u.Set(999)
	u.Set(3)
	or, and := v.Clone(), v.Clone()
	or.Or(u)
	and.And(u)
	for p := range uint64(m) {
		if or.Has(p) != (v.Has(p) || u.Has(p)) || and.Has(p) != (v.Has(p) && u.Has(p)) {
			t.Fatalf("Or/And wrong at bit %d", p)
		}
	}
	if !v.TailClear(m) {
		t.Fatal("TailClear false for a vector with no bit past m")
	}
	v[len(v)-1] |= 1 << 63
	if v.TailClear(m) || !v.TailClear(1024) {
		t.Fatal("TailClear misses a bit past m")
	}
	v.Clear()
	if v.Ones() != 0 || c.Ones() == 0 {
		t.Fatal("Clear wrong, or the clone shares storage")
	}
	var zero Vec
	if zero.Ones() != 0 || zero.OnesIn(0, 0) != 0 || zero.Clone() != nil || !zero.Equal(nil) || zero.Equal(u) || !zero.TailClear(0) {
		t.Fatal("nil Vec is not an empty vector")
	}
}

// TestEncode: Encode writes the words in order as little-endian payload,
// chunk boundaries included.
func TestEncode(t *testing.T) {
	for _, n := range []int{0, 1, encodeChunk - 1, encodeChunk, encodeChunk + 1, 3*encodeChunk + 5} {
		v := make(Vec, n)
		for i := range v {
			v[i] = uint64(i)*0x9E3779B97F4A7C15 + 1
		}
		var a, b bytes.Buffer
		ea, eb := format.NewEncoder(&a), format.NewEncoder(&b)
		h := format.Header{Kind: format.KindBloom, Scheme: 1, PayloadLen: uint64(n) * 8}
		ea.Begin(h, nil)
		eb.Begin(h, nil)
		v.Encode(ea)
		eb.Words(v)
		_, erra := ea.Close()
		_, errb := eb.Close()
		if erra != nil || errb != nil || !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Fatalf("n=%d: Encode differs from Encoder.Words (%v, %v)", n, erra, errb)
		}
	}
}

func TestNoAllocs(t *testing.T) {
	var s string
	for _, sc := range []hashing.Scheme{hashing.Enhanced, hashing.Independent} {
		ix, _ := hashing.NewIndexer(sc, 1<<16, 7)
		v := New(1 << 16)
		d := digests(1, 1)[0]
		var e = format.NewEncoder(&bytes.Buffer{})
		e.Begin(format.Header{PayloadLen: 1 << 40}, nil)
		for name, fn := range map[string]func(){
			"SetKey":       func() { v.SetKey(ix, d) },
			"SetKeyAtomic": func() { v.SetKeyAtomic(ix, d) },
			"HasKey":       func() { _ = v.HasKey(ix, d) },
			"Ones":         func() { _ = v.Ones() },
			"OnesIn":       func() { _ = v.OnesIn(3, 60000) },
			"Or":           func() { v.Or(v) },
			"Equal":        func() { _ = v.Equal(v) },
			"Encode":       func() { v.Encode(e) },
		} {
			s = sc.String() + " " + name
			if a := testing.AllocsPerRun(20, fn); a != 0 {
				t.Errorf("%s: %v allocs", s, a)
			}
		}
	}
}

// TestInlining: the hot loops (HasKey, SetKey, counting's probe loops)
// assume that these helpers cost no call.
func TestInlining(t *testing.T) {
	filtertest.Inlinable(t, "github.com/bloomlab/bloomlab/internal/bitvec",
		"NewProbe", "Probe.At", "Probe.Next", "Probe.Scale", "Vec.Set", "Vec.SetAtomic", "Vec.Has", "Vec.bit", "Words")
	filtertest.Inlinable(t, "github.com/bloomlab/bloomlab/hashing",
		"ModSmall", "Reduce", "(*Indexer).Offsets", "(*Indexer).start", "Sum", "SumString")
}

func TestCompatible(t *testing.T) {
	ix := func(s hashing.Scheme, m uint64, k int) *hashing.Indexer {
		x, err := hashing.NewIndexer(s, m, k)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	custom, _ := hashing.NewCustomIndexer(100, 3, func(d hashing.Digest, i int) uint64 { return d.H1 + uint64(i) })
	custom2, _ := hashing.NewCustomIndexer(100, 3, func(d hashing.Digest, i int) uint64 { return d.H1 + uint64(i) })
	a := ix(hashing.Enhanced, 100, 3)
	for _, c := range []struct {
		a, b   *hashing.Indexer
		sa, sb uint64
		ok     bool
	}{
		{a, ix(hashing.Enhanced, 100, 3), 1, 1, true},
		{nil, nil, 0, 0, true},
		{custom, custom, 0, 0, true},
		{a, nil, 0, 0, false},
		{nil, a, 0, 0, false},
		{a, ix(hashing.Enhanced, 101, 3), 0, 0, false},
		{a, ix(hashing.Enhanced, 100, 4), 0, 0, false},
		{a, ix(hashing.Double, 100, 3), 0, 0, false},
		{a, a, 1, 2, false},
		{custom, custom2, 0, 0, false},
	} {
		err := Compatible("p", "op", c.a, c.b, c.sa, c.sb)
		if (err == nil) != c.ok || err != nil && !errors.Is(err, kind.ErrIncompatible) {
			t.Errorf("%+v: %v", c, err)
		}
	}
}

// TestSetKeyIncremental: SetKey's incremental walk (additions modulo m)
// sets exactly the positions ModSmall gives (Indexer.Positions) for every
// double-hashing scheme, odd and even m from 1 up, and k up to MaxK.
func TestSetKeyIncremental(t *testing.T) {
	var buf [hashing.MaxK]uint64
	for _, s := range []hashing.Scheme{hashing.Double, hashing.Enhanced, hashing.ExtendedSquare, hashing.ExtendedCube} {
		for _, m := range []uint64{1, 2, 3, 5, 64, 65, 3001, 1<<20 + 7} {
			for _, k := range []int{1, 2, 7, 31, hashing.MaxK} {
				ix, err := hashing.NewIndexer(s, m, k)
				if err != nil {
					t.Fatal(err)
				}
				for _, d := range digests(20, m^uint64(k)) {
					got, want := New(m), New(m)
					got.SetKey(ix, d)
					for _, p := range ix.Positions(d, buf[:]) {
						want.Set(p)
					}
					if !got.Equal(want) {
						t.Fatalf("%v m=%d k=%d: SetKey and Positions differ", s, m, k)
					}
				}
			}
		}
	}
}
