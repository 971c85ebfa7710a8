package theory

import (
	"fmt"
	"math"
	"math/big"
)

// Cuckoo filters: partial-key cuckoo hashing with f-bit fingerprints in
// buckets of b slots (Fan, Andersen, Kaminsky, Mitzenmacher, "Cuckoo
// Filter: Practically Better Than Bloom", CoNEXT 2014; sections cited as
// CF §n). A key has two candidate buckets, i1 and i2 = i1 ⊕ h(fingerprint);
// a query compares its fingerprint with the 2b slots of the two buckets.
//
//   - [FPCuckooBound]: 1 − (1 − 2^−f)^{2b} ≈ 2b/2^f, the rate of a full
//     table (CF §5.1, the upper bound).
//   - [FPCuckoo]: 1 − (1 − α/(2^f − 1))^{2b}, the rate at load factor α with
//     fingerprints drawn from the 2^f − 1 nonzero values (0 marks an empty
//     slot).
//   - [LoadCuckoo]: the load factor a table reaches before its first failed
//     insert, 50%, 84%, 95%, 98% for b = 1, 2, 4, 8 (CF §5.1, 500
//     relocations).
//   - [FingerprintBitsCuckoo], [SizeCuckoo]: the smallest f with the rate
//     at most ε, f ≥ ⌈log2(2b/ε)⌉ (CF §5.1), and the buckets for n keys.
//   - [BitsPerKeyCuckoo]: (f − s)/α bits per key, s = 1 with
//     semi-sorting (CF §5.2).
//   - [SemisortCodeBits], [SemisortSaving]: a bucket of b sorted p-bit
//     prefixes takes ⌈log2 C(2^p + b − 1, b)⌉ bits: 12 instead of 16 for
//     four 4-bit prefixes, one bit saved per entry (CF §5.2).

// MaxFingerprintBitsCuckoo is the largest fingerprint the cuckoo sizing
// functions consider.
const MaxFingerprintBitsCuckoo = 32

// FPCuckooBound returns 1 − (1 − 2^−f)^{2b}, the false-positive rate of a
// full cuckoo filter with f-bit fingerprints and buckets of b slots (CF
// §5.1): each of the 2b slots a query compares holds a fingerprint equal
// to the query's with probability at most 2^−f. For large f it is about
// 2b/2^f. It returns NaN for f < 1 or b < 1.
func FPCuckooBound(f, b int) float64 {
	if f < 1 || b < 1 {
		return math.NaN()
	}
	return -math.Expm1(float64(2*b) * math.Log1p(-math.Ldexp(1, -f)))
}

// FPCuckoo returns 1 − (1 − α/(2^f − 1))^{2b}: the expected false-positive
// rate of a cuckoo filter at load factor α (occupied slots ÷ slots) whose
// fingerprints are uniform on the 2^f − 1 nonzero f-bit values, each of
// the 2b slots a query reads being occupied with probability α. It is the
// expectation of 1 − (1 − 1/(2^f − 1))^s over s ~ Binomial(2b, α); a real
// table fills its buckets more evenly than independent slots, which
// changes the rate by far less than one part in 2^f. At α = 1 it is
// slightly above FPCuckooBound, whose 2^−f counts the empty value too.
// It returns NaN for f < 2, b < 1 or α outside [0, 1].
func FPCuckoo(f, b int, load float64) float64 {
	if f < 2 || f > 62 || b < 1 || !(load >= 0 && load <= 1) {
		return math.NaN()
	}
	q := load / (math.Ldexp(1, f) - 1)
	return -math.Expm1(float64(2*b) * math.Log1p(-q))
}

// LoadCuckoo returns the load factor a cuckoo filter with buckets of b
// slots reaches, with up to 500 relocations per insert, before the first
// insert fails: 0.50, 0.84, 0.95, 0.98 for b = 1, 2, 4, 8 (CF §5.1); NaN
// for other b.
func LoadCuckoo(b int) float64 {
	switch b {
	case 1:
		return 0.50
	case 2:
		return 0.84
	case 4:
		return 0.95
	case 8:
		return 0.98
	}
	return math.NaN()
}

// FingerprintBitsCuckoo returns ⌈log2(2b/ε)⌉, the fingerprint length CF
// §5.1 gives for a rate of at most ε at full load (from FPCuckooBound ≈
// 2b/2^f), or 0 if eps is not in (0, 1) or b < 1.
func FingerprintBitsCuckoo(eps float64, b int) int {
	if !(eps > 0 && eps < 1) || b < 1 {
		return 0
	}
	return int(math.Ceil(math.Log2(float64(2*b) / eps)))
}

// BitsPerKeyCuckoo returns (f − s)/α, the bits per key of a cuckoo filter
// with f-bit fingerprints at load factor α, where s = 1 for the
// semi-sorted buckets of CF §5.2 (b = 4: four f-bit fingerprints in 4f − 4
// bits) and s = 0 otherwise. NaN outside f ≥ 1, α in (0, 1].
func BitsPerKeyCuckoo(f int, load float64, semisort bool) float64 {
	if f < 1 || !(load > 0 && load <= 1) {
		return math.NaN()
	}
	s := 0
	if semisort {
		s = 1
	}
	return float64(f-s) / load
}

// SemisortCodeBits returns ⌈log2 C(2^p + b − 1, b)⌉: the bits that encode
// the multiset of the p-bit prefixes of a bucket's b fingerprints once
// they are kept sorted (CF §5.2): there are C(2^p + b − 1, b) such
// multisets (3876 for p = 4, b = 4, so 12 bits instead of 16). It returns
// 0 for p < 1, b < 1 or p·b > 64.
func SemisortCodeBits(p, b int) int {
	if p < 1 || b < 1 || p*b > 64 {
		return 0
	}
	var c big.Int
	c.Binomial(int64(1)<<p+int64(b)-1, int64(b))
	c.Sub(&c, big.NewInt(1))
	return c.BitLen()
}

// SemisortSaving returns p − SemisortCodeBits(p, b)/b, the bits per entry
// that semi-sorting saves (1 for p = 4, b = 4), or NaN outside the domain
// of SemisortCodeBits.
func SemisortSaving(p, b int) float64 {
	c := SemisortCodeBits(p, b)
	if c == 0 {
		return math.NaN()
	}
	return float64(p) - float64(c)/float64(b)
}

// SizeCuckoo returns the smallest fingerprint length f (2 …
// MaxFingerprintBitsCuckoo) whose FPCuckoo at load factor load is at most
// eps, and the buckets ⌈n/(b·load)⌉ that hold n keys at that load. It
// returns an error wrapping ErrInvalid for n = 0, eps outside (0, 1), b < 1,
// load outside (0, 1], or a rate that needs more than 32 bits, and
// ErrTooLarge past MaxBits bits.
func SizeCuckoo(n uint64, eps float64, b int, load float64) (f int, buckets uint64, err error) {
	if n == 0 || !(eps > 0 && eps < 1) || b < 1 || !(load > 0 && load <= 1) {
		return 0, 0, fmt.Errorf("theory: SizeCuckoo(n = %d, eps = %v, b = %d, load = %v): %w", n, eps, b, load, ErrInvalid)
	}
	for f = 2; f <= MaxFingerprintBitsCuckoo; f++ {
		if FPCuckoo(f, b, load) <= eps {
			break
		}
	}
	if f > MaxFingerprintBitsCuckoo {
		return 0, 0, fmt.Errorf("theory: SizeCuckoo: eps = %v needs fingerprints of more than %d bits: %w", eps, MaxFingerprintBitsCuckoo, ErrInvalid)
	}
	nb := math.Ceil(float64(n) / (float64(b) * load))
	if nb*float64(b*f) > float64(MaxBits) {
		return 0, 0, fmt.Errorf("theory: SizeCuckoo(n = %d, eps = %v): %w", n, eps, ErrTooLarge)
	}
	return f, uint64(nb), nil
}
