package theory

// The rate of a real filter: its index scheme's pair floor (001 §2, §4.2,
// §6) and probes drawn with replacement.
//
// The closed forms above (FPExact, FPPartitioned, FPChoices) take k
// independent uniform positions per key and are the papers' idealisation. A
// filter indexed by two hashes (package hashing's double-hashing and
// partition schemes) derives all k positions of a key from one reduced pair
// (h1, h2), so a query whose pair equals an inserted key's probes exactly
// that key's positions: a false positive whatever the fill. 001 §2 states
// the case analysis for the partition scheme over a prime p (two keys share
// no position, exactly one, or all k, the last with probability 1/p²) and
// §6 observes the excess it causes at small n; the enhanced and extended
// offsets f(i) of §4.2 do not remove it, since they depend on i alone. With
// S equally likely position sets per key (PositionSets) and n keys, the
// probability that some key took the query's set is
//
//	floor = 1 − (1 − 1/S)^n ≈ n/S,
//
// a floor under the rate that no fill shows and that falls only like 1/m²
// (m' = m/k for the partition scheme): n/m'² for n = 10^4 keys at 10^-5
// with m' = 14,099 is 5·10^-5, five times the target. Schemes of k
// independent positions (hashing.Independent, PartitionIndependent) have
// no floor.
//
// Plain double hashing (f = 0) and the extended-square scheme (f(i) = i²,
// whose differences f(i+j) − f(i) = 2ij + j² are affine in i) have a
// second structured overlap: the pair (h1 + j·h2 + f(j), h2 + f(j+1) −
// f(j) − f(1)) probes the query's sequence shifted by j steps, so it shares
// all but j of the query's k positions, at one end; so does the shifted
// reversal. With 4 such pairs per j the probability that one of the n keys
// covers all but j positions and the fill covers the rest is about
// n·(4/(m·s))·Σ_{0<j<k} fill^j (s = hashing.DoubleSteps(m)): at 001 §6's
// corner (m = 80,000, k = 11, n = 5,000) it adds 6.2·10^-6 to the floor's
// 3.1·10^-6, which is what separates the measured double-hashing rate
// 4.70·10^-4 from p = 4.587·10^-4 (README). Enhanced (f(i) = (i³ − i)/6)
// and extended-cube offsets have no such shift, and the partition scheme's
// positions are tied to their subarrays, so neither has this term.
//
// The rest of the rate is the papers' formula with one change for a
// standard filter: a query's k positions are drawn with replacement, so
// they are D ≤ k distinct positions, and the probability that D given
// positions are all set is at most fill^D (the occupancy of the bins is
// negatively associated). E[fill^D] (FPFromFillDraws) is therefore an upper
// bound on the rate of k independent positions, equal to fill^k up to a
// relative O(k²/m) and 3–6 times it for the tiny filters where FPExact
// misses (n = 1 at 10^-4: m = 20, k = 14 gives FPExact 8.6·10^-5 while the
// exact rate is 2.6·10^-4; the bound says 1.5·10^-3).
//
// FPScheme puts these together:
//
//	rate = 1 − (1 − floor)·(1 − shift)·(1 − base),
//
// base = E[f̄^D] with f̄ = FillExpected for a standard filter; for the
// partition scheme, 001 §2's own term: a key that does not share the
// query's pair shares at most one position (p prime), in subarray i with
// probability 1/(p + 1), and base is the probability that n such keys
// cover all k subarrays (exact for n·k ≤ 4096, its product bound beyond);
// FPPartitioned for PartitionIndependent, which is exact. For the partition
// scheme over a prime subarray size and for the independent schemes the
// result is exact or an upper bound; for the standard filter's
// double-hashing schemes it is a model whose floor is exact, checked by
// measurement (the kinds' FP tests, and the exact rate of a small filter's
// state, internal/bitvec). The sizing (SizeScheme) finds the smallest m,
// and the k ≤ kmax, whose rate meets the target, floor included; it takes m
// prime for the standard filter's double-hashing schemes and for the
// partition scheme's subarrays, where every step has order m (no probe
// sequence cycles, and two pairs share no position, one, or all).

import (
	"fmt"
	"math"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/base"
)

// doubleScheme reports whether s derives a standard filter's positions by
// double hashing over all m positions.
func doubleScheme(s hashing.Scheme) bool {
	switch s {
	case hashing.Double, hashing.Enhanced, hashing.ExtendedSquare, hashing.ExtendedCube:
		return true
	}
	return false
}

// PositionSets returns S, the number of equally likely position sets a key
// takes under scheme s with m positions and k per key, counted so that a
// key takes the same set as a given other key with probability 1/S: the
// pair floor's S (see the section above). It is +Inf where there is no
// floor: for schemes of independent positions (Independent,
// PartitionIndependent, Custom) and for k = 1 (one position, which the
// formulas already count).
//
//   - Double and ExtendedSquare: m·s/2, s = hashing.DoubleSteps(m), since
//     the reversed pair gives the same set (for ExtendedSquare the reversal
//     (h1 + (k−1)·h2 + (k−1)², −h2 − 2(k−1)) exists because i² is
//     quadratic).
//   - Enhanced and ExtendedCube: m·s for k ≥ 4; m·s/2 for k = 2 and for
//     k = 3, where the reversal exists for any offsets (for enhanced only
//     on odd m, where its step may be even).
//   - Partition and PrimePartition: p², p = m/k, since h1 and h2 are
//     reduced to [0, p) and the positions are tied to their subarrays.
//
// The counts are exact when the steps have order above k (m prime, or a
// power of two times a number with no factor below k); a composite m
// whose steps can cycle within k probes has a few more coincidences.
func PositionSets(s hashing.Scheme, m uint64, k int) float64 {
	if k < 2 || m == 0 {
		return math.Inf(1)
	}
	mf := float64(m)
	switch s {
	case hashing.Double, hashing.ExtendedSquare:
		return mf * float64(hashing.DoubleSteps(m)) / 2
	case hashing.Enhanced, hashing.ExtendedCube:
		// The reversal of k = 3 takes the step −h2 − f(2) + 2f(1): odd,
		// so a step, for extended-cube (f(2) = 8) on any m but for
		// enhanced (f(2) = 1) only on odd m.
		if k == 2 || k == 3 && (s == hashing.ExtendedCube || m&1 == 1) {
			return mf * float64(hashing.DoubleSteps(m)) / 2
		}
		return mf * float64(hashing.DoubleSteps(m))
	case hashing.Partition, hashing.PrimePartition:
		p := float64(m / uint64(k))
		return p * p
	}
	return math.Inf(1)
}

// shifted reports whether scheme s has the shifted and reversed partial
// overlaps of plain double hashing (see the section above).
func shifted(s hashing.Scheme) bool { return s == hashing.Double || s == hashing.ExtendedSquare }

// FPPairFloor returns 1 − (1 − 1/sets)^n: the probability that at least one
// of n keys, each taking one of sets equally likely position sets
// independently, took the one a query takes. It is 0 for sets = +Inf (no
// floor) or n = 0. Domain: sets ≥ 1, finite n ≥ 0; otherwise NaN.
func FPPairFloor(sets, n float64) float64 {
	if math.IsNaN(sets) || sets < 1 || !nonNeg(n) {
		return math.NaN()
	}
	return -math.Expm1(logNoMatch(sets, n))
}

// logNoMatch returns log((1 − 1/sets)^n) for validated arguments.
func logNoMatch(sets, n float64) float64 {
	if math.IsInf(sets, 1) || n == 0 {
		return 0
	}
	return n * math.Log1p(-1/sets)
}

// logAdd returns log(x + (1 − x)·y) given lx = log x and ly = log y, x and
// y in [0, 1]: the log of the probability that one of two independent
// events happens.
func logAdd(lx, ly float64) float64 {
	if math.IsInf(lx, -1) {
		return ly
	}
	if math.IsInf(ly, -1) {
		return lx
	}
	a, b := lx, ly+log1mexp(lx)
	if a < b {
		a, b = b, a
	}
	return a + math.Log1p(math.Exp(b-a))
}

// logFPFromFillDraws is log E[fill^D] for lf = log fill ≤ 0, m ≥ 1 and
// 1 ≤ k ≤ 64 (D the number of distinct values among k uniform draws from
// m): a dynamic programme over the draws, in logs.
func logFPFromFillDraws(lf, m float64, k int) float64 {
	if math.IsInf(lf, -1) {
		return lf
	}
	if k > hashing.MaxK {
		return float64(k) * lf // never reached by the callers
	}
	// p[j] = P(j distinct after t draws).
	var p [hashing.MaxK + 1]float64
	p[0] = 1
	for t := 0; t < k; t++ {
		for j := t + 1; j >= 1; j-- {
			same := p[j] * math.Min(float64(j)/m, 1)
			p[j] = same + p[j-1]*math.Max(1-float64(j-1)/m, 0)
		}
		p[0] = 0
	}
	best := math.Inf(-1)
	var terms [hashing.MaxK + 1]float64
	for j := 1; j <= k; j++ {
		terms[j] = math.Inf(-1)
		if p[j] > 0 {
			terms[j] = math.Log(p[j]) + float64(j)*lf
			best = max(best, terms[j])
		}
	}
	if math.IsInf(best, -1) {
		return best
	}
	sum := 0.0
	for j := 1; j <= k; j++ {
		sum += math.Exp(terms[j] - best)
	}
	return best + math.Log(sum)
}

// FPFromFillDraws returns E[fill^D]: the probability that k positions drawn
// uniformly with replacement from m, of which a fraction fill is set, are
// all set, taking the D distinct ones as independent. It bounds the rate of
// a standard filter of k independent hash functions from above (see the
// section above) and exceeds FPFromFill(fill, k) = fill^k by a relative
// O(k²/m). Domain: fill in [0, 1], finite m ≥ 1, 1 ≤ k ≤ 64; otherwise NaN.
func FPFromFillDraws(fill, m float64, k int) float64 {
	if math.IsNaN(fill) || fill < 0 || fill > 1 || !finite(m) || m < 1 || k < 1 || k > hashing.MaxK {
		return math.NaN()
	}
	return math.Exp(logFPFromFillDraws(math.Log(fill), m, k))
}

// logFPPairs is log of FPPairs for validated arguments, lbase = log base.
func logFPPairs(s hashing.Scheme, m uint64, n float64, k int, fill, lbase float64) float64 {
	if n == 0 {
		return lbase
	}
	sets := PositionSets(s, m, k)
	if math.IsInf(sets, 1) {
		return lbase
	}
	l := logAdd(log1mexp(logNoMatch(sets, n)), lbase)
	if shifted(s) && k >= 2 && n > 1 {
		// Per key: 4/(m·s) pairs per shift j, each leaving j positions to
		// the other keys' bits (the fill less this key's k).
		f := max(fill-float64(k)/float64(m), 0)
		g := 0.0
		for j, fj := 1, f; j < k; j, fj = j+1, fj*f {
			g += fj
		}
		w := 4 * g / (float64(m) * float64(hashing.DoubleSteps(m)))
		if w > 0 {
			l = logAdd(log1mexp(n*math.Log1p(-math.Min(w, 1))), l)
		}
	}
	return l
}

// FPPairs returns the false-positive rate of a filter with index scheme s,
// m positions (bits or counters) and k per key holding n keys, given base,
// its rate with the positions taken as independent (a formula, or the
// state's fill^k), and fill, the fraction of its positions set: base with
// the pair floor of s added (and for Double and ExtendedSquare the shifted
// overlaps, whose uncovered end the other keys' bits, about fill − k/m,
// must cover), 1 − (1 − floor)·(1 − shift)·(1 − base) (see the section
// above). It is base itself for schemes without a floor. Domain: m ≥ 1,
// finite n ≥ 0, k ≥ 1, fill and base in [0, 1]; otherwise NaN.
func FPPairs(s hashing.Scheme, m uint64, n float64, k int, fill, base float64) float64 {
	if m < 1 || !nonNeg(n) || k < 1 || !(fill >= 0 && fill <= 1) || !(base >= 0 && base <= 1) {
		return math.NaN()
	}
	if n == 0 || math.IsInf(PositionSets(s, m, k), 1) {
		return base
	}
	return math.Exp(logFPPairs(s, m, n, k, fill, math.Log(base)))
}

// logFPScheme is log FPScheme for validated arguments.
func logFPScheme(s hashing.Scheme, m uint64, n float64, k int) float64 {
	if n == 0 {
		return math.Inf(-1)
	}
	mf := float64(m)
	switch {
	case (s == hashing.Partition || s == hashing.PrimePartition) && k >= 2:
		// 001 §2: a key that does not share the query's pair shares at
		// most one of its positions (p prime), in subarray i with
		// probability (p − 1)/(p² − 1) = 1/(p + 1) for each i.
		p := float64(m / uint64(k))
		fill := -math.Expm1(logZeroPartitioned(mf, n, k))
		return logFPPairs(s, m, n, k, fill, logCoverAll(n, k, 1/(p+1)))
	case s.Partitioned():
		fill := -math.Expm1(logZeroPartitioned(mf, n, k))
		return logFPPairs(s, m, n, k, fill, logFPPartitioned(mf, n, k))
	}
	lz := logZeroExact(mf, n, k)
	lf := log1mexp(lz) // log of the expected fill
	return logFPPairs(s, m, n, k, -math.Expm1(lz), logFPFromFillDraws(lf, mf, k))
}

// maxCoverDP bounds n·k for the exact coverage programme: its cost per
// evaluation, which the sizing searches pay too.
const maxCoverDP = 1 << 12

// logCoverAll returns log P(every one of k bins holds a ball) when n balls
// each land in bin i with probability q (for each i < k, k·q ≤ 1) and in
// none otherwise. For n·k ≤ maxCoverDP it is exact, a programme over the
// number of bins covered; beyond, the product bound (1 − (1 − q)^n)^k,
// which holds because the bins' counts are negatively associated. The
// bound is tight for n ≫ k² (relatively O(k²/n) above) and too high when
// few keys must cover many bins (n = 3, k = 3: 4x, since each key covers
// one bin at most), which the programme covers.
func logCoverAll(n float64, k int, q float64) float64 {
	bound := float64(k) * log1mexp(n*math.Log1p(-q))
	if n*float64(k) > maxCoverDP || n != math.Trunc(n) {
		return bound
	}
	if n < float64(k) {
		return math.Inf(-1) // each ball covers one bin at most
	}
	var c [hashing.MaxK + 1]float64 // c[j] = P(j bins covered)
	c[0] = 1
	for range int(n) {
		for j := k; j >= 1; j-- {
			c[j] = c[j]*(1-float64(k-j)*q) + c[j-1]*float64(k-j+1)*q
		}
		c[0] *= 1 - float64(k)*q
	}
	if !(c[k] > 0) {
		return bound // underflow (n ≥ k): keep the bound
	}
	return math.Log(c[k])
}

// FPScheme returns the expected false-positive rate of a standard filter
// (or, for a partitioned scheme, a partitioned filter) of m positions with
// k per key holding n distinct keys, indexed by scheme s: the formula with
// the pair floor of s and the probes' repeats (see the section above). It
// is at least the floor and at least FPExact(m, n, k) for a standard
// filter (FPPartitioned for PartitionIndependent; for the partition scheme
// the coverage term is 001 §2's, exact at small n). Domain: 1 ≤ m ≤ 2^48
// (m ≥ k for a partitioned scheme), finite n ≥ 0, 1 ≤ k ≤ 64; otherwise
// NaN.
func FPScheme(s hashing.Scheme, m uint64, n float64, k int) float64 {
	if !validScheme(m, n, k, s) {
		return math.NaN()
	}
	return math.Exp(logFPScheme(s, m, n, k))
}

func validScheme(m uint64, n float64, k int, s hashing.Scheme) bool {
	return m >= 1 && m <= MaxBits && nonNeg(n) && k >= 1 && k <= hashing.MaxK &&
		(!s.Partitioned() || m >= uint64(k))
}

// SizeScheme returns the smallest m, and a k in [1, kmax] (kmax ≤ 64), for
// which a filter indexed by scheme s holding n keys meets eps by FPScheme,
// the pair floor included: the sizing of the kinds' NewWithEstimates.
//
//   - Standard filter, double-hashing schemes: m is the smallest prime for
//     which the k near OptimalK(m, n) (at most kmax) gives
//     FPScheme(s, m, n, k) ≤ eps. A prime m makes every step of order m,
//     so the floor counts PositionSets exactly, and gives m − 1 steps where
//     an even m has m/2.
//   - Standard filter, Independent: the smallest such m, any m.
//   - Partitioned schemes: for each k ≤ kmax the smallest subarray size p
//     with FPScheme(s, k·p, n, k) ≤ eps, prime for Partition (which 001 §2
//     analyses over a prime: two pairs then share no position, one, or all)
//     and PrimePartition; the smallest m = k·p wins, on a tie the lower
//     rate, then the smaller k.
//
// Where the floor rules (small n), k goes up to kmax, since the floor does
// not depend on k and more probes only lower the rest, but for the
// double-hashing schemes never above m/5 (kCap). Errors wrap
// ErrInvalid for n = 0, eps outside (0, 1), kmax outside [1, 64] or a
// custom scheme, and ErrTooLarge if m would exceed MaxBits. The time is
// bounded: O(log MaxBits) evaluations per k tried.
func SizeScheme(s hashing.Scheme, n uint64, eps float64, kmax int) (m uint64, k int, err error) {
	return sizeScheme(s, n, eps, kmax, 0)
}

// SizeSchemeUnit is SizeScheme for a standard filter whose m must be a
// multiple of unit (a scalable link's words: 64): the smallest such m. It
// is SizeScheme for unit 0.
func SizeSchemeUnit(s hashing.Scheme, n uint64, eps float64, kmax int, unit uint64) (m uint64, k int, err error) {
	if s.Partitioned() && unit != 0 {
		return 0, 0, fmt.Errorf("%w: a multiple of %d bits for the partitioned scheme %v", ErrInvalid, unit, s)
	}
	return sizeScheme(s, n, eps, kmax, unit)
}

func sizeScheme(s hashing.Scheme, n uint64, eps float64, kmax int, unit uint64) (uint64, int, error) {
	if err := checkSizeArgs(n, eps); err != nil {
		return 0, 0, err
	}
	if kmax < 1 || kmax > hashing.MaxK {
		return 0, 0, fmt.Errorf("%w: kmax = %d, want 1 … %d", ErrInvalid, kmax, hashing.MaxK)
	}
	if !s.Valid() || s == hashing.Custom {
		return 0, 0, fmt.Errorf("%w: scheme %v cannot be sized", ErrInvalid, s)
	}
	nf, logEps := float64(n), math.Log(eps)
	start := nf * -logEps / (math.Ln2 * math.Ln2)
	if start*(1-1e-9) > float64(MaxBits) {
		return 0, 0, tooLarge(n, eps)
	}
	if s.Partitioned() {
		return sizePartitionedScheme(s, n, eps, kmax)
	}
	best := func(m uint64) (int, float64) { return bestK(s, m, nf, kmax) }
	fits := func(m uint64) bool { _, l := best(m); return l <= logEps }
	switch {
	case unit > 0:
		j, ok := searchUp(uint64(start)/unit, MaxBits/unit, func(j uint64) bool { return fits(j * unit) })
		if !ok {
			return 0, 0, tooLarge(n, eps)
		}
		k, _ := best(j * unit)
		return j * unit, k, nil
	case doubleScheme(s):
		// Search as if m were odd (the rate is then monotone in m), then
		// take the next prime, which only lowers it.
		m, ok := searchUp(uint64(start), MaxBits, func(m uint64) bool { return fits(m | 1) })
		if !ok {
			return 0, 0, tooLarge(n, eps)
		}
		for m = hashing.NextPrime(m); m <= MaxBits; m = hashing.NextPrime(m + 1) {
			base.PlanStep()
			if fits(m) {
				k, _ := best(m)
				return m, k, nil
			}
		}
		return 0, 0, tooLarge(n, eps)
	default:
		m, ok := searchUp(uint64(start), MaxBits, fits)
		if !ok {
			return 0, 0, tooLarge(n, eps)
		}
		k, _ := best(m)
		return m, k, nil
	}
}

// bestK returns the k in [1, kmax] near OptimalK(m, n) with the lowest rate
// at m, and that rate's log. For the double-hashing schemes k stays at
// most max(2, m/5) (kCap).
func bestK(s hashing.Scheme, m uint64, n float64, kmax int) (int, float64) {
	if doubleScheme(s) {
		kmax = min(kmax, kCap(m))
	}
	k0 := min(max(OptimalK(float64(m), n), 1), kmax)
	bk, bl := 0, math.Inf(1)
	for k := max(k0-1, 1); k <= min(k0+1, kmax); k++ {
		if l := logFPScheme(s, m, n, k); l < bl {
			bk, bl = k, l
		}
	}
	return bk, bl
}

// kCap bounds the k the sizing gives a double-hashing filter of m
// positions: max(2, m/5). Where the floor rules (a handful of keys) the
// optimal k would be most of m, and with more probes than about m/5 the
// probe sequences of a composite m overlap beyond PositionSets' count: the
// exact rate of one key in 64 bits is 1.19 times FPScheme at k = 20 and 1.5
// times at k = 43, and equal to it up to k = 12 (128 bits: equal to k = 20,
// 1.05 at k = 43; prime m: equal throughout).
func kCap(m uint64) int { return int(max(2, min(m/5, hashing.MaxK))) }

// sizePartitionedScheme is SizeScheme for a partitioned scheme.
func sizePartitionedScheme(s hashing.Scheme, n uint64, eps float64, kmax int) (uint64, int, error) {
	nf, logEps := float64(n), math.Log(eps)
	prime := s == hashing.Partition || s == hashing.PrimePartition
	bestM, bestK, bestLog := uint64(math.MaxUint64), 0, 0.0
	for k := 1; k <= kmax; k++ {
		kk := uint64(k)
		fits := func(p uint64) bool { return logFPScheme(s, p*kk, nf, k) <= logEps }
		// The continuous bound of SizePartitioned is a lower bound here too.
		lb := float64(k) * nf / -log1mexp(logEps/float64(k))
		if lb*(1-1e-9) > float64(min(bestM, MaxBits)) {
			continue
		}
		p, ok := searchUp(uint64(lb/float64(k)), MaxBits/kk, fits)
		if !ok {
			continue
		}
		if prime && (k >= 2 || s == hashing.PrimePartition) {
			if p = hashing.NextPrime(p); p > MaxBits/kk {
				continue
			}
		}
		m := p * kk
		lf := logFPScheme(s, m, nf, k)
		if m < bestM || (m == bestM && lf < bestLog) {
			bestM, bestK, bestLog = m, k, lf
		}
	}
	if bestK == 0 {
		return 0, 0, tooLarge(n, eps)
	}
	return bestM, bestK, nil
}
