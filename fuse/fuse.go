// Package fuse implements binary fuse filters (Graf and Lemire, "Binary
// Fuse Filters: Fast and Smaller Than Xor Filters", 2022): static filters,
// built once from a whole key set, 3- or 4-wise, with 8-, 16- or 32-bit
// fingerprints.
//
// A filter is an array of cells of f-bit fingerprints cut into segments of
// a power-of-two length (§3); a key maps to arity consecutive segments and
// one cell in each, and construction (§3, Algorithm 3: peeling the
// hypergraph of keys, then assigning cells in reverse peeling order) makes
// the xor of a key's cells its fingerprint. A query hashes the key, reads
// arity cells and compares: no false negative, and an absent key answers
// yes with probability 2^-f. Array sizes are the paper's (§4, Table 3;
// theory.FuseLayout): about 1.125·n cells 3-wise and 1.075·n 4-wise for
// large n, so 9.0 and 8.6 bits per key at f = 8.
//
// Keys are hashed once with hashing.Sum64 (seeded 64-bit xxh3); a Builder
// holds those hashes (8 bytes per key) and each construction attempt
// re-mixes them with an attempt seed recorded in the filter, so a failed
// attempt retries without the keys. Construction fails (an error, never a
// filter missing a key) after MaxAttempts attempts, which at any size is
// far less likely than a hardware fault. Duplicate keys are tolerated:
// after a failed attempt the hashes are sorted and deduplicated.
//
// A Filter is immutable: every method is safe for concurrent use, and it
// has no Add, Remove or Union (a static kind: rebuild it from the keys).
package fuse

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

// MaxKeys is the largest number of keys a filter holds (theory.MaxFuseKeys:
// cell indexes are 32-bit).
const MaxKeys = theory.MaxFuseKeys

// MaxAttempts bounds the construction attempts of Finish and New.
const MaxAttempts = 64

var zero = bitvec.Zero{Pkg: "fuse", Type: "Filter", Ctors: "New or NewBuilder and Finish"}

// Config selects a binary fuse filter.
type Config struct {
	// Arity is the number of cells a key maps to: 3 or 4 (0: 3). 4-wise
	// filters are about 4.5% smaller (1.075 cells per key against 1.125)
	// and read one more cell per query.
	Arity int
	// FingerprintBits is 8, 16 or 32 (0: 8): the false-positive rate is
	// 2^-FingerprintBits.
	FingerprintBits int
	// Seed seeds the key hash (hashing.Sum64).
	Seed uint64
}

func (c Config) norm() (Config, error) {
	if c.Arity == 0 {
		c.Arity = 3
	}
	if c.FingerprintBits == 0 {
		c.FingerprintBits = 8
	}
	if c.Arity != 3 && c.Arity != 4 {
		return c, fmt.Errorf("fuse: arity %d: want 3 or 4: %w", c.Arity, ErrParam)
	}
	switch c.FingerprintBits {
	case 8, 16, 32:
	default:
		return c, fmt.Errorf("fuse: %d-bit fingerprints: want 8, 16 or 32: %w", c.FingerprintBits, ErrParam)
	}
	return c, nil
}

// layout is a filter's geometry and attempt seed: what a query needs
// besides the cells.
type layout struct {
	seed      uint64 // the successful attempt's seed, mixed into the key hash
	segLen    uint32 // cells per segment, a power of two
	segMask   uint32 // segLen − 1
	segCount  uint32 // segments a key's first cell can be in
	segCells  uint32 // segCount·segLen: the range of the first cell
	cells     uint32 // (segCount + arity − 1)·segLen
	arity     uint32
	fingerBit uint32
}

// shape selects the query's code path: arity and fingerprint width, one
// switch per query (never per probe).
type shape uint8

const (
	shapeZero shape = iota
	shape3x8
	shape3x16
	shape3x32
	shape4x8
	shape4x16
	shape4x32
)

// Filter is a binary fuse filter. It is immutable: every method is safe
// for concurrent use. The zero Filter answers as an empty filter and
// refuses to be written (an error wrapping ErrParam).
type Filter struct {
	cfg      Config
	lay      layout
	shape    shape
	words    []uint64 // the cells, packed little-endian: the file's payload
	fp8      []uint8  // views of words (one of them set)
	fp16     []uint16
	fp32     []uint32
	n        uint64
	capacity uint64
	attempts int // construction attempts (not in files; for tests)
}

// mix is the attempt's re-mix of a key's 64-bit hash (xorfilter's
// mixsplit: the murmur3 finalizer of h + seed).
func mix(h, seed uint64) uint64 {
	h += seed
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// fourth is the in-segment offset source of a 4-wise key's last cell: the
// high half of hh times an odd constant, which depends on all of hh's bits
// (the first cell uses hh's high bits, the second and third its bits 0–35).
func fourth(hh uint64) uint32 { return uint32((hh * 0x9E3779B97F4A7C15) >> 40) }

// positions3 returns a 3-wise key's cells (§3: the first cell's segment is
// ⌊hh·segCells / 2^64⌋'s, a multiply-high; the others are in the next
// segments, at offsets xored from hh's low bits).
func (l *layout) positions3(hh uint64) (uint32, uint32, uint32) {
	hi, _ := bits.Mul64(hh, uint64(l.segCells))
	h0 := uint32(hi)
	h1 := (h0 + l.segLen) ^ (uint32(hh>>18) & l.segMask)
	h2 := (h0 + 2*l.segLen) ^ (uint32(hh) & l.segMask)
	return h0, h1, h2
}

// positions4 returns a 4-wise key's cells.
func (l *layout) positions4(hh uint64) (uint32, uint32, uint32, uint32) {
	hi, _ := bits.Mul64(hh, uint64(l.segCells))
	h0 := uint32(hi)
	h1 := (h0 + l.segLen) ^ (uint32(hh>>18) & l.segMask)
	h2 := (h0 + 2*l.segLen) ^ (uint32(hh) & l.segMask)
	h3 := (h0 + 3*l.segLen) ^ (fourth(hh) & l.segMask)
	return h0, h1, h2, h3
}

type finger interface{ ~uint8 | ~uint16 | ~uint32 }

// Contains reports whether key may be in the set: false means certainly
// not; true for a key not in the set with probability 2^-FingerprintBits.
//
// Its body is ContainsHash64's, repeated: a call less per query (the
// single-query goal is xorfilter's time, hashing included).
func (f *Filter) Contains(key []byte) bool {
	// hashing.Sum64, with a key of 9 to 16 bytes hashed here, without a
	// call (xxh3mid).
	var h uint64
	if xxh3mid.In(len(key)) {
		h = xxh3mid.Hash(key, f.cfg.Seed)
	} else {
		h = hashing.Sum64(key, f.cfg.Seed)
	}
	l := &f.lay
	hh := mix(h, l.seed)
	hi, _ := bits.Mul64(hh, uint64(l.segCells))
	h0 := uint32(hi)
	h1 := (h0 + l.segLen) ^ (uint32(hh>>18) & l.segMask)
	h2 := (h0 + 2*l.segLen) ^ (uint32(hh) & l.segMask)
	x := hh ^ hh>>32
	switch f.shape {
	case shape3x8:
		fp := f.fp8
		return uint8(x) == fp[h0]^fp[h1]^fp[h2]
	case shape3x16:
		fp := f.fp16
		return uint16(x) == fp[h0]^fp[h1]^fp[h2]
	case shape3x32:
		fp := f.fp32
		return uint32(x) == fp[h0]^fp[h1]^fp[h2]
	case shape4x8:
		fp := f.fp8
		h3 := (h0 + 3*l.segLen) ^ (fourth(hh) & l.segMask)
		return uint8(x) == fp[h0]^fp[h1]^fp[h2]^fp[h3]
	case shape4x16:
		fp := f.fp16
		h3 := (h0 + 3*l.segLen) ^ (fourth(hh) & l.segMask)
		return uint16(x) == fp[h0]^fp[h1]^fp[h2]^fp[h3]
	case shape4x32:
		fp := f.fp32
		h3 := (h0 + 3*l.segLen) ^ (fourth(hh) & l.segMask)
		return uint32(x) == fp[h0]^fp[h1]^fp[h2]^fp[h3]
	}
	return false
}

// ContainsString is Contains for a string key, without copying it.
func (f *Filter) ContainsString(key string) bool {
	return f.ContainsHash64(hashing.Sum64String(key, f.cfg.Seed))
}

// ContainsHash64 is Contains for a key's 64-bit hash (hashing.Sum64 with
// the filter's seed, or the hash the Builder's AddHash64 was given). The
// cells' indexes are computed once; one switch on the shape (arity and
// width) picks the loads. The zero Filter's indexes are 0 and its shape
// answers false.
func (f *Filter) ContainsHash64(h uint64) bool {
	l := &f.lay
	hh := mix(h, l.seed)
	hi, _ := bits.Mul64(hh, uint64(l.segCells))
	h0 := uint32(hi)
	h1 := (h0 + l.segLen) ^ (uint32(hh>>18) & l.segMask)
	h2 := (h0 + 2*l.segLen) ^ (uint32(hh) & l.segMask)
	x := hh ^ hh>>32
	switch f.shape {
	case shape3x8:
		fp := f.fp8
		return uint8(x) == fp[h0]^fp[h1]^fp[h2]
	case shape3x16:
		fp := f.fp16
		return uint16(x) == fp[h0]^fp[h1]^fp[h2]
	case shape3x32:
		fp := f.fp32
		return uint32(x) == fp[h0]^fp[h1]^fp[h2]
	case shape4x8:
		fp := f.fp8
		h3 := (h0 + 3*l.segLen) ^ (fourth(hh) & l.segMask)
		return uint8(x) == fp[h0]^fp[h1]^fp[h2]^fp[h3]
	case shape4x16:
		fp := f.fp16
		h3 := (h0 + 3*l.segLen) ^ (fourth(hh) & l.segMask)
		return uint16(x) == fp[h0]^fp[h1]^fp[h2]^fp[h3]
	case shape4x32:
		fp := f.fp32
		h3 := (h0 + 3*l.segLen) ^ (fourth(hh) & l.segMask)
		return uint32(x) == fp[h0]^fp[h1]^fp[h2]^fp[h3]
	}
	return false
}

// batchChunk is the number of keys ContainsBatch hashes before it reads
// their cells.
const batchChunk = 256

// batchDirect is the size, in bytes, up to which ContainsBatch queries
// key by key: a filter that fits a core's share of the cache. A variable
// so that the tests run the chunked path on small filters.
var batchDirect = 4 << 20

// ContainsBatch sets out[i] to Contains(keys[i]) for every key and returns
// out[:len(keys)] (a new slice if out is too short). It works by chunks:
// it hashes the chunk's keys and computes all their cells first (no
// memory access but the keys), then reads the cells, so that the CPU
// issues the chunk's cache misses together instead of a few queries'
// worth at a time. A filter of at most batchDirect bytes (in the cache:
// no misses to overlap) is queried key by key, which is faster there. It
// allocates nothing when len(out) ≥ len(keys).
func (f *Filter) ContainsBatch(keys [][]byte, out []bool) []bool {
	if len(out) < len(keys) {
		out = make([]bool, len(keys))
	}
	out = out[:len(keys)]
	if f.shape == shapeZero {
		clear(out)
		return out
	}
	if len(f.words) <= batchDirect/8 {
		for i, k := range keys {
			out[i] = f.Contains(k)
		}
		return out
	}
	var (
		x              [batchChunk]uint64
		p0, p1, p2, p3 [batchChunk]uint32
	)
	l := &f.lay
	res := out
	for len(keys) > 0 {
		c := min(len(keys), batchChunk)
		for i, k := range keys[:c] {
			if xxh3mid.In(len(k)) {
				x[i] = xxh3mid.Hash(k, f.cfg.Seed)
			} else {
				x[i] = hashing.Sum64(k, f.cfg.Seed)
			}
		}
		for i := range c {
			hh := mix(x[i], l.seed)
			hi, _ := bits.Mul64(hh, uint64(l.segCells))
			h0 := uint32(hi)
			p0[i] = h0
			p1[i] = (h0 + l.segLen) ^ (uint32(hh>>18) & l.segMask)
			p2[i] = (h0 + 2*l.segLen) ^ (uint32(hh) & l.segMask)
			p3[i] = (h0 + 3*l.segLen) ^ (fourth(hh) & l.segMask)
			x[i] = hh ^ hh>>32
		}
		o := out[:c]
		switch f.shape {
		case shape3x8:
			fp := f.fp8
			for i := range o {
				o[i] = uint8(x[i]) == fp[p0[i]]^fp[p1[i]]^fp[p2[i]]
			}
		case shape3x16:
			fp := f.fp16
			for i := range o {
				o[i] = uint16(x[i]) == fp[p0[i]]^fp[p1[i]]^fp[p2[i]]
			}
		case shape3x32:
			fp := f.fp32
			for i := range o {
				o[i] = uint32(x[i]) == fp[p0[i]]^fp[p1[i]]^fp[p2[i]]
			}
		case shape4x8:
			fp := f.fp8
			for i := range o {
				o[i] = uint8(x[i]) == fp[p0[i]]^fp[p1[i]]^fp[p2[i]]^fp[p3[i]]
			}
		case shape4x16:
			fp := f.fp16
			for i := range o {
				o[i] = uint16(x[i]) == fp[p0[i]]^fp[p1[i]]^fp[p2[i]]^fp[p3[i]]
			}
		case shape4x32:
			fp := f.fp32
			for i := range o {
				o[i] = uint32(x[i]) == fp[p0[i]]^fp[p1[i]]^fp[p2[i]]^fp[p3[i]]
			}
		}
		keys, out = keys[c:], out[c:]
	}
	return res
}

// Kind returns "fuse".
func (f *Filter) Kind() string { return "fuse" }

// Capacity is the number of keys the filter was planned for (New and
// Finish: the keys it holds; a plan's builder: the plan's).
func (f *Filter) Capacity() uint64 { return f.capacity }

// Bits is the filter's memory in bits: its cells, in whole 64-bit words.
func (f *Filter) Bits() uint64 { return uint64(len(f.words)) * 64 }

// N is the number of distinct keys (distinct 64-bit hashes) the filter
// holds.
func (f *Filter) N() uint64 { return f.n }

// Seed is the seed of the key hash.
func (f *Filter) Seed() uint64 { return f.cfg.Seed }

// Arity is the number of cells a key maps to (0 for the zero Filter).
func (f *Filter) Arity() int { return int(f.lay.arity) }

// FingerprintBits is the fingerprint width (0 for the zero Filter).
func (f *Filter) FingerprintBits() int { return int(f.lay.fingerBit) }

// Cells is the length of the array in cells, SegmentLength the length of
// a segment.
func (f *Filter) Cells() uint64         { return uint64(f.lay.cells) }
func (f *Filter) SegmentLength() uint64 { return uint64(f.lay.segLen) }

// AttemptSeed is the seed of the construction attempt that succeeded.
func (f *Filter) AttemptSeed() uint64 { return f.lay.seed }

// EstimatedFPR is the rate at which the filter answers yes to a key not
// in it: 2^-FingerprintBits (theory.FPFuse), whatever the number of keys
// (0 for the zero Filter).
func (f *Filter) EstimatedFPR() float64 {
	if f.shape == shapeZero {
		return 0
	}
	return theory.FPFuse(int(f.lay.fingerBit))
}

// FillRatio is 0 for the zero Filter and 1 otherwise: every cell of a
// built filter is part of its state.
func (f *Filter) FillRatio() float64 {
	if f.shape == shapeZero {
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
