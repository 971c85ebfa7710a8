// Package sbbf implements the split-block Bloom filter of the Parquet
// format (parquet-format's BloomFilter.md), byte for byte: the filter that
// Parquet writers store per column chunk and that Arrow, DuckDB, Impala,
// Spark and parquet-go read.
//
// The filter is z blocks of 256 bits (1 ≤ z < 2^31), each eight 32-bit
// words. A key is hashed with XXH64, seed 0, of its bytes (for a Parquet
// value: its plain encoding; an INT64 is its 8 little-endian bytes, a
// BYTE_ARRAY its bytes without the length prefix) to h. The block is
// ((h >> 32)·z) >> 32 (multiply-shift, no division); with x the low 32
// bits of h, the key sets bit (x·salt_i mod 2^32) >> 27 of word i of its
// block for each of the format's eight odd salts. Contains tests those
// eight bits. Bytes returns the bitset exactly as Parquet stores it (block
// after block, each word little-endian), and FromBytes takes it back, so a
// filter built here equals the one a Parquet library builds from the same
// values and number of blocks.
//
// Guarantee: no false negatives, for any sequence of Add, AddHash and
// Union calls, and for decoded filters. The rate for n distinct keys is
// theory.FPSplitBlock(n, z), which reproduces the format's own table
// (10 bits per key: 1 %).
//
// Sizing: NewForBitsPerKey sizes as parquet-go does (⌈⌈n·bits/8⌉/32⌉
// blocks, at least one); NewWithEstimates takes the fewest blocks whose
// modelled rate meets a target (theory.SizeSplitBlock).
//
// The hash is fixed by the format: the filter has no seed (Seed is 0).
//
// Cost: Add and Contains hash once, touch one 32-byte block (half a cache
// line), and neither allocates nor divides.
//
// Concurrency: read methods (Contains*, Ones, FillRatio, EstimatedFPR,
// Clone, Equal, Bytes, WriteTo, MarshalBinary) may run concurrently with
// each other; Add, AddHash, Union, Clear, ReadFrom and UnmarshalBinary need
// exclusive access.
//
// The zero Filter is an empty filter with no room: its read methods answer
// as for an empty filter, WriteTo, MarshalBinary and Union return an error
// wrapping ErrParam, and Add and AddHash panic, changing nothing.
package sbbf

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"

	"github.com/cespare/xxhash/v2"

	"github.com/bloomlab/bloomlab/internal/bitvec"
	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/theory"
)

// BlockBytes is the size of a block in bytes (256 bits).
const BlockBytes = theory.SplitBlockBits / 8

// MaxBlocks is the largest number of blocks the format allows (z < 2^31).
const MaxBlocks = theory.MaxSplitBlocks

// Salt is the format's eight odd 32-bit constants, one per word of a
// block.
var Salt = [8]uint32{
	0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d,
	0x705495c7, 0x2df1424b, 0x9efc4947, 0x5c6bfb31,
}

// Salt as constants, for the unrolled mask.
const (
	salt0 = 0x47b6137b
	salt1 = 0x44974d91
	salt2 = 0x8824ad5b
	salt3 = 0xa2b7289d
	salt4 = 0x705495c7
	salt5 = 0x2df1424b
	salt6 = 0x9efc4947
	salt7 = 0x5c6bfb31
)

// Errors returned by this package wrap these values.
var (
	ErrParam        = kind.ErrParam
	ErrIncompatible = kind.ErrIncompatible
)

// wordsPerBlock is the number of uint64 words of a block: the format's
// 32-bit words 2i and 2i+1 are the low and high halves of word i, so the
// little-endian bytes of the uint64 words are the format's bytes.
const wordsPerBlock = 4

// Filter is a split-block Bloom filter. Create one with New,
// NewForBitsPerKey, NewWithEstimates or FromBytes.
type Filter struct {
	bits     []uint64 // wordsPerBlock per block
	blocks   uint64
	n        uint64 // Add calls
	capacity uint64 // design n, 0 if unknown
}

var zero = bitvec.Zero{Pkg: "sbbf", Type: "Filter", Ctors: "New, NewForBitsPerKey, NewWithEstimates or FromBytes"}

// New returns an empty filter of the given number of 256-bit blocks, in
// [1, 2^31 − 1].
func New(blocks uint64) (*Filter, error) {
	if blocks < 1 || blocks > MaxBlocks {
		return nil, fmt.Errorf("sbbf: %d blocks out of range [1, 2^31 − 1]: %w", blocks, ErrParam)
	}
	if blocks*wordsPerBlock > math.MaxInt/8 {
		return nil, fmt.Errorf("sbbf: %d blocks exceed what a 32-bit platform can allocate: %w", blocks, ErrParam)
	}
	return &Filter{bits: make([]uint64, blocks*wordsPerBlock), blocks: blocks}, nil
}

// BlocksFor returns the number of blocks parquet-go gives a filter for n
// values at bitsPerKey bits each (its bloom.NumSplitBlocksOf:
// ⌈⌈n·bitsPerKey/8⌉ bytes / 32⌉), at least one. bitsPerKey may be
// fractional; for whole numbers the result is parquet-go's exactly. It
// returns 0 if the result exceeds MaxBlocks or the arguments are invalid.
func BlocksFor(n uint64, bitsPerKey float64) uint64 {
	if !(bitsPerKey > 0) || math.IsInf(bitsPerKey, 0) {
		return 0
	}
	bytes := math.Ceil(float64(n) * bitsPerKey / 8)
	if b := math.Trunc(bitsPerKey); b == bitsPerKey && n < 1<<53/(uint64(b)+1) {
		bytes = float64((n*uint64(b) + 7) / 8) // exact integer arithmetic
	}
	blocks := math.Ceil(bytes / BlockBytes)
	if blocks > MaxBlocks {
		return 0
	}
	return max(1, uint64(blocks))
}

// NewForBitsPerKey returns an empty filter sized as parquet-go sizes one
// for n values at bitsPerKey bits per value (BlocksFor), recording n as its
// capacity.
func NewForBitsPerKey(n uint64, bitsPerKey float64) (*Filter, error) {
	b := BlocksFor(n, bitsPerKey)
	if b == 0 {
		return nil, fmt.Errorf("sbbf: %v bits per key for %d keys: out of range (0 < bits, at most 2^31 − 1 blocks): %w", bitsPerKey, n, ErrParam)
	}
	f, err := New(b)
	if err != nil {
		return nil, err
	}
	f.capacity = n
	return f, nil
}

// NewWithEstimates returns an empty filter of the fewest blocks whose rate
// for n distinct keys, by theory.FPSplitBlock, is at most fpr.
func NewWithEstimates(n uint64, fpr float64) (*Filter, error) {
	b, err := theory.SizeSplitBlock(n, fpr)
	if err != nil {
		return nil, fmt.Errorf("sbbf: %w: %w", err, ErrParam)
	}
	f, err := New(b)
	if err != nil {
		return nil, err
	}
	f.capacity = n
	return f, nil
}

// FromBytes returns the filter whose bitset, as Parquet stores it, is b (a
// whole number of 32-byte blocks, at least one). The bytes are copied.
// Its N and Capacity are 0 (the bitset does not record them).
func FromBytes(b []byte) (*Filter, error) {
	if len(b) == 0 || len(b)%BlockBytes != 0 {
		return nil, fmt.Errorf("sbbf: a bitset of %d bytes, want a positive multiple of %d: %w", len(b), BlockBytes, ErrParam)
	}
	f, err := New(uint64(len(b) / BlockBytes))
	if err != nil {
		return nil, err
	}
	for i := range f.bits {
		f.bits[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return f, nil
}

// Bytes returns the bitset as Parquet stores it: blocks in order, each
// eight little-endian 32-bit words (32 bytes per block). It is a copy.
func (f *Filter) Bytes() []byte { return f.AppendBytes(nil) }

// AppendBytes appends the bitset as Parquet stores it to dst.
func (f *Filter) AppendBytes(dst []byte) []byte {
	for _, w := range f.bits {
		dst = binary.LittleEndian.AppendUint64(dst, w)
	}
	return dst
}

// Hash returns the format's hash of key: XXH64 with seed 0.
func Hash(key []byte) uint64 { return xxhash.Sum64(key) }

// Kind returns "sbbf".
func (f *Filter) Kind() string { return "sbbf" }

// Blocks returns the number of 256-bit blocks.
func (f *Filter) Blocks() uint64 { return f.blocks }

// M returns the number of bits: 256 per block.
func (f *Filter) M() uint64 { return f.blocks * theory.SplitBlockBits }

// Bits returns the memory of the filter's state in bits: M.
func (f *Filter) Bits() uint64 { return f.M() }

// K returns the number of bits a key sets: 8, one per word of its block.
func (f *Filter) K() int { return theory.SplitBlockWords }

// Seed returns 0: the format hashes with XXH64 seed 0.
func (f *Filter) Seed() uint64 { return 0 }

// N returns the number of Add calls (repeats included).
func (f *Filter) N() uint64 { return f.n }

// Capacity returns the number of keys the filter was designed for (0 if
// unknown); informational, stored in bloomlab files.
func (f *Filter) Capacity() uint64 { return f.capacity }

// SetCapacity records the number of keys the filter was designed for.
func (f *Filter) SetCapacity(n uint64) { f.capacity = n }

// block returns the index of the first word of h's block: multiply-shift
// of the upper 32 bits.
func (f *Filter) block(h uint64) uint64 {
	return ((h >> 32) * f.blocks) >> 32 * wordsPerBlock
}

// masks returns the bits of x in the block's four 64-bit words: bit
// (x·salt_i) >> 27 of 32-bit word i, word 2j in the low half of 64-bit
// word j and word 2j+1 in the high half.
func masks(x uint32) (m0, m1, m2, m3 uint64) {
	m0 = 1<<((x*salt0)>>27) | 1<<(32+(x*salt1)>>27)
	m1 = 1<<((x*salt2)>>27) | 1<<(32+(x*salt3)>>27)
	m2 = 1<<((x*salt4)>>27) | 1<<(32+(x*salt5)>>27)
	m3 = 1<<((x*salt6)>>27) | 1<<(32+(x*salt7)>>27)
	return
}

// Add inserts key.
func (f *Filter) Add(key []byte) { f.AddHash(xxhash.Sum64(key)) }

// AddString inserts key.
func (f *Filter) AddString(key string) { f.AddHash(xxhash.Sum64String(key)) }

// AddHash inserts the key whose format hash (Hash) is h; Parquet
// libraries' filter_insert.
func (f *Filter) AddHash(h uint64) {
	if f.blocks == 0 {
		zero.Panic("AddHash")
	}
	i := f.block(h)
	b := f.bits[i : i+wordsPerBlock : i+wordsPerBlock]
	m0, m1, m2, m3 := masks(uint32(h))
	b[0] |= m0
	b[1] |= m1
	b[2] |= m2
	b[3] |= m3
	f.n++
}

// Contains reports whether key may have been added: false means certainly
// not.
func (f *Filter) Contains(key []byte) bool { return f.ContainsHash(xxhash.Sum64(key)) }

// ContainsString reports whether key may have been added.
func (f *Filter) ContainsString(key string) bool {
	return f.ContainsHash(xxhash.Sum64String(key))
}

// ContainsHash reports whether the key whose format hash is h may have
// been added; Parquet libraries' filter_check.
func (f *Filter) ContainsHash(h uint64) bool {
	if f.blocks == 0 {
		return false
	}
	i := f.block(h)
	b := f.bits[i : i+wordsPerBlock : i+wordsPerBlock]
	m0, m1, m2, m3 := masks(uint32(h))
	return ((b[0]&m0)^m0)|((b[1]&m1)^m1)|((b[2]&m2)^m2)|((b[3]&m3)^m3) == 0
}

// Ones returns the number of bits set.
func (f *Filter) Ones() uint64 {
	var c uint64
	for _, w := range f.bits {
		c += uint64(bits.OnesCount64(w))
	}
	return c
}

// FillRatio returns the fraction of bits set (0 for the zero Filter).
func (f *Filter) FillRatio() float64 {
	if f.blocks == 0 {
		return 0
	}
	return float64(f.Ones()) / float64(f.M())
}

// EstimatedFPR returns the false-positive rate of the current bits: the
// mean over blocks of the product over the block's eight words of the
// word's fill (a query tests one uniform bit of each word).
func (f *Filter) EstimatedFPR() float64 {
	if f.blocks == 0 {
		return 0
	}
	var sum float64
	for i := 0; i < len(f.bits); i += wordsPerBlock {
		p := 1.0
		for _, w := range f.bits[i : i+wordsPerBlock] {
			p *= float64(bits.OnesCount32(uint32(w))) / 32 * float64(bits.OnesCount32(uint32(w>>32))) / 32
		}
		sum += p
	}
	return sum / float64(f.blocks)
}

// Union sets f to the union of f and g, which must have the same number of
// blocks (or an error wrapping ErrIncompatible, and no change): a key
// added to either is in f.
func (f *Filter) Union(g *Filter) error {
	if f.blocks == 0 || g.blocks == 0 {
		return zero.Err("Union")
	}
	if f.blocks != g.blocks {
		return fmt.Errorf("sbbf: union of %d and %d blocks: %w", f.blocks, g.blocks, ErrIncompatible)
	}
	for i, w := range g.bits {
		f.bits[i] |= w
	}
	f.n += g.n
	return nil
}

// Clear removes every key.
func (f *Filter) Clear() {
	clear(f.bits)
	f.n = 0
}

// Clone returns an independent copy.
func (f *Filter) Clone() *Filter {
	g := *f
	g.bits = append([]uint64(nil), f.bits...)
	return &g
}

// Equal reports whether f and g have the same blocks and bits (N and
// Capacity are not compared).
func (f *Filter) Equal(g *Filter) bool {
	if f.blocks != g.blocks {
		return false
	}
	for i, w := range f.bits {
		if g.bits[i] != w {
			return false
		}
	}
	return true
}
