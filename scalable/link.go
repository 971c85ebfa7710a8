package scalable

import (
	"errors"
	"fmt"
	"math/bits"
	"sync/atomic"

	"github.com/bloomlab/bloomlab/blocked"
	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/hugepage"
	"github.com/bloomlab/bloomlab/theory"
)

// link is one Bloom filter of the chain. Everything but the bits and size
// is immutable.
type link struct {
	words []uint64 // bit j is bit j mod 64 of word j/64 (byte j/8, bit j mod 8)
	mod   uint64   // positions lie in [0, mod): bits, or 2^n2
	recip uint64   // ⌊(2^64 − 1)/mod⌋
	k     int
	ix    *hashing.Indexer // bloomlab profile; nil for the others
	redis bool
	// blocks is the number of 512-bit blocks of a blocked-profile link
	// (bits/512), 0 for the other profiles.
	blocks uint64

	bits    uint64  // 64·len(words)
	entries uint64  // capacity
	errRate float64 // design rate
	bpe     float64 // RedisBloom's bits per entry; 0 for bloomlab
	n2      uint8   // RedisBloom's power-of-two exponent; 0 = none
	size    uint64  // keys added to this link; written under Filter.mu
}

// shape is a link's geometry before its bits are allocated.
type shape struct {
	entries uint64
	rate    float64
	bits    uint64        // memory: a multiple of 64
	k       int           // probes
	redis   redisGeometry // RedisBloom profile
}

// describe returns a link of shape s in profile p without bits: enough
// for its formula rates.
func (s shape) describe(p Profile) *link {
	l := &link{mod: s.bits, k: s.k, redis: p == RedisBloom, bits: s.bits, entries: s.entries, errRate: s.rate}
	if s.redis.n2 > 0 {
		l.mod = 1 << s.redis.n2
	}
	if p == Blocked {
		l.blocks = s.bits / blocked.BlockBits
	}
	return l
}

// linkShape sizes a link of entries keys at rate errRate in the chain's
// profile, allocating nothing.
func (f *Filter) linkShape(entries uint64, errRate float64) (shape, error) {
	if f.profile == RedisBloom {
		g, err := redisInit(entries, errRate, f.options)
		return shape{entries: g.entries, rate: errRate, bits: g.bits, k: g.k, redis: g}, err
	}
	if f.profile == Blocked {
		m, k, err := blockedGeometry(entries, errRate)
		return shape{entries: entries, rate: errRate, bits: m, k: k}, err
	}
	m, k, err := bloomlabGeometry(entries, errRate)
	return shape{entries: entries, rate: errRate, bits: m, k: k}, err
}

// alloc allocates the link s describes.
func (f *Filter) alloc(s shape) (*link, error) {
	if f.profile == RedisBloom {
		return makeRedisLink(s.redis, s.rate, hugepage.Words(s.bits/64), 0), nil
	}
	if f.profile == Blocked {
		return makeBlockedLink(s.bits, s.k, s.entries, s.rate, hugepage.Words(s.bits/64), 0), nil
	}
	return makeBloomlabLink(s.bits, s.k, s.entries, s.rate, hugepage.Words(s.bits/64), 0)
}

// newLink allocates a link of entries keys at rate errRate in the chain's
// profile.
func (f *Filter) newLink(entries uint64, errRate float64) (*link, error) {
	s, err := f.linkShape(entries, errRate)
	if err != nil {
		return nil, err
	}
	return f.alloc(s)
}

// bloomlabGeometry sizes a bloomlab link: the smallest multiple of 64 bits,
// and k ≤ 64, whose rate at capacity is at most errRate, the pair floor of
// enhanced double hashing included (theory.SizeSchemeUnit: a link of few
// keys must be large enough that a query rarely shares a key's (h1, h2)).
func bloomlabGeometry(entries uint64, errRate float64) (m uint64, k int, err error) {
	if entries < 1 || !(errRate > 0 && errRate < 1) {
		return 0, 0, fmt.Errorf("link of %d entries at rate %v: %w", entries, errRate, errCannotGrow)
	}
	m, k, err = theory.SizeSchemeUnit(hashing.Enhanced, entries, errRate, hashing.MaxK, 64)
	if errors.Is(err, theory.ErrTooLarge) {
		return 0, 0, fmt.Errorf("link of %d entries at rate %v needs more than 2^48 bits: %w", entries, errRate, errCannotGrow)
	} else if err != nil {
		return 0, 0, fmt.Errorf("link of %d entries at rate %v: %v: %w", entries, errRate, err, errCannotGrow)
	}
	return m, k, nil
}

func makeRedisLink(g redisGeometry, errRate float64, words []uint64, size uint64) *link {
	mod := g.bits
	if g.n2 > 0 {
		mod = 1 << g.n2
	}
	return &link{words: words, mod: mod, recip: ^uint64(0) / mod, k: g.k, redis: true,
		bits: g.bits, entries: g.entries, errRate: errRate, bpe: g.bpe, n2: g.n2, size: size}
}

func makeBloomlabLink(m uint64, k int, entries uint64, errRate float64, words []uint64, size uint64) (*link, error) {
	ix, err := hashing.NewIndexer(hashing.Enhanced, m, k)
	if err != nil {
		return nil, err
	}
	return &link{words: words, mod: m, recip: ix.Recip(), k: k, ix: ix,
		bits: m, entries: entries, errRate: errRate, size: size}, nil
}

// nextLink returns the shape of the link after the newest of ls: entries
// times the expansion, the rate times the ratio; an error wrapping
// errCannotGrow when the chain may not grow: maxLinks links, an expansion
// above MaxExpansion (bloomlab profile; a file or dump may record any), a
// link beyond 2^48 bits, or a chain whose bits would exceed its memory
// budget (SetMaxBits). Nothing is allocated. The caller holds f.mu.
func (f *Filter) nextLink(ls []*link) (shape, error) {
	s, err := f.nextShape(ls)
	if err != nil {
		return shape{}, err
	}
	return s, f.withinBudget(ls, s)
}

// nextShape is nextLink without the memory budget. The caller holds
// f.mu (or f is its own); the shape after a given newest link is
// computed once and kept (f.next): sizing a blocked link takes
// milliseconds, and a server asks before every add past a full link.
func (f *Filter) nextShape(ls []*link) (shape, error) {
	cur := ls[len(ls)-1]
	if f.next.after == cur && f.next.links == len(ls) {
		return f.next.s, f.next.err
	}
	s, err := f.computeNext(ls)
	f.next.after, f.next.links, f.next.s, f.next.err = cur, len(ls), s, err
	return s, err
}

// computeNext is nextShape without the cache.
func (f *Filter) computeNext(ls []*link) (shape, error) {
	cur, n := ls[len(ls)-1], len(ls)
	if n >= maxLinks {
		return shape{}, fmt.Errorf("the chain has %d links, the most it may have: %w", n, errCannotGrow)
	}
	if f.profile != RedisBloom && f.growth > MaxExpansion {
		return shape{}, fmt.Errorf("expansion %d, more than %d: %w", f.growth, MaxExpansion, errCannotGrow)
	}
	hi, entries := bits.Mul64(cur.entries, uint64(f.growth))
	if hi != 0 || entries == 0 {
		return shape{}, fmt.Errorf("link of %d × %d entries: %w", cur.entries, f.growth, errCannotGrow)
	}
	return f.linkShape(entries, cur.errRate*f.ratio)
}

// withinBudget returns an error wrapping errCannotGrow if adding a link
// of shape s to ls would take the chain past its memory budget.
func (f *Filter) withinBudget(ls []*link, s shape) error {
	if max := f.maxBits.Load(); max > 0 {
		var have uint64
		for _, l := range ls {
			have += l.bits
		}
		if s.bits > max || have > max-s.bits {
			return fmt.Errorf("the next link of %d bits would bring the chain to %d bits, beyond its memory budget of %d bits: %w",
				s.bits, have+s.bits, max, errCannotGrow)
		}
	}
	return nil
}

// NextLinkBits returns the bits the next link would take, without
// allocating it: the memory the add that fills the newest link will
// allocate. It returns 0 for a non-scaling chain, and an error wrapping
// ErrFull when the chain cannot grow, its memory budget (SetMaxBits)
// included. A chain read from an untrusted source may have a large
// expansion: set a budget, or check this, before adding to it.
func (f *Filter) NextLinkBits() (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ls := f.snapshot()
	if len(ls) == 0 {
		return 0, errZero
	}
	if f.nonScaling() {
		return 0, nil
	}
	s, err := f.nextLink(ls)
	if err != nil {
		return 0, fmt.Errorf("scalable: %w: %v", ErrFull, err)
	}
	return s.bits, nil
}

// has reports whether all k positions of d are set. The first probe is
// tested alone: in a filter far from full most absent keys stop there,
// after one cache miss. The others are ANDed and tested every eighth
// probe, as in package bloom: their loads overlap, and an absent key
// costs one rarely mispredicted branch instead of a coin flip per probe.
func (l *link) has(d hashing.Digest) bool {
	if l.blocks != 0 {
		return l.hasBlocked(d)
	}
	w := l.words
	if l.redis {
		t, b, m, r := d.H1, d.H2, l.mod, l.recip
		x := hashing.Mod64(t, m, r)
		acc := atomic.LoadUint64(&w[x>>6]) >> (x & 63)
		if acc&1 == 0 {
			return false
		}
		for i := 1; i < l.k; i++ {
			t += b
			x := hashing.Mod64(t, m, r)
			acc &= atomic.LoadUint64(&w[x>>6]) >> (x & 63)
			if i&7 == 0 && acc&1 == 0 {
				return false
			}
		}
		return acc&1 != 0
	}
	t, b := l.ix.DoubleStart(d)
	m, r := l.mod, l.recip
	offs := l.ix.Offsets()
	x := hashing.ModSmall(t+offs[0], m, r)
	acc := atomic.LoadUint64(&w[x>>6]) >> (x & 63)
	if acc&1 == 0 {
		return false
	}
	for i := 1; i < len(offs); i++ {
		t += b
		x := hashing.ModSmall(t+offs[i], m, r)
		acc &= atomic.LoadUint64(&w[x>>6]) >> (x & 63)
		if i&7 == 0 && acc&1 == 0 {
			return false
		}
	}
	return acc&1 != 0
}

// touch loads the words of d's first n probes (n ≤ k; a blocked link's
// block, whatever n), so that a has or
// set of d after it finds them in the cache (an atomic load is never
// optimised away).
func (l *link) touch(d hashing.Digest, n int) {
	if l.blocks != 0 {
		atomic.LoadUint64(&l.blockOf(d)[0]) // one block, one cache line
		return
	}
	w := l.words
	if l.redis {
		t, b, m, r := d.H1, d.H2, l.mod, l.recip
		for i := 0; i < n; i++ {
			atomic.LoadUint64(&w[hashing.Mod64(t, m, r)>>6])
			t += b
		}
		return
	}
	t, b := l.ix.DoubleStart(d)
	m, r := l.mod, l.recip
	for _, o := range l.ix.Offsets()[:n] {
		atomic.LoadUint64(&w[hashing.ModSmall(t+o, m, r)>>6])
		t += b
	}
}

// setBit sets bit x; readers may be loading the word concurrently.
func (l *link) setBit(x uint64) {
	p := &l.words[x>>6]
	if bit := uint64(1) << (x & 63); atomic.LoadUint64(p)&bit == 0 {
		atomic.OrUint64(p, bit)
	}
}

// set sets the k positions of d. It first loads every word it will set
// (touch), so that their cache misses overlap: an atomic OR (LOCK OR on
// amd64) waits for its line and holds back the loads after it, so a link
// larger than the cache would otherwise pay its misses one after another.
func (l *link) set(d hashing.Digest) {
	l.touch(d, l.k)
	if l.redis {
		t, b, m, r := d.H1, d.H2, l.mod, l.recip
		for i := 0; i < l.k; i++ {
			l.setBit(hashing.Mod64(t, m, r))
			t += b
		}
		return
	}
	t, b := l.ix.DoubleStart(d)
	m, r := l.mod, l.recip
	for _, o := range l.ix.Offsets() {
		l.setBit(hashing.ModSmall(t+o, m, r))
		t += b
	}
}
