package counting

import (
	"testing"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/filtertest"
)

// TestZeroValue calls every exported method on the zero Filter: reads
// answer as for an empty filter, the error-returning methods return
// ErrParam, the other mutators panic naming the constructor and change
// nothing. Before, Add, Contains, Count and Remove panicked with a nil
// dereference, FillRatio and ApproxCount returned NaN, CounterBits 1, and
// WriteTo's error did not wrap ErrParam.
func TestZeroValue(t *testing.T) {
	const ctor = "New"
	var f Filter
	key := []byte("k")
	d := f.Digest(key)
	filtertest.Equal(t, "ContainsHash", f.ContainsHash(d), false)
	filtertest.Equal(t, "ContainsBatch", f.ContainsBatch([][]byte{key}, nil)[0], false)
	filtertest.Equal(t, "ContainsHashBatch", f.ContainsHashBatch([]hashing.Digest{d}, nil)[0], false)
	filtertest.Equal(t, "Count", f.Count(key), 0)
	filtertest.Equal(t, "CountString", f.CountString("k"), 0)
	filtertest.Equal(t, "CountHash", f.CountHash(d), 0)
	filtertest.Equal(t, "M", f.M(), 0)
	filtertest.Equal(t, "K", f.K(), 0)
	filtertest.Equal(t, "CounterBits", f.CounterBits(), 0)
	filtertest.Equal(t, "CounterMax", f.CounterMax(), 0)
	filtertest.Equal(t, "Saturated", f.Saturated(), 0)
	filtertest.Equal(t, "Kind", f.Kind(), "counting")
	filtertest.Equal(t, "Scheme", f.Scheme(), 0)
	filtertest.Equal(t, "Nonzero", f.Nonzero(), 0)
	filtertest.Equal(t, "Equal(zero)", f.Equal(&Filter{}), true)
	filtertest.Equal(t, "Equal(filter)", f.Equal(mustNew(t, 64, 1)), false)
	filtertest.Equal(t, "Clone().Equal", f.Clone().Equal(&f), true)
	filtertest.Equal(t, "ToBloom().M", f.ToBloom().M(), 0)
	filtertest.IsParam(t, "Remove", f.Remove(key))
	filtertest.IsParam(t, "RemoveString", f.RemoveString("k"))
	filtertest.IsParam(t, "RemoveHash", f.RemoveHash(d))
	filtertest.IsParam(t, "Merge", f.Merge(mustNew(t, 64, 1)))
	filtertest.IsParam(t, "Merge(zero)", mustNew(t, 64, 1).Merge(&Filter{}))
	f.Clear()
	filtertest.PanicsUnchanged(t, &f, ctor, map[string]func(){
		"Add":         func() { f.Add(key) },
		"AddString":   func() { f.AddString("k") },
		"AddHash":     func() { f.AddHash(d) },
		"AddBatch":    func() { f.AddBatch([][]byte{key}) },
		"SetCapacity": func() { f.SetCapacity(1) },
	})
	src := mustNew(t, 256, 3)
	src.Add(key)
	data, err := src.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var g Filter
	filtertest.ZeroReads(t, &f, &g, data, key)
}

func mustNew(t *testing.T, m uint64, k int, opts ...Option) *Filter {
	t.Helper()
	f, err := New(m, k, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestInlining: the probe loops assume these helpers cost no call.
func TestInlining(t *testing.T) {
	filtertest.Inlinable(t, "github.com/bloomlab/bloomlab/counting",
		"layout.field", "layout.zero", "layout.get", "layout.at", "inc", "(*Filter).mustBeMade")
}
