// Package clog is the natural logarithm as the C library computes it
// where RedisBloom calls log: correctly rounded (glibc's log is documented
// within 0.52 ulp and agrees with the correctly rounded value on the
// inputs RedisBloom gives it that the callers pin in their tests). Go's
// math.Log is not that function: it differs from glibc's in the last bit
// for many inputs (0.01, and many integers), and on amd64 it is wrong for
// subnormal arguments.
package clog

import (
	"math"
	"math/big"
	"sync"
)

const prec = 256

const terms = 400

var (
	ln2Once sync.Once
	ln2Big  *big.Float
	recip   [terms]big.Float // recip[j] = 1/(2j+1), to prec bits
)

// scratch holds the big.Floats of one evaluation, reused through pool.
type scratch struct {
	z2, term, term2, sum, sum2, t, d, bf, one, z, den, e big.Float
	r, r2, two, out, m                                   big.Float
}

var pool = sync.Pool{New: func() any {
	s := new(scratch)
	for _, f := range []*big.Float{&s.z2, &s.term, &s.term2, &s.sum2, &s.sum, &s.t, &s.d, &s.bf, &s.one, &s.z, &s.den, &s.e, &s.r, &s.r2, &s.two} {
		f.SetPrec(prec)
	}
	s.out.SetPrec(53) // the result, rounded once to nearest even
	return s
}}

// atanh2 sets s.sum to 2·atanh(z) = 2·Σ z^(2j+1)/(2j+1) for |z| ≤ 1/3, to
// prec bits.
func (s *scratch) atanh2(z *big.Float) *big.Float {
	s.z2.Mul(z, z)
	s.term.Set(z)
	s.sum.Set(z)
	for j := int64(1); j < terms; j++ {
		s.term2.Mul(&s.term, &s.z2) // no aliasing: an aliased Mul allocates
		s.term, s.term2 = s.term2, s.term
		s.t.Mul(&s.term, &recip[j]) // a Quo would allocate
		s.sum2.Add(&s.sum, &s.t)    // no aliasing: an aliased Add allocates
		s.sum, s.sum2 = s.sum2, s.sum
		if s.t.Sign() == 0 || s.t.MantExp(nil)-s.sum.MantExp(nil) < -prec-8 {
			break
		}
	}
	s.sum2.Mul(&s.sum, s.d.SetInt64(2))
	return &s.sum2
}

// Log returns ln x correctly rounded, for 0 < x < +Inf (subnormals
// included): x = f·2^e with f in [√½, √2), ln x = e·ln2 +
// 2·atanh((f − 1)/(f + 1)), evaluated to 256 bits and rounded once.
// Outside that domain it is math.Log (NaN, −Inf at 0, +Inf at +Inf).
// It costs some microseconds and allocates nothing (its math/big
// temporaries are pooled): callers call it once per merge or per link,
// never per item.
func Log(x float64) float64 {
	if !(x > 0) || math.IsInf(x, 1) {
		return math.Log(x)
	}
	ln2Once.Do(func() {
		for j := range recip {
			recip[j].SetPrec(prec).Quo(big.NewFloat(1).SetPrec(prec), big.NewFloat(float64(2*j+1)).SetPrec(prec))
		}
		s := pool.New().(*scratch)
		third := new(big.Float).SetPrec(prec).Quo(big.NewFloat(1).SetPrec(prec), big.NewFloat(3).SetPrec(prec))
		ln2Big = new(big.Float).SetPrec(prec).Set(s.atanh2(third))
	})
	f, e := math.Frexp(x)
	if f < math.Sqrt2/2 {
		f *= 2
		e--
	}
	s := pool.Get().(*scratch)
	s.bf.SetFloat64(f)
	s.one.SetInt64(1)
	s.z.Sub(&s.bf, &s.one)
	s.den.Add(&s.bf, &s.one)
	// (f − 1)/(f + 1) without Quo, which allocates: 1/(f + 1) by Newton's
	// r ← r·(2 − (f + 1)·r) from float64's, each step doubling the correct
	// bits (53, 106, 212, 424 ≥ prec). No operation aliases its result
	// with an operand, which would allocate.
	s.r.SetFloat64(1 / (f + 1))
	s.two.SetInt64(2)
	for range 3 {
		s.t.Mul(&s.den, &s.r)
		s.d.Sub(&s.two, &s.t)
		s.r2.Mul(&s.r, &s.d)
		s.r, s.r2 = s.r2, s.r
	}
	s.t.Mul(&s.z, &s.r)
	r := s.atanh2(&s.t)
	s.e.SetInt64(int64(e))
	s.d.Mul(ln2Big, &s.e)
	s.out.Add(r, &s.d) // rounded once, to 53 bits
	// s.out as a float64 without Float64, which allocates a temporary:
	// its 53-bit mantissa as an integer, scaled back.
	var v float64
	if s.out.Sign() != 0 {
		exp := s.out.MantExp(nil)
		s.m.SetMantExp(&s.out, 53-exp)
		neg := s.m.Signbit()
		s.m.Abs(&s.m)
		u, _ := s.m.Uint64()
		v = math.Ldexp(float64(u), exp-53)
		if neg {
			v = -v
		}
	}
	pool.Put(s)
	return v
}
