package stats

import "math"

// lnSqrt2Pi is ln √(2π).
const lnSqrt2Pi = 0.918938533204672741780329736406

// stirlerrHalves holds δ(x) for x = 0.5, 1, 1.5, ..., 15, to 22 digits
// (computed in 40-digit arithmetic); the ln Γ difference would lose about
// 1e-14 to cancellation there.
var stirlerrHalves = [30]float64{
	0.1534264097200273452914,   // 0.5
	0.08106146679532725821967,  // 1
	0.05481412105191765389614,  // 1.5
	0.04134069595540929409382,  // 2
	0.03316287351993628748511,  // 2.5
	0.02767792568499833914879,  // 3
	0.02374616365629749597133,  // 3.5
	0.02079067210376509311152,  // 4
	0.01848845053267318523078,  // 4.5
	0.01664469118982119216319,  // 5
	0.01513497322191737887351,  // 5.5
	0.01387612882307074799875,  // 6
	0.01281046524292022692425,  // 6.5
	0.01189670994589177009506,  // 7
	0.01110455975820691732663,  // 7.5
	0.01041126526197209649748,  // 8
	0.00979941612615880329839,  // 8.5
	0.009255462182712732917729, // 9
	0.008768700134139385462955, // 9.5
	0.008330563433362871256469, // 10
	0.00793411456431402054725,  // 10.5
	0.007573675487951840794972, // 11
	0.007244554301320383179546, // 11.5
	0.006942840107209529865664, // 12
	0.006665247032707682442356, // 12.5
	0.00640899418800420706844,  // 13
	0.006171712263039457647535, // 13.5
	0.005951370112758847735624, // 14
	0.005746216513010115682026, // 14.5
	0.005554733551962801371039, // 15
}

// stirlerr returns δ(x) = ln Γ(x+1) − ((x+½)·ln x − x + ln √(2π)), the error
// of Stirling's formula, for real x > 0 (Loader 2000): from a table for
// half-integers up to 15 (all the binomial counts and chi-square shapes
// that reach it), from math.Lgamma for other x ≤ 15, and from the
// asymptotic series above 15.
func stirlerr(x float64) float64 {
	const (
		s0 = 1.0 / 12
		s1 = 1.0 / 360
		s2 = 1.0 / 1260
		s3 = 1.0 / 1680
		s4 = 1.0 / 1188
	)
	if x <= 15 {
		if h := 2 * x; h == math.Trunc(h) && h >= 1 {
			return stirlerrHalves[int(h)-1]
		}
		lg, _ := math.Lgamma(x + 1)
		return lg - (x+0.5)*math.Log(x) + x - lnSqrt2Pi
	}
	xx := x * x
	switch {
	case x > 500:
		return (s0 - s1/xx) / x
	case x > 80:
		return (s0 - (s1-s2/xx)/xx) / x
	case x > 35:
		return (s0 - (s1-(s2-s3/xx)/xx)/xx) / x
	}
	return (s0 - (s1-(s2-(s3-s4/xx)/xx)/xx)/xx) / x
}

// bd0 returns x·ln(x/np) + np − x ≥ 0 for x ≥ 0, np > 0, without the
// cancellation of the direct formula when x ≈ np (Loader 2000).
func bd0(x, np float64) float64 {
	if math.Abs(x-np) < 0.1*(x+np) {
		v := (x - np) / (x + np)
		s := (x - np) * v
		ej := 2 * x * v
		v *= v
		for j := 1; j < 1000; j++ {
			ej *= v
			s1 := s + ej/float64(2*j+1)
			if s1 == s {
				return s1
			}
			s = s1
		}
		return s
	}
	return x*math.Log(x/np) + np - x
}

// binom holds Bin(n, p) with q = 1 − p, both in (0, 1), and their logs.
type binom struct {
	n, p, q, lp, lq float64
	pq, qp          float64 // p/q and q/p
}

// newBinom returns Bin(n, p) for 0 < p < 1 (q is computed here, ln p and
// ln q without cancellation).
func newBinom(n uint64, p float64) binom {
	return newBinomPQ(float64(n), p, 1-p)
}

// newBinomPQ is newBinom with q given, so that the reflection n − X ~
// Bin(n, q) keeps p exact.
func newBinomPQ(n, p, q float64) binom {
	b := binom{n: n, p: p, q: q, pq: p / q, qp: q / p}
	if p < 0.5 {
		b.lp, b.lq = math.Log(p), math.Log1p(-p)
	} else {
		b.lp, b.lq = math.Log1p(-q), math.Log(q)
	}
	return b
}

// flip returns the distribution of n − X.
func (b binom) flip() binom { return newBinomPQ(b.n, b.q, b.p) }

// mode returns ⌊(n+1)p⌋ clamped to [0, n], a most likely count; the pmf
// increases up to it and decreases after it.
func (b binom) mode() float64 {
	return math.Min(math.Floor((b.n+1)*b.p), b.n)
}

// logPMF returns ln P(X = x) for an integer 0 ≤ x ≤ n, with relative
// accuracy near machine precision for any n (Loader's saddle-point form:
// Stirling errors plus deviances instead of differences of ln Γ).
func (b binom) logPMF(x float64) float64 {
	switch x {
	case 0:
		return b.n * b.lq
	case b.n:
		return b.n * b.lp
	}
	lc := stirlerr(b.n) - stirlerr(x) - stirlerr(b.n-x) - bd0(x, b.n*b.p) - bd0(b.n-x, b.n*b.q)
	lf := 2*lnSqrt2Pi + math.Log(x) + math.Log1p(-x/b.n)
	return lc - 0.5*lf
}

// logTail returns ln Σ P(X = i) over i = start, start+dir, ... (dir = ±1) to
// the end of the support, for a start on the far side of the mode, where
// the terms decrease geometrically. Terms are summed relative to the first
// and the sum stops when the remaining tail, bounded by w·r/(1 − r) for the
// current term w and ratio r, is below 1e-17 of the sum.
func (b binom) logTail(start float64, dir int) float64 {
	l0 := b.logPMF(start)
	if math.IsInf(l0, -1) {
		return l0
	}
	sum, w, i := 1.0, 1.0, start
	for {
		var r float64
		if dir < 0 {
			if i == 0 {
				break
			}
			r = i / (b.n - i + 1) * b.qp
			i--
		} else {
			if i == b.n {
				break
			}
			r = (b.n - i) / (i + 1) * b.pq
			i++
		}
		w *= r
		sum += w
		if r < 1 && w*r <= 1e-17*sum*(1-r) {
			break
		}
	}
	return l0 + math.Log(sum)
}

// BinomialCDF returns P(X ≤ k) for X ~ Bin(trials, p). The pmf is evaluated
// in log space (Loader's method, accurate for any trials) and summed from k
// away from the mode, over the smaller side: for k below the mode the lower
// tail directly (full relative precision, even for tiny results), otherwise
// one minus the upper tail. The result is accurate to about 1e-12 relative
// (1e-15 absolute above the mode) and underflows to 0 only below ~1e-308.
// It costs O(σ) steps at worst, σ = √(trials·p·q). Counts are exact for
// trials ≤ 2^53. It returns NaN for p outside [0, 1] or NaN.
func BinomialCDF(k, trials uint64, p float64) float64 {
	if math.IsNaN(p) || p < 0 || p > 1 {
		return math.NaN()
	}
	if k >= trials || p == 0 {
		return 1
	}
	if p == 1 {
		return 0 // k < trials
	}
	b := newBinom(trials, p)
	kf := float64(k)
	if kf < b.mode() {
		return math.Exp(b.logTail(kf, -1))
	}
	return -math.Expm1(b.logTail(kf+1, +1))
}

// lowerCut returns the largest l with P(X ≤ l−1) ≤ a, for 0 < a < 1/2.
//
// It finds j₀, the largest count below the mode with pmf(j₀) ≤ a·e^{−30}/(n+1)
// (by bisection: the pmf increases up to the mode), then accumulates
// P(X ≤ j) upwards from j₀ until it exceeds a. The neglected mass below j₀
// is at most pmf(j₀)·(n+1) ≤ a·e^{−30}, because every ratio pmf(i−1)/pmf(i)
// there is at most r with r/(1−r) ≤ n+1.
func (b binom) lowerCut(a float64) uint64 {
	la := math.Log(a)
	thr := la - 30 - math.Log(b.n+1)
	mode := b.mode()
	var j float64
	if b.logPMF(0) <= thr {
		if b.logPMF(mode) <= thr {
			j = mode // cannot happen for a < 1/2; kept for safety
		} else {
			lo, hi := 0.0, mode // logPMF(lo) ≤ thr < logPMF(hi)
			for hi-lo > 1 {
				mid := math.Floor(lo + (hi-lo)/2)
				if b.logPMF(mid) <= thr {
					lo = mid
				} else {
					hi = mid
				}
			}
			j = lo
		}
	}
	// Sum pmf(j) + pmf(j+1) + ... in units of e^off, rescaling to stay in
	// range; stop at the first j where the sum exceeds a.
	off := b.logPMF(j)
	w, s := 1.0, 1.0
	lim := math.Exp(la - off)
	for s <= lim && j < b.n {
		w *= (b.n - j) / (j + 1) * b.pq
		j++
		s += w
		if s > 1e200 {
			w, s, off = w*1e-200, s*1e-200, off+200*math.Ln10
			lim = math.Exp(la - off)
		}
	}
	return uint64(j)
}

// BinomialQuantileBounds returns a two-sided acceptance region [lo, hi] for
// the number of successes X ~ Bin(trials, p) at level alpha:
//
//   - lo is the largest count with P(X ≤ lo−1) ≤ alpha/2 (P(X < lo) ≤ alpha/2),
//   - hi is the smallest count with P(X > hi) ≤ alpha/2,
//
// so P(X < lo) + P(X > hi) ≤ alpha, and a test asserting lo ≤ observed ≤ hi
// fails by chance with probability at most alpha. Both ends are computed
// exactly from the binomial pmf in log space; the tail sums are accurate to
// about 1e-12 relative, so only a count whose tail lies within that of
// alpha/2 could be decided either way. It takes O(σ + log trials) steps,
// σ = √(trials·p·q): well under a millisecond for trials = 1e9, any p.
// Counts are exact for trials ≤ 2^53.
//
// p = 0 gives [0, 0], p = 1 gives [trials, trials], trials = 0 gives [0, 0].
// Invalid input (p outside [0, 1] or NaN, alpha outside (0, 1) or NaN)
// returns the empty region lo = 1, hi = 0, so that any check
// lo ≤ observed ≤ hi fails rather than passes silently.
func BinomialQuantileBounds(trials uint64, p float64, alpha float64) (lo, hi uint64) {
	if math.IsNaN(p) || p < 0 || p > 1 || math.IsNaN(alpha) || alpha <= 0 || alpha >= 1 {
		return 1, 0
	}
	if trials == 0 || p == 0 {
		return 0, 0
	}
	if p == 1 {
		return trials, trials
	}
	b := newBinom(trials, p)
	// hi: the smallest h with P(X > h) ≤ a is trials − l, where l is the
	// largest with P(trials − X ≤ l − 1) ≤ a.
	return b.lowerCut(alpha / 2), trials - b.flip().lowerCut(alpha/2)
}

// WilsonInterval returns the Wilson score interval for a proportion from
// successes out of trials at normal quantile z (1.96 for 95%): the set of π
// with |p̂ − π| ≤ z·√(π(1−π)/trials), p̂ = successes/trials. Unlike the Wald
// interval it stays in [0, 1], always contains p̂, and does not collapse at 0
// or trials successes. The ends are the roots of
// (n+z²)π² − (2s+z²)π + s²/n = 0, the upper one from the formula with no
// subtraction and the lower one as (product of the roots)/(upper), so both
// keep full relative precision even for proportions like 1e-12. It returns
// NaN, NaN for trials = 0, successes > trials, or z negative, infinite or
// NaN.
func WilsonInterval(successes, trials uint64, z float64) (lo, hi float64) {
	if trials == 0 || successes > trials || math.IsNaN(z) || z < 0 || math.IsInf(z, 0) {
		return math.NaN(), math.NaN()
	}
	n, s := float64(trials), float64(successes)
	f, z2 := n-s, z*z
	if f == 0 {
		hi = 1
	} else {
		hi = math.Min(1, (2*s+z2+z*math.Sqrt(z2+4*s*f/n))/(2*(n+z2)))
	}
	if s == 0 || hi == 0 {
		return 0, hi
	}
	return s * s / n / ((n + z2) * hi), hi
}
