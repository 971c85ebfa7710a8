package dleft

// The load-time check of a table, run chunk by chunk as the decoder reads
// it (format.Decoder.WordsFunc), while the words are still in cache. It is
// the fast twin of check: it accepts exactly the tables check accepts and
// counts the same fingerprints (TestScanAgrees), but only says whether the
// table is valid; when it is not, decode runs check to name the first
// error.

// scan is the state of the check of one table.
type scan struct {
	f      *Filter // the decoded filter: its parameters and tables, no words
	bad    bool    // a group failed a check (check will say which)
	stored uint64  // fingerprints in the groups checked so far
	// Group 1: for every counter value, the bits of the bucket that must
	// be 0 (beyond its fingerprints; every bit if no bucket has that
	// value) and its load.
	beyond [2][256]uint64 // [word of the bucket][counter value]
	load   [256]uint64
}

// newScan returns the check of a table for f (init done, no words).
func newScan(f *Filter) *scan {
	s := &scan{f: f}
	if f.cfg.Group != 1 {
		return s
	}
	for v := range 1 << f.cbits {
		st := &f.states[v]
		used := int(f.cbits)
		if !st.valid {
			used = -1
		} else if st.load > 0 {
			if fl := f.fb[st.load][st.load]; fl < 0 {
				used = -1
			} else {
				used += int(st.load) * (fl - int(st.pre))
			}
		}
		s.load[v] = uint64(st.load)
		for x := range f.wpg {
			switch lo := 64 * x; {
			case used < 0 || used <= lo:
				s.beyond[x][v] = ^uint64(0)
			case used < lo+64:
				s.beyond[x][v] = ^uint64(0) << (used - lo)
			}
		}
	}
	return s
}

// each is the format.Decoder.WordsFunc callback. Chunks hold whole
// groups: a group has a power of two words, at most 8.
func (s *scan) each(w []uint64, from int) {
	w = w[from:]
	var bad, stored uint64
	switch {
	case s.f.cfg.Group != 1:
		var err error
		stored, err = s.f.checkGroups(w, from/s.f.wpg)
		s.bad = s.bad || err != nil
	case s.f.wpg == 1: // 64-bit buckets, 4-bit counters
		bad, stored = buckets64(w, &s.beyond[0], &s.load)
	default: // 128-bit buckets, 8-bit counters
		b0, b1, load := &s.beyond[0], &s.beyond[1], &s.load
		for i := 0; i+1 < len(w); i += 2 {
			x, y := w[i], w[i+1]
			v := uint8(x)
			bad |= x&b0[v] | y&b1[v]
			stored += load[v]
		}
	}
	s.bad = s.bad || bad != 0
	s.stored += stored
}

// buckets64 checks 64-bit buckets (4-bit counter fields) against the
// tables of newScan and returns their verdict bits and their load. It is
// kept out of line, and takes four buckets at a time, so that its values
// stay in registers and the loop costs little beside them.
//
//go:noinline
func buckets64(w []uint64, beyond, load *[256]uint64) (bad, stored uint64) {
	for ; len(w) >= 4; w = w[4:] {
		b := (*[4]uint64)(w)
		x := b[0]
		bad |= x & beyond[x&15]
		stored += load[x&15]
		x = b[1]
		bad |= x & beyond[x&15]
		stored += load[x&15]
		x = b[2]
		bad |= x & beyond[x&15]
		stored += load[x&15]
		x = b[3]
		bad |= x & beyond[x&15]
		stored += load[x&15]
	}
	for _, x := range w {
		bad |= x & beyond[x&15]
		stored += load[x&15]
	}
	return bad, stored
}
