package bloomlab_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bloomlab/bloomlab/internal/kind"
)

// Every kind whose memory grows as keys come honors a memory budget set
// through its builder (kind.MemoryBudgeter; docs/API.md, "Memory
// budget"): with keys that grow it unbudgeted (distinct keys past its
// capacity, and copies of one key, which take a slot each in a cuckoo
// filter), the budgeted build refuses the add that would go past the
// budget with an error naming it, ends within it, and keeps every key it
// accepted. The cuckoo filter's sub-filters and the d-left filter's stash
// grew past any budget.
func TestMemoryBudgetEveryKind(t *testing.T) {
	variants := map[string][][]string{
		"cuckoo": {{"-expansion", "2"}, {"-profile", "redisbloom", "-expansion", "2"}},
		"dleft":  {nil, {"-rounds", "2"}},
	}
	keys := func(yield func([]byte) bool) {
		for i := 0; i < 3000; i++ {
			if !yield(fmt.Appendf(nil, "key%d", i)) {
				return
			}
		}
		for i := 0; i < 30; i++ {
			if !yield([]byte("same")) {
				return
			}
		}
	}
	build := func(s *kind.Spec, opts []string, budget uint64) (kind.Filter, uint64, [][]byte, []error) {
		v := s.Defaults()
		if err := v.ParseArgs(opts); err != nil {
			t.Fatal(err)
		}
		planner := s.Planner(v)
		p, err := planner(kind.Target{N: 100, FPR: 0.01})
		if err != nil {
			t.Fatalf("%s %v: %v", s.Name, opts, err)
		}
		b, err := p.New()
		if err != nil {
			t.Fatalf("%s %v: %v", s.Name, opts, err)
		}
		if budget > 0 {
			mb, ok := b.(kind.MemoryBudgeter)
			if !ok {
				t.Fatalf("%s %v: the builder has no memory budget", s.Name, opts)
			}
			mb.SetMaxBits(budget)
		}
		var added [][]byte
		var refused []error
		for k := range keys {
			if err := b.Add(k); err != nil {
				refused = append(refused, err)
			} else {
				added = append(added, k)
			}
		}
		f, err := b.Finish()
		if err != nil {
			t.Fatalf("%s %v: Finish: %v", s.Name, opts, err)
		}
		return f, p.Bits, added, refused
	}
	grew := map[string]bool{}
	for _, s := range kind.All() {
		vs := variants[s.Name]
		if vs == nil {
			vs = [][]string{nil} // the default options
		}
		for _, opts := range vs {
			f, planned, _, _ := build(s, opts, 0)
			if f.Bits() <= planned {
				continue
			}
			grew[s.Name] = true
			budget := planned + planned/2
			g, _, added, refused := build(s, opts, budget)
			if len(refused) == 0 || g.Bits() > budget {
				t.Errorf("%s %v: budget %d bits (planned %d, %d unbudgeted): %d bits, %d adds refused", s.Name, opts, budget, planned, f.Bits(), g.Bits(), len(refused))
				continue
			}
			for _, err := range refused {
				if !strings.Contains(err.Error(), "budget") {
					t.Errorf("%s %v: a refusal that does not name the budget: %v", s.Name, opts, err)
					break
				}
			}
			for _, k := range added {
				if !g.Contains(k) {
					t.Fatalf("%s %v: key %q accepted and lost", s.Name, opts, k)
				}
			}
			t.Logf("%s %v: unbudgeted %d bits; budget %d: %d bits, %d of %d adds refused", s.Name, opts, f.Bits(), budget, g.Bits(), len(refused), len(refused)+len(added))
		}
	}
	for _, name := range []string{"scalable", "cuckoo", "dleft"} {
		if !grew[name] {
			t.Errorf("%s did not grow without a budget: the test no longer exercises it", name)
		}
	}
}
