package countmin

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/format"
)

// File layout (docs/FORMAT.md, "Kind 7: countmin"): the common header with
// kind 7, the row scheme (2 double, 3 enhanced, 1 independent; 64
// redisbloom for the redisbloom profile, seed 0) and the seed; a 29-byte
// parameter block
//
//	offset size field
//	0      8    w, counters per row (1 … 2^36)
//	8      4    d, rows (1 … 64; w·d ≤ 2^36)
//	12     1    flags: bit 0 conservative update; other bits zero
//	13     8    N, the total count added
//	21     8    capacity: keys the sketch was sized for (0: unknown)
//
// Files written before the capacity was recorded have a 21-byte block
// (offsets 0 … 20 as above); they still load, with capacity 0. Writers
// always write the 29-byte block.
//
// and a payload of w·d little-endian words, row i at words i·w … i·w+w−1,
// then the CRC-32C trailer. Without conservative update every row sums to
// N unless a counter or N saturated; a file that breaks this is rejected.
// With it every counter is at most N.
//
// The redisbloom profile's payload is its w·d 32-bit counters, two to a
// word (counter j in bits 32·(j mod 2) … of word ⌊j/2⌋: the bytes of
// RedisBloom's uint32_t array, as its RDB value holds them), and a zero
// counter after them when w·d is odd; flags 0 (no conservative update), d
// up to 2^32 − 1, seed 0. Its counters and N are not checked against
// each other: a merge with negative weights (MergeWeighted) of sketches
// with saturated counters leaves rows that do not sum to N, as RedisBloom
// does, so any counters and any N make a sketch.

// Lengths of the parameter block: today's, and that of files written before
// the capacity was recorded.
const (
	paramsLen   = 29
	paramsLenV1 = 21
)

// WriteTo writes s in the bloomlab file format. The zero Sketch is not
// written: WriteTo returns an error wrapping ErrParam.
func (s *Sketch) WriteTo(w io.Writer) (int64, error) {
	if s.zero() {
		return 0, errZero("WriteTo")
	}
	var p format.Params
	p.U64(s.cfg.Width)
	p.U32(uint32(s.cfg.Depth))
	var flags uint8
	if s.cfg.Conservative {
		flags = 1
	}
	p.U8(flags)
	p.U64(s.total)
	p.U64(s.capacity)
	e := format.NewEncoder(w)
	e.Begin(format.Header{Kind: format.KindCountMin, Scheme: uint8(s.cfg.Scheme), Seed: s.cfg.Seed, PayloadLen: uint64(len(s.cells)) * 8}, p.Bytes())
	e.Words(s.cells)
	return e.Close()
}

// ReadFrom replaces s with the sketch read from r. It reads exactly one
// file; on error s is unchanged and the error wraps format.ErrFormat.
func (s *Sketch) ReadFrom(r io.Reader) (int64, error) {
	g, n, err := format.ReadFrom(r, decode)
	return n, s.set(g, err)
}

func decode(d *format.Decoder) (*Sketch, error) {
	params, err := d.Begin(format.KindCountMin)
	if err != nil {
		return nil, fmt.Errorf("countmin: %w", err)
	}
	bad := func(msg string, args ...any) error {
		return fmt.Errorf("countmin: "+msg+": %w", append(args, format.ErrFormat)...)
	}
	if len(params) != paramsLen && len(params) != paramsLenV1 {
		return nil, bad("parameter block of %d bytes, want %d (or %d)", len(params), paramsLen, paramsLenV1)
	}
	pr := format.NewParamReader(params)
	w, depth, flags, total := pr.U64(), pr.U32(), pr.U8(), pr.U64()
	var capacity uint64
	if len(params) == paramsLen {
		capacity = pr.U64()
	}
	if err := pr.Err(); err != nil {
		return nil, fmt.Errorf("countmin: %w", err)
	}
	if flags > 1 {
		return nil, bad("unknown flags %#x", flags)
	}
	if hashing.Scheme(d.Header.Scheme) == hashing.RedisBloom {
		return decodeRedis(d, w, depth, flags, total, capacity)
	}
	if depth > MaxDepth {
		return nil, bad("d = %d out of range [1, %d]", depth, MaxDepth)
	}
	cfg, err := normalize(Config{Profile: Bloomlab, Width: w, Depth: int(depth), Scheme: hashing.Scheme(d.Header.Scheme), Conservative: flags == 1, Seed: d.Header.Seed})
	if err != nil || d.Header.Scheme == 0 {
		return nil, bad("parameters: %s (scheme %d)", strings.TrimPrefix(fmt.Sprint(err), "countmin: "), d.Header.Scheme)
	}
	n := w * uint64(depth)
	if d.Header.PayloadLen != n*8 {
		return nil, bad("payload of %d bytes, w·d = %d counters need %d", d.Header.PayloadLen, n, n*8)
	}
	// The rows are checked as they arrive (rowScan); checkRows, the
	// reference, runs only to name what rowScan found wrong.
	rs := newRowScan(w, total, cfg.Conservative)
	cells, err := d.WordsFunc(n, 0, rs.each)
	if err != nil {
		return nil, fmt.Errorf("countmin: %w", err)
	}
	if err := d.End(); err != nil {
		return nil, fmt.Errorf("countmin: %w", err)
	}
	if rs.bad {
		if err := checkRows(cells, w, total, cfg.Conservative); err != nil {
			return nil, bad("%v", err)
		}
	}
	s, err := build(cfg, cells)
	if err != nil {
		return nil, bad("%s", strings.TrimPrefix(err.Error(), "countmin: "))
	}
	s.total, s.capacity = total, capacity
	return s, nil
}

// decodeRedis reads the payload of a redisbloom-profile sketch, whose
// parameters decode has read.
func decodeRedis(d *format.Decoder, w uint64, depth uint32, flags uint8, total, capacity uint64) (*Sketch, error) {
	bad := func(msg string, args ...any) error {
		return fmt.Errorf("countmin: "+msg+": %w", append(args, format.ErrFormat)...)
	}
	cfg, err := normalize(Config{Profile: RedisBloom, Width: w, Depth: int(depth), Conservative: flags == 1, Seed: d.Header.Seed})
	if err != nil {
		return nil, bad("redisbloom profile: %s", strings.TrimPrefix(err.Error(), "countmin: "))
	}
	n := w * uint64(depth)
	words := redisWords(n)
	if d.Header.PayloadLen != words*8 {
		return nil, bad("payload of %d bytes, w·d = %d 32-bit counters need %d", d.Header.PayloadLen, n, words*8)
	}
	cells, err := d.Words(words)
	if err != nil {
		return nil, fmt.Errorf("countmin: %w", err)
	}
	if err := d.End(); err != nil {
		return nil, fmt.Errorf("countmin: %w", err)
	}
	if n%2 == 1 && cells[words-1]>>32 != 0 {
		return nil, bad("the padding after the last of %d counters is %#x, want 0", n, cells[words-1]>>32)
	}
	s, err := build(cfg, cells)
	if err != nil {
		return nil, bad("%s", strings.TrimPrefix(err.Error(), "countmin: "))
	}
	s.total, s.capacity = total, capacity
	return s, nil
}

// checkRows checks the rows of w counters in cells against the total N:
// no counter above N and, without conservative update, every row summing
// to N unless a counter or the sum saturated. It is the reference for
// rowScan, which decode runs instead.
func checkRows(cells []uint64, w, total uint64, conservative bool) error {
	for i := uint64(0); i < uint64(len(cells))/w; i++ {
		var sum uint64
		sat := total == math.MaxUint64
		for _, x := range cells[i*w : (i+1)*w] {
			if x > total {
				return fmt.Errorf("row %d has a counter %d above the total %d", i, x, total)
			}
			sum = satAdd(sum, x)
			sat = sat || x == math.MaxUint64 || sum == math.MaxUint64
		}
		if !conservative && !sat && sum != total {
			return fmt.Errorf("row %d sums to %d, total %d", i, sum, total)
		}
	}
	return nil
}

// MarshalBinary returns s in the bloomlab file format.
func (s *Sketch) MarshalBinary() ([]byte, error) { return format.Marshal(s, len(s.cells)*8+128) }

// UnmarshalBinary replaces s with the sketch encoded in data, which must
// hold exactly one file. On error s is unchanged.
func (s *Sketch) UnmarshalBinary(data []byte) error {
	return s.set(format.Unmarshal(data, "countmin", decode))
}

// set replaces s with g, unless err is not nil.
func (s *Sketch) set(g *Sketch, err error) error {
	if err == nil {
		*s = *g
	}
	return err
}
