package bloom

import (
	"testing"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/filtertest"
)

// TestAtomicAddsBesideReads runs AddAtomic in goroutines beside every read
// method; under -race it pinned Clone (which copied the struct and its
// words with plain loads), Equal, WriteTo and MarshalBinary (plain loads of
// the words) as data races. It also checks that a key whose AddAtomic
// returned before a read began is in the filter and in the copy the read
// made.
func TestAtomicAddsBesideReads(t *testing.T) {
	for _, s := range []hashing.Scheme{hashing.Enhanced, hashing.Partition, hashing.Independent} {
		t.Run(s.String(), func(t *testing.T) {
			filtertest.AtomicAddsBesideReads(t,
				func() *Filter { return must(New(1<<14, 5, WithScheme(s))) },
				func(b []byte) (*Filter, error) {
					var g Filter
					return &g, g.UnmarshalBinary(b)
				},
				keyset(2000, 21))
		})
	}
}

// TestZeroValue calls every exported method on the zero Filter: reads
// answer as for an empty filter, the error-returning methods return
// ErrParam, the other mutators panic naming the constructor and change
// nothing. Before, Add and Contains panicked with a nil dereference,
// FillRatio and ApproxCount returned NaN, and WriteTo's error did not wrap
// ErrParam.
func TestZeroValue(t *testing.T) {
	const ctor = "New"
	var f Filter
	key := []byte("k")
	d := f.Digest(key)
	filtertest.Equal(t, "ContainsHash", f.ContainsHash(d), false)
	filtertest.Equal(t, "ContainsBatch", f.ContainsBatch([][]byte{key}, nil)[0], false)
	filtertest.Equal(t, "ContainsHashBatch", f.ContainsHashBatch([]hashing.Digest{d}, nil)[0], false)
	filtertest.Equal(t, "M", f.M(), 0)
	filtertest.Equal(t, "K", f.K(), 0)
	filtertest.Equal(t, "Kind", f.Kind(), "bloom")
	filtertest.Equal(t, "Scheme", f.Scheme(), 0)
	filtertest.Equal(t, "Ones", f.Ones(), 0)
	filtertest.Equal(t, "Equal(zero)", f.Equal(&Filter{}), true)
	filtertest.Equal(t, "Equal(filter)", f.Equal(must(New(64, 1))), false)
	filtertest.Equal(t, "Clone().Equal", f.Clone().Equal(&f), true)
	filtertest.IsParam(t, "Union", f.Union(must(New(64, 1))))
	filtertest.IsParam(t, "Intersect", f.Intersect(must(New(64, 1))))
	filtertest.IsParam(t, "Union(zero)", must(New(64, 1)).Union(&Filter{}))
	f.Clear()
	filtertest.PanicsUnchanged(t, &f, ctor, map[string]func(){
		"Add":             func() { f.Add(key) },
		"AddString":       func() { f.AddString("k") },
		"AddHash":         func() { f.AddHash(d) },
		"AddBatch":        func() { f.AddBatch([][]byte{key}) },
		"AddAtomic":       func() { f.AddAtomic(key) },
		"AddStringAtomic": func() { f.AddStringAtomic("k") },
		"AddHashAtomic":   func() { f.AddHashAtomic(d) },
		"SetCapacity":     func() { f.SetCapacity(1) },
	})
	// The reads of an empty filter; UnmarshalBinary fills a zero Filter.
	src := must(New(256, 3))
	src.Add(key)
	data, err := src.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var g Filter
	filtertest.ZeroReads(t, &f, &g, data, key)
}
