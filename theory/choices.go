package theory

// The Bloom filter with c choices of Lumetta and Mitzenmacher, "Using the
// Power of Two Choices to Improve Bloom Filters" (000 §3): c groups of k hash
// functions, each key covered by the group that needs the fewest new ones.
//
//   - [FillChoices]: the fraction of ones z(1) after n keys in m bits under
//     the online greedy algorithm, from the differential equation (3.2)
//     generalised to c choices, dz/dt = E[min of c iid Bin(k, 1 − z)] / (m/n),
//     z(0) = 0, t ∈ [0, 1] (Theorem 3.3: the real fill converges to it).
//   - [FPFromFillChoices]: 1 − (1 − z^k)^c, the false-positive rate given a
//     fraction of ones z (a query is positive if any of its c groups is
//     covered; 000 §3).
//   - [FPChoices]: the two combined, the predicted online rate.
//   - [OptimalKChoices], [SizeChoices]: the k minimising [FPChoices] and the
//     smallest m reaching a rate.
//
// For c = 1 the equation is dz/dt = k(1 − z)/(m/n), whose solution
// 1 − e^{−kn/m} is the standard filter's asymptotic fill (000 §3.1), so
// FPChoices(b, k, 1) = FPAsymptotic(b, 1, k).

import (
	"fmt"
	"math"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/base"
)

// Limits of the c-choice functions: k hash functions per group and c groups.
const (
	MaxChoicesK = 256
	MaxChoicesC = 64
)

// odeTol bounds the local relative error of each step of the ODE solver;
// the result is accurate to about 1e-11 (the tests check it against the
// closed form for c = 1 and against a finer solve).
const odeTol = 1e-12

// validChoices reports whether (b, k, c) is in the domain of the c-choice
// functions: b = m/n finite and > 0, 1 ≤ k ≤ MaxChoicesK, 1 ≤ c ≤ MaxChoicesC.
func validChoices(b float64, k, c int) bool {
	return finite(b) && b > 0 && k >= 1 && k <= MaxChoicesK && c >= 1 && c <= MaxChoicesC
}

// ExpectedMinBinomial returns E[min(B_1, …, B_c)] for c independent
// Bin(k, p) variables, computed exactly from the binomial tail:
// Σ_{j=1..k} P(Bin(k, p) ≥ j)^c. It is the expected number of new ones the
// online greedy algorithm sets for one key when a fraction 1 − p of the bits
// is one (000 eq. 3.1). Domain: 1 ≤ k ≤ MaxChoicesK, 1 ≤ c ≤ MaxChoicesC,
// p ∈ [0, 1]; otherwise NaN.
func ExpectedMinBinomial(k, c int, p float64) float64 {
	if k < 1 || k > MaxChoicesK || c < 1 || c > MaxChoicesC || !(p >= 0 && p <= 1) {
		return math.NaN()
	}
	var pmf [MaxChoicesK + 1]float64
	binomialPMF(k, p, pmf[:k+1])
	// tail = P(Bin ≥ j) for j = k, k−1, …, 1.
	e, tail := 0.0, 0.0
	for j := k; j >= 1; j-- {
		tail += pmf[j]
		e += powInt(min(tail, 1), c)
	}
	return e
}

// binomialPMF writes P(Bin(k, p) = i) for i = 0..k to out, starting the
// recursion from the end whose probability is at least 2^−k, so nothing
// underflows for k ≤ MaxChoicesK.
func binomialPMF(k int, p float64, out []float64) {
	q := 1 - p
	switch {
	case p == 0:
		clear(out)
		out[0] = 1
		return
	case q == 0:
		clear(out)
		out[k] = 1
		return
	}
	if p >= 0.5 { // from i = k down: out[k] = p^k ≥ 2^−k
		out[k] = powInt(p, k)
		r := q / p
		for i := k; i > 0; i-- {
			out[i-1] = out[i] * float64(i) / float64(k-i+1) * r
		}
		return
	}
	out[0] = powInt(q, k) // ≥ 2^−k
	r := p / q
	for i := 0; i < k; i++ {
		out[i+1] = out[i] * float64(k-i) / float64(i+1) * r
	}
}

// powInt returns x^n for n ≥ 0 by repeated squaring.
func powInt(x float64, n int) float64 {
	r := 1.0
	for n > 0 {
		if n&1 == 1 {
			r *= x
		}
		x *= x
		n >>= 1
	}
	return r
}

// FillChoices returns the fraction of ones predicted by 000 eq. (3.2),
// generalised to c choices, after the online greedy insertion of n keys
// into m = b·n bits with c groups of k hash functions: z(1), where
// z(0) = 0 and dz/dt = E[min of c iid Bin(k, 1 − z)] / b. The equation is
// solved with an adaptive Dormand–Prince 5(4) Runge–Kutta method with a
// local relative error tolerance of 1e-12 per step, in at most 20,000 steps
// (for every b ≥ 2^−64, the smallest m/n that integer m and n give, it
// needs fewer than 2,000); the result is clamped to [0, 1], which rounding
// can leave by an ulp. The prediction depends on m/n only;
// Theorem 3.3 states that the fill of a real filter converges to it as m
// grows. Domain: b = m/n finite and > 0, 1 ≤ k ≤ MaxChoicesK,
// 1 ≤ c ≤ MaxChoicesC; otherwise NaN. It is also NaN if the solver does not
// reach t = 1 within its steps (b far below 2^−64).
func FillChoices(b float64, k, c int) float64 {
	z, _ := fillChoices(b, k, c)
	return z
}

// fillChoices is FillChoices, also returning the number of solver steps.
func fillChoices(b float64, k, c int) (z float64, steps int) {
	if !validChoices(b, k, c) {
		return math.NaN(), 0
	}
	f := func(z float64) float64 {
		return ExpectedMinBinomial(k, c, 1-min(max(z, 0), 1)) / b
	}
	z, steps = solveDP45(f, 0, 1)
	return min(max(z, 0), 1), steps // NaN passes through min and max
}

// maxODESteps bounds the steps (accepted or rejected) of solveDP45.
const maxODESteps = 20_000

// Dormand–Prince 5(4) coefficients.
var (
	dpA = [7][6]float64{
		{},
		{1.0 / 5},
		{3.0 / 40, 9.0 / 40},
		{44.0 / 45, -56.0 / 15, 32.0 / 9},
		{19372.0 / 6561, -25360.0 / 2187, 64448.0 / 6561, -212.0 / 729},
		{9017.0 / 3168, -355.0 / 33, 46732.0 / 5247, 49.0 / 176, -5103.0 / 18656},
		{35.0 / 384, 0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84},
	}
	dpB5 = [7]float64{35.0 / 384, 0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84, 0}
	dpB4 = [7]float64{5179.0 / 57600, 0, 7571.0 / 16695, 393.0 / 640, -92097.0 / 339200, 187.0 / 2100, 1.0 / 40}
)

// solveDP45 integrates the autonomous equation y' = f(y) from y(0) = y0 to
// t = tEnd > 0 with adaptive steps and returns y(tEnd) and the number of
// steps taken (accepted or rejected). The local error of every accepted
// step is below odeTol·(|y| + 1e-3). It gives up after maxODESteps steps
// and returns NaN: a result at some t < tEnd is not y(tEnd).
func solveDP45(f func(float64) float64, y0, tEnd float64) (float64, int) {
	t, y, h := 0.0, y0, tEnd/64
	var kk [7]float64
	for iter := 1; iter <= maxODESteps; iter++ {
		last := h >= tEnd-t
		if last {
			h = tEnd - t
		}
		for s := 0; s < 7; s++ {
			yy := y
			for j := 0; j < s; j++ {
				yy += h * dpA[s][j] * kk[j]
			}
			kk[s] = f(yy)
		}
		y5, y4 := y, y
		for s := 0; s < 7; s++ {
			y5 += h * dpB5[s] * kk[s]
			y4 += h * dpB4[s] * kk[s]
		}
		errEst := math.Abs(y5 - y4)
		scale := odeTol * (math.Abs(y5) + 1e-3)
		if errEst <= scale {
			y = y5
			if last {
				return y, iter
			}
			t += h
		}
		// Standard step-size update with a safety factor, bounded growth.
		fac := 5.0
		if errEst > 0 {
			fac = min(5, max(0.2, 0.9*math.Pow(scale/errEst, 0.2)))
		}
		h *= fac
	}
	return math.NaN(), maxODESteps
}

// FPFromFillChoices returns 1 − (1 − fill^k)^c, the false-positive rate of a
// c-choice filter whose fraction of ones is fill (000 §3: a query is
// positive when any of its c groups of k positions is all ones, each group
// independently with probability fill^k). It is computed as
// −expm1(c·log1p(−fill^k)), accurate for tiny rates. Domain: fill ∈ [0, 1],
// 1 ≤ k, 1 ≤ c; otherwise NaN.
func FPFromFillChoices(fill float64, k, c int) float64 {
	if !(fill >= 0 && fill <= 1) || k < 1 || c < 1 {
		return math.NaN()
	}
	p := math.Pow(fill, float64(k))
	return -math.Expm1(float64(c) * math.Log1p(-p))
}

// FPChoices returns the predicted false-positive rate of a c-choice filter
// built by the online greedy algorithm (000 §3.1) with m/n = b bits per key
// and k hash functions per group: FPFromFillChoices(FillChoices(b, k, c), k,
// c). For c = 1 it equals FPAsymptotic(b, 1, k). Domain as FillChoices.
func FPChoices(b float64, k, c int) float64 {
	z := FillChoices(b, k, c)
	if math.IsNaN(z) {
		return z
	}
	return FPFromFillChoices(z, k, c)
}

// OptimalKChoices returns the k in [1, min(kmax, MaxChoicesK)] minimising
// FPChoices(b, k, c), and that rate; of equal rates the smaller k. kmax ≤ 0
// means MaxChoicesK. The rate is unimodal in k (for every (b, c) we have
// checked, and the tests compare the scan with an exhaustive one), so the
// scan stops at the third k past the best that does not improve on it: it
// solves the equation at most best k + 3 times. It returns (0, NaN)
// outside the domain of FillChoices or where FillChoices is NaN.
func OptimalKChoices(b float64, c, kmax int) (int, float64) {
	k, fp, _ := optimalKChoices(b, c, kmax)
	return k, fp
}

// optimalKChoices is OptimalKChoices, also returning the number of
// equations solved.
func optimalKChoices(b float64, c, kmax int) (bestK int, best float64, solves int) {
	if kmax <= 0 || kmax > MaxChoicesK {
		kmax = MaxChoicesK
	}
	if !validChoices(b, 1, c) {
		return 0, math.NaN(), 0
	}
	bestK, best = 0, math.Inf(1)
	for k := 1; k <= kmax; k++ {
		fp := FPChoices(b, k, c)
		solves++
		switch {
		case math.IsNaN(fp):
			return 0, math.NaN(), solves
		case fp < best:
			bestK, best = k, fp
		case k >= bestK+3:
			return bestK, best, solves
		}
	}
	return bestK, best, solves
}

// SizeChoices returns the smallest number of bits m, for n keys, such that
// some k ≤ kmax gives FPChoices(m/n, k, c) ≤ eps, and the best such k
// (OptimalKChoices at that m). kmax ≤ 0 means MaxChoicesK; the filter of
// package choices accepts k ≤ 64. The rate is the asymptotic (large-m)
// prediction of the online greedy algorithm; the offline algorithm (000
// §3.2) does better. The search over m takes O(log(MaxBits)) evaluations
// of OptimalKChoices, each a bounded number of bounded solves of the
// equation, so its cost does not grow with n. Errors wrap ErrInvalid for
// n = 0, eps outside (0, 1) or c outside [1, MaxChoicesC], and ErrTooLarge
// past MaxBits.
func SizeChoices(n uint64, eps float64, c, kmax int) (m uint64, k int, err error) {
	if err := checkSizeArgs(n, eps); err != nil {
		return 0, 0, err
	}
	if c < 1 || c > MaxChoicesC {
		return 0, 0, fmt.Errorf("theory: c = %d out of range [1, %d]: %w", c, MaxChoicesC, ErrInvalid)
	}
	nf := float64(n)
	fits := func(m uint64) bool {
		_, fp := OptimalKChoices(float64(m)/nf, c, kmax)
		return fp <= eps
	}
	// A c-choice filter never needs fewer bits than half the lower bound
	// n·log2(1/eps) (the information-theoretic limit), so start there.
	// −log2(eps), not log2(1/eps): 1/eps is +Inf below 5.6e-309, and a
	// float beyond the uint64 range has no defined conversion.
	startF := max(1, math.Floor(nf*-math.Log2(eps)/2))
	if startF > float64(MaxBits) {
		return 0, 0, tooLarge(n, eps)
	}
	start := uint64(startF)
	m, ok := searchUp(start, MaxBits, fits)
	if !ok {
		return 0, 0, tooLarge(n, eps)
	}
	k, _ = OptimalKChoices(float64(m)/nf, c, kmax)
	return m, k, nil
}

// CountFromFillChoices returns the number of keys n whose predicted fill
// FillChoices(m/n, k, c) equals fill: the inverse of the ODE,
// n = m·∫_0^fill dz / E[min of c iid Bin(k, 1 − z)], by composite Simpson
// quadrature on 4096 intervals (the integrand is smooth and increasing on
// [0, fill]). It returns +Inf for fill = 1 and NaN outside the domain
// (m > 0 finite, fill ∈ [0, 1], 1 ≤ k ≤ MaxChoicesK, 1 ≤ c ≤ MaxChoicesC).
func CountFromFillChoices(m float64, k, c int, fill float64) float64 {
	if !validChoices(m, k, c) || !(fill >= 0 && fill <= 1) {
		return math.NaN()
	}
	if fill == 1 {
		return math.Inf(1)
	}
	const steps = 4096
	h := fill / steps
	g := func(z float64) float64 { return 1 / ExpectedMinBinomial(k, c, 1-z) }
	s := g(0) + g(fill)
	for i := 1; i < steps; i++ {
		w := 2.0
		if i&1 == 1 {
			w = 4
		}
		s += w * g(float64(i)*h)
	}
	return m * s * h / 3
}

// FPChoicesScheme returns the rate of a c-choice filter of m bits holding n
// keys, k positions per group, indexed inside each group by scheme s: the
// online prediction FPChoices(m/n, k, c) with the pair floor of s (see
// FPScheme). A key sets the positions of one of its groups and a query's c
// groups have independent pairs, so a query group is positive with
// r = FPPairs(s, m, n, k, z, z^k), z = FillChoices(m/n, k, c) (the fill^k
// of a group, with the floor of the n keys' pairs), and the filter answers
// 1 − (1 − r)^c: without a floor, FPChoices. For c = 1 it is FPScheme(s,
// m, n, k), the standard filter's rate (000: one choice is the standard
// filter). Domain: 1 ≤ m ≤ 2^48, finite n > 0, 1 ≤ k ≤ min(64,
// MaxChoicesK), 1 ≤ c ≤ MaxChoicesC; 0 for n = 0; otherwise NaN.
func FPChoicesScheme(s hashing.Scheme, m uint64, n float64, k, c int) float64 {
	if c == 1 {
		return FPScheme(s, m, n, k)
	}
	if m < 1 || m > MaxBits || !nonNeg(n) || k < 1 || k > hashing.MaxK || c < 1 || c > MaxChoicesC {
		return math.NaN()
	}
	if n == 0 {
		return 0
	}
	return fpChoicesPairs(s, m, n, k, c, FillChoices(float64(m)/n, k, c))
}

// fpChoicesPairs is 1 − (1 − r)^c with r a group's rate at fill z, the
// pair floor included.
func fpChoicesPairs(s hashing.Scheme, m uint64, n float64, k, c int, z float64) float64 {
	if math.IsNaN(z) {
		return z
	}
	r := FPPairs(s, m, n, k, z, math.Pow(z, float64(k)))
	return -math.Expm1(float64(c) * math.Log1p(-r))
}

// SizeChoicesScheme is SizeChoices for a filter indexed inside its groups
// by scheme s, the pair floor included (FPChoicesScheme): the smallest m
// for which the k of OptimalKChoices(m/n, c, kmax) meets eps with the
// floor, prime for the double-hashing schemes (as SizeScheme, which it is
// for c = 1), and that k.
func SizeChoicesScheme(s hashing.Scheme, n uint64, eps float64, c, kmax int) (m uint64, k int, err error) {
	if c == 1 {
		return SizeScheme(s, n, eps, min(max(kmax, 1), hashing.MaxK))
	}
	if err := checkSizeArgs(n, eps); err != nil {
		return 0, 0, err
	}
	if c < 1 || c > MaxChoicesC {
		return 0, 0, fmt.Errorf("theory: c = %d out of range [1, %d]: %w", c, MaxChoicesC, ErrInvalid)
	}
	if kmax <= 0 || kmax > hashing.MaxK {
		kmax = hashing.MaxK
	}
	nf, logEps := float64(n), math.Log(eps)
	rate := func(m uint64) (int, float64) {
		k, _ := OptimalKChoices(float64(m)/nf, c, kmax)
		if k == 0 {
			return 0, math.Inf(1)
		}
		return k, math.Log(fpChoicesPairs(s, m, nf, k, c, FillChoices(float64(m)/nf, k, c)))
	}
	odd := doubleScheme(s)
	fits := func(m uint64) bool {
		if odd {
			m |= 1 // monotone: the rate of an odd (prime) m
		}
		_, l := rate(m)
		return l <= logEps
	}
	startF := max(1, math.Floor(nf*-math.Log2(eps)/2))
	if startF > float64(MaxBits) {
		return 0, 0, tooLarge(n, eps)
	}
	m, ok := searchUp(uint64(startF), MaxBits, fits)
	if !ok {
		return 0, 0, tooLarge(n, eps)
	}
	if odd {
		for m = hashing.NextPrime(m); ; m = hashing.NextPrime(m + 1) {
			base.PlanStep()
			if m > MaxBits {
				return 0, 0, tooLarge(n, eps)
			}
			if k, l := rate(m); l <= logEps {
				return m, k, nil
			}
		}
	}
	k, _ = rate(m)
	return m, k, nil
}
