package countmin

import "math"

// rowScan checks the rows of a payload chunk by chunk as the decoder reads
// it (format.Decoder.WordsFunc), while the words are still in cache: the
// fast twin of checkRows, which it agrees with (TestRowScanAgrees) and
// which decode runs only to name the error rowScan found.
//
// When a row of w counters, each at most N, cannot sum past 2^64 − 1
// (w·N < 2^64 − 1), the exact sum and the largest counter say everything
// checkRows looks at, in two instructions a counter; when N is 2^64 − 1
// every row counts as saturated and no counter can exceed N, so there is
// nothing to check; in between, rowScan runs checkRows's own loop.
type rowScan struct {
	width, total uint64
	conservative bool
	mode         int    // scanPlain, scanNone or scanExact
	pos          uint64 // counters of the current row seen
	sum, max     uint64 // plain: the current row's sum and largest counter
	sat          bool   // exact: checkRows's saturation flag for the row
	bad          bool   // a row failed (checkRows will say which)
}

const (
	scanPlain = iota // sums cannot overflow
	scanNone         // N = 2^64 − 1: nothing to check
	scanExact        // as checkRows, counter by counter
)

func newRowScan(width, total uint64, conservative bool) *rowScan {
	s := &rowScan{width: width, total: total, conservative: conservative, mode: scanExact}
	switch {
	case total == math.MaxUint64:
		s.mode = scanNone
	case total < math.MaxUint64/width:
		s.mode = scanPlain
	}
	s.sat = total == math.MaxUint64
	return s
}

// each is the format.Decoder.WordsFunc callback.
func (s *rowScan) each(words []uint64, from int) {
	if s.mode == scanNone {
		return
	}
	c := words[from:]
	for len(c) > 0 {
		seg := c[:min(uint64(len(c)), s.width-s.pos)]
		c = c[len(seg):]
		s.pos += uint64(len(seg))
		if s.mode == scanPlain {
			sum, mx := sumMax(seg)
			s.sum += sum
			s.max = max(s.max, mx)
		} else {
			for _, x := range seg {
				s.bad = s.bad || x > s.total
				s.sum = satAdd(s.sum, x)
				s.sat = s.sat || x == math.MaxUint64 || s.sum == math.MaxUint64
			}
		}
		if s.pos == s.width {
			s.endRow()
		}
	}
}

// endRow judges the row just read and starts the next.
func (s *rowScan) endRow() {
	// Plain: no counter above N means a sum below 2^64 − 1, so the row
	// is not saturated (N < 2^64 − 1 either).
	if s.mode == scanPlain && s.max > s.total {
		s.bad = true
	}
	if !s.conservative && !s.sat && s.sum != s.total {
		s.bad = true
	}
	s.pos, s.sum, s.max, s.sat = 0, 0, 0, s.total == math.MaxUint64
}

// sumMax returns the sum (mod 2^64) and the largest of w. It is kept out of
// line, and takes four counters at a time, so that its values stay in
// registers and the loop costs little beside them.
//
//go:noinline
func sumMax(w []uint64) (sum, mx uint64) {
	var m0, m1 uint64
	for ; len(w) >= 4; w = w[4:] {
		b := (*[4]uint64)(w)
		sum += b[0] + b[1] + b[2] + b[3]
		m0 = max(m0, b[0], b[2])
		m1 = max(m1, b[1], b[3])
	}
	for _, x := range w {
		sum += x
		m0 = max(m0, x)
	}
	return sum, max(m0, m1)
}
