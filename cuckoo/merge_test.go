package cuckoo

import (
	"bytes"
	"errors"
	"testing"

	"github.com/bloomlab/bloomlab/internal/filtertest"
)

// TestMerge: merging filters of the same geometry holds every key of
// both (a growing filter gains the other's extra sub-filters), counts add,
// a merge with itself doubles every count, and a merge that does not fit
// (the first sub-filters of two grown filters together) fails with
// ErrFull leaving the filter as it was.
func TestMerge(t *testing.T) {
	for _, mk := range []func() *Filter{
		func() *Filter { return must(New(Config{Buckets: 16, FingerprintBits: 12, Expansion: 2, Seed: 3})) },
		func() *Filter {
			return must(New(Config{Buckets: 16, FingerprintBits: 12, Expansion: 1, Semisort: true, Seed: 3}))
		},
		func() *Filter { return must(NewRedisBloom(32, 2, 20, 2)) },
	} {
		a, b := mk(), mk()
		for i := 1000; i < 1400; i++ {
			must(0, b.Add(key(i)))
		}
		if b.Info().SubFilters < 3 {
			t.Fatalf("b has %d sub-filters", b.Info().SubFilters)
		}
		if err := a.Merge(b); err != nil {
			t.Fatal(err)
		}
		for _, i := range seq(1000, 1400) {
			if !a.Contains(key(i)) {
				t.Fatalf("%v: key %d absent after the merge", a.Info().Profile, i)
			}
		}
		if a.N() != 400 || a.Info().SubFilters != b.Info().SubFilters {
			t.Errorf("N %d, %d sub-filters", a.N(), a.Info().SubFilters)
		}
		// Two grown filters: b's first sub-filter does not fit in a's.
		before := a.Clone()
		if err := a.Merge(b); !errors.Is(err, ErrFull) || !a.Equal(before) {
			t.Errorf("%v: merge of two full first sub-filters: %v, changed %v", a.Info().Profile, err, !a.Equal(before))
		}
		c := mk()
		for i := 0; i < 6; i++ {
			must(0, c.Add(key(i)))
		}
		if err := c.Merge(c); err != nil || c.N() != 12 || c.Count(key(5)) < 2 {
			t.Errorf("self-merge: %v, N %d, count %d", err, c.N(), c.Count(key(5)))
		}
	}
	// A non-growing filter that cannot take the other's fingerprints.
	a := must(New(Config{Buckets: 64, FingerprintBits: 10}))
	b := must(New(Config{Buckets: 64, FingerprintBits: 10}))
	for i := 0; a.Add(key(i)) == nil; i++ {
	}
	for i := 5000; i < 5100; i++ {
		must(0, b.Add(key(i)))
	}
	before := a.Clone()
	if err := a.Merge(b); !errors.Is(err, ErrFull) || !a.Equal(before) {
		t.Errorf("merge into a full filter: %v, changed %v", err, !a.Equal(before))
	}
	for _, other := range []*Filter{
		must(New(Config{Buckets: 64, FingerprintBits: 11})),
		must(New(Config{Buckets: 128, FingerprintBits: 10})),
		must(New(Config{Buckets: 64, FingerprintBits: 10, Seed: 1})),
		must(NewRedisBloom(128, 4, 20, 0)),
		{},
	} {
		if err := a.Merge(other); !errors.Is(err, ErrIncompatible) {
			t.Errorf("merge with %+v: %v", other.lay, err)
		}
	}
}

func seq(from, to int) []int {
	var s []int
	for i := from; i < to; i++ {
		s = append(s, i)
	}
	return s
}

// TestCompact: after most keys of a grown filter are deleted, Compact
// moves the rest into the older sub-filters and frees the newest ones;
// every key left is present.
func TestCompact(t *testing.T) {
	for _, f := range []*Filter{
		must(New(Config{Buckets: 16, FingerprintBits: 12, Expansion: 2})),
		must(New(Config{Buckets: 16, FingerprintBits: 12, Expansion: 2, Semisort: true})),
		must(NewRedisBloom(32, 4, 20, 2)),
	} {
		for i := 0; i < 1000; i++ {
			must(0, f.Add(key(i)))
		}
		grown := f.Info().SubFilters
		for i := 0; i < 950; i++ {
			if !f.Delete(key(i)) {
				t.Fatalf("delete %d", i)
			}
		}
		f.Compact()
		if f.Info().SubFilters >= grown || f.Info().Deletes != 0 {
			t.Errorf("%v: %d sub-filters after Compact (%d before), deletes %d", f.Info().Profile, f.Info().SubFilters, grown, f.Info().Deletes)
		}
		for i := 950; i < 1000; i++ {
			if !f.Contains(key(i)) {
				t.Fatalf("%v: key %d lost by Compact", f.Info().Profile, i)
			}
		}
	}
}

// TestInlining: the helpers the query loop is written around stay
// inlined.
func TestInlining(t *testing.T) {
	filtertest.Inlinable(t, "github.com/bloomlab/bloomlab/cuckoo",
		"(*sub).index", "(*sub).alt", "read64", "(*Filter).fingerprint", "(*layout).hasZero", "(*layout).zeroLanes")
}

// TestMergeRespectsMaxBits: Merge gives f g's extra sub-filters only
// within f's memory budget (MaxBits): past it, it fails wrapping
// ErrCannotGrow and f is unchanged. Before, a filter with a budget of
// 2^15 bits took a grown filter's 1.2 Gbit of tables without a word.
func TestMergeRespectsMaxBits(t *testing.T) {
	g, err := New(Config{Capacity: 1000, Expansion: 2, MaxBits: NoMaxBits})
	if err != nil {
		t.Fatal(err)
	}
	for range 64 { // 8 copies per growth: 8 sub-filters
		if err := g.Add([]byte("same")); err != nil {
			t.Fatal(err)
		}
	}
	f, err := New(Config{Capacity: 1000, Expansion: 2, MaxBits: 4 * g.subs[0].m * g.lay.bucketBits})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Add([]byte("mine")); err != nil {
		t.Fatal(err)
	}
	before, _ := f.MarshalBinary()
	err = f.Merge(g)
	if !errors.Is(err, ErrCannotGrow) || !errors.Is(err, ErrFull) {
		t.Fatalf("merging %d sub-filters (%d bits) into a budget of %d bits: %v (now %d bits)", len(g.subs), g.Bits(), f.MaxBits(), err, f.Bits())
	}
	if after, _ := f.MarshalBinary(); !bytes.Equal(before, after) {
		t.Fatal("a refused merge changed the filter")
	}
	// Within the budget it merges.
	f.SetMaxBits(g.Bits())
	if err := f.Merge(g); err != nil {
		t.Fatal(err)
	}
	if !f.Contains([]byte("mine")) || f.Count([]byte("same")) != 64 {
		t.Fatalf("after the merge: mine %v, same ×%d", f.Contains([]byte("mine")), f.Count([]byte("same")))
	}
}
