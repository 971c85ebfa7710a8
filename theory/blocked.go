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
func FPBlocked(n, blocks float64, s, k int) float64 {
	if !nonNeg(n) || !finite(blocks) || blocks < 1 || s < 1 || k < 1 {
		return math.NaN()
	}
	if n == 0 {
		return 0
	}
	p := 1 / blocks
	lam := n * p
	// Sum the binomial pmf in log space from j = 0, through the mode, until
	// the terms are negligible; log pmf(j+1) − log pmf(j) =
	// log((n − j)/(j + 1)) + log(p/(1 − p)).
	logq := float64(k) * math.Log1p(-1/float64(s)) // log((1 − 1/s)^k)
	logRatio := math.Log(p) - math.Log1p(-p)
	if blocks == 1 {
		return math.Pow(-math.Expm1(n*logq), float64(k))
	}
	logPmf := n * math.Log1p(-p)
	jmax := lam + 40*math.Sqrt(lam) + 100
	var sum float64
	for j := 0.0; j <= n && j <= jmax; j++ {
		if logPmf > -745 {
			fill := -math.Expm1(j * logq)
			sum += math.Exp(logPmf + float64(k)*math.Log(fill))
		}
		logPmf += math.Log((n-j)/(j+1)) + logRatio
	}
	return math.Min(sum, 1)
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
// Errors wrap ErrInvalid (n = 0, eps outside (0, 1)) or ErrTooLarge (more
// than MaxBits bits).
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
	// A blocked filter needs at least the standard filter's bits.
	start := uint64(1)
	if m, _, err := Size(n, eps); err == nil {
		start = max(1, m/BlockBits)
	}
	b, ok := searchUp(start, limit, fits)
	if !ok {
		return 0, 0, tooLarge(n, eps)
	}
	return b, OptimalKBlocked(nf, float64(b), BlockBits), nil
}
