// Package ribbon implements Standard Ribbon filters (Dillinger and Walzer,
// "Ribbon filter: practically smaller than Bloom and Xor", 2021): static
// filters, built once from a whole key set, with any number r of result
// bits from 1 to 32, so any rate ε = 2^-r.
//
// Each key has a 128-bit coefficient row starting at a pseudo-random slot
// and an r-bit result; construction (§2: on-the-fly Gaussian elimination,
// "banding") finds a solution Z, r bits per slot, with row·Z = result over
// GF(2) for every key, stored column by column in blocks of 128 slots
// (§3, "interleaved column-major" storage). A query computes the key's r
// parities — per result column, the and of the row with two 128-bit
// column words and a popcount — and compares them with its result: no
// false negative, and an absent key answers yes with probability 2^-r.
//
// Keys are split by hash into shards of about theory.RibbonShardKeys
// keys, each an independent system with its own slots and attempt seed,
// so the space overhead does not grow with n (theory.RibbonBits: about
// 3.4% above n·r bits) and banding works in cache. A shard whose banding
// fails retries with a new seed, and after theory.RibbonGrowAfter
// failures gets one more block; Finish fails (an error, never a filter
// missing a key) after MaxAttempts attempts on one shard.
//
// Keys are hashed once with hashing.Sum64 (seeded 64-bit xxh3); a Builder
// holds those hashes (8 bytes per key). Duplicate keys are tolerated.
//
// A Filter is immutable: every method is safe for concurrent use, and it
// has no Add, Remove or Union (a static kind: rebuild it from the keys).
package ribbon

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/bitvec"
	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/internal/xxh3mid"
	"github.com/bloomlab/bloomlab/theory"
)

// ErrParam wraps every parameter error.
var ErrParam = kind.ErrParam

// MaxKeys is the largest number of keys a filter holds (block offsets are
// 48-bit; far beyond any memory).
const MaxKeys = 1 << 40

// MaxAttempts bounds the banding attempts of one shard.
const MaxAttempts = 48

var zero = bitvec.Zero{Pkg: "ribbon", Type: "Filter", Ctors: "New or NewBuilder and Finish"}

// Config selects a Ribbon filter.
type Config struct {
	// ResultBits is r, 1 … 32: the false-positive rate is 2^-r (0: 8).
	ResultBits int
	// Seed seeds the key hash (hashing.Sum64).
	Seed uint64
}

func (c Config) norm() (Config, error) {
	if c.ResultBits == 0 {
		c.ResultBits = 8
	}
	if c.ResultBits < 1 || c.ResultBits > 32 {
		return c, fmt.Errorf("ribbon: %d result bits: want 1 … 32: %w", c.ResultBits, ErrParam)
	}
	return c, nil
}

const (
	offBits  = 48
	offMask  = 1<<offBits - 1
	seedMul  = 0x9E3779B97F4A7C15
	coeffMul = 0xD6E8FEB86659FD93
	resMul   = 0xC2B2AE3D27D4EB4F
)

// Filter is a Standard Ribbon filter. It is immutable: every method is
// safe for concurrent use. The zero Filter answers as an empty filter and
// refuses to be written (an error wrapping ErrParam).
type Filter struct {
	cfg Config
	r   uint32
	// meta[i] is shard i's first block (low 48 bits) and its attempt
	// number (high 16); meta[shards] is the number of blocks.
	meta []uint64
	// data holds the blocks: block b's column j is the 128 bits
	// data[2(b·r+j)], data[2(b·r+j)+1] (slot b·128+p is bit p); one zero
	// block follows the last.
	data     []uint64
	shards   uint64
	n        uint64
	capacity uint64
	attempts int // the most attempts a shard took (not in files; for tests)
}

// remix is a key's hash for one attempt: the xor of the two halves of the
// 128-bit product of h ^ seed and an odd constant (wyhash's "mum"), one
// multiplication, whose every output bit depends on every input bit.
func remix(h, seed uint64) uint64 {
	hi, lo := bits.Mul64(h^seed, 0xA0761D6478BD642F)
	return hi ^ lo
}

// mix is the murmur3 finalizer of h + seed.
func mix(h, seed uint64) uint64 {
	h += seed
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// attemptSeed is the seed of a shard's attempt a.
func attemptSeed(a uint64) uint64 { return (a + 1) * seedMul }

// row returns the 128-bit coefficient row of the re-mixed hash hh (its
// lowest bit set: the row starts at its start slot) and its r-bit result.
func row(hh uint64, r uint32) (c0, c1 uint64, res uint32) {
	hi, lo := bits.Mul64(hh, coeffMul)
	c0 = (lo ^ hi) | 1
	c1 = hi ^ hh
	res = uint32((hh * resMul) >> (64 - r))
	return
}

// Contains reports whether key may be in the set: false means certainly
// not; true for a key not in the set with probability 2^-ResultBits.
func (f *Filter) Contains(key []byte) bool {
	// hashing.Sum64, with a key of 9 to 16 bytes hashed here, without a
	// call (xxh3mid).
	var h uint64
	if xxh3mid.In(len(key)) {
		h = xxh3mid.Hash(key, f.cfg.Seed)
	} else {
		h = hashing.Sum64(key, f.cfg.Seed)
	}
	return f.ContainsHash64(h)
}

// ContainsString is Contains for a string key, without copying it.
func (f *Filter) ContainsString(key string) bool {
	return f.ContainsHash64(hashing.Sum64String(key, f.cfg.Seed))
}

// ContainsHash64 is Contains for a key's 64-bit hash (hashing.Sum64 with
// the filter's seed, or the hash the Builder's AddHash64 was given). The
// zero Filter answers false.
func (f *Filter) ContainsHash64(h uint64) bool {
	if f.shards == 0 {
		return false
	}
	s, _ := bits.Mul64(h, f.shards)
	m0, m1 := f.meta[s], f.meta[s+1]
	first := m0 & offMask
	slots := ((m1 & offMask) - first) * 128
	hh := remix(h, attemptSeed(m0>>offBits))
	start, _ := bits.Mul64(hh, slots-127)
	c0, c1, want := row(hh, f.r)
	return f.match(first+start>>7, uint(start&127), c0, c1, want)
}

// match reports whether the r parities of the row (c0, c1) at offset off
// of block b are want's bits, stopping at the first column that differs
// (an absent key reads about two columns). The shifted row covers three
// of a column's four words (blocks b and b+1): the first three when off <
// 64, the last three otherwise; both cases are one loop over three word
// streams with three masks, chosen without a branch.
func (f *Filter) match(b uint64, off uint, c0, c1 uint64, want uint32) bool {
	// The row shifted left by off covers, as three words, the column
	// words at 128-bit position off>>6 … off>>6 + 2 of blocks b and b+1,
	// shifted by o = off mod 64 within them (shifts below 64: no masking).
	o := off & 63
	m0 := c0 << o
	m1 := c1<<o | c0>>1>>(63-o)
	m2 := c1 >> 1 >> (63 - o)
	n := 2 * uint64(f.r)
	hi := uint64(off >> 6) // 1: the row's bits start in the block's second word
	p := b * n
	d := f.data[p : p+2*n : p+2*n]
	s0 := d[hi : hi+n-1]
	s1 := d[1+hi*(n-1):]
	s2 := d[n+hi:]
	s1, s2 = s1[:len(s0)], s2[:len(s0)]
	j := 0
	// Four columns per test: fewer branches, and an absent key still
	// stops after the first four columns with probability 15/16.
	for ; j+6 < len(s0); j += 8 {
		x0 := s0[j]&m0 ^ s1[j]&m1 ^ s2[j]&m2
		x1 := s0[j+2]&m0 ^ s1[j+2]&m1 ^ s2[j+2]&m2
		x2 := s0[j+4]&m0 ^ s1[j+4]&m1 ^ s2[j+4]&m2
		x3 := s0[j+6]&m0 ^ s1[j+6]&m1 ^ s2[j+6]&m2
		p := bits.OnesCount64(x0)&1 | bits.OnesCount64(x1)&1<<1 | bits.OnesCount64(x2)&1<<2 | bits.OnesCount64(x3)&1<<3
		if (uint32(p)^want)&15 != 0 {
			return false
		}
		want >>= 4
	}
	for ; j < len(s0); j += 2 {
		x := s0[j]&m0 ^ s1[j]&m1 ^ s2[j]&m2
		if (uint32(bits.OnesCount64(x))^want)&1 != 0 {
			return false
		}
		want >>= 1
	}
	return true
}

// parities returns the r parities of the row (c0, c1) shifted to offset
// off of block b: bit j is the parity of the row and result column j.
func (f *Filter) parities(b uint64, off uint, c0, c1 uint64) uint32 {
	// left = row << off: the row's bits in block b; right = row >>
	// (128 − off): those in block b+1 (0 for off = 0). Go's shifts by 64
	// or more give 0, which every case below relies on.
	k := 128 - off
	l0 := c0 << off
	l1 := c1<<off | c0>>(64-off) | c0<<(off-64)
	r0 := c0>>k | c1<<(64-k) | c1>>(k-64)
	r1 := c1 >> k
	n := 2 * uint64(f.r)
	p := b * n
	blk := f.data[p : p+2*n : p+2*n]
	a, c := blk[:n], blk[n:]
	c = c[:len(a)]
	var res uint32
	for j := 1; j < len(a); j += 2 {
		x := a[j-1]&l0 ^ a[j]&l1 ^ c[j-1]&r0 ^ c[j]&r1
		res |= uint32(bits.OnesCount64(x)&1) << (j >> 1)
	}
	return res
}

// batchChunk is the number of keys ContainsBatch hashes before it reads
// their blocks.
const batchChunk = 64

// touchMask is 0. ContainsBatch ands the words it loads early with it:
// a value the compiler cannot prove unused, so the loads (whose only
// purpose is to start the cache misses of a chunk's keys together) are
// not eliminated as dead code. Never written: reading it races nothing.
var touchMask uint64

// ContainsBatch sets out[i] to Contains(keys[i]) for every key and returns
// out[:len(keys)] (a new slice if out is too short). It hashes a chunk of
// keys and touches their blocks before it computes their parities, so
// that the CPU overlaps their cache misses; it allocates nothing when
// len(out) ≥ len(keys).
func (f *Filter) ContainsBatch(keys [][]byte, out []bool) []bool {
	if len(out) < len(keys) {
		out = make([]bool, len(keys))
	}
	out = out[:len(keys)]
	all := out
	if f.shards == 0 {
		clear(out)
		return all
	}
	var hs [batchChunk]uint64
	var pos [batchChunk]uint64
	n := 2 * uint64(f.r)
	mask := touchMask
	for len(keys) > 0 {
		c := min(len(keys), batchChunk)
		// Three passes over a chunk: hash the keys (no memory but the
		// keys'), then find and touch their blocks, then compute. The
		// middle pass is a few instructions per key, so the processor's
		// window holds many keys' loads at once and their misses overlap
		// (hashing inside it left room for about two).
		for i, k := range keys[:c] {
			if xxh3mid.In(len(k)) {
				hs[i] = xxh3mid.Hash(k, f.cfg.Seed)
			} else {
				hs[i] = hashing.Sum64(k, f.cfg.Seed)
			}
		}
		for i, h := range hs[:c] {
			s, _ := bits.Mul64(h, f.shards)
			m0, m1 := f.meta[s], f.meta[s+1]
			first := m0 & offMask
			slots := ((m1 & offMask) - first) * 128
			hh := remix(h, attemptSeed(m0>>offBits))
			start, _ := bits.Mul64(hh, slots-127)
			pos[i] = (first+start>>7)<<7 | start&127
			q := (first + start>>7) * n
			// Touch every cache line of the two blocks the row reads
			// (a word in every 8, and the last), starting their loads;
			// the value joins hs[i] through touchMask (0, but not a
			// constant), so the compiler keeps the loads.
			t := f.data[q : q+2*n : q+2*n]
			x := t[len(t)-1]
			for w := 0; w < len(t); w += 8 {
				x ^= t[w]
			}
			hs[i] = hh ^ x&mask
		}
		for i, hh := range hs[:c] {
			c0, c1, want := row(hh, f.r)
			out[i] = f.match(pos[i]>>7, uint(pos[i]&127), c0, c1, want)
		}
		keys, out = keys[c:], out[c:]
	}
	return all
}

// Kind returns "ribbon".
func (f *Filter) Kind() string { return "ribbon" }

// Capacity is the number of keys the filter was planned for (New and
// Finish: the keys it holds; a plan's builder: the plan's).
func (f *Filter) Capacity() uint64 { return f.capacity }

// Bits is the filter's memory in bits: the shard table and the blocks
// (with the zero block after the last), in 64-bit words.
func (f *Filter) Bits() uint64 { return uint64(len(f.meta)+len(f.data)) * 64 }

// N is the number of distinct keys (distinct 64-bit hashes) the filter
// holds.
func (f *Filter) N() uint64 { return f.n }

// Seed is the seed of the key hash.
func (f *Filter) Seed() uint64 { return f.cfg.Seed }

// ResultBits is r (0 for the zero Filter).
func (f *Filter) ResultBits() int { return int(f.r) }

// Shards is the number of shards, Slots the number of slots (128 per
// block, without the zero block).
func (f *Filter) Shards() uint64 { return f.shards }
func (f *Filter) Slots() uint64 {
	if f.shards == 0 {
		return 0
	}
	return 128 * (f.meta[f.shards] & offMask)
}

// EstimatedFPR is the rate at which the filter answers yes to a key not in
// it: 2^-r (theory.FPRibbon), whatever the number of keys (0 for the zero
// Filter).
func (f *Filter) EstimatedFPR() float64 {
	if f.shards == 0 {
		return 0
	}
	return theory.FPRibbon(int(f.r))
}

// FillRatio is 0 for the zero Filter and 1 otherwise.
func (f *Filter) FillRatio() float64 {
	if f.shards == 0 {
		return 0
	}
	return 1
}

// ApproxCount is N.
func (f *Filter) ApproxCount() float64 { return float64(f.n) }

// BitsPerKey is Bits / N (NaN for N = 0).
func (f *Filter) BitsPerKey() float64 {
	if f.n == 0 {
		return math.NaN()
	}
	return float64(f.Bits()) / float64(f.n)
}
