package cuckoo

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/bloomlab/bloomlab/internal/hugepage"
)

// The RedisBloom profile: RedisBloom 2.4's cuckoo filter (src/cuckoo.c),
// reproduced from its documented behaviour and checked against recorded
// transcripts (docs/CUCKOO.md).
//
// A key's hash is h = MurmurHash64A(key, 0); its fingerprint fp =
// h mod 255 + 1 (one byte, never 0); h2 = h ⊕ fp·0x5bd1e995. Sub-filter s
// has numBuckets·expansion^s buckets (powers of two) of b bytes; the key's
// buckets there are h and h2 modulo its buckets. Inserts look for a free
// slot newest sub-filter first (bucket h, then h2), then kick in the
// newest: the fingerprint in hand goes to slot v of the current bucket
// (v = 0, 1, …, b − 1, 0, … over the iterations), starting at bucket h,
// and the evicted one moves to its other bucket, up to MAXITERATIONS times;
// if no evicted fingerprint finds a free slot the moves are undone in
// reverse order and, if the filter may grow, a sub-filter is added and
// the key goes there.

// nextPow2 is RedisBloom's getNextN2: the smallest power of two ≥ n, with
// 0 for n = 0 and for n > 2^63.
func nextPow2(n uint64) uint64 {
	if n == 0 || n > 1<<63 {
		return 0
	}
	return 1 << bits.Len64(n-1)
}

// NewRedisBloom returns an empty RedisBloom-profile filter as
// CF.RESERVE key capacity BUCKETSIZE bucketSize MAXITERATIONS
// maxIterations EXPANSION expansion creates it (CF.ADD and CF.INSERT
// create NewRedisBloom(1024, 2, 20, 1), RedisBloom's defaults):
// bucketSize 1 … 255, maxIterations 1 … 65535, expansion 0 … 32768
// (rounded up to a power of two; 0: the filter does not grow). It is
// New(Config{Profile: RedisBloom, Capacity: capacity, BucketSize:
// bucketSize, MaxKicks: maxIterations, Expansion: expansion}) with every
// parameter required. The first sub-filter has the next
// power of two of capacity/bucketSize buckets (at least one), as
// RedisBloom's CuckooFilter_Init computes it; CF.RESERVE and CF.INSERT
// also refuse a capacity below 2·bucketSize ("Capacity must be at least
// (BucketSize * 2)"), a check of the commands that the server makes.
// Errors wrap ErrParam and name the argument; the server replies
// RedisBloom's own texts.
func NewRedisBloom(capacity uint64, bucketSize, maxIterations, expansion int) (*Filter, error) {
	switch {
	case bucketSize < 1 || bucketSize > redisMaxBucketSize:
		return nil, fmt.Errorf("cuckoo: BUCKETSIZE %d out of range [1, 255]: %w", bucketSize, ErrParam)
	case maxIterations < 1 || maxIterations > maxKicksLimit:
		return nil, fmt.Errorf("cuckoo: MAXITERATIONS %d out of range [1, 65535]: %w", maxIterations, ErrParam)
	case expansion < 0 || expansion > maxExpansion:
		return nil, fmt.Errorf("cuckoo: EXPANSION %d out of range [0, 32768]: %w", expansion, ErrParam)
	}
	nb := redisBuckets(capacity, bucketSize)
	if nb == 0 || nb > maxTableBits/8/uint64(bucketSize) {
		return nil, fmt.Errorf("cuckoo: capacity %d needs %s buckets of %d bytes, more than 2^48 bits: %w", capacity, bucketCount(nb), bucketSize, ErrParam)
	}
	f := &Filter{
		profile: RedisBloom, counted: true, maxKicks: maxIterations, expansion: nextPow2(uint64(expansion)),
		lay: layout{mode: modeRedis, b: bucketSize, f: 8, bucketBits: 8 * uint64(bucketSize), fpMask: 255},
		m0:  nb, capacity: capacity,
	}
	f.subs = []sub{{m: nb, bytes: hugepage.Bytes(nb * uint64(bucketSize))}}
	return f, nil
}

// redisBuckets returns the buckets of a RedisBloom-profile filter's first
// sub-filter, as CuckooFilter_Init computes them: the next power of two of
// capacity/bucketSize, at least 1; 0 (too many: never 1, as
// RedisBloom's getNextN2 would wrap to) when that is past 2^63.
// bucketSize is at least 1.
func redisBuckets(capacity uint64, bucketSize int) uint64 {
	x := capacity / uint64(bucketSize)
	if x <= 1 {
		return 1
	}
	return nextPow2(x)
}

// bucketCount renders redisBuckets's result for a message.
func bucketCount(nb uint64) string {
	if nb == 0 {
		return "more than 2^63"
	}
	return fmt.Sprint(nb)
}

// redisFP returns the fingerprint and second hash of h. (h mod 255 is a
// constant modulus: the compiler makes it a multiplication.)
func redisFP(h uint64) (fp byte, h2 uint64) {
	fp = byte(h%255 + 1)
	return fp, h ^ uint64(fp)*redisAltMul
}

// bucket returns bucket i (taken modulo the buckets) of s.
func (s *sub) bucket(h uint64, b int) []byte {
	o := (h & (s.m - 1)) * uint64(b)
	return s.bytes[o : o+uint64(b) : o+uint64(b)]
}

func findByte(bk []byte, v byte) int {
	for i, x := range bk {
		if x == v {
			return i
		}
	}
	return -1
}

func (f *Filter) redisContains(h uint64) bool {
	fp, h2 := redisFP(h)
	b := f.lay.b
	for si := range f.subs {
		s := &f.subs[si]
		if findByte(s.bucket(h, b), fp) >= 0 || findByte(s.bucket(h2, b), fp) >= 0 {
			return true
		}
	}
	return false
}

func (f *Filter) redisCount(h uint64) uint64 {
	fp, h2 := redisFP(h)
	b := f.lay.b
	var c uint64
	for si := range f.subs {
		s := &f.subs[si]
		for _, bk := range [2][]byte{s.bucket(h, b), s.bucket(h2, b)} {
			for _, x := range bk {
				if x == fp {
					c++
				}
			}
		}
	}
	return c
}

// redisPlace puts fp in the first free slot of bucket h, else of bucket
// h2, of sub-filter si.
func (f *Filter) redisPlace(si int, h, h2 uint64, fp byte) bool {
	s := &f.subs[si]
	b := f.lay.b
	for _, bk := range [2][]byte{s.bucket(h, b), s.bucket(h2, b)} {
		if i := findByte(bk, 0); i >= 0 {
			bk[i] = fp
			f.noteAdd(si)
			return true
		}
	}
	return false
}

// noteAdd records a fingerprint written to a free slot of sub-filter si.
func (f *Filter) noteAdd(si int) {
	if !f.counted {
		return
	}
	s := &f.subs[si]
	if s.used++; s.used == s.m*uint64(f.lay.b) {
		for si>>6 >= len(f.full) {
			f.full = append(f.full, 0)
		}
		f.full[si>>6] |= 1 << (si & 63)
	}
}

// noteDel records a slot of sub-filter si emptied.
func (f *Filter) noteDel(si int) {
	if !f.counted {
		return
	}
	f.subs[si].used--
	if si>>6 < len(f.full) {
		f.full[si>>6] &^= 1 << (si & 63)
	}
}

// recount counts every sub-filter's occupied slots (see Filter.counted).
func (f *Filter) recount() {
	f.full = f.full[:0]
	f.counted = true
	for si := range f.subs {
		s := &f.subs[si]
		s.used = nonzeroBytes(s.bytes)
		if s.used == s.m*uint64(f.lay.b) {
			for si>>6 >= len(f.full) {
				f.full = append(f.full, 0)
			}
			f.full[si>>6] |= 1 << (si & 63)
		}
	}
}

// nonzeroBytes counts the bytes of b that are not 0 (occupied slots), a
// word at a time.
func nonzeroBytes(b []byte) uint64 {
	const lo7 = 0x7f7f7f7f7f7f7f7f
	var n uint64
	for ; len(b) >= 8; b = b[8:] {
		w := binary.LittleEndian.Uint64(b)
		// The high bit of each byte of z is set iff that byte of w is not 0.
		z := ((w & lo7) + lo7) | w
		n += uint64(bits.OnesCount64(z &^ lo7))
	}
	for _, x := range b {
		if x != 0 {
			n++
		}
	}
	return n
}

// redisPlaceBelow is redisPlace in sub-filters top, top−1, …, 0, the
// first that takes fp, skipping those with no free slot: RedisBloom's
// scan, newest first, without reading the full ones.
func (f *Filter) redisPlaceBelow(top int, h, h2 uint64, fp byte) bool {
	if !f.counted {
		f.recount()
	}
	for si := top; si >= 0; {
		w := si >> 6
		var full uint64
		if w < len(f.full) {
			full = f.full[w]
		}
		free := ^full & (uint64(2)<<(si&63) - 1) // sub-filters 64w … si not full
		if free == 0 {
			si = w*64 - 1
			continue
		}
		si = w*64 + 63 - bits.LeadingZeros64(free)
		if f.redisPlace(si, h, h2, fp) {
			return true
		}
		si--
	}
	return false
}

func (f *Filter) redisInsert(h uint64, reserve func(bits uint64) error) error {
	fp, h2 := redisFP(h)
	b := f.lay.b
	top := len(f.subs) - 1
	if f.redisPlace(top, h, h2, fp) || top > 0 && f.redisPlaceBelow(top-1, h, h2, fp) {
		f.n++
		return nil
	}
	if f.redisKick(top, h, fp) {
		f.n++
		return nil
	}
	if f.expansion == 0 {
		return fmt.Errorf("%w: no free slot for the key within %d iterations, and the filter does not grow (EXPANSION 0); nothing changed", ErrFull, f.maxKicks)
	}
	if err := f.reserveGrowth(reserve); err != nil {
		return err
	}
	if err := f.grow(); err != nil {
		var c uint64
		last := &f.subs[len(f.subs)-1]
		for _, bk := range [2][]byte{last.bucket(h, b), last.bucket(h2, b)} {
			for _, x := range bk {
				if x == fp {
					c++
				}
			}
		}
		return f.growError(err, c)
	}
	if !f.redisPlace(len(f.subs)-1, h, h2, fp) {
		panic("cuckoo: a new sub-filter has no room") // unreachable: it is empty
	}
	f.n++
	return nil
}

// redisKick is RedisBloom's Filter_KOInsert in sub-filter si, with its
// exact undo.
func (f *Filter) redisKick(si int, h uint64, fp byte) bool {
	s := &f.subs[si]
	b := f.lay.b
	mask := s.m - 1
	ii := h & mask
	v := 0
	for c := 0; c < f.maxKicks; c++ {
		bk := s.bucket(ii, b)
		bk[v], fp = fp, bk[v]
		ii = (ii ^ uint64(fp)*redisAltMul) & mask
		nb := s.bucket(ii, b)
		if i := findByte(nb, 0); i >= 0 {
			nb[i] = fp
			f.noteAdd(si)
			return true
		}
		if v++; v == b {
			v = 0
		}
	}
	for c := 0; c < f.maxKicks; c++ {
		if v == 0 {
			v = b
		}
		v--
		ii = (ii ^ uint64(fp)*redisAltMul) & mask
		bk := s.bucket(ii, b)
		bk[v], fp = fp, bk[v]
	}
	return false
}

func (f *Filter) redisDelete(h uint64) bool {
	fp, h2 := redisFP(h)
	b := f.lay.b
	for si := len(f.subs) - 1; si >= 0; si-- {
		s := &f.subs[si]
		for _, bk := range [2][]byte{s.bucket(h, b), s.bucket(h2, b)} {
			if i := findByte(bk, fp); i >= 0 {
				bk[i] = 0
				f.noteDel(si)
				f.n--
				f.deletes++
				if len(f.subs) > 1 && float64(f.deletes) > float64(f.n)*0.10 {
					f.compact(false)
				}
				return true
			}
		}
	}
	return false
}

// Compact moves fingerprints from newer sub-filters into free slots of
// older ones, newest sub-filter first, and drops the newest sub-filters
// it empties (CF.COMPACT). It resets Deletes. The RedisBloom profile also
// compacts by itself, as RedisBloom does, when a delete leaves more than
// one sub-filter and Deletes above a tenth of N (stopping at the first
// sub-filter it cannot empty).
func (f *Filter) Compact() {
	if len(f.subs) > 0 {
		f.compact(true)
	}
}

// compact is RedisBloom's CuckooFilter_Compact: sub-filters from the
// newest down to the second, each emptied as far as it goes; a sub-filter
// that could not be emptied stops the pass unless cont.
func (f *Filter) compact(cont bool) {
	for i := len(f.subs) - 1; i > 0; i-- {
		if !f.compactSingle(i) && !cont {
			break
		}
	}
	f.deletes = 0
}

// compactSingle moves every fingerprint of sub-filter si it can into an
// older sub-filter (oldest first) and frees si if it is the newest and
// was emptied. An entry in bucket j of a sub-filter of m buckets has its
// buckets in an older one of m' buckets at j taken to m' (its low bits for
// RedisBloom, its high bits for bloomlab) and that bucket's alternate.
func (f *Filter) compactSingle(si int) bool {
	cur := &f.subs[si]
	ok := true
	if f.profile == RedisBloom {
		b := f.lay.b
		for j := uint64(0); j < cur.m; j++ {
			bk := cur.bytes[j*uint64(b) : (j+1)*uint64(b)]
			for k, fp := range bk {
				if fp == 0 {
					continue
				}
				h2 := j ^ uint64(fp)*redisAltMul
				moved := false
				for t := 0; t < si && !moved; t++ {
					moved = f.redisPlace(t, j, h2, fp)
				}
				if moved {
					bk[k] = 0
					f.noteDel(si)
				} else {
					ok = false
				}
			}
		}
	} else {
		var e [8]uint64
		for j := uint64(0); j < cur.m; j++ {
			for _, fp := range f.entries(cur, j, &e) {
				if fp == 0 {
					continue
				}
				moved := false
				for t := 0; t < si && !moved; t++ {
					old := &f.subs[t]
					i := j >> (bits.TrailingZeros64(cur.m) - bits.TrailingZeros64(old.m))
					moved = f.place(old, i, fp) || f.place(old, old.alt(i, fp), fp)
				}
				if moved {
					f.unplace(cur, j, fp)
				} else {
					ok = false
				}
			}
		}
	}
	if ok && si == len(f.subs)-1 {
		f.subs = f.subs[:si]
	}
	return ok
}
