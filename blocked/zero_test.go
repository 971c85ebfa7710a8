package blocked

import (
	"bytes"
	"testing"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/filtertest"
)

// TestAtomicAddsBesideReads runs AddAtomic in goroutines beside every read
// method; under -race it pinned EstimatedFPR and ApproxCount (which ranged
// over the words by value and then loaded the copy atomically), Clone,
// Equal, WriteTo and MarshalBinary as data races. It also checks that a
// key whose AddAtomic returned before a read began is in the filter and in
// the copy the read made.
func TestAtomicAddsBesideReads(t *testing.T) {
	filtertest.AtomicAddsBesideReads(t,
		func() *Filter { return must(New(1<<14, 7)) },
		func(b []byte) (*Filter, error) {
			var g Filter
			return &g, g.UnmarshalBinary(b)
		},
		keys16(2000, 21))
}

// TestZeroValue calls every exported method on the zero Filter: reads
// answer as for an empty filter, the error-returning methods return
// ErrParam, the other mutators panic naming the constructor and change
// nothing. Before, Add and Contains panicked with a slice bound error,
// FillRatio and EstimatedFPR returned NaN, and WriteTo's error did not wrap
// ErrParam.
func TestZeroValue(t *testing.T) {
	const ctor = "New"
	var f Filter
	key := []byte("k")
	d := f.Digest(key)
	filtertest.Equal(t, "Contains", f.Contains(key), false)
	filtertest.Equal(t, "ContainsString", f.ContainsString("k"), false)
	filtertest.Equal(t, "ContainsHash", f.ContainsHash(d), false)
	filtertest.Equal(t, "ContainsBatch", f.ContainsBatch([][]byte{key}, nil)[0], false)
	filtertest.Equal(t, "ContainsHashBatch", f.ContainsHashBatch([]hashing.Digest{d}, nil)[0], false)
	filtertest.Equal(t, "M", f.M(), 0)
	filtertest.Equal(t, "Blocks", f.Blocks(), 0)
	filtertest.Equal(t, "K", f.K(), 0)
	filtertest.Equal(t, "Bits", f.Bits(), 0)
	filtertest.Equal(t, "N", f.N(), 0)
	filtertest.Equal(t, "Seed", f.Seed(), 0)
	filtertest.Equal(t, "Capacity", f.Capacity(), 0)
	filtertest.Equal(t, "Kind", f.Kind(), "blocked")
	filtertest.Equal(t, "Scheme", f.Scheme(), hashing.Independent)
	filtertest.Equal(t, "Ones", f.Ones(), 0)
	filtertest.Equal(t, "FillRatio", f.FillRatio(), 0)
	filtertest.Equal(t, "EstimatedFPR", f.EstimatedFPR(), 0)
	filtertest.Equal(t, "ApproxCount", f.ApproxCount(), 0)
	filtertest.Equal(t, "Equal(zero)", f.Equal(&Filter{}), true)
	filtertest.Equal(t, "Equal(filter)", f.Equal(must(New(512, 1))), false)
	filtertest.Equal(t, "Clone().Equal", f.Clone().Equal(&f), true)
	_, err := f.WriteTo(&bytes.Buffer{})
	filtertest.IsParam(t, "WriteTo", err)
	_, err = f.MarshalBinary()
	filtertest.IsParam(t, "MarshalBinary", err)
	filtertest.IsParam(t, "Union", f.Union(must(New(512, 1))))
	filtertest.IsParam(t, "Intersect", f.Intersect(must(New(512, 1))))
	filtertest.IsParam(t, "Union(zero)", must(New(512, 1)).Union(&Filter{}))
	f.Clear()
	for name, fn := range map[string]func(){
		"Add":             func() { f.Add(key) },
		"AddString":       func() { f.AddString("k") },
		"AddHash":         func() { f.AddHash(d) },
		"AddBatch":        func() { f.AddBatch([][]byte{key}) },
		"AddAtomic":       func() { f.AddAtomic(key) },
		"AddStringAtomic": func() { f.AddStringAtomic("k") },
		"AddHashAtomic":   func() { f.AddHashAtomic(d) },
		"SetCapacity":     func() { f.SetCapacity(1) },
	} {
		filtertest.Panics(t, name, ctor, fn)
	}
	if f.N() != 0 || f.Capacity() != 0 || f.Bits() != 0 {
		t.Error("a panicking mutator changed the zero Filter")
	}
	src := must(New(512, 3))
	src.Add(key)
	b, err := src.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var g Filter
	if err := g.UnmarshalBinary(b); err != nil || !g.Contains(key) {
		t.Errorf("UnmarshalBinary into the zero Filter: %v", err)
	}
}
