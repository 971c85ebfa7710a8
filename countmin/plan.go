package countmin

// Sizing for membership: a sketch answers Contains (estimate > 0), and for
// n distinct keys its false-positive rate is that of a partitioned Bloom
// filter of d subarrays of w positions.

import (
	"fmt"
	"math"
)

// FPR returns the probability that a key never added has all its d
// counters nonzero after n distinct keys were added to a sketch of width
// w and depth d: (1 − (1 − 1/w)^n)^d, the rows taken as independent.
func FPR(w uint64, d int, n uint64) float64 {
	if w == 0 || d < 1 {
		return math.NaN()
	}
	// 1 − (1 − 1/w)^n, computed without cancellation.
	hit := -math.Expm1(float64(n) * math.Log1p(-1/float64(w)))
	return math.Pow(hit, float64(d))
}

// DimensionsFPR returns the width and depth of the smallest sketch (fewest
// counters w·d, then fewest rows) whose FPR after n distinct keys is at
// most fpr.
func DimensionsFPR(n uint64, fpr float64) (w uint64, d int, err error) {
	if n < 1 {
		return 0, 0, fmt.Errorf("countmin: n = 0, want ≥ 1: %w", ErrParam)
	}
	if !(fpr > 0 && fpr < 1) {
		return 0, 0, fmt.Errorf("countmin: fpr = %v out of range (0, 1): %w", fpr, ErrParam)
	}
	best := uint64(math.MaxUint64)
	for dd := 1; dd <= MaxDepth; dd++ {
		// Every row must be hit with probability at most q = fpr^(1/d):
		// (1 − 1/w)^n ≥ 1 − q, so 1/w ≤ −expm1(log1p(−q)/n).
		q := math.Pow(fpr, 1/float64(dd))
		wf := math.Ceil(-1 / math.Expm1(math.Log1p(-q)/float64(n)))
		if !(wf >= 1 && wf <= MaxCells) {
			continue
		}
		ww := uint64(wf)
		for FPR(ww, dd, n) > fpr && ww <= MaxCells { // rounding: never promise less
			ww++
		}
		if cells := ww * uint64(dd); cells < best && cells <= MaxCells {
			best, w, d = cells, ww, dd
		}
	}
	if d == 0 {
		return 0, 0, fmt.Errorf("countmin: fpr = %v for n = %d keys needs more than 2^36 counters: %w", fpr, n, ErrParam)
	}
	return w, d, nil
}

// DimensionsBitsPerKey returns the width and depth of a sketch of about
// bitsPerKey bits per key for n keys: c = ⌊bitsPerKey·n/64⌋ 64-bit counters
// in d rows of ⌊c/d⌋, d the depth whose FPR after n distinct keys is
// lowest (fewest rows on a tie).
func DimensionsBitsPerKey(n uint64, bitsPerKey float64) (w uint64, d int, err error) {
	if n < 1 {
		return 0, 0, fmt.Errorf("countmin: n = 0, want ≥ 1: %w", ErrParam)
	}
	cf := math.Floor(bitsPerKey * float64(n) / 64)
	if !(cf >= 1 && cf <= MaxCells) {
		return 0, 0, fmt.Errorf("countmin: %v bits per key for %d keys make %v 64-bit counters, want 1 … 2^36: %w", bitsPerKey, n, cf, ErrParam)
	}
	c := uint64(cf)
	bestFPR := math.Inf(1)
	for dd := 1; dd <= MaxDepth && uint64(dd) <= c; dd++ {
		ww := c / uint64(dd)
		if p := FPR(ww, dd, n); p < bestFPR {
			bestFPR, w, d = p, ww, dd
		}
	}
	return w, d, nil
}
