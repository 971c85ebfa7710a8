package bloom

import (
	"testing"

	"github.com/bloomlab/bloomlab/hashing"
)

// TestForeignNoAllocs: the filters of the peers' hashing schemes (what
// the BoomFilters and blobloom imports make) add and answer without
// allocating, as the native schemes do (TestNoAllocs).
func TestForeignNoAllocs(t *testing.T) {
	keys := keyset(64, 1)
	out := make([]bool, len(keys))
	for _, s := range []hashing.Scheme{hashing.BoomFilters, hashing.BoomPartitioned, hashing.BlobloomXXH64} {
		f, err := New(1<<20, 7, WithScheme(s))
		if err != nil {
			t.Fatalf("%v: %v", s, err)
		}
		for name, fn := range map[string]func(){
			"Add":            func() { f.Add(keys[1]) },
			"AddString":      func() { f.AddString("abc") },
			"AddAtomic":      func() { f.AddAtomic(keys[2]) },
			"Contains":       func() { f.Contains(keys[3]) },
			"ContainsString": func() { f.ContainsString("abc") },
			"ContainsBatch":  func() { out = f.ContainsBatch(keys, out) },
			"AddBatch":       func() { f.AddBatch(keys) },
		} {
			if a := testing.AllocsPerRun(50, fn); a != 0 {
				t.Errorf("%v %s: %v allocs", s, name, a)
			}
		}
		for _, k := range keys {
			if !f.Contains(k) {
				t.Fatalf("%v: false negative", s)
			}
		}
	}
}
