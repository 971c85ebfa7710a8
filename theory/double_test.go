package theory

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"testing"

	"github.com/bloomlab/bloomlab/hashing"
)

// probeSets returns, for every (start, step) pair of scheme s over m
// positions with k probes (the pairs package hashing draws, each equally
// likely), its sorted position set.
func probeSets(t *testing.T, s hashing.Scheme, m uint64, k int) [][]uint64 {
	ix, err := hashing.NewIndexer(s, m, k)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]uint64
	if s.Partitioned() {
		p := ix.SubarraySize()
		for x := range p {
			for b := range p {
				ps := make([]uint64, k)
				for i := range ps {
					ps[i] = uint64(i)*p + (x+uint64(i)*b)%p
				}
				out = append(out, ps)
			}
		}
		return out
	}
	off := ix.Offsets()
	for x := range m {
		for b := uint64(1); b < m; b++ {
			if m%2 == 0 && b%2 == 0 {
				continue
			}
			ps := make([]uint64, k)
			for i := range ps {
				ps[i] = (x + uint64(i)*b + off[i]) % m
			}
			slices.Sort(ps)
			out = append(out, ps)
		}
	}
	return out
}

// PositionSets is the number of pairs divided by the mean number of pairs
// that share a pair's position set, enumerated over every pair: exactly
// for prime sizes (up to the few degenerate pairs of k = 3).
func TestPositionSets(t *testing.T) {
	for _, s := range []hashing.Scheme{hashing.Double, hashing.Enhanced, hashing.ExtendedSquare, hashing.ExtendedCube, hashing.Partition} {
		for _, m := range []uint64{101, 131, 128} {
			for _, k := range []int{2, 3, 4, 7, 12} {
				mm := m
				if s.Partitioned() {
					if m == 128 {
						continue
					}
					mm = m * uint64(k)
				}
				sets := probeSets(t, s, mm, k)
				count := map[string]int{}
				for _, ps := range sets {
					count[fmt.Sprint(ps)]++
				}
				same := 0
				for _, c := range count {
					same += c * c
				}
				got := float64(len(sets)) / (float64(same) / float64(len(sets)))
				want := PositionSets(s, mm, k)
				tol := 0.02 // prime m: the degenerate pairs of k = 3
				if !hashing.IsPrime(mm) && !s.Partitioned() {
					tol = 0.05 // 128: a few steps of small order
				}
				if math.Abs(got-want) > tol*want {
					t.Errorf("%v m=%d k=%d: enumerated %g equally likely sets, PositionSets %g", s, mm, k, got, want)
				}
			}
		}
	}
	for _, s := range []hashing.Scheme{hashing.Independent, hashing.PartitionIndependent, hashing.Custom} {
		if !math.IsInf(PositionSets(s, 1000, 5), 1) {
			t.Errorf("%v has a pair floor", s)
		}
	}
	if !math.IsInf(PositionSets(hashing.Enhanced, 1000, 1), 1) {
		t.Error("k = 1 has a pair floor")
	}
}

// FPFromFillDraws is E[fill^D] for D the distinct values of k uniform draws
// from m: checked against every one of the m^k sequences.
func TestFPFromFillDraws(t *testing.T) {
	for _, c := range []struct {
		m, k int
		fill float64
	}{{5, 4, 0.3}, {7, 3, 0.9}, {4, 6, 0.5}, {1, 3, 0.7}} {
		total, seqs := 0.0, 0
		seq := make([]int, c.k)
		for {
			d := map[int]bool{}
			for _, x := range seq {
				d[x] = true
			}
			total += math.Pow(c.fill, float64(len(d)))
			seqs++
			i := 0
			for i < c.k && seq[i] == c.m-1 {
				seq[i] = 0
				i++
			}
			if i == c.k {
				break
			}
			seq[i]++
		}
		want := total / float64(seqs)
		if got := FPFromFillDraws(c.fill, float64(c.m), c.k); math.Abs(got-want) > 1e-12*want {
			t.Errorf("%+v: %v, want %v", c, got, want)
		}
	}
	// Above fill^k, and equal to it to O(k²/m) for a large m.
	if a, b := FPFromFillDraws(0.5, 1e9, 10), math.Pow(0.5, 10); !(a >= b && a < b*(1+1e-7)) {
		t.Errorf("large m: %v vs %v", a, b)
	}
	for _, bad := range [][3]float64{{-0.1, 10, 3}, {0.5, 0.5, 3}, {0.5, 10, 0}, {0.5, 10, 65}, {math.NaN(), 10, 2}} {
		if !math.IsNaN(FPFromFillDraws(bad[0], bad[1], int(bad[2]))) {
			t.Errorf("%v: not NaN", bad)
		}
	}
}

// logCoverAll's programme is the inclusion–exclusion sum
// Σ_j (−1)^j C(k, j) (1 − j·q)^n, computed here in exact rationals, and
// never above its product bound.
func TestCoverAll(t *testing.T) {
	for _, c := range []struct{ n, k, qd int }{{3, 3, 24}, {10, 4, 101}, {40, 7, 500}, {1, 2, 10}, {200, 3, 50}} {
		q := big.NewRat(1, int64(c.qd))
		sum := new(big.Rat)
		for j := 0; j <= c.k; j++ {
			term := new(big.Rat).Sub(big.NewRat(1, 1), new(big.Rat).Mul(big.NewRat(int64(j), 1), q))
			pow := big.NewRat(1, 1)
			for range c.n {
				pow.Mul(pow, term)
			}
			pow.Mul(pow, new(big.Rat).SetInt(new(big.Int).Binomial(int64(c.k), int64(j))))
			if j%2 == 1 {
				pow.Neg(pow)
			}
			sum.Add(sum, pow)
		}
		want, _ := sum.Float64()
		qf := 1 / float64(c.qd)
		got := math.Exp(logCoverAll(float64(c.n), c.k, qf))
		if math.Abs(got-want) > 1e-12*want {
			t.Errorf("%+v: %v, want %v", c, got, want)
		}
		if bound := math.Pow(-math.Expm1(float64(c.n)*math.Log1p(-qf)), float64(c.k)); bound < got*(1-1e-12) {
			t.Errorf("%+v: bound %v below %v", c, bound, got)
		}
	}
}

// FPScheme is at least the closed form and the floor; equal to the closed
// form without a floor (PartitionIndependent); increasing in n.
func TestFPSchemeProperties(t *testing.T) {
	for _, s := range hashing.Schemes() {
		for _, c := range []struct {
			m uint64
			n float64
			k int
		}{{1000003, 100000, 7}, {101, 1, 63}, {60485, 1000, 5}, {9600, 1000, 7}, {1 << 20, 1e5, 20}} {
			m := hashing.PartitionSize(s, c.m, c.k)
			got := FPScheme(s, m, c.n, c.k)
			closed := FPExact(float64(m), c.n, c.k)
			if s.Partitioned() {
				closed = FPPartitioned(float64(m), c.n, c.k)
			}
			floor := FPPairFloor(PositionSets(s, m, c.k), c.n)
			switch {
			case math.IsNaN(got) || got > 1:
				t.Errorf("%v %+v: %v", s, c, got)
			case s == hashing.PartitionIndependent && got != closed:
				t.Errorf("%v %+v: %v, want FPPartitioned %v", s, c, got, closed)
			case s != hashing.Partition && s != hashing.PrimePartition && got < closed*(1-1e-12):
				t.Errorf("%v %+v: %v below the closed form %v", s, c, got, closed)
			case got < floor*(1-1e-12):
				t.Errorf("%v %+v: %v below the floor %v", s, c, got, floor)
			case FPScheme(s, m, c.n*1.5, c.k) <= got:
				t.Errorf("%v %+v: not increasing in n", s, c)
			}
		}
	}
	if FPScheme(hashing.Enhanced, 1000, 0, 5) != 0 || !math.IsNaN(FPScheme(hashing.Enhanced, 0, 5, 5)) ||
		!math.IsNaN(FPScheme(hashing.Partition, 3, 5, 5)) || !math.IsNaN(FPScheme(hashing.Enhanced, 100, 5, 65)) {
		t.Error("domain")
	}
}

// At 001 §6's corner (m = 80,000, k = 11, n = 5,000; README) the rates
// measured over 2,000 trials × 100,000 queries, seed 1 (95% intervals),
// where FPExact says 4.587e-4 for all: FPScheme falls inside them.
func TestFPScheme001Corner(t *testing.T) {
	for _, c := range []struct {
		s      hashing.Scheme
		lo, hi float64
	}{
		{hashing.Independent, 4.560e-4, 4.619e-4},
		{hashing.Enhanced, 4.578e-4, 4.639e-4},
		{hashing.Double, 4.671e-4, 4.732e-4},
		{hashing.Partition, 5.494e-4, 5.561e-4},
	} {
		m := hashing.PartitionSize(c.s, 80000, 11)
		if got := FPScheme(c.s, m, 5000, 11); got < c.lo || got > c.hi {
			t.Errorf("%v: FPScheme %.5g outside the measured [%.4g, %.4g]", c.s, got, c.lo, c.hi)
		}
	}
}

// SizeScheme meets the target with the floor, with the smallest size of
// its class (the previous prime, or subarray prime, does not), and answers
// in bounded time for any target.
func TestSizeScheme(t *testing.T) {
	prevPrime := func(p uint64) uint64 {
		for p--; p > 1 && !hashing.IsPrime(p); p-- {
		}
		return p
	}
	for _, s := range hashing.Schemes() {
		for _, n := range []uint64{1, 3, 30, 1000, 100000} {
			for _, eps := range []float64{0.1, 0.01, 1e-5, 1e-9} {
				m, k, err := SizeScheme(s, n, eps, hashing.MaxK)
				if err != nil {
					t.Fatalf("%v n=%d eps=%g: %v", s, n, eps, err)
				}
				nf := float64(n)
				if k < 1 || k > hashing.MaxK || hashing.PartitionSize(s, m, k) != m {
					t.Fatalf("%v n=%d eps=%g: m = %d, k = %d", s, n, eps, m, k)
				}
				if got := FPScheme(s, m, nf, k); got > eps*(1+1e-12) {
					t.Errorf("%v n=%d eps=%g: m = %d, k = %d: rate %g", s, n, eps, m, k, got)
				}
				switch {
				case doubleScheme(s):
					if !hashing.IsPrime(m) {
						t.Errorf("%v n=%d eps=%g: m = %d not prime", s, n, eps, m)
					}
					if p := prevPrime(m); p > 2 {
						kp, _ := bestK(s, p, nf, hashing.MaxK)
						if math.Exp(logFPScheme(s, p, nf, kp)) <= eps {
							t.Errorf("%v n=%d eps=%g: the smaller prime %d fits", s, n, eps, p)
						}
					}
				case s == hashing.Partition || s == hashing.PrimePartition:
					p := m / uint64(k)
					if k > 1 && !hashing.IsPrime(p) {
						t.Errorf("%v n=%d eps=%g: subarray %d not prime", s, n, eps, p)
					}
				}
			}
		}
	}
	for _, c := range []struct {
		n   uint64
		eps float64
	}{{1, 5e-324}, {10, 1e-310}, {1 << 40, 1e-300}, {math.MaxUint64, 0.5}, {math.MaxUint64, 1e-15}, {1e12, 1e-15}} {
		for _, s := range hashing.Schemes() {
			if _, _, err := SizeScheme(s, c.n, c.eps, hashing.MaxK); err != nil && !errors.Is(err, ErrTooLarge) {
				t.Errorf("%v %+v: %v", s, c, err)
			}
		}
	}
	for _, bad := range []struct {
		s    hashing.Scheme
		n    uint64
		eps  float64
		kmax int
	}{{hashing.Enhanced, 0, 0.1, 10}, {hashing.Enhanced, 5, 0, 10}, {hashing.Enhanced, 5, 1, 10}, {hashing.Enhanced, 5, math.NaN(), 10},
		{hashing.Enhanced, 5, 0.1, 0}, {hashing.Enhanced, 5, 0.1, 65}, {hashing.Custom, 5, 0.1, 10}, {hashing.Scheme(99), 5, 0.1, 10}} {
		if _, _, err := SizeScheme(bad.s, bad.n, bad.eps, bad.kmax); !errors.Is(err, ErrInvalid) {
			t.Errorf("%+v: %v, want ErrInvalid", bad, err)
		}
	}
	// A scalable link: multiples of 64, the rate met, the one below not.
	m, k, err := SizeSchemeUnit(hashing.Enhanced, 1, 5e-4, hashing.MaxK, 64)
	if err != nil || m%64 != 0 || FPScheme(hashing.Enhanced, m, 1, k) > 5e-4 {
		t.Errorf("unit 64: m = %d, k = %d, %v", m, k, err)
	}
	if m > 64 {
		kp, _ := bestK(hashing.Enhanced, m-64, 1, hashing.MaxK)
		if FPScheme(hashing.Enhanced, m-64, 1, kp) <= 5e-4 {
			t.Errorf("unit 64: m = %d is not the smallest", m)
		}
	}
	if _, _, err := SizeSchemeUnit(hashing.Partition, 10, 0.01, 10, 64); !errors.Is(err, ErrInvalid) {
		t.Errorf("partitioned with a unit: %v", err)
	}
}
