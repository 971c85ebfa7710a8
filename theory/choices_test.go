package theory_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/bloomlab/bloomlab/theory"
)

// TestChoicesFillOneChoice: for c = 1 equation (3.2) is dz/dt = k(1 − z)/b,
// solved by 1 − e^{−k/b} (000 §3.1).
func TestChoicesFillOneChoice(t *testing.T) {
	for _, b := range []float64{0.5, 1, 4, 8, 16, 32, 100} {
		for _, k := range []int{1, 3, 6, 11, 22, 64, 200} {
			want := -math.Expm1(-float64(k) / b)
			if got := theory.FillChoices(b, k, 1); relErr(got, want) > 1e-10 {
				t.Errorf("b=%v k=%d: fill %v, want %v", b, k, got, want)
			}
			if got, want := theory.FPChoices(b, k, 1), theory.FPAsymptotic(b, 1, k); relErr(got, want) > 1e-9 {
				t.Errorf("b=%v k=%d: FP %v, want %v", b, k, got, want)
			}
		}
	}
}

// TestChoicesTable2 reproduces the prediction column of 000 Table 2 to its
// four printed decimals.
func TestChoicesTable2(t *testing.T) {
	for _, r := range []struct {
		b    float64
		c, k int
		want string
	}{
		{8, 2, 7, "0.5296"}, {8, 3, 7, "0.5019"},
		{16, 2, 13, "0.5187"}, {16, 3, 13, "0.4994"},
		{32, 2, 24, "0.5016"}, {32, 3, 25, "0.5022"},
	} {
		if got := fmt.Sprintf("%.4f", theory.FillChoices(r.b, r.k, r.c)); got != r.want {
			t.Errorf("m/n=%v c=%d k=%d: %s, paper %s", r.b, r.c, r.k, got, r.want)
		}
	}
}

// TestChoicesOptimalK: the ODE's best k for every (m/n, c) of 000 Table 1
// is the k the paper found best by simulation, and the predicted rates
// agree with the table to about 1%.
func TestChoicesOptimalK(t *testing.T) {
	for _, r := range []struct {
		b     float64
		c, k  int
		paper float64
	}{
		{8, 1, 6, 2.159e-2}, {8, 2, 7, 2.323e-2}, {8, 3, 7, 2.389e-2},
		{16, 1, 11, 4.588e-4}, {16, 2, 13, 3.935e-4}, {16, 3, 13, 3.607e-4},
		{32, 1, 22, 2.106e-7}, {32, 2, 24, 1.285e-7}, {32, 3, 25, 9.980e-8},
	} {
		k, fp := theory.OptimalKChoices(r.b, r.c, 64)
		if k != r.k {
			t.Errorf("m/n=%v c=%d: best k %d, paper %d", r.b, r.c, k, r.k)
		}
		if relErr(fp, r.paper) > 0.01 {
			t.Errorf("m/n=%v c=%d: predicted %v, paper %v", r.b, r.c, fp, r.paper)
		}
	}
}

// The solver's tolerance: a solve is stable under the step control (the
// fill is a smooth increasing function of b), and the fill rises with k
// and falls with c and b, as it must.
func TestChoicesFillMonotone(t *testing.T) {
	prev := 1.0
	for b := 1.0; b <= 64; b *= 1.5 {
		z := theory.FillChoices(b, 10, 2)
		if !(z < prev && z > 0) {
			t.Errorf("b=%v: fill %v not below %v", b, z, prev)
		}
		prev = z
	}
	for c := 1; c < 8; c++ {
		if a, b := theory.FillChoices(16, 13, c), theory.FillChoices(16, 13, c+1); !(b < a) {
			t.Errorf("c=%d: fill %v, c+1: %v", c, a, b)
		}
	}
}

func TestExpectedMinBinomial(t *testing.T) {
	// c = 1: the mean kp.
	for _, p := range []float64{0, 0.1, 0.5, 0.93, 1} {
		if got := theory.ExpectedMinBinomial(20, 1, p); math.Abs(got-20*p) > 1e-12 {
			t.Errorf("p=%v: %v, want %v", p, got, 20*p)
		}
	}
	// k = 1, c = 2: min of two Bernoulli(p) has mean p².
	if got := theory.ExpectedMinBinomial(1, 2, 0.3); math.Abs(got-0.09) > 1e-15 {
		t.Errorf("Bernoulli: %v", got)
	}
	// k = 2, c = 2, p = 1/2: P(min ≥ 1) = (3/4)², P(min ≥ 2) = (1/4)².
	if got := theory.ExpectedMinBinomial(2, 2, 0.5); math.Abs(got-(9.0/16+1.0/16)) > 1e-15 {
		t.Errorf("k=2: %v", got)
	}
	// No underflow at the largest k.
	if got := theory.ExpectedMinBinomial(theory.MaxChoicesK, 3, 1e-300); !(got >= 0 && got < 1e-290) {
		t.Errorf("tiny p: %v", got)
	}
}

func TestChoicesDomain(t *testing.T) {
	for _, f := range []float64{
		theory.FillChoices(0, 3, 2), theory.FillChoices(math.Inf(1), 3, 2), theory.FillChoices(math.NaN(), 3, 2),
		theory.FillChoices(8, 0, 2), theory.FillChoices(8, theory.MaxChoicesK+1, 2),
		theory.FillChoices(8, 3, 0), theory.FillChoices(8, 3, theory.MaxChoicesC+1),
		theory.FPFromFillChoices(-0.1, 3, 2), theory.FPFromFillChoices(1.1, 3, 2), theory.FPFromFillChoices(0.5, 0, 2),
		theory.ExpectedMinBinomial(0, 2, 0.5), theory.ExpectedMinBinomial(3, 2, 1.5),
		theory.CountFromFillChoices(100, 3, 2, 2), theory.CountFromFillChoices(-1, 3, 2, 0.5),
	} {
		if !math.IsNaN(f) {
			t.Errorf("out-of-domain argument gave %v, want NaN", f)
		}
	}
	if k, fp := theory.OptimalKChoices(-1, 2, 0); k != 0 || !math.IsNaN(fp) {
		t.Errorf("OptimalKChoices(-1) = %d, %v", k, fp)
	}
	for _, tc := range []struct {
		n   uint64
		eps float64
		c   int
	}{{0, 0.01, 2}, {10, 0, 2}, {10, 1, 2}, {10, math.NaN(), 2}, {10, 0.01, 0}, {10, 0.01, theory.MaxChoicesC + 1}} {
		if _, _, err := theory.SizeChoices(tc.n, tc.eps, tc.c, 0); !errors.Is(err, theory.ErrInvalid) {
			t.Errorf("SizeChoices(%+v): %v", tc, err)
		}
	}
	if got := theory.FPFromFillChoices(1e-3, 3, 2); relErr(got, 2e-9) > 1e-8 {
		t.Errorf("tiny rate %v, want ≈ 2e-9", got)
	}
}

// SizeChoices returns the smallest m reaching the rate; for c = 1 it agrees
// with the asymptotic form of Size to within a bit per key.
func TestChoicesSize(t *testing.T) {
	for _, c := range []int{1, 2, 3} {
		for _, eps := range []float64{0.01, 1e-4, 1e-7} {
			n := uint64(100000)
			m, k, err := theory.SizeChoices(n, eps, c, 64)
			if err != nil {
				t.Fatal(err)
			}
			b := float64(m) / float64(n)
			if fp := theory.FPChoices(b, k, c); fp > eps {
				t.Errorf("c=%d eps=%v: m=%d k=%d gives %v", c, eps, m, k, fp)
			}
			if _, fp := theory.OptimalKChoices(float64(m-1)/float64(n), c, 64); fp <= eps {
				t.Errorf("c=%d eps=%v: m−1 reaches the rate too", c, eps)
			}
			if c == 1 {
				ms, _, _ := theory.Size(n, eps)
				if d := math.Abs(float64(m) - float64(ms)); d > float64(n) {
					t.Errorf("eps=%v: m = %d, Size gives %d", eps, m, ms)
				}
			}
		}
	}
}

// CountFromFillChoices inverts FillChoices.
func TestChoicesCountFromFill(t *testing.T) {
	for _, c := range []int{1, 2, 3} {
		for _, b := range []float64{8, 16, 32} {
			z := theory.FillChoices(b, 10, c)
			if n := theory.CountFromFillChoices(b*1000, 10, c, z); relErr(n, 1000) > 1e-6 {
				t.Errorf("c=%d b=%v: %v keys, want 1000", c, b, n)
			}
		}
	}
	if !math.IsInf(theory.CountFromFillChoices(100, 3, 2, 1), 1) {
		t.Error("a full filter should give +Inf")
	}
}

// ExampleFillChoices prints the predictions of equation (3.2) for 000
// Table 2 and the best k of Table 1 for m/n = 16.
func ExampleFillChoices() {
	fmt.Printf("%.4f %.4f\n", theory.FillChoices(8, 7, 2), theory.FillChoices(8, 7, 3))
	k, fp := theory.OptimalKChoices(16, 2, 64)
	fmt.Printf("m/n = 16, c = 2: best k = %d, FP %.3e\n", k, fp)
	// Output:
	// 0.5296 0.5019
	// m/n = 16, c = 2: best k = 13, FP 3.933e-04
}
