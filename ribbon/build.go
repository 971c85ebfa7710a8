package ribbon

import (
	"errors"
	"fmt"
	"math/bits"
	"slices"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/heldhash"
	"github.com/bloomlab/bloomlab/internal/hugepage"
	"github.com/bloomlab/bloomlab/theory"
)

// ErrConstruction: a shard failed to band after MaxAttempts attempts (with
// theory.RibbonMaxGrowth more blocks). The slot overhead makes an attempt
// succeed with probability well above 1/2, so this does not happen in
// practice; the Builder keeps its keys and Finish may be called again.
var ErrConstruction = errors.New("ribbon: construction failed")

// Builder holds the 64-bit hashes of the keys (8 bytes per key) until
// Finish builds the filter from them. The zero Builder is
// NewBuilder(Config{})'s.
type Builder struct {
	cfg      Config
	hashes   heldhash.Store
	budget   heldhash.Budget
	capacity uint64
}

// NewBuilder returns an empty Builder.
func NewBuilder(c Config) (*Builder, error) {
	c, err := c.norm()
	if err != nil {
		return nil, err
	}
	return &Builder{cfg: c}, nil
}

// init makes the zero Builder the one of NewBuilder(Config{}).
func (b *Builder) init() {
	if b.cfg.ResultBits == 0 {
		b.cfg, _ = Config{Seed: b.cfg.Seed}.norm()
	}
}

// Add adds key (hashing.Sum64 with the Config's seed).
func (b *Builder) Add(key []byte) error { return b.AddHash64(hashing.Sum64(key, b.cfg.Seed)) }

// need bounds the memory, in bits, of a Builder holding n hashes and of
// the filter it would build from them (theory.RibbonMaxBits, which grows
// with n).
func (b *Builder) need(n uint64) uint64 { return 8 * BuildBytes(b.cfg, n) }

// BuildBytes bounds the memory, in bytes, that building a filter of c
// from n keys takes at its peak: the hashes a Builder holds (8 bytes per
// key, in chunks that are never copied: heldhash.Store; the bound keeps
// the 18 of the growing slice it replaced, the 10 beyond them the
// headroom of the runtime's own memory and of one shard's keys copied
// out of the chunks it straddles), the banding arrays of
// one shard (20 bytes per slot: a 128-bit row and a result) and the
// largest filter n keys can make (theory.RibbonMaxBits). c's zero fields
// take their defaults; a Config out of range gives the r = 32 bound.
func BuildBytes(c Config, n uint64) uint64 {
	if d, err := c.norm(); err == nil {
		c = d
	} else {
		c = Config{ResultBits: 32}
	}
	shard := min(n, 2*theory.RibbonShardKeys)
	return 18*n + 20*(shard+shard/8+256) + (theory.RibbonMaxBits(n, c.ResultBits)+7)/8 + 64<<10
}

// AddHash64 adds a key by its 64-bit hash (hashing.Sum64 with the
// Config's seed, or any 64-bit hash when the filter is queried with
// ContainsHash64 only). It fails, holding nothing more, past MaxKeys keys
// or when the held hashes and the largest filter they could make would
// exceed the memory budget (SetMaxBits).
func (b *Builder) AddHash64(h uint64) error {
	b.init()
	if err := b.budget.Admit(b.hashes.Len()+1, MaxKeys, b.need, "ribbon",
		"BuildBytes: the held hashes, one shard's banding arrays and the filter"); err != nil {
		return err
	}
	b.hashes.Append(h)
	return nil
}

// Len is the number of keys added so far (duplicates counted).
func (b *Builder) Len() int { return int(b.hashes.Len()) }

// SetMaxBits bounds the memory of a build (BuildBytes: the held hashes,
// one shard's banding arrays and the largest filter they could make, in
// bits): an Add past it fails and holds nothing more
// (kind.MemoryBudgeter). 0 removes the bound.
func (b *Builder) SetMaxBits(bits uint64) { b.budget.Set(bits) }

// Finish builds the filter of the keys added. It fails only when a shard
// fails MaxAttempts attempts (ErrConstruction); the Builder keeps its keys
// (reordered) and may be finished again.
func (b *Builder) Finish() (*Filter, error) {
	b.init()
	f, err := build(b.cfg, &b.hashes)
	if err != nil {
		return nil, err
	}
	f.capacity = f.n
	if b.capacity > 0 {
		f.capacity = b.capacity
	}
	return f, nil
}

// New builds a filter of keys.
func New(keys [][]byte, c Config) (*Filter, error) {
	c, err := c.norm()
	if err != nil {
		return nil, err
	}
	if uint64(len(keys)) > MaxKeys {
		return nil, fmt.Errorf("ribbon: %d keys, more than %d: %w", len(keys), uint64(MaxKeys), ErrParam)
	}
	hs := make([]uint64, len(keys))
	for i, k := range keys {
		hs[i] = hashing.Sum64(k, c.Seed)
	}
	return NewFromHashes(hs, c)
}

// NewFromHashes builds a filter of the keys whose 64-bit hashes are
// hashes (see Builder.AddHash64). It reorders hashes.
func NewFromHashes(hashes []uint64, c Config) (*Filter, error) {
	c, err := c.norm()
	if err != nil {
		return nil, err
	}
	if uint64(len(hashes)) > MaxKeys {
		return nil, fmt.Errorf("ribbon: %d keys, more than %d: %w", len(hashes), uint64(MaxKeys), ErrParam)
	}
	s := heldhash.StoreOf(hashes)
	f, err := build(c, &s)
	if err != nil {
		return nil, err
	}
	f.capacity = f.n
	return f, nil
}

// shardBlocksHook sizes a shard (tests replace it to force failures).
var shardBlocksHook = theory.RibbonShardBlocks

// build bands every shard of hashes (which it reorders: grouped by shard,
// copies kept) and back-substitutes the solution into the blocks. The
// store's chunks are read in place; a shard's keys are sorted where they
// lie, or in a copy when they straddle two chunks.
func build(c Config, hashes *heldhash.Store) (*Filter, error) {
	n := hashes.Len()
	shards := theory.RibbonShards(n)
	// Group the hashes by shard in place (shard = ⌊h·shards/2^64⌋, so
	// shards are contiguous ranges of h): count, then cycle each hash to
	// its shard's next free place.
	ends := make([]uint64, shards+1) // ends[i+1]: the end of shard i
	for _, c := range hashes.Chunks() {
		for _, h := range c {
			s, _ := bits.Mul64(h, shards)
			ends[s+1]++
		}
	}
	for i := uint64(1); i <= shards; i++ {
		ends[i] += ends[i-1]
	}
	next := slices.Clone(ends[:shards])
	for s := range shards {
		for next[s] < ends[s+1] {
			h := hashes.At(next[s])
			d, _ := bits.Mul64(h, shards)
			if d == s {
				next[s]++
				continue
			}
			hashes.Set(next[s], hashes.At(next[d]))
			hashes.Set(next[d], h)
			next[d]++
		}
	}
	r := uint32(c.ResultBits)
	meta := make([]uint64, shards+1)
	// Each shard's keys, deduplicated, and its block count; the data is
	// allocated once the counts are known, so bands first then solves
	// shard by shard into a growing slice.
	data := hugepage.WordsCap(0, (theory.RibbonSlots(n)/128+shards+1)*2*uint64(r))
	var bd band
	var scratch []uint64
	distinct := uint64(0)
	most := 0
	blocks := uint64(0)
	for s := range shards {
		keys := hashes.Range(ends[s], ends[s+1], &scratch)
		slices.Sort(keys) // copies side by side: run skips them
		k := uint64(0)
		for i, h := range keys {
			if i == 0 || h != keys[i-1] {
				k++
			}
		}
		distinct += k
		nb := shardBlocksHook(k)
		a := 0
		for ; ; a++ {
			if a == MaxAttempts {
				return nil, fmt.Errorf("%w: shard %d of %d keys failed %d attempts", ErrConstruction, s, k, MaxAttempts)
			}
			if a > 0 && a%theory.RibbonGrowAfter == 0 && a/theory.RibbonGrowAfter <= theory.RibbonMaxGrowth {
				nb++
			}
			if bd.run(keys, nb*128, attemptSeed(uint64(a)), r) {
				break
			}
		}
		most = max(most, a+1)
		meta[s] = blocks | uint64(a)<<offBits
		data = bd.solve(data, nb, r, uint64(a)^s*seedMul)
		blocks += nb
	}
	meta[shards] = blocks
	data = append(data, make([]uint64, 2*r)...) // the zero block after the last
	return &Filter{cfg: c, r: r, meta: meta, data: data, shards: shards, n: distinct, attempts: most}, nil
}

// band is one shard's system in echelon form: slot i holds a row whose
// lowest bit is its own (c0[i] odd) or is empty (c0[i] = 0).
type band struct {
	c0, c1 []uint64
	res    []uint32
	slots  uint64
}

// run bands keys (sorted; copies are skipped) into slots slots with the
// attempt seed; false if a key's
// row reduces to 0 with a nonzero result (the system has no solution).
func (bd *band) run(keys []uint64, slots, seed uint64, r uint32) bool {
	if uint64(cap(bd.c0)) < slots {
		bd.c0, bd.c1, bd.res = make([]uint64, slots), make([]uint64, slots), make([]uint32, slots)
	}
	bd.c0, bd.c1, bd.res = bd.c0[:slots], bd.c1[:slots], bd.res[:slots]
	clear(bd.c0)
	bd.slots = slots
	c0s, c1s, rs := bd.c0, bd.c1, bd.res
	for x, h := range keys {
		if x > 0 && h == keys[x-1] {
			continue // a copy (keys are sorted)
		}
		hh := remix(h, seed)
		i, _ := bits.Mul64(hh, slots-127)
		c0, c1, res := row(hh, r)
		for {
			// c0 is odd: the row starts at slot i, and ends before slot
			// i+128 ≤ slots (rows only lose their low bits on the way).
			if c0s[i] == 0 {
				c0s[i], c1s[i], rs[i] = c0, c1, res
				break
			}
			c0 ^= c0s[i]
			c1 ^= c1s[i]
			res ^= rs[i]
			if c0 == 0 {
				if c1 == 0 {
					if res != 0 {
						return false
					}
					break // redundant: implied by the rows in the band
				}
				tz := uint(bits.TrailingZeros64(c1))
				i += 64 + uint64(tz)
				c0, c1 = c1>>tz, 0
				continue
			}
			tz := uint(bits.TrailingZeros64(c0))
			i += uint64(tz)
			c0 = c0>>tz | c1<<(64-tz)
			c1 >>= tz
		}
	}
	return true
}

// solve back-substitutes the banded system, from the last slot to the
// first, appending its nb blocks to data: per column j a 128-bit window of
// the solution's bits at slots i … i+127 (bit 0 is slot i); slot i's bit
// is the parity of its row and the window above it, xor its result bit j
// (an empty slot's bit is free: pseudo-random bits from salt).
func (bd *band) solve(data []uint64, nb uint64, r uint32, salt uint64) []uint64 {
	base := uint64(len(data))
	stride := 2 * uint64(r)
	data = append(data, make([]uint64, nb*stride)...)
	var win [64]uint64 // column j: win[2j], win[2j+1]
	w := win[:stride]
	for i := int(nb*128) - 1; i >= 0; i-- {
		for j := 0; j < len(w); j += 2 {
			w[j+1] = w[j+1]<<1 | w[j]>>63
			w[j] <<= 1
		}
		c0, c1, res := bd.c0[i], bd.c1[i], bd.res[i]
		if c0 == 0 {
			res = uint32(mix(uint64(i), salt))
			c0, c1 = 1, 0 // bit 0 alone: the window's bit 0 is still 0
		}
		for j := 0; j < len(w); j += 2 {
			p := uint64(bits.OnesCount64(c0&w[j]^c1&w[j+1])) ^ uint64(res>>(j>>1))
			w[j] |= p & 1
		}
		if i&127 == 0 {
			copy(data[base+uint64(i>>7)*stride:], w)
		}
	}
	return data
}
