package theory

import "testing"

// TestSearchUp checks the bracketing search used by Size and SizePartitioned
// for every start on both sides of the answer, and at the limit.
func TestSearchUp(t *testing.T) {
	for limit := uint64(1); limit <= 70; limit++ {
		for thr := uint64(1); thr <= 75; thr++ {
			calls := 0
			pred := func(x uint64) bool {
				calls++
				if x > limit {
					t.Fatalf("pred(%d) called beyond limit %d", x, limit)
				}
				return x >= thr
			}
			for start := uint64(0); start <= limit+3; start++ {
				x, ok := searchUp(start, limit, pred)
				if thr <= limit && (x != thr || !ok) {
					t.Errorf("searchUp(start=%d, limit=%d), threshold %d: got (%d, %v)", start, limit, thr, x, ok)
				}
				if thr > limit && ok {
					t.Errorf("searchUp(start=%d, limit=%d), threshold %d beyond limit: got (%d, true)", start, limit, thr, x)
				}
			}
		}
	}
	// Large ranges take O(log) evaluations from either side.
	for _, c := range []struct{ start, thr uint64 }{{1, MaxBits - 5}, {MaxBits, 3}, {1 << 30, 1<<30 + 12345}, {1 << 30, 1<<30 - 12345}} {
		calls := 0
		x, ok := searchUp(c.start, MaxBits, func(x uint64) bool { calls++; return x >= c.thr })
		if x != c.thr || !ok || calls > 2*48+4 {
			t.Errorf("searchUp(%d, 2^48) threshold %d: got (%d, %v) in %d calls", c.start, c.thr, x, ok, calls)
		}
	}
}
