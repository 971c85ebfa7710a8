package scalable

import (
	"errors"
	"fmt"
	"math/bits"
	"sync/atomic"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/theory"
)

// link is one Bloom filter of the chain. Everything but the bits and size
// is immutable.
type link struct {
	words []uint64 // bit j is bit j mod 64 of word j/64 (byte j/8, bit j mod 8)
	mod   uint64   // positions lie in [0, mod): bits, or 2^n2
	recip uint64   // ⌊(2^64 − 1)/mod⌋
	k     int
	ix    *hashing.Indexer // bloomlab profile; nil for RedisBloom
	redis bool

	bits    uint64  // 64·len(words)
	entries uint64  // capacity
	errRate float64 // design rate
	bpe     float64 // RedisBloom's bits per entry; 0 for bloomlab
	n2      uint8   // RedisBloom's power-of-two exponent; 0 = none
	size    uint64  // keys added to this link; written under Filter.mu
}

// newLink allocates a link of entries keys at rate errRate in the chain's
// profile.
func (f *Filter) newLink(entries uint64, errRate float64) (*link, error) {
	if f.profile == RedisBloom {
		g, err := redisInit(entries, errRate, f.options)
		if err != nil {
			return nil, err
		}
		return makeRedisLink(g, errRate, make([]uint64, g.bits/64), 0), nil
	}
	m, k, err := bloomlabGeometry(entries, errRate)
	if err != nil {
		return nil, err
	}
	return makeBloomlabLink(m, k, entries, errRate, make([]uint64, m/64), 0)
}

// bloomlabGeometry sizes a bloomlab link: theory.Size's m rounded up to a
// multiple of 64, and its k.
func bloomlabGeometry(entries uint64, errRate float64) (m uint64, k int, err error) {
	if entries < 1 || !(errRate > 0 && errRate < 1) {
		return 0, 0, fmt.Errorf("link of %d entries at rate %v: %w", entries, errRate, errCannotGrow)
	}
	m, k, err = theory.Size(entries, errRate)
	if errors.Is(err, theory.ErrTooLarge) {
		return 0, 0, fmt.Errorf("link of %d entries at rate %v needs more than 2^48 bits: %w", entries, errRate, errCannotGrow)
	} else if err != nil {
		return 0, 0, fmt.Errorf("link of %d entries at rate %v: %v: %w", entries, errRate, err, errCannotGrow)
	}
	m = (m + 63) / 64 * 64
	if m > hashing.MaxM || k > hashing.MaxK {
		return 0, 0, fmt.Errorf("link of %d entries at rate %v needs m = %d bits, k = %d (limits 2^48, %d): %w", entries, errRate, m, k, hashing.MaxK, errCannotGrow)
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

// nextLink allocates the link after cur, the n-th: entries times the
// expansion, the rate times the ratio.
func (f *Filter) nextLink(cur *link, n int) (*link, error) {
	entries, errRate, err := f.nextShape(cur, n)
	if err != nil {
		return nil, err
	}
	return f.newLink(entries, errRate)
}

func (f *Filter) nextShape(cur *link, n int) (entries uint64, errRate float64, err error) {
	if n >= MaxLinks {
		return 0, 0, fmt.Errorf("the chain has %d links, the most it may have: %w", n, errCannotGrow)
	}
	hi, entries := bits.Mul64(cur.entries, uint64(f.growth))
	if hi != 0 || entries == 0 {
		return 0, 0, fmt.Errorf("link of %d × %d entries: %w", cur.entries, f.growth, errCannotGrow)
	}
	return entries, cur.errRate * f.ratio, nil
}

// NextLinkBits returns the bits the next link would take, without
// allocating it: the memory the add that fills the newest link will
// allocate. It returns 0 for a non-scaling chain, and an error wrapping
// ErrFull when the chain cannot grow. A chain read from an untrusted
// source may have a large expansion: check this before adding to it if
// memory matters.
func (f *Filter) NextLinkBits() (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ls := f.snapshot()
	if len(ls) == 0 {
		return 0, errZero
	}
	if f.NonScaling() {
		return 0, nil
	}
	entries, errRate, err := f.nextShape(ls[len(ls)-1], len(ls))
	if err == nil {
		if f.profile == RedisBloom {
			var g redisGeometry
			if g, err = redisInit(entries, errRate, f.options); err == nil {
				return g.bits, nil
			}
		} else {
			var m uint64
			if m, _, err = bloomlabGeometry(entries, errRate); err == nil {
				return m, nil
			}
		}
	}
	return 0, fmt.Errorf("scalable: %w: %v", ErrFull, err)
}

// has reports whether all k positions of d are set. The bits are ANDed
// and tested every fourth probe, as in package bloom: an absent key costs
// one rarely mispredicted branch instead of a coin flip per probe.
func (l *link) has(d hashing.Digest) bool {
	w := l.words
	acc := uint64(1)
	if l.redis {
		t, b, m, r := d.H1, d.H2, l.mod, l.recip
		for i := 0; i < l.k; i++ {
			x := hashing.Mod64(t, m, r)
			acc &= atomic.LoadUint64(&w[x>>6]) >> (x & 63)
			if i&3 == 3 && acc&1 == 0 {
				return false
			}
			t += b
		}
		return acc&1 != 0
	}
	t, b := l.ix.DoubleStart(d)
	m, r := l.mod, l.recip
	for i, o := range l.ix.Offsets() {
		x := hashing.ModSmall(t+o, m, r)
		acc &= atomic.LoadUint64(&w[x>>6]) >> (x & 63)
		if i&3 == 3 && acc&1 == 0 {
			return false
		}
		t += b
	}
	return acc&1 != 0
}

// setBit sets bit x; readers may be loading the word concurrently.
func (l *link) setBit(x uint64) {
	p := &l.words[x>>6]
	if bit := uint64(1) << (x & 63); atomic.LoadUint64(p)&bit == 0 {
		atomic.OrUint64(p, bit)
	}
}

// set sets the k positions of d.
func (l *link) set(d hashing.Digest) {
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
