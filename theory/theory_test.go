package theory_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/bloomlab/bloomlab/theory"
)

// relErr returns |got − want| / |want| (|got − want| when want is 0).
func relErr(got, want float64) float64 {
	if want == 0 {
		return math.Abs(got)
	}
	return math.Abs(got-want) / math.Abs(want)
}

// TestPaperTable003 reproduces the table of 003 §3 to its printed precision:
// m = 8n with k = 3..7, and m = 10n with k = 7.
func TestPaperTable003(t *testing.T) {
	const n = 1e6
	cases := []struct {
		bitsPerKey float64
		k          int
		want       string
	}{
		{8, 3, "0.0306"},
		{8, 4, "0.0240"},
		{8, 5, "0.0217"},
		{8, 6, "0.0216"},
		{8, 7, "0.0229"},
		{10, 7, "0.0082"},
	}
	for _, c := range cases {
		m := c.bitsPerKey * n
		for name, f := range map[string]func(m, n float64, k int) float64{
			"FPExact":      theory.FPExact,
			"FPAsymptotic": theory.FPAsymptotic,
		} {
			if got := fmt.Sprintf("%.4f", f(m, n, c.k)); got != c.want {
				t.Errorf("%s(%g·n, n, %d) = %s, paper prints %s", name, c.bitsPerKey, c.k, got, c.want)
			}
		}
	}
}

func TestOptimalKPaper(t *testing.T) {
	const n = 1e6
	if k := theory.OptimalK(8*n, n); k != 6 {
		t.Errorf("OptimalK(8n, n) = %d, 003 §3 says 6", k)
	}
	if k := theory.OptimalK(10*n, n); k != 7 {
		t.Errorf("OptimalK(10n, n) = %d, 003 §3 says 7", k)
	}
	if k := theory.OptimalKPartitioned(8*n, n); k != 6 {
		t.Errorf("OptimalKPartitioned(8n, n) = %d, want 6", k)
	}
	if k := theory.OptimalKPartitioned(10*n, n); k != 7 {
		t.Errorf("OptimalKPartitioned(10n, n) = %d, want 7", k)
	}
}

// bruteMin returns the rate-minimising k in [1, kmax] by exhaustive search,
// the smallest on ties, and its rate.
func bruteMin(f func(k int) float64, kmax int) (int, float64) {
	best, bestF := 1, f(1)
	for k := 2; k <= kmax; k++ {
		if v := f(k); v < bestF {
			best, bestF = k, v
		}
	}
	return best, bestF
}

// TestOptimalKBrute compares OptimalK and OptimalKPartitioned with an
// exhaustive search over k, which also checks that the partitioned rate is
// unimodal in k (the binary search relies on it).
func TestOptimalKBrute(t *testing.T) {
	for _, m := range []float64{1, 2, 3, 5, 10, 17, 64, 100, 1000, 4096, 12345} {
		for _, n := range []float64{1, 2, 3, 7, 10, 100, 1000, 5000} {
			kmax := int(m)
			kb, fb := bruteMin(func(k int) float64 { return theory.FPExact(m, n, k) }, max(kmax, 200))
			if k := theory.OptimalK(m, n); k != kb {
				f := theory.FPExact(m, n, k)
				if relErr(f, fb) > 1e-12 {
					t.Errorf("OptimalK(%g, %g) = %d (rate %g), exhaustive %d (rate %g)", m, n, k, f, kb, fb)
				}
			}
			kb, fb = bruteMin(func(k int) float64 { return theory.FPPartitioned(m, n, k) }, kmax)
			if k := theory.OptimalKPartitioned(m, n); k != kb {
				f := theory.FPPartitioned(m, n, k)
				if relErr(f, fb) > 1e-12 {
					t.Errorf("OptimalKPartitioned(%g, %g) = %d (rate %g), exhaustive %d (rate %g)", m, n, k, f, kb, fb)
				}
			}
		}
	}
}

func TestOptimalKLarge(t *testing.T) {
	// n = 1: the partitioned rate (k/m)^k is minimal at k = m/e.
	m := math.Ldexp(1, 40)
	if k := theory.OptimalKPartitioned(m, 1); math.Abs(float64(k)-m/math.E) > 1 {
		t.Errorf("OptimalKPartitioned(2^40, 1) = %d, want m/e = %.1f", k, m/math.E)
	}
	// Large m, m/n = 10: both near ln2·10 = 6.93.
	if k := theory.OptimalK(m, m/10); k != 7 {
		t.Errorf("OptimalK(2^40, 2^40/10) = %d, want 7", k)
	}
	if k := theory.OptimalKPartitioned(m, m/10); k != 7 {
		t.Errorf("OptimalKPartitioned(2^40, 2^40/10) = %d, want 7", k)
	}
	// Optimum k = ln2·m/n for n = 1 is about 7.6e11: still exact.
	want := math.Ln2 / -math.Log1p(-1/m)
	if k := theory.OptimalK(m, 1); math.Abs(float64(k)-want) > 1 {
		t.Errorf("OptimalK(2^40, 1) = %d, want ≈ %.1f", k, want)
	}
	// Beyond 2^53 the answer is not representable: 0, never a wrong k.
	if k := theory.OptimalK(1e300, 1); k != 0 {
		t.Errorf("OptimalK(1e300, 1) = %d, want 0", k)
	}
	if k := theory.OptimalKPartitioned(1e300, 1); k != 0 {
		t.Errorf("OptimalKPartitioned(1e300, 1) = %d, want 0", k)
	}
	// But a huge m with a small optimum is fine.
	if k := theory.OptimalKPartitioned(1e300, 1e299); k != 7 {
		t.Errorf("OptimalKPartitioned(1e300, 1e299) = %d, want 7", k)
	}
}

// TestFPAtOptimalK checks 003 §3: at the continuous optimum k = ln2·m/n the
// rate is (1/2)^k = 0.6185^{m/n}.
func TestFPAtOptimalK(t *testing.T) {
	const n = 1e6
	for k := 1; k <= 40; k++ {
		b := float64(k) / math.Ln2 // bits per key making k optimal
		asym := theory.FPAsymptotic(b*n, n, k)
		got := theory.FPAtOptimalK(b)
		if relErr(got, asym) > 1e-12 || relErr(got, math.Ldexp(1, -k)) > 1e-12 {
			t.Errorf("k=%d: FPAtOptimalK(%g) = %g, FPAsymptotic = %g, 2^-k = %g", k, b, got, asym, math.Ldexp(1, -k))
		}
		// 0.6185 is printed to 4 digits: e^{−ln²2} = 0.618503..., so the
		// relative error of 0.6185^b is about 5e-6·b.
		if e := relErr(math.Pow(0.6185, b), got); e > 6e-6*b {
			t.Errorf("k=%d: 0.6185^%g = %g, FPAtOptimalK = %g (rel err %g)", k, b, math.Pow(0.6185, b), got, e)
		}
		// No integer k does better than the continuous optimum.
		for kk := max(1, k-3); kk <= k+3; kk++ {
			if f := theory.FPAsymptotic(b*n, n, kk); f < got*(1-1e-12) {
				t.Errorf("FPAsymptotic(%g·n, n, %d) = %g < FPAtOptimalK = %g", b, kk, f, got)
			}
		}
	}
}

// TestOverheadTendsToLog2e checks 004 §4: an optimally sized Bloom filter
// uses log2(e) = 1/ln2 ≈ 1.4427 times the lower bound n·log2(1/ε).
func TestOverheadTendsToLog2e(t *testing.T) {
	for _, eps := range []float64{1e-3, 1e-6, 1e-12} {
		for _, n := range []uint64{1_000_000, 1_000_000_000} {
			m, _, err := theory.Size(n, eps)
			if err != nil {
				t.Fatal(err)
			}
			o := theory.Overhead(float64(m), float64(n), eps)
			if relErr(o, 1/math.Ln2) > 0.01 {
				t.Errorf("Overhead of Size(%d, %g) = %.5f, want 1/ln2 = %.5f within 1%%", n, eps, o, 1/math.Ln2)
			}
			if o < 1/math.Ln2*(1-1e-9) {
				t.Errorf("Overhead of Size(%d, %g) = %.7f, below the continuous optimum 1/ln2", n, eps, o)
			}
		}
	}
	if got := theory.LowerBoundBits(1000, 1.0/1024); got != 10000 {
		t.Errorf("LowerBoundBits(1000, 2^-10) = %g, want 10000", got)
	}
	if got := theory.Overhead(14427, 1000, 1.0/1024); relErr(got, 1.4427) > 1e-12 {
		t.Errorf("Overhead(14427, 1000, 2^-10) = %g, want 1.4427", got)
	}
}

// TestPartitionedWorse checks 004 §5: the partitioned filter has a strictly
// higher rate than the standard one for k ≥ 2 (equal for k = 1), and both
// tend to the asymptotic rate as m grows with m/n fixed.
func TestPartitionedWorse(t *testing.T) {
	for _, b := range []float64{2, 4, 8, 16} {
		for _, n := range []float64{10, 1000, 1e6, 1e9} {
			m := b * n
			for k := 1; k <= 12; k++ {
				p, e := theory.FPPartitioned(m, n, k), theory.FPExact(m, n, k)
				if k == 1 && relErr(p, e) > 1e-14 {
					t.Errorf("k=1, m=%g, n=%g: partitioned %g != standard %g", m, n, p, e)
				}
				if k >= 2 && !(p > e) {
					t.Errorf("k=%d, m=%g, n=%g: partitioned %g not > standard %g", k, m, n, p, e)
				}
				fp, fe := theory.FillExpectedPartitioned(m, n, k), theory.FillExpected(m, n, k)
				if k >= 2 && !(fp > fe) {
					t.Errorf("k=%d, m=%g, n=%g: partitioned fill %g not > standard fill %g", k, m, n, fp, fe)
				}
				if relErr(theory.FPFromFill(fp, k), p) > 1e-12 || relErr(theory.FPFromFill(fe, k), e) > 1e-12 {
					t.Errorf("k=%d, m=%g, n=%g: FPFromFill(fill) disagrees with the rate", k, m, n)
				}
			}
		}
	}
	// Convergence to FPAsymptotic with m/n = 8, k = 6.
	const k = 6
	prevP, prevE := math.Inf(1), math.Inf(1)
	for n := 10.0; n <= 1e9; n *= 10 {
		m := 8 * n
		a := theory.FPAsymptotic(m, n, k)
		dp := relErr(theory.FPPartitioned(m, n, k), a)
		de := relErr(theory.FPExact(m, n, k), a)
		if !(dp < prevP) || !(de < prevE) || de > dp {
			t.Errorf("n=%g: rel. distance to asymptotic: partitioned %g (prev %g), standard %g (prev %g)", n, dp, prevP, de, prevE)
		}
		// Both errors are O(k/m) (relative): bound them by 10·k²/m.
		if dp > 10*k*k/m || de > 10*k*k/m {
			t.Errorf("n=%g: rel. distance to asymptotic too large: partitioned %g, standard %g", n, dp, de)
		}
		prevP, prevE = dp, de
	}
}

var sizeNs = []uint64{1, 2, 3, 10, 100, 1000, 12345, 1_000_000, 1_000_000_000}
var sizeEps = []float64{0.5, 1e-1, 1e-2, 1e-3, 1e-6, 1e-12, 1e-15}

// TestSize checks that Size returns the smallest m: FPExact(m, n, k) ≤ eps
// and no k gives FPExact(m−1, n, k) ≤ eps.
func TestSize(t *testing.T) {
	for _, n := range sizeNs {
		for _, eps := range sizeEps {
			m, k, err := theory.Size(n, eps)
			if err != nil {
				t.Errorf("Size(%d, %g): %v", n, eps, err)
				continue
			}
			nf := float64(n)
			if f := theory.FPExact(float64(m), nf, k); !(f <= eps) {
				t.Errorf("Size(%d, %g) = (%d, %d): FPExact = %g > eps", n, eps, m, k, f)
			}
			if k != theory.OptimalK(float64(m), nf) {
				t.Errorf("Size(%d, %g) = (%d, %d), OptimalK(m, n) = %d", n, eps, m, k, theory.OptimalK(float64(m), nf))
			}
			// m−1 fails for every k (the rate is unimodal in k, so
			// checking well past the optimum suffices).
			for kk := 1; kk <= 3*k+10; kk++ {
				if f := theory.FPExact(float64(m-1), nf, kk); f <= eps {
					t.Errorf("Size(%d, %g) = %d, but FPExact(m−1, n, %d) = %g ≤ eps", n, eps, m, kk, f)
				}
			}
			// Never below the continuous bound n·log2(e)·log2(1/eps).
			if lb := nf * -math.Log(eps) / (math.Ln2 * math.Ln2); float64(m) < lb*(1-1e-12) {
				t.Errorf("Size(%d, %g) = %d below continuous bound %g", n, eps, m, lb)
			}
		}
	}
	// The well-known sizing: 1% needs 9.59 bits per key, k = 7.
	m, k, _ := theory.Size(1_000_000, 0.01)
	if b := float64(m) / 1e6; math.Abs(b-9.585) > 0.01 || k != 7 {
		t.Errorf("Size(1e6, 0.01) = %d bits (%.3f bits/key), k = %d; want ≈ 9.585 bits/key, k = 7", m, b, k)
	}
}

// dividesSomeFit reports whether some divisor k of m gives
// FPPartitioned(m, n, k) ≤ eps.
func dividesSomeFit(m uint64, n, eps float64) bool {
	for k := uint64(1); k <= m; k++ {
		if m%k == 0 && theory.FPPartitioned(float64(m), n, int(k)) <= eps {
			return true
		}
	}
	return false
}

func TestSizePartitioned(t *testing.T) {
	for _, n := range sizeNs {
		for _, eps := range sizeEps {
			m, k, err := theory.SizePartitioned(n, eps)
			if err != nil {
				t.Errorf("SizePartitioned(%d, %g): %v", n, eps, err)
				continue
			}
			nf := float64(n)
			if m%uint64(k) != 0 {
				t.Errorf("SizePartitioned(%d, %g) = (%d, %d): m not a multiple of k", n, eps, m, k)
			}
			if f := theory.FPPartitioned(float64(m), nf, k); !(f <= eps) {
				t.Errorf("SizePartitioned(%d, %g) = (%d, %d): FPPartitioned = %g > eps", n, eps, m, k, f)
			}
			// Never smaller than the standard filter's size.
			if ms, _, _ := theory.Size(n, eps); m < ms {
				t.Errorf("SizePartitioned(%d, %g) = %d < Size = %d", n, eps, m, ms)
			}
			if n <= 100 {
				// Exhaustive: no m' < m has a fitting divisor.
				for mm := uint64(1); mm < m; mm++ {
					if dividesSomeFit(mm, nf, eps) {
						t.Errorf("SizePartitioned(%d, %g) = %d, but m' = %d fits", n, eps, m, mm)
						break
					}
				}
				continue
			}
			// Otherwise: for each k' up to well past the optimum, the
			// largest multiple of k' below m does not fit.
			for kk := uint64(1); kk <= uint64(3*k+10); kk++ {
				mm := (m - 1) / kk * kk
				if mm >= kk && theory.FPPartitioned(float64(mm), nf, int(kk)) <= eps {
					t.Errorf("SizePartitioned(%d, %g) = %d, but m' = %d, k' = %d fits", n, eps, m, mm, kk)
				}
			}
		}
	}
}

func TestSizeLimits(t *testing.T) {
	// 1e13 keys at 1e-6 need about 2.9e14 > 2^48 bits.
	for name, f := range map[string]func(uint64, float64) (uint64, int, error){
		"Size": theory.Size, "SizePartitioned": theory.SizePartitioned,
	} {
		if _, _, err := f(10_000_000_000_000, 1e-6); !errors.Is(err, theory.ErrTooLarge) {
			t.Errorf("%s(1e13, 1e-6): err = %v, want ErrTooLarge", name, err)
		}
		// eps near 1 forces k = 1: m ≥ n/ln(1/(1−eps)), here > 2^48,
		// although the continuous bound −n·ln(eps)/ln²2 is far below it.
		for _, c := range []struct {
			n   uint64
			eps float64
		}{{1 << 60, 0.999}, {1 << 53, 1 - 1e-7}} {
			if _, _, err := f(c.n, c.eps); !errors.Is(err, theory.ErrTooLarge) {
				t.Errorf("%s(%d, %g): err = %v, want ErrTooLarge", name, c.n, c.eps, err)
			}
		}
		// Just inside the limit with k = 1: m ≈ 2^50/ln(1e7) ≈ 7e13.
		if m, k, err := f(1<<50, 1-1e-7); err != nil || k != 1 || relErr(float64(m), math.Ldexp(1, 50)/math.Log(1e7)) > 1e-6 {
			t.Errorf("%s(2^50, 1−1e-7) = (%d, %d, %v), want k = 1, m ≈ %g", name, m, k, err, math.Ldexp(1, 50)/math.Log(1e7))
		}
		// 1e12 keys at 1e-6: about 2.9e13 bits, within the limit.
		m, k, err := f(1_000_000_000_000, 1e-6)
		if err != nil || m > theory.MaxBits || k != 20 {
			t.Errorf("%s(1e12, 1e-6) = (%d, %d, %v)", name, m, k, err)
		}
		for _, bad := range []struct {
			n   uint64
			eps float64
		}{{0, 0.01}, {10, 0}, {10, -0.5}, {10, 1}, {10, 1.5}, {10, math.NaN()}, {10, math.Inf(1)}} {
			m, k, err := f(bad.n, bad.eps)
			if !errors.Is(err, theory.ErrInvalid) || m != 0 || k != 0 {
				t.Errorf("%s(%d, %g) = (%d, %d, %v), want ErrInvalid", name, bad.n, bad.eps, m, k, err)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "theory: ") {
				t.Errorf("%s error %q lacks the \"theory: \" prefix", name, err)
			}
		}
	}
}

// TestFillRoundTrip checks CountFromFill against FillExpected: it inverts
// the asymptotic fill exactly and the exact fill up to the documented factor
// −m·ln(1 − 1/m) = 1 + 1/(2m) + .... Near fill = 1 the inversion is
// ill-conditioned: rounding fill (by ≤ 2^-53) moves the estimate by a
// relative 2^-53/((1 − fill)·(−ln(1 − fill))), so the tolerance includes that.
func TestFillRoundTrip(t *testing.T) {
	for _, m := range []float64{2, 10, 1000, 1e6, math.Ldexp(1, 40)} {
		for _, ratio := range []float64{0.01, 0.1, 0.5, 1, 4} { // n/m
			for _, k := range []int{1, 3, 7, 20} {
				n := ratio * m
				fill := theory.FillExpected(m, n, k)
				got := theory.CountFromFill(m, k, fill)
				if fill == 1 {
					if !math.IsInf(got, 1) {
						t.Errorf("m=%g n=%g k=%d: fill rounds to 1 but CountFromFill = %g, want +Inf", m, n, k, got)
					}
					continue
				}
				tol := 1e-14 + 2*0x1p-53/((1-fill)*-math.Log1p(-fill))
				factor := -m * math.Log1p(-1/m)
				if e := relErr(got, n*factor); e > tol {
					t.Errorf("m=%g n=%g k=%d: CountFromFill(FillExpected) = %g, want %g (rel err %g > %g)", m, n, k, got, n*factor, e, tol)
				}
				if relErr(got, n) > 1/m+tol {
					t.Errorf("m=%g n=%g k=%d: CountFromFill(FillExpected) = %g, more than 1/m from n", m, n, k, got)
				}
				asymFill := -math.Expm1(-float64(k) * n / m)
				if asymFill == 1 {
					continue
				}
				tol = 1e-14 + 2*0x1p-53/((1-asymFill)*-math.Log1p(-asymFill))
				if e := relErr(theory.CountFromFill(m, k, asymFill), n); e > tol {
					t.Errorf("m=%g n=%g k=%d: CountFromFill(asymptotic fill) rel err %g > %g", m, n, k, e, tol)
				}
			}
		}
	}
	if got := theory.CountFromFill(1000, 3, 1); !math.IsInf(got, 1) {
		t.Errorf("CountFromFill(fill=1) = %g, want +Inf", got)
	}
	if got := theory.CountFromFill(1000, 3, 0); got != 0 {
		t.Errorf("CountFromFill(fill=0) = %g, want 0", got)
	}
	// Half the bits set with k = 1 means n = m·ln2.
	if got := theory.CountFromFill(1000, 1, 0.5); relErr(got, 1000*math.Ln2) > 1e-15 {
		t.Errorf("CountFromFill(1000, 1, 0.5) = %g, want 1000·ln2", got)
	}
}

// TestHugeAndTiny checks precision for m = 2^40 and rates near 1e-15, where
// computing (1 − 1/m)^{kn} with math.Pow would lose digits.
func TestHugeAndTiny(t *testing.T) {
	m := math.Ldexp(1, 40)
	// One key, one hash: the fill is exactly 1/m.
	if got := theory.FillExpected(m, 1, 1); relErr(got, 1/m) > 1e-14 {
		t.Errorf("FillExpected(2^40, 1, 1) = %g, want 2^-40", got)
	}
	if got := theory.FPExact(m, 1, 1); relErr(got, 1/m) > 1e-14 {
		t.Errorf("FPExact(2^40, 1, 1) = %g, want 2^-40", got)
	}
	// k keys in a partitioned filter with n = 1: rate (k/m)^k exactly.
	if got, want := theory.FPPartitioned(m, 1, 3), math.Pow(3/m, 3); relErr(got, want) > 1e-13 {
		t.Errorf("FPPartitioned(2^40, 1, 3) = %g, want %g", got, want)
	}
	// Two keys, k = 1: fill = 1 − (1 − 1/m)^2 = 2/m − 1/m².
	if got, want := theory.FillExpected(m, 2, 1), 2/m-1/(m*m); relErr(got, want) > 1e-14 {
		t.Errorf("FillExpected(2^40, 2, 1) = %g, want %g", got, want)
	}
	// m/n = 10, k = 7 at m = 2^40: exact and asymptotic agree to ~k/m.
	e, a := theory.FPExact(m, m/10, 7), theory.FPAsymptotic(m, m/10, 7)
	if relErr(e, a) > 1e-9 || fmt.Sprintf("%.4f", e) != "0.0082" {
		t.Errorf("m = 2^40, m/n = 10, k = 7: exact %g, asymptotic %g", e, a)
	}
	// Rates near 1e-15 keep their relative precision: at the continuous
	// optimum with k = 50 the asymptotic rate is 2^-50 ≈ 8.9e-16.
	b := 50 / math.Ln2
	if got := theory.FPAsymptotic(b*1e9, 1e9, 50); relErr(got, math.Ldexp(1, -50)) > 1e-12 {
		t.Errorf("FPAsymptotic at k = 50 optimum = %g, want 2^-50", got)
	}
	// Rates far below the float64 range underflow to 0 rather than NaN.
	if got := theory.FPExact(1e6, 1, 2000); got != 0 {
		t.Errorf("FPExact(1e6, 1, 2000) = %g, want 0 (underflow)", got)
	}
	// m = 1: the only bit is set by the first key.
	if got := theory.FPExact(1, 5, 3); got != 1 {
		t.Errorf("FPExact(1, 5, 3) = %g, want 1", got)
	}
	if got := theory.OptimalK(1, 5); got != 1 {
		t.Errorf("OptimalK(1, 5) = %d, want 1", got)
	}
	// Empty filter: no false positives.
	for name, f := range map[string]func(m, n float64, k int) float64{
		"FPExact": theory.FPExact, "FPAsymptotic": theory.FPAsymptotic, "FPPartitioned": theory.FPPartitioned,
		"FillExpected": theory.FillExpected, "FillExpectedPartitioned": theory.FillExpectedPartitioned,
	} {
		if got := f(1, 0, 1); got != 0 {
			t.Errorf("%s(1, 0, 1) = %g, want 0", name, got)
		}
		if got := f(1e9, 0, 7); got != 0 {
			t.Errorf("%s(1e9, 0, 7) = %g, want 0", name, got)
		}
	}
	if theory.OptimalK(100, 0) != 1 || theory.OptimalKPartitioned(100, 0) != 1 {
		t.Errorf("optimal k for n = 0 should be 1")
	}
}

// TestBadInputs checks that out-of-domain arguments give the documented
// result (NaN, or 0 for the k-returning functions) and never panic.
func TestBadInputs(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	type mnk struct {
		m, n float64
		k    int
	}
	badMNK := []mnk{
		{-1, 10, 3}, {0, 10, 3}, {0.5, 10, 3}, {nan, 10, 3}, {inf, 10, 3}, {-inf, 10, 3},
		{100, -1, 3}, {100, nan, 3}, {100, inf, 3}, {100, -inf, 3},
		{100, 10, 0}, {100, 10, -1}, {100, 10, math.MinInt},
	}
	for name, f := range map[string]func(m, n float64, k int) float64{
		"FPExact": theory.FPExact, "FPAsymptotic": theory.FPAsymptotic, "FPPartitioned": theory.FPPartitioned,
		"FillExpected": theory.FillExpected, "FillExpectedPartitioned": theory.FillExpectedPartitioned,
	} {
		for _, c := range badMNK {
			if name == "FPAsymptotic" && c.m == 0.5 {
				continue // m in (0, 1) is valid for the asymptotic form
			}
			if got := f(c.m, c.n, c.k); !math.IsNaN(got) {
				t.Errorf("%s(%g, %g, %d) = %g, want NaN", name, c.m, c.n, c.k, got)
			}
		}
	}
	// Partitioned: k > m leaves a subarray with no bits.
	if got := theory.FPPartitioned(5, 1, 6); !math.IsNaN(got) {
		t.Errorf("FPPartitioned(5, 1, 6) = %g, want NaN", got)
	}
	if got := theory.FillExpectedPartitioned(5, 1, 6); !math.IsNaN(got) {
		t.Errorf("FillExpectedPartitioned(5, 1, 6) = %g, want NaN", got)
	}
	for _, c := range []struct {
		fill float64
		k    int
	}{{-0.1, 3}, {1.1, 3}, {nan, 3}, {inf, 3}, {0.5, 0}, {0.5, -2}} {
		if got := theory.FPFromFill(c.fill, c.k); !math.IsNaN(got) {
			t.Errorf("FPFromFill(%g, %d) = %g, want NaN", c.fill, c.k, got)
		}
		if got := theory.CountFromFill(100, c.k, c.fill); !math.IsNaN(got) {
			t.Errorf("CountFromFill(100, %d, %g) = %g, want NaN", c.k, c.fill, got)
		}
	}
	for _, m := range []float64{0, -1, nan, inf} {
		if got := theory.CountFromFill(m, 3, 0.5); !math.IsNaN(got) {
			t.Errorf("CountFromFill(%g, 3, 0.5) = %g, want NaN", m, got)
		}
	}
	for _, c := range [][2]float64{{-1, 10}, {0, 10}, {0.5, 10}, {nan, 10}, {inf, 10}, {100, -1}, {100, nan}, {100, inf}} {
		if k := theory.OptimalK(c[0], c[1]); k != 0 {
			t.Errorf("OptimalK(%g, %g) = %d, want 0", c[0], c[1], k)
		}
		if k := theory.OptimalKPartitioned(c[0], c[1]); k != 0 {
			t.Errorf("OptimalKPartitioned(%g, %g) = %d, want 0", c[0], c[1], k)
		}
	}
	for _, c := range [][2]float64{{-1, 0.1}, {nan, 0.1}, {inf, 0.1}, {10, 0}, {10, -0.1}, {10, 1.5}, {10, nan}} {
		if got := theory.LowerBoundBits(c[0], c[1]); !math.IsNaN(got) {
			t.Errorf("LowerBoundBits(%g, %g) = %g, want NaN", c[0], c[1], got)
		}
		if got := theory.Overhead(100, c[0], c[1]); !math.IsNaN(got) {
			t.Errorf("Overhead(100, %g, %g) = %g, want NaN", c[0], c[1], got)
		}
	}
	// A zero lower bound makes the ratio undefined.
	if got := theory.Overhead(100, 0, 0.1); !math.IsNaN(got) {
		t.Errorf("Overhead(100, 0, 0.1) = %g, want NaN", got)
	}
	if got := theory.Overhead(100, 10, 1); !math.IsNaN(got) {
		t.Errorf("Overhead(100, 10, 1) = %g, want NaN", got)
	}
	for _, m := range []float64{-1, nan, inf} {
		if got := theory.Overhead(m, 10, 0.1); !math.IsNaN(got) {
			t.Errorf("Overhead(%g, 10, 0.1) = %g, want NaN", m, got)
		}
	}
	for _, b := range []float64{-1, nan, inf} {
		if got := theory.FPAtOptimalK(b); !math.IsNaN(got) {
			t.Errorf("FPAtOptimalK(%g) = %g, want NaN", b, got)
		}
	}
	if got := theory.FPAtOptimalK(0); got != 1 {
		t.Errorf("FPAtOptimalK(0) = %g, want 1", got)
	}
	if got := theory.LowerBoundBits(10, 1); got != 0 {
		t.Errorf("LowerBoundBits(10, 1) = %g, want 0", got)
	}
}
