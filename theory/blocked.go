package theory

import "math"

// BlockBits is the block size of bloomlab's blocked Bloom filter: one
// 64-byte cache line.
const BlockBits = 512

// FPBlocked returns the false-positive probability of a blocked Bloom
// filter (Putze, Sanders and Singler, "Cache-, Hash- and Space-Efficient
// Bloom Filters", 2007; the layout 004 §8 motivates): n keys are hashed to
// blocks uniformly at random, each sets k bits of its block of s bits chosen
// independently and uniformly (repeats allowed), and a query tests k such
// bits of one block. With J ~ Bin(n, 1/b) the number of keys in the query's
// block,
//
//	FP = Σ_j P(J = j) · (1 − (1 − 1/s)^{kj})^k,
//
// the standard filter's exact formula for s bits averaged over the load.
//
// The variation of the block loads is what makes a blocked filter worse
// than a standard one of the same size: FP is the average of a convex
// function of the load. It returns NaN for invalid arguments (n < 0,
// blocks < 1, s < 1 or k < 1).
//
// Cost: the sum runs over the loads within 40·√λ + 100 of the mean
// λ = n/b, outside which the binomial mass is below e^{−800}; it is 1
// (to float64 precision) when the lowest of them already fills a block,
// and where the range is wider than 2^14 loads (blocks of far more than
// 512 bits) it is sampled at 2^14 evenly spaced loads, which the smooth
// summand makes exact to rounding. So the cost is bounded whatever n.
func FPBlocked(n, blocks float64, s, k int) float64 {
	return fpBlocked(n, blocks, s, k, nil)
}

// maxBlockedTerms bounds the number of loads FPBlocked evaluates.
const maxBlockedTerms = 1 << 14

// fpBlocked is FPBlocked; if terms is not nil it adds the number of loads
// evaluated to *terms (for the tests of its cost).
func fpBlocked(n, blocks float64, s, k int, terms *int) float64 {
	if !nonNeg(n) || !finite(blocks) || blocks < 1 || s < 1 || k < 1 {
		return math.NaN()
	}
	// log((1 − 1/s)^k): the chance that one key leaves a given bit of its
	// block clear.
	return fpLoads(n, blocks, float64(k)*math.Log1p(-1/float64(s)), k, terms)
}

// fpLoads returns Σ_j P(J = j)·(1 − q^j)^k for J ~ Bin(n, 1/blocks), with
// logq = log q: the rate of a blocked layout where each key in the query's
// block leaves each of the query's k bits clear with probability q,
// independently. n ≥ 0 and blocks ≥ 1 are the caller's to check.
func fpLoads(n, blocks, logq float64, k int, terms *int) float64 {
	if n == 0 {
		return 0
	}
	if blocks == 1 {
		return math.Pow(-math.Expm1(n*logq), float64(k))
	}
	kf := float64(k)
	logFP := func(j float64) float64 { // log of the rate of a block of load j
		return kf * math.Log(-math.Expm1(j*logq))
	}
	p := 1 / blocks
	lam := n * p
	jmax := math.Min(n, lam+40*math.Sqrt(lam)+100)
	count := func(c int) {
		if terms != nil {
			*terms += c
		}
	}
	jmin := math.Floor(lam - 40*math.Sqrt(lam) - 100)
	if jmin <= 0 {
		// Sum the binomial pmf in log space from j = 0, through the mode,
		// until the terms are negligible; log pmf(j+1) − log pmf(j) =
		// log((n − j)/(j + 1)) + log(p/(1 − p)).
		return math.Min(sumBlocked(n, p, 0, n*math.Log1p(-p), jmax, logFP, count), 1)
	}
	count(1)
	if logFP(jmin) == 0 {
		return 1 // every load with mass fills its block
	}
	if jmax-jmin <= maxBlockedTerms {
		// From the mode outwards, where the log-pmf is small, so that the
		// recurrence's rounding stays far below the terms that matter.
		mode := math.Min(math.Max(math.Floor((n+1)*p), jmin), jmax)
		logMode := logBinomPMF(mode, n, p)
		up := sumBlocked(n, p, mode, logMode, jmax, logFP, count)
		down := sumBlockedDown(n, p, mode-1, logMode, jmin, logFP, count)
		return math.Min(up+down, 1)
	}
	// Wide range: sample evenly; the summand is smooth on the scale of the
	// step (√λ/200 or less), so h·Σ g(x_i) equals Σ_j g(j) to rounding.
	h := (jmax - jmin) / maxBlockedTerms
	var sum float64
	for i := 0; i <= maxBlockedTerms; i++ {
		x := jmin + float64(i)*h
		if lp := logBinomPMF(x, n, p); lp > -745 {
			sum += math.Exp(lp + logFP(x))
		}
	}
	count(maxBlockedTerms + 1)
	return math.Min(h*sum, 1)
}

// sumBlocked returns Σ_{j = from … to} P(J = j)·e^{logFP(j)} for
// J ~ Bin(n, p), given logPmf = log P(J = from), by the ratio recurrence of
// the pmf.
func sumBlocked(n, p, from, logPmf, to float64, logFP func(float64) float64, count func(int)) float64 {
	logRatio := math.Log(p) - math.Log1p(-p)
	var sum float64
	c := 0
	for j := from; j <= n && j <= to; j++ {
		if logPmf > -745 {
			sum += math.Exp(logPmf + logFP(j))
		}
		logPmf += math.Log((n-j)/(j+1)) + logRatio
		c++
	}
	count(c)
	return sum
}

// OptimalKBlocked returns the k ≥ 1 minimising FPBlocked for n keys in the
// given number of blocks of s bits (0 for invalid arguments).
func OptimalKBlocked(n, blocks float64, s int) int {
	if math.IsNaN(FPBlocked(n, blocks, s, 1)) {
		return 0
	}
	best, bestFP := 1, math.Inf(1)
	for k := 1; k <= 64; k++ {
		fp := FPBlocked(n, blocks, s, k)
		if fp < bestFP {
			best, bestFP = k, fp
		} else if k > best+3 {
			break // FP is unimodal in k: past the minimum it only grows
		}
	}
	return best
}

// SizeBlocked returns the smallest number of 512-bit blocks for which some
// k gives FPBlocked(n, blocks, 512, k) ≤ eps, and that k (the minimiser).
// The search starts at the standard filter's size (Size), which a blocked
// filter needs about as much as, or at the largest size allowed when Size
// fails, and takes O(log(MaxBits)) evaluations of OptimalKBlocked, each of
// bounded cost whatever n. Errors wrap ErrInvalid (n = 0, eps outside
// (0, 1)) or ErrTooLarge (more than MaxBits bits).
func SizeBlocked(n uint64, eps float64) (blocks uint64, k int, err error) {
	if err := checkSizeArgs(n, eps); err != nil {
		return 0, 0, err
	}
	nf := float64(n)
	limit := MaxBits / BlockBits
	fits := func(b uint64) bool {
		bf := float64(b)
		return FPBlocked(nf, bf, BlockBits, OptimalKBlocked(nf, bf, BlockBits)) <= eps
	}
	start := limit
	if m, _, err := Size(n, eps); err == nil {
		start = max(1, m/BlockBits)
	}
	b, ok := searchUp(start, limit, fits)
	if !ok {
		return 0, 0, tooLarge(n, eps)
	}
	return b, OptimalKBlocked(nf, float64(b), BlockBits), nil
}

// sumBlockedDown returns Σ_{j = from … to, downwards} P(J = j)·e^{logFP(j)}
// for J ~ Bin(n, p), given logPmf = log P(J = from + 1), by the ratio
// recurrence log pmf(j) − log pmf(j+1) = log((j + 1)/(n − j)) − log(p/(1 − p)).
func sumBlockedDown(n, p, from, logPmf, to float64, logFP func(float64) float64, count func(int)) float64 {
	logRatio := math.Log1p(-p) - math.Log(p)
	var sum float64
	c := 0
	for j := from; j >= to && j >= 0; j-- {
		logPmf += math.Log((j+1)/(n-j)) + logRatio
		if logPmf > -745 {
			sum += math.Exp(logPmf + logFP(j))
		}
		c++
	}
	count(c)
	return sum
}

// logBinomPMF returns log P(J = x) for J ~ Bin(n, p), 0 < p < 1 and
// 0 ≤ x ≤ n (x may be fractional: the pmf's continuation through the gamma
// function), by Loader's saddle-point form ("Fast and accurate computation
// of binomial probabilities", 2000), which keeps full precision for n up to
// 2^64 where lgamma differences would cancel catastrophically.
func logBinomPMF(x, n, p float64) float64 {
	switch {
	case x == 0:
		return n * math.Log1p(-p)
	case x == n:
		return n * math.Log(p)
	}
	q := 1 - p
	lc := stirlerr(n) - stirlerr(x) - stirlerr(n-x) - bd0(x, n*p) - bd0(n-x, n*q)
	lf := math.Log(2*math.Pi) + math.Log(x) + math.Log1p(-x/n)
	return lc - 0.5*lf
}

// stirlerr returns log(x!) − log(√(2πx)·(x/e)^x), the error of Stirling's
// approximation, for x > 0.
func stirlerr(x float64) float64 {
	const (
		s0 = 1.0 / 12
		s1 = 1.0 / 360
		s2 = 1.0 / 1260
		s3 = 1.0 / 1680
		s4 = 1.0 / 1188
	)
	if x <= 15 {
		lg, _ := math.Lgamma(x + 1)
		return lg - (x+0.5)*math.Log(x) + x - 0.5*math.Log(2*math.Pi)
	}
	xx := x * x
	switch {
	case x > 500:
		return (s0 - s1/xx) / x
	case x > 80:
		return (s0 - (s1-s2/xx)/xx) / x
	case x > 35:
		return (s0 - (s1-(s2-s3/xx)/xx)/xx) / x
	}
	return (s0 - (s1-(s2-(s3-s4/xx)/xx)/xx)/xx) / x
}

// bd0 returns x·log(x/m) + m − x without cancellation for x near m
// (Loader's deviance term), for x, m > 0.
func bd0(x, m float64) float64 {
	if math.Abs(x-m) < 0.1*(x+m) {
		v := (x - m) / (x + m)
		s := (x - m) * v
		ej := 2 * x * v
		for j := 1; j < 1000; j++ {
			ej *= v * v
			s1 := s + ej/float64(2*j+1)
			if s1 == s {
				return s1
			}
			s = s1
		}
		return s
	}
	return x*math.Log(x/m) + m - x
}
