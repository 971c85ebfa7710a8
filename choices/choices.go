// Package choices implements the Bloom filter with c choices of Lumetta and
// Mitzenmacher, "Using the Power of Two Choices to Improve Bloom Filters"
// (paper 000, all of §3).
//
// The filter has m bits and c groups of k hash functions. A key is covered
// by a group when the k bits the group gives it are all one. Every key
// added is covered by at least one group; a query answers "present" when
// any of its c groups covers it. With c = 1 this is the standard Bloom
// filter (bit for bit the bloom.Filter with the same scheme and seed).
//
// Construction (which bits to set) is where the choice pays:
//
//   - Online, Filter.Add (000 §3.1): the key is covered by the group that
//     needs the fewest new ones (distinct zero bits among its k); ties are
//     broken uniformly at random by the filter's own seeded generator, so a
//     filter is reproducible from its Config and the sequence of keys. The
//     greedy choice stochastically minimises the number of ones
//     (Theorem 3.1).
//   - Offline, Build and Builder (000 §3.2): given every key, the first
//     round inserts them greedily into a counting filter; each further round
//     removes every key in turn and re-inserts it greedily given the others'
//     current groups (random tie-breaks). The result is a plain c-choice
//     Filter (bits only) with fewer ones than the online one.
//   - KeyedFilter (the last paragraph of 000 §3.2): keeps its keys, adds
//     online, and re-optimises in the background while lookups continue.
//
// Guarantee: no false negatives. A key that was added (or given to Build) is
// always reported present: bits are only ever set by Add, offline counters
// saturate instead of wrapping and a saturated counter is never
// decremented, and KeyedFilter publishes a rebuilt bit array only after
// every key added meanwhile has been applied to it.
//
// False positives: with a fraction z of the bits set, a key never added is
// reported present with probability 1 − (1 − z^k)^c (EstimatedFPR). Two
// groups double the chances of a false positive but the greedy choice sets
// fewer ones; the online gain is nil at 8 bits per key, small at 16 and
// about a factor of two at 32 (000 Table 1), the offline gain larger (Table
// 3). theory.FillChoices solves the differential equation (3.2) that
// predicts the online fill; theory.OptimalKChoices gives the best k, which
// grows with c.
//
// Cost: Add hashes the key once (xxh3-128), derives c group digests and
// reads c·k bits; Contains reads at most c·k bits, testing each group's
// bits four at a time (stopping after the first four that hold a zero) and
// stopping at the first covering group. Neither allocates, divides, or
// makes an interface call per probe. The bit array and the per-group probe
// loop are internal/bitvec's, shared with packages bloom and blocked. Offline builds take
// O(rounds·n·(c+1)·k) time and 4·c·k bytes per key (8 when m ≥ 2^32) plus
// one byte per bit.
//
// Concurrency: any number of goroutines may call Filter's read methods at
// once. Add (which also advances the tie-breaking generator), Union, Clear,
// SetCapacity, SetTieSeed and ReadFrom must not run concurrently with
// anything else on the same Filter. KeyedFilter is safe for any mix of
// concurrent Add, Contains and Reoptimize calls.
//
// Union: two filters with the same m, k, c, scheme and seed combine by
// ORing their bits (Union). That is sound because coverage is monotone in
// the bits: a key covered by one of its groups in either filter is covered
// by the same group in the union.
//
// The zero Filter and the zero KeyedFilter are empty filters with no room
// (docs/API.md): their read methods answer as for an empty filter, WriteTo,
// MarshalBinary, Union, Reoptimize and Builder.Build into a zero Filter
// return an error wrapping ErrParam, and Add*, SetCapacity and SetTieSeed
// panic, changing nothing (and, for KeyedFilter, without holding a lock).
//
// Group hashing: group 0 uses the key's digest itself; group g ≥ 1 uses a
// digest derived from it by a keyed 128→64-bit mix (docs/FORMAT.md, kind
// 4). Within a group the positions follow the filter's index scheme
// (package hashing): Independent gives c·k independent hash functions, the
// model of 000 §3; Double gives h_i = α1 + i·α2 mod m with 2c base hashes,
// α2 odd when m is even (end of 000 §3.1).
package choices

import (
	"fmt"
	"math"
	"math/bits"
	"sync/atomic"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/bitvec"
	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/theory"
)

// MaxC is the largest number of groups (choices) a filter accepts.
const MaxC = 8

// Errors returned by this package wrap these values.
var (
	// ErrParam: a parameter is out of range.
	ErrParam = kind.ErrParam
	// ErrIncompatible: two filters cannot be combined.
	ErrIncompatible = kind.ErrIncompatible
)

// Config describes a c-choice filter.
type Config struct {
	// M is the number of bits, 1 … 2^48.
	M uint64
	// K is the number of hash functions per group, 1 … 64.
	K int
	// C is the number of groups (choices), 1 … MaxC. 0 means 2. C = 1 is
	// a standard Bloom filter.
	C int
	// Scheme is the index scheme inside each group: Independent, Double,
	// Enhanced, ExtendedSquare or ExtendedCube. 0 means
	// hashing.DefaultScheme. Partitioned and custom schemes are refused.
	Scheme hashing.Scheme
	// Seed is the seed of the base hash (xxh3-128).
	Seed uint64
	// TieSeed seeds the generator that breaks ties between groups needing
	// equally many new ones.
	TieSeed uint64
}

// normalize fills in defaults and validates cfg. Errors name the field and
// its allowed range.
func (cfg Config) normalize() (Config, error) {
	if cfg.C == 0 {
		cfg.C = 2
	}
	if cfg.Scheme == 0 {
		cfg.Scheme = hashing.DefaultScheme
	}
	switch {
	case cfg.M < 1 || cfg.M > hashing.MaxM:
		return cfg, fmt.Errorf("choices: M = %d out of range [1, 2^48]: %w", cfg.M, ErrParam)
	case cfg.K < 1 || cfg.K > hashing.MaxK:
		return cfg, fmt.Errorf("choices: K = %d out of range [1, %d]: %w", cfg.K, hashing.MaxK, ErrParam)
	case cfg.C < 1 || cfg.C > MaxC:
		return cfg, fmt.Errorf("choices: C = %d out of range [1, %d]: %w", cfg.C, MaxC, ErrParam)
	case !validScheme(cfg.Scheme):
		return cfg, fmt.Errorf("choices: Scheme %v not allowed (want independent, double, enhanced, extended-square or extended-cube): %w", cfg.Scheme, ErrParam)
	}
	return cfg, nil
}

// validScheme reports whether s may index the groups of a c-choice filter.
func validScheme(s hashing.Scheme) bool {
	switch s {
	case hashing.Independent, hashing.Double, hashing.Enhanced, hashing.ExtendedSquare, hashing.ExtendedCube:
		return true
	}
	return false
}

// Filter is a Bloom filter with c choices. Create one with New,
// NewWithEstimates or Build, or read one from a file; the zero value is an
// empty filter with no room (see the package doc).
type Filter struct {
	bits   bitvec.Vec
	m      uint64
	k, c   int
	seed   uint64
	scheme hashing.Scheme
	ix     *hashing.Indexer
	n      uint64 // keys added (Add calls, or the keys of Build)
	// rounds is 0 for a filter built online, else the rounds of the
	// offline build that produced it (informational, stored in files).
	rounds   uint32
	capacity uint64
	rng      uint64 // tie-breaking generator state (SplitMix64)
	// zeroPos and pos are add's scratch: the distinct zero positions of the
	// group being counted and of the best group so far, and a group's
	// positions (KeyedFilter). Fields rather than locals, so that no array
	// is zeroed per key.
	zeroPos [2][hashing.MaxK]uint64
	pos     [hashing.MaxK]uint64
}

// New returns an empty filter for cfg. Errors wrap ErrParam and name the
// offending field.
func New(cfg Config) (*Filter, error) {
	cfg, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	ix, err := hashing.NewIndexer(cfg.Scheme, cfg.M, cfg.K)
	if err != nil {
		return nil, fmt.Errorf("choices: %w: %w", ErrParam, err)
	}
	if bitvec.Words(cfg.M) > math.MaxInt/8 {
		return nil, fmt.Errorf("choices: M = %d bits exceed what a 32-bit platform can allocate: %w", cfg.M, ErrParam)
	}
	return &Filter{
		bits: bitvec.New(cfg.M), m: cfg.M, k: cfg.K, c: cfg.C,
		seed: cfg.Seed, scheme: cfg.Scheme, ix: ix, rng: cfg.TieSeed,
	}, nil
}

// NewWithEstimates returns a filter with c groups sized for n keys at
// false-positive rate fpr under online insertion: the smallest m for which
// some k ≤ 64 gives a rate ≤ fpr, the pair floor of the group scheme
// included (theory.SizeChoicesScheme: theory.FPChoices(m/n, k, c), the
// asymptotic prediction of 000 eq. 3.2, with the floor of
// theory.FPChoicesScheme; m prime for the double-hashing schemes). The
// other fields of cfg (Scheme, Seed, TieSeed) are used as given; its M and
// K are ignored.
func NewWithEstimates(n uint64, fpr float64, c int, cfg Config) (*Filter, error) {
	if n == 0 {
		return nil, fmt.Errorf("choices: n = 0, want n ≥ 1: %w", ErrParam)
	}
	if !(fpr > 0 && fpr < 1) {
		return nil, fmt.Errorf("choices: fpr = %v out of range (0, 1): %w", fpr, ErrParam)
	}
	if c < 1 || c > MaxC {
		return nil, fmt.Errorf("choices: c = %d out of range [1, %d]: %w", c, MaxC, ErrParam)
	}
	if cfg.Scheme == 0 {
		cfg.Scheme = hashing.DefaultScheme
	}
	m, k, err := theory.SizeChoicesScheme(cfg.Scheme, n, fpr, c, hashing.MaxK)
	if err != nil {
		return nil, fmt.Errorf("choices: %w: %w", err, ErrParam)
	}
	cfg.M, cfg.K, cfg.C = m, k, c
	f, err := New(cfg)
	if err != nil {
		return nil, err
	}
	f.capacity = n
	return f, nil
}

// M returns the number of bits.
func (f *Filter) M() uint64 { return f.m }

// K returns the number of hash functions per group.
func (f *Filter) K() int { return f.k }

// C returns the number of groups (choices).
func (f *Filter) C() int { return f.c }

// Seed returns the base hash seed.
func (f *Filter) Seed() uint64 { return f.seed }

// Scheme returns the index scheme used inside each group.
func (f *Filter) Scheme() hashing.Scheme { return f.scheme }

// N returns the number of keys added: Add calls (repeats included) plus the
// keys of the offline build that produced the filter.
func (f *Filter) N() uint64 { return atomic.LoadUint64(&f.n) }

// Rounds returns the number of rounds of the offline build that produced
// the filter (000 §3.2; keys added since were inserted online), or 0 for a
// filter built online.
func (f *Filter) Rounds() int { return int(f.rounds) }

// Capacity returns the number of keys the filter was designed for (0:
// unknown). It is informational and stored in files.
func (f *Filter) Capacity() uint64 { return f.capacity }

// SetCapacity records the number of keys the filter was designed for.
func (f *Filter) SetCapacity(n uint64) {
	f.mustBeMade("SetCapacity")
	f.capacity = n
}

// mustBeMade panics, before anything changes, when f is the zero Filter:
// one predictable branch on the mutators that have no error result.
func (f *Filter) mustBeMade(method string) {
	if f.ix == nil {
		zeroFilter.Panic(method)
	}
}

// The zero-value rule's descriptions of Filter and KeyedFilter.
var (
	zeroFilter = bitvec.Zero{Pkg: "choices", Type: "Filter", Ctors: "New, NewWithEstimates or Build"}
	zeroKeyed  = bitvec.Zero{Pkg: "choices", Type: "KeyedFilter", Ctors: "NewKeyed"}
)

// Kind returns "choices".
func (f *Filter) Kind() string { return "choices" }

// Config returns the filter's configuration, with TieSeed the current
// state of its tie-breaking generator.
func (f *Filter) Config() Config {
	return Config{M: f.m, K: f.k, C: f.c, Scheme: f.scheme, Seed: f.seed, TieSeed: f.rng}
}

// Digest hashes key with the filter's seed: the pre-hashed form accepted by
// AddHash and ContainsHash.
func (f *Filter) Digest(key []byte) hashing.Digest { return hashing.Sum(key, f.seed) }

// GroupDigest returns the digest from which group g (0 ≤ g < MaxC) of a
// key with digest d takes its k positions: d itself for g = 0, and
// (mix(d, 2g), mix(d, 2g+1)) for g ≥ 1, where mix is the keyed 128→64-bit
// multiply-fold of docs/FORMAT.md (kind 4).
func GroupDigest(d hashing.Digest, g int) hashing.Digest {
	if g == 0 {
		return d
	}
	return groupDigest(d, g)
}

// groupDigest is GroupDigest for g ≥ 1, out of line so that GroupDigest
// inlines and group 0 costs nothing.
func groupDigest(d hashing.Digest, g int) hashing.Digest {
	return hashing.Digest{H1: groupMix(d, uint64(2*g)), H2: groupMix(d, uint64(2*g+1))}
}

// groupMix is the j-th 64-bit value derived from a digest for the group
// digests: (H1 ⊕ c ⊕ A)·(H2 ⊕ c ⊕ B) as a 128-bit product, its halves
// XORed and passed through the SplitMix64 finaliser, c = j·0xD6E8FEB86659FD93.
func groupMix(d hashing.Digest, j uint64) uint64 {
	c := j * 0xD6E8FEB86659FD93
	hi, lo := bits.Mul64(d.H1^c^0x8BB84B93962EACC9, d.H2^c^0x4B33A62ED433D4A3)
	return splitmix(hi ^ lo)
}

// splitmix is the SplitMix64 output function applied after a Weyl step.
func splitmix(x uint64) uint64 {
	x += 0x9E3779B97F4A7C15
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9
	x = (x ^ (x >> 27)) * 0x94D049BB133111EB
	return x ^ (x >> 31)
}

// randBelow returns a uniform integer in [0, t) from the filter's
// tie-breaking generator (SplitMix64) and advances it.
func (f *Filter) randBelow(t uint64) uint64 {
	f.rng += 0x9E3779B97F4A7C15
	x := f.rng
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9
	x = (x ^ (x >> 27)) * 0x94D049BB133111EB
	return hashing.Reduce(x^(x>>31), t)
}

// Add inserts key (000 §3.1, online greedy).
func (f *Filter) Add(key []byte) { f.AddHash(hashing.Sum(key, f.seed)) }

// Bits returns the memory of the filter in bits: m.
func (f *Filter) Bits() uint64 { return f.m }

// AddString inserts key.
func (f *Filter) AddString(key string) { f.AddHash(hashing.SumString(key, f.seed)) }

// AddBatch inserts every key in keys, in order.
func (f *Filter) AddBatch(keys [][]byte) {
	f.mustBeMade("AddBatch")
	for _, key := range keys {
		f.AddHash(hashing.Sum(key, f.seed))
	}
}

// AddHash inserts the key whose digest (under this filter's seed) is d: it
// sets the k bits of the group needing the fewest new ones, a uniformly
// random one of the tied groups (000 §3.1). A group that already covers
// the key ends the search: no bit changes whichever covering group is
// chosen. It allocates nothing.
func (f *Filter) AddHash(d hashing.Digest) {
	f.mustBeMade("Add")
	f.add(d, false)
}

// add is AddHash; atomic makes it set bits with atomic operations, so that
// concurrent ContainsHash calls are race-free (KeyedFilter).
//
// Each group's probes are walked inline (no buffer of positions to fill
// and zero per key), and the distinct zero positions of the group being
// counted go to one of f.zeroPos' two rows, the best group's staying in the
// other. Setting the best group's bits is setting those zero positions:
// its other bits are already one. A group that already needs more new ones
// than the best so far can be neither chosen nor tied, so its count stops
// there; the tie-breaking draws are those of a full count. The last group
// counted keeps the bits newOnes set if it wins. With one group there is
// nothing to count: its k bits are set.
func (f *Filter) add(d hashing.Digest, atomicSet bool) {
	if f.c == 1 { // one group, no choice and no draw: a standard insert
		if atomicSet {
			f.bits.SetKeyAtomic(f.ix, d)
			atomic.AddUint64(&f.n, 1)
		} else {
			f.bits.SetKey(f.ix, d)
			f.n++
		}
		return
	}
	bestNew, ties := f.k+1, uint64(0)
	cur := 0 // f.zeroPos[cur] is the scratch row, f.zeroPos[cur^1] the best group's
	for g := 0; g < f.c; g++ {
		zs := &f.zeroPos[cur]
		last := g == f.c-1
		var nw int
		if atomicSet {
			nw = f.newOnesShared(GroupDigest(d, g), zs, bestNew)
		} else {
			nw = f.newOnes(GroupDigest(d, g), zs, bestNew)
			if !last { // back to the filter's state for the next group
				f.restore(zs[:nw])
			}
		}
		won := false
		if nw < bestNew {
			bestNew, ties, won = nw, 1, true
			cur ^= 1
			if nw == 0 {
				break
			}
		} else if nw == bestNew {
			ties++
			if f.randBelow(ties) == 0 {
				won = true
				cur ^= 1
			}
		}
		if last && !atomicSet {
			if won { // newOnes has set its bits already
				f.n++
				return
			}
			f.restore(zs[:nw])
		}
	}
	zs := f.zeroPos[cur^1][:bestNew]
	if atomicSet {
		for _, x := range zs {
			f.bits.SetAtomic(x)
		}
		atomic.AddUint64(&f.n, 1)
	} else {
		for _, x := range zs {
			f.bits.Set(x)
		}
		f.n++
	}
}

// restore clears the bits at zs, which newOnes set.
func (f *Filter) restore(zs []uint64) {
	for _, x := range zs {
		f.bits[x>>6] &^= 1 << (x & 63)
	}
}

// newOnes returns the number of distinct positions among the k that f.ix
// gives the group digest gd whose bit is zero, and writes them to zs. It
// sets each zero bit as it finds it, so that a repeated position (two hash
// functions of a group agreeing) reads one and counts once; the caller
// clears zs[:n] again. Once the count exceeds limit it stops and returns
// limit + 1. No branch depends on a bit: the test, a coin flip at half
// fill, is folded into the count, and every position is stored at zs[n],
// kept only if the count moves past it. It writes the bits, so it must
// not run beside readers (newOnesShared does).
func (f *Filter) newOnes(gd hashing.Digest, zs *[hashing.MaxK]uint64, limit int) int {
	v := f.bits
	nz := 0
	if off := f.ix.Offsets(); off != nil {
		p := bitvec.NewProbe(f.ix, gd)
		for _, o := range off {
			x := p.At(o)
			p = p.Next()
			w := &v[x>>6]
			z := ^*w >> (x & 63) & 1 // 1: bit x is zero
			*w |= 1 << (x & 63)
			zs[nz&(hashing.MaxK-1)] = x
			if nz += int(z); nz > limit {
				break
			}
		}
		return nz
	}
	m := f.ix.M() // Independent: the only other scheme a Filter takes
	for i := range f.k {
		x := hashing.Reduce(hashing.IndependentHash(gd, i), m)
		w := &v[x>>6]
		z := ^*w >> (x & 63) & 1
		*w |= 1 << (x & 63)
		zs[nz&(hashing.MaxK-1)] = x
		if nz += int(z); nz > limit {
			break
		}
	}
	return nz
}

// newOnesShared is newOnes for a filter that readers may be reading
// (KeyedFilter): it leaves the bits alone and finds repeated positions
// with a 64-bit signature of the zero positions seen so far, which makes
// the exact check rare.
func (f *Filter) newOnesShared(gd hashing.Digest, zs *[hashing.MaxK]uint64, limit int) int {
	var sig uint64
	nz := 0
	for _, x := range f.ix.Positions(gd, f.pos[:]) {
		if f.bits.Has(x) {
			continue
		}
		h := uint64(1) << ((x ^ x>>6) & 63)
		if sig&h != 0 && containsPos(zs[:nz], x) {
			continue
		}
		sig |= h
		zs[nz&(hashing.MaxK-1)] = x
		if nz++; nz > limit {
			break
		}
	}
	return nz
}

func containsPos(ps []uint64, p uint64) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}

// Contains reports whether key may have been added: false means certainly
// not added.
func (f *Filter) Contains(key []byte) bool { return f.ContainsHash(hashing.Sum(key, f.seed)) }

// ContainsString is Contains for a string key.
func (f *Filter) ContainsString(key string) bool {
	return f.ContainsHash(hashing.SumString(key, f.seed))
}

// ContainsHash is Contains for a pre-hashed key: true when some group
// covers it (the k bits the group gives it are all one). It allocates
// nothing.
func (f *Filter) ContainsHash(d hashing.Digest) bool {
	if f.ix == nil { // the zero Filter: empty
		return false
	}
	for g := 0; g < f.c; g++ {
		if f.bits.HasKey(f.ix, GroupDigest(d, g)) {
			return true
		}
	}
	return false
}

// Ones returns the number of bits set.
func (f *Filter) Ones() uint64 { return f.bits.Ones() }

// FillRatio returns the fraction of bits set (0 for the zero Filter).
func (f *Filter) FillRatio() float64 {
	if f.m == 0 {
		return 0
	}
	return float64(f.Ones()) / float64(f.m)
}

// EstimatedFPR returns the false-positive rate of the current state: the
// probability that one of a random query's c groups lands on k ones. The
// groups' pairs are independent, so it is 1 − (1 − r)^c with r the rate of
// one group, the standard filter's (internal/bitvec.StateFPR, as
// bloom.Filter's): fill^k with the pair floor of the scheme for the N keys
// added, and exactly the fraction of probe sequences through ones for a
// small filter. Without the floor this is 000 §3's 1 − (1 − z^k)^c
// (theory.FPFromFillChoices).
func (f *Filter) EstimatedFPR() float64 {
	if f.ix == nil {
		return 0
	}
	r := bitvec.StateFPR(f.ix, f.bits.OnesIn, f.bits.Has, f.N())
	if f.c == 1 { // a standard filter: bloom.Filter's estimate
		return r
	}
	return -math.Expm1(float64(f.c) * math.Log1p(-r))
}

// ApproxCount estimates the number of keys added online from the fill by
// inverting the differential equation (3.2) (theory.CountFromFillChoices).
// A filter built offline holds more keys than this estimate. It returns
// +Inf when every bit is set.
func (f *Filter) ApproxCount() float64 {
	if f.ix == nil {
		return 0
	}
	return theory.CountFromFillChoices(float64(f.m), f.k, f.c, f.FillRatio())
}

// Clear removes every key (the tie-breaking generator keeps its state). On
// the zero Filter it does nothing (it is empty).
func (f *Filter) Clear() {
	f.bits.Clear()
	f.n = 0
	f.rounds = 0
}

// SetTieSeed restarts the tie-breaking generator from seed, as
// Config.TieSeed does at construction.
func (f *Filter) SetTieSeed(seed uint64) {
	f.mustBeMade("SetTieSeed")
	f.rng = seed
}

// Clone returns an independent copy of f.
func (f *Filter) Clone() *Filter {
	g := *f
	g.bits = f.bits.Clone()
	return &g
}

// compatible reports why f and g cannot be compared or combined.
func (f *Filter) compatible(g *Filter, op string) error {
	if f.c != g.c {
		return fmt.Errorf("choices: %s: c differs (%d vs %d): %w", op, f.c, g.c, ErrIncompatible)
	}
	return bitvec.Compatible("choices", op, f.ix, g.ix, f.seed, g.seed)
}

// Union sets f to the union of f and g: the bitwise OR of their bits, so f
// afterwards reports present every key either did (a key covered by one of
// its groups in g is covered by the same group in f). N adds g's; Rounds
// becomes the smaller of the two (0 if either was built online). It fails,
// changing nothing, unless both have the same m, k, c, scheme and seed.
func (f *Filter) Union(g *Filter) error {
	if f.ix == nil || g.ix == nil {
		return zeroFilter.Err("union")
	}
	if err := f.compatible(g, "union"); err != nil {
		return err
	}
	f.bits.Or(g.bits)
	f.n += g.N()
	f.rounds = min(f.rounds, g.rounds)
	return nil
}

// Equal reports whether f and g have the same parameters (m, k, c, scheme,
// seed) and bits. N, Rounds, Capacity and the generator state are not
// compared. Two zero Filters are equal.
func (f *Filter) Equal(g *Filter) bool {
	return f.compatible(g, "equal") == nil && f.bits.Equal(g.bits)
}
