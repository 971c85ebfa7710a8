// Package fuse implements binary fuse filters (Graf and Lemire, "Binary
// Fuse Filters: Fast and Smaller Than Xor Filters", 2022): static filters,
// built once from a whole key set, 3- or 4-wise, with 8-, 16- or 32-bit
// fingerprints.
//
// STUB (issue 27): the exported API below is the contract the command, the
// server and the lab build on; the construction is a placeholder (an exact
// set of 64-bit hashes) until the real filter lands.
package ribbon

import (
	"errors"
	"fmt"
	"slices"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/kind"
)

// ErrParam wraps every parameter error.
var ErrParam = kind.ErrParam

// Config selects a Ribbon filter.
type Config struct {
	// ResultBits is r, 1 … 32: the rate is 2^-r (0: 8).
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

// Filter is a Ribbon filter. It is immutable: every method is safe
// for concurrent use.
type Filter struct {
	cfg      Config
	hashes   []uint64 // STUB
	n        uint64
	capacity uint64
}

// Builder holds the 64-bit hashes of the keys (8 bytes per key) until
// Finish builds the filter from them.
type Builder struct {
	cfg     Config
	hashes  []uint64
	maxBits uint64
}

// NewBuilder returns an empty Builder.
func NewBuilder(c Config) (*Builder, error) {
	c, err := c.norm()
	if err != nil {
		return nil, err
	}
	return &Builder{cfg: c}, nil
}

// Add adds key (hashing.Sum64 with the seed).
func (b *Builder) Add(key []byte) error { return b.AddHash64(hashing.Sum64(key, b.cfg.Seed)) }

// AddHash64 adds a key by its 64-bit hash (hashing.Sum64 with the
// Config's seed, or any 64-bit hash when the filter is queried with
// ContainsHash64 only).
func (b *Builder) AddHash64(h uint64) error {
	if b.maxBits > 0 && uint64(len(b.hashes)+1)*64 > b.maxBits { // STUB rule
		return fmt.Errorf("ribbon: memory budget of %d bits reached", b.maxBits)
	}
	b.hashes = append(b.hashes, h)
	return nil
}

// Len is the number of keys added so far (duplicates counted).
func (b *Builder) Len() int { return len(b.hashes) }

// SetMaxBits refuses adds past a memory budget (kind.MemoryBudgeter).
func (b *Builder) SetMaxBits(bits uint64) { b.maxBits = bits }

// Finish builds the filter. The Builder must not be used after it.
func (b *Builder) Finish() (*Filter, error) {
	h := slices.Clone(b.hashes)
	slices.Sort(h)
	h = slices.Compact(h)
	return &Filter{cfg: b.cfg, hashes: h, n: uint64(len(h))}, nil
}

// New builds a filter of keys.
func New(keys [][]byte, c Config) (*Filter, error) {
	b, err := NewBuilder(c)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		if err := b.Add(k); err != nil {
			return nil, err
		}
	}
	return b.Finish()
}

// Contains reports whether key may be in the set: false means certainly not.
func (f *Filter) Contains(key []byte) bool { return f.ContainsHash64(hashing.Sum64(key, f.cfg.Seed)) }

// ContainsHash64 is Contains for a key's 64-bit hash.
func (f *Filter) ContainsHash64(h uint64) bool {
	_, ok := slices.BinarySearch(f.hashes, h)
	return ok
}

// ContainsBatch sets out[i] to Contains(keys[i]); len(out) ≥ len(keys).
func (f *Filter) ContainsBatch(keys [][]byte, out []bool) {
	for i, k := range keys {
		out[i] = f.Contains(k)
	}
}

func (f *Filter) Kind() string          { return "ribbon" }
func (f *Filter) Capacity() uint64      { return f.capacity }
func (f *Filter) Bits() uint64          { return uint64(len(f.hashes)) * 64 }
func (f *Filter) N() uint64             { return f.n }
func (f *Filter) Seed() uint64          { return f.cfg.Seed }
func (f *Filter) ResultBits() int       { return f.cfg.ResultBits }
func (f *Filter) EstimatedFPR() float64 { return 0 }

var errStub = errors.New("ribbon: STUB: no file format yet")
