package cuckoo

import (
	"bytes"
	"fmt"
	"math/bits"
	"slices"
)

// Clone returns a deep copy of f.
func (f *Filter) Clone() *Filter {
	g := *f
	g.scratch = nil
	g.subs = make([]sub, len(f.subs))
	for i, s := range f.subs {
		g.subs[i] = sub{m: s.m, amul: s.amul, shift: s.shift, words: slices.Clone(s.words), bytes: slices.Clone(s.bytes), used: s.used}
	}
	g.full = slices.Clone(f.full)
	if f.subs == nil {
		g.subs = nil
	}
	return &g
}

// Equal reports whether f and g have the same parameters, counts and
// tables, so that they answer every call alike (two zero Filters are
// equal). The design capacity, which RedisBloom's dumps do not carry, is
// not compared.
func (f *Filter) Equal(g *Filter) bool {
	if f.profile != g.profile || f.lay != g.lay || f.maxKicks != g.maxKicks || f.expansion != g.expansion ||
		f.seed != g.seed || f.m0 != g.m0 || f.n != g.n || f.deletes != g.deletes ||
		len(f.subs) != len(g.subs) {
		return false
	}
	for i := range f.subs {
		a, b := &f.subs[i], &g.subs[i]
		if a.m != b.m || !bytes.Equal(a.bytes, b.bytes) || !slices.Equal(a.words, b.words) {
			return false
		}
	}
	return true
}

// Clear empties f: it keeps its first sub-filter, emptied, and its
// parameters; N and Deletes become 0.
func (f *Filter) Clear() {
	if len(f.subs) == 0 {
		return
	}
	f.subs = f.subs[:1]
	clear(f.subs[0].words)
	clear(f.subs[0].bytes)
	f.subs[0].used = 0
	clear(f.full)
	f.n, f.deletes = 0, 0
}

// compatible reports why f and g cannot be merged, or nil.
func (f *Filter) compatible(g *Filter) error {
	switch {
	case len(f.subs) == 0 || len(g.subs) == 0:
		return fmt.Errorf("cuckoo: cannot merge the zero Filter: %w", ErrIncompatible)
	case f.profile != g.profile:
		return fmt.Errorf("cuckoo: cannot merge a %v-profile filter with a %v-profile one: %w", f.profile, g.profile, ErrIncompatible)
	case f.seed != g.seed:
		return fmt.Errorf("cuckoo: cannot merge filters with seeds %d and %d: %w", f.seed, g.seed, ErrIncompatible)
	case f.lay != g.lay:
		return fmt.Errorf("cuckoo: cannot merge buckets of %d × %d bits (semi-sorted %v) with buckets of %d × %d bits (semi-sorted %v): %w",
			f.lay.b, f.lay.f, f.lay.semisort, g.lay.b, g.lay.f, g.lay.semisort, ErrIncompatible)
	case f.m0 != g.m0:
		return fmt.Errorf("cuckoo: cannot merge filters of %d and %d buckets: %w", f.m0, g.m0, ErrIncompatible)
	case f.expansion != g.expansion && len(f.subs)+len(g.subs) > 2:
		return fmt.Errorf("cuckoo: cannot merge growing filters with expansions %d and %d: %w", f.expansion, g.expansion, ErrIncompatible)
	}
	return nil
}

// Merge adds every fingerprint of g to f, as if every key held by g were
// added to f again (a multiset sum: N adds up, a key held by both is held
// twice). The filters must have the same profile, seed, bucket layout and
// first sub-filter; growing filters also the same expansion. A
// fingerprint of g's sub-filter s goes to the same buckets of f's
// sub-filter s or an older one (its buckets there follow from its bucket
// in s), with relocations in sub-filter s; f gains g's extra sub-filters
// first. A fingerprint cannot move to a newer sub-filter than g's (its
// buckets there depend on hash bits the filter does not keep), so two
// grown filters whose first sub-filters are both nearly full do not
// merge. If one does not fit, Merge fails with an error wrapping ErrFull
// and f is unchanged; so it does, wrapping ErrCannotGrow (and ErrFull),
// if g's extra sub-filters would take f's tables past the memory budget
// set for f (Config.MaxBits, SetMaxBits; not the default, which bounds
// the growth that copies of a key force, while g's sub-filters exist
// already); on a mismatch it fails wrapping ErrIncompatible.
func (f *Filter) Merge(g *Filter) error {
	if err := f.compatible(g); err != nil {
		return err
	}
	if budget := f.MaxBits(); f.maxBits != 0 && budget > 0 && len(g.subs) > len(f.subs) {
		// g's extra sub-filters are a growth: within the budget set for f
		// (the default, which bounds the growth copies of a key force,
		// stands aside: g's sub-filters exist already).
		have, extra := f.Bits(), uint64(0)
		for _, s := range g.subs[len(f.subs):] {
			extra = satAdd(extra, s.m*f.lay.bucketBits)
		}
		if extra > budget || have > budget-extra {
			return fmt.Errorf("cuckoo: merge: %w: g's %d more sub-filters would bring the tables from %d to %d bits, beyond the memory budget of %d bits (SetMaxBits); the filter is unchanged",
				ErrCannotGrow, len(g.subs)-len(f.subs), have, satAdd(have, extra), budget)
		}
	}
	h := f.Clone() // g may be f: it is read, h written
	for len(h.subs) < len(g.subs) {
		m := h.m0
		for range len(h.subs) {
			m *= max(h.expansion, 1)
		}
		if h.profile == RedisBloom {
			h.subs = append(h.subs, sub{m: m, bytes: make([]byte, m*uint64(h.lay.b))})
		} else {
			h.subs = append(h.subs, h.newSub(m))
		}
	}
	var e [8]uint64
	for si := range g.subs {
		s := &g.subs[si]
		for j := uint64(0); j < s.m; j++ {
			if h.profile == RedisBloom {
				b := uint64(h.lay.b)
				for _, x := range s.bytes[j*b : (j+1)*b] {
					if x != 0 && !h.redisAddAt(si, j, x) {
						return fmt.Errorf("cuckoo: merge: %w: a fingerprint of sub-filter %d finds no room; the filter is unchanged", ErrFull, si)
					}
				}
				continue
			}
			for _, fp := range h.entries(s, j, &e) {
				if fp != 0 && !h.addAt(si, j, fp) {
					return fmt.Errorf("cuckoo: merge: %w: a fingerprint of sub-filter %d finds no room; the filter is unchanged", ErrFull, si)
				}
			}
		}
	}
	h.n += g.n
	h.deletes += g.deletes
	*f = *h
	return nil
}

// addAt inserts fingerprint fp that lives in bucket j of a sub-filter
// shaped like f's sub-filter si: into a free slot of its buckets in
// sub-filter si or an older one (newest first), else by relocations in
// si. It reports false, changing nothing, if it does not fit.
func (f *Filter) addAt(si int, j, fp uint64) bool {
	top := &f.subs[si]
	for t := si; t >= 0; t-- {
		s := &f.subs[t]
		i := j >> (bits.TrailingZeros64(top.m) - bits.TrailingZeros64(s.m))
		if f.place(s, i, fp) || f.place(s, s.alt(i, fp), fp) {
			return true
		}
	}
	// A walk seeded by the fingerprint and bucket.
	return f.kick(top, j, top.alt(j, fp), fp, j*altMul^fp)
}

// redisAddAt is addAt for the RedisBloom profile, whose older sub-filters
// take the low bits of the bucket.
func (f *Filter) redisAddAt(si int, j uint64, fp byte) bool {
	h2 := j ^ uint64(fp)*redisAltMul
	for t := si; t >= 0; t-- {
		if f.redisPlace(t, j, h2, fp) {
			return true
		}
	}
	return f.redisKick(si, j, fp)
}
