package bitvec

import (
	"sync/atomic"

	"github.com/bloomlab/bloomlab/hashing"
)

// Probe is the probe sequence of one key under a double-hashing scheme:
// with (a, b) = ix.DoubleStart(d) and off = ix.Offsets(), position i is
// ModSmall(a + i·b + off[i], m). Every position is computed on its own from
// the running sum a + i·b, so the k memory loads of a query are independent
// and the core issues them together.
//
// A Probe is a value of four words that the compiler keeps in registers;
// walk it as
//
//	p := bitvec.NewProbe(ix, d)
//	for _, o := range ix.Offsets() {
//		x := p.At(o)
//		…
//		p = p.Next()
//	}
//
// (a pointer-receiver Next would pin the Probe to the stack and add a store
// and a load to every probe). The running sum stays below 66·2^48 < 2^56,
// the domain of hashing.ModSmall, for k ≤ 64 and m ≤ 2^48.
type Probe struct{ t, step, m, recip uint64 }

// NewProbe starts the probe sequence of digest d. ix must be of a
// double-hashing scheme (ix.Offsets() != nil).
func NewProbe(ix *hashing.Indexer, d hashing.Digest) (p Probe) {
	p.t, p.step, p.m, p.recip = ix.DoubleProbe(d)
	return p
}

// At returns the current position with offset o (Offsets()[i] at step i).
func (p Probe) At(o uint64) uint64 { return hashing.ModSmall(p.t+o, p.m, p.recip) }

// Next returns the sequence advanced by one step.
func (p Probe) Next() Probe { p.t += p.step; return p }

// Scale returns the sequence of the positions multiplied by w: walked with
// the offsets multiplied by w (ScaledOffsets), its At returns w·x for each
// position x of p, because (w·t) mod (w·m) = w·(t mod m). A structure of
// w-bit cells (a counting filter) thereby gets the bit address of a cell
// from the probe itself, with no multiplication per probe. recip must be
// ⌊(2^64 − 1)/(w·m)⌋ and w·m ≤ 2^48 (the running sum then stays below
// 2^56).
func (p Probe) Scale(w, recip uint64) Probe {
	return Probe{t: p.t * w, step: p.step * w, m: p.m * w, recip: recip}
}

// ScaledOffsets returns ix.Offsets() multiplied by w and the reciprocal
// Scale needs, or nil and 0 for an ix that is not double hashing. w·M()
// must be at most 2^48.
func ScaledOffsets(ix *hashing.Indexer, w uint64) ([]uint64, uint64) {
	off := ix.Offsets()
	if off == nil {
		return nil, 0
	}
	s := make([]uint64, len(off))
	for i, o := range off {
		s[i] = o * w
	}
	return s, ^uint64(0) / (ix.M() * w)
}

// SetKey sets the k positions ix gives d. It must not run concurrently with
// anything else.
//
// For the double-hashing schemes it walks the positions incrementally:
// x_{i+1} = x_i + b mod m by one branch-free AddMod, plus the offset f(i)
// mod m by another, which is ModSmall(a + i·b + f(i)) exactly, without its
// two multiplications. A query wants independent positions (its loads
// wait; see Probe); an insert's stores do not wait, so the short chain of
// additions costs it nothing.
func (v Vec) SetKey(ix *hashing.Indexer, d hashing.Digest) {
	if off := ix.Offsets(); off != nil {
		x, step, m, _ := ix.DoubleProbe(d)
		if ix.Scheme() == hashing.Double {
			for range off {
				v[x>>6] |= 1 << (x & 63)
				x = hashing.AddMod(x, step, m)
			}
			return
		}
		for _, o := range off {
			p := hashing.AddMod(x, o, m)
			v[p>>6] |= 1 << (p & 63)
			x = hashing.AddMod(x, step, m)
		}
		return
	}
	v.setPositions(ix, d)
}

// setPositions is SetKey for the schemes that are not double hashing over
// the whole vector. The partitioned and independent schemes compute each
// position inline, as Positions does, without Positions' buffer: a
// [hashing.MaxK]uint64 on the stack is 512 bytes to zero per key, which
// cost more than the probes at k = 8.
//
//go:noinline
func (v Vec) setPositions(ix *hashing.Indexer, d hashing.Digest) {
	k := ix.K()
	switch ix.Scheme() {
	case hashing.Partition, hashing.PrimePartition:
		sub := ix.SubarraySize()
		x, b := hashing.Reduce(d.H1, sub), hashing.Reduce(d.H2, sub)
		for base := uint64(0); k > 0; k-- {
			p := base + x
			v[p>>6] |= 1 << (p & 63)
			base += sub
			x = hashing.AddMod(x, b, sub)
		}
		return
	case hashing.Independent:
		m := ix.M()
		for i := range k {
			p := hashing.Reduce(hashing.IndependentHash(d, i), m)
			v[p>>6] |= 1 << (p & 63)
		}
		return
	case hashing.PartitionIndependent:
		sub := ix.SubarraySize()
		base := uint64(0)
		for i := range k {
			p := base + hashing.Reduce(hashing.IndependentHash(d, i), sub)
			v[p>>6] |= 1 << (p & 63)
			base += sub
		}
		return
	}
	var buf [hashing.MaxK]uint64
	for _, x := range ix.Positions(d, buf[:]) {
		v[x>>6] |= 1 << (x & 63)
	}
}

// SetKeyAtomic is SetKey with atomic updates: it may run concurrently with
// SetKeyAtomic and with every read method. Each bit is set before
// SetKeyAtomic returns, so a HasKey that starts after it returns finds the
// key.
func (v Vec) SetKeyAtomic(ix *hashing.Indexer, d hashing.Digest) {
	if off := ix.Offsets(); off != nil {
		p := NewProbe(ix, d)
		for _, o := range off {
			v.SetAtomic(p.At(o))
			p = p.Next()
		}
		return
	}
	v.setPositionsAtomic(ix, d)
}

//go:noinline
func (v Vec) setPositionsAtomic(ix *hashing.Indexer, d hashing.Digest) {
	var buf [hashing.MaxK]uint64
	for _, x := range ix.Positions(d, buf[:]) {
		v.SetAtomic(x)
	}
}

// HasKey reports whether the k positions ix gives d are all set: whether a
// standard filter holds the key. It reads with atomic loads.
//
// The probes go four at a time: their bits are ANDed and tested once per
// four, so an absent key costs one rarely mispredicted branch instead of a
// coin-flip branch at every probe, and the unrolled body has no loop
// counter or bounds check per probe.
func (v Vec) HasKey(ix *hashing.Indexer, d hashing.Digest) bool {
	off := ix.Offsets()
	if off == nil {
		return v.hasPositions(ix, d)
	}
	p := NewProbe(ix, d)
	for len(off) >= 4 {
		x0 := p.At(off[0])
		p = p.Next()
		x1 := p.At(off[1])
		p = p.Next()
		x2 := p.At(off[2])
		p = p.Next()
		x3 := p.At(off[3])
		p = p.Next()
		if v.bit(x0)&v.bit(x1)&v.bit(x2)&v.bit(x3)&1 == 0 {
			return false
		}
		off = off[4:]
	}
	acc := uint64(1)
	for _, o := range off {
		acc &= v.bit(p.At(o))
		p = p.Next()
	}
	return acc&1 != 0
}

// bit returns the word holding bit p, loaded atomically, shifted so that
// bit p is its lowest bit.
func (v Vec) bit(p uint64) uint64 { return atomic.LoadUint64(&v[p>>6]) >> (p & 63) }

// hasPositions is HasKey for the schemes that are not double hashing over
// the whole vector; like setPositions it computes the partitioned and
// independent positions inline, stopping at the first clear bit.
//
//go:noinline
func (v Vec) hasPositions(ix *hashing.Indexer, d hashing.Digest) bool {
	k := ix.K()
	switch ix.Scheme() {
	case hashing.Partition, hashing.PrimePartition:
		sub := ix.SubarraySize()
		x, b := hashing.Reduce(d.H1, sub), hashing.Reduce(d.H2, sub)
		for base := uint64(0); k > 0; k-- {
			if v.bit(base+x)&1 == 0 {
				return false
			}
			base += sub
			x = hashing.AddMod(x, b, sub)
		}
		return true
	case hashing.Independent:
		m := ix.M()
		for i := range k {
			if v.bit(hashing.Reduce(hashing.IndependentHash(d, i), m))&1 == 0 {
				return false
			}
		}
		return true
	case hashing.PartitionIndependent:
		sub := ix.SubarraySize()
		base := uint64(0)
		for i := range k {
			if v.bit(base+hashing.Reduce(hashing.IndependentHash(d, i), sub))&1 == 0 {
				return false
			}
			base += sub
		}
		return true
	case hashing.BoomFilters, hashing.BoomPartitioned:
		// (lower + i·upper) mod m, or mod m/k in partition i
		// (hashing.BoomFilters); lower + i·upper < 2^39.
		lo, hi := d.H1&0xffffffff, d.H1>>32
		sub, r := ix.SubarraySize(), ix.Recip()
		step := uint64(0)
		if ix.Scheme() == hashing.BoomPartitioned {
			step = sub
		}
		for base := uint64(0); k > 0; k-- {
			if v.bit(base+hashing.ModSmall(lo, sub, r))&1 == 0 {
				return false
			}
			lo += hi
			base += step
		}
		return true
	case hashing.BlobloomXXH64:
		const bb = hashing.BlobloomBlockBits
		h1, h2 := uint32(d.H1>>32), uint32(d.H1)
		base := (uint64(h2) * ix.BlobloomBlocks()) >> 32 * bb
		for i := range k {
			h1 += h2
			h2 += uint32(i + 1)
			if v.bit(base+uint64(h1&(bb-1)))&1 == 0 {
				return false
			}
		}
		return true
	}
	var buf [hashing.MaxK]uint64
	for _, x := range ix.Positions(d, buf[:]) {
		if !v.Has(x) {
			return false
		}
	}
	return true
}
