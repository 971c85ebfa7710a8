package clog

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestLog: Log agrees with glibc's log (2.36, x86-64; the values are
// glibc's bits) on arguments where Go's math.Log does not — RedisBloom's
// error rates 0.01, 0.0003125, 0.0015 and total weights of a t-digest — and
// down to the smallest subnormal.
func TestLog(t *testing.T) {
	differ := 0
	for _, c := range []struct {
		x    float64
		want uint64
	}{
		{0.01, 0xc0126bb1bbb55515},
		{0.0003125, 0xc020244dcd88dca5},
		{7.62939453125e-11, 0xc0374be2acc643f5},
		{0.0015, 0xc01a02585ac4061b},
		{4.6875e-05, 0xc023efa11d103529},
		{4.3655745685100556e-14, 0xc03ec32f5d92b0e5},
		{1.9852334701272665e-26, 0xc04d973a9a21a58f},
		{0.005, 0xc015317a1b949c53},
		{0.0025, 0xc017f7427b73e391},
		{0.001, 0xc01ba18a998fffa0},
		{0.5, 0xbfe62e42fefa39ef},
		{0.9, 0xbfbaf8e8210a415c},
		{1e-300, 0xc085963447f87fb5},
		{5e-324, 0xc0874385446d71c3},
		{0.7071067811865476, 0xbfd62e42fefa39ee},
	} {
		if got := math.Float64bits(Log(c.x)); got != c.want {
			t.Errorf("Log(%v) = %x, glibc %x", c.x, got, c.want)
		}
		if math.Float64bits(math.Log(c.x)) != c.want {
			differ++
		}
	}
	if differ < 7 {
		t.Errorf("math.Log differs from glibc on %d of the values; the table lost its point", differ)
	}
	if !math.IsNaN(Log(math.NaN())) || !math.IsInf(Log(0), -1) || !math.IsInf(Log(math.Inf(1)), 1) {
		t.Error("Log outside its domain")
	}
}

// TestLogAllocs: Log allocates nothing (its math/big temporaries are
// pooled, no operation aliases its result with an operand, no Quo and no
// Float64), so that a t-digest's merge, which calls it, keeps Add free
// of allocations. It made 40 allocations a call before.
func TestLogAllocs(t *testing.T) {
	Log(3)
	x := 2.0
	if n := testing.AllocsPerRun(200, func() { x += 0.37; Log(x) }); n != 0 {
		t.Errorf("Log allocates %v times per call", n)
	}
}

// refLog is Log as math/big states it most plainly (Quo, Float64): ln x =
// e·ln2 + 2·atanh((f − 1)/(f + 1)) at 256 bits, rounded once.
func refLog(x float64) float64 {
	f, e := math.Frexp(x)
	if f < math.Sqrt2/2 {
		f *= 2
		e--
	}
	nf := func(v float64) *big.Float { return new(big.Float).SetPrec(prec).SetFloat64(v) }
	z := new(big.Float).SetPrec(prec).Quo(new(big.Float).SetPrec(prec).Sub(nf(f), nf(1)), new(big.Float).SetPrec(prec).Add(nf(f), nf(1)))
	z2 := new(big.Float).SetPrec(prec).Mul(z, z)
	term := new(big.Float).SetPrec(prec).Set(z)
	sum := new(big.Float).SetPrec(prec).Set(z)
	for j := int64(1); j < terms; j++ {
		term = new(big.Float).SetPrec(prec).Mul(term, z2)
		tj := new(big.Float).SetPrec(prec).Quo(term, nf(float64(2*j+1)))
		sum = new(big.Float).SetPrec(prec).Add(sum, tj)
		if tj.Sign() == 0 || tj.MantExp(nil)-sum.MantExp(nil) < -prec-8 {
			break
		}
	}
	sum.Mul(sum, nf(2))
	ln2 := new(big.Float).SetPrec(prec).Set(ln2Big)
	sum.Add(sum, ln2.Mul(ln2, nf(float64(e))))
	v, _ := sum.Float64()
	return v
}

// TestLogReference: Log equals refLog bit for bit on 20,000 arguments
// spread over every binade, subnormals included, and near 1.
func TestLogReference(t *testing.T) {
	Log(3)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		var x float64
		switch i % 4 {
		case 0:
			x = math.Float64frombits(rng.Uint64() & (1<<63 - 1))
		case 1:
			x = 1 + (rng.Float64()-0.5)*1e-6
		case 2:
			x = rng.Float64() * 1e6
		default:
			x = math.Float64frombits(rng.Uint64() & (1<<52 - 1)) // subnormal
		}
		if !(x > 0) || math.IsInf(x, 1) || math.IsNaN(x) {
			continue
		}
		if got, want := Log(x), refLog(x); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("Log(%v) = %v, reference %v", x, got, want)
		}
	}
}
