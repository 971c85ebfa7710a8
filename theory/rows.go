package theory

// Rows: a Count-Min sketch's membership rate with two-hash rows (001 §7).
//
// A Count-Min sketch of d rows of w counters answers "present" when the d
// counters of a key are all nonzero: a partitioned filter of d subarrays of
// w positions. With 001's rows g_i = h1 + i·h2 (package countmin's default,
// double hashing, or enhanced with its offsets), both hashes reduced as the
// double-hashing schemes reduce them (w starts, hashing.DoubleSteps(w)
// steps), a key whose pair is the query's hits its d counters: the pair
// floor 1 − (1 − 1/(w·s))^n. The rows are tied to their index, so there is
// no reversal or shift; over a prime w two other pairs share at most one
// row (the partition scheme's trichotomy, 001 §2), in row i with
// probability q = (s − 1)/(w·s − 1) given they do not share the pair.

import (
	"fmt"
	"math"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/base"
)

// RowSets returns the number of equally likely position sets of a key in
// d rows of w counters with two-hash rows (Double, Enhanced): w·s,
// s = hashing.DoubleSteps(w), for d ≥ 2. It is +Inf for one row and for
// independent rows (hashing.Independent), which have no floor.
func RowSets(s hashing.Scheme, w uint64, d int) float64 {
	if d < 2 || w == 0 || !doubleScheme(s) {
		return math.Inf(1)
	}
	return float64(w) * float64(hashing.DoubleSteps(w))
}

// logFPRows is log FPRows for validated arguments.
func logFPRows(s hashing.Scheme, w uint64, d int, n float64) float64 {
	if n == 0 {
		return math.Inf(-1)
	}
	wf := float64(w)
	sets := RowSets(s, w, d)
	if math.IsInf(sets, 1) {
		return float64(d) * log1mexp(n*math.Log1p(-1/wf))
	}
	st := float64(hashing.DoubleSteps(w))
	q := (st - 1) / (wf*st - 1)
	return logAdd(log1mexp(logNoMatch(sets, n)), logCoverAll(n, d, q))
}

// FPRows returns the expected rate at which a Count-Min sketch of d rows of
// w counters holding n distinct keys answers "present" (estimate > 0) for
// a key never added, with row hashes s: for independent rows
// (1 − (1 − 1/w)^n)^d; for two-hash rows that with the pair floor (see the
// section above): 1 − (1 − floor)·(1 − cover), cover the probability that
// other keys hit all d rows, exact for n·d ≤ 4096 (a programme over the
// rows hit), its product bound beyond. Domain: w ≥ 1, 1 ≤ d ≤ 64, finite
// n ≥ 0; otherwise NaN.
func FPRows(s hashing.Scheme, w uint64, d int, n float64) float64 {
	if w < 1 || d < 1 || d > hashing.MaxK || !nonNeg(n) {
		return math.NaN()
	}
	return math.Exp(logFPRows(s, w, d, n))
}

// FPRowsPairs returns base, a sketch's rate with its rows taken as
// independent (the state's Π of the rows' fills), with the pair floor of
// its row hashes for n keys added: 1 − (1 − floor)·(1 − base). Domain as
// FPRows, base in [0, 1]; otherwise NaN.
func FPRowsPairs(s hashing.Scheme, w uint64, d int, n, base float64) float64 {
	if w < 1 || d < 1 || d > hashing.MaxK || !nonNeg(n) || !(base >= 0 && base <= 1) {
		return math.NaN()
	}
	sets := RowSets(s, w, d)
	if n == 0 || math.IsInf(sets, 1) {
		return base
	}
	return math.Exp(logAdd(log1mexp(logNoMatch(sets, n)), math.Log(base)))
}

// SizeRows returns the width and depth (d ≤ dmax) of the sketch with the
// fewest counters w·d, then the fewest rows, whose FPRows at n keys is at
// most eps, w·d ≤ maxCells: for each d a bisection over w (O(log maxCells)
// evaluations), w prime for two-hash rows (001 §2's trichotomy; see the
// section above). Errors wrap ErrInvalid for n = 0, eps outside (0, 1) or
// dmax outside [1, 64], and ErrTooLarge when no sketch within maxCells
// meets eps.
func SizeRows(s hashing.Scheme, n uint64, eps float64, dmax int, maxCells uint64) (w uint64, d int, err error) {
	if err := checkSizeArgs(n, eps); err != nil {
		return 0, 0, err
	}
	if dmax < 1 || dmax > hashing.MaxK {
		return 0, 0, fmt.Errorf("%w: dmax = %d, want 1 … %d", ErrInvalid, dmax, hashing.MaxK)
	}
	nf, logEps := float64(n), math.Log(eps)
	prime := doubleScheme(s)
	best := uint64(math.MaxUint64)
	for dd := 1; dd <= dmax; dd++ {
		wmax := maxCells / uint64(dd)
		if wmax < 1 {
			break
		}
		fits := func(w uint64) bool {
			if prime && dd >= 2 {
				w |= 1 // the rate of an odd (prime) width: monotone in w
			}
			return logFPRows(s, w, dd, nf) <= logEps
		}
		// Start from the product bound without the floor: a lower bound.
		start := uint64(1)
		if x := -1 / math.Expm1(math.Log1p(-math.Exp(logEps/float64(dd)))/nf); x >= 1 && x < float64(wmax) {
			start = uint64(x)
		}
		ww, ok := searchUp(start, wmax, fits)
		if !ok {
			continue
		}
		if prime && dd >= 2 {
			for ww = hashing.NextPrime(ww); ww <= wmax && logFPRows(s, ww, dd, nf) > logEps; ww = hashing.NextPrime(ww + 1) {
				base.PlanStep()
			}
			if ww > wmax {
				continue
			}
		}
		if cells := ww * uint64(dd); cells < best {
			best, w, d = cells, ww, dd
		}
	}
	if d == 0 {
		return 0, 0, tooLarge(n, eps)
	}
	return w, d, nil
}
