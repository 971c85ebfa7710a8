// Package counting implements the counting Bloom filter of Fan et al. as
// described in 000 §2.1 and 004 §9 ("Counting Bloom filters"): every
// position of a standard Bloom filter (package bloom) is a small counter
// instead of a bit, so keys can be removed as well as added. Positions come
// from package hashing with any of its index schemes (001), exactly as in
// package bloom, so a counting filter and a standard filter with the same m,
// k, scheme and seed probe the same positions for a key.
//
// Add increments the key's k counters, Remove decrements them and Contains
// reports whether all of them are nonzero. A position that occurs several
// times among a key's k positions is incremented (and decremented) as many
// times. Setting every nonzero counter to one gives the standard filter of
// the same keys (000 §2.1; ToBloom).
//
// Counters are w bits wide, w ∈ {2, 4, 8, 16, 32} (WithCounterBits; 4 by
// default, which 000 §2.1 notes suffices for most applications), packed 64/w
// to a 64-bit word.
//
// Saturation: a counter that reaches its maximum 2^w − 1 is saturated. It
// stays there for ever: Add does not increment it, Remove does not
// decrement it. Saturated reports how many there are. Saturation therefore
// never causes a false negative; its cost is that the saturated counters
// can no longer return to zero, so the false-positive rate after removals
// may stay higher than that of a filter holding only the remaining keys.
// Every counter that is not saturated holds the exact number of times its
// position was probed by the keys currently in the filter.
//
// Guarantee: no false negatives under any sequence of Add and Remove calls
// in which every removed key is currently in the filter (added more times
// than removed). Removing a key that was never added is the one thing that
// can cause a false negative (it decrements other keys' counters); Remove
// refuses, changing nothing, whenever the counters prove the key absent
// (some counter is zero, or smaller than the number of times the key probes
// it), but cannot detect a false positive.
//
// False positives: Contains answers exactly as the standard filter built
// from the same keys, so after n distinct keys in m counters with k hash
// functions a key that was never added is reported present with probability
// close to (1 − (1 − 1/m)^{kn})^k (theory.FPExact) plus the pair floor of
// the two-hash schemes (about n/(m·s): a query whose (h1, h2) is an
// inserted key's; theory.FPScheme, package bloom), the fraction of nonzero
// counters to the power k, with the floor, given the filter's state
// (EstimatedFPR). Removing
// keys lowers the rate to that of the keys that remain (as long as no
// counter saturated).
//
// Cost: Add, Remove, Contains and Count hash the key once (xxh3-128) and
// touch k counters, O(k); they allocate nothing and do no division and no
// interface call per probe. For the double-hashing schemes the probe
// sequence (internal/bitvec.Probe, shared with bloom and choices) is run
// over m·w bit addresses, so each counter is one shift and one mask away
// from its probe. Contains tests the counters four at a time with one
// branch per four, stopping after the first four that hold a zero counter;
// Count stops at the first zero counter. Memory is ⌈m·w/64⌉ words: w times
// a standard filter's.
//
// Concurrency: any number of goroutines may call the read methods
// (Contains*, Count*, FillRatio, ApproxCount, EstimatedFPR, ToBloom,
// Clone, Equal, WriteTo, …) at once. Add*, Remove*, Merge, Clear,
// SetCapacity and ReadFrom must not run concurrently with anything else.
//
// The zero Filter is an empty filter with no room (docs/API.md): its read
// methods answer as for an empty filter (CounterBits 0), WriteTo,
// MarshalBinary, Remove* and Merge return an error wrapping ErrParam, and
// Add* and SetCapacity panic, changing nothing.
package counting

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/bloomlab/bloomlab/bloom"
	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/bitvec"
	"github.com/bloomlab/bloomlab/internal/kind"
)

// Errors returned by this package wrap these values.
var (
	// ErrParam: a parameter is out of range.
	ErrParam = kind.ErrParam
	// ErrIncompatible: two filters cannot be combined.
	ErrIncompatible = kind.ErrIncompatible
	// ErrNotPresent: Remove was asked to remove a key the filter proves
	// absent.
	ErrNotPresent = fmt.Errorf("counting: %w", kind.ErrNotPresent)
)

// DefaultCounterBits is the counter width used unless WithCounterBits says
// otherwise.
const DefaultCounterBits = 4

// Filter is a counting Bloom filter. Create one with New or
// NewWithEstimates; the zero value is an empty filter with no room (see the
// package doc).
type Filter struct {
	words  bitvec.Vec // the counters, packed 64/w to a word
	m      uint64
	k      int
	seed   uint64
	scheme hashing.Scheme
	ix     *hashing.Indexer
	n      uint64 // Add calls minus successful Remove calls
	sat    uint64 // counters equal to lay.max
	// capacity is the number of keys the filter was sized for (0:
	// unknown); informational, stored in files.
	capacity uint64
	lay      layout
	// For the double-hashing schemes: the Indexer's offsets times w and
	// the reciprocal of m·w, so that the probe sequence yields each
	// counter's bit address directly (bitvec.Probe.Scale).
	offw   []uint64
	recipw uint64
}

// newFilterOf returns the filter over the given counter words.
func newFilterOf(words bitvec.Vec, ix *hashing.Indexer, seed uint64, lay layout) *Filter {
	f := &Filter{words: words, m: ix.M(), k: ix.K(), seed: seed, scheme: ix.Scheme(), ix: ix, lay: lay}
	f.offw, f.recipw = bitvec.ScaledOffsets(ix, lay.w)
	return f
}

// layout locates counter p: it occupies bits p·w … p·w + w − 1 of the
// counter array, that is bits (p·w) mod 64 … of word (p·w)/64 (w divides
// 64, so a counter never straddles two words). One multiplication, a shift
// and a mask: no division, and only one variable shift (the extraction).
type layout struct {
	w    uint64 // counter width in bits
	logw uint   // log2(w)
	max  uint64 // 2^w − 1: the saturated value and the field mask
}

func newLayout(w int) layout {
	return layout{w: uint64(w), logw: uint(bits.TrailingZeros(uint(w))), max: 1<<uint(w) - 1}
}

// width returns w (0 for the zero Filter's layout).
func (l layout) width() int { return int(l.w) }

// nwords returns the number of words holding m counters: ⌈m·w/64⌉.
func (l layout) nwords(m uint64) uint64 { return (m<<l.logw + 63) >> 6 }

// at returns the word index and bit offset of counter p.
func (l layout) at(p uint64) (i uint64, o uint) {
	b := p * l.w
	return b >> 6, uint(b & 63)
}

// get returns counter p of w.
func (l layout) get(w []uint64, p uint64) uint64 { return l.field(w, p*l.w) }

// field returns the counter of w at bit address b.
func (l layout) field(w []uint64, b uint64) uint64 { return w[b>>6] >> (b & 63) & l.max }

// lows returns the word with the lowest bit of every counter set.
func (l layout) lows() uint64 { return ^uint64(0) / l.max }

// nonzero returns x's nonzero counters as the lowest bit of each field.
func (l layout) nonzero(x uint64) uint64 {
	for s := uint64(1); s < l.w; s <<= 1 {
		x |= x >> s
	}
	return x & l.lows()
}

// full returns x's saturated counters as the lowest bit of each field.
func (l layout) full(x uint64) uint64 {
	for s := uint64(1); s < l.w; s <<= 1 {
		x &= x >> s
	}
	return x & l.lows()
}

// inc increments the counter of w at bit address b unless it is
// saturated; it returns 1 if the counter became saturated, else 0.
func inc(w []uint64, l layout, b uint64) uint64 {
	i, o := b>>6, b&63
	c := w[i] >> o & l.max
	if c == l.max {
		return 0
	}
	w[i] += 1 << o
	if c+1 == l.max {
		return 1
	}
	return 0
}

// zero returns 1 if the counter of w at bit address b is 0, else 0,
// without a branch: for a counter c < 2^63, c − 1 has its top bit set
// exactly when c = 0.
func (l layout) zero(w []uint64, b uint64) uint64 { return (l.field(w, b) - 1) >> 63 }

// Option configures a filter at construction.
type Option func(*options)

type options struct {
	scheme    hashing.Scheme
	seed      uint64
	indexFunc hashing.IndexFunc
	bits      int
}

// WithScheme selects the index scheme (default hashing.DefaultScheme).
func WithScheme(s hashing.Scheme) Option { return func(o *options) { o.scheme = s } }

// WithSeed sets the seed of the base hash (default 0). Filters combine only
// if their seeds agree.
func WithSeed(seed uint64) Option { return func(o *options) { o.seed = seed } }

// WithCounterBits sets the counter width w in bits: 2, 4, 8, 16 or 32
// (default 4). A counter saturates at 2^w − 1.
func WithCounterBits(w int) Option { return func(o *options) { o.bits = w } }

// WithIndexFunc makes the filter use fn for its positions (scheme Custom).
// Such a filter cannot be serialized or converted with ToBloom.
func WithIndexFunc(fn hashing.IndexFunc) Option {
	return func(o *options) { o.scheme = hashing.Custom; o.indexFunc = fn }
}

// New returns an empty filter of at least m counters with k hash functions.
// m must be in [1, 2^48] and k in [1, 64]. Partitioned schemes round m up to
// a multiple of k (Partition, PartitionIndependent) or to k times a prime
// (PrimePartition); M reports the size used.
func New(m uint64, k int, opts ...Option) (*Filter, error) {
	return newFilter(m, k, opts)
}

// NewWithEstimates returns a filter sized for n keys at false-positive rate
// fpr: the smallest m for which some k ≤ 64 gives a rate of at most fpr,
// the scheme's pair floor included, and that k (theory.SizeScheme, as
// bloom.NewWithEstimates). Each of the m positions is a counter of the
// configured width.
func NewWithEstimates(n uint64, fpr float64, opts ...Option) (*Filter, error) {
	o := options{scheme: hashing.DefaultScheme}
	for _, opt := range opts {
		opt(&o)
	}
	m, k, err := bitvec.SizeForRate("counting", o.scheme, n, fpr)
	if err != nil {
		return nil, err
	}
	f, err := newFilter(m, k, opts)
	if err != nil {
		return nil, err
	}
	f.capacity = n
	return f, nil
}

// Capacity returns the number of keys the filter was designed for: the n
// given to NewWithEstimates, the value set by SetCapacity, or 0 if unknown.
// It is informational and stored in files.
func (f *Filter) Capacity() uint64 { return f.capacity }

// SetCapacity records the number of keys the filter was designed for.
func (f *Filter) SetCapacity(n uint64) {
	f.mustBeMade("SetCapacity")
	f.capacity = n
}

// Bits returns the memory of the counters in bits: m·w.
func (f *Filter) Bits() uint64 { return f.m * f.lay.w }

// mustBeMade panics, before anything changes, when f is the zero Filter:
// one predictable branch on the mutators that have no error result.
func (f *Filter) mustBeMade(method string) {
	if f.ix == nil {
		zero.Panic(method)
	}
}

// zero is the zero-value rule's description of Filter.
var zero = bitvec.Zero{Pkg: "counting", Type: "Filter", Ctors: "New or NewWithEstimates"}

// checkBits validates a counter width.
func checkBits(w int) error {
	switch w {
	case 2, 4, 8, 16, 32:
		return nil
	}
	return fmt.Errorf("counting: counter bits = %d, want one of 2, 4, 8, 16, 32: %w", w, ErrParam)
}

func newFilter(m uint64, k int, opts []Option) (*Filter, error) {
	o := options{scheme: hashing.DefaultScheme, bits: DefaultCounterBits}
	for _, opt := range opts {
		opt(&o)
	}
	if err := checkBits(o.bits); err != nil {
		return nil, err
	}
	ix, err := bitvec.NewIndexer("counting", o.scheme, m, k, o.indexFunc)
	if err != nil {
		return nil, err
	}
	m = ix.M()
	lay := newLayout(o.bits)
	if m<<lay.logw > hashing.MaxM || lay.nwords(m) > math.MaxInt/8 {
		return nil, fmt.Errorf("counting: m = %d counters of %d bits exceed %s: %w", m, o.bits, memLimit(), ErrParam)
	}
	return newFilterOf(make(bitvec.Vec, lay.nwords(m)), ix, o.seed, lay), nil
}

// M returns the number of counters.
func (f *Filter) M() uint64 { return f.m }

// K returns the number of hash functions (positions per key).
func (f *Filter) K() int { return f.k }

// Seed returns the base hash seed.
func (f *Filter) Seed() uint64 { return f.seed }

// Scheme returns the index scheme.
func (f *Filter) Scheme() hashing.Scheme { return f.scheme }

// CounterBits returns the counter width w in bits.
func (f *Filter) CounterBits() int { return f.lay.width() }

// CounterMax returns 2^w − 1, the value at which a counter saturates.
func (f *Filter) CounterMax() uint64 { return f.lay.max }

// N returns the number of Add calls minus the number of successful Remove
// calls (Merge adds the other filter's N).
func (f *Filter) N() uint64 { return f.n }

// Saturated returns the number of saturated counters: counters that
// reached 2^w − 1 and will never change again (until Clear).
func (f *Filter) Saturated() uint64 { return f.sat }

// Kind returns "counting".
func (f *Filter) Kind() string { return "counting" }

// Digest hashes key with the filter's seed: the pre-hashed form accepted by
// AddHash, RemoveHash, ContainsHash and CountHash.
func (f *Filter) Digest(key []byte) hashing.Digest { return hashing.Sum(key, f.seed) }

// Add inserts key: it increments the key's k counters, except saturated ones.
func (f *Filter) Add(key []byte) { f.AddHash(hashing.Sum(key, f.seed)) }

// AddString is Add for a string key.
func (f *Filter) AddString(key string) { f.AddHash(hashing.SumString(key, f.seed)) }

// AddHash inserts the key whose digest (under this filter's seed) is d.
func (f *Filter) AddHash(d hashing.Digest) {
	f.mustBeMade("Add")
	off := f.offw
	if off == nil { // not double hashing
		f.addPositions(d)
		return
	}
	w, l := f.words, f.lay
	var sat uint64
	p := bitvec.NewProbe(f.ix, d).Scale(l.w, f.recipw)
	for _, o := range off {
		sat += inc(w, l, p.At(o))
		p = p.Next()
	}
	f.sat += sat
	f.n++
}

// addPositions is AddHash for the schemes that are not double hashing.
//
//go:noinline
func (f *Filter) addPositions(d hashing.Digest) {
	var buf [hashing.MaxK]uint64
	w, l := f.words, f.lay
	var sat uint64
	for _, x := range f.ix.Positions(d, buf[:]) {
		sat += inc(w, l, x*l.w)
	}
	f.sat += sat
	f.n++
}

// AddBatch inserts every key in keys.
func (f *Filter) AddBatch(keys [][]byte) {
	f.mustBeMade("AddBatch")
	for _, key := range keys {
		f.AddHash(hashing.Sum(key, f.seed))
	}
}

// Remove deletes one occurrence of key: it decrements the key's k counters,
// except saturated ones. If the counters prove that key is not in the filter
// (one of them is zero, or smaller than the number of times the key's
// positions list it) Remove changes nothing and returns an error wrapping
// ErrNotPresent.
//
// Remove must only be given keys that were added (and not yet removed as
// often): removing a false positive decrements counters that belong to other
// keys and can make them false negatives.
func (f *Filter) Remove(key []byte) error { return f.RemoveHash(hashing.Sum(key, f.seed)) }

// RemoveString is Remove for a string key.
func (f *Filter) RemoveString(key string) error {
	return f.RemoveHash(hashing.SumString(key, f.seed))
}

// RemoveHash is Remove for a pre-hashed key.
func (f *Filter) RemoveHash(d hashing.Digest) error {
	if f.ix == nil {
		return zero.Err("Remove")
	}
	var buf [hashing.MaxK]uint64
	ps := f.ix.Positions(d, buf[:])
	w, l := f.words, f.lay
	for j, p := range ps {
		i, o := l.at(p)
		switch c := w[i] >> o & l.max; c {
		case l.max: // saturated: stays
		case 0:
			// Absent, or listed more often than its count: undo the
			// decrements made so far. None of them touched a saturated
			// counter, and each undone counter ends below max again.
			for _, q := range ps[:j] {
				i, o := l.at(q)
				if w[i]>>o&l.max != l.max {
					w[i] += 1 << o
				}
			}
			return ErrNotPresent
		default:
			w[i] -= 1 << o
		}
	}
	if f.n > 0 {
		f.n--
	}
	return nil
}

// Contains reports whether key may be in the filter: false means certainly
// not (never added, or removed as often as added).
func (f *Filter) Contains(key []byte) bool { return f.ContainsHash(hashing.Sum(key, f.seed)) }

// ContainsString is Contains for a string key.
func (f *Filter) ContainsString(key string) bool {
	return f.ContainsHash(hashing.SumString(key, f.seed))
}

// ContainsHash is Contains for a pre-hashed key.
//
// For the double-hashing schemes the probe sequence yields each counter's
// bit address (bitvec.Probe.Scale: no multiplication per probe), the
// counter is one shift and one mask away, and its zero-ness becomes a bit
// without a branch ((c − 1) >> 63). The probes go four at a time with one
// test per four: a present key costs no branch per probe, an absent key
// stops after the first four that hold a zero counter.
func (f *Filter) ContainsHash(d hashing.Digest) bool {
	off := f.offw
	if off == nil {
		return f.containsPositions(d)
	}
	w, l := f.words, f.lay
	p := bitvec.NewProbe(f.ix, d).Scale(l.w, f.recipw)
	for len(off) >= 4 {
		p1 := p.Next()
		p2 := p1.Next()
		p3 := p2.Next()
		if l.zero(w, p.At(off[0]))|l.zero(w, p1.At(off[1]))|l.zero(w, p2.At(off[2]))|l.zero(w, p3.At(off[3])) != 0 {
			return false
		}
		p = p3.Next()
		off = off[4:]
	}
	// The last k mod 4 probes, straight-line.
	switch len(off) {
	case 3:
		p1 := p.Next()
		return l.zero(w, p.At(off[0]))|l.zero(w, p1.At(off[1]))|l.zero(w, p1.Next().At(off[2])) == 0
	case 2:
		return l.zero(w, p.At(off[0]))|l.zero(w, p.Next().At(off[1])) == 0
	case 1:
		return l.zero(w, p.At(off[0])) == 0
	}
	return true
}

// containsPositions is ContainsHash for the schemes that are not double
// hashing.
//
//go:noinline
func (f *Filter) containsPositions(d hashing.Digest) bool {
	if f.ix == nil { // the zero Filter: empty
		return false
	}
	var buf [hashing.MaxK]uint64
	w, l := f.words, f.lay
	for _, x := range f.ix.Positions(d, buf[:]) {
		if l.get(w, x) == 0 {
			return false
		}
	}
	return true
}

// ContainsBatch answers Contains for every key. It reuses out's storage when
// its capacity allows (then it allocates nothing) and returns
// out[:len(keys)].
func (f *Filter) ContainsBatch(keys [][]byte, out []bool) []bool {
	if cap(out) < len(keys) {
		out = make([]bool, len(keys))
	}
	out = out[:len(keys)]
	// Hash a group of keys before touching the counters, so the group's
	// memory accesses are not separated by hashing work.
	const batch = 16
	var ds [batch]hashing.Digest
	for start := 0; start < len(keys); start += batch {
		group := keys[start:min(start+batch, len(keys))]
		for j, key := range group {
			ds[j] = hashing.Sum(key, f.seed)
		}
		for j := range group {
			out[start+j] = f.ContainsHash(ds[j])
		}
	}
	return out
}

// ContainsHashBatch is ContainsBatch for pre-hashed keys.
func (f *Filter) ContainsHashBatch(ds []hashing.Digest, out []bool) []bool {
	if cap(out) < len(ds) {
		out = make([]bool, len(ds))
	}
	out = out[:len(ds)]
	for i, d := range ds {
		out[i] = f.ContainsHash(d)
	}
	return out
}

// Count returns the smallest of key's counters: 0 if key is certainly not in
// the filter, otherwise an upper bound on the number of times it is in it
// (exact for a key that shares no counter with another, while nothing
// saturated). A saturated minimum returns CounterMax.
func (f *Filter) Count(key []byte) uint64 { return f.CountHash(hashing.Sum(key, f.seed)) }

// CountString is Count for a string key.
func (f *Filter) CountString(key string) uint64 {
	return f.CountHash(hashing.SumString(key, f.seed))
}

// CountHash is Count for a pre-hashed key.
func (f *Filter) CountHash(d hashing.Digest) uint64 {
	if f.ix == nil { // the zero Filter: empty
		return 0
	}
	w, l := f.words, f.lay
	least := l.max
	if off := f.offw; off != nil { // double hashing and its extended forms
		p := bitvec.NewProbe(f.ix, d).Scale(f.lay.w, f.recipw)
		for _, o := range off {
			least = min(least, l.field(w, p.At(o)))
			if least == 0 {
				return 0
			}
			p = p.Next()
		}
		return least
	}
	var buf [hashing.MaxK]uint64
	for _, x := range f.ix.Positions(d, buf[:]) {
		least = min(least, l.get(w, x))
		if least == 0 {
			return 0
		}
	}
	return least
}

// Nonzero returns the number of nonzero counters: the number of ones of the
// equivalent standard filter.
func (f *Filter) Nonzero() uint64 {
	var c uint64
	l := f.lay
	for _, x := range f.words {
		c += uint64(bits.OnesCount64(l.nonzero(x)))
	}
	return c
}

// countSaturated counts the saturated counters from scratch.
func (f *Filter) countSaturated() uint64 {
	var c uint64
	l := f.lay
	for _, x := range f.words {
		c += uint64(bits.OnesCount64(l.full(x)))
	}
	return c
}

// FillRatio returns the fraction of nonzero counters (0 for the zero
// Filter).
func (f *Filter) FillRatio() float64 {
	if f.m == 0 {
		return 0
	}
	return float64(f.Nonzero()) / float64(f.m)
}

// EstimatedFPR returns the false-positive rate of the current state: the
// FillRatio()^k of 000 §2.1 (for a partitioned filter the product of the
// subarrays' fill ratios) with the pair floor of the scheme for N keys
// (theory.FPPairs); for a small filter of a two-hash scheme, exactly the
// fraction of probe sequences whose counters are all nonzero
// (internal/bitvec.StateFPR).
func (f *Filter) EstimatedFPR() float64 {
	return bitvec.StateFPR(f.ix, f.nonzeroIn, f.nonzeroAt, f.N())
}

// nonzeroAt reports whether counter p is nonzero.
func (f *Filter) nonzeroAt(p uint64) bool { return f.lay.get(f.words, p) != 0 }

// nonzeroIn counts the nonzero counters in [lo, hi).
func (f *Filter) nonzeroIn(lo, hi uint64) uint64 {
	l := f.lay
	lo, hi = lo<<l.logw, hi<<l.logw // bit offsets; counters are field-aligned
	var c uint64
	for lo < hi {
		x := l.nonzero(f.words[lo>>6]) >> (lo & 63)
		n := min(64-(lo&63), hi-lo)
		if n < 64 {
			x &= 1<<n - 1
		}
		c += uint64(bits.OnesCount64(x))
		lo += n
	}
	return c
}

// ApproxCount estimates the number of distinct keys in the filter from the
// fraction of nonzero counters, with the standard filter's formula
// (Swamidass and Baldi): −(m/k)·ln(1 − X/m) for X nonzero counters, or
// −(m/k)·ln(1 − X/m) with m/k-counter subarrays for a partitioned filter.
// It returns +Inf when every counter is nonzero.
func (f *Filter) ApproxCount() float64 { return bitvec.StateCount(f.ix, f.FillRatio()) }

func (f *Filter) compatible(g *Filter, op string) error {
	if f.lay != g.lay {
		return fmt.Errorf("counting: %s: counter bits differ (%d vs %d): %w", op, f.lay.width(), g.lay.width(), ErrIncompatible)
	}
	return bitvec.Compatible("counting", op, f.ix, g.ix, f.seed, g.seed)
}

// Merge adds g's counters to f's, so that f holds the keys of both (as a
// multiset: a key in both is in f twice). A sum that reaches 2^w − 1
// saturates, and a saturated counter of either filter stays saturated. It
// fails, changing nothing, unless both have the same m, k, counter width,
// scheme and seed. (Union, which is meaningful for standard filters, is not
// for counters: ToBloom of both and bloom.Filter.Union gives it.)
func (f *Filter) Merge(g *Filter) error {
	if f.ix == nil || g.ix == nil {
		return zero.Err("merge")
	}
	if err := f.compatible(g, "merge"); err != nil {
		return err
	}
	l := f.lay
	for i, y := range g.words {
		if y == 0 {
			continue
		}
		x := f.words[i]
		var z uint64
		for o := uint64(0); o < 64; o += l.w {
			z |= min(x>>o&l.max+y>>o&l.max, l.max) << o
		}
		f.words[i] = z
	}
	f.sat = f.countSaturated()
	f.n += g.n
	return nil
}

// ToBloom returns the standard Bloom filter of the same keys: same m, k,
// scheme and seed, with bit i set exactly when counter i is nonzero (000
// §2.1). It answers Contains exactly as f does, now and for keys added to
// both later. Its N is f's N. f is not modified. A filter with a custom
// index function gives a bloom.Filter with the same function.
func (f *Filter) ToBloom() *bloom.Filter {
	if f.ix == nil {
		return &bloom.Filter{} // the zero Filter: an empty bloom.Filter with no room
	}
	bw := make([]uint64, bitvec.Words(f.m))
	l := f.lay
	per := uint64(64 >> l.logw) // counters per source word
	for i, x := range f.words {
		if x == 0 {
			continue
		}
		// Compact the nonzero flags (bit j·w for counter j) into per bits.
		nz := l.nonzero(x)
		var packed uint64
		for j := uint64(0); j < per; j++ {
			packed |= (nz >> ((j << l.logw) & 63) & 1) << j
		}
		bit := uint64(i) * per // index of the word's first counter
		bw[bit>>6] |= packed << (bit & 63)
	}
	b, err := bloom.FromIndexer(f.ix, f.seed, bw, f.n)
	if err != nil {
		// Unreachable: bw has exactly ⌈m/64⌉ words and only bits below m,
		// and f.ix was validated when f was built or read. Returning an
		// empty filter would be a silent false negative; a nil filter makes
		// the impossible loud.
		return nil
	}
	b.SetCapacity(f.capacity)
	return b
}

// Clear removes every key and resets N and Saturated to zero. On the zero
// Filter it does nothing (it is empty).
func (f *Filter) Clear() {
	f.words.Clear()
	f.n = 0
	f.sat = 0
}

// Clone returns an independent copy of f.
func (f *Filter) Clone() *Filter {
	g := *f
	g.words = f.words.Clone()
	return &g
}

// Equal reports whether f and g have the same parameters and counters (N
// is not compared: it counts calls, not content). Two zero Filters are
// equal.
func (f *Filter) Equal(g *Filter) bool {
	return f.compatible(g, "equal") == nil && f.words.Equal(g.words)
}

// memLimit describes the largest counter array this platform can allocate:
// 2^48 bits, or less where int is 32 bits.
func memLimit() string {
	if math.MaxInt < 1<<40 {
		return "the 32-bit platform's 2^31 − 1 words"
	}
	return "2^48 bits"
}
