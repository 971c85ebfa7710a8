package bitvec

import (
	"fmt"
	"math"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/internal/sizing"
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

// NewIndexer returns the Indexer of a standard or partitioned filter of at
// least m positions with k per key: scheme s (m rounded up to a valid
// partitioned size; PartitionSize), or fn for hashing.Custom. Errors wrap
// kind.ErrParam and begin with pkg.
func NewIndexer(pkg string, s hashing.Scheme, m uint64, k int, fn hashing.IndexFunc) (*hashing.Indexer, error) {
	switch {
	case m < 1 || m > hashing.MaxM:
		return nil, fmt.Errorf("%s: m = %d out of range [1, 2^48]: %w", pkg, m, kind.ErrParam)
	case k < 1 || k > hashing.MaxK:
		return nil, fmt.Errorf("%s: k = %d out of range [1, %d]: %w", pkg, k, hashing.MaxK, kind.ErrParam)
	case s == hashing.Custom:
		ix, err := hashing.NewCustomIndexer(m, k, fn)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", pkg, err)
		}
		return ix, nil
	case !s.Valid():
		return nil, fmt.Errorf("%s: scheme %d unknown: %w", pkg, uint8(s), kind.ErrParam)
	}
	if m = hashing.PartitionSize(s, m, k); m > hashing.MaxM {
		return nil, fmt.Errorf("%s: m = %d out of range [1, 2^48] after partitioning: %w", pkg, m, kind.ErrParam)
	}
	ix, err := hashing.NewIndexer(s, m, k)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", pkg, err)
	}
	return ix, nil
}

// SizeForRate returns m and k for a standard or partitioned filter with
// scheme s holding n keys at false-positive rate fpr (sizing.Standard,
// rounded up to a valid size for s): the sizing of the NewWithEstimates
// constructors. Errors wrap kind.ErrParam, begin with pkg and name n or
// fpr.
func SizeForRate(pkg string, s hashing.Scheme, n uint64, fpr float64) (uint64, int, error) {
	if n == 0 {
		return 0, 0, fmt.Errorf("%s: n = 0, want n ≥ 1: %w", pkg, kind.ErrParam)
	}
	if !(fpr > 0 && fpr < 1) {
		return 0, 0, fmt.Errorf("%s: fpr = %v out of range (0, 1): %w", pkg, fpr, kind.ErrParam)
	}
	m, k, _, err := sizing.Standard(pkg, s, kind.Target{N: n, FPR: fpr})
	return m, k, err
}

// Compatible reports why two structures indexed by a and b with seeds sa
// and sb cannot be compared or combined: their m, k, scheme or seed
// differ, or they use custom index functions that are not the same
// Indexer (only clones combine). The error wraps kind.ErrIncompatible and
// begins with pkg and op. Two nil indexers (two zero values) are
// compatible.
func Compatible(pkg, op string, a, b *hashing.Indexer, sa, sb uint64) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s: "+format+": %w", append(append([]any{pkg, op}, args...), kind.ErrIncompatible)...)
	}
	switch {
	case a == nil || b == nil:
		if a != b {
			return bad("one of the two is a zero value")
		}
	case a.M() != b.M():
		return bad("m differs (%d vs %d)", a.M(), b.M())
	case a.K() != b.K():
		return bad("k differs (%d vs %d)", a.K(), b.K())
	case a.Scheme() != b.Scheme():
		return bad("scheme differs (%v vs %v)", a.Scheme(), b.Scheme())
	case a.Scheme() == hashing.Custom && a != b:
		return bad("custom index functions cannot be compared; only clones combine")
	}
	if sa != sb {
		return bad("seed differs (%d vs %d)", sa, sb)
	}
	return nil
}
