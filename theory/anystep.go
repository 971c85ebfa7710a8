package theory

// Double hashing with any step: 001 §4.2's g_i = h1 + i·h2 mod m with h1
// and h2 uniform over [0, m), which is also what RedisBloom's positions
// (a + i·b) mod m are on a link of a power-of-two number of positions
// (2^64 is then 0 mod m, so only a mod m and b mod m matter).
//
// Unlike package hashing's schemes, which draw a step of order above k
// (odd for even m, nonzero), a step h2 of additive order d = m/gcd(h2, m)
// below k probes only d positions: h2 = 0 probes one, h2 = m/2 two. There
// are φ(d) steps of order d for each divisor d of m, so a query probes d
// distinct positions with probability φ(d)/m, and at fill f its rate is
//
//	Σ_{d | m, d < k} φ(d)/m · f^d + (1 − Σ_{d | m, d < k} φ(d)/m) · f^k,
//
// which on a link of 128 bits with k = 8 adds (f + f² + 2f⁴)/128 ≈ 0.5%
// at f = 1/2 to f^8 = 0.4%. Each key likewise sets only d of its k
// positions. On top comes the pair floor of plain double hashing: a key
// with the query's pair, or its reversal, shares all its positions (m²/2
// position sets), and the shifted pairs share all but j of them (see
// FPScheme). Links of other sizes reduce a + i·b modulo 2^64 before m, so
// a probe that wraps moves by 2^64 mod m: the wraps spread the probes of a
// short-order step and make pairs agree less often, so these terms bound
// such a link's rate from above.
//
// Its accuracy, measured (anystep_test.go): on power-of-two m, against the
// exact rate of random states, within 25% from 10 keys on; for fewer keys
// between 0.75 and 2 times it (one key with k = 2: twice; 1–3 keys with
// k ≥ 8 in 64–256 bits share more positions than it counts, down to 0.78
// times). On other m it is at least the Monte Carlo rate, and 1.5 to 20
// times above it for a few keys in 10^3 bits, where its m²/2 pair floor
// is mostly absent.

import (
	"math"

	"github.com/bloomlab/bloomlab/hashing"
)

// anyStepOrders returns, for each d < k dividing m, the fraction φ(d)/m of
// the steps h2 in [0, m) of additive order d, and the rest (order ≥ k);
// and the mean number of distinct positions of k probes, E[min(k, order)].
func anyStepOrders(m uint64, k int) (frac [hashing.MaxK + 1]float64, rest, meanD float64) {
	rest = 1
	for d := 1; d < k && uint64(d) <= m; d++ {
		if m%uint64(d) != 0 {
			continue
		}
		frac[d] = float64(totient(d)) / float64(m)
		rest -= frac[d]
		meanD += float64(d) * frac[d]
	}
	meanD += float64(k) * rest
	return frac, rest, meanD
}

// totient returns Euler's φ(d) for 1 ≤ d ≤ 64.
func totient(d int) int {
	r := d
	for p := 2; p*p <= d; p++ {
		if d%p == 0 {
			for d%p == 0 {
				d /= p
			}
			r -= r / p
		}
	}
	if d > 1 {
		r -= r / d
	}
	return r
}

// FPAnyStep returns the rate of a filter of m positions holding n keys
// whose k probes are h1 + i·h2 mod m with (h1, h2) uniform over all m²
// pairs (see the section above), given fill, the fraction of positions
// set: the short-order steps' term at fill, with the pair floor (m²/2
// position sets) and the shifted pairs added. A model for power-of-two m
// (see the section above for its accuracy), an upper bound for a
// RedisBloom link of another size. Domain: 1 ≤ m ≤ 2^48, finite n ≥ 0,
// 1 ≤ k ≤ 64, fill in [0, 1]; otherwise NaN.
func FPAnyStep(m uint64, n float64, k int, fill float64) float64 {
	if m < 1 || m > MaxBits || !nonNeg(n) || k < 1 || k > hashing.MaxK || !(fill >= 0 && fill <= 1) {
		return math.NaN()
	}
	frac, rest, _ := anyStepOrders(m, k)
	base := rest * math.Pow(fill, float64(k))
	for d := 1; d < k; d++ {
		base += frac[d] * math.Pow(fill, float64(d))
	}
	if n == 0 || k < 2 {
		return base
	}
	mf := float64(m)
	l := logAdd(log1mexp(logNoMatch(mf*mf/2, n)), math.Log(base))
	f := max(fill-float64(k)/mf, 0) // the other keys' bits
	g := 0.0
	for j, fj := 1, f; j < k; j, fj = j+1, fj*f {
		g += fj
	}
	if w := 4 * g / (mf * mf); w > 0 {
		l = logAdd(log1mexp(n*math.Log1p(-math.Min(w, 1))), l)
	}
	return math.Exp(l)
}

// FillAnyStep returns the expected fraction of the m positions set by n
// keys of k probes with uniform steps (see the section above):
// 1 − (1 − 1/m)^{n·E[D]}, E[D] the mean number of distinct positions a key
// probes, each key's drawn with replacement (so for few keys of many
// probes in few positions, up to 10% below the mean). Domain as FPAnyStep;
// otherwise NaN.
func FillAnyStep(m uint64, n float64, k int) float64 {
	if m < 1 || m > MaxBits || !nonNeg(n) || k < 1 || k > hashing.MaxK {
		return math.NaN()
	}
	_, _, meanD := anyStepOrders(m, k)
	return -math.Expm1(n * meanD * math.Log1p(-1/float64(m)))
}
