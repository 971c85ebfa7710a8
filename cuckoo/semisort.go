package cuckoo

import "math/bits"

// Semi-sorted buckets (CF §5.2). A bucket's four f-bit fingerprints are
// kept in ascending order (empty slots, value 0, first). Their top 4 bits,
// the prefixes, then form a sorted multiset of four values in 0 … 15, one
// of C(19, 4) = 3876, stored as its rank in 12 bits instead of 16; the
// remaining f − 4 bits of each fingerprint follow in the same order:
//
//	bits 0 … 11              rank of (p0 ≤ p1 ≤ p2 ≤ p3)
//	bits 12 + k·(f − 4) …    the low f − 4 bits of fingerprint k, k = 0 … 3
//
// for 4f − 4 bits per bucket. Ranks count the multisets in lexicographic
// order of (p0, p1, p2, p3): (0,0,0,0) is 0, (0,0,0,1) is 1, …,
// (15,15,15,15) is 3875.

// semiCodes is the number of sorted prefix multisets.
const semiCodes = 3876

var (
	// semiDec[rank] holds the prefixes p0 … p3 in nibbles 0 … 3.
	semiDec [semiCodes]uint16
	// Prefix sums for the rank: see semiRank.
	semiP3, semiP2, semiP1 [17]uint16
)

func init() {
	i := 0
	for a := 0; a < 16; a++ {
		for b := a; b < 16; b++ {
			for c := b; c < 16; c++ {
				for d := c; d < 16; d++ {
					semiDec[i] = uint16(a | b<<4 | c<<8 | d<<12)
					i++
				}
			}
		}
	}
	// N3(x): triples x ≤ b ≤ c ≤ d ≤ 15 = C(18 − x, 3); N2(x): pairs
	// x ≤ c ≤ d ≤ 15 = C(17 − x, 2); N1(x) = 16 − x.
	for x := 0; x < 16; x++ {
		n3 := (18 - x) * (17 - x) * (16 - x) / 6
		n2 := (17 - x) * (16 - x) / 2
		semiP3[x+1] = semiP3[x] + uint16(n3)
		semiP2[x+1] = semiP2[x] + uint16(n2)
		semiP1[x+1] = semiP1[x] + uint16(16-x)
	}
}

// semiRank returns the rank of the sorted prefixes a ≤ b ≤ c ≤ d: the
// multisets starting with a smaller first value, then those with first
// value a and a smaller second (between a and b), and so on.
func semiRank(a, b, c, d uint64) uint64 {
	return uint64(semiP3[a]) + uint64(semiP2[b]-semiP2[a]) + uint64(semiP1[c]-semiP1[b]) + (d - c)
}

// field128 returns width bits of the 128-bit value (lo, hi) from bit pos.
func field128(lo, hi uint64, pos, width uint) uint64 {
	var v uint64
	if pos >= 64 {
		v = hi >> (pos - 64)
	} else {
		v = lo>>pos | hi<<(64-pos)
	}
	return v & (uint64(1)<<width - 1)
}

// semiRead returns the 4f − 4 bits of the bucket at off.
func semiRead(l *layout, w []uint64, off uint64) (lo, hi uint64) {
	lo = read64(w, off)
	if l.bucketBits > 64 {
		hi = read64(w, off+64)
	}
	return lo, hi
}

// semiDecode sets e to the bucket's four fingerprints in ascending order.
// It reports false for an invalid rank (which only a corrupt file holds;
// e is then zero).
func semiDecode(l *layout, w []uint64, off uint64, e *[4]uint64) bool {
	lo, hi := semiRead(l, w, off)
	code := lo & 0xfff
	if code >= semiCodes {
		*e = [4]uint64{}
		return false
	}
	p := uint64(semiDec[code])
	for k := range e {
		e[k] = (p>>(4*k))&15<<l.sfx | field128(lo, hi, 12+uint(k)*l.sfx, l.sfx)
	}
	return true
}

// semiEncode sorts e and writes it as the bucket at off.
func semiEncode(l *layout, w []uint64, off uint64, e *[4]uint64) {
	// Sorting network for four values.
	if e[0] > e[1] {
		e[0], e[1] = e[1], e[0]
	}
	if e[2] > e[3] {
		e[2], e[3] = e[3], e[2]
	}
	if e[0] > e[2] {
		e[0], e[2] = e[2], e[0]
	}
	if e[1] > e[3] {
		e[1], e[3] = e[3], e[1]
	}
	if e[1] > e[2] {
		e[1], e[2] = e[2], e[1]
	}
	s := l.sfx
	lo := semiRank(e[0]>>s, e[1]>>s, e[2]>>s, e[3]>>s)
	var hi uint64
	m := uint64(1)<<s - 1
	for k, v := range e {
		pos := 12 + uint(k)*s
		v &= m
		if pos < 64 {
			lo |= v << pos
			if pos+s > 64 {
				hi |= v >> (64 - pos)
			}
		} else {
			hi |= v << (pos - 64)
		}
	}
	if l.bucketBits <= 64 {
		setBits(w, off, uint(l.bucketBits), lo)
		return
	}
	setBits(w, off, 64, lo)
	setBits(w, off+64, uint(l.bucketBits-64), hi)
}

// semiMatch reports whether the bucket at off holds fp: the prefixes are
// compared first (four nibbles at once), the stored bits only for the
// slots whose prefix matches.
func semiMatch(l *layout, w []uint64, off, fp uint64) bool {
	lo, hi := semiRead(l, w, off)
	code := lo & 0xfff
	if code >= semiCodes {
		return false
	}
	p := uint64(semiDec[code])
	x := p ^ (fp>>l.sfx)*0x1111
	// Exact zero-nibble mask of x.
	z := ^((x&0x7777 + 0x7777) | x) & 0x8888
	qs := fp & (uint64(1)<<l.sfx - 1)
	for z != 0 {
		k := uint(bits.TrailingZeros64(z)) / 4
		if field128(lo, hi, 12+k*l.sfx, l.sfx) == qs {
			return true
		}
		z &= z - 1
	}
	return false
}

// semiPlace puts fp in the bucket at off if it has an empty slot.
func semiPlace(l *layout, w []uint64, off, fp uint64) bool {
	var e [4]uint64
	semiDecode(l, w, off, &e)
	if e[0] != 0 {
		return false
	}
	e[0] = fp
	semiEncode(l, w, off, &e)
	return true
}

// semiUnplace removes one copy of fp from the bucket at off.
func semiUnplace(l *layout, w []uint64, off, fp uint64) bool {
	if !semiMatch(l, w, off, fp) {
		return false
	}
	var e [4]uint64
	semiDecode(l, w, off, &e)
	semiReplaceIn(&e, fp, 0)
	semiEncode(l, w, off, &e)
	return true
}

// semiCount counts the copies of fp in the bucket at off.
func semiCount(l *layout, w []uint64, off, fp uint64) int {
	var e [4]uint64
	semiDecode(l, w, off, &e)
	c := 0
	for _, v := range e {
		if v == fp {
			c++
		}
	}
	return c
}

// semiSwap replaces the v-th smallest fingerprint of the bucket at off by
// fp and returns it.
func semiSwap(l *layout, w []uint64, off uint64, v int, fp uint64) uint64 {
	var e [4]uint64
	semiDecode(l, w, off, &e)
	old := e[v]
	e[v] = fp
	semiEncode(l, w, off, &e)
	return old
}

// semiReplace replaces one copy of old by fp in the bucket at off.
func semiReplace(l *layout, w []uint64, off uint64, old, fp uint64) {
	var e [4]uint64
	semiDecode(l, w, off, &e)
	semiReplaceIn(&e, old, fp)
	semiEncode(l, w, off, &e)
}

func semiReplaceIn(e *[4]uint64, old, v uint64) {
	for k := range e {
		if e[k] == old {
			e[k] = v
			return
		}
	}
}
