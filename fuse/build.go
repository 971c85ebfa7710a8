package fuse

import (
	"errors"
	"fmt"
	"slices"
	"unsafe"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/heldhash"
	"github.com/bloomlab/bloomlab/internal/hugepage"
	"github.com/bloomlab/bloomlab/theory"
)

// ErrConstruction: MaxAttempts construction attempts failed. At any size
// the paper's sizes make an attempt fail with probability well below
// 1/2, so this does not happen in practice; the Builder is unchanged and
// Finish may be called again.
var ErrConstruction = errors.New("fuse: construction failed")

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
	if b.cfg.Arity == 0 {
		b.cfg, _ = Config{Seed: b.cfg.Seed}.norm()
	}
}

// Add adds key (hashing.Sum64 with the Config's seed).
func (b *Builder) Add(key []byte) error { return b.AddHash64(hashing.Sum64(key, b.cfg.Seed)) }

// need is the memory, in bits, of a Builder holding n hashes and of the
// filter it would build from them.
func (b *Builder) need(n uint64) uint64 { return 8 * BuildBytes(b.cfg, n) }

// BuildBytes bounds the memory, in bytes, that building a filter of c
// from n keys takes at its peak: the hashes a Builder holds (8 bytes per
// key, in chunks that are never copied: heldhash.Store; the bound keeps
// the 10 of the growing slice it replaced, the 2 beyond them headroom for
// the runtime's own memory), Finish's working arrays
// (a copy of the hashes in segment order and each key's peeling slot: 9
// bytes per key; per cell a count, a xor of hashes and a queue entry: 13
// bytes) and the filter (theory.FuseBits). About 36 bytes per key for
// 3-wise 8-bit filters. c's zero fields take their defaults; a Config
// out of range gives the widest (3-wise, 32-bit) bound.
func BuildBytes(c Config, n uint64) uint64 {
	if d, err := c.norm(); err == nil {
		c = d
	} else {
		c = Config{Arity: 3, FingerprintBits: 32}
	}
	cells, _, _ := theory.FuseLayout(c.Arity, n)
	return 19*n + 13*cells + (theory.FuseBits(c.Arity, c.FingerprintBits, n)+7)/8 + 64<<10
}

// AddHash64 adds a key by its 64-bit hash (hashing.Sum64 with the
// Config's seed, or any 64-bit hash when the filter is queried with
// ContainsHash64 only). It fails, holding nothing more, past MaxKeys
// keys or when the held hashes and the filter to be would exceed the
// memory budget (SetMaxBits).
func (b *Builder) AddHash64(h uint64) error {
	b.init()
	if err := b.admit(b.hashes.Len() + 1); err != nil {
		return err
	}
	b.hashes.Append(h)
	return nil
}

// admit reports whether the Builder may hold n keys: at most MaxKeys,
// within the memory budget (need: BuildBytes, which grows with n;
// TestBuildBytesMonotone).
func (b *Builder) admit(n uint64) error {
	return b.budget.Admit(n, MaxKeys, b.need, "fuse", "BuildBytes: the held hashes, the construction's arrays and the filter")
}

// Len is the number of keys added so far (duplicates counted).
func (b *Builder) Len() int { return int(b.hashes.Len()) }

// SetMaxBits bounds the memory of a build (BuildBytes: the held hashes,
// Finish's working arrays and the filter it would build, in bits): an
// Add past it fails and holds nothing more (kind.MemoryBudgeter). 0
// removes the bound.
func (b *Builder) SetMaxBits(bits uint64) { b.budget.Set(bits) }

// Finish builds the filter of the keys added. It fails only after
// MaxAttempts attempts (ErrConstruction); the Builder keeps its keys (its
// hashes may be reordered and deduplicated) and may be finished again.
func (b *Builder) Finish() (*Filter, error) {
	b.init()
	f, distinct, err := build(b.cfg, &b.hashes)
	b.hashes.Truncate(distinct)
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
	b, err := NewBuilder(c)
	if err != nil {
		return nil, err
	}
	if uint64(len(keys)) > MaxKeys {
		return nil, fmt.Errorf("fuse: %d keys, more than %d: %w", len(keys), uint64(MaxKeys), ErrParam)
	}
	hs := make([]uint64, len(keys))
	for i, k := range keys {
		hs[i] = hashing.Sum64(k, c.Seed)
	}
	b.hashes = heldhash.StoreOf(hs)
	return b.Finish()
}

// NewFromHashes builds a filter of the keys whose 64-bit hashes are
// hashes (see Builder.AddHash64). It may reorder hashes.
func NewFromHashes(hashes []uint64, c Config) (*Filter, error) {
	c, err := c.norm()
	if err != nil {
		return nil, err
	}
	if uint64(len(hashes)) > MaxKeys {
		return nil, fmt.Errorf("fuse: %d keys, more than %d: %w", len(hashes), uint64(MaxKeys), ErrParam)
	}
	s := heldhash.StoreOf(hashes)
	f, _, err := build(c, &s)
	if err != nil {
		return nil, err
	}
	f.capacity = f.n
	return f, nil
}

// splitmix64 steps *s and returns the next attempt seed.
func splitmix64(s *uint64) uint64 {
	*s += 0x9E3779B97F4A7C15
	z := *s
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// newLayout returns the paper's layout for n keys (theory.FuseLayout).
func newLayout(c Config, n uint64) layout {
	cells, segLen, _ := theory.FuseLayout(c.Arity, n)
	l := layout{segLen: uint32(segLen), segMask: uint32(segLen - 1), cells: uint32(cells),
		arity: uint32(c.Arity), fingerBit: uint32(c.FingerprintBits)}
	l.segCount = l.cells/l.segLen - (l.arity - 1)
	l.segCells = l.segCount * l.segLen
	return l
}

// halved is l with segments half as long, over the same cells.
func (l layout) halved() layout {
	l.segLen /= 2
	l.segMask = l.segLen - 1
	l.segCount = l.cells/l.segLen - (l.arity - 1)
	l.segCells = l.segCount * l.segLen
	return l
}

// build builds the filter of hashes, with up to MaxAttempts attempts:
// each mixes the hashes with a new seed, sorts them by their first
// segment (so that the cells a pass touches are close together, §5), and
// peels (Algorithm 3). After a failed attempt the hashes are sorted and
// deduplicated (identical hashes never peel), and the layout is the one
// of the distinct keys. As the authors' code does, every fourth attempt
// below 10^6 keys uses segments half as long, over the same cells: the
// empirical segment length is too long for a few sizes. It returns the
// number of distinct hashes when they were deduplicated (the store then
// holds them first, in order, and the copies behind them), or else the
// store's length. The store's chunks are read in place: a build copies
// no hash but to its working array.
func build(c Config, store *heldhash.Store) (*Filter, uint64, error) {
	n := store.Len()
	hashes := store.Chunks()
	base := newLayoutHook(c, n)
	cells := base.cells
	var (
		sorted  = make([]uint64, n)
		found   = make([]uint8, n)
		t2count = make([]uint8, cells)
		t2hash  = make([]uint64, cells)
		alone   = make([]uint32, cells)
		counts  []uint32
	)
	rng := c.Seed ^ 0x5DEECE66D2545F49
	deduped := false
	for attempt := 1; attempt <= MaxAttempts; attempt++ {
		l := base
		if attempt%4 == 2 && n > 4 && n < 1_000_000 && l.segLen >= 8 {
			l = l.halved()
		}
		l.seed = splitmix64(&rng)
		blockBits := uint(1)
		for 1<<blockBits < l.segCount {
			blockBits++
		}
		if len(counts) < 1<<blockBits {
			counts = make([]uint32, 1<<blockBits)
		}
		if peel(&l, hashes, sorted, found, t2count, t2hash, alone, counts[:1<<blockBits], blockBits) {
			f := &Filter{cfg: c, lay: l, n: n, attempts: attempt}
			words := hugepage.Words((uint64(l.cells)*uint64(c.FingerprintBits) + 63) / 64)
			f.attach(words)
			switch c.FingerprintBits {
			case 8:
				assign(f.fp8, &l, sorted, found)
			case 16:
				assign(f.fp16, &l, sorted, found)
			default:
				assign(f.fp32, &l, sorted, found)
			}
			return f, n, nil
		}
		clear(t2count)
		clear(t2hash)
		if !deduped {
			deduped = true
			// Sorted in the working array, which the next attempt
			// overwrites; the store gets them back, distinct first.
			all := sorted[:n]
			store.CopyTo(all)
			slices.Sort(all)
			d := uint64(len(compact(all)))
			store.CopyFrom(all)
			if d != n {
				n = d
				hashes = prefix(store.Chunks(), n)
				base = newLayoutHook(c, n)
				sorted, found = sorted[:n], found[:n]
				t2count, t2hash, alone = t2count[:base.cells], t2hash[:base.cells], alone[:base.cells]
			}
		}
	}
	return nil, n, fmt.Errorf("%w: %d attempts for %d keys", ErrConstruction, MaxAttempts, n)
}

// prefix is the first n hashes of chunks.
func prefix(chunks [][]uint64, n uint64) [][]uint64 {
	var p [][]uint64
	for _, c := range chunks {
		if n == 0 {
			break
		}
		c = c[:min(uint64(len(c)), n)]
		p = append(p, c)
		n -= uint64(len(c))
	}
	return p
}

// compact moves the distinct values of the sorted hashes to its front,
// in order, and the copies behind them, and returns the front: unlike
// slices.Compact, which zeroes the copies' places, it keeps every value
// (NewFromHashes only reorders its argument).
func compact(hashes []uint64) []uint64 {
	j := 0
	for i, h := range hashes {
		if j == 0 || h != hashes[j-1] {
			hashes[i], hashes[j] = hashes[j], h
			j++
		}
	}
	return hashes[:j]
}

// peel is one construction attempt with layout l: it leaves in sorted
// (as a stack) the mixed hashes in peeling order and in found the index
// of the cell each one owns, and reports whether every key was peeled.
// t2count and t2hash must be zero; counts has 2^blockBits entries.
func peel(l *layout, hashes [][]uint64, sorted []uint64, found, t2count []uint8, t2hash []uint64, alone, counts []uint32, blockBits uint) bool {
	n := len(sorted)
	shift := 64 - blockBits
	// Counting sort by the high bits of the mixed hash (the first
	// segment is a monotone function of them).
	clear(counts)
	for _, c := range hashes {
		for _, h := range c {
			counts[mix(h, l.seed)>>shift]++
		}
	}
	sum := uint32(0)
	for i, c := range counts {
		counts[i] = sum
		sum += c
	}
	for _, c := range hashes {
		for _, h := range c {
			hh := mix(h, l.seed)
			b := hh >> shift
			sorted[counts[b]] = hh
			counts[b]++
		}
	}
	// Each cell: the number of its keys (times 4), the xor of their
	// indexes in their key (low 2 bits), the xor of their hashes.
	overflow := false // 64 keys in a cell wrap its count: duplicates
	if l.arity == 3 {
		for _, hh := range sorted {
			h0, h1, h2 := l.positions3(hh)
			c0, c1, c2 := t2count[h0]+4, t2count[h1]+4, t2count[h2]+4
			overflow = overflow || c0 < 4 || c1 < 4 || c2 < 4
			t2count[h0] = c0
			t2hash[h0] ^= hh
			t2count[h1] = c1 ^ 1
			t2hash[h1] ^= hh
			t2count[h2] = c2 ^ 2
			t2hash[h2] ^= hh
		}
	} else {
		for _, hh := range sorted {
			h0, h1, h2, h3 := l.positions4(hh)
			c0, c1, c2, c3 := t2count[h0]+4, t2count[h1]+4, t2count[h2]+4, t2count[h3]+4
			overflow = overflow || c0 < 4 || c1 < 4 || c2 < 4 || c3 < 4
			t2count[h0] = c0
			t2hash[h0] ^= hh
			t2count[h1] = c1 ^ 1
			t2hash[h1] ^= hh
			t2count[h2] = c2 ^ 2
			t2hash[h2] ^= hh
			t2count[h3] = c3 ^ 3
			t2hash[h3] ^= hh
		}
	}
	if overflow {
		return false
	}
	// The queue of cells holding one key, without a branch per cell.
	q := 0
	for i, c := range t2count {
		alone[q] = uint32(i)
		q += is(c>>2, 1)
	}
	// Peel: a cell holding one key gives the key; removing it from all
	// its cells (its own becomes empty) queues those left with one.
	stack := 0
	for q > 0 {
		q--
		idx := alone[q]
		if t2count[idx]>>2 != 1 {
			continue
		}
		hh := t2hash[idx]
		sorted[stack] = hh
		found[stack] = t2count[idx] & 3
		stack++
		if l.arity == 3 {
			h0, h1, h2 := l.positions3(hh)
			alone[q] = h0
			q += is(t2count[h0]>>2, 2)
			t2count[h0] -= 4
			t2hash[h0] ^= hh
			alone[q] = h1
			q += is(t2count[h1]>>2, 2)
			t2count[h1] = (t2count[h1] - 4) ^ 1
			t2hash[h1] ^= hh
			alone[q] = h2
			q += is(t2count[h2]>>2, 2)
			t2count[h2] = (t2count[h2] - 4) ^ 2
			t2hash[h2] ^= hh
		} else {
			h0, h1, h2, h3 := l.positions4(hh)
			alone[q] = h0
			q += is(t2count[h0]>>2, 2)
			t2count[h0] -= 4
			t2hash[h0] ^= hh
			alone[q] = h1
			q += is(t2count[h1]>>2, 2)
			t2count[h1] = (t2count[h1] - 4) ^ 1
			t2hash[h1] ^= hh
			alone[q] = h2
			q += is(t2count[h2]>>2, 2)
			t2count[h2] = (t2count[h2] - 4) ^ 2
			t2hash[h2] ^= hh
			alone[q] = h3
			q += is(t2count[h3]>>2, 2)
			t2count[h3] = (t2count[h3] - 4) ^ 3
			t2hash[h3] ^= hh
		}
	}
	return stack == n
}

// is returns 1 if a == b and 0 otherwise, without a branch (a, b < 64).
func is(a, b uint8) int { return int((uint64(a^b) - 1) >> 63) }

// assign sets the cells in reverse peeling order: each key's own cell
// makes the xor of its cells its fingerprint.
func assign[T finger](fp []T, l *layout, sorted []uint64, found []uint8) {
	if l.arity == 3 {
		for i := len(sorted) - 1; i >= 0; i-- {
			hh := sorted[i]
			var p [4]uint32
			p[0], p[1], p[2] = l.positions3(hh)
			x := T(hh^hh>>32) ^ fp[p[0]] ^ fp[p[1]] ^ fp[p[2]]
			fp[p[found[i]&3]] ^= x
		}
		return
	}
	for i := len(sorted) - 1; i >= 0; i-- {
		hh := sorted[i]
		var p [4]uint32
		p[0], p[1], p[2], p[3] = l.positions4(hh)
		x := T(hh^hh>>32) ^ fp[p[0]] ^ fp[p[1]] ^ fp[p[2]] ^ fp[p[3]]
		fp[p[found[i]&3]] ^= x
	}
}

// attach makes words the filter's cells, viewed at its fingerprint width.
// The cells are the words' bytes in little-endian order (the file's):
// on a big-endian machine the decoder and WriteTo swap each word's bytes.
func (f *Filter) attach(words []uint64) {
	f.words = words
	f.fp8, f.fp16, f.fp32 = nil, nil, nil
	cells := int(f.lay.cells)
	p := unsafe.Pointer(unsafe.SliceData(words))
	a4 := f.lay.arity == 4
	switch f.lay.fingerBit {
	case 8:
		f.fp8 = unsafe.Slice((*uint8)(p), cells)
		f.shape = pick(a4, shape4x8, shape3x8)
	case 16:
		f.fp16 = unsafe.Slice((*uint16)(p), cells)
		f.shape = pick(a4, shape4x16, shape3x16)
	case 32:
		f.fp32 = unsafe.Slice((*uint32)(p), cells)
		f.shape = pick(a4, shape4x32, shape3x32)
	}
}

func pick(c bool, a, b shape) shape {
	if c {
		return a
	}
	return b
}

// newLayoutHook is newLayout, replaceable by tests.
var newLayoutHook = newLayout
