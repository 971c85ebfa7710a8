// Package topk is HeavyKeeper top-k as RedisBloom implements it
// (TOPK.*): bit for bit the structure of RedisBloom's src/topk.c (the
// same in RedisBloom 2.4.23 and 8.6.2), with one difference, the source
// of the decay's coin flips.
//
// A sketch has depth rows of width buckets, each a 32-bit fingerprint and
// a 32-bit counter, and a min-heap of k items by count. An item's
// fingerprint is MurmurHash2(item, 1919) and its bucket in row i is
// MurmurHash2(item, i) mod width (hashing.MurmurHash2; the modulo is
// taken with a precomputed reciprocal, no division). Adding an item with
// increment n visits its bucket in every row: an empty bucket takes the
// item's fingerprint and n; a bucket holding the same fingerprint adds n
// (modulo 2^32, as RedisBloom's uint32_t); any other bucket is decayed n
// times, each time losing one with probability decay^count (RedisBloom's
// lookup table of decay^0…decay^255, and decay^255^(c/255)·decay^(c mod
// 255) beyond it), and when it reaches zero it takes the item with the
// increment left. If the largest counter of the item's buckets reaches
// the heap's minimum, the item's heap count becomes that counter (an
// item already in the heap; the heap is restored downwards only, as
// RedisBloom does) or the item replaces the heap's minimum, which Add
// returns as expelled. List is the heap sorted by count, descending,
// stably (glibc's qsort is a stable merge sort), up to the first zero
// count. Count is RedisBloom's TOPK.COUNT: the largest counter among the
// item's buckets that hold its fingerprint (and, for an item in the heap,
// at least the heap's minimum).
//
// The coin flips: RedisBloom compares rand()/RAND_MAX with the decay
// probability, rand() being the C library's generator, which Redis seeds
// at every start, so two runs of RedisBloom on the same commands can
// differ wherever a bucket decays. Here each sketch has its own generator
// (SplitMix64 from Config.Seed, giving 31-bit values as rand() does,
// divided by 2^31 − 1): the state is part of the sketch (Clone, WriteTo)
// and advances only through Add and IncrBy, so the same operations on the
// same sketch give the same sketch, whenever and wherever they run.
// Without a decay (no two items meeting in a bucket, or decay 1 where the
// flip always succeeds) every answer is RedisBloom's exactly.
//
// Guarantees: Count never exceeds an item's true count for increments
// whose sums stay below 2^32 (a counter holds the item's fingerprint only
// while it counts that item's own adds, and decays only downwards); List
// holds at most k distinct items, each one that was added; Query agrees
// with List for items whose heap count is not zero. Add and Query
// allocate nothing once the heap's item buffers have grown to the items'
// lengths. A Sketch is not safe for concurrent use.
package topk

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/bloomlab/bloomlab/hashing"
)

// Defaults of TOPK.RESERVE key k (RedisBloom's TOPK_DEFAULT_*).
const (
	DefaultWidth = 8
	DefaultDepth = 7
	DefaultDecay = 0.9
)

// Bounds of a sketch: at most MaxBuckets buckets (width·depth, 8 bytes
// each) and MaxK heap items. RedisBloom's bound is the memory it can
// allocate.
const (
	MaxBuckets = 1 << 32
	MaxK       = 1 << 26
)

// DefaultSeed is the generator's seed when Config.Seed is 0.
const DefaultSeed = 0x5eed70b4

const (
	fpSeed     = 1919 // RedisBloom's GA
	lookupSize = 256  // TOPK_DECAY_LOOKUP_TABLE
	randMax    = 1<<31 - 1
)

var (
	// ErrParam: a configuration out of range.
	ErrParam = errors.New("topk: invalid parameter")
	// ErrFormat: an encoding that is not a valid sketch.
	ErrFormat = errors.New("topk: invalid encoding")
)

// Config describes a sketch: TOPK.RESERVE key k width depth decay.
type Config struct {
	K, Width, Depth uint32
	Decay           float64 // in (0, 1]
	Seed            uint64  // the decay generator's seed; 0 means DefaultSeed
}

type bucket struct{ fp, count uint32 }

type slot struct {
	fp, count uint32
	item      []byte // nil for an empty slot (RedisBloom's NULL item)
	full      bool
}

// Sketch is a HeavyKeeper top-k sketch. The zero Sketch is not a sketch
// (its methods panic; WriteTo returns an error): make one with New, or
// fill it with ReadFrom.
type Sketch struct {
	cfg      Config
	fastM    uint64 // Lemire's reciprocal of width
	data     []bucket
	heap     []slot
	table    [lookupSize]float64
	rng      uint64
	expelled []byte
	itemCap  int64 // total capacity of the heap's item buffers and expelled
}

// Entry is one item of List.
type Entry struct {
	Item  []byte
	Count uint32
}

// New returns an empty sketch.
func New(cfg Config) (*Sketch, error) {
	if err := check(cfg); err != nil {
		return nil, err
	}
	if cfg.Seed == 0 {
		cfg.Seed = DefaultSeed
	}
	s := &Sketch{cfg: cfg, data: make([]bucket, uint64(cfg.Width)*uint64(cfg.Depth)), heap: make([]slot, cfg.K), rng: cfg.Seed}
	s.init()
	return s, nil
}

func check(cfg Config) error {
	switch {
	case cfg.K < 1 || cfg.K > MaxK:
		return fmt.Errorf("topk: k = %d out of range [1, %d]: %w", cfg.K, MaxK, ErrParam)
	case cfg.Width < 1 || cfg.Depth < 1:
		return fmt.Errorf("topk: width and depth must be at least 1 (got %d, %d): %w", cfg.Width, cfg.Depth, ErrParam)
	case uint64(cfg.Width)*uint64(cfg.Depth) > MaxBuckets:
		return fmt.Errorf("topk: width·depth = %d beyond %d buckets: %w", uint64(cfg.Width)*uint64(cfg.Depth), uint64(MaxBuckets), ErrParam)
	case !(cfg.Decay > 0 && cfg.Decay <= 1):
		return fmt.Errorf("topk: decay %v out of (0, 1]: %w", cfg.Decay, ErrParam)
	}
	return nil
}

func (s *Sketch) init() {
	s.fastM = ^uint64(0)/uint64(s.cfg.Width) + 1
	for i := range s.table {
		s.table[i] = math.Pow(s.cfg.Decay, float64(i))
	}
}

// Config returns the sketch's configuration (Seed: the seed it started
// from).
func (s *Sketch) Config() Config { return s.cfg }

// Bytes is the memory the sketch holds, approximately: its buckets, heap
// and item buffers.
func (s *Sketch) Bytes() int64 {
	return int64(len(s.data))*8 + int64(len(s.heap))*48 + s.itemCap + 2*lookupSize*8
}

// col is h mod width (Lemire, Kaser and Kurz, "Faster remainder by direct
// computation", 2019: exact for 32-bit h and width).
func (s *Sketch) col(h uint32) uint32 {
	hi, _ := bits.Mul64(s.fastM*uint64(h), uint64(s.cfg.Width))
	return uint32(hi)
}

// chance is rand()/(double)RAND_MAX from the sketch's generator.
func (s *Sketch) chance() float64 {
	s.rng += 0x9E3779B97F4A7C15
	z := s.rng
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	z ^= z >> 31
	return float64(uint32(z>>33)) / randMax
}

func (s *Sketch) decayOf(c uint32) float64 {
	if c < lookupSize {
		return s.table[c]
	}
	return math.Pow(s.table[lookupSize-1], float64(c/(lookupSize-1))) * s.table[c%(lookupSize-1)]
}

// find is RedisBloom's checkExistInHeap: the heap slot holding item, or
// -1.
func (s *Sketch) find(item []byte, fp uint32) int {
	for i := len(s.heap) - 1; i >= 0; i-- {
		if h := &s.heap[i]; h.fp == fp && bytes.Equal(h.item, item) {
			return i
		}
	}
	return -1
}

// Add is IncrBy(item, 1).
func (s *Sketch) Add(item []byte) (expelled []byte, ok bool) { return s.IncrBy(item, 1) }

// IncrBy adds item increment times (TOPK.INCRBY; its cost grows with the
// increment where the item meets other items' buckets). If item enters
// the heap in place of another item, IncrBy returns that item and true;
// the slice is valid until the next Add or IncrBy.
func (s *Sketch) IncrBy(item []byte, increment uint32) (expelled []byte, ok bool) {
	fp := hashing.MurmurHash2(item, fpSeed)
	heapMin := s.heap[0].count
	var maxCount uint32
	w := s.cfg.Width
	for i := uint32(0); i < s.cfg.Depth; i++ {
		b := &s.data[i*w+s.col(hashing.MurmurHash2(item, i))]
		switch {
		case b.count == 0:
			b.fp = fp
			b.count = increment
			maxCount = max(maxCount, b.count)
		case b.fp == fp:
			b.count += increment
			maxCount = max(maxCount, b.count)
		default:
			for left := increment; left > 0; left-- {
				if s.chance() < s.decayOf(b.count) {
					b.count--
					if b.count == 0 {
						b.fp = fp
						b.count = left
						maxCount = max(maxCount, b.count)
						break
					}
				}
			}
		}
	}
	if maxCount < heapMin {
		return nil, false
	}
	if j := s.find(item, fp); j >= 0 {
		s.heap[j].count = maxCount // not the max of the two: it may have decayed
		s.heapifyDown(j)
		return nil, false
	}
	h := &s.heap[0]
	if h.full {
		s.expelled = s.grow(s.expelled, len(h.item))
		s.expelled = append(s.expelled[:0], h.item...)
		ok = true
	}
	h.item = s.grow(h.item, len(item))
	h.item = append(h.item[:0], item...)
	h.full = true
	h.fp = fp
	h.count = maxCount
	s.heapifyDown(0)
	if ok {
		return s.expelled, true
	}
	return nil, false
}

// grow returns b with room for n bytes, allocated at exactly n when it
// must grow, accounting the capacity.
func (s *Sketch) grow(b []byte, n int) []byte {
	if cap(b) >= n && b != nil {
		return b
	}
	s.itemCap += int64(n - cap(b))
	return make([]byte, 0, n)
}

// heapifyDown is RedisBloom's: the slot at start moves down past children
// with smaller counts (ties move it too, at the first step).
func (s *Sketch) heapifyDown(start int) {
	h := s.heap
	n := len(h)
	if n < 2 || (n-2)/2 < start {
		return
	}
	child := 2*start + 1
	if child+1 < n && h[child].count > h[child+1].count {
		child++
	}
	if h[child].count > h[start].count {
		return
	}
	top := h[start]
	for {
		h[start] = h[child]
		start = child
		if (n-2)/2 < child {
			break
		}
		child = 2*child + 1
		if child+1 < n && h[child].count > h[child+1].count {
			child++
		}
		if h[child].count >= top.count {
			break
		}
	}
	h[start] = top
}

// Query reports whether item is in the heap (TOPK.QUERY).
func (s *Sketch) Query(item []byte) bool {
	return s.find(item, hashing.MurmurHash2(item, fpSeed)) >= 0
}

// Count is TOPK.COUNT: item's counter as the sketch has it, never above
// its true count (see the package's guarantees), possibly far below it.
func (s *Sketch) Count(item []byte) uint32 {
	fp := hashing.MurmurHash2(item, fpSeed)
	heapMin := s.heap[0].count
	inHeap := s.find(item, fp) >= 0
	var res uint32
	w := s.cfg.Width
	for i := uint32(0); i < s.cfg.Depth; i++ {
		b := s.data[i*w+s.col(hashing.MurmurHash2(item, i))]
		if b.fp == fp && (!inHeap || b.count >= heapMin) {
			res = max(res, b.count)
		}
	}
	return res
}

// List appends the heap's items with a count above zero to dst, by count,
// descending (TOPK.LIST), growing dst once: by the number of filled slots
// (Listed), never by the heap's k (a sketch of k = 2^26 that holds nothing
// lists nothing and allocates nothing). The items' bytes are the
// sketch's: valid until the next Add or IncrBy.
func (s *Sketch) List(dst []Entry) []Entry {
	start := len(dst)
	n, _ := s.Listed()
	dst = slices.Grow(dst, n)
	for i := range s.heap {
		if h := &s.heap[i]; h.count != 0 {
			dst = append(dst, Entry{Item: h.item, Count: h.count})
		}
	}
	out := dst[start:]
	slices.SortStableFunc(out, func(a, b Entry) int {
		switch {
		case a.Count > b.Count:
			return -1
		case a.Count < b.Count:
			return 1
		}
		return 0
	})
	return dst
}

// Listed is what List would append: the number of items with a count
// above zero, and the sum of their lengths; it allocates nothing (a
// server reserves the reply's memory before it builds it).
func (s *Sketch) Listed() (n int, bytes int64) {
	for i := range s.heap {
		if h := &s.heap[i]; h.count != 0 {
			n++
			bytes += int64(len(h.item))
		}
	}
	return n, bytes
}

// Clone returns an independent copy (generator state included).
func (s *Sketch) Clone() *Sketch {
	c := *s
	c.data = slices.Clone(s.data)
	c.heap = slices.Clone(s.heap)
	c.itemCap = 0
	for i := range c.heap {
		if c.heap[i].full {
			c.heap[i].item = bytes.Clone(s.heap[i].item)
			if c.heap[i].item == nil {
				c.heap[i].item = []byte{}
			}
			c.itemCap += int64(cap(c.heap[i].item))
		}
	}
	c.expelled = nil
	return &c
}
