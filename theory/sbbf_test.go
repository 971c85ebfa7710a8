package theory

import (
	"errors"
	"math"
	"testing"
)

// TestFPSplitBlockSpecTable compares FPSplitBlock with the figures of
// parquet-format's BloomFilter.md ("Sizing an SBBF"). The spec's values
// are rounded ("around 1.26 %", a table to one or two significant
// digits): the model must land within the spec's own rounding.
func TestFPSplitBlockSpecTable(t *testing.T) {
	// The spec's example: 1024 blocks holding 26,214, 52,428 and 13,107
	// hash values: "around 1.26 %", "18 %", "0.04 %".
	for _, c := range []struct {
		n, spec, tol float64
	}{
		{26214, 0.0126, 0.00005}, {52428, 0.18, 0.005}, {13107, 0.0004, 0.00005},
	} {
		got := FPSplitBlock(c.n, 1024)
		t.Logf("1024 blocks, n = %v: model %.4g, the spec %v", c.n, got, c.spec)
		if math.Abs(got-c.spec) > c.tol {
			t.Errorf("1024 blocks, n = %v: %.5g, the spec says %v", c.n, got, c.spec)
		}
	}
	// The spec's table: bits of space per insert → false-positive
	// probability (10 %, 1 %, 0.1 %, 0.01 %, 0.001 %), within 3 % of the
	// probability for a large filter.
	for _, c := range []struct{ bitsPerKey, spec float64 }{
		{6.0, 0.10}, {10.5, 0.01}, {16.9, 0.001}, {26.4, 0.0001}, {41, 0.00001},
	} {
		const n = 1e6
		got := FPSplitBlock(n, n*c.bitsPerKey/SplitBlockBits)
		t.Logf("%v bits per key: model %.4g, the spec's table %v", c.bitsPerKey, got, c.spec)
		if math.Abs(got/c.spec-1) > 0.03 {
			t.Errorf("%v bits per key: %.4g, the spec's table says %v", c.bitsPerKey, got, c.spec)
		}
	}
}

// TestFPSplitBlockDirectSum: against the binomial sum evaluated directly
// (lgamma pmf, every load), for small filters where that is exact.
func TestFPSplitBlockDirectSum(t *testing.T) {
	for _, c := range []struct{ n, blocks float64 }{
		{1, 1}, {10, 1}, {100, 3}, {250, 10}, {1000, 40}, {3000, 64}, {5, 1000},
	} {
		var want float64
		p := 1 / c.blocks
		for j := 0.0; j <= c.n; j++ {
			lg1, _ := math.Lgamma(c.n + 1)
			lg2, _ := math.Lgamma(j + 1)
			lg3, _ := math.Lgamma(c.n - j + 1)
			var logPMF float64
			if c.blocks == 1 {
				if j != c.n {
					continue
				}
			} else {
				logPMF = lg1 - lg2 - lg3 + j*math.Log(p) + (c.n-j)*math.Log1p(-p)
			}
			want += math.Exp(logPMF) * math.Pow(1-math.Pow(31.0/32, j), 8)
		}
		if got := FPSplitBlock(c.n, c.blocks); math.Abs(got-want) > 1e-10*want+1e-300 {
			t.Errorf("FPSplitBlock(%v, %v) = %.15g, direct sum %.15g", c.n, c.blocks, got, want)
		}
	}
	// More keys, or fewer blocks, give a higher rate.
	if !(FPSplitBlock(1000, 40) < FPSplitBlock(1001, 40) && FPSplitBlock(1000, 40) < FPSplitBlock(1000, 39)) {
		t.Error("FPSplitBlock is not monotone")
	}
	// Worse than a standard filter of the same bits at its optimal k: the
	// price of the layout.
	if s, b := FPExact(1e7, 1e6, 7), FPSplitBlock(1e6, 1e7/256); !(b > s) {
		t.Errorf("split block %g not above standard %g", b, s)
	}
	for _, bad := range [][2]float64{{-1, 10}, {10, 0}, {math.NaN(), 1}, {1, math.Inf(1)}} {
		if !math.IsNaN(FPSplitBlock(bad[0], bad[1])) {
			t.Errorf("FPSplitBlock(%v, %v) not NaN", bad[0], bad[1])
		}
	}
	if FPSplitBlock(0, 10) != 0 {
		t.Error("empty filter")
	}
}

func TestSizeSplitBlock(t *testing.T) {
	for _, c := range []struct {
		n   uint64
		eps float64
	}{{1, 0.5}, {1, 1e-9}, {1000, 0.01}, {26214, 0.0127}, {1e6, 1e-4}, {1e9, 0.01}} {
		b, err := SizeSplitBlock(c.n, c.eps)
		if err != nil {
			t.Fatalf("SizeSplitBlock(%d, %g): %v", c.n, c.eps, err)
		}
		if FPSplitBlock(float64(c.n), float64(b)) > c.eps || (b > 1 && FPSplitBlock(float64(c.n), float64(b-1)) <= c.eps) {
			t.Errorf("SizeSplitBlock(%d, %g) = %d blocks, not the fewest meeting it", c.n, c.eps, b)
		}
	}
	if b, _ := SizeSplitBlock(26214, 0.0127); b != 1024 {
		t.Errorf("the spec's example: %d blocks for 26,214 keys at 1.27 %%, want 1024", b)
	}
	if _, err := SizeSplitBlock(1e11, 0.01); !errors.Is(err, ErrTooLarge) {
		t.Errorf("10^11 keys: %v, want ErrTooLarge", err)
	}
	for _, bad := range []struct {
		n   uint64
		eps float64
	}{{0, 0.01}, {10, 0}, {10, 1}} {
		if _, err := SizeSplitBlock(bad.n, bad.eps); !errors.Is(err, ErrInvalid) {
			t.Errorf("SizeSplitBlock(%d, %g): %v, want ErrInvalid", bad.n, bad.eps, err)
		}
	}
}
