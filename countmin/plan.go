package countmin

// Sizing for membership: a sketch answers Contains (estimate > 0), and for
// n distinct keys its false-positive rate is that of a partitioned Bloom
// filter of d subarrays of w positions, plus, for the two-hash rows
// g_i = h1 + i·h2, the pair floor: a key whose (h1, h2) is the query's hits
// all its d counters (theory.FPRows, 001 §2, §7).

import (
	"fmt"
	"math"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/theory"
)

// FPR returns (1 − (1 − 1/w)^n)^d: the probability that a key never added
// has all its d counters nonzero after n distinct keys, the rows taken as
// independent. It is the rate of independent rows; two-hash rows (the
// default) add the pair floor: FPRScheme.
func FPR(w uint64, d int, n uint64) float64 {
	if w == 0 || d < 1 {
		return math.NaN()
	}
	// 1 − (1 − 1/w)^n, computed without cancellation.
	hit := -math.Expm1(float64(n) * math.Log1p(-1/float64(w)))
	return math.Pow(hit, float64(d))
}

// FPRScheme returns the expected probability that a key never added has
// all its d counters nonzero after n distinct keys, in a sketch of width w
// whose rows are indexed by s (Double, Enhanced or Independent):
// theory.FPRows, FPR with the pair floor of two-hash rows. NaN for w = 0 or
// d outside [1, 64].
func FPRScheme(s hashing.Scheme, w uint64, d int, n uint64) float64 {
	return theory.FPRows(s, w, d, float64(n))
}

// DimensionsFPR returns the width and depth of the smallest sketch (fewest
// counters w·d, then fewest rows) with the default two-hash rows
// (hashing.Double) whose rate after n distinct keys is at most fpr:
// DimensionsFPRScheme(hashing.Double, n, fpr).
func DimensionsFPR(n uint64, fpr float64) (w uint64, d int, err error) {
	return DimensionsFPRScheme(hashing.Double, n, fpr)
}

// DimensionsFPRScheme returns the width and depth of the smallest sketch
// (fewest counters w·d, then fewest rows) with row hashes s whose
// FPRScheme after n distinct keys is at most fpr, the pair floor of
// two-hash rows included (theory.SizeRows: a bisection over w for each
// depth, so its time is bounded for any fpr in (0, 1); w is prime for
// two-hash rows).
func DimensionsFPRScheme(s hashing.Scheme, n uint64, fpr float64) (w uint64, d int, err error) {
	if n < 1 {
		return 0, 0, fmt.Errorf("countmin: n = 0, want ≥ 1: %w", ErrParam)
	}
	if !(fpr > 0 && fpr < 1) {
		return 0, 0, fmt.Errorf("countmin: fpr = %v out of range (0, 1): %w", fpr, ErrParam)
	}
	if !validRows(s) {
		return 0, 0, fmt.Errorf("countmin: scheme %v, want double, enhanced or independent: %w", s, ErrParam)
	}
	w, d, err = theory.SizeRows(s, n, fpr, MaxDepth, MaxCells)
	if err != nil {
		return 0, 0, fmt.Errorf("countmin: fpr = %v for n = %d keys needs more than 2^36 counters: %w", fpr, n, ErrParam)
	}
	return w, d, nil
}

// validRows reports whether s may index a sketch's rows.
func validRows(s hashing.Scheme) bool {
	return s == hashing.Double || s == hashing.Enhanced || s == hashing.Independent
}

// DimensionsBitsPerKey returns the width and depth of a sketch of about
// bitsPerKey bits per key for n keys with the default two-hash rows:
// c = ⌊bitsPerKey·n/64⌋ 64-bit counters in d rows of ⌊c/d⌋, d the depth
// whose FPRScheme after n distinct keys is lowest (fewest rows on a tie).
func DimensionsBitsPerKey(n uint64, bitsPerKey float64) (w uint64, d int, err error) {
	return dimensionsBitsPerKey(hashing.Double, n, bitsPerKey)
}

func dimensionsBitsPerKey(s hashing.Scheme, n uint64, bitsPerKey float64) (w uint64, d int, err error) {
	return counterDimensions(s, n, bitsPerKey, 64)
}

// counterDimensions is dimensionsBitsPerKey for counters of counterBits
// bits (64, or 32 for the redisbloom profile).
func counterDimensions(s hashing.Scheme, n uint64, bitsPerKey float64, counterBits int) (w uint64, d int, err error) {
	if n < 1 {
		return 0, 0, fmt.Errorf("countmin: n = 0, want ≥ 1: %w", ErrParam)
	}
	cf := math.Floor(bitsPerKey * float64(n) / float64(counterBits))
	if !(cf >= 1 && cf <= MaxCells) {
		return 0, 0, fmt.Errorf("countmin: %v bits per key for %d keys make %v %d-bit counters, want 1 … 2^36: %w", bitsPerKey, n, cf, counterBits, ErrParam)
	}
	c := uint64(cf)
	bestFPR := math.Inf(1)
	for dd := 1; dd <= MaxDepth && uint64(dd) <= c; dd++ {
		ww := c / uint64(dd)
		if p := FPRScheme(s, ww, dd, n); p < bestFPR {
			bestFPR, w, d = p, ww, dd
		}
	}
	return w, d, nil
}
