package scalable

import (
	"fmt"
	"math"
	"math/bits"
	"sync/atomic"
)

// sameGeometry reports whether links a and b have the same shape.
func sameGeometry(a, b *link) bool {
	return a.bits == b.bits && a.mod == b.mod && a.k == b.k && a.entries == b.entries &&
		math.Float64bits(a.errRate) == math.Float64bits(b.errRate) &&
		math.Float64bits(a.bpe) == math.Float64bits(b.bpe) && a.n2 == b.n2
}

// compatible reports why f and g cannot be combined, or nil.
func (f *Filter) compatible(g *Filter) error {
	fl, gl := f.snapshot(), g.snapshot()
	switch {
	case len(fl) == 0 || len(gl) == 0:
		return fmt.Errorf("scalable: union with the zero Filter: %w", ErrParam)
	case f.profile != g.profile:
		return fmt.Errorf("scalable: profiles %v and %v differ: %w", f.profile, g.profile, ErrIncompatible)
	case f.seed != g.seed:
		return fmt.Errorf("scalable: seeds %d and %d differ: %w", f.seed, g.seed, ErrIncompatible)
	case f.growth != g.growth || f.ratio != g.ratio || f.options != g.options:
		return fmt.Errorf("scalable: expansion, ratio or options differ (%d, %v, %d and %d, %v, %d): %w",
			f.growth, f.ratio, f.options, g.growth, g.ratio, g.options, ErrIncompatible)
	case len(gl) > maxLinks:
		return fmt.Errorf("scalable: %d links: %w", len(gl), ErrIncompatible)
	}
	for i := 0; i < min(len(fl), len(gl)); i++ {
		if !sameGeometry(fl[i], gl[i]) {
			return fmt.Errorf("scalable: link %d differs in size, capacity or rate: %w", i, ErrIncompatible)
		}
	}
	return nil
}

// order returns f's place in the global lock order, assigning one on
// first use.
func (f *Filter) order() uint64 {
	if id := f.id.Load(); id != 0 {
		return id
	}
	f.id.CompareAndSwap(0, lastID.Add(1))
	return f.id.Load()
}

// lockPair locks f and g (f ≠ g) in a global order, so that f.Union(g)
// and g.Union(f) cannot deadlock.
func lockPair(f, g *Filter) (unlock func()) {
	a, b := f, g
	if b.order() < a.order() {
		a, b = b, a
	}
	a.mu.Lock()
	b.mu.Lock()
	return func() { b.mu.Unlock(); a.mu.Unlock() }
}

// Union makes f hold every key of f and g. The chains must have the same
// profile, seed, expansion, ratio and options, and agree link for link on
// the links both have (chains from one Config always do): shared links'
// bits are ORed and their counts added; g's links beyond f's are copied.
// Otherwise it returns an error wrapping ErrIncompatible and changes
// nothing.
//
// The union of two full links can hold up to twice a link's capacity of
// distinct keys: the counts are added so that they bound it from above
// (and the chain opens a new link for the next key), but such a link's
// rate exceeds its design rate, so the compound bound no longer holds;
// EstimatedFPR measures the real rate from the bits, and Describe warns.
func (f *Filter) Union(g *Filter) error {
	if f == g {
		if len(f.snapshot()) == 0 {
			return errZero
		}
		return nil
	}
	unlock := lockPair(f, g)
	defer unlock()
	if err := f.compatible(g); err != nil {
		return err
	}
	fl, gl := f.snapshot(), g.snapshot()
	sizes := make([]uint64, max(len(fl), len(gl)))
	var card, overflow uint64
	for i := range sizes {
		var a, b, c uint64
		if i < len(fl) {
			a = fl[i].size
		}
		if i < len(gl) {
			b = gl[i].size
		}
		sizes[i], c = bits.Add64(a, b, 0)
		overflow |= c
		card, c = bits.Add64(card, sizes[i], 0)
		overflow |= c
	}
	if overflow != 0 {
		return fmt.Errorf("scalable: the union's key count overflows 64 bits: %w", ErrIncompatible)
	}
	var extra []*link
	for i := len(fl); i < len(gl); i++ {
		extra = append(extra, gl[i].clone())
	}
	for i, l := range fl {
		if i < len(gl) {
			l.size = sizes[i]
			for j, w := range gl[i].words {
				if w != 0 {
					atomic.OrUint64(&l.words[j], w)
				}
			}
		}
	}
	if len(extra) > 0 {
		grown := append(fl[:len(fl):len(fl)], extra...)
		f.links.Store(&grown)
	}
	f.card.Store(card)
	return nil
}

// clone returns a copy of l (its owner's mutex held).
func (l *link) clone() *link {
	c := *l
	c.words = make([]uint64, len(l.words))
	for i := range l.words {
		c.words[i] = atomic.LoadUint64(&l.words[i])
	}
	return &c
}

// Clone returns a copy of f, its memory budget included.
func (f *Filter) Clone() *Filter {
	f.mu.Lock()
	defer f.mu.Unlock()
	g := &Filter{profile: f.profile, seed: f.seed, growth: f.growth, ratio: f.ratio, options: f.options}
	g.maxBits.Store(f.maxBits.Load())
	ls := f.snapshot()
	if ls == nil {
		return g
	}
	cl := make([]*link, len(ls))
	for i, l := range ls {
		cl[i] = l.clone()
	}
	g.links.Store(&cl)
	g.card.Store(f.card.Load())
	return g
}

// Equal reports whether f and g have the same configuration, links, counts
// and bits.
func (f *Filter) Equal(g *Filter) bool {
	if f == g {
		return true
	}
	unlock := lockPair(f, g)
	defer unlock()
	fl, gl := f.snapshot(), g.snapshot()
	if f.profile != g.profile || f.seed != g.seed || f.growth != g.growth || f.ratio != g.ratio ||
		f.options != g.options || f.card.Load() != g.card.Load() || len(fl) != len(gl) {
		return false
	}
	for i := range fl {
		if !sameGeometry(fl[i], gl[i]) || fl[i].size != gl[i].size {
			return false
		}
		for j := range fl[i].words {
			if atomic.LoadUint64(&fl[i].words[j]) != atomic.LoadUint64(&gl[i].words[j]) {
				return false
			}
		}
	}
	return true
}
