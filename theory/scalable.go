package theory

import "math"

// Scalable (growing) Bloom filters (package scalable; Almeida, Baquero,
// Preguiça and Hutchison, "Scalable Bloom Filters", 2007; RedisBloom's
// BF.*): a chain of standard filters, link i (i = 0, 1, …) sized for
// n0·s^i keys at rate ε0·r^i, where n0 is the initial capacity, s ≥ 1 the
// expansion and r in (0, 1) the tightening ratio. A new link is added when
// the newest is full, and a key is present when any link answers it.
//
// The compound rate. Each link at or below its capacity has rate at most
// ε0·r^i, and a key is a false positive when at least one link answers it,
// so by the union bound the rate of a chain of L links is at most
//
//	Σ_{i<L} ε0·r^i = ε0·(1 − r^L)/(1 − r) < ε0/(1 − r),
//
// whatever L: with ε0 = ε·(1 − r) the chain never exceeds ε however far it
// grows (RedisBloom: r = 1/2, ε0 = ε/2). [FPScalableBound] computes it;
// [FPScalable] is the rate itself when the links answer independently,
// 1 − Π(1 − fp_i) ≤ Σ fp_i.
//
// The memory. Link i, a standard filter at its continuous optimum, takes
// n0·s^i·ln(1/(ε0·r^i))/ln²2 = n0·s^i·(ln(1/ε0) + i·ln(1/r))/ln²2 bits.
// A chain holding n keys has L = [LinksScalable](n) links (the fewest with
// n0·(s^L − 1)/(s − 1) ≥ n) and, since the newest link is allocated whole,
// takes
//
//	B(n) = n0/ln²2 · (ln(1/ε0)·Σ_{i<L} s^i + ln(1/r)·Σ_{i<L} i·s^i)
//
// bits ([BitsScalable]), against n·ln(1/ε)/ln²2 for a standard filter
// sized for n at ε. The ratio ([OverheadScalable]) is a sawtooth that
// grows like log_s(n/n0)·ln(1/r)/ln(1/ε): the bits per key of the newest
// links rise by ln(1/r)/ln²2 per link, and the newest link, allocated
// whole, is on average half empty (the ratio jumps when a link is added
// and falls as it fills). For n0 = 1,000, ε = 1%, s = 2, r = 1/2 the chain
// holding 10^6 keys has 10 links and takes 2.41 times the memory of a
// standard filter sized for 10^6 keys; holding 10^7 keys, 14 links (the
// newest 22% full) and 4.84 times; 10^8 keys, 17 links and 4.47 times.

// FPScalableBound returns Σ_{i<links} eps0·r^i = eps0·(1 − r^links)/(1 − r),
// the union bound on the false-positive rate of a chain of links links
// whose link i has rate at most eps0·r^i. Domain: eps0 in [0, 1], r in
// [0, 1), links ≥ 0; otherwise NaN.
func FPScalableBound(eps0, r float64, links int) float64 {
	if math.IsNaN(eps0) || eps0 < 0 || eps0 > 1 || math.IsNaN(r) || r < 0 || r >= 1 || links < 0 {
		return math.NaN()
	}
	// 1 − r^L without cancellation: −expm1(L·ln r).
	if r == 0 {
		if links == 0 {
			return 0
		}
		return eps0
	}
	return eps0 * -math.Expm1(float64(links)*math.Log(r)) / (1 - r)
}

// FPScalable returns 1 − Π(1 − fp_i), the false-positive rate of a chain
// whose links answer an absent key independently with rates fp_i; it is
// at most Σ fp_i. Domain: every fp_i in [0, 1]; otherwise NaN.
func FPScalable(fps []float64) float64 {
	logKeep := 0.0
	for _, p := range fps {
		if math.IsNaN(p) || p < 0 || p > 1 {
			return math.NaN()
		}
		logKeep += math.Log1p(-p)
	}
	return 0 - math.Expm1(logKeep) // +0, not −0, for a chain of empty links
}

// LinksScalable returns the number of links a chain with initial capacity
// n0 and expansion s needs to hold n keys: the fewest L ≥ 1 with
// n0·(s^L − 1)/(s − 1) ≥ n (n0·L ≥ n for s = 1). Domain: n ≥ 0, n0 > 0,
// s ≥ 1, all finite; otherwise 0.
func LinksScalable(n, n0, s float64) int {
	if !nonNeg(n) || !(n0 > 0) || math.IsInf(n0, 0) || !(s >= 1) || math.IsInf(s, 0) {
		return 0
	}
	links, capacity, size := 1, n0, n0
	for capacity < n {
		size *= s
		capacity += size
		links++
	}
	return links
}

// BitsScalable returns the memory in bits of a chain with initial capacity
// n0, compound target eps, expansion s and ratio r that holds n keys, each
// link a standard filter at its continuous optimum (n_i·ln(1/ε_i)/ln²2
// bits for n_i keys at rate ε_i), link i sized for n0·s^i keys at
// ε·(1 − r)·r^i, and links the number of links (LinksScalable). Domain:
// n ≥ 0, n0 > 0, eps in (0, 1), s ≥ 1, r in (0, 1), all finite; otherwise
// NaN and 0.
func BitsScalable(n, n0, eps, s, r float64) (bits float64, links int) {
	if !(eps > 0 && eps < 1) || !(r > 0 && r < 1) {
		return math.NaN(), 0
	}
	links = LinksScalable(n, n0, s)
	if links == 0 {
		return math.NaN(), 0
	}
	lnEps0, lnR := -math.Log(eps*(1-r)), -math.Log(r)
	size := n0
	for i := 0; i < links; i++ {
		bits += size * (lnEps0 + float64(i)*lnR)
		size *= s
	}
	return bits / (math.Ln2 * math.Ln2), links
}

// OverheadScalable returns BitsScalable(n, n0, eps, s, r) divided by
// n·ln(1/eps)/ln²2, the bits of a standard filter sized at its continuous
// optimum for n keys at eps: how many times that memory the growing chain
// takes when it turns out to hold n keys. Domain as BitsScalable, and
// n > 0; otherwise NaN.
func OverheadScalable(n, n0, eps, s, r float64) float64 {
	bits, links := BitsScalable(n, n0, eps, s, r)
	if links == 0 || !(n > 0) {
		return math.NaN()
	}
	return bits / (n * -math.Log(eps) / (math.Ln2 * math.Ln2))
}
