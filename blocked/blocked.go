// Package blocked implements a cache-line-blocked Bloom filter: the filter
// is an array of 512-bit blocks (one 64-byte cache line each), a key is
// hashed to one block and sets k bits inside it. A query therefore costs one
// cache miss at most, where a standard filter pays up to k (004 §8,
// "Dependence on k"); the price is a slightly higher false-positive rate for
// the same bits, because blocks receive unequal numbers of keys (Putze,
// Sanders and Singler, "Cache-, Hash- and Space-Efficient Bloom Filters",
// 2007). theory.FPBlocked models that rate exactly and NewWithEstimates
// sizes with it, so a filter built for rate ε meets ε.
//
// Guarantee: no false negatives, for any sequence of Add and AddAtomic
// calls, unions and intersections, and for decoded filters.
//
// Hashing: one seeded xxh3-128 digest per key. The block is Reduce(H1, b)
// (unbiased multiply-shift, any number of blocks b); the k in-block bit
// positions are consecutive 9-bit fields of H2 (k ≤ 7) and of
// SplitMix64-remixes of H2 ⊕ H1 for further groups of 7, so positions are
// independent and uniform within the block, as the model assumes.
//
// Cost: Add and Contains hash once and touch one cache line; Contains ANDs
// the k bits without a data-dependent branch. Neither allocates or divides.
// ContainsBatch hashes a group of keys before touching memory so the
// groups' cache misses overlap. The bit array is internal/bitvec's, shared
// with packages bloom and choices.
//
// Concurrency: read methods (Contains*, Ones, FillRatio, EstimatedFPR,
// ApproxCount, Clone, Equal, WriteTo, MarshalBinary, …) may run
// concurrently with each other and with AddAtomic: they load the bits
// atomically, so a key whose AddAtomic returned before a read started is in
// what the read sees. Add, Union, Intersect, Clear, SetCapacity, ReadFrom
// and UnmarshalBinary need exclusive access.
//
// The zero Filter is an empty filter with no room (docs/API.md): its read
// methods answer as for an empty filter, WriteTo, MarshalBinary, Union and
// Intersect return an error wrapping ErrParam, and Add*, AddAtomic* and
// SetCapacity panic, changing nothing.
package blocked

import (
	"fmt"
	"math"
	"sync/atomic"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/bitvec"
	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/theory"
)

// BlockBits is the size of a block in bits: one 64-byte cache line.
const BlockBits = theory.BlockBits

// wordsPerBlock is BlockBits/64.
const wordsPerBlock = BlockBits / 64

// MaxBlocks bounds the filter at 2^48 bits.
const MaxBlocks = hashing.MaxM / BlockBits

// Errors returned by this package wrap these values.
var (
	ErrParam        = kind.ErrParam
	ErrIncompatible = kind.ErrIncompatible
)

// Filter is a blocked Bloom filter. Create one with New or
// NewWithEstimates; the zero value is an empty filter with no room (see the
// package doc).
type Filter struct {
	bits     bitvec.Vec // wordsPerBlock words per block
	blocks   uint64
	k        int
	seed     uint64
	n        uint64 // Add calls
	capacity uint64 // design n, 0 if unknown
}

// Option configures a filter.
type Option func(*options)

type options struct{ seed uint64 }

// WithSeed sets the seed of the base hash (default 0).
func WithSeed(seed uint64) Option { return func(o *options) { o.seed = seed } }

// New returns an empty filter of at least m bits (rounded up to whole
// 512-bit blocks) with k bits per key. m must be in [1, 2^48], k in [1, 64].
func New(m uint64, k int, opts ...Option) (*Filter, error) {
	if m < 1 || m > hashing.MaxM {
		return nil, fmt.Errorf("blocked: m = %d out of range [1, 2^48]: %w", m, ErrParam)
	}
	if k < 1 || k > hashing.MaxK {
		return nil, fmt.Errorf("blocked: k = %d out of range [1, %d]: %w", k, hashing.MaxK, ErrParam)
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	blocks := (m + BlockBits - 1) / BlockBits
	if blocks*wordsPerBlock > math.MaxInt/8 {
		return nil, fmt.Errorf("blocked: m = %d bits exceed what a 32-bit platform can allocate: %w", m, ErrParam)
	}
	return &Filter{bits: bitvec.New(blocks * BlockBits), blocks: blocks, k: k, seed: o.seed}, nil
}

// NewWithEstimates returns a filter sized for n keys at false-positive rate
// fpr by the blocked model (theory.SizeBlocked): the fewest blocks for which
// some k gives theory.FPBlocked ≤ fpr, and that k.
func NewWithEstimates(n uint64, fpr float64, opts ...Option) (*Filter, error) {
	if n == 0 {
		return nil, fmt.Errorf("blocked: n = 0, want n ≥ 1: %w", ErrParam)
	}
	if !(fpr > 0 && fpr < 1) {
		return nil, fmt.Errorf("blocked: fpr = %v out of range (0, 1): %w", fpr, ErrParam)
	}
	b, k, err := theory.SizeBlocked(n, fpr)
	if err != nil {
		return nil, fmt.Errorf("blocked: %w: %w", err, ErrParam)
	}
	f, err := New(b*BlockBits, k, opts...)
	if err != nil {
		return nil, err
	}
	f.capacity = n
	return f, nil
}

// M returns the number of bits (a multiple of 512).
func (f *Filter) M() uint64 { return f.blocks * BlockBits }

// Blocks returns the number of 512-bit blocks.
func (f *Filter) Blocks() uint64 { return f.blocks }

// K returns the number of bits set per key.
func (f *Filter) K() int { return f.k }

// Seed returns the base hash seed.
func (f *Filter) Seed() uint64 { return f.seed }

// Scheme returns the index scheme recorded in files: blocked filters have
// one, independent positions inside the block.
func (f *Filter) Scheme() hashing.Scheme { return hashing.Independent }

// N returns the number of Add calls (repeats included).
func (f *Filter) N() uint64 { return atomic.LoadUint64(&f.n) }

// Capacity returns the number of keys the filter was designed for (0 if
// unknown); informational, stored in files.
func (f *Filter) Capacity() uint64 { return f.capacity }

// SetCapacity records the number of keys the filter was designed for.
func (f *Filter) SetCapacity(n uint64) {
	f.mustBeMade("SetCapacity")
	f.capacity = n
}

// Bits returns the memory of the filter in bits: M.
func (f *Filter) Bits() uint64 { return f.M() }

// mustBeMade panics, before anything changes, when f is the zero Filter:
// one predictable branch on the mutators that have no error result.
func (f *Filter) mustBeMade(method string) {
	if f.blocks == 0 {
		zero.Panic(method)
	}
}

// zero is the zero-value rule's description of Filter.
var zero = bitvec.Zero{Pkg: "blocked", Type: "Filter", Ctors: "New or NewWithEstimates"}

// Kind returns "blocked".
func (f *Filter) Kind() string { return "blocked" }

// Digest hashes key with the filter's seed (the pre-hashed form).
func (f *Filter) Digest(key []byte) hashing.Digest { return hashing.Sum(key, f.seed) }

// blockIndex returns the index of the first word of d's block.
func (f *Filter) blockIndex(d hashing.Digest) uint64 {
	return hashing.Reduce(d.H1, f.blocks) * wordsPerBlock
}

// blockAt returns the block whose first word is word i.
func (f *Filter) blockAt(i uint64) bitvec.Vec { return f.bits[i : i+wordsPerBlock : i+wordsPerBlock] }

// fields is the number of 9-bit in-block positions one 64-bit hash word
// gives.
const fields = 7

// probeWord returns the hash word whose 9-bit fields are the in-block
// positions of probes j … j+6 (j a multiple of 7): H2 for the first seven,
// then SplitMix64 remixes of H2 ⊕ H1. Every probe loop of the package walks
// the positions as
//
//	for j := 0; j < k; j += fields {
//		x := probeWord(d, j)
//		for range min(fields, k-j) { bit x&511 of the block; x >>= 9 }
//	}
func probeWord(d hashing.Digest, j int) uint64 {
	if j == 0 {
		return d.H2
	}
	x := d.H2 ^ d.H1 + uint64(j)*0x9E3779B97F4A7C15
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9
	x = (x ^ (x >> 27)) * 0x94D049BB133111EB
	return x ^ (x >> 31)
}

// BlockOf returns the block, in [0, blocks), that the key whose digest is
// d maps to in a filter of the given number of blocks: the block Add sets
// bits in and Contains tests. blocks must be at least 1.
func BlockOf(d hashing.Digest, blocks uint64) uint64 { return hashing.Reduce(d.H1, blocks) }

// AppendPositions appends to dst the k in-block bit positions (0 … 511) of
// the key whose digest is d, in probe order (a position may repeat), and
// returns the extended slice: the bits Add sets and Contains tests in the
// key's block. Bit p of a block is bit p mod 64 of its word p/64, that is
// bit p mod 8 of byte p/8 of the block in the file's little-endian
// payload. With this and BlockOf a filter whose blocks are stored
// elsewhere (package redisblocked) agrees bit for bit with this one.
func AppendPositions(dst []uint16, d hashing.Digest, k int) []uint16 {
	for j := 0; j < k; j += fields {
		x := probeWord(d, j)
		for range min(fields, k-j) {
			dst = append(dst, uint16(x&511))
			x >>= 9
		}
	}
	return dst
}

// BlockContains reports whether the k in-block positions of the key whose
// digest is d (AppendPositions) are all set in block, the 8 words of one
// 512-bit block (bit p in word p/64), which it loads atomically: the test
// Contains makes, for a block held elsewhere (package scalable's blocked
// profile). Like Contains it ANDs the k bits without a data-dependent
// branch; it neither allocates nor divides. block must hold at least 8
// words.
func BlockContains(block []uint64, d hashing.Digest, k int) bool {
	b := block[:wordsPerBlock:wordsPerBlock]
	var miss uint64
	for j := 0; j < k; j += fields {
		x := probeWord(d, j)
		for range min(fields, k-j) {
			miss |= (1 << (x & 63)) &^ atomic.LoadUint64(&b[x>>6&7])
			x >>= 9
		}
	}
	return miss == 0
}

// BlockAddAtomic sets the k in-block positions of d in block (8 words),
// atomically: what AddHashAtomic does to the key's block, safe beside
// other BlockAddAtomic and BlockContains calls on the same block.
func BlockAddAtomic(block []uint64, d hashing.Digest, k int) {
	b := block[:wordsPerBlock:wordsPerBlock]
	for j := 0; j < k; j += fields {
		x := probeWord(d, j)
		for range min(fields, k-j) {
			w, bit := &b[x>>6&7], uint64(1)<<(x&63)
			if atomic.LoadUint64(w)&bit == 0 {
				atomic.OrUint64(w, bit)
			}
			x >>= 9
		}
	}
}

// Add inserts key.
func (f *Filter) Add(key []byte) { f.AddHash(hashing.Sum(key, f.seed)) }

// AddString inserts key.
func (f *Filter) AddString(key string) { f.AddHash(hashing.SumString(key, f.seed)) }

// AddHash inserts the key whose digest (under this filter's seed) is d.
func (f *Filter) AddHash(d hashing.Digest) {
	f.mustBeMade("Add")
	b := f.blockAt(hashing.Reduce(d.H1, f.blocks) * wordsPerBlock)
	for j := 0; j < f.k; j += fields {
		x := probeWord(d, j)
		for range min(fields, f.k-j) {
			b[x>>6&7] |= 1 << (x & 63)
			x >>= 9
		}
	}
	f.n++
}

// AddBatch inserts every key in keys.
func (f *Filter) AddBatch(keys [][]byte) {
	f.mustBeMade("AddBatch")
	for _, key := range keys {
		f.AddHash(hashing.Sum(key, f.seed))
	}
}

// AddAtomic inserts key; safe concurrently with other AddAtomic calls and
// with readers.
func (f *Filter) AddAtomic(key []byte) { f.AddHashAtomic(hashing.Sum(key, f.seed)) }

// AddStringAtomic is AddAtomic for a string key.
func (f *Filter) AddStringAtomic(key string) { f.AddHashAtomic(hashing.SumString(key, f.seed)) }

// AddHashAtomic is AddAtomic for a pre-hashed key.
func (f *Filter) AddHashAtomic(d hashing.Digest) {
	f.mustBeMade("AddAtomic")
	b := f.blockAt(hashing.Reduce(d.H1, f.blocks) * wordsPerBlock)
	for j := 0; j < f.k; j += fields {
		x := probeWord(d, j)
		for range min(fields, f.k-j) {
			b.SetAtomic(x & 511)
			x >>= 9
		}
	}
	atomic.AddUint64(&f.n, 1)
}

// Contains reports whether key may have been added; false means certainly
// not.
func (f *Filter) Contains(key []byte) bool { return f.ContainsHash(hashing.Sum(key, f.seed)) }

// ContainsString is Contains for a string key.
func (f *Filter) ContainsString(key string) bool {
	return f.ContainsHash(hashing.SumString(key, f.seed))
}

// ContainsHash is Contains for a pre-hashed key.
func (f *Filter) ContainsHash(d hashing.Digest) bool {
	if f.blocks == 0 { // the zero Filter: empty
		return false
	}
	return f.test(hashing.Reduce(d.H1, f.blocks)*wordsPerBlock, d)
}

// test reports whether all of d's bits are set in the block at word i: the
// k bits are ANDed without a data-dependent branch, so the only wait is for
// the block's cache line.
func (f *Filter) test(i uint64, d hashing.Digest) bool {
	b := f.blockAt(i)
	var miss uint64
	for j := 0; j < f.k; j += fields {
		x := probeWord(d, j)
		for range min(fields, f.k-j) {
			miss |= (1 << (x & 63)) &^ b.Load(x>>6&7)
			x >>= 9
		}
	}
	return miss == 0
}

// batch is the number of keys ContainsBatch hashes before it touches
// memory: enough independent cache misses in flight to cover the latency.
const batch = 64

// touch loads the first word of each block, back to back: a software
// prefetch. The loads are independent, so the core issues all of them
// before the first returns; the tests that follow then hit the cache
// instead of serialising one miss per key behind a long loop body.
func (f *Filter) touch(idx []uint64) {
	var sum uint64
	for _, i := range idx {
		sum += f.bits.Load(i)
	}
	keep(sum)
}

// keep consumes a value so the compiler cannot drop the loads behind it.
//
//go:noinline
func keep(uint64) {}

// ContainsBatch answers Contains for every key, reusing out's storage when
// its capacity allows (then it allocates nothing), and returns
// out[:len(keys)]. Keys are hashed a group at a time and the group's blocks
// are loaded back to back before any is tested, so their cache misses
// overlap.
func (f *Filter) ContainsBatch(keys [][]byte, out []bool) []bool {
	if cap(out) < len(keys) {
		out = make([]bool, len(keys))
	}
	out = out[:len(keys)]
	if f.blocks == 0 {
		clear(out)
		return out
	}
	var idx [batch]uint64
	var ds [batch]hashing.Digest
	for start := 0; start < len(keys); start += batch {
		group := keys[start:min(start+batch, len(keys))]
		for j, key := range group {
			ds[j] = hashing.Sum(key, f.seed)
			idx[j] = f.blockIndex(ds[j])
		}
		f.touch(idx[:len(group)])
		for j := range group {
			out[start+j] = f.test(idx[j], ds[j])
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
	if f.blocks == 0 {
		clear(out)
		return out
	}
	var idx [batch]uint64
	for start := 0; start < len(ds); start += batch {
		group := ds[start:min(start+batch, len(ds))]
		for j, d := range group {
			idx[j] = f.blockIndex(d)
		}
		f.touch(idx[:len(group)])
		for j, d := range group {
			out[start+j] = f.test(idx[j], d)
		}
	}
	return out
}

// Ones returns the number of bits set.
func (f *Filter) Ones() uint64 { return f.bits.Ones() }

// FillRatio returns the fraction of bits set (0 for the zero Filter).
func (f *Filter) FillRatio() float64 {
	if f.blocks == 0 {
		return 0
	}
	return float64(f.Ones()) / float64(f.M())
}

// blockOnes returns the number of bits set in block b.
func (f *Filter) blockOnes(b uint64) uint64 { return f.bits.OnesIn(b*BlockBits, (b+1)*BlockBits) }

// EstimatedFPR returns the false-positive rate of the filter's current
// state: the mean over blocks of (ones in the block / 512)^k, which is
// exact for a random query key under the model of the package doc (0 for
// the zero Filter).
func (f *Filter) EstimatedFPR() float64 {
	if f.blocks == 0 {
		return 0
	}
	var sum float64
	for b := range f.blocks {
		sum += math.Pow(float64(f.blockOnes(b))/BlockBits, float64(f.k))
	}
	return sum / float64(f.blocks)
}

// ApproxCount estimates the number of distinct keys added from each block's
// fill: Σ ln(1 − ones/512) / (k·ln(1 − 1/512)). It returns +Inf if some
// block is full.
func (f *Filter) ApproxCount() float64 {
	var sum float64
	per := float64(f.k) * math.Log1p(-1.0/BlockBits)
	for b := range f.blocks {
		ones := f.blockOnes(b)
		if ones == BlockBits {
			return math.Inf(1)
		}
		sum += math.Log1p(-float64(ones)/BlockBits) / per
	}
	return sum
}

func (f *Filter) compatible(g *Filter, op string) error {
	switch {
	case f.blocks != g.blocks:
		return fmt.Errorf("blocked: %s: blocks differ (%d vs %d): %w", op, f.blocks, g.blocks, ErrIncompatible)
	case f.k != g.k:
		return fmt.Errorf("blocked: %s: k differs (%d vs %d): %w", op, f.k, g.k, ErrIncompatible)
	case f.seed != g.seed:
		return fmt.Errorf("blocked: %s: seed differs (%d vs %d): %w", op, f.seed, g.seed, ErrIncompatible)
	}
	return nil
}

// Union sets f to the union of f and g (same blocks, k and seed, or an
// error and no change). g may be taking AddAtomic calls meanwhile (it is
// read atomically); f may not.
func (f *Filter) Union(g *Filter) error {
	if err := f.combinable(g, "union"); err != nil {
		return err
	}
	f.bits.Or(g.bits)
	f.n += g.N()
	return nil
}

// Intersect sets f to the bitwise intersection of f and g: keys added to
// both stay present.
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
	if f.blocks == 0 || g.blocks == 0 {
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

// Clone returns an independent copy: a read method, so it may run beside
// AddAtomic, and every key whose AddAtomic returned before Clone was called
// is in the copy.
func (f *Filter) Clone() *Filter {
	return &Filter{bits: f.bits.Clone(), blocks: f.blocks, k: f.k, seed: f.seed, n: f.N(), capacity: f.capacity}
}

// Equal reports whether f and g have the same parameters and bits (N is
// not compared). Two zero Filters are equal.
func (f *Filter) Equal(g *Filter) bool {
	return f.compatible(g, "equal") == nil && f.bits.Equal(g.bits)
}
