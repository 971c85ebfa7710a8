package cuckoo

import (
	"fmt"
	"math/bits"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/hugepage"
)

// The bloomlab profile's tables: bucket i of a sub-filter occupies bits
// i·B … i·B + B − 1 of its words (bit p is bit p mod 64 of word ⌊p/64⌋),
// B = b·f bits for plain buckets (slot k in bits k·f … k·f + f − 1 of the
// bucket, 0 meaning empty) and 4f − 4 for semi-sorted ones (semisort.go).
// Two guard words after the table let a bucket be read with unaligned
// 64-bit loads and no bounds arithmetic.

// mode selects the code path of a filter's operations.
type mode uint8

const (
	modeNone  mode = iota // the zero Filter
	modePlain             // plain buckets of at most 64 bits: one load each
	modeWide              // plain buckets of more than 64 bits: parts of 2^k slots of at most 64 bits
	modeSemi              // semi-sorted buckets of four slots
	modeRedis             // RedisBloom's byte buckets
)

// layout is a table's bucket geometry and the constants of its SWAR
// (SIMD within a register) comparisons.
type layout struct {
	mode       mode
	b, f       int
	semisort   bool
	bucketBits uint64 // B
	partBits   uint64 // bits read per comparison: B, or a part of 2^k slots for modeWide
	laneShift  uint   // log2 of the slots per part
	logB       uint   // log2 b
	ones       uint64 // bit 0 of each slot of a part
	highs      uint64 // the top bit of each slot of a part
	low        uint64 // the other bits of each slot
	fpMask     uint64 // 2^f − 1
	sfx        uint   // semi-sorted: the f − 4 stored bits of each fingerprint
	aligned    bool   // plain buckets of 8, 16, 32 or 64 bits: never across two words
}

// newLayout validates (b, f, semisort) for the bloomlab profile.
func newLayout(b, f int, semisort bool) (layout, error) {
	switch {
	case b != 1 && b != 2 && b != 4 && b != 8:
		return layout{}, fmt.Errorf("cuckoo: BucketSize = %d, want 1, 2, 4 or 8: %w", b, ErrParam)
	case f < minFingerprintBits || f > maxFingerprintBits:
		return layout{}, fmt.Errorf("cuckoo: FingerprintBits = %d out of range [%d, %d]: %w", f, minFingerprintBits, maxFingerprintBits, ErrParam)
	case semisort && b != 4:
		return layout{}, fmt.Errorf("cuckoo: Semisort needs BucketSize 4, not %d: %w", b, ErrParam)
	}
	l := layout{b: b, f: f, semisort: semisort, fpMask: 1<<f - 1, logB: uint(bits.TrailingZeros(uint(b)))}
	if semisort {
		l.mode = modeSemi
		l.bucketBits = uint64(4*f - 4)
		l.sfx = uint(f - 4)
		return l, nil
	}
	l.bucketBits = uint64(b * f)
	lanes := b
	for lanes*f > 64 {
		lanes /= 2
	}
	l.mode = modePlain
	if lanes < b {
		l.mode = modeWide
	}
	l.aligned = 64%l.bucketBits == 0
	l.partBits = uint64(lanes * f)
	l.laneShift = uint(bits.TrailingZeros(uint(lanes)))
	for i := 0; i < lanes; i++ {
		l.ones |= 1 << (i * f)
	}
	l.highs = l.ones << (f - 1)
	l.low = l.ones * uint64(l.fpMask) &^ l.highs
	return l, nil
}

// words returns the words of a table of m buckets, guard words included.
func (l *layout) words(m uint64) uint64 { return (m*l.bucketBits+63)/64 + 2 }

// read64 returns the 64 bits of w from bit off on: one bounds check, and
// shift counts the compiler knows are below 64 (w[k+1] is shifted by
// 63 − s, then by 1, so that s = 0 needs no special case).
func read64(w []uint64, off uint64) uint64 {
	k, s := off>>6, off&63
	p := w[k : k+2 : k+2]
	return p[0]>>s | p[1]<<(63-s)<<1
}

// setBits sets the width (1 … 64) bits of w from bit off on to v.
func setBits(w []uint64, off uint64, width uint, v uint64) {
	mask := uint64(1)<<width - 1
	v &= mask
	k, s := off>>6, off&63
	w[k] = w[k]&^(mask<<s) | v<<s
	if s+uint64(width) > 64 {
		w[k+1] = w[k+1]&^(mask>>(64-s)) | v>>(64-s)
	}
}

// zeroLanes returns the top bit of every slot of x that is zero (exact per
// slot, unlike the "has a zero" test).
func (l *layout) zeroLanes(x uint64) uint64 {
	return ^((x&l.low + l.low) | x) & l.highs
}

// hasZero reports whether some slot of x is zero.
func (l *layout) hasZero(x uint64) bool { return (x-l.ones)&^x&l.highs != 0 }

// containsPlain is ContainsHash for buckets of at most 64 bits: both
// buckets of every sub-filter are loaded and tested without a branch
// between them.
func (f *Filter) containsPlain(d hashing.Digest) bool {
	fp := f.fingerprint(d.H2)
	l := &f.lay
	x := fp * l.ones
	for si := len(f.subs) - 1; si >= 0; si-- {
		s := &f.subs[si]
		i1 := s.index(d.H1)
		i2 := s.alt(i1, fp)
		var v1, v2 uint64
		if l.aligned {
			// A bucket of 8, 16, 32 or 64 bits lies in one word.
			o1, o2 := i1*l.bucketBits, i2*l.bucketBits
			v1, v2 = s.words[o1>>6]>>(o1&63)^x, s.words[o2>>6]>>(o2&63)^x
		} else {
			v1 = read64(s.words, i1*l.bucketBits) ^ x
			v2 = read64(s.words, i2*l.bucketBits) ^ x
		}
		if ((v1-l.ones)&^v1|(v2-l.ones)&^v2)&l.highs != 0 {
			return true
		}
	}
	return false
}

// containsGeneric is ContainsHash for wide and semi-sorted buckets.
func (f *Filter) containsGeneric(d hashing.Digest) bool {
	fp := f.fingerprint(d.H2)
	for si := len(f.subs) - 1; si >= 0; si-- {
		s := &f.subs[si]
		i1 := s.index(d.H1)
		if f.match(s, i1, fp) || f.match(s, s.alt(i1, fp), fp) {
			return true
		}
	}
	return false
}

// match reports whether bucket i of s holds fp.
func (f *Filter) match(s *sub, i, fp uint64) bool {
	l := &f.lay
	off := i * l.bucketBits
	switch l.mode {
	case modeSemi:
		return semiMatch(l, s.words, off, fp)
	case modeWide:
		x := fp * l.ones
		for h := uint64(0); h < l.bucketBits; h += l.partBits {
			if l.hasZero(read64(s.words, off+h) ^ x) {
				return true
			}
		}
		return false
	}
	return l.hasZero(read64(s.words, off) ^ fp*l.ones)
}

// place puts fp in a free slot of bucket i of s, if it has one.
func (f *Filter) place(s *sub, i, fp uint64) bool {
	l := &f.lay
	off := i * l.bucketBits
	if l.mode == modeSemi {
		return semiPlace(l, s.words, off, fp)
	}
	for h := uint64(0); h < l.bucketBits; h += l.partBits {
		if z := l.zeroLanes(read64(s.words, off+h)); z != 0 {
			setBits(s.words, off+h+uint64(bits.TrailingZeros64(z)-(l.f-1)), uint(l.f), fp)
			return true
		}
	}
	return false
}

// unplace removes one copy of fp from bucket i of s, if it holds one.
func (f *Filter) unplace(s *sub, i, fp uint64) bool {
	l := &f.lay
	off := i * l.bucketBits
	if l.mode == modeSemi {
		return semiUnplace(l, s.words, off, fp)
	}
	x := fp * l.ones
	for h := uint64(0); h < l.bucketBits; h += l.partBits {
		if z := l.zeroLanes(read64(s.words, off+h) ^ x); z != 0 {
			setBits(s.words, off+h+uint64(bits.TrailingZeros64(z)-(l.f-1)), uint(l.f), 0)
			return true
		}
	}
	return false
}

// matches counts the copies of fp in bucket i of s.
func (f *Filter) matches(s *sub, i, fp uint64) int {
	l := &f.lay
	off := i * l.bucketBits
	if l.mode == modeSemi {
		return semiCount(l, s.words, off, fp)
	}
	x := fp * l.ones
	c := 0
	for h := uint64(0); h < l.bucketBits; h += l.partBits {
		c += bits.OnesCount64(l.zeroLanes(read64(s.words, off+h) ^ x))
	}
	return c
}

// occupied counts the nonzero slots of bucket i of s.
func (f *Filter) occupied(s *sub, i uint64) int {
	l := &f.lay
	off := i * l.bucketBits
	if l.mode == modeSemi {
		var e [4]uint64
		semiDecode(l, s.words, off, &e)
		c := 0
		for _, v := range e {
			if v != 0 {
				c++
			}
		}
		return c
	}
	c := 0
	for h := uint64(0); h < l.bucketBits; h += l.partBits {
		c += bits.OnesCount64(l.highs &^ l.zeroLanes(read64(s.words, off+h)))
	}
	return c
}

// entries returns the b fingerprints of bucket i of s (0 for an empty
// slot): in slot order, or ascending for semi-sorted buckets.
func (f *Filter) entries(s *sub, i uint64, e *[8]uint64) []uint64 {
	l := &f.lay
	if l.mode == modeSemi {
		var q [4]uint64
		semiDecode(l, s.words, i*l.bucketBits, &q)
		copy(e[:], q[:])
		return e[:4]
	}
	for k := 0; k < l.b; k++ {
		e[k] = read64(s.words, l.slot(i, k)) & l.fpMask
	}
	return e[:l.b]
}

// slot returns the bit offset of slot v of plain bucket i.
func (l *layout) slot(i uint64, v int) uint64 {
	h := uint64(v >> l.laneShift)
	lane := uint64(v & (1<<l.laneShift - 1))
	return i*l.bucketBits + h*l.partBits + lane*uint64(l.f)
}

// swap puts fp in slot v of the full bucket i of s (for semi-sorted
// buckets: in place of the v-th smallest fingerprint) and returns the
// fingerprint it replaced.
func (f *Filter) swap(s *sub, i uint64, v int, fp uint64) uint64 {
	l := &f.lay
	if l.mode == modeSemi {
		return semiSwap(l, s.words, i*l.bucketBits, v, fp)
	}
	off := l.slot(i, v)
	old := read64(s.words, off) & l.fpMask
	setBits(s.words, off, uint(l.f), fp)
	return old
}

// unswap undoes swap: bucket i of s holds placed (in slot v of a plain
// bucket); put fp back in its place.
func (f *Filter) unswap(s *sub, i uint64, v int, placed, fp uint64) {
	l := &f.lay
	if l.mode == modeSemi {
		semiReplace(l, s.words, i*l.bucketBits, placed, fp)
		return
	}
	setBits(s.words, l.slot(i, v), uint(l.f), fp)
}

// insert is AddHashReserve for the bloomlab profile.
func (f *Filter) insert(d hashing.Digest, reserve func(bits uint64) error) error {
	fp := f.fingerprint(d.H2)
	for si := len(f.subs) - 1; si >= 0; si-- {
		s := &f.subs[si]
		i1 := s.index(d.H1)
		if f.place(s, i1, fp) || f.place(s, s.alt(i1, fp), fp) {
			f.n++
			return nil
		}
	}
	s := &f.subs[len(f.subs)-1]
	i1 := s.index(d.H1)
	if f.kick(s, i1, s.alt(i1, fp), fp, d.H1^bits.RotateLeft64(d.H2, 29)) {
		f.n++
		return nil
	}
	if f.expansion == 0 {
		return fmt.Errorf("%w: no free slot for the key within %d relocations, and the filter does not grow (%d keys in %d slots); nothing changed", ErrFull, f.maxKicks, f.n, f.slots())
	}
	if err := f.reserveGrowth(reserve); err != nil {
		return err
	}
	if err := f.grow(); err != nil {
		last := &f.subs[len(f.subs)-1]
		i1 := last.index(d.H1)
		c := uint64(f.matches(last, i1, fp))
		if i2 := last.alt(i1, fp); i2 != i1 {
			c += uint64(f.matches(last, i2, fp))
		}
		return f.growError(err, c)
	}
	s = &f.subs[len(f.subs)-1]
	if !f.place(s, s.index(d.H1), fp) {
		panic("cuckoo: a new sub-filter has no room") // unreachable: it is empty
	}
	f.n++
	return nil
}

// kick runs the random walk of CF §3 (Algorithm 1) in sub-filter s for a
// key whose buckets i1 and i2 are full: move a random entry of the
// current bucket to its other bucket, up to MaxKicks times, until one
// lands in a bucket with a free slot. If none does, it undoes every move
// in reverse order, so the table is exactly as before (no fingerprint is
// dropped), and reports false. The walk's random choices come from an
// LCG seeded with the key's hash, so an insert is a function of the
// table and the key.
func (f *Filter) kick(s *sub, i1, i2, fp, r uint64) bool {
	if len(f.scratch) < f.maxKicks {
		f.scratch = make([]uint64, f.maxKicks)
	}
	sc := f.scratch[:f.maxKicks]
	r = r*rngMul + rngAdd
	i := i1
	if r>>63 != 0 {
		i = i2
	}
	vshift := 64 - f.lay.logB
	hand := fp
	for t := range sc {
		r = r*rngMul + rngAdd
		v := int(r >> vshift)
		victim := f.swap(s, i, v, hand)
		sc[t] = hand | uint64(v)<<32
		hand = victim
		i = s.alt(i, hand)
		if f.place(s, i, hand) {
			return true
		}
	}
	for t := len(sc) - 1; t >= 0; t-- {
		i = s.alt(i, hand)
		placed := sc[t] & (1<<32 - 1)
		f.unswap(s, i, int(sc[t]>>32), placed, hand)
		hand = placed
	}
	return false
}

// delete is DeleteHash for the bloomlab profile: newest sub-filter first
// (docs/CUCKOO.md says why that order is sound).
func (f *Filter) delete(d hashing.Digest) bool {
	fp := f.fingerprint(d.H2)
	for si := len(f.subs) - 1; si >= 0; si-- {
		s := &f.subs[si]
		i1 := s.index(d.H1)
		if f.unplace(s, i1, fp) || f.unplace(s, s.alt(i1, fp), fp) {
			f.n--
			f.deletes++
			return true
		}
	}
	return false
}

// count is CountHash for the bloomlab profile; a key whose two buckets
// are one has it counted once.
func (f *Filter) count(d hashing.Digest) uint64 {
	fp := f.fingerprint(d.H2)
	var c uint64
	for si := range f.subs {
		s := &f.subs[si]
		i1 := s.index(d.H1)
		c += uint64(f.matches(s, i1, fp))
		if i2 := s.alt(i1, fp); i2 != i1 {
			c += uint64(f.matches(s, i2, fp))
		}
	}
	return c
}

// newSub allocates a bloomlab-profile sub-filter of m buckets.
func (f *Filter) newSub(m uint64) sub {
	s := bloomlabSub(m)
	s.words = hugepage.Words(f.lay.words(m))
	return s
}

// bloomlabSub returns the geometry of a bloomlab sub-filter of m buckets.
func bloomlabSub(m uint64) sub {
	j := bits.TrailingZeros64(m)
	if j == 0 {
		return sub{m: m, shift: 63}
	}
	return sub{m: m, amul: altMul, shift: uint(64 - j)}
}

// nextBuckets returns the buckets of the next sub-filter, or an error
// wrapping ErrCannotGrow.
func (f *Filter) nextBuckets() (uint64, error) {
	if len(f.subs) >= maxSubFilters {
		return 0, fmt.Errorf("cuckoo: %w: the filter has %d sub-filters, the most it may have", ErrCannotGrow, maxSubFilters)
	}
	last := f.subs[len(f.subs)-1].m
	hi, m := bits.Mul64(last, f.expansion)
	bb := f.lay.bucketBits
	if f.profile == RedisBloom {
		bb = uint64(f.lay.b) * 8
	}
	if hi != 0 || m > maxTableBits/bb {
		return 0, fmt.Errorf("cuckoo: %w: the next sub-filter would have %d × %d buckets, more than 2^48 bits", ErrCannotGrow, last, f.expansion)
	}
	if budget := f.MaxBits(); budget > 0 {
		next, have := m*bb, f.Bits()
		if next > budget || have > budget-next {
			how := ""
			if f.maxBits == 0 {
				how = fmt.Sprintf(" (the default: %d × the first sub-filter's bits or 2^30, at most half the process's memory; set another with Config.MaxBits or SetMaxBits)", defaultMaxGrowth)
			}
			return 0, fmt.Errorf("cuckoo: %w: the next sub-filter of %d bits would bring the tables from %d to %d bits, beyond the memory budget of %d bits%s",
				ErrCannotGrow, next, have, satAdd(have, next), budget, how)
		}
	}
	return m, nil
}

// satAdd is a + b, saturated at 2^64 − 1.
func satAdd(a, b uint64) uint64 {
	if s := a + b; s >= a {
		return s
	}
	return 1<<64 - 1
}

// growError is the error of an add whose growth failed (err, from grow):
// when the key's buckets in the newest sub-filter hold copies of its own
// fingerprint only, it says so, since more copies of one key need one
// more sub-filter for every 2b of them.
func (f *Filter) growError(err error, copies uint64) error {
	if copies < uint64(f.lay.b) {
		return fmt.Errorf("%w; nothing changed", err)
	}
	return fmt.Errorf("%w; nothing changed (the key's two buckets hold %d copies of its fingerprint: every copy of a key takes a slot, and every %d more copies need a new sub-filter; AddUnique, CF.ADDNX, adds a key once)",
		err, copies, 2*f.lay.b)
}

// reserveGrowth calls reserve, if not nil, with the bits the next growth
// allocates, and returns its error. When the filter cannot grow it does
// not call it and returns nil: grow then fails with the reason.
func (f *Filter) reserveGrowth(reserve func(bits uint64) error) error {
	if reserve == nil {
		return nil
	}
	next, err := f.nextSubFilterBits()
	if err != nil {
		return nil
	}
	return reserve(next)
}

// nextSubFilterBits returns the bits the next growth allocates (0 if the
// filter does not grow), or an error wrapping ErrCannotGrow if it cannot
// grow.
func (f *Filter) nextSubFilterBits() (uint64, error) {
	if len(f.subs) == 0 {
		return 0, errZero
	}
	if f.expansion == 0 {
		return 0, nil
	}
	m, err := f.nextBuckets()
	if err != nil {
		return 0, err
	}
	if f.profile == RedisBloom {
		return m * uint64(f.lay.b) * 8, nil
	}
	return m * f.lay.bucketBits, nil
}

// grow appends the next sub-filter.
func (f *Filter) grow() error {
	m, err := f.nextBuckets()
	if err != nil {
		return err
	}
	if f.profile == RedisBloom {
		f.subs = append(f.subs, sub{m: m, bytes: hugepage.Bytes(m * uint64(f.lay.b))})
	} else {
		f.subs = append(f.subs, f.newSub(m))
	}
	return nil
}
