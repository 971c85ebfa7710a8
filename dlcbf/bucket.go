package dlcbf

// The bucket layer: the permutations that place a key, the bit fields of
// the packed buckets, and the decoded form in which Add and Remove edit a
// bucket. Every bucket layout is specified in the package doc and in
// docs/FORMAT.md ("Kind 6").

import (
	"math/bits"

	"github.com/bloomlab/bloomlab/hashing"
)

// permKey returns the key of round j of permutation i: SplitMix64 of
// 0x5D1CBF00 + 3i + j.
func permKey(i, j int) uint64 {
	x := uint64(0x5D1CBF00+3*i+j) + 0x9E3779B97F4A7C15
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9
	x = (x ^ (x >> 27)) * 0x94D049BB133111EB
	return x ^ (x >> 31)
}

// mix is the round function of the permutations: a keyed 64-bit mixer
// (multiply, xor-shift, multiply, xor-shift).
func mix(x, k uint64) uint64 {
	x = (x ^ k) * 0x9E3779B97F4A7C15
	x ^= x >> 32
	x *= 0xD6E8FEB86659FD93
	return x ^ x>>32
}

// locate returns the bucket (index of its first bit) and full remainder of
// the key with digest dg in subtable i. The true fingerprint is
// b = Reduce(H1, B), r = H2 mod 2^r, z = H2 >> r; P_i is three Feistel
// rounds on (b, r): r ^= mix(b, k0) mod 2^r; b = b + ⌊mix(r, k1)·B/2^64⌋
// mod B; r ^= mix(b, k2) mod 2^r. The remainder is r_i | z << r (its low
// bits are the minimal remainder).
func (f *Filter) locate(i int, b, rr, z uint64) (pos, rho uint64) {
	k := &f.keys[i]
	mask := uint64(1)<<f.r - 1
	rr ^= mix(b, k[0]) & mask
	hi, _ := bits.Mul64(mix(rr, k[1]), f.nb)
	b = hashing.AddMod(b, hi, f.nb)
	rr ^= mix(b, k[2]) & mask
	return (uint64(i)*f.nb + b) * f.bbits, rr | z<<f.r
}

// fingerprint returns the true fingerprint (b, r) and the extra bits z.
func (f *Filter) fingerprint(dg hashing.Digest) (b, rr, z uint64) {
	return hashing.Reduce(dg.H1, f.nb), dg.H2 & (1<<f.r - 1), dg.H2 >> f.r
}

// getBits returns the width-bit field at bit pos. The padding word makes
// w[i+1] valid for every field.
func getBits(w []uint64, pos uint64, width uint) uint64 {
	i, o := pos>>6, uint(pos&63)
	x := w[i]>>o | w[i+1]<<(64-o)
	return x & (1<<width - 1)
}

// setBits writes the width-bit field at bit pos.
func setBits(w []uint64, pos uint64, width uint, v uint64) {
	i, o := pos>>6, uint(pos&63)
	m := uint64(1)<<width - 1
	v &= m
	w[i] = w[i]&^(m<<o) | v<<o
	w[i+1] = w[i+1]&^(m>>(64-o)) | v>>(64-o)
}

func lowMask(n uint) uint64 { return 1<<n - 1 }

// bucket is a decoded bucket: its cells in order, each with its effective
// remainder (ln bits) and count.
type bucket struct {
	n   int
	rho [MaxCells + 1]uint64
	ln  [MaxCells + 1]uint8
	cnt [MaxCells + 1]uint64
	// Static: the cell index of each decoded cell and the first empty one
	// (−1: none), so that one cell can be rewritten in place.
	slot [MaxCells + 1]int8
	free int
	// Dynamic: largest load so far. TwoSizes: unused.
	maxLoad int
}

// decode reads the bucket at pos.
func (f *Filter) decode(pos uint64, bk *bucket) {
	w, c := f.words, f.c
	bk.n = 0
	switch f.cfg.Variant {
	case Static:
		cw := f.r + c
		bk.free = -1
		for j := 0; j < f.h; j++ {
			x := getBits(w, pos+uint64(j)*uint64(cw), cw)
			if x&lowMask(c) != 0 {
				bk.rho[bk.n], bk.ln[bk.n], bk.cnt[bk.n], bk.slot[bk.n] = x>>c, uint8(f.r), x&lowMask(c), int8(j)
				bk.n++
			} else if bk.free < 0 {
				bk.free = j
			}
		}
	case Dynamic:
		hd := getBits(w, pos, dynHeader)
		load, m, z := int(hd&15), int(hd>>4&15), int(hd>>8&15)
		bk.maxLoad = m
		if load == 0 {
			return
		}
		cw := uint(f.width[m])
		p := pos + dynHeader
		for j := 0; j < load; j++ {
			x := getBits(w, p, cw)
			var b0 uint64
			if j >= z {
				b0 = 1
			}
			bk.rho[j], bk.ln[j], bk.cnt[j] = (x>>c)<<1|b0, uint8(cw-c+1), x&lowMask(c)+1
			p += uint64(cw)
		}
		bk.n = load
	case TwoSizes:
		hd := getBits(w, pos, twoHeader)
		a, b, s, t := int(hd&15), int(hd>>4&15), uint(hd>>8&127), uint(hd>>15&127)
		p := pos + twoHeader
		for j := 0; j < a+b; j++ {
			cw := t
			if j < a {
				cw = s
			}
			x := getBits(w, p, cw)
			bk.rho[j], bk.ln[j], bk.cnt[j] = x>>c, uint8(cw-c), x&lowMask(c)+1
			p += uint64(cw)
		}
		bk.n = a + b
	}
}

// encode writes bk at pos. For Dynamic the widths follow bk.maxLoad and
// cells are semi-sorted; for TwoSizes the cells must be ordered short
// (width s) first and bk.ln must hold at most two lengths.
func (f *Filter) encode(pos uint64, bk *bucket) {
	w, c := f.words, f.c
	switch f.cfg.Variant {
	case Static:
		cw := f.r + c
		for j := 0; j < f.h; j++ {
			var x uint64
			if j < bk.n {
				x = bk.rho[j]<<c | bk.cnt[j]
			}
			setBits(w, pos+uint64(j)*uint64(cw), cw, x)
		}
	case Dynamic:
		m := bk.maxLoad
		z := 0
		p := pos + dynHeader
		cw := uint(0)
		if m > 0 {
			cw = uint(f.width[m])
		}
		// Semi-sort: remainders whose first bit is 0, then the others.
		for pass := uint64(0); pass < 2; pass++ {
			for j := 0; j < bk.n; j++ {
				if bk.rho[j]&1 != pass {
					continue
				}
				if pass == 0 {
					z++
				}
				setBits(w, p, cw, (bk.rho[j]>>1)<<c|(bk.cnt[j]-1))
				p += uint64(cw)
			}
		}
		clearBits(w, p, pos+f.bbits)
		setBits(w, pos, dynHeader, uint64(bk.n)|uint64(m)<<4|uint64(z)<<8)
	case TwoSizes:
		a, s, t := 0, uint(0), uint(0)
		for j := 0; j < bk.n; j++ {
			cw := uint(bk.ln[j]) + c
			if j == 0 || cw == s {
				a++
				s = cw
			} else {
				t = cw
			}
		}
		if t == 0 { // one size: it is the long one
			a, s, t = 0, 0, s
		}
		p := pos + twoHeader
		for j := 0; j < bk.n; j++ {
			cw := uint(bk.ln[j]) + c
			setBits(w, p, cw, (bk.rho[j]&lowMask(uint(bk.ln[j])))<<c|(bk.cnt[j]-1))
			p += uint64(cw)
		}
		clearBits(w, p, pos+f.bbits)
		setBits(w, pos, twoHeader, uint64(a)|uint64(bk.n-a)<<4|uint64(s)<<8|uint64(t)<<15)
	}
}

// clearBits zeroes the bits [from, to).
func clearBits(w []uint64, from, to uint64) {
	for from < to {
		n := min(to-from, 64)
		setBits(w, from, uint(n), 0)
		from += n
	}
}

// matches reports whether a cell with effective remainder rho of ln bits
// matches the full remainder x.
func matches(rho uint64, ln uint8, x uint64) bool {
	return (rho^x)&lowMask(uint(ln)) == 0
}

// insert adds a cell for remainder x to bk, which has room.
func (f *Filter) insert(bk *bucket, x uint64) {
	j := bk.n
	bk.n++
	bk.rho[j], bk.cnt[j] = x, 1
	switch f.cfg.Variant {
	case Static:
		bk.ln[j] = uint8(f.r)
	case Dynamic:
		if bk.n > bk.maxLoad {
			bk.maxLoad = bk.n
		}
		ln := f.width[bk.maxLoad] - uint8(f.c) + 1
		for i := 0; i < bk.n; i++ {
			bk.ln[i] = ln
			bk.rho[i] &= lowMask(uint(ln))
		}
	case TwoSizes:
		f.insertTwo(bk)
	}
}

// insertTwo gives the new last cell of bk its length under the two-size
// rule (002 §III-B): old cells keep their length unless the new cell would
// otherwise get less than ⌊R/load⌋; the new cell takes every free bit
// that keeps at most two lengths in the bucket.
func (f *Filter) insertTwo(bk *bucket) {
	c := int(f.c)
	R := int(f.area)
	n := bk.n
	// Old cells: widths s (a cells) < t (b cells), ordered short first;
	// with one width, a = 0.
	a, b, s, t := 0, 0, 0, 0
	for j := 0; j < n-1; j++ {
		w := int(bk.ln[j]) + c
		switch {
		case t == 0 || w == t:
			t = w
			b++
		case w > t: // the cells so far were the short ones
			a, s, t, b = a+b, t, w, 1
		default:
			s = w
			a++
		}
	}
	used := a*s + b*t
	free := R - used
	fair := R / n // what a new cell is owed
	var nw int
	switch {
	case a == 0 && free >= t: // one width: the new cell may be longer
		nw = min(free, maxWidth)
	case a > 0 && free >= t: // two widths: join the long cells
		nw = t
	default:
		// Not enough room for a long cell: shrink the long cells (never
		// below the short ones) so that they and the new one share the
		// bits left by the short cells.
		tt := (R - a*s) / (b + 1)
		if a > 0 && tt >= s {
			for j := a; j < n-1; j++ {
				f.truncate(bk, j, tt-c)
			}
			nw = tt
			break
		}
		// Collapse: every old cell to ⌊R/n⌋, the new one takes the rest.
		for j := 0; j < n-1; j++ {
			if int(bk.ln[j])+c > fair {
				f.truncate(bk, j, fair-c)
			}
		}
		used = 0
		for j := 0; j < n-1; j++ {
			used += int(bk.ln[j]) + c
		}
		nw = min(R-used, maxWidth)
	}
	bk.ln[n-1] = uint8(nw - c)
	bk.rho[n-1] &= lowMask(uint(nw - c))
	sortTwo(bk)
}

func (f *Filter) truncate(bk *bucket, j, ln int) {
	bk.ln[j] = uint8(ln)
	bk.rho[j] &= lowMask(uint(ln))
}

// sortTwo orders the cells short first (stable), as encode expects.
func sortTwo(bk *bucket) {
	for i := 1; i < bk.n; i++ {
		for j := i; j > 0 && bk.ln[j] < bk.ln[j-1]; j-- {
			bk.rho[j], bk.rho[j-1] = bk.rho[j-1], bk.rho[j]
			bk.ln[j], bk.ln[j-1] = bk.ln[j-1], bk.ln[j]
			bk.cnt[j], bk.cnt[j-1] = bk.cnt[j-1], bk.cnt[j]
		}
	}
}
