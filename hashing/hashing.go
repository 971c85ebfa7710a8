// Package hashing is the one place where bloomlab turns keys into bit
// positions. Every structure in the module uses it, so a key hashes the same
// way in every filter and a file written today stays readable forever: the
// positions of every scheme are pinned by known-answer tests.
//
// Hashing happens in two steps.
//
//  1. A seeded 128-bit base hash of the key (xxh3-128), giving a Digest of two
//     64-bit halves. Sum and SumString hash []byte and string keys without
//     copying; structures also accept a Digest directly (their pre-hashed
//     entry points), so a key hashed once can be offered to several filters.
//
//  2. An index Scheme turns the Digest into k positions in [0, m). The
//     schemes are those of Kirsch and Mitzenmacher, "Less Hashing, Same
//     Performance" (paper 001):
//
//     - Independent: k values derived from the digest by k differently keyed
//     128→64-bit mixes, the papers' idealised model of k independent hash
//     functions (barring a collision of the 128-bit digests, which has
//     probability about n²/2¹²⁹).
//     - Double: g_i = h1 + i·h2 mod m (001 §4.2). h2 is never 0, and is odd
//     when m is even, so the k positions are distinct for m > k when m is
//     a power of two (000 §3.1).
//     - Enhanced: g_i = h1 + i·h2 + (i³−i)/6 mod m, the "enhanced double
//     hashing" of Dillinger and Manolios cited by 001 §1.
//     - ExtendedSquare, ExtendedCube: g_i = h1 + i·h2 + f(i) mod m with
//     f(i) = i², i³ (001 §4.2).
//     - Partition: k subarrays of m' = m/k positions; position i lies in
//     subarray i at h1 + i·h2 mod m' (001 §4.1).
//     - PrimePartition: the same with m' a prime p (001 §2).
//     - PartitionIndependent: k subarrays, an independent hash in each: the
//     partitioned Bloom filter of 004 §5.
//     - BoomFilters, BoomPartitioned, BlobloomXXH64: the hash and index
//     rules of other Go libraries' filters, for importing them
//     (foreign.go; their keys hash with ForeignSum).
//     - Custom: a user-supplied IndexFunc (for example the hand-made hash
//     functions of 003 §2).
//
// All arithmetic is 64-bit, so m may exceed 2³² (up to MaxM). h1 and h2 are
// reduced to [0, m) once per key by an unbiased multiply-shift reduction
// (Lemire's method with rejection, so every residue is exactly equally
// likely for any m, not only powers of two); the k positions then follow by
// additions and conditional subtractions. No '%', no allocation and no
// interface call happens per probe.
package hashing

import (
	"fmt"
	"github.com/bloomlab/bloomlab/internal/base"
	"math/bits"

	"github.com/bloomlab/bloomlab/internal/xxh3mid"
	"github.com/zeebo/xxh3"
)

// Digest is the 128-bit base hash of a key. H1 and H2 are its low and high
// 64-bit halves. Structures derive every position of a key from its Digest
// alone, so a Digest is a complete pre-hashed form of the key.
type Digest struct {
	H1, H2 uint64
}

// Sum returns the seeded xxh3-128 digest of key. It does not retain or copy
// key and allocates nothing.
func Sum(key []byte, seed uint64) Digest {
	h := xxh3.Hash128Seed(key, seed)
	return Digest{H1: h.Lo, H2: h.Hi}
}

// SumString is Sum for a string key, without converting it to []byte.
func SumString(key string, seed uint64) Digest {
	h := xxh3.HashString128Seed(key, seed)
	return Digest{H1: h.Lo, H2: h.Hi}
}

// Sum64 returns the seeded 64-bit xxh3 hash of key (xxh3.HashSeed): the
// base hash of the static filters (fuse, ribbon), whose queries need 64
// bits, not a Digest; it costs about two thirds of Sum on short keys. It
// does not retain or copy key and allocates nothing. Seed 0 takes
// xxh3.Hash, the same value (XXH3's seed 0 is its unseeded hash) about
// 0.5 ns sooner on 16-byte keys.
func Sum64(key []byte, seed uint64) uint64 {
	if xxh3mid.In(len(key)) {
		return xxh3mid.Hash(key, seed) // inline: no call into xxh3
	}
	if seed == 0 {
		return xxh3.Hash(key)
	}
	return xxh3.HashSeed(key, seed)
}

// Sum64String is Sum64 for a string key, without converting it to []byte.
func Sum64String(key string, seed uint64) uint64 {
	if seed == 0 {
		return xxh3.HashString(key)
	}
	return xxh3.HashStringSeed(key, seed)
}

// SumUint64 is Sum of the 8-byte little-endian encoding of key.
func SumUint64(key uint64, seed uint64) Digest {
	var b [8]byte
	for i := range b {
		b[i] = byte(key >> (8 * i))
	}
	return Sum(b[:], seed)
}

// Scheme selects how a Digest becomes k positions. Its numeric value is
// recorded in files (docs/FORMAT.md), so the values never change.
type Scheme uint8

// The index schemes. See the package documentation for their definitions.
const (
	Independent          Scheme = 1
	Double               Scheme = 2
	Enhanced             Scheme = 3
	ExtendedSquare       Scheme = 4
	ExtendedCube         Scheme = 5
	Partition            Scheme = 6
	PrimePartition       Scheme = 7
	PartitionIndependent Scheme = 8
	Custom               Scheme = 255
)

// DefaultScheme is the scheme structures use unless told otherwise. Enhanced
// double hashing costs two additions per probe more than Double and, unlike
// plain double hashing, keeps the measured false-positive rate on the
// standard filter's curve for small m and large k (see the tests and
// bench results in the README).
const DefaultScheme = Enhanced

var schemeNames = map[Scheme]string{
	Independent:          "independent",
	Double:               "double",
	Enhanced:             "enhanced",
	ExtendedSquare:       "extended-square",
	ExtendedCube:         "extended-cube",
	Partition:            "partition",
	PrimePartition:       "prime-partition",
	PartitionIndependent: "partition-independent",
	BoomFilters:          "boomfilters",
	BoomPartitioned:      "boomfilters-partitioned",
	BlobloomXXH64:        "blobloom-xxhash64",
	Custom:               "custom",
}

// Schemes lists the built-in schemes in a stable order (Custom excluded).
func Schemes() []Scheme {
	return []Scheme{Independent, Double, Enhanced, ExtendedSquare, ExtendedCube, Partition, PrimePartition, PartitionIndependent}
}

// String returns the scheme's name as used on the command line and in docs.
func (s Scheme) String() string {
	if n, ok := schemeNames[s]; ok {
		return n
	}
	switch s {
	case RedisBloom:
		return "redisbloom" // not an Indexer scheme: package scalable's links
	case BitsAndBlooms:
		return "bitsandblooms" // an Indexer of keys: NewBitsAndBloomsIndexer
	}
	return fmt.Sprintf("scheme(%d)", uint8(s))
}

// Valid reports whether s is a known scheme (Custom included).
func (s Scheme) Valid() bool {
	_, ok := schemeNames[s]
	return ok
}

// Partitioned reports whether s splits the m positions into k disjoint
// subarrays, one per hash function.
func (s Scheme) Partitioned() bool {
	return s == Partition || s == PrimePartition || s == PartitionIndependent || s == BoomPartitioned
}

// ParseScheme returns the scheme with the given name (see Scheme.String).
func ParseScheme(name string) (Scheme, error) {
	for s, n := range schemeNames {
		if n == name && s != Custom && !s.Uses64BitHash() {
			return s, nil
		}
	}
	return 0, fmt.Errorf("hashing: unknown scheme %q (want one of independent, double, enhanced, extended-square, extended-cube, partition, prime-partition, partition-independent)", name)
}

// Limits on the parameters an Indexer accepts.
const (
	// MaxK is the largest number of positions per key (k). k = 64 already
	// gives a false-positive rate near 1e-19 at its optimal m.
	MaxK = 64
	// MaxM is the largest number of positions (m): 2^48 bits is 32 TiB.
	MaxM = 1 << 48
)

// IndexFunc is a user-supplied index function for the Custom scheme: it
// returns the i-th position (0 ≤ i < k) of the key with digest d. Results
// are taken modulo m. It must be deterministic and safe for concurrent use.
type IndexFunc func(d Digest, i int) uint64

// Indexer maps digests to k positions in [0, m) with one scheme. It is
// immutable after construction and safe for concurrent use.
type Indexer struct {
	scheme Scheme
	k      int
	m      uint64 // total number of positions
	sub    uint64 // subarray size for partitioned schemes, else m
	// off[i] = f(i) mod m: zeros for Double, nil for schemes that are
	// not double hashing.
	off   []uint64
	recip uint64 // ⌊(2^64 − 1)/m⌋, for ModSmall
	// The step of double hashing is stepMul·Reduce(H2, stepN) + 1: odd for
	// even m (stepMul 2, stepN m/2), in [1, m) for odd m > 1 (1, m − 1),
	// and irrelevant for m = 1 (0, 1), where every position is 0.
	stepMul, stepN uint64
	custom         IndexFunc
}

// ErrParam is wrapped by every parameter error of this package.
var ErrParam = base.ErrParam

// PartitionSize returns the smallest number of positions m' ≥ m that scheme s
// accepts with k hash functions: a multiple of k for Partition and
// PartitionIndependent, k·p with p prime for PrimePartition, m itself
// otherwise.
//
// m above MaxM is returned unchanged (every constructor rejects it), so the
// rounding can never wrap around.
func PartitionSize(s Scheme, m uint64, k int) uint64 {
	if k < 1 || m == 0 || m > MaxM {
		return m
	}
	if s.Uses64BitHash() {
		return foreignSize(s, m, k)
	}
	kk := uint64(k)
	switch s {
	case Partition, PartitionIndependent:
		return (m + kk - 1) / kk * kk
	case PrimePartition:
		return NextPrime((m+kk-1)/kk) * kk
	}
	return m
}

// NewIndexer returns an Indexer for scheme s with m positions and k per key.
// For partitioned schemes m must be k times the subarray size (prime for
// PrimePartition); PartitionSize gives the nearest valid m. Errors wrap
// ErrParam and name the offending field.
func NewIndexer(s Scheme, m uint64, k int) (*Indexer, error) {
	if s == Custom {
		return nil, fmt.Errorf("hashing: scheme custom needs NewCustomIndexer: %w", ErrParam)
	}
	if !s.Valid() {
		return nil, fmt.Errorf("hashing: scheme %d is not a known scheme: %w", uint8(s), ErrParam)
	}
	if err := checkMK(m, k); err != nil {
		return nil, err
	}
	ix := &Indexer{scheme: s, k: k, m: m, sub: m}
	if s.Partitioned() {
		kk := uint64(k)
		if m%kk != 0 {
			return nil, fmt.Errorf("hashing: m = %d must be a multiple of k = %d for scheme %v: %w", m, k, s, ErrParam)
		}
		ix.sub = m / kk
		if s == PrimePartition && !IsPrime(ix.sub) {
			return nil, fmt.Errorf("hashing: m/k = %d must be prime for scheme %v (use PartitionSize): %w", ix.sub, s, ErrParam)
		}
	}
	if s == BlobloomXXH64 && (m%BlobloomBlockBits != 0 || m/BlobloomBlockBits > blobloomMaxBlocks) {
		return nil, fmt.Errorf("hashing: m = %d must be a multiple of %d bits, at most 2^32 blocks, for scheme %v: %w", m, BlobloomBlockBits, s, ErrParam)
	}
	var f func(i uint64) uint64
	switch s {
	case Enhanced:
		f = func(i uint64) uint64 { return (i*i*i - i) / 6 }
	case ExtendedSquare:
		f = func(i uint64) uint64 { return i * i }
	case ExtendedCube:
		f = func(i uint64) uint64 { return i * i * i }
	}
	if s == Double {
		f = func(uint64) uint64 { return 0 }
	}
	if f != nil {
		ix.off = make([]uint64, k)
		for i := range ix.off {
			ix.off[i] = f(uint64(i)) % m // i < 64: no overflow
		}
	}
	ix.recip = ^uint64(0) / m
	if s == BoomPartitioned {
		ix.recip = ^uint64(0) / ix.sub // its probes reduce modulo the partition
	}
	ix.stepN = DoubleSteps(m)
	if s == BlobloomXXH64 {
		ix.stepN = m / BlobloomBlockBits // its number of blocks
	}
	switch {
	case m&1 == 0:
		ix.stepMul = 2
	case m > 1:
		ix.stepMul = 1
	}
	return ix, nil
}

// DoubleSteps returns the number of distinct steps the double-hashing
// schemes (Double, Enhanced, ExtendedSquare, ExtendedCube) draw over m
// positions, each equally likely: the m/2 odd steps for even m, the m − 1
// steps 1 … m − 1 for odd m > 1, and 1 for m ≤ 1. A key's positions are
// fixed by its start (one of m) and its step, so two keys take the same
// probe sequence with probability 1/(m·DoubleSteps(m)): the pair floor of
// package theory (theory.PositionSets).
func DoubleSteps(m uint64) uint64 {
	switch {
	case m&1 == 0 && m > 0:
		return m >> 1
	case m > 1:
		return m - 1
	}
	return 1
}

// NewCustomIndexer returns an Indexer whose i-th position is fn(d, i) mod m.
func NewCustomIndexer(m uint64, k int, fn IndexFunc) (*Indexer, error) {
	if fn == nil {
		return nil, fmt.Errorf("hashing: custom index function is nil: %w", ErrParam)
	}
	if err := checkMK(m, k); err != nil {
		return nil, err
	}
	return &Indexer{scheme: Custom, k: k, m: m, sub: m, custom: fn}, nil
}

func checkMK(m uint64, k int) error {
	if m < 1 || m > MaxM {
		return fmt.Errorf("hashing: m = %d out of range [1, 2^48]: %w", m, ErrParam)
	}
	if k < 1 || k > MaxK {
		return fmt.Errorf("hashing: k = %d out of range [1, %d]: %w", k, MaxK, ErrParam)
	}
	return nil
}

// Scheme returns the indexer's scheme.
func (ix *Indexer) Scheme() Scheme { return ix.scheme }

// K returns the number of positions per key.
func (ix *Indexer) K() int { return ix.k }

// M returns the number of positions.
func (ix *Indexer) M() uint64 { return ix.m }

// SubarraySize returns m/k for partitioned schemes and m otherwise.
func (ix *Indexer) SubarraySize() uint64 { return ix.sub }

// Positions writes the k positions of d to out[:k] and returns out[:k].
// out must have length at least k. It allocates nothing.
func (ix *Indexer) Positions(d Digest, out []uint64) []uint64 {
	k := ix.k
	out = out[:k]
	switch ix.scheme {
	case Double, Enhanced, ExtendedSquare, ExtendedCube:
		t, b := ix.start(d)
		m, r := ix.m, ix.recip
		off := ix.off[:len(out)]
		for i := range out {
			out[i] = ModSmall(t+off[i], m, r)
			t += b
		}
	case Partition, PrimePartition:
		sub := ix.sub
		x := Reduce(d.H1, sub)
		b := Reduce(d.H2, sub)
		off := uint64(0)
		for i := range out {
			out[i] = off + x
			off += sub
			x = AddMod(x, b, sub)
		}
	case Independent:
		m := ix.m
		for i := range out {
			out[i] = Reduce(mixIndex(d, i), m)
		}
	case PartitionIndependent:
		sub := ix.sub
		off := uint64(0)
		for i := range out {
			out[i] = off + Reduce(mixIndex(d, i), sub)
			off += sub
		}
	case BoomFilters, BoomPartitioned, BlobloomXXH64:
		ix.foreignPositions(d, out)
	case BitsAndBlooms:
		panic("hashing: scheme bitsandblooms takes keys, not digests (KeyPositions)")
	case Custom:
		for i := range out {
			p := ix.custom(d, i)
			if p >= ix.m {
				p %= ix.m // user function out of range: documented wrap
			}
			out[i] = p
		}
	}
	return out
}

// AddMod returns (x + y) mod m for x, y < m ≤ 2^63, without a branch: the
// probe loops call it with data-dependent operands, where a conditional
// subtraction would be a coin-flip branch and mispredict half the time.
func AddMod(x, y, m uint64) uint64 {
	s := x + y - m
	return s + m&uint64(int64(s)>>63)
}

// start returns the first position h1 mod m and the step of double hashing:
// odd and in [1, m−1] when m is even, in [1, m−1] when m is odd (m > 1).
func (ix *Indexer) start(d Digest) (x, b uint64) {
	x, b, _, _ = ix.DoubleProbe(d)
	return x, b
}

// DoubleProbe returns, in one call, everything a structure that walks the
// probes of the Double and extended schemes inline needs: the first
// position and the step of DoubleStart, M and Recip. (One call that the
// caller's loop then needs no memory access for; internal/bitvec.Probe is
// built from it.)
func (ix *Indexer) DoubleProbe(d Digest) (x, step, m, recip uint64) {
	return Reduce(d.H1, ix.m), ix.stepMul*Reduce(d.H2, ix.stepN) + 1, ix.m, ix.recip
}

// Offsets returns f(i) mod m for i < k for Double (all zero) and the
// extended schemes (Enhanced, ExtendedSquare, ExtendedCube), and nil for the
// other schemes. With (a, b) from DoubleStart, probe i is
// ModSmall(a + i·b + Offsets()[i], M(), Recip()): every probe is computed
// independently of the others, so a structure can issue all k memory loads
// at once instead of waiting on a chain of modular additions. The caller
// must not modify the slice.
func (ix *Indexer) Offsets() []uint64 { return ix.off }

// Recip returns ⌊(2^64 − 1)/m⌋, the reciprocal ModSmall needs (for
// BoomPartitioned, ⌊(2^64 − 1)/(m/k)⌋: its probes reduce modulo a
// partition).
func (ix *Indexer) Recip() uint64 { return ix.recip }

// ModSmall returns t mod m for 1 ≤ m ≤ 2^48 and t < 2^56, given
// recip = ⌊(2^64 − 1)/m⌋, with two multiplications and no branch or
// division. The quotient estimate ⌊t·recip/2^64⌋ is exact or one short
// (t·(2^64/m − recip)/2^64 < 2^−7), so one conditional subtraction, done
// with a mask, finishes the job.
func ModSmall(t, m, recip uint64) uint64 {
	q, _ := bits.Mul64(t, recip)
	r := t - q*m - m
	return r + m&uint64(int64(r)>>63)
}

// DoubleStart exposes the first position and step of the Double and
// extended schemes for structures that compute positions inline: probe i
// is start + i·step + f(i) mod m (see Offsets).
func (ix *Indexer) DoubleStart(d Digest) (x, step uint64) { return ix.start(d) }

// IndependentHash returns the i-th hash of d under the Independent and
// PartitionIndependent schemes, before its reduction: position i is
// Reduce(IndependentHash(d, i), M()) for Independent and
// i·SubarraySize() + Reduce(IndependentHash(d, i), SubarraySize()) for
// PartitionIndependent, exactly as Positions computes them. Structures that
// walk the probes inline use it instead of Positions' buffer.
func IndependentHash(d Digest, i int) uint64 { return mixIndex(d, i) }

// mixIndex derives the i-th independent 64-bit hash from a digest: a
// differently keyed 128→64 multiply-fold (the wyhash mix) followed by the
// SplitMix64 finaliser, so that neighbouring i give unrelated values.
func mixIndex(d Digest, i int) uint64 {
	c := uint64(i+1) * 0x9E3779B97F4A7C15
	hi, lo := bits.Mul64(d.H1^c^0xA0761D6478BD642F, d.H2^c^0xE7037ED1A0B428DB)
	return splitmix(hi ^ lo)
}

// Reduce maps x uniformly onto [0, n) for n ≥ 1 by multiply-shift. When x is
// uniform on 64 bits the result is exactly uniform: the rare values of x
// that would bias it (probability below n/2^64) are remixed and tried again
// (Lemire, "Fast Random Integer Generation in an Interval", 2019).
func Reduce(x, n uint64) uint64 {
	hi, lo := bits.Mul64(x, n)
	if lo < n {
		return reduceSlow(x, n)
	}
	return hi
}

//go:noinline
func reduceSlow(x, n uint64) uint64 {
	if n == 0 {
		return 0
	}
	hi, lo := bits.Mul64(x, n)
	t := -n % n // 2^64 mod n: the rejection threshold
	for lo < t {
		x = splitmix(x)
		hi, lo = bits.Mul64(x, n)
	}
	return hi
}

// splitmix is the SplitMix64 output function applied after a Weyl step.
func splitmix(x uint64) uint64 {
	x += 0x9E3779B97F4A7C15
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9
	x = (x ^ (x >> 27)) * 0x94D049BB133111EB
	return x ^ (x >> 31)
}

// IsPrime reports whether n is prime (deterministic Miller-Rabin, exact for
// all 64-bit n).
func IsPrime(n uint64) bool {
	if n < 2 {
		return false
	}
	for _, p := range []uint64{2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37} {
		if n%p == 0 {
			return n == p
		}
	}
	d, s := n-1, 0
	for d&1 == 0 {
		d >>= 1
		s++
	}
	for _, a := range []uint64{2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37} {
		x := powMod(a, d, n)
		if x == 1 || x == n-1 {
			continue
		}
		composite := true
		for r := 1; r < s; r++ {
			x = mulMod(x, x, n)
			if x == n-1 {
				composite = false
				break
			}
		}
		if composite {
			return false
		}
	}
	return true
}

// NextPrime returns the smallest prime ≥ n.
func NextPrime(n uint64) uint64 {
	if n <= 2 {
		return 2
	}
	if n&1 == 0 {
		n++
	}
	for !IsPrime(n) {
		n += 2
	}
	return n
}

func mulMod(a, b, n uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	_, r := bits.Div64(hi%n, lo, n)
	return r
}

func powMod(a, e, n uint64) uint64 {
	r := uint64(1)
	a %= n
	for e > 0 {
		if e&1 == 1 {
			r = mulMod(r, a, n)
		}
		a = mulMod(a, a, n)
		e >>= 1
	}
	return r
}
