package dlcbf

// The load-time check of a payload, run chunk by chunk as the decoder
// reads it (format.Decoder.WordsFunc), while the words are still in cache.
// It is the fast twin of validate: it accepts exactly the payloads that
// validate accepts (TestScanAgrees, FuzzScan), but it only says whether
// they are valid; when it says no, decode runs validate to name the first
// error.

// loadScan is the state of the check of one payload.
type loadScan struct {
	f    *Filter // the decoded filter's shell: its parameters, no words
	next uint64  // static: the next cell to check; dynamic: the next bucket
	end  uint64  // static: cells; dynamic: buckets
	bad  bool    // a bucket failed a check (validate will say which)
	sum  uint64  // the counts of the buckets checked so far

	// Static: the cells are checked g at a time in a window of g·cw ≤
	// windowBits bits, one lane of cw bits per cell, so that word-wide
	// arithmetic checks g cells at once.
	cw, g   uint64
	cm      uint64 // the counter field (low c bits) of every lane
	flag    uint64 // bit c of every lane
	rem     uint64 // 2^r − 1
	lane    uint64 // 2^cw − 1
	flushAt uint64 // windows a lane accumulator holds without overflow
	emptyRm uint64 // remainder bits of cells whose counter is 0: see static
}

// newLoadScan returns the check of a payload for the shell f (normalized
// parameters, no words).
func newLoadScan(f *Filter) *loadScan {
	s := &loadScan{f: f, end: uint64(f.d) * f.nb}
	if f.cfg.Variant != Static {
		return s
	}
	s.end *= uint64(f.h)
	s.cw = uint64(f.r + f.c) // 2 … 40
	s.g = windowBits / s.cw
	s.lane = 1<<s.cw - 1
	s.rem = lowMask(f.r)
	for j := uint64(0); j < s.g; j++ {
		o := j * s.cw
		s.cm |= lowMask(f.c) << o
		s.flag |= 1 << (o + uint64(f.c))
	}
	// A lane accumulating counters (each ≤ 2^c − 1) holds 2^cw − 1.
	s.flushAt = min(s.lane/lowMask(f.c), 1<<30)
	return s
}

// each is the format.Decoder.WordsFunc callback: it checks every cell (or
// bucket) whose bits, and the word after them that getBits may read, have
// arrived.
func (s *loadScan) each(w []uint64, _ int) { s.run(w) }

// run checks what w (the payload so far, with the padding word once it is
// complete) allows.
func (s *loadScan) run(w []uint64) {
	if len(w) < 2 {
		return
	}
	// A field at bit pos is read from words pos/64 and pos/64 + 1.
	avail := 64 * uint64(len(w)-1)
	switch s.f.cfg.Variant {
	case Static:
		s.static(w, avail)
	case Dynamic:
		s.dynamic(w, avail)
	case TwoSizes:
		s.twoSizes(w, avail)
	}
}

// static checks the cells of a static filter g at a time, in windows of
// g lanes (window). In a window x, lane by lane, (x & cm) + cm has bit c
// set iff the counter is not 0 (a counter plus 2^c − 1 is below 2^(c+1):
// no carry leaves the lane); the lanes whose bit c is clear, times
// 2^r − 1, cover the remainders of the cells whose counter is 0, which
// must be 0 (an empty cell holding a remainder is what validate rejects).
// The counters add up in the lanes of acc, emptied into sum before they
// can overflow. A window past the last cell reads only the tail bits, which
// finish checks are 0.
func (s *loadScan) static(w []uint64, avail uint64) {
	cm, flag, rem := s.cm, s.flag, s.rem
	step := s.g * s.cw
	pos := s.next * s.cw
	stop := min(avail, s.end*s.cw)
	var bad uint64
	for pos < stop {
		// A block of windows whose counters the lanes of acc hold.
		block := min(stop, pos+s.flushAt*step)
		var acc, b uint64
		if step&7 == 0 {
			// Whole bytes a window (as for cells of 14 bits, 4 a
			// window): pos stays a multiple of 8, no shift.
			acc, b = cellsBytes(w, pos>>3, (block+7)>>3, step>>3, cm, flag, rem)
		} else {
			acc, b = cellsBits(w, pos, block, step, cm, flag, rem)
		}
		bad |= b
		pos = nextPos(pos, block, step)
		s.flush(acc)
	}
	s.next = pos / s.cw
	s.emptyRm |= bad
}

// cellsBits checks the windows at bits pos, pos+step, … below end and
// returns the sum of their counter lanes and their verdict bits. It is the
// loop of static, kept out of line so that its few values stay in
// registers (inlined, the loop spilled them: 22 instructions a window
// instead of 14).
//
//go:noinline
func cellsBits(w []uint64, pos, end, step, cm, flag, rem uint64) (acc, bad uint64) {
	for ; pos < end; pos += step {
		x := window(w, pos)
		a := x & cm
		bad |= x & ((flag &^ (a + cm)) * rem)
		acc += a
	}
	return acc, bad
}

// cellsBytes is cellsBits for windows of whole bytes: bytes b, b+step, …
// below end.
//
//go:noinline
func cellsBytes(w []uint64, b, end, step, cm, flag, rem uint64) (acc, bad uint64) {
	// Two windows at a time, written out: the loop's own instructions
	// are then half as many a window.
	for ; b+step < end; b += 2 * step {
		x := load64(w, b)
		a := x & cm
		bad |= x & ((flag &^ (a + cm)) * rem)
		acc += a
		x = load64(w, b+step)
		a = x & cm
		bad |= x & ((flag &^ (a + cm)) * rem)
		acc += a
	}
	for ; b < end; b += step {
		x := load64(w, b)
		a := x & cm
		bad |= x & ((flag &^ (a + cm)) * rem)
		acc += a
	}
	return acc, bad
}

// nextPos returns the first of pos, pos+step, … at or past end.
func nextPos(pos, end, step uint64) uint64 {
	if pos >= end {
		return pos
	}
	return pos + (end-pos+step-1)/step*step
}

// windowBits is the number of bits window returns: 64 less the 7 bits by
// which a byte-aligned load may start early.
const windowBits = 57

// windowSafe returns bits pos … pos+63 of w (the bits past the end of w
// being 0); w[pos/64+1] must exist. It is window on machines without fast
// unaligned loads, and the reference window is tested against.
func windowSafe(w []uint64, pos uint64) uint64 {
	i, o := pos>>6, pos&63
	_ = w[i+1]
	// w[i+1] << (64 − o), 0 when o = 0, without a branch.
	return w[i]>>o | w[i+1]<<1<<(63-o)
}

// flush adds the lanes of acc to sum.
func (s *loadScan) flush(acc uint64) {
	for ; acc != 0; acc >>= s.cw {
		s.sum += acc & s.lane
	}
}

// dynamic checks the buckets of a dynamic filter as validate does.
func (s *loadScan) dynamic(w []uint64, avail uint64) {
	f := s.f
	bb, h, c := f.bbits, uint64(f.h), f.c
	cmask := lowMask(c)
	for ; s.next < s.end; s.next++ {
		pos := s.next * bb
		end := pos + bb
		if end > avail {
			return
		}
		hd := window(w, pos)
		load, m, z := hd&15, hd>>4&15, hd>>8&15
		if m > h || load > m || z > load {
			s.bad = true
			return
		}
		p := pos + dynHeader
		if load > 0 {
			cw := uint64(f.width[m])
			s.sum += load
			if c > 0 {
				for range load {
					s.sum += window(w, p) & cmask
					p += cw
				}
			} else {
				p += load * cw
			}
		}
		if !zeroBits(w, p, end) {
			s.bad = true
			return
		}
	}
}

// twoSizes checks the buckets of a two-size filter as validate does.
func (s *loadScan) twoSizes(w []uint64, avail uint64) {
	f := s.f
	bb, h, c := f.bbits, uint64(f.h), f.c
	cmask := lowMask(c)
	minW, area := uint64(f.r+f.c), uint64(f.area)
	for ; s.next < s.end; s.next++ {
		pos := s.next * bb
		end := pos + bb
		if end > avail {
			return
		}
		hd := window(w, pos)
		a, b, sw, t := hd&15, hd>>4&15, hd>>8&127, hd>>15&127
		switch {
		case a+b > h,
			b == 0 && (a != 0 || t != 0),
			b > 0 && (t < minW || t > maxWidth),
			a == 0 && sw != 0,
			a > 0 && (sw < minW || sw >= t),
			a*sw+b*t > area:
			s.bad = true
			return
		}
		p := pos + twoHeader
		s.sum += a + b
		for range a {
			s.sum += window(w, p) & cmask
			p += sw
		}
		for range b {
			s.sum += window(w, p) & cmask
			p += t
		}
		if !zeroBits(w, p, end) {
			s.bad = true
			return
		}
	}
}

// zeroBits reports whether the bits [from, to) of w are all zero.
func zeroBits(w []uint64, from, to uint64) bool {
	if from >= to {
		return true
	}
	i, j := from>>6, (to-1)>>6
	first := w[i] >> (from & 63)
	if i == j {
		return first<<(64-(to-from)) == 0
	}
	if first != 0 || w[j]<<(63-(to-1)&63) != 0 {
		return false
	}
	for _, x := range w[i+1 : j] {
		if x != 0 {
			return false
		}
	}
	return true
}

// finish checks the rest of the payload, w being the whole of it with its
// padding word, and reports whether it is valid with n keys: every bucket
// passes, no bit is set past the last bucket, and the counts sum to n.
func (s *loadScan) finish(w []uint64, n uint64) bool {
	s.run(w)
	total := uint64(s.f.d) * s.f.nb * s.f.bbits
	if w[len(w)-1] != 0 || (total&63 != 0 && w[len(w)-2]>>(total&63) != 0) {
		return false
	}
	return s.next >= s.end && !s.bad && s.emptyRm == 0 && s.sum == n
}
