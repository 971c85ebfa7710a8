package theory

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// TestOverheadScalable checks the overhead of a growing chain against the
// closed form of the sums (Σ_{i<L} s^i = (s^L − 1)/(s − 1) and
// Σ_{i<L} i·s^i = s·((L − 1)·s^L − L·s^{L−1} + 1)/(s − 1)²) and pins the
// figures of issue 11 and docs/SCALABLE.md: from 1,000 keys at 1% with
// expansion 2 and ratio 1/2, 2.41× at 10^6 keys and 4.84× at 10^7.
func TestOverheadScalable(t *testing.T) {
	closed := func(n, n0, eps, s, r float64) (float64, int) {
		L := 0
		for n0*(math.Pow(s, float64(L))-1)/(s-1) < n {
			L++
		}
		l := float64(L)
		sum := (math.Pow(s, l) - 1) / (s - 1)
		isum := s * ((l-1)*math.Pow(s, l) - l*math.Pow(s, l-1) + 1) / ((s - 1) * (s - 1))
		bits := n0 * (-math.Log(eps*(1-r))*sum - math.Log(r)*isum) / (math.Ln2 * math.Ln2)
		return bits / (n * -math.Log(eps) / (math.Ln2 * math.Ln2)), L
	}
	for _, c := range []struct{ n, n0, eps, s, r float64 }{
		{1e6, 1000, 0.01, 2, 0.5}, {1e7, 1000, 0.01, 2, 0.5}, {1e5, 100, 0.001, 4, 0.5},
		{123456, 1000, 0.05, 3, 0.8}, {1e9, 1e4, 1e-4, 2, 0.9}, {1000, 1000, 0.01, 2, 0.5},
	} {
		got := OverheadScalable(c.n, c.n0, c.eps, c.s, c.r)
		want, L := closed(c.n, c.n0, c.eps, c.s, c.r)
		if math.Abs(got-want) > 1e-9*want {
			t.Errorf("%+v: overhead %v, closed form %v", c, got, want)
		}
		if l := LinksScalable(c.n, c.n0, c.s); l != L {
			t.Errorf("%+v: %d links, closed form %d", c, l, L)
		}
	}
	var b strings.Builder
	for _, n := range []float64{1e4, 1e5, 1e6, 1e7, 1e8} {
		bits, links := BitsScalable(n, 1000, 0.01, 2, 0.5)
		fmt.Fprintf(&b, "%g keys: %d links, %.4g bits, %.3g×\n", n, links, bits, OverheadScalable(n, 1000, 0.01, 2, 0.5))
	}
	const want = `10000 keys: 4 links, 2.145e+05 bits, 2.24×
100000 keys: 7 links, 2.327e+06 bits, 2.43×
1e+06 keys: 10 links, 2.31e+07 bits, 2.41×
1e+07 keys: 14 links, 4.643e+08 bits, 4.84×
1e+08 keys: 17 links, 4.282e+09 bits, 4.47×
`
	if b.String() != want {
		t.Errorf("overhead curve changed:\n%s\nwant\n%s", b.String(), want)
	}
}

// TestFPScalableBound: the bound is ε0·(1 − r^L)/(1 − r), tends to
// ε0/(1 − r) = ε for ε0 = ε(1 − r), never exceeds it, and FPScalable lies
// below the union bound of the same rates.
func TestFPScalableBound(t *testing.T) {
	eps := 0.01
	prev := 0.0
	for L := 0; L <= 2000; L++ {
		b := FPScalableBound(eps*0.5, 0.5, L)
		sum := 0.0
		for i := 0; i < min(L, 60); i++ {
			sum += eps * 0.5 * math.Pow(0.5, float64(i))
		}
		if b < prev || b > eps || L <= 60 && math.Abs(b-sum) > 1e-15 {
			t.Fatalf("L = %d: bound %v (sum %v, previous %v)", L, b, sum, prev)
		}
		prev = b
	}
	if b := FPScalableBound(0.001, 0.9, 1000); math.Abs(b-0.01) > 1e-12 {
		t.Errorf("ratio 0.9 limit: %v", b)
	}
	fps := []float64{0.005, 0.0025, 0.00125, 0.000625}
	if p, s := FPScalable(fps), 0.009375; !(p < s && p > s-1e-4) {
		t.Errorf("FPScalable %v, union bound %v", p, s)
	}
	if FPScalable(nil) != 0 {
		t.Error("empty chain has a rate")
	}
}

func TestScalableDomain(t *testing.T) {
	nan := math.NaN()
	for _, c := range [][5]float64{
		{-1, 1000, 0.01, 2, 0.5}, {1e6, 0, 0.01, 2, 0.5}, {1e6, 1000, 0, 2, 0.5}, {1e6, 1000, 1, 2, 0.5},
		{1e6, 1000, 0.01, 0.5, 0.5}, {1e6, 1000, 0.01, 2, 0}, {1e6, 1000, 0.01, 2, 1}, {nan, 1000, 0.01, 2, 0.5},
		{math.Inf(1), 1000, 0.01, 2, 0.5}, {1e6, 1000, nan, 2, 0.5}, {1e6, math.Inf(1), 0.01, 2, 0.5},
	} {
		if b, l := BitsScalable(c[0], c[1], c[2], c[3], c[4]); !math.IsNaN(b) || l != 0 {
			t.Errorf("BitsScalable%v = %v, %d", c, b, l)
		}
		if o := OverheadScalable(c[0], c[1], c[2], c[3], c[4]); !math.IsNaN(o) {
			t.Errorf("OverheadScalable%v = %v", c, o)
		}
	}
	if !math.IsNaN(FPScalableBound(-1, 0.5, 3)) || !math.IsNaN(FPScalableBound(0.1, 1, 3)) || !math.IsNaN(FPScalableBound(0.1, 0.5, -1)) {
		t.Error("FPScalableBound accepted a bad argument")
	}
	if !math.IsNaN(FPScalable([]float64{0.1, 2})) {
		t.Error("FPScalable accepted a rate above 1")
	}
	if LinksScalable(10, 1, 1) != 10 || LinksScalable(0, 5, 2) != 1 {
		t.Error("LinksScalable edge cases")
	}
}
