// Package stats holds the statistics behind bloomlab's rate tests and lab
// reports: exact binomial tails and acceptance regions (for asserting an
// observed false-positive count against a predicted rate), the Wilson
// interval for a proportion, means with Student-t 95% confidence
// intervals, and chi-square p-values (for uniformity tests of probe
// positions).
//
// Everything is standard library only. Distribution functions are evaluated
// in log space with Loader's saddle-point binomial density and Numerical
// Recipes' series and continued fractions, so they neither overflow nor lose
// the tails for trials up to 1e9 and more and probabilities down to 1e-300.
// Invalid arguments give NaN (or, for BinomialQuantileBounds, an empty
// region); nothing panics.
package stats

import "math"

// Summary describes a sample: its size, mean, sample standard deviation
// (denominator N−1), and a 95% confidence interval for the mean,
// Mean ± t(0.975, N−1)·StdDev/√N, with t the Student-t quantile.
type Summary struct {
	N      int     // number of observations
	Mean   float64 // arithmetic mean; NaN for N = 0
	StdDev float64 // sample standard deviation (N−1); NaN for N < 2
	CI95Lo float64 // lower end of the 95% t interval for the mean; NaN for N < 2
	CI95Hi float64 // upper end of the 95% t interval for the mean; NaN for N < 2
}

// Summarize returns the Summary of xs. The mean and the sum of squared
// deviations are computed in two passes with a compensation term, so a
// large common offset costs no precision.
//
// For N = 0 every float field is NaN (no mean exists). For N = 1 Mean is
// the value and StdDev, CI95Lo and CI95Hi are NaN: one observation carries
// no information about spread, so no interval exists. NaN or ±Inf values in
// xs propagate into the results.
func Summarize(xs []float64) Summary {
	nan := math.NaN()
	s := Summary{N: len(xs), Mean: nan, StdDev: nan, CI95Lo: nan, CI95Hi: nan}
	if s.N == 0 {
		return s
	}
	n := float64(s.N)
	var sum float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / n
	var ss, comp float64
	for _, x := range xs {
		d := x - mean
		ss += d * d
		comp += d
	}
	mean += comp / n // correct the rounding of the first pass
	s.Mean = mean
	if s.N == 1 {
		return s
	}
	ss -= comp * comp / n
	s.StdDev = math.Sqrt(math.Max(ss, 0) / (n - 1))
	half := StudentTQuantile(0.975, n-1) * s.StdDev / math.Sqrt(n)
	s.CI95Lo, s.CI95Hi = mean-half, mean+half
	return s
}
