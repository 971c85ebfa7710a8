package ribbon

import (
	"testing"

	"github.com/bloomlab/bloomlab/internal/filtertest"
)

// TestZeroValue calls every exported method on the zero Filter: reads
// answer as for an empty filter (no key present), WriteTo and
// MarshalBinary return an error wrapping ErrParam naming the
// constructors, and UnmarshalBinary fills it. A Filter has no mutator.
func TestZeroValue(t *testing.T) {
	var f Filter
	key := []byte("k")
	filtertest.Equal(t, "ContainsHash64", f.ContainsHash64(0), false)
	filtertest.Equal(t, "ContainsBatch", f.ContainsBatch([][]byte{key}, []bool{true})[0], false)
	filtertest.Equal(t, "Kind", f.Kind(), "ribbon")
	filtertest.Equal(t, "ResultBits", f.ResultBits(), 0)
	filtertest.Equal(t, "Shards", f.Shards(), 0)
	filtertest.Equal(t, "Slots", f.Slots(), 0)
	filtertest.Equal(t, "Equal(zero)", f.Equal(&Filter{}), true)
	filtertest.Equal(t, "Equal(filter)", f.Equal(goldenFilter()), false)
	if bpk := f.BitsPerKey(); bpk == bpk {
		t.Errorf("BitsPerKey %v, want NaN", bpk)
	}
	if len(describe(&f)) == 0 {
		t.Error("Describe of the zero Filter")
	}
	filtertest.ZeroReads(t, &f, &Filter{}, must(goldenFilter().MarshalBinary()), []byte("a"))
	// The zero Builder is NewBuilder(Config{})'s.
	var b Builder
	if err := b.Add(key); err != nil {
		t.Fatal(err)
	}
	g, err := b.Finish()
	if err != nil || !g.Contains(key) || g.ResultBits() != 8 {
		t.Errorf("the zero Builder: %v", err)
	}
	var e Builder
	if g, err := e.Finish(); err != nil || g.N() != 0 {
		t.Errorf("the zero Builder, empty: %v", err)
	}
}
