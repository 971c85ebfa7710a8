package theory

import (
	"errors"
	"math"
	"testing"
)

// The sizing functions take bounded time for every n up to 2^64 − 1 and
// every eps in (0, 1). These tests pin the outcomes at the edges and bound
// the work by counting it (terms summed, equations solved, solver steps),
// never by the clock.

// hugeN are the key counts past any filter of MaxBits bits.
var hugeN = []uint64{1e15, 1e18, math.MaxUint64}

// edgeEps are the rates the edge tests ask for.
var edgeEps = []float64{0.5, 0.1, 1e-2, 1e-4, 1e-8, 1e-12, 1e-15}

// sizers are the sizing functions with the (n, eps) signature.
var sizers = []struct {
	name string
	f    func(uint64, float64) (uint64, int, error)
	bits uint64 // bits per unit of the result
}{
	{"Size", Size, 1},
	{"SizePartitioned", SizePartitioned, 1},
	{"SizeBlocked", SizeBlocked, BlockBits},
	{"SizeChoices c=1", func(n uint64, eps float64) (uint64, int, error) { return SizeChoices(n, eps, 1, 64) }, 1},
	{"SizeChoices c=2", func(n uint64, eps float64) (uint64, int, error) { return SizeChoices(n, eps, 2, 64) }, 1},
	{"SizeChoices c=64", func(n uint64, eps float64) (uint64, int, error) { return SizeChoices(n, eps, 64, 0) }, 1},
}

// TestSizingHugeN: at n = 1e15, 1e18 and 2^64 − 1 every rate in
// [1e-15, 0.5] needs more than 2^48 bits (at least n·log2(1/eps) ≥ n), so
// every sizing function returns ErrTooLarge. Before, SizeBlocked summed
// ~10^13 binomial terms per evaluation and never returned.
func TestSizingHugeN(t *testing.T) {
	for _, s := range sizers {
		for _, n := range hugeN {
			for _, eps := range edgeEps {
				m, k, err := s.f(n, eps)
				if !errors.Is(err, ErrTooLarge) || m != 0 || k != 0 {
					t.Errorf("%s(%d, %g) = (%d, %d, %v), want ErrTooLarge", s.name, n, eps, m, k, err)
				}
			}
		}
	}
}

// TestSizingEdges: where a huge n still fits (eps within 1e-9 of 1), or
// the answer lies just below MaxBits, the result is exact: within MaxBits,
// reaching the rate, and one unit less does not (up to the rounding of the
// rates themselves: at n = 1e15 and eps = 1 − 1e-9 one bit moves the rate
// by 1e-23, far below an ulp). Where it does not fit, ErrTooLarge.
func TestSizingEdges(t *testing.T) {
	const tooLarge = "too large"
	cases := []struct {
		n    uint64
		eps  float64
		want map[string]string // sizer name → tooLarge; absent: fits
	}{
		{1e15, 1 - 1e-9, nil}, // k = 1, about 0.05 bits per key
		// 72 bits per key, 2^46.2 bits; the blocked filter needs ~300.
		{1 << 40, 1e-15, map[string]string{"SizeBlocked": tooLarge}},
		{1 << 42, 1e-9, map[string]string{"SizeBlocked": tooLarge}}, // 43 bits per key, 2^47.4 bits
		{1, 1e-15, nil},         // the smallest filters
		{1000, 1 - 1e-15, nil},  // eps a few ulps below 1
		{1 << 20, 0x1p-60, nil}, // k = 60 or so
		{1 << 40, 5e-324, map[string]string{"all": tooLarge}}, // 1,549 bits per key
	}
	for _, s := range sizers {
		c2 := map[string]int{"SizeChoices c=1": 1, "SizeChoices c=2": 2, "SizeChoices c=64": 64}[s.name]
		// best is the lowest rate any k reaches with m units, by the
		// sizing's own optimiser; rate is the rate with k.
		rate := func(m, n uint64, k int) float64 {
			switch s.name {
			case "Size":
				return FPExact(float64(m), float64(n), k)
			case "SizePartitioned":
				return FPPartitioned(float64(m), float64(n), k)
			case "SizeBlocked":
				return FPBlocked(float64(n), float64(m), BlockBits, k)
			}
			return FPChoices(float64(m)/float64(n), k, c2)
		}
		best := func(m, n uint64) float64 {
			mf, nf := float64(m), float64(n)
			switch s.name {
			case "Size":
				return FPExact(mf, nf, OptimalK(mf, nf))
			case "SizeBlocked":
				return FPBlocked(nf, mf, BlockBits, OptimalKBlocked(nf, mf, BlockBits))
			case "SizePartitioned":
				return math.Inf(1) // needs a divisor of m; TestSizePartitioned covers it
			}
			_, fp := OptimalKChoices(mf/nf, c2, 64)
			return fp
		}
		for _, c := range cases {
			if c2 != 0 && c2 != 2 && c.want["all"] == "" && (testing.Short() || c.eps < 1e-12) {
				continue // 0.2 to 2 s each; c = 2 covers the code
			}
			m, k, err := s.f(c.n, c.eps)
			if c.want[s.name] == tooLarge || c.want["all"] == tooLarge {
				if !errors.Is(err, ErrTooLarge) {
					t.Errorf("%s(%d, %g) = (%d, %d, %v), want ErrTooLarge", s.name, c.n, c.eps, m, k, err)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s(%d, %g): %v", s.name, c.n, c.eps, err)
				continue
			}
			if m*s.bits > MaxBits {
				t.Errorf("%s(%d, %g) = %d units, beyond MaxBits", s.name, c.n, c.eps, m)
			}
			if got := rate(m, c.n, k); !(got <= c.eps*(1+1e-14)) {
				t.Errorf("%s(%d, %g) = (%d, %d): rate %g above eps", s.name, c.n, c.eps, m, k, got)
			}
			if m > 1 {
				if got := best(m-1, c.n); got < c.eps*(1-1e-14) {
					t.Errorf("%s(%d, %g) = %d, but %d units reach %g", s.name, c.n, c.eps, m, m-1, got)
				}
			}
		}
	}
}

// closedFPBlocked is FPBlocked by the binomial theorem: with
// r = (1 − 1/s)^k, E[(1 − r^J)^k] = Σ_i C(k, i)(−1)^i (1 − p(1 − r^i))^n.
// Independent of the sum over loads, and accurate for small k where the
// rate is not small (the alternating sum cancels otherwise).
func closedFPBlocked(n, blocks float64, s, k int) float64 {
	p := 1 / blocks
	r := math.Pow(1-1/float64(s), float64(k))
	sum, binom := 0.0, 1.0
	for i := 0; i <= k; i++ {
		term := binom * math.Exp(n*math.Log1p(-p*(1-math.Pow(r, float64(i)))))
		if i%2 == 1 {
			term = -term
		}
		sum += term
		binom = binom * float64(k-i) / float64(i+1)
	}
	return sum
}

// fpBlockedFromZero is FPBlocked as it was before its cost was bounded:
// the binomial sum from j = 0 to λ + 40√λ + 100. Its cost grows with λ.
func fpBlockedFromZero(n, blocks float64, s, k int) float64 {
	p := 1 / blocks
	lam := n * p
	logq := float64(k) * math.Log1p(-1/float64(s))
	logRatio := math.Log(p) - math.Log1p(-p)
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

// TestFPBlockedUnchanged: wherever the sum starts at 0 (λ up to ~1,800
// keys per block, every filter of a bit per key or more) FPBlocked is bit
// for bit the former sum; beyond, where it starts at the lowest load with
// mass, it agrees with the former sum to 1e-12.
func TestFPBlockedUnchanged(t *testing.T) {
	for _, n := range []float64{10, 1000, 1e6, 1e9} {
		for _, bpk := range []float64{0.3, 1, 4, 8, 16, 64} {
			blocks := math.Max(2, math.Round(n*bpk/BlockBits))
			for _, k := range []int{1, 3, 7, 20} {
				got, want := FPBlocked(n, blocks, BlockBits, k), fpBlockedFromZero(n, blocks, BlockBits, k)
				lam := n / blocks
				if lam-40*math.Sqrt(lam)-100 <= 0 {
					if got != want {
						t.Errorf("n=%g blocks=%g k=%d: %v, former sum %v", n, blocks, k, got, want)
					}
				} else if math.Abs(got-want) > 1e-12*want {
					t.Errorf("n=%g blocks=%g k=%d (λ=%.0f): %v, former sum %v", n, blocks, k, lam, got, want)
				}
			}
		}
	}
	// λ between 1,800 and 25,000, where the sum starts above 0 and not
	// every load with mass fills its block (s = 512, small k): against the
	// closed form. (The former sum is off by up to 2e-11 there: the ratio
	// recurrence from 0 accumulates rounding over thousands of steps.)
	for _, lam := range []float64{2000, 5000, 12000, 20000, 25000} {
		n := 1e7
		for _, k := range []int{1, 2, 3} {
			got, want := FPBlocked(n, n/lam, BlockBits, k), closedFPBlocked(n, n/lam, BlockBits, k)
			if math.Abs(got-want) > 1e-14 {
				t.Errorf("λ=%g k=%d: %v, closed form %v", lam, k, got, want)
			}
		}
	}
}

// TestFPBlockedBounded: FPBlocked evaluates at most maxBlockedTerms + 1
// loads whatever n (the former sum took λ + 40√λ + 100, ~10^13 for
// n = 1e15 in two blocks), and its result is a probability.
func TestFPBlockedBounded(t *testing.T) {
	for _, n := range append([]float64{1e6, 1e12}, 1e15, 1e18, math.MaxUint64) {
		for _, blocks := range []float64{1, 1.5, 2, 1000, 1e9, n / 20000, n / 512, n / 40, n} {
			if blocks < 1 {
				continue
			}
			for _, s := range []int{64, BlockBits, 1 << 20, 1 << 30} {
				for _, k := range []int{1, 7, 30} {
					terms := 0
					fp := fpBlocked(n, blocks, s, k, &terms)
					if !(fp >= 0 && fp <= 1) {
						t.Errorf("FPBlocked(%g, %g, %d, %d) = %v", n, blocks, s, k, fp)
					}
					if terms > maxBlockedTerms+2 {
						t.Errorf("FPBlocked(%g, %g, %d, %d) evaluated %d loads", n, blocks, s, k, terms)
					}
				}
			}
		}
	}
	// Blocks barely above 1: the mode is n itself.
	for _, c := range []struct{ n, blocks float64 }{{1e4, 1 + 1e-10}, {1e10, 1.0001}} {
		for _, s := range []int{BlockBits, 1 << 30} {
			got, want := FPBlocked(c.n, c.blocks, s, 1), closedFPBlocked(c.n, c.blocks, s, 1)
			if math.Abs(got-want) > 1e-12 {
				t.Errorf("FPBlocked(%g, %v, %d, 1) = %v, closed form %v", c.n, c.blocks, s, got, want)
			}
		}
	}
	// Far more keys than bits: every block is full.
	if got := FPBlocked(1e18, 1e9, BlockBits, 7); got != 1 {
		t.Errorf("FPBlocked(1e18 keys, 1e9 blocks) = %v, want 1", got)
	}
}

// TestFPBlockedSampled: where the range of loads is wider than
// maxBlockedTerms (blocks of 2^20 and 2^24 bits), the sampled sum agrees
// with the sum over every load.
func TestFPBlockedSampled(t *testing.T) {
	for _, c := range []struct {
		n, blocks float64
		s, k      int
	}{
		{4e7, 2, 1 << 20, 1},  // λ = 2e7: 360,000 loads with mass
		{2e7, 2, 1 << 20, 2},  // λ = 1e7
		{1e9, 10, 1 << 24, 1}, // λ = 1e8
		{1e9, 10, 1 << 24, 3},
	} {
		terms := 0
		got := fpBlocked(c.n, c.blocks, c.s, c.k, &terms)
		if terms != maxBlockedTerms+2 {
			t.Fatalf("%+v: %d terms, the sampled path not taken", c, terms)
		}
		p := 1 / c.blocks
		lam := c.n * p
		jmin := math.Floor(lam - 40*math.Sqrt(lam) - 100)
		jmax := lam + 40*math.Sqrt(lam) + 100
		logq := float64(c.k) * math.Log1p(-1/float64(c.s))
		logFP := func(j float64) float64 { return float64(c.k) * math.Log(-math.Expm1(j*logq)) }
		want := sumBlocked(c.n, p, jmin, logBinomPMF(jmin, c.n, p), jmax, logFP, func(int) {})
		if math.Abs(got-want) > 1e-10*want {
			t.Errorf("%+v: sampled %v, every load %v", c, got, want)
		}
		if closed := closedFPBlocked(c.n, c.blocks, c.s, c.k); math.Abs(got-closed) > 1e-10*closed {
			t.Errorf("%+v: sampled %v, closed form %v", c, got, closed)
		}
	}
}

// TestLogBinomPMF: Loader's form against the ratio recurrence from 0 and
// against lgamma where both are accurate, and at n = 2^64 where lgamma
// differences would lose every digit (the pmf must still sum to 1).
func TestLogBinomPMF(t *testing.T) {
	for _, c := range []struct{ n, p float64 }{{1000, 0.3}, {1e6, 0.01}, {1e6, 0.5}, {3e5, 0.999}} {
		logPmf := c.n * math.Log1p(-c.p)
		logRatio := math.Log(c.p) - math.Log1p(-c.p)
		for j := 0.0; j < c.n; j++ {
			if j > 0 && logPmf > -700 {
				got := logBinomPMF(j, c.n, c.p)
				if math.Abs(got-logPmf) > 1e-9*math.Max(1, math.Abs(logPmf)) {
					t.Fatalf("n=%g p=%g j=%g: %v, recurrence %v", c.n, c.p, j, got, logPmf)
				}
				lg := func(x float64) float64 { v, _ := math.Lgamma(x + 1); return v }
				if c.n <= 1000 {
					ref := lg(c.n) - lg(j) - lg(c.n-j) + j*math.Log(c.p) + (c.n-j)*math.Log1p(-c.p)
					if math.Abs(got-ref) > 1e-10 {
						t.Fatalf("n=%g p=%g j=%g: %v, lgamma %v", c.n, c.p, j, got, ref)
					}
				}
			}
			logPmf += math.Log((c.n-j)/(j+1)) + logRatio
		}
	}
	n, p := math.Ldexp(1, 64), 1e-15
	lam := n * p
	sum := 0.0
	for j := math.Floor(lam - 40*math.Sqrt(lam)); j <= lam+40*math.Sqrt(lam); j++ {
		sum += math.Exp(logBinomPMF(j, n, p))
	}
	if math.Abs(sum-1) > 1e-12 {
		t.Errorf("pmf of Bin(2^64, 1e-15) sums to %v", sum)
	}
}

// TestChoicesODEBounded: for every m/n that integer m ≥ 1 and n ≤ 2^64 − 1
// give, up to 1e12, the solver reaches t = 1 in fewer than 4,000 steps
// (it stops at maxODESteps and returns NaN), and the fill is in [0, 1].
// Before, large k left it an ulp above 1, which made FPChoices NaN.
func TestChoicesODEBounded(t *testing.T) {
	for _, c := range []int{1, 2, 3, 8, 64} {
		for _, k := range []int{1, 3, 20, 256} {
			for _, b := range []float64{0x1p-64, 1e-12, 1e-6, 0.01, 0.5, 1, 8, 32, 1e3, 1e12} {
				z, steps := fillChoices(b, k, c)
				if !(z >= 0 && z <= 1) {
					t.Errorf("c=%d k=%d b=%g: fill %v", c, k, b, z)
				}
				if steps >= 4000 {
					t.Errorf("c=%d k=%d b=%g: %d steps", c, k, b, steps)
				}
			}
		}
	}
	if fp := FPChoices(0.1, 7, 1); fp != 1 {
		t.Errorf("FPChoices(0.1, 7, 1) = %v, want 1 (a full filter)", fp)
	}
	// The step bound: far below 2^−64 the solver gives up with NaN rather
	// than returning the fill at some t < 1.
	if z, steps := fillChoices(1e-300, 1, 8); steps != maxODESteps || !math.IsNaN(z) {
		t.Errorf("b = 1e-300: fill %v after %d steps, want NaN after %d", z, steps, maxODESteps)
	}
}

// TestOptimalKChoicesScan: the scan that stops three k past the best
// returns the exhaustive minimum over k = 1 … kmax, and solves the
// equation at most best k + 3 times. Before, a best rate above 1/2 (small
// m/n) never let the scan stop: 256 solves per call.
func TestOptimalKChoicesScan(t *testing.T) {
	bs := []float64{1e-6, 0.5, 2, 8, 32}
	cs := []int{1, 2, 3, 8}
	kmax := 64
	if testing.Short() {
		bs, cs, kmax = []float64{0.01, 1, 8}, []int{1, 2}, 40
	}
	for _, b := range bs {
		for _, c := range cs {
			k, fp, solves := optimalKChoices(b, c, kmax)
			wantK, want := 0, math.Inf(1)
			for kk := 1; kk <= kmax; kk++ {
				if f := FPChoices(b, kk, c); f < want {
					wantK, want = kk, f
				}
			}
			if k != wantK || fp != want {
				t.Errorf("b=%g c=%d: (%d, %v), exhaustive (%d, %v)", b, c, k, fp, wantK, want)
			}
			if solves > min(k+3, kmax) {
				t.Errorf("b=%g c=%d: %d solves for best k %d", b, c, solves, k)
			}
		}
	}
}

// TestLoadsDleftOneChoice: with d = 1 the fluid limit is Poisson(load);
// before, it kept only 24 levels above the load, which drops Poisson mass
// (1e-4 at load 32: loads 57 … 64 came out 0).
func TestLoadsDleftOneChoice(t *testing.T) {
	for _, load := range []float64{1, 6.4, 12, 32} {
		q, err := LoadsDleft(1, load)
		if err != nil {
			t.Fatal(err)
		}
		sum := 0.0
		for a, x := range q[0] {
			lg, _ := math.Lgamma(float64(a) + 1)
			want := math.Exp(-load + float64(a)*math.Log(load) - lg)
			if math.Abs(x-want) > 1e-9*want+1e-12 {
				t.Errorf("load %g: q[%d] = %v, Poisson %v", load, a, x, want)
			}
			sum += x
		}
		if math.Abs(sum-1) > 3e-7 {
			t.Errorf("load %g: fractions sum to %v", load, sum)
		}
	}
}
