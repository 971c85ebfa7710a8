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
// filter's current state holding n keys, given set(lo, hi), the number of
// occupied positions (ones, or nonzero counters) in [lo, hi), and has(p),
// whether position p is occupied.
//
// For a small filter of a double-hashing or partition scheme (few occupied
// positions: exactState) it is exact: the fraction of the scheme's equally
// likely (h1, h2) pairs whose probes are all occupied, counted by walking
// the probe sequences through the occupied positions. Otherwise it is the
// fill^k of 000 §2.1 (for a partitioned scheme the product of the
// subarrays' fills), which is exact for independent positions, with the
// pair floor of the double-hashing and partition schemes added
// (theory.FPPairs): the probability that the query's probe sequence is one
// of the n keys', which no fill shows (n counts Add calls, so repeated keys
// make it an overestimate). It returns 0 for a nil ix (the zero filter).
func StateFPR(ix *hashing.Indexer, set func(lo, hi uint64) uint64, has func(p uint64) bool, n uint64) float64 {
	if ix == nil {
		return 0
	}
	m, k, s := ix.M(), ix.K(), ix.Scheme()
	ones := set(0, m)
	fill := float64(ones) / float64(m)
	if r, ok := exactState(ix, set, has); ok {
		return r
	}
	if s == hashing.BlobloomXXH64 {
		// All k probes in the key's 512-bit block: the mean over the
		// blocks of the block's fill^k.
		const bb = hashing.BlobloomBlockBits
		sum := 0.0
		for lo := uint64(0); lo < m; lo += bb {
			sum += theory.FPFromFill(float64(set(lo, lo+bb))/bb, k)
		}
		return sum / float64(m/bb)
	}
	base := theory.FPFromFill(fill, k)
	if s.Partitioned() {
		sub := ix.SubarraySize()
		base = 1.0
		for i := range uint64(k) {
			base *= float64(set(i*sub, (i+1)*sub)) / float64(sub)
		}
	}
	if s == hashing.Custom {
		return base
	}
	return theory.FPPairs(s, m, float64(n), k, fill, base)
}

// Bounds of the exact count of exactState: the positions scanned (the
// formula is exact past small filters: theory.FPScheme) and the candidate
// pairs tried.
const (
	maxExactScan  = 1 << 18
	maxExactPairs = 1 << 20
)

// exactState returns the exact rate of the state of a filter indexed by
// ix, a double-hashing or partition scheme: the fraction of its (h1, h2)
// pairs — start times step (hashing.DoubleSteps) over m, or p² over a
// subarray of p — whose k probes are all occupied. Each candidate pair is
// fixed by its first two probes, both occupied, so it tries |S_0|·|S_1|
// pairs (S_i the occupied positions its first and second probes may take).
// ok is false, and nothing is counted, for other schemes or when the scan
// or the pairs would exceed their bounds.
func exactState(ix *hashing.Indexer, set func(lo, hi uint64) uint64, has func(p uint64) bool) (rate float64, ok bool) {
	m, k, s := ix.M(), ix.K(), ix.Scheme()
	off := ix.Offsets()
	partition := s == hashing.Partition || s == hashing.PrimePartition
	if off == nil && !partition {
		return 0, false
	}
	span := m // the positions the first probe may take
	if partition {
		span = ix.SubarraySize()
	}
	o0 := set(0, span)
	o1 := o0
	if partition && k >= 2 {
		o1 = set(span, 2*span)
	}
	if m > maxExactScan || o0*o1 > maxExactPairs {
		return 0, false
	}
	if k == 1 || span == 1 {
		return float64(o0) / float64(span), true
	}
	var first, second []uint64
	for p := range span {
		if has(p) {
			first = append(first, p)
		}
		if partition && has(span+p) {
			second = append(second, p)
		}
	}
	var hits uint64
	if partition {
		// Subarray i holds probe i at (x + i·b) mod p, for every x, b < p.
		for _, x := range first {
			for _, y := range second {
				b := y - x
				if y < x {
					b = y + span - x
				}
				t, all := hashing.AddMod(y, b, span), true
				for i := uint64(2); i < uint64(k) && all; i++ {
					all = has(i*span + t)
					t = hashing.AddMod(t, b, span)
				}
				if all {
					hits++
				}
			}
		}
		return float64(hits) / (float64(span) * float64(span)), true
	}
	recip, o := ix.Recip(), off[1]
	for _, x := range first {
		for _, y := range first {
			// Probe 1 is x + b + off[1] mod m: solve for the step b
			// (y + 2m − x − off[1] is in (0, 3m)).
			b := y + 2*m - x - o
			for b >= m {
				b -= m
			}
			if b == 0 || (m&1 == 0 && b&1 == 0) {
				continue // not a step the scheme draws
			}
			all := true
			for i := 2; i < k && all; i++ {
				all = has(hashing.ModSmall(x+uint64(i)*b+off[i], m, recip))
			}
			if all {
				hits++
			}
		}
	}
	return float64(hits) / (float64(m) * float64(hashing.DoubleSteps(m))), true
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
