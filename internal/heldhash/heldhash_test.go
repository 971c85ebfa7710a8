package heldhash

import (
	"errors"
	"strings"
	"testing"

	"github.com/bloomlab/bloomlab/internal/base"
)

// TestAdmit: without a budget every count up to max is admitted; with
// one, exactly the counts whose need fits, checked about log2 times;
// past max, ErrParam; near max, twice the count is capped at max (a need
// that is 0 beyond max cannot vouch for keys past it).
func TestAdmit(t *testing.T) {
	need := func(n uint64) uint64 { return 100 * n }
	var b Budget
	if err := b.Admit(1e6, 1e6, need, "x", "y"); err != nil {
		t.Fatal(err)
	}
	if err := b.Admit(1e6+1, 1e6, need, "x", "y"); !errors.Is(err, base.ErrParam) {
		t.Fatalf("past max: %v", err)
	}
	b.Set(100 * 1000)
	calls := 0
	counting := func(n uint64) uint64 { calls++; return need(n) }
	for n := uint64(1); n <= 1000; n++ {
		if err := b.Admit(n, 1e6, counting, "x", "y"); err != nil {
			t.Fatalf("%d keys: %v", n, err)
		}
	}
	if calls > 40 {
		t.Errorf("need ran %d times for 1000 admissions", calls)
	}
	err := b.Admit(1001, 1e6, need, "fuse", "the held hashes")
	if err == nil || !strings.Contains(err.Error(), "fuse: memory budget of 100000 bits reached: building from 1001 keys takes 100100 bits (the held hashes)") {
		t.Fatalf("1001 keys: %v", err)
	}
	// A need that is 0 past max: twice the count is capped at max.
	var c Budget
	c.Set(1000)
	zeroPast := func(n uint64) uint64 {
		if n > 10 {
			return 0
		}
		return 200 * n
	}
	if err := c.Admit(6, 10, zeroPast, "x", "y"); err == nil {
		t.Errorf("6 keys need 1200 bits > 1000, admitted (fits %d)", c.Fits())
	}
}
