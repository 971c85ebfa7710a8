// Package bloom implements the standard Bloom filter (003, 004 §2-3) and the
// partitioned Bloom filter (004 §5; 001 §2 and §4.1), with every index scheme
// of "Less Hashing, Same Performance" (001) through package hashing.
//
// Guarantee: no false negatives. A key that was added is always reported
// present, whatever else was added, for every scheme and any m up to 2^48
// bits (all index arithmetic is 64-bit).
//
// False positives: after n distinct keys in m bits with k hash functions, a
// key that was never added is reported present with probability close to
// (1 − (1 − 1/m)^{kn})^k for the standard filter and (1 − (1 − k/m)^n)^k for
// the partitioned one (theory.FPExact, theory.FPPartitioned), plus, for the
// schemes that derive all k positions from two hashes (double, enhanced,
// extended, partition), a floor of about n/(m·s) (n/m'² for the partition
// scheme, m' = m/k): a query whose reduced (h1, h2) is an inserted key's
// probes exactly that key's positions (001 §2, §6). theory.FPScheme is the
// rate with the floor; NewWithEstimates sizes with it (theory.SizeScheme),
// so a filter built for ε meets ε at its n, however small n is. Given the
// filter's actual state, the rate is about FillRatio()^k (the product of
// the subarrays' fills when partitioned) with the floor added, and exactly
// the fraction of probe sequences through set bits for a small filter
// (EstimatedFPR).
//
// Cost: Add and Contains hash the key once (xxh3-128) and touch k bits;
// they allocate nothing and do no division and no interface call per probe.
// Contains tests the bits four at a time and stops after the first group of
// four that holds a zero bit. The bit array and the probe loops are
// internal/bitvec's, shared with packages blocked, choices and counting.
//
// Concurrency: any number of goroutines may call the read methods
// (Contains*, Ones, FillRatio, ApproxCount, EstimatedFPR, Clone, Equal,
// WriteTo, MarshalBinary, …) at once, and AddAtomic* may run concurrently
// with each other and with every read method: reads load the bits
// atomically, so a key whose AddAtomic returned before a read started is
// in what the read sees (Contains, a Clone, the bytes WriteTo writes). Add*,
// Union, Intersect, Clear, SetCapacity, ReadFrom and UnmarshalBinary must
// not run concurrently with anything else on the same filter.
//
// Import: ReadBitsAndBlooms reads a filter that github.com/bits-and-blooms/bloom/v3
// serialised (WriteTo, MarshalBinary, GobEncode or MarshalJSON) into a
// filter of scheme hashing.BitsAndBlooms, which hashes keys as that library
// does (MurmurHash3, no seed) and answers exactly as it did.
//
// The zero Filter is an empty filter with no room (docs/API.md): its read
// methods answer as for an empty filter, WriteTo, MarshalBinary, Union and
// Intersect return an error wrapping ErrParam, and Add*, AddAtomic* and
// SetCapacity panic, changing nothing.
package bloom

import (
	"fmt"
	"math"
	"sync/atomic"

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
)

// Filter is a standard or partitioned Bloom filter. Create one with New,
// NewPartitioned or NewWithEstimates; the zero value is an empty filter
// with no room (see the package doc).
type Filter struct {
	bits   bitvec.Vec
	m      uint64
	k      int
	seed   uint64
	scheme hashing.Scheme
	ix     *hashing.Indexer
	n      uint64 // Add calls, including repeats
	// capacity is the number of keys the filter was sized for (0:
	// unknown); informational, stored in files.
	capacity uint64
}

// Option configures a filter at construction.
type Option func(*options)

type options struct {
	scheme    hashing.Scheme
	seed      uint64
	indexFunc hashing.IndexFunc
}

// WithScheme selects the index scheme (default hashing.DefaultScheme, or
// hashing.Partition for NewPartitioned).
func WithScheme(s hashing.Scheme) Option { return func(o *options) { o.scheme = s } }

// WithSeed sets the seed of the base hash (default 0). Filters combine only
// if their seeds agree.
func WithSeed(seed uint64) Option { return func(o *options) { o.seed = seed } }

// WithIndexFunc makes the filter use fn for its positions (scheme Custom),
// for example to replay a textbook example with hand-made hash functions.
// Such a filter cannot be serialized.
func WithIndexFunc(fn hashing.IndexFunc) Option {
	return func(o *options) { o.scheme = hashing.Custom; o.indexFunc = fn }
}

// New returns an empty filter of at least m bits with k hash functions.
// m must be in [1, 2^48] and k in [1, 64]. Partitioned schemes round m up to
// a multiple of k (Partition, PartitionIndependent) or to k times a prime
// (PrimePartition); M reports the size used.
func New(m uint64, k int, opts ...Option) (*Filter, error) {
	return newFilter(m, k, hashing.DefaultScheme, opts)
}

// NewPartitioned is New with the partition scheme (001 §4.1) as the default:
// k disjoint subarrays of m/k bits, one position in each.
func NewPartitioned(m uint64, k int, opts ...Option) (*Filter, error) {
	return newFilter(m, k, hashing.Partition, opts)
}

// NewWithEstimates returns a filter sized for n keys at false-positive rate
// fpr: the smallest m for which some k ≤ 64 gives a rate of at most fpr,
// the scheme's pair floor included, and that k (theory.SizeScheme; m is
// prime for the double-hashing schemes, and m/k prime for the partition
// schemes).
func NewWithEstimates(n uint64, fpr float64, opts ...Option) (*Filter, error) {
	o := options{scheme: hashing.DefaultScheme}
	for _, opt := range opts {
		opt(&o)
	}
	m, k, err := bitvec.SizeForRate("bloom", o.scheme, n, fpr)
	if err != nil {
		return nil, err
	}
	f, err := newFilter(m, k, o.scheme, opts)
	if err != nil {
		return nil, err
	}
	f.capacity = n
	return f, nil
}

func newFilter(m uint64, k int, scheme hashing.Scheme, opts []Option) (*Filter, error) {
	o := options{scheme: scheme}
	for _, opt := range opts {
		opt(&o)
	}
	var ix *hashing.Indexer
	var err error
	if o.scheme == hashing.BitsAndBlooms {
		ix, err = newBBIndexer(m, k, o.seed)
		if err != nil {
			err = fmt.Errorf("bloom: %v: %w", err, ErrParam)
		}
	} else {
		ix, err = bitvec.NewIndexer("bloom", o.scheme, m, k, o.indexFunc)
	}
	if err != nil {
		return nil, err
	}
	m = ix.M()
	if bitvec.Words(m) > math.MaxInt/8 {
		return nil, fmt.Errorf("bloom: m = %d bits exceed what a 32-bit platform can allocate: %w", m, ErrParam)
	}
	return &Filter{bits: bitvec.New(m), m: m, k: k, seed: o.seed, scheme: o.scheme, ix: ix}, nil
}

// M returns the number of bits.
func (f *Filter) M() uint64 { return f.m }

// K returns the number of hash functions (positions per key).
func (f *Filter) K() int { return f.k }

// Seed returns the base hash seed.
func (f *Filter) Seed() uint64 { return f.seed }

// Scheme returns the index scheme.
func (f *Filter) Scheme() hashing.Scheme { return f.scheme }

// N returns the number of Add calls so far (repeats included; Union adds
// the other filter's N, Intersect keeps the smaller).
func (f *Filter) N() uint64 { return atomic.LoadUint64(&f.n) }

// Capacity returns the number of keys the filter was designed for: the n
// given to NewWithEstimates, the value set by SetCapacity, or 0 if unknown.
// It is informational (the filter accepts any number of keys) and is
// stored in files.
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
		zero.Panic(method)
	}
}

// zero is the zero-value rule's description of Filter.
var zero = bitvec.Zero{Pkg: "bloom", Type: "Filter", Ctors: "New, NewPartitioned or NewWithEstimates"}

// Kind returns "partitioned" for partitioned schemes and "bloom" otherwise.
func (f *Filter) Kind() string {
	if f.scheme.Partitioned() {
		return "partitioned"
	}
	return "bloom"
}

// Digest hashes key with the filter's seed: the pre-hashed form accepted by
// AddHash and ContainsHash. A filter of scheme hashing.BitsAndBlooms (one
// imported from bits-and-blooms/bloom: ReadBitsAndBlooms) hashes keys,
// not digests: its positions come from four 64-bit hashes of the key,
// which a Digest cannot carry, so its AddHash, AddHashAtomic, ContainsHash
// and ContainsHashBatch panic, changing nothing; its methods that take
// keys work as for every filter. A filter imported from BoomFilters or
// blobloom (ReadBoomFilters, ReadBoomPartitioned, ReadBlobloom) hashes
// keys with that library's 64-bit hash (hashing.ForeignSum), which Digest
// returns: its pre-hashed methods work on it.
func (f *Filter) Digest(key []byte) hashing.Digest { return f.sum(key) }

// Add inserts key.
func (f *Filter) Add(key []byte) {
	if f.scheme == hashing.BitsAndBlooms {
		f.addBB(key, false)
		return
	}
	f.AddHash(f.sum(key))
}

// AddString inserts key.
func (f *Filter) AddString(key string) {
	if f.scheme == hashing.BitsAndBlooms {
		f.addBB([]byte(key), false)
		return
	}
	f.AddHash(f.sumString(key))
}

// AddHash inserts the key whose digest (under this filter's seed) is d.
func (f *Filter) AddHash(d hashing.Digest) {
	f.mustBeMade("Add")
	// The double-hashing walk of bitvec.SetKey, inline: a call less per
	// key (8% of an add's instructions).
	if off := f.ix.Offsets(); off != nil {
		v := f.bits
		x, step, m, _ := f.ix.DoubleProbe(d)
		if f.ix.Scheme() == hashing.Double {
			for range off {
				v[x>>6] |= 1 << (x & 63)
				x = hashing.AddMod(x, step, m)
			}
		} else {
			for _, o := range off {
				p := hashing.AddMod(x, o, m)
				v[p>>6] |= 1 << (p & 63)
				x = hashing.AddMod(x, step, m)
			}
		}
	} else {
		f.bits.SetKey(f.ix, d)
	}
	f.n++
}

// AddBatch inserts every key in keys.
func (f *Filter) AddBatch(keys [][]byte) {
	f.mustBeMade("AddBatch")
	for _, key := range keys {
		f.Add(key)
	}
}

// AddAtomic inserts key; safe to call concurrently with other AddAtomic
// calls and with Contains.
func (f *Filter) AddAtomic(key []byte) {
	if f.scheme == hashing.BitsAndBlooms {
		f.addBB(key, true)
		return
	}
	f.AddHashAtomic(f.sum(key))
}

// AddStringAtomic is AddAtomic for a string key.
func (f *Filter) AddStringAtomic(key string) {
	if f.scheme == hashing.BitsAndBlooms {
		f.addBB([]byte(key), true)
		return
	}
	f.AddHashAtomic(f.sumString(key))
}

// AddHashAtomic is AddAtomic for a pre-hashed key.
func (f *Filter) AddHashAtomic(d hashing.Digest) {
	f.mustBeMade("AddAtomic")
	f.bits.SetKeyAtomic(f.ix, d)
	atomic.AddUint64(&f.n, 1)
}

// Contains reports whether key may have been added: false means certainly
// not added.
func (f *Filter) Contains(key []byte) bool {
	if f.scheme == hashing.BitsAndBlooms {
		return f.hasBB(key)
	}
	return f.ContainsHash(f.sum(key))
}

// ContainsString is Contains for a string key.
func (f *Filter) ContainsString(key string) bool {
	if f.scheme == hashing.BitsAndBlooms {
		return f.hasBB([]byte(key))
	}
	return f.ContainsHash(f.sumString(key))
}

// ContainsHash is Contains for a pre-hashed key.
func (f *Filter) ContainsHash(d hashing.Digest) bool {
	if f.ix == nil { // the zero Filter: empty
		return false
	}
	return f.bits.HasKey(f.ix, d)
}

// batch is the number of keys ContainsBatch hashes before it queries them.
const batch = 16

// ContainsBatch answers Contains for every key. It reuses out's storage when
// its capacity allows (then it allocates nothing) and returns
// out[:len(keys)]. Keys are hashed a group at a time, then queried.
//
// Measured on a 307 MiB filter (bench -large), loading each key's first
// probes for the whole group before testing any (a software prefetch) made
// queries slower, not faster: a single query's k probes are independent
// loads that already overlap, and the core overlaps consecutive queries as
// well. The blocked filter, one cache line per key, is where prefetching a
// group pays (3× on the same machine).
func (f *Filter) ContainsBatch(keys [][]byte, out []bool) []bool {
	if cap(out) < len(keys) {
		out = make([]bool, len(keys))
	}
	out = out[:len(keys)]
	if f.scheme == hashing.BitsAndBlooms {
		for i, key := range keys {
			out[i] = f.hasBB(key)
		}
		return out
	}
	var ds [batch]hashing.Digest
	for start := 0; start < len(keys); start += batch {
		group := keys[start:min(start+batch, len(keys))]
		for j, key := range group {
			ds[j] = f.sum(key)
		}
		for j, d := range ds[:len(group)] {
			out[start+j] = f.ContainsHash(d)
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
// FillRatio()^k of 000 §2.1 (for a partitioned filter the product of the
// subarrays' fill ratios) with the pair floor of the scheme for N keys
// added, which the fill cannot show (theory.FPPairs); for a small filter
// of a two-hash scheme, exactly the fraction of probe sequences whose bits
// are all set (internal/bitvec.StateFPR).
func (f *Filter) EstimatedFPR() float64 {
	return bitvec.StateFPR(f.ix, f.bits.OnesIn, f.bits.Has, f.N())
}

// ApproxCount estimates the number of distinct keys added from the fill
// (Swamidass and Baldi): −(m/k)·ln(1 − X/m) for X ones, or
// −(m/k)·ln(1 − X/m) with m/k-bit subarrays for a partitioned filter (the
// same expression: each key sets one bit per subarray). It returns +Inf for
// a filter whose bits are all set.
func (f *Filter) ApproxCount() float64 { return bitvec.StateCount(f.ix, f.FillRatio()) }

func (f *Filter) compatible(g *Filter, op string) error {
	return bitvec.Compatible("bloom", op, f.ix, g.ix, f.seed, g.seed)
}

// Union sets f to the union of f and g: afterwards f contains every key
// either contained. It fails, changing nothing, unless both have the same
// m, k, scheme and seed. g may be taking AddAtomic calls meanwhile (it is
// read atomically); f may not.
func (f *Filter) Union(g *Filter) error {
	if err := f.combinable(g, "union"); err != nil {
		return err
	}
	f.bits.Or(g.bits)
	f.n += g.N()
	return nil
}

// Intersect sets f to the bitwise intersection of f and g. Every key added
// to both is still reported present; the result may report more false
// positives than a filter built from the intersection of the key sets.
func (f *Filter) Intersect(g *Filter) error {
	if err := f.combinable(g, "intersect"); err != nil {
		return err
	}
	f.bits.And(g.bits)
	f.n = min(f.n, g.N())
	return nil
}

// combinable checks that f and g are filters (not zero values) that
// combine.
func (f *Filter) combinable(g *Filter, op string) error {
	if f.ix == nil || g.ix == nil {
		return zero.Err(op)
	}
	return f.compatible(g, op)
}

// Clear removes every key. On the zero Filter it does nothing (it is
// empty).
func (f *Filter) Clear() {
	f.bits.Clear()
	f.n = 0
}

// Clone returns an independent copy of f: a read method, so it may run
// beside AddAtomic, and every key whose AddAtomic returned before Clone was
// called is in the copy.
func (f *Filter) Clone() *Filter {
	return &Filter{
		bits: f.bits.Clone(), m: f.m, k: f.k, seed: f.seed, scheme: f.scheme, ix: f.ix,
		n: f.N(), capacity: f.capacity,
	}
}

// Equal reports whether f and g have the same parameters and bits (N is not
// compared: it counts calls, not content). Two zero Filters are equal.
func (f *Filter) Equal(g *Filter) bool {
	return f.compatible(g, "equal") == nil && f.bits.Equal(g.bits)
}

// sum hashes key as the filter's scheme wants: xxh3-128 with the seed, or
// the foreign library's hash for a filter imported from it
// (hashing.ForeignSum).
func (f *Filter) sum(key []byte) hashing.Digest {
	if f.scheme.Uses64BitHash() {
		return hashing.ForeignSum(f.scheme, key)
	}
	return hashing.Sum(key, f.seed)
}

// sumString is sum for a string key.
func (f *Filter) sumString(key string) hashing.Digest {
	if f.scheme.Uses64BitHash() {
		return hashing.ForeignSumString(f.scheme, key)
	}
	return hashing.SumString(key, f.seed)
}
