package scalable

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/stats"
	"github.com/bloomlab/bloomlab/theory"
)

// TestCompoundRate is issue 11's test of the bound: a chain created for
// 1,000 keys at 1% receives 10^7 distinct keys (10^5 under -short), then
// 10^6 keys never added (10^5 under -short) are queried. It asserts that
//
//  1. the rate computed from the chain's state by formula at the links'
//     counts, 1 − Π(1 − r_i(keys_i)) (FormulaFPR: the closed form with the
//     pair floor, theory.FPScheme; for RedisBloom links theory.FPAnyStep),
//     and the union bound Σ ε_i (FPRBound) are at most 1%: the design
//     guarantee (the RedisBloom profile's formula within 5% of it: its
//     k = ⌈ln2·bpe⌉ and its small links put the chain from 1,000 keys at
//     1.012% by the formula, and plan says so past 5%);
//  2. the rate of the state, 1 − Π(1 − r_i) with r_i from the bits
//     (EstimatedFPR), lies within 5 standard deviations of the formula
//     rate, the deviation being that of the links' fills (the variance of
//     the number of empty positions, m·e^−λ·(1 − (1 + λ)·e^−λ) with
//     λ = k·keys/m, carried to fill^k): the realised bits agree with the
//     theory;
//  3. the number of false positives lies in the two-sided binomial
//     acceptance region at α = 10^-6 around EstimatedFPR (given the bits,
//     each absent key is a false positive with that probability, so the
//     count is binomial);
//  4. no added key is missing (sampled), and N counts the adds that were
//     new: at most the keys added, at least keys added less a bound on
//     the false positives met while adding.
//
// Both profiles, fixed keys, bloomlab seed 1: the test is deterministic.
// The rate of the state is not asserted to be at most 1%: the bound holds
// for the expected rate, and one filter's bits scatter around it (the
// small first links most): with these keys the RedisBloom profile's
// 10^7-key chain, bit for bit what RedisBloom builds, has 1.028% (formula
// 1.012%) and answers 0.999% of the absent keys.
func TestCompoundRate(t *testing.T) {
	n, queries := 10_000_000, 1_000_000
	if testing.Short() {
		n, queries = 100_000, 100_000
	}
	for _, p := range []Profile{Bloomlab, RedisBloom} { // Blocked: TestBlockedRate
		start := time.Now()
		c := Config{Capacity: 1000, FPR: 0.01, Profile: p}
		if p == Bloomlab {
			c.Seed = 1
		}
		f := must(New(c))
		for i := 0; i < n; i++ {
			if _, err := f.Add(key(i)); err != nil {
				t.Fatal(err)
			}
		}
		for i := 0; i < n; i += 997 {
			if !f.Contains(key(i)) {
				t.Fatalf("%v: false negative for key %d", p, i)
			}
		}
		st := f.Stats()
		formula, bound, est := st.Formula, st.Bound, f.EstimatedFPR()
		if limit := map[Profile]float64{Bloomlab: 0.01, RedisBloom: 0.0105}[p]; formula > limit || bound > 0.01 {
			t.Errorf("%v: formula rate %.5f, bound %.5f: want both ≤ 0.01", p, formula, bound)
		}
		sigma := stateSigma(f.Stats().Links)
		if math.Abs(est-formula) > 5*sigma {
			t.Errorf("%v: rate of the state %.5f, formula %.5f ± %.5f (σ of the fills)", p, est, formula, sigma)
		}
		if b := theory.FPScalableBound(0.005, 0.5, f.Links()); bound > b*(1+1e-12) {
			t.Errorf("%v: bound %v above theory's %v", p, bound, b)
		}
		fp := 0
		for i := n; i < n+queries; i++ {
			if f.Contains(key(i)) {
				fp++
			}
		}
		lo, hi := stats.BinomialQuantileBounds(uint64(queries), est, 1e-6)
		if uint64(fp) < lo || uint64(fp) > hi {
			t.Errorf("%v: %d false positives in %d, the state predicts %.5f → [%d, %d]", p, fp, queries, est, lo, hi)
		}
		// While adding, each new key met the chain's rate at the time, at
		// most 1%: the false positives among them (not counted) are below
		// the binomial bound for n trials at 1%.
		_, fpHi := stats.BinomialQuantileBounds(uint64(n), 0.01, 1e-6)
		if f.N() > uint64(n) || f.N()+fpHi < uint64(n) {
			t.Errorf("%v: N = %d after %d distinct keys", p, f.N(), n)
		}
		t.Logf("%v: %d keys, %d links, %.1f MiB; rate of the state %.5f, formula %.5f (σ %.5f), bound %.5f; "+
			"%d false positives in %d (%.5f), region [%d, %d]; N = %d; %v",
			p, n, f.Links(), float64(f.Bits())/8/(1<<20), est, formula, sigma, bound, fp, queries,
			float64(fp)/float64(queries), lo, hi, f.N(), time.Since(start).Round(time.Millisecond))
	}
}

// stateSigma returns the standard deviation of Σ fill_i^k_i over the
// links' random bits: with λ = k·keys/m, the number of empty positions of
// a link has variance m·e^−λ·(1 − (1 + λ)·e^−λ) (occupancy, Poisson
// limit), and fill^k moves by k·fill^(k−1) per unit of fill.
func stateSigma(st []LinkStats) float64 {
	v := 0.0
	for _, l := range st {
		m := float64(l.M)
		lam := float64(l.K) * float64(l.Keys) / m
		e := math.Exp(-lam)
		varFill := e * (1 - (1+lam)*e) / m
		d := float64(l.K) * math.Pow(1-e, float64(l.K-1))
		v += d * d * varFill
	}
	return math.Sqrt(v)
}

// TestLinkRates: in the bloomlab profile every full link's expected rate
// (theory.FPScheme at its capacity, the pair floor of enhanced double
// hashing included) is at most its design rate, so the formula rate of a
// chain is at most the bound Σ ε_i whatever the keys, however small its
// first links (a link of one key at 5e-4 was sized by FPExact alone: 64
// bits, k = 43, whose exact rate is 2/2048 = 9.8e-4).
func TestLinkRates(t *testing.T) {
	for _, c := range []Config{
		{Capacity: 1000, FPR: 0.01}, {Capacity: 37, FPR: 0.3, Expansion: 3, Ratio: 0.9}, {Capacity: 5000, FPR: 1e-6, Ratio: 0.2},
		{Capacity: 1, FPR: 0.001}, {Capacity: 1, FPR: 0.01, Expansion: 1}, {Capacity: 3, FPR: 1e-5, Ratio: 0.3},
	} {
		ls, err := shapes(must(c.withDefaults()), 1e9)
		if err != nil && !errors.Is(err, errCannotGrow) {
			t.Fatal(err)
		}
		sum := 0.0
		for i, l := range ls {
			if fp := theory.FPScheme(hashing.Enhanced, l.m, float64(l.entries), l.k); fp > l.rate*(1+1e-12) {
				t.Errorf("%+v link %d: %v at capacity, design %v", c, i, fp, l.rate)
			}
			sum += l.rate
		}
		if sum > c.FPR {
			t.Errorf("%+v: Σ ε_i = %v above the target", c, sum)
		}
	}
}
