package theory

import (
	"errors"
	"math"
	"testing"
)

func TestFPBlockedAgainstStandard(t *testing.T) {
	// One block is a standard filter of s bits.
	for _, c := range []struct {
		n    float64
		s, k int
	}{{10, 512, 3}, {50, 512, 7}, {1000, 512, 1}} {
		got := FPBlocked(c.n, 1, c.s, c.k)
		want := FPExact(float64(c.s), c.n, c.k)
		if math.Abs(got-want) > 1e-12*want {
			t.Errorf("one block n=%v k=%d: %v, want %v", c.n, c.k, got, want)
		}
	}
	// Load variation makes the blocked filter worse than the standard one
	// with the same bits and k; the gap shrinks as blocks get larger, and
	// at ~10 bits per key it costs about one extra bit per key for 1%.
	n := 1e6
	for _, bpk := range []float64{8, 10, 16} {
		m := bpk * n
		k := OptimalK(m, n)
		blocked, std := FPBlocked(n, m/512, 512, k), FPExact(m, n, k)
		if !(blocked > std) {
			t.Errorf("%v bits/key: blocked %v not above standard %v", bpk, blocked, std)
		}
		if blocked > 3*std {
			t.Errorf("%v bits/key: blocked %v more than 3× standard %v", bpk, blocked, std)
		}
	}
	// Hand check of the sum: n = 2 keys in 2 blocks, s = 4, k = 1:
	// J ~ Bin(2, 1/2): P = 1/4, 1/2, 1/4; fill = 0, 1/4, 7/16.
	want := 0.5*0.25 + 0.25*(1-math.Pow(0.75, 2))
	if got := FPBlocked(2, 2, 4, 1); math.Abs(got-want) > 1e-15 {
		t.Errorf("FPBlocked(2, 2, 4, 1) = %v, want %v", got, want)
	}
}

func TestSizeBlocked(t *testing.T) {
	for _, n := range []uint64{1000, 1000000, 1 << 28} {
		for _, eps := range []float64{0.01, 0.001} {
			b, k, err := SizeBlocked(n, eps)
			if err != nil {
				t.Fatal(err)
			}
			if fp := FPBlocked(float64(n), float64(b), BlockBits, k); fp > eps {
				t.Errorf("n=%d eps=%v: %d blocks, k=%d give %v", n, eps, b, k, fp)
			}
			if b > 1 {
				if fp := FPBlocked(float64(n), float64(b-1), BlockBits, OptimalKBlocked(float64(n), float64(b-1), BlockBits)); fp <= eps {
					t.Errorf("n=%d eps=%v: %d blocks also suffice", n, eps, b-1)
				}
			}
			m, _, _ := Size(n, eps)
			if b*BlockBits < m {
				t.Errorf("n=%d eps=%v: blocked smaller than standard", n, eps)
			}
			if eps == 0.01 && n >= 1e6 {
				if bpk := float64(b*BlockBits) / float64(n); bpk > 11 {
					t.Errorf("1%%: %.2f bits per key, want ≤ 11", bpk)
				}
			}
		}
	}
	if _, _, err := SizeBlocked(0, 0.01); !errors.Is(err, ErrInvalid) {
		t.Errorf("n=0: %v", err)
	}
	if _, _, err := SizeBlocked(10, 1); !errors.Is(err, ErrInvalid) {
		t.Errorf("eps=1: %v", err)
	}
	for _, bad := range [][4]float64{{-1, 10, 512, 3}, {10, 0, 512, 3}, {10, 10, 512, 0}, {math.NaN(), 1, 1, 1}} {
		if !math.IsNaN(FPBlocked(bad[0], bad[1], int(bad[2]), int(bad[3]))) {
			t.Errorf("FPBlocked%v not NaN", bad)
		}
	}
}
