package lab

import "github.com/bloomlab/bloomlab/internal/stats"

// sampleStats is the mean of a sample and a 95% confidence interval for it.
type sampleStats struct {
	mean, sd, lo, hi float64
}

// summarize returns the mean, the sample standard deviation and the
// Student-t 95% interval mean ± t(0.975, n−1)·sd/√n (stats.Summarize). For
// n < 2 the interval is NaN.
func sampleSummary(xs []float64) sampleStats {
	s := stats.Summarize(xs)
	return sampleStats{mean: s.Mean, sd: s.StdDev, lo: s.CI95Lo, hi: s.CI95Hi}
}
