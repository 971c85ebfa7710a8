// Package countmin implements the Count-Min sketch of Cormode and
// Muthukrishnan with the row hashes of "Less Hashing, Same Performance"
// (paper 001 §1, §7): row i uses g_i(x) = h1(x) + i·h2(x) mod w, two hash
// values per key instead of d. Independent row hashes (hashing.Independent)
// are available for comparison (lab experiment countmin/two-hashes).
//
// A sketch is d rows of w counters. Add(key, c) adds c to the key's counter
// in every row; Estimate(key) returns the smallest of them. With
// w = ⌈e/ε⌉ and d = ⌈ln(1/δ)⌉ (NewWithEstimates), after a stream of total
// count N the estimate â of a key's true count a satisfies
//
//	a ≤ â, and â ≤ a + εN with probability at least 1 − δ
//
// for independent pairwise-independent row hashes; 001 shows that the
// two-hash rows g_i keep the same asymptotic guarantee, which the lab
// measures.
//
// Guarantees: Estimate never underestimates (no false negatives: a key
// added with a positive count always has a positive estimate), for any
// sequence of Add and Merge calls. Counters are 64-bit and saturate at
// 2^64 − 1 instead of wrapping; a saturated counter stays saturated, so a
// saturated estimate is a lower bound on nothing but is never too small.
//
// Conservative update (Config.Conservative; Estan and Varghese): Add raises
// each of the key's counters only as far as the new estimate needs,
// max(counter, estimate + c). Estimates stay upper bounds and are never
// larger than without it; such a sketch only supports additions
// (positive counts) and merging by summation.
//
// False positives: Count-Min is not a membership filter, but it answers
// one: Contains reports whether the estimate is positive, which is true for
// every key added with a positive count, and for a key never added exactly
// when all its d counters were hit by other keys. After n distinct keys
// that probability is about (1 − (1 − 1/w)^n)^d (FPR; the rows as
// independent, as 001 shows the two-hash rows behave asymptotically), plus,
// for the two-hash rows, a floor of about n/(w·s) (s the steps, w/2 or
// w − 1): a key whose (h1, h2) is the query's hits all its d counters
// (FPRScheme, theory.FPRows). EstimatedFPR reads the rate from the state:
// Π over rows of the fraction of nonzero counters with that floor, and for
// a small sketch exactly (the fraction of (h1, h2) pairs whose counters are
// all nonzero).
//
// Sizing: a sketch is sized for its estimates by ε and δ (Dimensions,
// NewWithEstimates: w = ⌈e/ε⌉, d = ⌈ln(1/δ)⌉), or for membership by n and a
// false-positive rate (DimensionsFPR, DimensionsFPRScheme: the smallest w·d
// whose FPRScheme at n keys, floor included, is at most the rate; w prime
// for two-hash rows; a bisection over w, so bounded in time for any rate)
// or by n and bits per key (DimensionsBitsPerKey: w·d = ⌊bits·n/64⌋
// counters, d minimising FPRScheme). The kind "countmin" (bloomlab
// plan and build) takes -eps and -delta, or -fpr or -bits-per-key with -n,
// or -m and -k as w and d. Capacity is the n a sketch was sized for (0 when
// sized by ε and δ or unknown; stored in files). N is the sum of the
// counts.
//
// The zero Sketch is an empty sketch with no room (docs/API.md): Estimate
// and Contains answer 0 and false, N, Bits and EstimatedFPR 0; Merge,
// WriteTo and MarshalBinary return an error wrapping ErrParam; Add and
// SetCapacity panic, naming the constructors, before changing anything.
//
// Cost: Add and Estimate hash the key once (xxh3-128) and touch d counters,
// with no division and no allocation. Memory is w·d 64-bit words.
//
// Profiles: everything above is the bloomlab profile, the default. The
// redisbloom profile (Config.Profile RedisBloom, NewRedisBloom) is bit for
// bit RedisBloom's Count-Min sketch, CMS.* (src/cms.c, the same in
// RedisBloom 2.4.23 and 8.6.2): row i of a key is column MurmurHash2(key,
// i) mod w (hashing.MurmurHash2, the modulo taken with a precomputed
// reciprocal, no division), counters are 32 bits (w·d·4 bytes) and
// saturate at 2^32 − 1, and N, the count, wraps modulo 2^64 as RedisBloom's
// size_t. IncrBy is CMS.INCRBY's answer for one key (the estimate after
// the add, ErrOverflow when that is 2^32 − 1, the add kept as RedisBloom
// keeps it); TryAdd refuses an add that would saturate a counter, changing
// nothing; MergeWeighted is CMS.MERGE with WEIGHTS, negative ones
// included, refusing what RedisBloom refuses ("CMS: MERGE overflow") and
// changing nothing then; RedisDimensions is CMS.INITBYPROB's width and
// depth. Its rows cannot be derived from a Digest: AddHash, EstimateHash
// and ContainsHash panic on it. An estimate is never below min(true count,
// 2^32 − 1) unless a merge had a negative weight; after one it can be. Its
// files use the header's scheme 64 (docs/FORMAT.md), their payload
// RedisBloom's counter array. The kind "countmin" builds it with -profile
// redisbloom (-m and -k as CMS.INITBYDIM's width and depth, -eps and
// -delta as CMS.INITBYPROB's).
//
// Concurrency: Estimate*, Contains*, EstimatedFPR and WriteTo may run
// concurrently; Add*, IncrBy, TryAdd, Merge*, Clear, SetCapacity and
// ReadFrom must not run concurrently with anything.
package countmin

import (
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/bitvec"
	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/theory"
)

// Errors returned by this package wrap these values.
var (
	// ErrParam: a parameter is out of range.
	ErrParam = kind.ErrParam
	// ErrIncompatible: two sketches cannot be merged.
	ErrIncompatible = kind.ErrIncompatible
)

// Limits.
const (
	MaxDepth = hashing.MaxK // rows
	MaxCells = 1 << 36      // w·d counters (512 GiB)
)

// Config describes a sketch.
type Config struct {
	// Width w: counters per row, ≥ 1. Required.
	Width uint64
	// Depth d: rows, 1 … 64 (redisbloom profile: 1 … RedisMaxDepth).
	// Required.
	Depth int
	// Scheme derives the d row positions from the key's digest:
	// hashing.Double (default: g_i = h1 + i·h2 mod w, 001), hashing.Enhanced
	// or hashing.Independent (d independent hashes). The redisbloom
	// profile's rows are its own (MurmurHash2 per row): its Scheme is
	// hashing.RedisBloom, which 0 means there.
	Scheme hashing.Scheme
	// Conservative selects conservative update (bloomlab profile only).
	Conservative bool
	// Seed of the base hash (bloomlab profile only; RedisBloom's rows
	// have fixed seeds, and the redisbloom profile's Seed is 0).
	Seed uint64
	// Profile is Bloomlab (the default, which 0 means) or RedisBloom (bit
	// for bit RedisBloom's CMS.*: MurmurHash2 rows, 32-bit counters; see
	// the package documentation, Profiles).
	Profile Profile
}

// Sketch is a Count-Min sketch. Create one with New, NewWithEstimates or
// NewRedisBloom;
// the zero value is an empty sketch with no room (see the package doc).
type Sketch struct {
	cfg      Config
	ix       *hashing.Indexer
	cells    []uint64 // row i at [i·w, (i+1)·w); redisbloom: 32-bit counters, two a word (get32)
	recip    uint64   // redisbloom: ⌊(2^64 − 1)/w⌋, for hashing.Mod64
	total    uint64   // sum of the counts added (saturating)
	capacity uint64   // keys the sketch was sized for (0: unknown)
}

func normalize(cfg Config) (Config, error) {
	if cfg.Profile == 0 {
		cfg.Profile = Bloomlab
	}
	switch cfg.Profile {
	case RedisBloom:
		return normalizeRedis(cfg)
	case Bloomlab:
	default:
		return cfg, fmt.Errorf("countmin: Profile = %v, want bloomlab or redisbloom: %w", cfg.Profile, ErrParam)
	}
	if cfg.Scheme == 0 {
		cfg.Scheme = hashing.Double
	}
	switch {
	case cfg.Width < 1 || cfg.Width > MaxCells:
		return cfg, fmt.Errorf("countmin: Width = %d out of range [1, 2^36]: %w", cfg.Width, ErrParam)
	case cfg.Depth < 1 || cfg.Depth > MaxDepth:
		return cfg, fmt.Errorf("countmin: Depth = %d out of range [1, %d]: %w", cfg.Depth, MaxDepth, ErrParam)
	case cfg.Width*uint64(cfg.Depth) > MaxCells:
		return cfg, fmt.Errorf("countmin: Width·Depth = %d exceeds 2^36: %w", cfg.Width*uint64(cfg.Depth), ErrParam)
	case cfg.Scheme != hashing.Double && cfg.Scheme != hashing.Enhanced && cfg.Scheme != hashing.Independent:
		return cfg, fmt.Errorf("countmin: Scheme = %v, want double, enhanced or independent (or Profile: RedisBloom): %w", cfg.Scheme, ErrParam)
	}
	return cfg, nil
}

// normalizeRedis checks a redisbloom-profile configuration.
func normalizeRedis(cfg Config) (Config, error) {
	if cfg.Scheme == 0 {
		cfg.Scheme = hashing.RedisBloom
	}
	switch {
	case cfg.Scheme != hashing.RedisBloom || cfg.Conservative || cfg.Seed != 0:
		return cfg, fmt.Errorf("countmin: the redisbloom profile hashes its rows with MurmurHash2 and fixed seeds and updates every row (Scheme must be 0 or redisbloom, Seed 0, Conservative false; got %v, %d, %v): %w",
			cfg.Scheme, cfg.Seed, cfg.Conservative, ErrParam)
	case cfg.Width < 1 || cfg.Width > MaxCells:
		return cfg, fmt.Errorf("countmin: Width = %d out of range [1, 2^36]: %w", cfg.Width, ErrParam)
	case cfg.Depth < 1 || uint64(cfg.Depth) > RedisMaxDepth:
		return cfg, fmt.Errorf("countmin: Depth = %d out of range [1, 2^32 − 1]: %w", cfg.Depth, ErrParam)
	case cfg.Width*uint64(cfg.Depth) > MaxCells: // both ≤ 2^36: no overflow
		return cfg, fmt.Errorf("countmin: Width·Depth = %d exceeds 2^36: %w", cfg.Width*uint64(cfg.Depth), ErrParam)
	}
	return cfg, nil
}

// New returns an empty sketch.
func New(cfg Config) (*Sketch, error) {
	cfg, err := normalize(cfg)
	if err != nil {
		return nil, err
	}
	return build(cfg, nil)
}

func build(cfg Config, cells []uint64) (*Sketch, error) {
	if cfg.Profile == RedisBloom {
		if cells == nil {
			cells = make([]uint64, redisWords(cfg.Width*uint64(cfg.Depth)))
		}
		return &Sketch{cfg: cfg, cells: cells, recip: math.MaxUint64 / cfg.Width}, nil
	}
	ix, err := hashing.NewIndexer(cfg.Scheme, cfg.Width, cfg.Depth)
	if err != nil {
		return nil, fmt.Errorf("countmin: %w: %w", err, ErrParam)
	}
	if cells == nil {
		cells = make([]uint64, cfg.Width*uint64(cfg.Depth))
	}
	return &Sketch{cfg: cfg, ix: ix, cells: cells}, nil
}

// Dimensions returns w = ⌈e/ε⌉ and d = ⌈ln(1/δ)⌉, the Count-Min sizes for
// error εN with probability 1 − δ. eps and delta must be in (0, 1).
func Dimensions(eps, delta float64) (w uint64, d int, err error) {
	if !(eps > 0 && eps < 1) {
		return 0, 0, fmt.Errorf("countmin: eps = %v out of range (0, 1): %w", eps, ErrParam)
	}
	if !(delta > 0 && delta < 1) {
		return 0, 0, fmt.Errorf("countmin: delta = %v out of range (0, 1): %w", delta, ErrParam)
	}
	wf := math.Ceil(math.E / eps)
	d = int(math.Ceil(-math.Log(delta))) // −ln δ ≤ 745: finite for every δ > 0
	if wf > MaxCells || d > MaxDepth {
		return 0, 0, fmt.Errorf("countmin: eps = %v, delta = %v need w = %v, d = %d, beyond the limits: %w", eps, delta, wf, d, ErrParam)
	}
	return uint64(wf), max(d, 1), nil
}

// NewWithEstimates returns a sketch with w = ⌈e/ε⌉ and d = ⌈ln(1/δ)⌉
// (Dimensions); cfg supplies Scheme, Conservative and Seed (its Width and
// Depth are ignored).
func NewWithEstimates(eps, delta float64, cfg Config) (*Sketch, error) {
	w, d, err := Dimensions(eps, delta)
	if err != nil {
		return nil, err
	}
	cfg.Width, cfg.Depth = w, d
	return New(cfg)
}

// Config returns the sketch's configuration.
func (s *Sketch) Config() Config { return s.cfg }

// Width returns w.
func (s *Sketch) Width() uint64 { return s.cfg.Width }

// Depth returns d.
func (s *Sketch) Depth() int { return s.cfg.Depth }

// N returns the sum of all counts added (saturating at 2^64 − 1): the N of
// the εN error bound.
func (s *Sketch) N() uint64 { return s.total }

// Capacity returns the number of keys the sketch was sized for (0: unknown,
// or sized by ε and δ); informational, stored in files.
func (s *Sketch) Capacity() uint64 { return s.capacity }

// SetCapacity records the number of keys the sketch was sized for. It
// panics on the zero Sketch.
func (s *Sketch) SetCapacity(n uint64) {
	s.mustBeMade("SetCapacity")
	s.capacity = n
}

// errZero is the error of a method that needs a sketch made by New.
func errZero(method string) error {
	return fmt.Errorf("countmin: %s on the zero Sketch, which has no counters; create one with New, NewWithEstimates or NewRedisBloom: %w", method, ErrParam)
}

// mustBeMade panics, naming the constructors, if s is the zero Sketch.
func (s *Sketch) mustBeMade(method string) {
	if s.zero() {
		panic(errZero(method).Error())
	}
}

// zero reports whether s is the zero Sketch (made by no constructor).
func (s *Sketch) zero() bool { return s.cfg.Width == 0 }

// mustBeBloomlab panics if s is a redisbloom-profile sketch, whose rows
// do not come from a Digest.
func (s *Sketch) mustBeBloomlab(method string) {
	if s.cfg.Profile == RedisBloom {
		panic("countmin: " + method + " takes a bloomlab digest, but this redisbloom-profile sketch hashes each row of the key itself (MurmurHash2): call it with the key (Add, Estimate, Contains)")
	}
}

// Kind returns "countmin".
func (s *Sketch) Kind() string { return "countmin" }

// Seed returns the base hash seed.
func (s *Sketch) Seed() uint64 { return s.cfg.Seed }

// Bits returns the size of the counters in bits: 64·w·d, or for the
// redisbloom profile 32·w·d rounded up to a multiple of 64 (its counters
// are held two to a word).
func (s *Sketch) Bits() uint64 { return 64 * uint64(len(s.cells)) }

// Digest hashes key with the sketch's seed, for AddHash and EstimateHash
// (bloomlab profile).
func (s *Sketch) Digest(key []byte) hashing.Digest { return hashing.Sum(key, s.cfg.Seed) }

func satAdd(a, b uint64) uint64 {
	x, carry := bits.Add64(a, b, 0)
	if carry != 0 {
		return math.MaxUint64
	}
	return x
}

// Add adds count to key. Counters saturate at the largest value they hold
// (bloomlab: 2^64 − 1; redisbloom: 2^32 − 1, and N wraps modulo 2^64, as
// RedisBloom's CMS.INCRBY does); TryAdd refuses an add that would saturate
// one, IncrBy reports one. It panics on the zero Sketch.
func (s *Sketch) Add(key []byte, count uint64) {
	if s.cfg.Profile == RedisBloom {
		redisAdd(s, key, count)
		return
	}
	s.AddHash(hashing.Sum(key, s.cfg.Seed), count)
}

// AddString is Add for a string key.
func (s *Sketch) AddString(key string, count uint64) {
	if s.cfg.Profile == RedisBloom {
		redisAdd(s, key, count)
		return
	}
	s.AddHash(hashing.SumString(key, s.cfg.Seed), count)
}

// AddHash adds count to the key with digest d (bloomlab profile). It
// panics on the zero Sketch and on a redisbloom-profile sketch, whose rows
// are not derived from a digest.
func (s *Sketch) AddHash(d hashing.Digest, count uint64) {
	if s.ix == nil {
		s.mustBeMade("Add")
		s.mustBeBloomlab("AddHash")
	}
	s.total = satAdd(s.total, count)
	switch {
	case !s.cfg.Conservative:
		s.update(d, count, false)
	case s.cfg.Depth <= smallDepth:
		// One walk: the counters' indices kept for the second pass.
		var js [smallDepth]uint64
		s.cellsSmall(d, &js)
		c := s.cells
		est := uint64(math.MaxUint64)
		for _, j := range js[:s.cfg.Depth] {
			est = min(est, c[j])
		}
		v := satAdd(est, count)
		for _, j := range js[:s.cfg.Depth] {
			c[j] = max(c[j], v)
		}
	default:
		s.update(d, satAdd(s.EstimateHash(d), count), true)
	}
}

// smallDepth is the most rows whose counter indices a conservative update
// keeps on the stack (64 bytes to zero, where MaxDepth would take 512).
const smallDepth = 8

// cellsSmall writes the index in s.cells of the key's counter in each row
// to js[:d], d ≤ smallDepth, walking the rows as update does.
func (s *Sketch) cellsSmall(d hashing.Digest, js *[smallDepth]uint64) {
	w := s.cfg.Width
	row := uint64(0)
	if off := s.ix.Offsets(); off != nil {
		p := bitvec.NewProbe(s.ix, d)
		for i, o := range off {
			js[i&(smallDepth-1)] = row + p.At(o)
			p = p.Next()
			row += w
		}
		return
	}
	for i := range s.cfg.Depth {
		js[i&(smallDepth-1)] = row + hashing.Reduce(hashing.IndependentHash(d, i), w)
		row += w
	}
}

// update adds v to each of the key's d counters (saturating) or, with
// raise, lifts each to at least v. The row positions are computed inline
// as hashing.Indexer.Positions computes them, without its buffer: a
// [MaxDepth]uint64 is 512 bytes to zero per call, more than the work at
// d = 5.
func (s *Sketch) update(d hashing.Digest, v uint64, raise bool) {
	w, c := s.cfg.Width, s.cells
	row := uint64(0)
	if off := s.ix.Offsets(); off != nil { // Double, Enhanced
		p := bitvec.NewProbe(s.ix, d)
		for _, o := range off {
			j := row + p.At(o)
			p = p.Next()
			row += w
			if raise {
				c[j] = max(c[j], v)
			} else {
				c[j] = satAdd(c[j], v)
			}
		}
		return
	}
	for i := range s.cfg.Depth { // Independent
		j := row + hashing.Reduce(hashing.IndependentHash(d, i), w)
		row += w
		if raise {
			c[j] = max(c[j], v)
		} else {
			c[j] = satAdd(c[j], v)
		}
	}
}

// Estimate returns the smallest of key's d counters: never less than the
// key's true count, or than the largest value a counter holds (2^64 − 1,
// redisbloom 2^32 − 1) where a counter saturated, unless a merge with a
// negative weight (MergeWeighted) took counts away.
func (s *Sketch) Estimate(key []byte) uint64 {
	if s.cfg.Profile == RedisBloom {
		return redisEstimate(s, key, false)
	}
	return s.EstimateHash(hashing.Sum(key, s.cfg.Seed))
}

// EstimateString is Estimate for a string key.
func (s *Sketch) EstimateString(key string) uint64 {
	if s.cfg.Profile == RedisBloom {
		return redisEstimate(s, key, false)
	}
	return s.EstimateHash(hashing.SumString(key, s.cfg.Seed))
}

// EstimateHash is Estimate for a pre-hashed key (bloomlab profile; it
// panics on a redisbloom-profile sketch).
func (s *Sketch) EstimateHash(d hashing.Digest) uint64 {
	if s.ix == nil {
		s.mustBeBloomlab("EstimateHash")
		return 0 // the zero Sketch: empty
	}
	w, c := s.cfg.Width, s.cells
	est := uint64(math.MaxUint64)
	row := uint64(0)
	if off := s.ix.Offsets(); off != nil { // as update walks the rows
		p := bitvec.NewProbe(s.ix, d)
		for _, o := range off {
			est = min(est, c[row+p.At(o)])
			p = p.Next()
			row += w
		}
		return est
	}
	for i := range s.cfg.Depth {
		est = min(est, c[row+hashing.Reduce(hashing.IndependentHash(d, i), w)])
		row += w
	}
	return est
}

// Contains reports whether key's estimate is positive: true for every key
// added with a positive count (the bloomlab.Filter interface).
func (s *Sketch) Contains(key []byte) bool { return s.Estimate(key) > 0 }

// ContainsString is Contains for a string key.
func (s *Sketch) ContainsString(key string) bool { return s.EstimateString(key) > 0 }

// ContainsHash is Contains for a pre-hashed key.
func (s *Sketch) ContainsHash(d hashing.Digest) bool { return s.EstimateHash(d) > 0 }

// Merge adds t's counters to s's, so that s sketches both streams. It fails,
// changing nothing, unless both have the same profile, width, depth,
// scheme, update rule and seed (ErrIncompatible) and were made by New
// (ErrParam). s keeps its capacity. Bloomlab-profile counters saturate;
// redisbloom-profile sketches merge as RedisBloom's CMS.MERGE s 2 s t
// does (MergeWeighted): a counter sum above 2^32 − 1 is refused, changing
// nothing, with an error wrapping ErrOverflow.
func (s *Sketch) Merge(t *Sketch) error {
	if s.zero() || t.zero() {
		return errZero("Merge")
	}
	a, b := s.cfg, t.cfg
	switch {
	case a.Profile != b.Profile:
		return fmt.Errorf("countmin: merge: profile differs (%v vs %v): %w", a.Profile, b.Profile, ErrIncompatible)
	case a.Width != b.Width:
		return fmt.Errorf("countmin: merge: width differs (%d vs %d): %w", a.Width, b.Width, ErrIncompatible)
	case a.Depth != b.Depth:
		return fmt.Errorf("countmin: merge: depth differs (%d vs %d): %w", a.Depth, b.Depth, ErrIncompatible)
	case a.Scheme != b.Scheme:
		return fmt.Errorf("countmin: merge: scheme differs (%v vs %v): %w", a.Scheme, b.Scheme, ErrIncompatible)
	case a.Conservative != b.Conservative:
		return fmt.Errorf("countmin: merge: conservative update differs (%v vs %v): %w", a.Conservative, b.Conservative, ErrIncompatible)
	case a.Seed != b.Seed:
		return fmt.Errorf("countmin: merge: seed differs (%d vs %d): %w", a.Seed, b.Seed, ErrIncompatible)
	}
	if a.Profile == RedisBloom {
		return s.redisMerge(t, 1)
	}
	for i, x := range t.cells {
		s.cells[i] = satAdd(s.cells[i], x)
	}
	s.total = satAdd(s.total, t.total)
	return nil
}

// MergeScaled adds w times t's counters to s's (RedisBloom's CMS.MERGE
// with WEIGHTS), saturating at 2^64 − 1 as Add does. The sketches must be
// compatible as for Merge; on error s is unchanged. A weight of 0 changes
// nothing. Redisbloom-profile sketches merge as CMS.MERGE s 2 s t WEIGHTS
// 1 w (MergeWeighted): a counter sum above 2^32 − 1, or a w above 2^63 −
// 1, is refused with an error wrapping ErrOverflow.
func (s *Sketch) MergeScaled(t *Sketch, w uint64) error {
	if w == 1 {
		return s.Merge(t)
	}
	if s.zero() || t.zero() {
		return errZero("MergeScaled")
	}
	if s.cfg != t.cfg {
		return s.Merge(t) // the same checks and messages; s is not changed
	}
	if s.cfg.Profile == RedisBloom {
		return s.redisMerge(t, w)
	}
	for i, x := range t.cells {
		s.cells[i] = satAdd(s.cells[i], satMul(x, w))
	}
	s.total = satAdd(s.total, satMul(t.total, w))
	return nil
}

func satMul(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	if hi != 0 {
		return math.MaxUint64
	}
	return lo
}

// Clear sets every counter and the total to zero; the capacity stays.
func (s *Sketch) Clear() {
	clear(s.cells)
	s.total = 0
}

// Clone returns an independent copy of s.
func (s *Sketch) Clone() *Sketch {
	g := *s
	g.cells = slices.Clone(s.cells)
	return &g
}

// Equal reports whether s and t have the same configuration, total and
// counters (their capacities, informational, may differ).
func (s *Sketch) Equal(t *Sketch) bool {
	return s.cfg == t.cfg && s.total == t.total && slices.Equal(s.cells, t.cells)
}

// EstimatedFPR returns the probability, given the state, that Contains
// answers true for a key never added: that its d counters are all nonzero.
// That is Π over rows of (nonzero counters in the row)/w for independent
// rows; two-hash rows add the pair floor for N keys (the probability that
// the query's (h1, h2) is an added key's, which the counters cannot show;
// theory.FPRowsPairs), and for a small sketch the rate is exact: the
// fraction of (h1, h2) pairs whose d counters are all nonzero, counted by
// walking the rows from the nonzero counters of the first two.
func (s *Sketch) EstimatedFPR() float64 {
	if s.zero() {
		return 0
	}
	if s.cfg.Profile == RedisBloom {
		return s.redisFPR()
	}
	w := s.cfg.Width
	p := 1.0
	var nz [MaxDepth]uint64
	i := 0
	for row := range slices.Chunk(s.cells, int(w)) {
		for _, x := range row {
			if x != 0 {
				nz[i]++
			}
		}
		p *= float64(nz[i]) / float64(w)
		i++
	}
	if s.cfg.Scheme == hashing.Independent || s.cfg.Depth < 2 {
		return p
	}
	if nz[0]*nz[1] <= maxExactPairs {
		return s.exactFPR()
	}
	// The keys the floor counts: the distinct keys, estimated from the
	// fullest row (each key takes one counter per row), at most N.
	keys := 0.0
	for _, z := range nz[:s.cfg.Depth] {
		keys = max(keys, -float64(w)*math.Log1p(-float64(z)/float64(w)))
	}
	keys = min(keys, float64(s.total))
	return theory.FPRowsPairs(s.cfg.Scheme, w, s.cfg.Depth, keys, p)
}

// maxExactPairs bounds the candidate pairs exactFPR tries.
const maxExactPairs = 1 << 22

// exactFPR returns the fraction of the (start, step) pairs of the rows'
// double hashing (w starts, hashing.DoubleSteps(w) steps) whose d
// counters are all nonzero. Row i holds x + i·b + f(i) mod w; a pair is
// fixed by its counters in rows 0 and 1, so it tries the nonzero counters
// of those two rows against each other.
func (s *Sketch) exactFPR() float64 {
	w, d, c := s.cfg.Width, s.cfg.Depth, s.cells
	off := s.ix.Offsets()
	var first, second []uint64
	for x := range w {
		if c[x] != 0 {
			first = append(first, x)
		}
		if c[w+x] != 0 {
			second = append(second, x)
		}
	}
	var hits uint64
	for _, x := range first {
		for _, y := range second {
			b := (y + 2*w - x - off[1]%w) % w // probe 1 is x + b + f(1)
			if b == 0 || (w&1 == 0 && b&1 == 0) {
				continue // not a step the rows draw
			}
			all := true
			for i := 2; i < d && all; i++ {
				all = c[uint64(i)*w+(x+uint64(i)*b+off[i])%w] != 0
			}
			if all {
				hits++
			}
		}
	}
	return float64(hits) / (float64(w) * float64(hashing.DoubleSteps(w)))
}
