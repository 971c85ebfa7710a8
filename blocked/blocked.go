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
// groups' cache misses overlap.
//
// Concurrency: read methods may run concurrently with each other and with
// AddAtomic; Add, Union, Intersect, Clear and ReadFrom need exclusive
// access.
package blocked

import (
	"fmt"
	"github.com/bloomlab/bloomlab/internal/kind"
	"math"
	"math/bits"
	"sync/atomic"

	"github.com/bloomlab/bloomlab/hashing"
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

// Filter is a blocked Bloom filter. Create one with New or NewWithEstimates.
type Filter struct {
	words    []uint64 // wordsPerBlock words per block
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
	return &Filter{words: make([]uint64, blocks*wordsPerBlock), blocks: blocks, k: k, seed: o.seed}, nil
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
func (f *Filter) SetCapacity(n uint64) { f.capacity = n }

// Kind returns "blocked".
func (f *Filter) Kind() string { return "blocked" }

// Digest hashes key with the filter's seed (the pre-hashed form).
func (f *Filter) Digest(key []byte) hashing.Digest { return hashing.Sum(key, f.seed) }

// block returns the index of the first word of d's block.
func (f *Filter) block(d hashing.Digest) uint64 {
	return hashing.Reduce(d.H1, f.blocks) * wordsPerBlock
}

// remix derives 63 more position bits for probes i … i+6.
func remix(d hashing.Digest, i int) uint64 {
	x := d.H2 ^ d.H1 + uint64(i)*0x9E3779B97F4A7C15
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9
	x = (x ^ (x >> 27)) * 0x94D049BB133111EB
	return x ^ (x >> 31)
}

// Add inserts key.
func (f *Filter) Add(key []byte) { f.AddHash(hashing.Sum(key, f.seed)) }

// AddString inserts key.
func (f *Filter) AddString(key string) { f.AddHash(hashing.SumString(key, f.seed)) }

// AddHash inserts the key whose digest (under this filter's seed) is d.
func (f *Filter) AddHash(d hashing.Digest) {
	i := hashing.Reduce(d.H1, f.blocks) * wordsPerBlock
	b := f.words[i : i+wordsPerBlock : i+wordsPerBlock]
	x, left := d.H2, 7 // 7 fields of 9 bits in each 64-bit word
	for j := 0; j < f.k; j++ {
		if left == 0 {
			x, left = remix(d, j), 7
		}
		left--
		b[x>>6&7] |= 1 << (x & 63)
		x >>= 9
	}
	f.n++
}

// AddBatch inserts every key in keys.
func (f *Filter) AddBatch(keys [][]byte) {
	for _, key := range keys {
		f.AddHash(hashing.Sum(key, f.seed))
	}
}

// AddAtomic inserts key; safe concurrently with other AddAtomic calls and
// with readers.
func (f *Filter) AddAtomic(key []byte) { f.AddHashAtomic(hashing.Sum(key, f.seed)) }

// AddHashAtomic is AddAtomic for a pre-hashed key.
func (f *Filter) AddHashAtomic(d hashing.Digest) {
	i := f.block(d)
	b := f.words[i : i+wordsPerBlock : i+wordsPerBlock]
	x, left := d.H2, 7
	for j := 0; j < f.k; j++ {
		if left == 0 {
			x, left = remix(d, j), 7
		}
		left--
		w, bit := &b[x>>6&7], uint64(1)<<(x&63)
		if atomic.LoadUint64(w)&bit == 0 {
			atomic.OrUint64(w, bit)
		}
		x >>= 9
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
	i := hashing.Reduce(d.H1, f.blocks) * wordsPerBlock
	return f.test(i, d)
}

// test reports whether all of d's bits are set in the block at word i: the
// k bits are ANDed without a data-dependent branch, so the only wait is for
// the block's cache line.
func (f *Filter) test(i uint64, d hashing.Digest) bool {
	b := f.words[i : i+wordsPerBlock : i+wordsPerBlock]
	x, left := d.H2, 7
	var miss uint64
	for j := 0; j < f.k; j++ {
		if left == 0 {
			x, left = remix(d, j), 7
		}
		left--
		miss |= (1 << (x & 63)) &^ atomic.LoadUint64(&b[x>>6&7])
		x >>= 9
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
		sum += atomic.LoadUint64(&f.words[i])
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
	var idx [batch]uint64
	var ds [batch]hashing.Digest
	for start := 0; start < len(keys); start += batch {
		group := keys[start:min(start+batch, len(keys))]
		for j, key := range group {
			ds[j] = hashing.Sum(key, f.seed)
			idx[j] = f.block(ds[j])
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
	var idx [batch]uint64
	for start := 0; start < len(ds); start += batch {
		group := ds[start:min(start+batch, len(ds))]
		for j, d := range group {
			idx[j] = f.block(d)
		}
		f.touch(idx[:len(group)])
		for j, d := range group {
			out[start+j] = f.test(idx[j], d)
		}
	}
	return out
}

// Ones returns the number of bits set.
func (f *Filter) Ones() uint64 {
	var c uint64
	for i := range f.words {
		c += uint64(bits.OnesCount64(atomic.LoadUint64(&f.words[i])))
	}
	return c
}

// FillRatio returns the fraction of bits set.
func (f *Filter) FillRatio() float64 { return float64(f.Ones()) / float64(f.M()) }

// EstimatedFPR returns the false-positive rate of the filter's current
// state: the mean over blocks of (ones in the block / 512)^k, which is
// exact for a random query key under the model of the package doc.
func (f *Filter) EstimatedFPR() float64 {
	var sum float64
	for b := uint64(0); b < f.blocks; b++ {
		var ones int
		for _, w := range f.words[b*wordsPerBlock : (b+1)*wordsPerBlock] {
			ones += bits.OnesCount64(atomic.LoadUint64(&w))
		}
		sum += math.Pow(float64(ones)/BlockBits, float64(f.k))
	}
	return sum / float64(f.blocks)
}

// ApproxCount estimates the number of distinct keys added from each block's
// fill: Σ ln(1 − ones/512) / (k·ln(1 − 1/512)). It returns +Inf if some
// block is full.
func (f *Filter) ApproxCount() float64 {
	var sum float64
	per := float64(f.k) * math.Log1p(-1.0/BlockBits)
	for b := uint64(0); b < f.blocks; b++ {
		var ones int
		for _, w := range f.words[b*wordsPerBlock : (b+1)*wordsPerBlock] {
			ones += bits.OnesCount64(atomic.LoadUint64(&w))
		}
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
// error and no change).
func (f *Filter) Union(g *Filter) error {
	if err := f.compatible(g, "union"); err != nil {
		return err
	}
	for i, w := range g.words {
		f.words[i] |= w
	}
	f.n += g.n
	return nil
}

// Intersect sets f to the bitwise intersection of f and g: keys added to
// both stay present.
func (f *Filter) Intersect(g *Filter) error {
	if err := f.compatible(g, "intersect"); err != nil {
		return err
	}
	for i, w := range g.words {
		f.words[i] &= w
	}
	f.n = min(f.n, g.n)
	return nil
}

// Clear removes every key.
func (f *Filter) Clear() {
	clear(f.words)
	f.n = 0
}

// Clone returns an independent copy.
func (f *Filter) Clone() *Filter {
	g := *f
	g.words = append([]uint64(nil), f.words...)
	return &g
}

// Equal reports whether f and g have the same parameters and bits.
func (f *Filter) Equal(g *Filter) bool {
	if f.compatible(g, "equal") != nil {
		return false
	}
	for i, w := range f.words {
		if g.words[i] != w {
			return false
		}
	}
	return true
}
