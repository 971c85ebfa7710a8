package bitvec

import (
	"math"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/theory"
)

// StateFPR returns the false-positive rate of a standard or partitioned
// filter's current state, given set(lo, hi), the number of occupied
// positions (ones, or nonzero counters) in [lo, hi): fill^k (000 §2.1), or
// for a partitioned scheme the product of the subarrays' fills, which is
// exact for the state. It returns 0 for a nil ix (the zero filter).
func StateFPR(ix *hashing.Indexer, set func(lo, hi uint64) uint64) float64 {
	if ix == nil {
		return 0
	}
	m, k := ix.M(), ix.K()
	if !ix.Scheme().Partitioned() {
		return theory.FPFromFill(float64(set(0, m))/float64(m), k)
	}
	sub := ix.SubarraySize()
	p := 1.0
	for i := range uint64(k) {
		p *= float64(set(i*sub, (i+1)*sub)) / float64(sub)
	}
	return p
}

// StateCount estimates the number of distinct keys in a standard or
// partitioned filter whose fraction of occupied positions is fill (Swamidass
// and Baldi): −(m/k)·ln(1 − fill), which for a partitioned filter is
// −(m/k)·ln(1 − fill) with m/k-position subarrays (each key occupies one
// position per subarray): the same expression. It returns +Inf for a full
// filter and 0 for a nil ix.
func StateCount(ix *hashing.Indexer, fill float64) float64 {
	if ix == nil {
		return 0
	}
	if ix.Scheme().Partitioned() {
		if fill >= 1 {
			return math.Inf(1)
		}
		return -float64(ix.SubarraySize()) * math.Log1p(-fill)
	}
	return theory.CountFromFill(float64(ix.M()), ix.K(), fill)
}

// DesignN returns the number of keys a filter of m positions and k per key
// was sized for: capacity when it was recorded, else the n for which k is
// optimal for a standard filter, ln2·m/k (at least 1), and says which (0
// and "" for k = 0, the zero filter).
func DesignN(m uint64, k int, capacity uint64) (uint64, string) {
	if capacity > 0 {
		return capacity, "recorded when built"
	}
	if k < 1 {
		return 0, ""
	}
	return uint64(math.Max(1, math.Round(math.Ln2*float64(m)/float64(k)))), "not recorded; the n for which k is optimal, ln2·m/k"
}
