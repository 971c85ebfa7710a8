package main

// The t-digest run (-tdigest, issue 23): bloomlab's tdigest (RedisBloom's
// t-digest-c, bit for bit) against exact quantiles. For each distribution
// (uniform on [0,1), standard normal, log-normal with σ = 2; PCG seed 23)
// and compression (100, RedisBloom's default, and 500), n values are added
// one by one; at each q the digest's estimate x̂ = Quantile(q) is compared
// with the sorted values: the rank error |F_n(x̂) − q| (F_n the empirical
// CDF, counting half of the values equal to x̂) and the relative value
// error |x̂ − x_q| / |x_q|. Dunning & Ertl (2019) bound a merging digest's
// centroid sizes, with this scale (size ≤ q(1−q)·4n·ln… — t-digest-c's
// z ≤ q(1−q) with normalizer compression/(2π·n·ln n)), in proportion to
// q(1−q), so that the rank error shrinks towards the tails as q(1−q)
// does; the last column, rank error / (q(1−q)), is constant where that
// holds.

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"time"

	"github.com/bloomlab/bloomlab/tdigest"
)

var tdQs = []float64{1e-5, 1e-4, 1e-3, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 0.9999, 0.99999}

func runTDigest(w io.Writer, n int) error {
	fmt.Fprintf(w, "goos: %s\ngoarch: %s\ngo: %s\nrun: -tdigest, n %d, seed 23\n\n", runtime.GOOS, runtime.GOARCH, runtime.Version(), n)
	dists := []struct {
		name string
		gen  func(r *rand.Rand) float64
	}{
		{"uniform", func(r *rand.Rand) float64 { return r.Float64() }},
		{"normal", func(r *rand.Rand) float64 { return r.NormFloat64() }},
		{"lognormal", func(r *rand.Rand) float64 { return math.Exp(2 * r.NormFloat64()) }},
	}
	vals := make([]float64, n)
	for _, d := range dists {
		r := rand.New(rand.NewPCG(23, 23))
		for i := range vals {
			vals[i] = d.gen(r)
		}
		sorted := slices.Clone(vals)
		slices.Sort(sorted)
		for _, comp := range []int64{100, 500} {
			td, err := tdigest.New(comp)
			if err != nil {
				return err
			}
			t0 := time.Now()
			for _, v := range vals {
				if err := td.Add(v); err != nil {
					return err
				}
			}
			td.Compress()
			add := time.Since(t0)
			fmt.Fprintf(w, "%s, compression %d: %d centroids, %.1f ns per Add\n", d.name, comp, td.MergedNodes(), float64(add.Nanoseconds())/float64(n))
			fmt.Fprintf(w, "| q | exact x_q | estimate | rank error | relative value error | rank error / q(1−q) |\n|---|---|---|---|---|---|\n")
			for _, q := range tdQs {
				est := td.Quantile(q)
				exact := sorted[min(int(q*float64(n)), n-1)]
				lo := sort.SearchFloat64s(sorted, est)
				hi := sort.Search(n, func(i int) bool { return sorted[i] > est })
				f := (float64(lo) + float64(hi-lo)/2) / float64(n)
				re := math.Abs(f - q)
				fmt.Fprintf(w, "| %g | %.6g | %.6g | %.3g | %.3g | %.3g |\n", q, exact, est, re, math.Abs(est-exact)/math.Abs(exact), re/(q*(1-q)))
			}
			fmt.Fprintln(w)
		}
	}
	return nil
}
