// Package theory gives the closed forms for standard and partitioned Bloom
// filters: false-positive rates, expected fill, optimal number of hash
// functions, sizing, and the information-theoretic lower bound; and the
// predictions for the other kinds: blocked filters, filters with c choices
// (000), d-left filters and d-left counting filters (002).
//
// A Bloom filter has m bits and k hash functions and holds n keys. Sections
// are cited by the papers' numbers:
//
//   - 000: S. Lumetta, M. Mitzenmacher, "Using the Power of Two Choices to
//     Improve Bloom Filters", Internet Mathematics, 2007.
//   - 001: A. Kirsch, M. Mitzenmacher, "Less Hashing, Same Performance:
//     Building a Better Bloom Filter", ESA 2006.
//   - 002: F. Bonomi, M. Mitzenmacher, R. Panigrahy, S. Singh, G. Varghese,
//     "Bloom Filters via d-Left Hashing and Dynamic Bit Reassignment".
//   - 003: lecture notes "Notes 14 for CS 170: Bloom Filters".
//   - 004: lecture notes "Bloom Filters and Hashing".
//
// The function-by-function map is:
//
//   - [FPExact]: (1 − (1 − 1/m)^{kn})^k, 003 §3 and 004 §3 (left-hand side).
//   - [FPAsymptotic]: (1 − e^{−kn/m})^k, 003 §3 and 004 §3 (the approximation).
//   - [FillExpected]: 1 − (1 − 1/m)^{kn}, the expected fraction of ones, 003 §3.
//   - [FPFromFill]: fill^k, the rate given the observed fraction of ones,
//     000 §2.1.
//   - [CountFromFill]: −(m/k)·ln(1 − fill), the number of keys whose
//     asymptotic expected fill is fill (the inverse of 1 − e^{−kn/m}).
//   - [OptimalK], [Size]: the integer k and the smallest m that minimise or
//     bound [FPExact]; 003 §3 gives the continuous optimum k = ln2·m/n.
//   - [FPAtOptimalK]: (1/2)^{ln2·m/n} = 0.6185^{m/n}, 003 §3 and 004 §3.
//   - [LowerBoundBits], [Overhead]: n·log2(1/ε) bits, 004 §4 (lower bound);
//     an optimal Bloom filter uses log2(e) ≈ 1.4427 times that.
//   - [FPPartitioned], [FillExpectedPartitioned], [OptimalKPartitioned],
//     [SizePartitioned]: the partitioned filter of 004 §5, k subarrays of m/k
//     bits, rate (1 − (1 − k/m)^n)^k, never better than the standard filter.
//   - [PositionSets], [FPPairFloor], [FPPairs], [FPFromFillDraws],
//     [FPScheme], [SizeScheme], [SizeSchemeUnit]: the rate of a real filter
//     indexed by package hashing's schemes (001 §2, §4.2, §6): the pair
//     floor of double hashing (a query whose (h1, h2) is an inserted key's
//     hits all k positions: about n/(m·s) for a standard filter, n/m'² for
//     the partition scheme), which the closed forms above do not contain,
//     and the sizing that meets a target with it. The filters are sized and
//     described with these; Size and SizePartitioned remain the closed
//     forms' sizing, for k independent hash functions.
//
// # Domain and errors
//
// Real-valued arguments must be finite: m, n ≥ 0 as stated per function, k ≥ 1,
// rates and fills in the stated ranges. A function given an argument outside
// its domain (negative, NaN, ±Inf, k ≤ 0, ...) returns NaN (the float
// functions), 0 (the functions returning k), or an error wrapping [ErrInvalid]
// (the sizing functions). No function panics.
//
// # Cost
//
// Every sizing function (Size, SizePartitioned, SizeBlocked, SizeChoices)
// takes bounded time for any n up to 2^64 − 1 and any eps in (0, 1): it
// rejects at once a size the continuous bound puts past [MaxBits], and
// otherwise searches m in O(log(MaxBits)) evaluations of a rate whose cost
// does not depend on n (FPBlocked sums a bounded number of loads,
// FillChoices takes a bounded number of solver steps).
//
// # Numerical stability
//
// Powers such as (1 − 1/m)^{kn} are evaluated as exp(kn·log1p(−1/m)), and
// 1 − e^x and log(1 − e^x) with math.Expm1 / math.Log1p, so results keep full
// relative precision for m up to 2^48 and beyond and for rates down to the
// smallest float64, and none of them is computed by math.Pow on 1 − 1/m.
// Comparisons between rates (in [OptimalK], [Size], ...) are done on their
// logarithms or on cancellation-free forward differences of them, so they
// stay exact where the rates themselves underflow or differ by less than an
// ulp.
package theory

import (
	"fmt"
	"github.com/bloomlab/bloomlab/internal/base"
	"math"
)

// MaxBits is the largest filter, in bits, that [Size] and [SizePartitioned]
// will return (2^48 bits = 32 TiB).
const MaxBits uint64 = 1 << 48

// maxK bounds the k that OptimalK and OptimalKPartitioned return: beyond it a
// float64 no longer represents every integer, so the search would be inexact.
const maxK = min(1<<53, math.MaxInt)

var (
	// ErrInvalid is wrapped by the errors that [Size] and [SizePartitioned]
	// return for an argument outside their domain.
	ErrInvalid error = paramError("theory: invalid argument")
	// ErrTooLarge is wrapped by the errors that [Size] and [SizePartitioned]
	// return when the filter would need more than [MaxBits] bits.
	ErrTooLarge error = paramError("theory: the filter would need more than 2^48 bits (32 TiB)")
)

// paramError is a parameter error of this package: it wraps the module's
// ErrParam without repeating its text.
type paramError string

func (e paramError) Error() string { return string(e) }
func (e paramError) Unwrap() error { return base.ErrParam }

// finite reports whether x is neither NaN nor ±Inf.
func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// nonNeg reports whether x is finite and x ≥ 0.
func nonNeg(x float64) bool { return finite(x) && x >= 0 }

// log1mexp returns log(1 − e^x) for x ≤ 0 with full relative precision
// (Mächler's log1mexp): −Inf for x = 0, 0 for x = −Inf.
func log1mexp(x float64) float64 {
	if x > -math.Ln2 {
		return math.Log(-math.Expm1(x))
	}
	return math.Log1p(-math.Exp(x))
}

// logZeroExact returns log((1 − 1/m)^{kn}) = kn·log1p(−1/m), the log of the
// probability that a given bit is still zero. The caller has validated
// m ≥ 1, n > 0, k ≥ 1; for m = 1 it is −Inf.
func logZeroExact(m, n float64, k int) float64 {
	return float64(k) * n * math.Log1p(-1/m)
}

// logZeroPartitioned returns log((1 − k/m)^n) = n·log1p(−k/m). The caller has
// validated m ≥ k ≥ 1 and n > 0; for m = k it is −Inf.
func logZeroPartitioned(m, n float64, k int) float64 {
	return n * math.Log1p(-float64(k)/m)
}

// validExact reports whether (m, n, k) is in the domain of FPExact:
// finite m ≥ 1, finite n ≥ 0, k ≥ 1.
func validExact(m, n float64, k int) bool {
	return finite(m) && m >= 1 && nonNeg(n) && k >= 1
}

// validPartitioned reports whether (m, n, k) is in the domain of
// FPPartitioned: finite m ≥ k ≥ 1 (every subarray has at least one bit),
// finite n ≥ 0.
func validPartitioned(m, n float64, k int) bool {
	return finite(m) && k >= 1 && m >= float64(k) && nonNeg(n)
}

// logFPExact is log(FPExact(m, n, k)) for validated arguments; −Inf for n = 0.
func logFPExact(m, n float64, k int) float64 {
	if n == 0 {
		return math.Inf(-1)
	}
	return float64(k) * log1mexp(logZeroExact(m, n, k))
}

// logFPPartitioned is log(FPPartitioned(m, n, k)) for validated arguments;
// −Inf for n = 0.
func logFPPartitioned(m, n float64, k int) float64 {
	if n == 0 {
		return math.Inf(-1)
	}
	return float64(k) * log1mexp(logZeroPartitioned(m, n, k))
}

// FPAsymptotic returns (1 − e^{−kn/m})^k, the false-positive rate of a
// standard Bloom filter in the limit of large m with n/m fixed (003 §3).
// Domain: finite m > 0, finite n ≥ 0, k ≥ 1; otherwise NaN. It is 0 for n = 0.
func FPAsymptotic(m, n float64, k int) float64 {
	if !finite(m) || m <= 0 || !nonNeg(n) || k < 1 {
		return math.NaN()
	}
	if n == 0 {
		return 0
	}
	return math.Exp(float64(k) * log1mexp(-float64(k)*n/m))
}

// FPExact returns (1 − (1 − 1/m)^{kn})^k, the false-positive rate of a
// standard Bloom filter with m bits, k independent uniform hash functions and
// n keys (003 §3). m may be any real ≥ 1 (it is the number of bits).
// Domain: finite m ≥ 1, finite n ≥ 0, k ≥ 1; otherwise NaN. It is 0 for
// n = 0 and 1 for m = 1 < n.
func FPExact(m, n float64, k int) float64 {
	if !validExact(m, n, k) {
		return math.NaN()
	}
	return math.Exp(logFPExact(m, n, k))
}

// FPPartitioned returns (1 − (1 − k/m)^n)^k, the false-positive rate of a
// partitioned Bloom filter: k subarrays of m/k bits, hash i addressing only
// subarray i (004 §5). For k ≥ 2 it is strictly larger than FPExact with the
// same arguments (and equal for k = 1). The formula is evaluated for any real
// m; the structure itself needs m to be a multiple of k.
// Domain: finite m ≥ k ≥ 1, finite n ≥ 0; otherwise NaN. It is 0 for n = 0.
func FPPartitioned(m, n float64, k int) float64 {
	if !validPartitioned(m, n, k) {
		return math.NaN()
	}
	return math.Exp(logFPPartitioned(m, n, k))
}

// FillExpected returns 1 − (1 − 1/m)^{kn}, the expected fraction of ones in a
// standard Bloom filter after n insertions (003 §3).
// Domain as for FPExact; otherwise NaN. It is 0 for n = 0.
func FillExpected(m, n float64, k int) float64 {
	if !validExact(m, n, k) {
		return math.NaN()
	}
	if n == 0 {
		return 0
	}
	return -math.Expm1(logZeroExact(m, n, k))
}

// FillExpectedPartitioned returns 1 − (1 − k/m)^n, the expected fraction of
// ones in a partitioned Bloom filter (in every subarray, hence overall) after
// n insertions (004 §5).
// Domain as for FPPartitioned; otherwise NaN. It is 0 for n = 0.
func FillExpectedPartitioned(m, n float64, k int) float64 {
	if !validPartitioned(m, n, k) {
		return math.NaN()
	}
	if n == 0 {
		return 0
	}
	return -math.Expm1(logZeroPartitioned(m, n, k))
}

// FPFromFill returns fill^k, the false-positive rate of a filter whose
// fraction of ones is fill, probed at k independent uniform positions
// (000 §2.1). Domain: fill in [0, 1], k ≥ 1; otherwise NaN.
func FPFromFill(fill float64, k int) float64 {
	if math.IsNaN(fill) || fill < 0 || fill > 1 || k < 1 {
		return math.NaN()
	}
	return math.Pow(fill, float64(k))
}

// CountFromFill returns −(m/k)·ln(1 − fill), the number of distinct keys n
// whose asymptotic expected fill 1 − e^{−kn/m} equals fill: the usual
// estimate of a filter's cardinality from its fraction of ones. It inverts
// the asymptotic fill exactly; against FillExpected (the exact fill) it
// overestimates n by the factor −m·ln(1 − 1/m) = 1 + 1/(2m) + O(1/m²).
// It returns +Inf for fill = 1 (a full filter carries no information about
// n) and 0 for fill = 0.
// Domain: finite m > 0, k ≥ 1, fill in [0, 1]; otherwise NaN.
func CountFromFill(m float64, k int, fill float64) float64 {
	if !finite(m) || m <= 0 || k < 1 || math.IsNaN(fill) || fill < 0 || fill > 1 {
		return math.NaN()
	}
	if fill == 1 {
		return math.Inf(1)
	}
	return -(m / float64(k)) * math.Log1p(-fill)
}

// diffExact returns log FPExact(m, n, k+1) − log FPExact(m, n, k), given
// c = −n·ln(1 − 1/m) finite and > 0 and k ≥ 1, in a form free of
// cancellation: with L(k) = ln(1 − e^{−ck}), the difference is
// L(k+1) + k·ln(1 + e^{−ck}(1 − e^{−c})/(1 − e^{−ck})). Its sign is reliable
// even where the log-rates themselves are too large to subtract.
func diffExact(c float64, k int) float64 {
	kf := float64(k)
	r := math.Exp(-c*kf) * -math.Expm1(-c) / -math.Expm1(-c*kf)
	return log1mexp(-c*(kf+1)) + kf*math.Log1p(r)
}

// diffPartitioned returns log FPPartitioned(m, n, k+1) − log
// FPPartitioned(m, n, k) for validated n > 0 and 1 ≤ k < m, free of
// cancellation: with z_k = (1 − k/m)^n and L(k) = ln(1 − z_k), it is
// L(k+1) + k·ln(1 + z_k·(1 − (1 − 1/(m−k))^n)/(1 − z_k)).
func diffPartitioned(m, n float64, k int) float64 {
	kf := float64(k)
	a := n * math.Log1p(-kf/m) // ln z_k
	d := -math.Expm1(n * math.Log1p(-1/(m-kf)))
	r := math.Exp(a) * d / -math.Expm1(a)
	return log1mexp(n*math.Log1p(-(kf+1)/m)) + kf*math.Log1p(r)
}

// OptimalK returns the integer k ≥ 1 that minimises FPExact(m, n, k); of two
// equal rates (to float64 rounding) it returns the smaller k. The continuous
// minimiser is ln2/(−n·ln(1 − 1/m)) ≈ ln2·m/n (003 §3) and the rate is
// unimodal in k, so the answer is its floor or its ceiling, chosen by the
// sign of a cancellation-free forward difference. It returns 1 for n = 0 and
// for m = 1 (where every k gives rate 1 for n > 0).
// It returns 0, which is never a valid k, for arguments outside the domain of
// FPExact or when the optimum exceeds 2^53 (or math.MaxInt).
func OptimalK(m, n float64) int {
	if !validExact(m, n, 1) {
		return 0
	}
	if n == 0 {
		return 1
	}
	c := -n * math.Log1p(-1/m) // rate = (1 − e^{−ck})^k
	if math.IsInf(c, 1) {
		return 1
	}
	kc := math.Ln2 / c
	if kc+1 >= maxK {
		return 0
	}
	k := int(kc) // floor, ≥ 0
	if k == 0 {
		return 1 // the rate increases from kc < 1 on
	}
	if diffExact(c, k) < 0 {
		return k + 1
	}
	return k
}

// OptimalKPartitioned returns the integer k in [1, m] that minimises
// FPPartitioned(m, n, k); of equal rates (to float64 rounding) it returns the
// smallest k. The rate is unimodal in k, so the optimum is found by binary
// search on the sign of a cancellation-free forward difference. It is near
// ln2·m/n for large m/n but not equal to it (for n = 1 it is m/e). m need not
// be a multiple of the result. It returns 1 for n = 0, and 0, which is never
// a valid k, for m < 1, n < 0, a non-finite argument, or an optimum above
// 2^53 (or math.MaxInt).
func OptimalKPartitioned(m, n float64) int {
	if !validPartitioned(m, n, 1) {
		return 0
	}
	if n == 0 {
		return 1
	}
	kmax, capped := maxK, true
	if m < maxK {
		kmax, capped = int(m), false
	}
	// Smallest k in [1, kmax) where the rate stops falling; kmax if none.
	lo, hi := 1, kmax
	for lo < hi {
		mid := lo + (hi-lo)/2
		if diffPartitioned(m, n, mid) >= 0 {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	if capped && lo == kmax {
		return 0 // the rate still falls at maxK: the optimum is beyond it
	}
	return lo
}

// checkSizeArgs validates the arguments shared by Size and SizePartitioned.
func checkSizeArgs(n uint64, eps float64) error {
	if n == 0 {
		return fmt.Errorf("%w: n = 0, want n ≥ 1", ErrInvalid)
	}
	if math.IsNaN(eps) || eps <= 0 || eps >= 1 {
		return fmt.Errorf("%w: eps = %g, want 0 < eps < 1", ErrInvalid, eps)
	}
	return nil
}

// tooLarge returns the error for a filter that would exceed MaxBits.
func tooLarge(n uint64, eps float64) error {
	return fmt.Errorf("%w: n = %d, eps = %g", ErrTooLarge, n, eps)
}

// smallestTrue returns the smallest x in (lo, hi] with pred(x), given that
// pred is monotone (false then true), pred(lo) is false (or lo is below the
// domain) and pred(hi) is true.
func smallestTrue(lo, hi uint64, pred func(uint64) bool) uint64 {
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if pred(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// searchUp returns the smallest x in [1, limit] with pred(x), for pred
// monotone in x (false then true), starting from the guess start (any value
// in [1, limit]); ok is false if pred(limit) is false. It evaluates pred
// O(log(limit)) times.
func searchUp(start, limit uint64, pred func(uint64) bool) (x uint64, ok bool) {
	counted := pred
	pred = func(x uint64) bool { base.PlanStep(); return counted(x) }
	start = min(max(start, 1), limit)
	if pred(start) {
		// Walk down in doubling steps to an x with pred false (or 0).
		hi, step := start, uint64(1)
		for {
			if hi <= step {
				return smallestTrue(0, hi, pred), true
			}
			lo := hi - step
			if !pred(lo) {
				return smallestTrue(lo, hi, pred), true
			}
			hi, step = lo, 2*step
		}
	}
	lo, step := start, uint64(1)
	for {
		if limit-lo <= step {
			if !pred(limit) {
				return 0, false
			}
			return smallestTrue(lo, limit, pred), true
		}
		hi := lo + step
		if pred(hi) {
			return smallestTrue(lo, hi, pred), true
		}
		lo, step = hi, 2*step
	}
}

// Size returns the smallest number of bits m such that some integer k gives
// FPExact(m, n, k) ≤ eps, and the k that minimises FPExact at that m
// (OptimalK(m, n)). So FPExact(m, n, k) ≤ eps and, for every k',
// FPExact(m−1, n, k') > eps. The search starts from the continuous bound
// −n·ln(eps)/ln²2 (003 §3, 004 §4), which never exceeds the answer, and
// finishes with an exact binary search over m, using that min_k FPExact is
// decreasing in m.
//
// Errors wrap ErrInvalid for n = 0 or eps outside (0, 1), and ErrTooLarge if
// m would exceed MaxBits.
func Size(n uint64, eps float64) (m uint64, k int, err error) {
	if err := checkSizeArgs(n, eps); err != nil {
		return 0, 0, err
	}
	nf, logEps := float64(n), math.Log(eps)
	start := nf * -logEps / (math.Ln2 * math.Ln2)
	if start*(1-1e-9) > float64(MaxBits) {
		return 0, 0, tooLarge(n, eps)
	}
	fits := func(m uint64) bool {
		mf := float64(m)
		return logFPExact(mf, nf, OptimalK(mf, nf)) <= logEps
	}
	m, ok := searchUp(uint64(start), MaxBits, fits)
	if !ok {
		return 0, 0, tooLarge(n, eps)
	}
	return m, OptimalK(float64(m), nf), nil
}

// SizePartitioned returns the smallest number of bits m such that some
// integer k dividing m gives FPPartitioned(m, n, k) ≤ eps (a partitioned
// filter of k subarrays of m/k bits, 004 §5), and that k; among several
// divisors reaching the same m it returns the one with the lowest rate, then
// the smallest. So FPPartitioned(m, n, k) ≤ eps, m is a multiple of k, and
// no m' < m has a divisor k' with FPPartitioned(m', n, k') ≤ eps.
//
// For each k the smallest subarray size is found by binary search (the rate
// is decreasing in m/k); the k scanned are those whose continuous lower
// bound k·n/(−ln(1 − eps^{1/k})), minimal at k = log2(1/eps), does not
// exceed the best m found, so the scan is exact.
//
// Errors wrap ErrInvalid for n = 0 or eps outside (0, 1), and ErrTooLarge if
// m would exceed MaxBits.
func SizePartitioned(n uint64, eps float64) (m uint64, k int, err error) {
	if err := checkSizeArgs(n, eps); err != nil {
		return 0, 0, err
	}
	nf, logEps := float64(n), math.Log(eps)
	if nf*-logEps/(math.Ln2*math.Ln2)*(1-1e-9) > float64(MaxBits) {
		return 0, 0, tooLarge(n, eps)
	}
	// lower(k) ≤ the smallest feasible m for k: with (1 − 1/p)^n ≤ e^{−n/p}
	// the exact rate is at least (1 − e^{−n/p})^k.
	lower := func(k int) float64 {
		return float64(k) * nf / -log1mexp(logEps/float64(k))
	}
	best, bestK, bestLog := uint64(math.MaxUint64), 0, 0.0
	try := func(k int) (stop bool) {
		kk := uint64(k)
		lb := lower(k)
		if lb*(1-1e-9) > float64(best) || lb*(1-1e-9) > float64(MaxBits) {
			return true
		}
		fits := func(p uint64) bool {
			return logFPPartitioned(float64(p*kk), nf, k) <= logEps
		}
		p, ok := searchUp(uint64(lb/float64(k)), MaxBits/kk, fits)
		if !ok {
			return false
		}
		m := p * kk
		lf := logFPPartitioned(float64(m), nf, k)
		if m < best || (m == best && (lf < bestLog || lf == bestLog && k < bestK)) {
			best, bestK, bestLog = m, k, lf
		}
		return false
	}
	k0 := max(1, int(math.Round(-logEps/math.Ln2)))
	try(k0)
	for k := k0 - 1; k >= 1 && !try(k); k-- {
	}
	for k := k0 + 1; uint64(k) <= MaxBits && !try(k); k++ {
	}
	if bestK == 0 {
		return 0, 0, tooLarge(n, eps)
	}
	return best, bestK, nil
}

// LowerBoundBits returns n·log2(1/eps), the number of bits that any
// structure representing every n-key set with false-positive rate at most
// eps and no false negatives must use, for a universe much larger than n
// (004 §4). Domain: finite n ≥ 0, eps in (0, 1]; otherwise NaN.
func LowerBoundBits(n, eps float64) float64 {
	if !nonNeg(n) || math.IsNaN(eps) || eps <= 0 || eps > 1 {
		return math.NaN()
	}
	return n * -math.Log2(eps)
}

// Overhead returns m / LowerBoundBits(n, eps): how many times the lower
// bound of 004 §4 a filter of m bits uses. An optimally configured Bloom
// filter tends to log2(e) = 1/ln2 ≈ 1.4427 (004 §4). Domain: finite m ≥ 0
// and the domain of LowerBoundBits; it returns NaN outside it and when the
// lower bound is 0 (n = 0 or eps = 1), where the ratio is undefined.
func Overhead(m, n, eps float64) float64 {
	lb := LowerBoundBits(n, eps)
	if !nonNeg(m) || math.IsNaN(lb) || lb == 0 {
		return math.NaN()
	}
	return m / lb
}

// FPAtOptimalK returns (1/2)^{ln2·b} = e^{−ln²2·b} ≈ 0.6185^b, the
// asymptotic false-positive rate with b = m/n bits per key and the
// continuous optimum k = ln2·b hash functions (003 §3). Integer k cannot do
// better: FPAsymptotic(m, n, k) ≥ FPAtOptimalK(m/n) for every k.
// Domain: finite b ≥ 0; otherwise NaN.
func FPAtOptimalK(bitsPerKey float64) float64 {
	if !nonNeg(bitsPerKey) {
		return math.NaN()
	}
	return math.Exp(-math.Ln2 * math.Ln2 * bitsPerKey)
}
