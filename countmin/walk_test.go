package countmin

import (
	"math"
	"testing"

	"github.com/bloomlab/bloomlab/hashing"
)

// TestRowsMatchPositions: AddHash and EstimateHash, which walk the rows
// inline, touch exactly the counters hashing.Indexer.Positions names, for
// every scheme, plain and conservative, odd and even widths and depths up
// to MaxDepth: the sketch equals one updated through Positions, and every
// estimate is the minimum over those counters.
func TestRowsMatchPositions(t *testing.T) {
	for _, s := range []hashing.Scheme{hashing.Double, hashing.Enhanced, hashing.Independent} {
		for _, cons := range []bool{false, true} {
			for _, wd := range []struct {
				w uint64
				d int
			}{{1, 1}, {2, 3}, {7, 5}, {2719, 5}, {1000, 8}, {31, MaxDepth}} {
				cfg := Config{Width: wd.w, Depth: wd.d, Scheme: s, Conservative: cons}
				sk, err := New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				ref, _ := New(cfg)
				var buf [MaxDepth]uint64
				for i := range 3000 {
					d, count := key(i%1000), uint64(i%7+1)
					sk.AddHash(d, count)
					ps := ref.ix.Positions(d, buf[:])
					est := uint64(math.MaxUint64)
					for r, p := range ps {
						est = min(est, ref.cells[uint64(r)*wd.w+p])
					}
					for r, p := range ps {
						c := &ref.cells[uint64(r)*wd.w+p]
						if cons {
							*c = max(*c, satAdd(est, count))
						} else {
							*c = satAdd(*c, count)
						}
					}
					ref.total = satAdd(ref.total, count)
				}
				if !sk.Equal(ref) {
					t.Fatalf("%v conservative=%v w=%d d=%d: counters differ from the Positions reference", s, cons, wd.w, wd.d)
				}
				for i := range 1200 {
					d := key(i)
					est := uint64(math.MaxUint64)
					for r, p := range ref.ix.Positions(d, buf[:]) {
						est = min(est, ref.cells[uint64(r)*wd.w+p])
					}
					if got := sk.EstimateHash(d); got != est {
						t.Fatalf("%v conservative=%v w=%d d=%d: key %d: estimate %d, want %d", s, cons, wd.w, wd.d, i, got, est)
					}
				}
			}
		}
	}
}
