package theory_test

import (
	"errors"
	"math"
	"math/big"
	"testing"

	"github.com/bloomlab/bloomlab/theory"
)

func TestFPCuckoo(t *testing.T) {
	// Closed forms at small f, computed by hand.
	for _, c := range []struct {
		f, b int
		load float64
		want float64
	}{
		{8, 4, 1, 1 - math.Pow(1-1.0/255, 8)},
		{8, 2, 0.5, 1 - math.Pow(1-0.5/255, 4)},
		{4, 1, 0.25, 1 - math.Pow(1-0.25/15, 2)},
		{16, 4, 0, 0},
	} {
		if got := theory.FPCuckoo(c.f, c.b, c.load); math.Abs(got-c.want) > 1e-12*c.want {
			t.Errorf("FPCuckoo(%d, %d, %v) = %v, want %v", c.f, c.b, c.load, got, c.want)
		}
	}
	// The bound is 1 − (1 − 2^−f)^{2b} ≈ 2b/2^f, below FPCuckoo at full
	// load (whose fingerprints avoid 0) and above it at α = 0.95 once
	// 0.95/(2^f − 1) < 2^−f (f ≥ 5).
	for _, b := range []int{1, 2, 4, 8} {
		for f := 4; f <= 32; f++ {
			bound := theory.FPCuckooBound(f, b)
			approx := float64(2*b) / math.Ldexp(1, f)
			if f >= 12 && math.Abs(bound-approx) > approx*float64(2*b)/math.Ldexp(1, f) {
				t.Errorf("bound(%d, %d) = %v, 2b/2^f = %v", f, b, bound, approx)
			}
			if full := theory.FPCuckoo(f, b, 1); !(full > bound) {
				t.Errorf("f=%d b=%d: FPCuckoo at load 1 = %v, bound %v", f, b, full, bound)
			}
			if at := theory.FPCuckoo(f, b, 0.95); f >= 5 && !(at < bound) {
				t.Errorf("f=%d b=%d: FPCuckoo at load 0.95 = %v, bound %v", f, b, at, bound)
			}
		}
	}
	// Tiny rates keep full relative precision (no 1 − x cancellation).
	if got, want := theory.FPCuckoo(32, 4, 1), 8/(math.Ldexp(1, 32)-1); math.Abs(got-want) > 1e-8*want {
		t.Errorf("FPCuckoo(32, 4, 1) = %v, want ≈ %v", got, want)
	}
	for _, bad := range [][3]float64{{1, 4, 0.5}, {8, 0, 0.5}, {8, 4, -0.1}, {8, 4, 1.1}, {8, 4, math.NaN()}, {63, 4, 0.5}} {
		if got := theory.FPCuckoo(int(bad[0]), int(bad[1]), bad[2]); !math.IsNaN(got) {
			t.Errorf("FPCuckoo%v = %v, want NaN", bad, got)
		}
	}
	if !math.IsNaN(theory.FPCuckooBound(0, 4)) || !math.IsNaN(theory.FPCuckooBound(8, 0)) {
		t.Error("FPCuckooBound accepts f or b < 1")
	}
}

func TestLoadAndBitsCuckoo(t *testing.T) {
	for b, want := range map[int]float64{1: 0.5, 2: 0.84, 4: 0.95, 8: 0.98} {
		if got := theory.LoadCuckoo(b); got != want {
			t.Errorf("LoadCuckoo(%d) = %v, want %v", b, got, want)
		}
	}
	if !math.IsNaN(theory.LoadCuckoo(3)) {
		t.Error("LoadCuckoo(3) is not NaN")
	}
	// CF §5.1: f ≥ ⌈log2(2b/ε)⌉; at ε = 1%, b = 4: ⌈9.64⌉ = 10; CF's
	// Table 2 entry (log2(1/ε) + 3)/α.
	if got := theory.FingerprintBitsCuckoo(0.01, 4); got != 10 {
		t.Errorf("FingerprintBitsCuckoo(0.01, 4) = %d, want 10", got)
	}
	if got := theory.FingerprintBitsCuckoo(1.0/1024, 4); got != 13 {
		t.Errorf("FingerprintBitsCuckoo(2^-10, 4) = %d, want 13", got)
	}
	if theory.FingerprintBitsCuckoo(0, 4) != 0 || theory.FingerprintBitsCuckoo(0.5, 0) != 0 {
		t.Error("FingerprintBitsCuckoo accepts a bad argument")
	}
	if got := theory.BitsPerKeyCuckoo(12, 0.95, false); math.Abs(got-12/0.95) > 1e-15 {
		t.Errorf("BitsPerKeyCuckoo(12, 0.95) = %v", got)
	}
	if got := theory.BitsPerKeyCuckoo(12, 0.95, true); math.Abs(got-11/0.95) > 1e-15 {
		t.Errorf("BitsPerKeyCuckoo(12, 0.95, semisort) = %v", got)
	}
	if !math.IsNaN(theory.BitsPerKeyCuckoo(12, 0, false)) || !math.IsNaN(theory.BitsPerKeyCuckoo(0, 0.5, false)) {
		t.Error("BitsPerKeyCuckoo accepts a bad argument")
	}
}

func TestSemisortCuckoo(t *testing.T) {
	// C(19, 4) = 3876 multisets of four 4-bit prefixes: 12 bits, one bit
	// per entry saved (CF §5.2).
	if got := theory.SemisortCodeBits(4, 4); got != 12 {
		t.Errorf("SemisortCodeBits(4, 4) = %d, want 12", got)
	}
	if got := theory.SemisortSaving(4, 4); got != 1 {
		t.Errorf("SemisortSaving(4, 4) = %v, want 1", got)
	}
	// Against a direct count for small cases.
	for p := 1; p <= 5; p++ {
		for b := 1; b <= 6; b++ {
			var c big.Int
			c.Binomial(int64(1)<<p+int64(b)-1, int64(b))
			want := 0
			for big.NewInt(1).Lsh(big.NewInt(1), uint(want)).Cmp(&c) < 0 {
				want++
			}
			if got := theory.SemisortCodeBits(p, b); got != want {
				t.Errorf("SemisortCodeBits(%d, %d) = %d, want %d (%v multisets)", p, b, got, want, &c)
			}
			if s := theory.SemisortSaving(p, b); !(s >= 0 && s < float64(p)) {
				t.Errorf("SemisortSaving(%d, %d) = %v", p, b, s)
			}
		}
	}
	if theory.SemisortCodeBits(0, 4) != 0 || theory.SemisortCodeBits(17, 4) != 0 || !math.IsNaN(theory.SemisortSaving(0, 4)) {
		t.Error("SemisortCodeBits accepts a bad argument")
	}
}

func TestSizeCuckoo(t *testing.T) {
	for _, eps := range []float64{0.3, 0.03, 0.01, 0.001, 1e-5, 1e-8} {
		for _, b := range []int{1, 2, 4, 8} {
			load := theory.LoadCuckoo(b)
			f, nb, err := theory.SizeCuckoo(1_000_000, eps, b, load)
			if err != nil {
				t.Fatal(err)
			}
			if theory.FPCuckoo(f, b, load) > eps || f > 2 && theory.FPCuckoo(f-1, b, load) <= eps {
				t.Errorf("eps=%v b=%d: f = %d is not the smallest", eps, b, f)
			}
			if float64(nb)*float64(b)*load < 1e6 || float64(nb-1)*float64(b)*load >= 1e6 {
				t.Errorf("eps=%v b=%d: %d buckets for 10^6 keys at load %v", eps, b, nb, load)
			}
			// CF §5.1's rule of thumb is never smaller than needed.
			if g := theory.FingerprintBitsCuckoo(eps, b); g < f {
				t.Errorf("eps=%v b=%d: ⌈log2(2b/ε)⌉ = %d < %d", eps, b, g, f)
			}
		}
	}
	for _, c := range []struct {
		n    uint64
		eps  float64
		b    int
		load float64
		want error
	}{
		{0, 0.01, 4, 0.95, theory.ErrInvalid},
		{100, 0, 4, 0.95, theory.ErrInvalid},
		{100, 1, 4, 0.95, theory.ErrInvalid},
		{100, 0.01, 0, 0.95, theory.ErrInvalid},
		{100, 0.01, 4, 0, theory.ErrInvalid},
		{100, 1e-12, 4, 0.95, theory.ErrInvalid},
		{1 << 62, 0.01, 4, 0.95, theory.ErrTooLarge},
	} {
		if _, _, err := theory.SizeCuckoo(c.n, c.eps, c.b, c.load); !errors.Is(err, c.want) {
			t.Errorf("SizeCuckoo(%d, %v, %d, %v): %v, want %v", c.n, c.eps, c.b, c.load, err, c.want)
		}
	}
}
