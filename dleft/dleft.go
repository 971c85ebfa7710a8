// Package dleft implements the d-left Bloom filter with dynamic bit
// reassignment of 002 §II (Bonomi, Mitzenmacher, Panigrahy, Singh,
// Varghese, "Bloom Filters via d-Left Hashing and Dynamic Bit
// Reassignment"): a hash table of fingerprints split into d subtables
// (default 3) of buckets of 64 or 128 bits, each bucket a counter field and
// a fingerprint field whose bits are shared by the fingerprints it holds.
//
// Insert (002 §II-A): a key has one bucket in every subtable and a 64-bit
// fingerprint hash h. Unless the filter already answers yes for the key,
// the key's fingerprint goes to the least loaded of its d buckets, the
// leftmost on a tie ("always go left"). A bucket holding a fingerprints
// gives each the top f(a) bits of its h, f(a) = ⌊F/a⌋ for F fingerprint
// bits (60 of a 64-bit bucket, 120 of a 128-bit one); an insert shrinks
// (truncates) every fingerprint already there.
//
// Semi-sorting (002 §II-B, Semisort): the counter field also records how
// many fingerprints begin with each 1- or 2-bit prefix, and the bucket
// keeps them sorted by prefix, so the prefix need not be stored: the same
// bits hold fingerprints 1 or 2 bits longer. The encodings are 002's:
// 64-bit buckets semi-sort at loads 4 and 5 only (f = ⌊60/a⌋ + 1 there,
// loads up to 6); 128-bit buckets semi-sort on one bit at every load up to
// 21, or on two bits at loads 6 and 7 and one bit at loads up to 10
// (f(6) = 22, f(7) = 19). docs/FORMAT.md lists every counter value.
//
// Grouping (002 §II-C, Config.Group): g buckets of a subtable share their
// fingerprint bits: with A fingerprints in the group each has ⌊g·F/A⌋
// stored bits (plus its bucket's semi-sorting bits).
//
// Lookup: the query's fingerprint, truncated as each bucket's state says,
// is compared with the fingerprints of its d buckets: exactly d buckets are
// read (d words for 64-bit buckets), plus a small stash when it is not
// empty.
//
// Guarantee: no false negatives, for any sequence of calls. Fingerprints
// are only ever truncated, never replaced, so a stored key keeps matching
// (the lengths are non-increasing along every insertion; see the
// f(a, A) rule in layout.go). When none of a key's d buckets can take one
// more fingerprint (the counter cannot express the load, or the
// fingerprints would drop below Config.MinFingerprintBits), its full 64-bit
// fingerprint goes to a stash, checked on every lookup while non-empty and
// counted by Overflows. With Config.StashLimit > 0 a full stash makes Add
// return an error wrapping ErrFull and change nothing. A key is never
// dropped.
//
// False positives: formula (1) of 002, F = Σ_i Σ_a Q_ia · a · 2^{−f(a)},
// Q_ia being the fraction of subtable i's buckets with load a
// (theory.LoadsDleft gives its fluid limit, theory.FPDleft the sum);
// EstimatedFPR evaluates it exactly on the filter's own buckets. At 16 bits
// per key (64-bit buckets, average load 4) it is 0.0004477 against the
// standard filter's 0.0004587; with groups of four, 0.0003520; with 128-bit
// buckets at 20 bits per key, 0.00002243 against 0.00006713.
//
// Offline balancing (002 §II-D): Build inserts a batch and then re-places
// every key, in order, a given number of rounds (002: 10), which evens the
// loads and lowers the rate.
//
// Sizing: PlanFPR and PlanBitsPerKey choose the bucket size and the
// average load for n keys from formula (1) over the fluid-limit loads
// (PredictFPR), without allocating; NewWithEstimates and NewWithBitsPerKey
// build what they plan and record n as the Capacity (stored in files). The
// kind "dleft" (bloomlab plan and build, options -bucket-bits,
// -stash-limit, -rounds) uses them. The zero Filter is an empty filter
// with no room (docs/API.md): reads answer as for an empty filter, Add and
// WriteTo return an error wrapping ErrParam, SetCapacity panics.
//
// Cost: Add and Contains hash the key once (xxh3-128) and derive the d
// bucket indices and the fingerprint from the digest with multiply-shift
// (no division); Contains reads d buckets and allocates nothing. Memory is
// d · buckets · bucket bits, plus 64 bits per stashed key (Bits); only the
// stash grows, and SetMaxBits bounds it (kind.MemoryBudgeter: bloomlab
// build and add set the memory the process may use).
//
// Concurrency: any number of goroutines may call the read methods
// (Contains*, EstimatedFPR, Loads, WriteTo, …) at once. Add*, Clear,
// SetCapacity and ReadFrom (and UnmarshalBinary) must not run concurrently
// with anything else on the same filter.
package dleft

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"math/bits"
	"slices"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/kind"
)

// Errors returned by this package wrap these values.
var (
	// ErrParam: a parameter is out of range.
	ErrParam = kind.ErrParam
	// ErrFull: the stash is full (Config.StashLimit) and none of the key's
	// buckets can take its fingerprint.
	ErrFull = errors.New("dleft: filter full")
)

// Semisort selects the semi-sorting form (002 §II-B).
type Semisort int8

// Semi-sorting forms.
const (
	// SemisortAuto is 002's best form for the bucket size: Semisort1 for
	// 64-bit buckets, Semisort2 for 128-bit ones.
	SemisortAuto Semisort = 0
	// SemisortNone stores every fingerprint bit.
	SemisortNone Semisort = 1
	// Semisort1 keeps the 0-count: one implicit bit per fingerprint.
	Semisort1 Semisort = 2
	// Semisort2 keeps the counts of the prefixes 00, 01, 10, 11: two
	// implicit bits (128-bit buckets only).
	Semisort2 Semisort = 3
)

// PrefixBits returns the number of semi-sorted prefix bits (0, 1 or 2).
func (s Semisort) PrefixBits() int { return max(0, int(s)-1) }

// SemisortFromBits maps 0, 1, 2 prefix bits to SemisortNone, Semisort1,
// Semisort2.
func SemisortFromBits(p int) (Semisort, error) {
	if p < 0 || p > 2 {
		return 0, fmt.Errorf("dleft: semisort = %d out of range [0, 2]: %w", p, ErrParam)
	}
	return Semisort(p + 1), nil
}

// Config describes a filter. Zero fields take their defaults.
type Config struct {
	// D is the number of subtables, [1, 8]; default 3 (002 finds three
	// best).
	D int
	// BucketBits is 64 (a 4-bit counter and 60 fingerprint bits) or 128
	// (8 and 120); default 64.
	BucketBits int
	// Buckets is the number of buckets per subtable, ≥ 1 and a multiple of
	// Group; the filter holds about D·Buckets·(average load) keys. Required.
	Buckets uint64
	// Semisort is the semi-sorting form; default SemisortAuto.
	Semisort Semisort
	// Group is the number of buckets of a subtable that share their bits
	// (002 §II-C): 1, 2, 4 or 8 with Group·BucketBits ≤ 512; default 1.
	Group int
	// MinFingerprintBits is the shortest fingerprint a bucket may hold: a
	// bucket whose fingerprints would get shorter counts as full. [4, 32];
	// default 8.
	MinFingerprintBits int
	// StashLimit bounds the stash of overflowing keys: 0 (default) means
	// no bound, so Add never fails; with a bound, Add returns ErrFull once
	// it is reached.
	StashLimit int
	// Seed is the seed of the base hash (xxh3-128).
	Seed uint64
}

// MaxBuckets bounds Config.Buckets · D: 2^40 buckets (16 TiB of 128-bit
// buckets).
const MaxBuckets = 1 << 40

func (c Config) withDefaults() Config {
	if c.D == 0 {
		c.D = 3
	}
	if c.BucketBits == 0 {
		c.BucketBits = 64
	}
	if c.Semisort == SemisortAuto {
		c.Semisort = Semisort1
		if c.BucketBits == 128 {
			c.Semisort = Semisort2
		}
	}
	if c.Group == 0 {
		c.Group = 1
	}
	if c.MinFingerprintBits == 0 {
		c.MinFingerprintBits = 8
	}
	return c
}

// Validate returns an error naming the first invalid field of c (after
// defaults), or nil.
func (c Config) Validate() error {
	c = c.withDefaults()
	switch {
	case c.D < 1 || c.D > 8:
		return fmt.Errorf("dleft: D = %d out of range [1, 8]: %w", c.D, ErrParam)
	case c.BucketBits != 64 && c.BucketBits != 128:
		return fmt.Errorf("dleft: BucketBits = %d, want 64 or 128: %w", c.BucketBits, ErrParam)
	case c.Semisort < SemisortNone || c.Semisort > Semisort2:
		return fmt.Errorf("dleft: Semisort = %d out of range [0, 3]: %w", int(c.Semisort), ErrParam)
	case c.Semisort == Semisort2 && c.BucketBits != 128:
		return fmt.Errorf("dleft: Semisort = 2-bit needs BucketBits = 128 (a 4-bit counter cannot hold the prefix counts): %w", ErrParam)
	case c.Group != 1 && c.Group != 2 && c.Group != 4 && c.Group != 8 || c.Group*c.BucketBits > 512:
		return fmt.Errorf("dleft: Group = %d, want 1, 2, 4 or 8 with Group·BucketBits ≤ 512: %w", c.Group, ErrParam)
	case c.MinFingerprintBits < 4 || c.MinFingerprintBits > 32:
		return fmt.Errorf("dleft: MinFingerprintBits = %d out of range [4, 32]: %w", c.MinFingerprintBits, ErrParam)
	case c.Buckets < 1 || c.Buckets > MaxBuckets/uint64(c.D):
		return fmt.Errorf("dleft: Buckets = %d out of range [1, 2^40/D]: %w", c.Buckets, ErrParam)
	case c.Buckets%uint64(c.Group) != 0:
		return fmt.Errorf("dleft: Buckets = %d must be a multiple of Group = %d: %w", c.Buckets, c.Group, ErrParam)
	case c.StashLimit < 0:
		return fmt.Errorf("dleft: StashLimit = %d, want ≥ 0: %w", c.StashLimit, ErrParam)
	}
	return nil
}

// Filter is a d-left Bloom filter. Create one with New, NewWithEstimates,
// NewWithBitsPerKey or Build. The zero value is an empty filter with no
// room (docs/API.md): its read methods answer as for an empty filter, Add
// and WriteTo return an error wrapping ErrParam.
type Filter struct {
	cfg      Config
	words    []uint64 // subtable i, group g: words[(i·groups + g)·wpg …]
	groups   uint64   // groups per subtable
	wpg      int      // words per group: Group · BucketBits / 64
	cbits    uint     // counter bits per bucket
	cmask    uint64
	gshift   uint // log2(Group)
	fprBits  int  // fingerprint bits per bucket (F)
	states   []state
	index    map[stateKey]uint16
	first    []uint16 // first[a]: the counter value of load a's first state
	maxLoad  int
	fb       [][]int // fb[a][A]: fingerprint length, -1 if not allowed
	fast     bool    // 64-bit buckets, Group 1: single-word lookup
	f64      [16]fast64
	f128     []fast128 // 128-bit buckets, Group 1: by load (nil otherwise)
	stash    map[uint64]struct{}
	n        uint64 // Add calls (repeats included) and Build keys
	stored   uint64 // fingerprints in buckets
	capacity uint64
	maxBits  uint64      // memory budget (SetMaxBits; 0: none)
	scratch  [8][]uint64 // Add: fingerprints of a group, per bucket
}

// New returns an empty filter for cfg.
func New(cfg Config) (*Filter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	f := &Filter{cfg: cfg}
	f.init()
	f.words = make([]uint64, uint64(cfg.D)*f.groups*uint64(f.wpg))
	return f, nil
}

// init sets the derived fields of a validated configuration.
func (f *Filter) init() {
	c := f.cfg
	f.groups = c.Buckets / uint64(c.Group)
	f.wpg = c.Group * c.BucketBits / 64
	f.cbits = uint(c.BucketBits / 16)
	f.cmask = 1<<f.cbits - 1
	f.gshift = log2(c.Group)
	f.fprBits = c.BucketBits - int(f.cbits)
	f.states, f.index, f.maxLoad = buildStates(c.BucketBits, c.Semisort)
	f.first = firstStates(f.states, f.maxLoad)
	// A bucket cannot hold more fingerprints than fit at MinFingerprintBits
	// with all of its group's bits.
	lim := c.Group * f.fprBits / max(1, c.MinFingerprintBits-2)
	if f.maxLoad > lim {
		f.maxLoad = lim
		for i := range f.states {
			if f.states[i].valid && int(f.states[i].load) > lim {
				f.states[i] = state{}
			}
		}
	}
	f.fb = fpTable(c.BucketBits, c.Group, c.MinFingerprintBits, f.states, f.maxLoad)
	f.fast = c.BucketBits == 64 && c.Group == 1
	if f.fast {
		f.f64 = buildFast64(f.states, f.fb)
	}
	if c.BucketBits == 128 && c.Group == 1 {
		f.f128 = buildFast128(f.states, f.fb, f.maxLoad)
	}
	for j := 0; j < c.Group; j++ {
		f.scratch[j] = make([]uint64, 0, f.maxLoad+1)
	}
}

// Config returns the filter's configuration, defaults filled in.
func (f *Filter) Config() Config { return f.cfg }

// D returns the number of subtables.
func (f *Filter) D() int { return f.cfg.D }

// Buckets returns the number of buckets per subtable.
func (f *Filter) Buckets() uint64 { return f.cfg.Buckets }

// Seed returns the base hash seed.
func (f *Filter) Seed() uint64 { return f.cfg.Seed }

// MaxLoad returns the largest number of fingerprints a bucket can hold.
func (f *Filter) MaxLoad() int { return f.maxLoad }

// Bits returns the memory of the filter's state in bits: the table,
// D · Buckets · BucketBits, and 64 bits per stashed key (Overflows), as
// the file stores them.
func (f *Filter) Bits() uint64 { return uint64(len(f.words)+len(f.stash)) * 64 }

// N returns the number of keys offered: Add calls (repeats included) and
// the keys given to Build.
func (f *Filter) N() uint64 { return f.n }

// Stored returns the number of fingerprints held in buckets. It is below N
// by the keys that were already reported present when added (repeats,
// and keys whose fingerprint matched), and by Overflows.
func (f *Filter) Stored() uint64 { return f.stored }

// Overflows returns the number of keys held in the stash because none of
// their buckets could take them.
func (f *Filter) Overflows() int { return len(f.stash) }

// Capacity returns the number of keys the filter was designed for (0:
// unknown); informational, stored in files.
func (f *Filter) Capacity() uint64 { return f.capacity }

// SetCapacity records the number of keys the filter was designed for. It
// panics on the zero Filter.
func (f *Filter) SetCapacity(n uint64) {
	if f.words == nil {
		panic(errZero("SetCapacity").Error())
	}
	f.capacity = n
}

// errZero is the error of a mutator called on the zero Filter.
func errZero(method string) error {
	return fmt.Errorf("dleft: %s on the zero Filter, which has no room; create one with New, NewWithEstimates, NewWithBitsPerKey or Build: %w", method, ErrParam)
}

// Kind returns "dleft".
func (f *Filter) Kind() string { return "dleft" }

// FingerprintBits returns the length of every fingerprint in a bucket of
// load a without grouping (the group holding A = a), or -1 if a bucket
// cannot hold a fingerprints. With grouping see FingerprintBitsGrouped.
func (f *Filter) FingerprintBits(a int) int { return f.FingerprintBitsGrouped(a, a) }

// FingerprintBitsGrouped returns the length of every fingerprint in a
// bucket of load a whose group holds A fingerprints, or -1 if impossible.
func (f *Filter) FingerprintBitsGrouped(a, A int) int {
	if a < 0 || a > f.maxLoad || a >= len(f.fb) || A < a || A >= len(f.fb[a]) {
		return -1
	}
	return f.fb[a][A]
}

// fpIndex is the mix index of the fingerprint hash (bucket indices use
// 0 … D−1).
const fpIndex = 15

// mix derives the i-th 64-bit hash of a digest: the 128-bit product
// (H1 ⊕ c ⊕ 0xA0761D6478BD642F)·(H2 ⊕ c ⊕ 0xE7037ED1A0B428DB), c =
// (i+1)·0x9E3779B97F4A7C15, folded by XOR of its halves (docs/FORMAT.md).
func mix(d hashing.Digest, i int) uint64 {
	c := uint64(i+1) * 0x9E3779B97F4A7C15
	hi, lo := bits.Mul64(d.H1^c^0xA0761D6478BD642F, d.H2^c^0xE7037ED1A0B428DB)
	return hi ^ lo
}

// Fingerprint returns the 64-bit fingerprint hash of a digest; a bucket
// stores its top f bits.
func Fingerprint(d hashing.Digest) uint64 { return mix(d, fpIndex) }

// BucketIndex returns the key's bucket in subtable i of a filter with the
// given number of buckets per subtable: hashing.Reduce(mix(d, i), buckets).
func BucketIndex(d hashing.Digest, i int, buckets uint64) uint64 {
	return hashing.Reduce(mix(d, i), buckets)
}

// Digest hashes key with the filter's seed.
func (f *Filter) Digest(key []byte) hashing.Digest { return hashing.Sum(key, f.cfg.Seed) }

// Contains reports whether key may have been added: false means certainly
// not added.
func (f *Filter) Contains(key []byte) bool { return f.ContainsHash(hashing.Sum(key, f.cfg.Seed)) }

// ContainsString is Contains for a string key.
func (f *Filter) ContainsString(key string) bool {
	return f.ContainsHash(hashing.SumString(key, f.cfg.Seed))
}

// ContainsHash is Contains for a pre-hashed key.
func (f *Filter) ContainsHash(d hashing.Digest) bool {
	var cand [8]uint64
	if !f.fast { // contains64 computes each bucket as it goes
		f.bucketsOf(d, &cand)
	}
	return f.lookup(d, &cand, mix(d, fpIndex))
}

// bucketsOf writes the key's bucket in each subtable i to cand[i], i < D.
func (f *Filter) bucketsOf(d hashing.Digest, cand *[8]uint64) {
	B := f.cfg.Buckets
	for i := 0; i < f.cfg.D; i++ {
		cand[i] = hashing.Reduce(mix(d, i), B)
	}
}

// lookup reports whether the fingerprint h of digest d matches in its
// buckets or in the stash. cand holds the buckets (bucketsOf) unless f.fast.
func (f *Filter) lookup(d hashing.Digest, cand *[8]uint64, h uint64) bool {
	switch {
	case f.fast:
		if f.contains64(d, h) {
			return true
		}
	case f.f128 != nil:
		if f.contains128(cand, h) {
			return true
		}
	default:
		if f.containsGroup(cand, h) {
			return true
		}
	}
	if len(f.stash) != 0 {
		_, ok := f.stash[h]
		return ok
	}
	return false
}

// contains64 is the lookup for 64-bit buckets without grouping: per bucket
// one word, one table entry and a SWAR comparison of all fingerprints of
// the query's prefix at once (a field is zero after XOR with the
// broadcast query iff it matches).
func (f *Filter) contains64(d hashing.Digest, h uint64) bool {
	B := f.cfg.Buckets
	words := f.words
	base := uint64(0)
	for i := 0; i < f.cfg.D; i++ {
		w := words[base+hashing.Reduce(mix(d, i), B)]
		base += B
		e := &f.f64[w&15]
		pre := h >> (64 - uint(e.pre)) & 3
		x := (w >> 4) ^ ((h<<e.pre)>>e.shift)*e.ones
		if ^(((x&^e.hi)+e.low)|x)&e.rng[pre] != 0 {
			return true
		}
	}
	return false
}

// contains128 is the lookup for 128-bit buckets without grouping: the
// bucket's 120 fingerprint bits as one 128-bit value, compared with the
// broadcast query in all fields at once as contains64 does (the field sum
// carried from the low word to the high one), restricted to the slots of
// the query's prefix. The first words of the d buckets are loaded before
// any is examined, so that their cache misses overlap.
func (f *Filter) contains128(cand *[8]uint64, h uint64) bool {
	B := f.cfg.Buckets
	words := f.words
	var at, w0s [8]uint64
	for i := 0; i < f.cfg.D; i++ {
		at[i] = (uint64(i)*B + cand[i]) * 2
		w0s[i] = words[at[i]]
	}
	for i := 0; i < f.cfg.D; i++ {
		w0 := w0s[i]
		s := &f.states[w0&0xff]
		if s.load == 0 {
			continue
		}
		e := &f.f128[s.load]
		w1 := words[at[i]+1]
		lo, hi := w0>>8|w1<<56, w1>>8 // the fingerprint field, slot k at bit k·w
		p := uint(e.pre)
		pre := h >> (64 - p) & 3
		q := (h << p) >> e.shift
		qhi, qlo := bits.Mul64(q, e.ones[0])
		xlo, xhi := lo^qlo, hi^(qhi+q*e.ones[1])
		slo, carry := bits.Add64(xlo&^e.hi[0], e.low[0], 0)
		shi, _ := bits.Add64(xhi&^e.hi[1], e.low[1], carry)
		// The top bit of slot k is set in z iff slot k equals the query.
		zlo, zhi := ^(slo|xlo)&e.hi[0], ^(shi|xhi)&e.hi[1]
		// Slots start[pre] … start[pre+1] − 1 hold the query's prefix.
		from, to := uint(s.start[pre])*uint(e.w), uint(s.start[pre+1])*uint(e.w)
		tlo, thi := lowBits128(to)
		flo, fhi := lowBits128(from)
		if zlo&(tlo&^flo)|zhi&(thi&^fhi) != 0 {
			return true
		}
	}
	return false
}

// lowBits128 returns the 128-bit mask of bits 0 … n − 1 (n ≤ 128) as its
// low and high words.
func lowBits128(n uint) (lo, hi uint64) {
	return ^uint64(0) >> (64 - min(n, 64)), ^uint64(0) >> (128 - max(n, 64))
}

// containsGroup is the general lookup (128-bit buckets, grouping). The
// first word of every group, which holds its counters, is loaded before
// any group is examined, so that their cache misses overlap.
func (f *Filter) containsGroup(cand *[8]uint64, h uint64) bool {
	gm := uint64(f.cfg.Group - 1)
	wpg := uint64(f.wpg)
	var at, w0 [8]uint64
	for i := 0; i < f.cfg.D; i++ {
		at[i] = (uint64(i)*f.groups + cand[i]>>f.gshift) * wpg
		w0[i] = f.words[at[i]]
	}
	for i := 0; i < f.cfg.D; i++ {
		if f.matchInGroup(f.words[at[i]:at[i]+wpg], w0[i], int(cand[i]&gm), h) {
			return true
		}
	}
	return false
}

// groupTotal returns the loads' sum of the group whose counters are in w0.
func (f *Filter) groupTotal(w0 uint64) int {
	A := 0
	for k := 0; k < f.cfg.Group; k++ {
		A += int(f.states[(w0>>(uint(k)*f.cbits))&f.cmask].load)
	}
	return A
}

// matchInGroup reports whether fingerprint h matches in bucket j of the
// group ws, whose first word is w0.
func (f *Filter) matchInGroup(ws []uint64, w0 uint64, j int, h uint64) bool {
	A := f.groupTotal(w0)
	off := uint(f.cfg.Group) * f.cbits
	for k := 0; k < j; k++ {
		s := &f.states[(w0>>(uint(k)*f.cbits))&f.cmask]
		if s.load != 0 {
			off += uint(s.load) * uint(f.fb[s.load][A]-int(s.pre))
		}
	}
	s := &f.states[(w0>>(uint(j)*f.cbits))&f.cmask]
	if s.load == 0 {
		return false
	}
	fl := f.fb[s.load][A]
	p := uint(s.pre)
	w := uint(fl) - p
	pre := h >> (64 - p) & 3
	q := (h << p) >> (64 - w)
	for k := uint(s.start[pre]); k < uint(s.start[pre+1]); k++ {
		if getBits(ws, off+k*w, w) == q {
			return true
		}
	}
	return false
}

// Add inserts key. It returns an error (wrapping ErrFull, changing
// nothing) only if a StashLimit is set and reached; the key is then not in
// the filter.
func (f *Filter) Add(key []byte) error { return f.AddHash(hashing.Sum(key, f.cfg.Seed)) }

// AddString is Add for a string key.
func (f *Filter) AddString(key string) error {
	return f.AddHash(hashing.SumString(key, f.cfg.Seed))
}

// AddHash is Add for a pre-hashed key.
func (f *Filter) AddHash(d hashing.Digest) error {
	if f.words == nil {
		return errZero("Add")
	}
	h := mix(d, fpIndex)
	var cand [8]uint64
	f.bucketsOf(d, &cand)
	if f.lookup(d, &cand, h) { // already reported present: nothing to store
		f.n++
		return nil
	}
	// Least loaded first, leftmost on ties; a bucket that cannot take the
	// fingerprint (grouping can make a less loaded bucket full) yields to
	// the next.
	tried := 0
	for tried < f.cfg.D {
		best, bestLoad := -1, 1<<30
		for i := 0; i < f.cfg.D; i++ {
			if tried&(1<<i) != 0 {
				continue
			}
			if l := f.load(i, cand[i]); l < bestLoad {
				best, bestLoad = i, l
			}
		}
		if best < 0 {
			break
		}
		if f.insertAt(best, cand[best], h) {
			f.n++
			f.stored++
			return nil
		}
		tried |= 1 << best
		if f.cfg.Group == 1 {
			break // the least loaded bucket is full: so are the others
		}
	}
	if f.cfg.StashLimit > 0 && len(f.stash) >= f.cfg.StashLimit {
		return fmt.Errorf("dleft: all %d buckets of the key are full and the stash holds its limit of %d keys: %w", f.cfg.D, f.cfg.StashLimit, ErrFull)
	}
	if f.maxBits > 0 && f.Bits() > f.maxBits-min(f.maxBits, 64) {
		return fmt.Errorf("dleft: all %d buckets of the key are full, and stashing it would bring the filter to %d bits, beyond its memory budget of %d bits: %w",
			f.cfg.D, f.Bits()+64, f.maxBits, ErrFull)
	}
	if f.stash == nil {
		f.stash = map[uint64]struct{}{}
	}
	f.stash[h] = struct{}{}
	f.n++
	return nil
}

// SetMaxBits sets the filter's memory budget in bits
// (kind.MemoryBudgeter; 0: none, the default): from then on an Add that
// would stash a key bringing Bits past it fails with an error wrapping
// ErrFull and changes nothing. Only the stash grows, by 64 bits per key
// none of whose buckets has room. Not stored in files. On the zero Filter
// it does nothing.
func (f *Filter) SetMaxBits(bits uint64) {
	if f.words != nil {
		f.maxBits = bits
	}
}

// MaxBits returns the memory budget set by SetMaxBits (0: none).
func (f *Filter) MaxBits() uint64 { return f.maxBits }

// groupWords returns the words of the group holding bucket b of subtable i
// and b's index in it.
func (f *Filter) groupWords(i int, b uint64) ([]uint64, int) {
	g := uint64(i)*f.groups + b>>f.gshift
	return f.words[g*uint64(f.wpg) : (g+1)*uint64(f.wpg)], int(b & uint64(f.cfg.Group-1))
}

// load returns the number of fingerprints in bucket b of subtable i.
func (f *Filter) load(i int, b uint64) int {
	ws, j := f.groupWords(i, b)
	return int(f.states[(ws[0]>>(uint(j)*f.cbits))&f.cmask].load)
}

// insertAt adds fingerprint h to bucket b of subtable i, truncating and
// re-encoding its group, and reports whether it fit.
func (f *Filter) insertAt(i int, b uint64, h uint64) bool {
	ws, j := f.groupWords(i, b)
	G := f.cfg.Group
	w0 := ws[0]
	A := f.groupTotal(w0)
	var loads [8]int
	for k := 0; k < G; k++ {
		loads[k] = int(f.states[(w0>>(uint(k)*f.cbits))&f.cmask].load)
	}
	if loads[j]+1 > f.maxLoad || f.fb[loads[j]+1][A+1] < 0 {
		return false
	}
	for k := 0; k < G; k++ {
		if k != j && loads[k] > 0 && f.fb[loads[k]][A+1] < 0 {
			return false
		}
	}
	f.decodeGroup(ws, A)
	f.scratch[j] = append(f.scratch[j], h)
	f.encodeGroup(ws, A+1)
	return true
}

// decodeGroup fills f.scratch[k] with bucket k's fingerprints, each
// left-aligned in a uint64 (its top f bits, the rest zero).
func (f *Filter) decodeGroup(ws []uint64, A int) {
	w0 := ws[0]
	off := uint(f.cfg.Group) * f.cbits
	for k := 0; k < f.cfg.Group; k++ {
		s := &f.states[(w0>>(uint(k)*f.cbits))&f.cmask]
		out := f.scratch[k][:0]
		if s.load != 0 {
			p := uint(s.pre)
			w := uint(f.fb[s.load][A]) - p
			for v := uint(0); v < 1<<p; v++ {
				for x := s.start[v]; x < s.start[v+1]; x++ {
					st := getBits(ws, off, w)
					off += w
					fp := st << (64 - p - w)
					if p > 0 {
						fp |= uint64(v) << (64 - p)
					}
					out = append(out, fp)
				}
			}
		}
		f.scratch[k] = out
	}
}

// encodeGroup writes f.scratch into ws as a group of A fingerprints in
// all: each truncated to its new length and semi-sorted by prefix (a
// stable order, so fingerprints keep their relative order within a
// prefix: fingerprint i of prefix v goes to slot Σ_{u<v} cnt[u] + i).
func (f *Filter) encodeGroup(ws []uint64, A int) {
	clear(ws)
	off := uint(f.cfg.Group) * f.cbits
	for k := 0; k < f.cfg.Group; k++ {
		fps := f.scratch[k]
		a := len(fps)
		p := uint(0)
		var cnt [4]uint8
		if a > 0 {
			// the mode of load a: any valid state of that load says it
			p = uint(f.modeOf(a))
			w := uint(f.fb[a][A]) - p
			if p == 0 {
				cnt[0] = uint8(a)
				for _, fp := range fps {
					putBits(ws, off, w, fp>>(64-w))
					off += w
				}
			} else {
				for _, fp := range fps {
					cnt[fp>>(64-p)]++
				}
				var slot [4]uint // the next slot of each prefix
				for v := 1; v < 4; v++ {
					slot[v] = slot[v-1] + uint(cnt[v-1])
				}
				for _, fp := range fps {
					v := fp >> (64 - p)
					putBits(ws, off+slot[v]*w, w, (fp<<p)>>(64-w))
					slot[v]++
				}
				off += uint(a) * w
			}
		}
		si := f.stateOf(a, p, cnt)
		ws[0] |= uint64(si) << (uint(k) * f.cbits)
	}
}

// stateOf returns the counter value of a bucket of load a, p prefix bits
// and prefix counts cnt: f.index's entry, computed without the map lookup
// where the order of buildStates makes that simple (one state per load
// without semi-sorting; the 0-count in order with one prefix bit).
func (f *Filter) stateOf(a int, p uint, cnt [4]uint8) uint16 {
	switch p {
	case 0:
		return f.first[a]
	case 1:
		return f.first[a] + uint16(cnt[0])
	}
	return f.index[stateKey{uint8(a), cnt}]
}

// modeOf returns the prefix bits of load a.
func (f *Filter) modeOf(a int) int {
	return modeFor(f.cfg.BucketBits, f.cfg.Semisort, a)
}

// Loads returns, per subtable, how many buckets hold each load:
// counts[i][a] for a = 0 … MaxLoad.
func (f *Filter) Loads() [][]uint64 {
	out := make([][]uint64, f.cfg.D)
	for i := range out {
		out[i] = make([]uint64, f.maxLoad+1)
		for g := uint64(0); g < f.groups; g++ {
			w0 := f.words[(uint64(i)*f.groups+g)*uint64(f.wpg)]
			for k := 0; k < f.cfg.Group; k++ {
				out[i][f.states[(w0>>(uint(k)*f.cbits))&f.cmask].load]++
			}
		}
	}
	return out
}

// EstimatedFPR returns the false-positive rate of the filter's exact
// state: formula (1) of 002 evaluated on its buckets, Σ over subtables of
// the mean over buckets of a · 2^{−f} (a fingerprints of f bits), plus
// 2^{−64} per stashed key. Like formula (1) it ignores repeated
// fingerprints within a bucket, so it is a (very slight) overestimate.
func (f *Filter) EstimatedFPR() float64 {
	total := 0.0
	for i := 0; i < f.cfg.D; i++ {
		sum := 0.0
		for g := uint64(0); g < f.groups; g++ {
			w0 := f.words[(uint64(i)*f.groups+g)*uint64(f.wpg)]
			A := f.groupTotal(w0)
			for k := 0; k < f.cfg.Group; k++ {
				a := int(f.states[(w0>>(uint(k)*f.cbits))&f.cmask].load)
				if a > 0 {
					sum += float64(a) * math.Ldexp(1, -f.fb[a][A])
				}
			}
		}
		total += sum / float64(f.cfg.Buckets)
	}
	return total + float64(len(f.stash))*math.Ldexp(1, -64)
}

// Clear empties the filter, keeping its configuration and capacity.
func (f *Filter) Clear() {
	clear(f.words)
	f.stash = nil
	f.n, f.stored = 0, 0
}

// Clone returns an independent copy of f.
func (f *Filter) Clone() *Filter {
	if f.words == nil {
		return &Filter{}
	}
	g := &Filter{cfg: f.cfg, n: f.n, stored: f.stored, capacity: f.capacity, maxBits: f.maxBits}
	g.init()
	g.words = slices.Clone(f.words)
	if f.stash != nil {
		g.stash = make(map[uint64]struct{}, len(f.stash))
		for h := range f.stash {
			g.stash[h] = struct{}{}
		}
	}
	return g
}

// Equal reports whether f and g have the same configuration, buckets and
// stash.
func (f *Filter) Equal(g *Filter) bool {
	if f.cfg != g.cfg || !slices.Equal(f.words, g.words) || len(f.stash) != len(g.stash) {
		return false
	}
	for h := range f.stash {
		if _, ok := g.stash[h]; !ok {
			return false
		}
	}
	return true
}

// stashSorted returns the stash in increasing order.
func (f *Filter) stashSorted() []uint64 { return slices.Sorted(maps.Keys(f.stash)) }
