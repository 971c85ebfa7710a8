package choices

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/filtertest"
)

// TestZeroValue calls every exported method on the zero Filter. Before,
// Add on the zero Filter counted the key and set no bit, so Contains then
// answered false for it: a silent false negative. WriteTo wrote a file
// that no decoder accepts, FillRatio and EstimatedFPR were NaN.
func TestZeroValue(t *testing.T) {
	const ctor = "New"
	var f Filter
	key := []byte("k")
	d := f.Digest(key)
	filtertest.Equal(t, "ContainsHash", f.ContainsHash(d), false)
	filtertest.Equal(t, "M", f.M(), 0)
	filtertest.Equal(t, "K", f.K(), 0)
	filtertest.Equal(t, "C", f.C(), 0)
	filtertest.Equal(t, "Scheme", f.Scheme(), 0)
	filtertest.Equal(t, "Rounds", f.Rounds(), 0)
	filtertest.Equal(t, "Kind", f.Kind(), "choices")
	filtertest.Equal(t, "Config", f.Config(), Config{})
	filtertest.Equal(t, "Ones", f.Ones(), 0)
	filtertest.Equal(t, "Equal(zero)", f.Equal(&Filter{}), true)
	filtertest.Equal(t, "Equal(filter)", f.Equal(must(New(Config{M: 64, K: 1}))), false)
	filtertest.Equal(t, "Clone().Equal", f.Clone().Equal(&f), true)
	filtertest.IsParam(t, "Union", f.Union(must(New(Config{M: 64, K: 1}))))
	filtertest.IsParam(t, "Union(zero)", must(New(Config{M: 64, K: 1})).Union(&Filter{}))
	var b Builder
	filtertest.IsParam(t, "Builder.Build", b.Build(&f, digests(3, 1), 1))
	filtertest.IsParam(t, "Builder.Build(nil)", b.Build(nil, digests(3, 1), 1))
	f.Clear()
	filtertest.PanicsUnchanged(t, &f, ctor, map[string]func(){
		"Add":         func() { f.Add(key) },
		"AddString":   func() { f.AddString("k") },
		"AddHash":     func() { f.AddHash(d) },
		"AddBatch":    func() { f.AddBatch([][]byte{key}) },
		"SetCapacity": func() { f.SetCapacity(1) },
		"SetTieSeed":  func() { f.SetTieSeed(1) },
	})
	src := must(New(Config{M: 256, K: 3}))
	src.Add(key)
	data, err := src.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var g Filter
	filtertest.ZeroReads(t, &f, &g, data, key)
}

// TestZeroKeyed calls every exported method on the zero KeyedFilter. Before,
// Contains, Snapshot and Reoptimize panicked on a nil filter, and AddHash
// panicked with its mutex held, so the next Len deadlocked.
func TestZeroKeyed(t *testing.T) {
	var kf KeyedFilter
	key := []byte("k")
	d := hashing.Sum(key, 0)
	filtertest.Equal(t, "Contains", kf.Contains(key), false)
	filtertest.Equal(t, "ContainsString", kf.ContainsString("k"), false)
	filtertest.Equal(t, "ContainsHash", kf.ContainsHash(d), false)
	filtertest.Equal(t, "Len", kf.Len(), 0)
	filtertest.Equal(t, "Snapshot().Equal", kf.Snapshot().Equal(&Filter{}), true)
	_, err := kf.Reoptimize(context.Background())
	filtertest.IsParam(t, "Reoptimize", err)
	for name, fn := range map[string]func(){
		"Add":       func() { kf.Add(key) },
		"AddString": func() { kf.AddString("k") },
		"AddHash":   func() { kf.AddHash(d) },
	} {
		filtertest.Panics(t, name, "NewKeyed", fn)
	}
	// No lock is left held: Len and Snapshot (which take it) return.
	done := make(chan struct{})
	go func() {
		kf.Len()
		kf.Snapshot()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a panicking Add left the KeyedFilter's lock held")
	}
	if kf.Len() != 0 || kf.Snapshot().N() != 0 {
		t.Error("a panicking Add changed the zero KeyedFilter")
	}
}

// TestUnion: the union reports every key of either filter (online and
// offline builds, every scheme and c), has the OR of the bits, and a
// mismatch in m, k, c, scheme or seed fails with ErrIncompatible, changing
// nothing.
func TestUnion(t *testing.T) {
	for _, s := range groupSchemes {
		for _, c := range []int{1, 2, 3} {
			cfg := Config{M: 20000, K: 6, C: c, Scheme: s, Seed: 5, TieSeed: 1}
			ka, kb := keyset(800, 1), keyset(800, 2)
			a := must(New(cfg))
			a.AddBatch(ka)
			b := must(Build(cfg, kb, 5))
			u := a.Clone()
			if err := u.Union(b); err != nil {
				t.Fatal(err)
			}
			for _, k := range append(ka, kb...) {
				if !u.Contains(k) {
					t.Fatalf("%v c=%d: union lost a key", s, c)
				}
			}
			for i := range u.bits {
				if u.bits[i] != a.bits[i]|b.bits[i] {
					t.Fatalf("%v c=%d: union is not the OR of the bits", s, c)
				}
			}
			if u.N() != a.N()+b.N() || u.Rounds() != 0 {
				t.Errorf("%v c=%d: N = %d, Rounds = %d", s, c, u.N(), u.Rounds())
			}
		}
	}
	cfg := Config{M: 4096, K: 5, C: 2, Scheme: hashing.Enhanced, Seed: 1}
	a := must(New(cfg))
	a.AddBatch(keyset(100, 3))
	before := a.Clone()
	for _, other := range []Config{
		{M: 4097, K: 5, C: 2, Scheme: hashing.Enhanced, Seed: 1},
		{M: 4096, K: 6, C: 2, Scheme: hashing.Enhanced, Seed: 1},
		{M: 4096, K: 5, C: 3, Scheme: hashing.Enhanced, Seed: 1},
		{M: 4096, K: 5, C: 2, Scheme: hashing.Double, Seed: 1},
		{M: 4096, K: 5, C: 2, Scheme: hashing.Enhanced, Seed: 2},
	} {
		g := must(New(other))
		g.AddBatch(keyset(100, 4))
		if err := a.Union(g); !errors.Is(err, ErrIncompatible) {
			t.Errorf("union with %+v: %v, want ErrIncompatible", other, err)
		}
	}
	if !a.Equal(before) || a.N() != before.N() {
		t.Error("a failed union changed the filter")
	}
}
