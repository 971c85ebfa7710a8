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
			sum, mx := s.sum, s.max
			for _, x := range seg {
				sum += x
				mx = max(mx, x)
			}
			s.sum, s.max = sum, mx
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
