package dlcbf

// The hot paths' view of a bucket: Add, Remove and Contains read the cells
// where they lie, without decoding the bucket (a static bucket a window of
// cells at a time), edit a counter in place, and insert or delete a cell
// by moving the cells after it; only a Dynamic bucket whose largest load
// grows is decoded and re-encoded. They answer and write exactly as the
// decode-everything reference (ref_test.go, TestFastPathsAgree): the
// layouts are those of bucket.go.

import (
	"math/bits"

	"github.com/bloomlab/bloomlab/hashing"
)

// placement is where a key lies: in each subtable its bucket (the
// bucket's first bit) and its full remainder.
type placement struct {
	pos, rho [MaxSubtables]uint64
}

// places fills pl for the key with digest dg, as locate does. It computes
// the d permutations before any bucket is read, two at a time, so that
// their independent multiply chains overlap.
func (f *Filter) places(dg hashing.Digest, pl *placement) {
	pos, rho := &pl.pos, &pl.rho
	b, rr, z := f.fingerprint(dg)
	mask, nb, bb, zr := lowMask(f.r), f.nb, f.bbits, z<<f.r
	d := min(f.d, MaxSubtables)
	i := 0
	for ; i+1 < d; i += 2 { // locate for subtables i and i+1
		k, l := &f.keys[i], &f.keys[i+1]
		r1 := rr ^ mix(b, k[0])&mask
		r2 := rr ^ mix(b, l[0])&mask
		h1, _ := bits.Mul64(mix(r1, k[1]), nb)
		h2, _ := bits.Mul64(mix(r2, l[1]), nb)
		b1 := hashing.AddMod(b, h1, nb)
		b2 := hashing.AddMod(b, h2, nb)
		rho[i] = r1 ^ mix(b1, k[2])&mask | zr
		rho[i+1] = r2 ^ mix(b2, l[2])&mask | zr
		pos[i], pos[i+1] = (uint64(i)*nb+b1)*bb, (uint64(i+1)*nb+b2)*bb
	}
	if i < d {
		pos[i], rho[i] = f.locate(i, b, rr, z)
	}
}

// fieldMasks[w] is 2^w − 1, the mask of a w-bit field (w ≤ 64; the
// entries above 64, which no valid bucket uses, are all ones). A lookup
// instead of lowMask's shift, whose count the compiler cannot bound.
var fieldMasks = func() (t [128]uint64) {
	for w := range t {
		t[w] = lowMask(uint(min(w, 64)))
	}
	return t
}()

// cell returns the cw-bit field at bit p (cw ≤ 64, lm = 2^cw − 1): one
// unaligned load when it fits the window (every static cell, most dynamic
// ones), two aligned ones otherwise. It inlines.
func cell(w []uint64, p uint64, cw uint, lm uint64) uint64 {
	if cw <= windowBits {
		return window(w, p) & lm
	}
	i, o := p>>6, uint(p&63)
	return (w[i]>>o | w[i+1]<<(64-o)) & lm
}

// halves returns the cells [lo, hi) of a semi-sorted bucket of load cells,
// z of them with first bit 0, that can match remainder x: those with x's
// first bit. It does not branch on x (the bit is a coin flip).
func halves(z, load int, x uint64) (lo, hi int) {
	odd := -int(x & 1) // all ones if x's first bit is 1
	return z & odd, z + (load-z)&odd
}

// staticLanes cuts a Static bucket of h cells of cw = r + c ≤ 40 bits
// into nwin windows of g cells (g·cw ≤ windowBits bits, one window read
// each), every cell a lane of the window: a word-parallel (SWAR) scan
// compares the g cells of a window at once. A lane of x is zero exactly
// when its top bit is clear in ((x & low) + low) | x, low being each
// lane's bits below its top bit: the sum never carries out of a lane.
type staticLanes struct {
	nwin int
	g    int
	step uint64 // g·cw, the bits of a window
	// rep has bit 0 of every lane set, top its top bit; last the top bits
	// of the lanes of the last window that are cells of the bucket.
	rep, top, low, last uint64
	rem, cnt            uint64 // the remainder and the counter bits of every lane
}

func newStaticLanes(h int, r, c uint) (l staticLanes) {
	cw := int(r + c)
	l.g = windowBits / cw
	l.nwin = (h + l.g - 1) / l.g
	l.step = uint64(l.g * cw)
	for k := 0; k < l.g; k++ {
		l.rep |= 1 << (k * cw)
	}
	l.top = l.rep << (cw - 1)
	l.low = l.top - l.rep
	l.last = l.top & lowMask(uint((h-(l.nwin-1)*l.g)*cw))
	l.rem, l.cnt = lowMask(r)<<c*l.rep, lowMask(c)*l.rep
	return l
}

// The scans below test each cell v with one comparison,
// (v ^ want) & sm == 0, and look further only at a cell that passes it:
// want is the cell a match holds (the key's remainder in the remainder
// field, counter bits zero) and sm covers bits every match agrees on (for
// Add, the minimal remainder, which every full match also holds;
// otherwise the whole remainder field).

// probe is what Add needs of one of the key's buckets.
type probe struct {
	load int // cells in use
	// hitW > 0: the first cell matching the key whose counter has room is
	// the hitW-bit field at bit hit.
	hit  uint64
	hitW uint
	free int  // Static: the first empty cell (−1: none)
	same bool // a cell holds the key's minimal remainder
}

// probeStatic reads the static bucket at pos for remainder x, a window
// of cells at a time (staticLanes).
func (f *Filter) probeStatic(pos, x uint64) (pr probe) {
	w, l := f.words, &f.sw
	wantRep := (x & f.rmask) << (f.c & 63) * l.rep
	rem, cnt, low, top, step := l.rem, l.cnt, l.low, l.top, l.step
	valid, last := top, l.nwin-1
	free := -1
	p := pos
	for k := 0; k <= last; k++ {
		if k == last {
			valid = l.last
		}
		v := window(w, p)
		y := v & cnt
		used := (y&low + low | y) & valid // top bits of the cells in use
		d := (v ^ wantRep) & rem
		if ^(d&low+low|d)&used != 0 {
			// A cell in use holds the key's remainder: look closer.
			return f.probeStaticCells(pos, x)
		}
		if e := valid &^ used; e != 0 && free < 0 {
			free = k*l.g + bits.OnesCount64((e&-e-1)&top)
		}
		pr.load += bits.OnesCount64(used)
		p += step
	}
	pr.free = free
	return pr
}

// probeStaticCells is probeStatic one cell at a time.
func (f *Filter) probeStaticCells(pos, x uint64) (pr probe) {
	w, c := f.words, f.c&63
	cw := f.r + c
	cm, lm := f.cmask, fieldMasks[cw&127]
	want := (x & f.rmask) << c
	pr.free = -1
	p := pos
	for j := 0; j < f.h; j++ {
		v := window(w, p) & lm
		if v&cm == 0 {
			if pr.free < 0 {
				pr.free = j
			}
		} else {
			pr.load++
			if v&^cm == want {
				if v&cm != cm { // count < 2^c − 1
					pr.hit, pr.hitW = p, cw
					return pr
				}
				pr.same = true
			}
		}
		p += uint64(cw)
	}
	return pr
}

// probeDynamic reads the Dynamic bucket at pos for remainder x: only the
// semi-sorted half of the cells whose implicit first bit is x's can match.
func (f *Filter) probeDynamic(pos, x uint64) (pr probe) {
	w, c := f.words, f.c&63
	hd := window(w, pos)
	m, z := hd>>4&15, int(hd>>8&15)
	pr.load = int(hd & 15)
	cw := uint(f.width[m])
	lm, cm := fieldMasks[cw&127], f.cmask
	want := x >> 1 << c & lm // the remainder less its first bit
	sm := f.rmask >> 1 << c
	lo, hi := halves(z, pr.load, x)
	p := pos + dynHeader + uint64(lo)*uint64(cw)
	for j := lo; j < hi; j++ {
		v := cell(w, p, cw, lm)
		if (v^want)&sm == 0 {
			if v&^cm == want && v&cm != cm { // count − 1 < 2^c − 1
				pr.hit, pr.hitW = p, cw
				return pr
			}
			pr.same = true
		}
		p += uint64(cw)
	}
	return pr
}

// probeTwo reads the TwoSizes bucket at pos for remainder x.
func (f *Filter) probeTwo(pos, x uint64) (pr probe) {
	w, c := f.words, f.c&63
	hd := window(w, pos)
	a, b := int(hd&15), int(hd>>4&15)
	pr.load = a + b
	cm, sm := f.cmask, f.rmask<<c
	p := pos + twoHeader
	s := uint(hd >> 8 & 127)
	lm := fieldMasks[s]
	want := x << c & lm
	for j := 0; j < a; j++ { // the short cells
		v := cell(w, p, s, lm)
		if (v^want)&sm == 0 {
			if v&^cm == want && v&cm != cm {
				pr.hit, pr.hitW = p, s
				return pr
			}
			pr.same = true
		}
		p += uint64(s)
	}
	t := uint(hd >> 15 & 127)
	lm = fieldMasks[t]
	want = x << c & lm
	for j := 0; j < b; j++ { // the long cells
		v := cell(w, p, t, lm)
		if (v^want)&sm == 0 {
			if v&^cm == want && v&cm != cm {
				pr.hit, pr.hitW = p, t
				return pr
			}
			pr.same = true
		}
		p += uint64(t)
	}
	return pr
}

// containsStatic reports whether one of the static buckets pl names holds
// a cell matching the key.
func (f *Filter) containsStatic(pl *placement) bool {
	for i := 0; i < f.d && i < MaxSubtables; i++ {
		if _, ok := f.findStatic(pl.pos[i], pl.rho[i]); ok {
			return true
		}
	}
	return false
}

// containsDynamic is containsStatic for Dynamic buckets.
func (f *Filter) containsDynamic(pl *placement) bool {
	w, c := f.words, f.c&63
	for i := 0; i < f.d && i < MaxSubtables; i++ {
		x, pos := pl.rho[i], pl.pos[i]
		hd := window(w, pos)
		m, z, load := hd>>4&15, int(hd>>8&15), int(hd&15)
		cw := uint(f.width[m])
		lm := fieldMasks[cw&127]
		rm := lm &^ f.cmask
		want := x >> 1 << c & lm
		lo, hi := halves(z, load, x)
		p := pos + dynHeader + uint64(lo)*uint64(cw)
		for j := lo; j < hi; j++ {
			if cell(w, p, cw, lm)&rm == want {
				return true
			}
			p += uint64(cw)
		}
	}
	return false
}

// containsTwo is containsStatic for TwoSizes buckets.
func (f *Filter) containsTwo(pl *placement) bool {
	w, c := f.words, f.c&63
	for i := 0; i < f.d && i < MaxSubtables; i++ {
		x, pos := pl.rho[i], pl.pos[i]
		hd := window(w, pos)
		a, b := int(hd&15), int(hd>>4&15)
		p := pos + twoHeader
		s := uint(hd >> 8 & 127)
		lm := fieldMasks[s]
		rm, want := lm&^f.cmask, x<<c&lm
		for j := 0; j < a; j++ { // the short cells
			if cell(w, p, s, lm)&rm == want {
				return true
			}
			p += uint64(s)
		}
		t := uint(hd >> 15 & 127)
		lm = fieldMasks[t]
		rm, want = lm&^f.cmask, x<<c&lm
		for j := 0; j < b; j++ { // the long cells
			if cell(w, p, t, lm)&rm == want {
				return true
			}
			p += uint64(t)
		}
	}
	return false
}

// findStatic returns the first cell of the static bucket at pos matching
// remainder x (its bit); ok false: none. It compares a window of cells at
// a time (staticLanes).
func (f *Filter) findStatic(pos, x uint64) (p uint64, ok bool) {
	w, l := f.words, &f.sw
	c := f.c & 63
	wantRep := (x & f.rmask) << c * l.rep
	rem, low, top, step := l.rem, l.low, l.top, l.step
	valid, last := top, l.nwin-1
	p = pos
	for k := 0; k <= last; k++ {
		if k == last {
			valid = l.last
		}
		d := (window(w, p) ^ wantRep) & rem
		if z := ^(d&low + low | d) & valid; z != 0 {
			// The cells holding the remainder: a match's counter is not
			// 0 (an empty cell is all zeros, remainder 0 included).
			for ; z != 0; z &= z - 1 {
				q := p + uint64(bits.OnesCount64((z&-z-1)&top))*uint64(f.r+c)
				if window(w, q)&f.cmask != 0 {
					return q, true
				}
			}
		}
		p += step
	}
	return 0, false
}

// findDynamic returns the first cell of the Dynamic bucket at pos matching
// remainder x (its index, bit and width) provided the bucket's remainder
// length exceeds longer; j < 0: none.
func (f *Filter) findDynamic(pos, x uint64, longer int) (j int, p uint64, cw uint, ln int) {
	w, c := f.words, f.c&63
	hd := window(w, pos)
	m, z, load := hd>>4&15, int(hd>>8&15), int(hd&15)
	cw = uint(f.width[m])
	ln = int(cw) - int(c) + 1
	if ln <= longer {
		return -1, 0, 0, 0
	}
	lm := fieldMasks[cw&127]
	rm := lm &^ f.cmask
	want := x >> 1 << c & lm
	lo, hi := halves(z, load, x)
	p = pos + dynHeader + uint64(lo)*uint64(cw)
	for j := lo; j < hi; j++ {
		if cell(w, p, cw, lm)&rm == want {
			return j, p, cw, ln
		}
		p += uint64(cw)
	}
	return -1, 0, 0, 0
}

// findTwo returns the longest cell of the TwoSizes bucket at pos matching
// remainder x, the first of its length, provided its remainder is longer
// than longer bits; j < 0: none.
func (f *Filter) findTwo(pos, x uint64, longer int) (j int, p uint64, cw uint, ln int) {
	w, c := f.words, f.c&63
	hd := window(w, pos)
	a, b := int(hd&15), int(hd>>4&15)
	s, t := uint(hd>>8&127), uint(hd>>15&127)
	// The long cells first: they follow the a short ones.
	if ln := int(t) - int(c); ln > longer {
		lm := fieldMasks[t]
		rm, want := lm&^f.cmask, x<<c&lm
		p = pos + twoHeader + uint64(a)*uint64(s)
		for j := a; j < a+b; j++ {
			if cell(w, p, t, lm)&rm == want {
				return j, p, t, ln
			}
			p += uint64(t)
		}
	}
	if ln := int(s) - int(c); ln > longer {
		lm := fieldMasks[s]
		rm, want := lm&^f.cmask, x<<c&lm
		p = pos + twoHeader
		for j := 0; j < a; j++ {
			if cell(w, p, s, lm)&rm == want {
				return j, p, s, ln
			}
			p += uint64(s)
		}
	}
	return -1, 0, 0, 0
}

// moveBits copies the n bits at src to dst (the ranges may overlap).
func moveBits(w []uint64, dst, src, n uint64) {
	if dst < src { // down: low chunks first
		for n > 0 {
			k := min(n, 64)
			setBits(w, dst, uint(k), getBits(w, src, uint(k)))
			dst, src, n = dst+k, src+k, n-k
		}
		return
	}
	for n > 0 { // up: high chunks first
		k := min(n, 64)
		n -= k
		setBits(w, dst+n, uint(k), getBits(w, src+n, uint(k)))
	}
}

// addCell puts a new cell for remainder x into the dynamic or two-size
// bucket at pos, which has room: in place when a Dynamic bucket's largest
// load does not grow (the cells keep their widths) and for every two-size
// insert (addTwo), by decode, insert and encode otherwise.
func (f *Filter) addCell(pos, x uint64) {
	w, c := f.words, f.c
	if f.cfg.Variant == Dynamic {
		hd := window(w, pos)
		load, m, z := hd&15, hd>>4&15, hd>>8&15
		if load < m {
			cw := uint(f.width[m])
			at := load // the cell goes last in its semi-sorted half
			if x&1 == 0 {
				at = z
				z++
			}
			p := pos + dynHeader + at*uint64(cw)
			moveBits(w, p+uint64(cw), p, (load-at)*uint64(cw))
			setBits(w, p, cw, (x>>1)<<c)
			setBits(w, pos, dynHeader, load+1|m<<4|z<<8)
			return
		}
	} else if f.addTwo(pos, x) {
		return
	}
	var bk bucket
	f.decode(pos, &bk)
	f.insert(&bk, x)
	f.encode(pos, &bk)
}

// addTwo puts a new cell for remainder x into the two-size bucket at pos,
// which has room, in place, with the widths insertTwo (002 §III-B) gives
// the cells: the a short cells (s bits) become s2 bits, the b long ones
// (t bits) t2 bits, keeping the low bits of their fields (the counter and
// the start of the remainder), and the new cell, last, gets nw bits. It
// returns false, changing nothing, if the result is not cells ordered by
// width with at most two widths (which insertTwo's rule never gives).
func (f *Filter) addTwo(pos, x uint64) bool {
	w := f.words
	hd := window(w, pos)
	a, b, s, t := int(hd&15), int(hd>>4&15), uint(hd>>8&127), uint(hd>>15&127)
	R := int(f.area)
	free := R - a*int(s) - b*int(t)
	s2, t2 := s, t
	var nw uint
	switch {
	case free >= int(t) && a == 0: // one width so far: the new cell may be longer
		nw = uint(min(free, maxWidth))
	case free >= int(t): // the new cell joins the long ones
		nw = t
	case a > 0 && (R-a*int(s))/(b+1) >= int(s):
		// The long cells shrink (never below the short ones) to share
		// what the short cells leave with the new one.
		t2 = uint((R - a*int(s)) / (b + 1))
		nw = t2
	default: // every cell to at most ⌊R/n⌋, the new one takes the rest
		fair := uint(R / (a + b + 1))
		s2, t2 = min(s, fair), min(t, fair)
		nw = uint(min(R-a*int(s2)-b*int(t2), maxWidth))
	}
	// The header: the widths in order, a of s2, b of t2 and nw, must
	// make at most two runs, the shorter first (a canonical bucket with
	// short cells has long ones: b = 0 implies a = 0).
	sa, sb := a, b // the header's counts of short and long cells
	if a > 0 && s2 == t2 {
		sa, sb = 0, a+b
	}
	var nhd uint64
	switch {
	case sb == 0: // an empty bucket
		nhd = 1<<4 | uint64(nw)<<15
	case sa == 0 && nw == t2:
		nhd = uint64(sb+1)<<4 | uint64(t2)<<15
	case sa == 0 && nw > t2:
		nhd = uint64(sb) | 1<<4 | uint64(t2)<<8 | uint64(nw)<<15
	case sa > 0 && nw == t2 && s2 < t2:
		nhd = uint64(sa) | uint64(sb+1)<<4 | uint64(s2)<<8 | uint64(t2)<<15
	default:
		return false
	}
	// Shorten the cells in place, front to back (a cell is never written
	// past where the next one is read), then append the new one.
	p, q := pos+twoHeader, pos+twoHeader // read, write
	if s2 != s || t2 != t {
		for j := 0; j < a+b; j++ {
			from, to := s, s2
			if j >= a {
				from, to = t, t2
			}
			setBits(w, q, to, cell(w, p, from, fieldMasks[from&127]))
			p, q = p+uint64(from), q+uint64(to)
		}
	} else {
		p = pos + twoHeader + uint64(a)*uint64(s) + uint64(b)*uint64(t)
		q = p
	}
	setBits(w, q, nw, x<<(f.c&63))
	if q+uint64(nw) < p {
		clearBits(w, q+uint64(nw), p)
	}
	setBits(w, pos, twoHeader, nhd)
	return true
}

// freeCell deletes cell j, the cw-bit field at bit p, of the dynamic or
// two-size bucket at pos: the cells after it move down, the others keep
// their widths.
func (f *Filter) freeCell(pos uint64, j int, p uint64, cw uint) {
	w := f.words
	hd := window(w, pos)
	var end uint64
	if f.cfg.Variant == Dynamic {
		load, m, z := hd&15, hd>>4&15, hd>>8&15
		end = pos + dynHeader + load*uint64(cw)
		if uint64(j) < z {
			z--
		}
		setBits(w, pos, dynHeader, (load-1)|m<<4|z<<8)
	} else {
		a, b, s, t := hd&15, hd>>4&15, hd>>8&127, hd>>15&127
		end = pos + twoHeader + a*s + b*t
		if uint64(j) < a {
			a--
		} else {
			b--
		}
		if a == 0 {
			s = 0
		}
		if b == 0 { // the short cells, if any, are the only width left
			a, b, s, t = 0, a, 0, s
		}
		setBits(w, pos, twoHeader, a|b<<4|s<<8|t<<15)
	}
	moveBits(w, p, p+uint64(cw), end-p-uint64(cw))
	setBits(w, end-uint64(cw), cw, 0)
}
