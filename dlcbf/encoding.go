package dlcbf

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/bloomlab/bloomlab/internal/format"
)

// File layout (docs/FORMAT.md, "Kind 6: dlcbf"): the common header with
// kind 6, scheme 0 and the filter's seed; a 34-byte parameter block
//
//	offset size field
//	0      1    variant: 1 static, 2 dynamic, 3 two-sizes
//	1      1    d, subtables (1 … 16)
//	2      1    h, cells per bucket (1 … 15)
//	3      1    r, (minimal) remainder bits (1 … 32)
//	4      1    c, counter bits (1 … 8; 0: none, dynamic variants only)
//	5      4    R, cell bits per bucket (static: h·(r+c))
//	9      8    B, buckets per subtable (1 … 2^40; d·B·bucket bits ≤ 2^48)
//	17     8    n, keys in the filter (must equal the sum of the counts)
//	25     1    ties: 0 leftmost subtable, 1 by hash (placement only)
//	26     8    capacity: keys the filter was sized for (0: unknown)
//
// Files written before capacity was recorded have a 26-byte block (offsets
// 0 … 25 as above); they still load, with capacity 0. Writers always write
// the 34-byte block.
//
// and a payload of ⌈d·B·bucketBits/64⌉ little-endian words holding the
// buckets back to back (bucket j of subtable i at bit (i·B + j)·bucketBits,
// bit p of the payload being bit p mod 64 of word p/64), then the CRC-32C
// trailer. Every bucket is checked on load: counts, loads, widths, and
// unused bits zero, so a file decodes to exactly one state.

// Lengths of the parameter block: today's, and that of files written before
// the capacity was recorded.
const (
	paramsLen   = 34
	paramsLenV1 = 26
)

// WriteTo writes f in the bloomlab file format. The zero Filter is not
// written: WriteTo returns an error wrapping ErrParam.
func (f *Filter) WriteTo(w io.Writer) (int64, error) {
	if f.words == nil {
		return 0, errZero("WriteTo")
	}
	var p format.Params
	p.U8(uint8(f.cfg.Variant))
	p.U8(uint8(f.d))
	p.U8(uint8(f.h))
	p.U8(uint8(f.r))
	p.U8(uint8(f.c))
	p.U32(uint32(f.area))
	p.U64(f.nb)
	p.U64(f.n)
	p.U8(uint8(f.cfg.Ties))
	p.U64(f.capacity)
	words := f.words[:len(f.words)-1] // without the padding word
	e := format.NewEncoder(w)
	e.Begin(format.Header{Kind: format.KindDlcbf, Seed: f.cfg.Seed, PayloadLen: uint64(len(words)) * 8}, p.Bytes())
	e.Words(words)
	return e.Close()
}

// ReadFrom replaces f with the filter read from r. It reads exactly one
// file. On error f is unchanged; corrupt or hostile input yields an error
// wrapping format.ErrFormat, never a panic, and nothing is allocated beyond
// what the bytes actually received justify.
func (f *Filter) ReadFrom(r io.Reader) (int64, error) {
	g, n, err := format.ReadFrom(r, decode)
	return n, f.set(g, err)
}

func decode(d *format.Decoder) (*Filter, error) {
	params, err := d.Begin(format.KindDlcbf)
	if err != nil {
		return nil, fmt.Errorf("dlcbf: %w", err)
	}
	bad := func(msg string, args ...any) error {
		return fmt.Errorf("dlcbf: "+msg+": %w", append(args, format.ErrFormat)...)
	}
	if len(params) != paramsLen && len(params) != paramsLenV1 {
		return nil, bad("parameter block of %d bytes, want %d (or %d)", len(params), paramsLen, paramsLenV1)
	}
	pr := format.NewParamReader(params)
	variant, sub, h, r, c, R, nb, n, ties := pr.U8(), pr.U8(), pr.U8(), pr.U8(), pr.U8(), pr.U32(), pr.U64(), pr.U64(), pr.U8()
	var capacity uint64
	if len(params) == paramsLen {
		capacity = pr.U64()
	}
	if err := pr.Err(); err != nil {
		return nil, fmt.Errorf("dlcbf: %w", err)
	}
	if d.Header.Scheme != 0 {
		return nil, bad("hash scheme %d, want 0", d.Header.Scheme)
	}
	if R > MaxBucketBits {
		return nil, bad("R = %d exceeds %d", R, MaxBucketBits)
	}
	cfg := Config{Variant: Variant(variant), Subtables: int(sub), Buckets: nb, Cells: int(h),
		RemainderBits: int(r), CounterBits: int(c), BucketBits: int(R), Ties: Tie(ties), Seed: d.Header.Seed}
	if c == 0 {
		cfg.CounterBits = NoCounter // a dynamic variant without counters
	}
	// Zero fields would take defaults in normalize; a file states them all.
	if variant == 0 || sub == 0 || h == 0 || r == 0 || nb == 0 || R == 0 || (Variant(variant) == Static && c == 0) {
		return nil, bad("zero parameter (variant %d, d %d, h %d, r %d, c %d, R %d, B %d)", variant, sub, h, r, c, R, nb)
	}
	norm, err := normalize(cfg)
	if err != nil {
		return nil, bad("%s", strings.TrimPrefix(err.Error(), "dlcbf: "))
	}
	if norm != cfg {
		return nil, bad("R = %d, want %d for the static variant", R, norm.BucketBits)
	}
	total := uint64(sub) * nb * bucketBits(cfg) // ≤ 2^48 (normalize)
	nw := (total + 63) / 64
	if d.Header.PayloadLen != nw*8 {
		return nil, bad("payload of %d bytes, the parameters need %d", d.Header.PayloadLen, nw*8)
	}
	// The buckets are checked as they arrive (loadScan); validate, the
	// reference check, runs only to name what loadScan found wrong.
	s := newLoadScan(shell(cfg))
	words, err := d.WordsFunc(nw, 1, s.each)
	if err != nil {
		return nil, fmt.Errorf("dlcbf: %w", err)
	}
	if err := d.End(); err != nil {
		return nil, fmt.Errorf("dlcbf: %w", err)
	}
	f := build(cfg, words) // in place: words has room for the padding word
	f.n, f.capacity = n, capacity
	if !s.finish(f.words, n) {
		if err := f.validate(); err != nil {
			return nil, bad("%v", err)
		}
	}
	return f, nil
}

// validate checks that every bucket is in canonical form and that the
// counts sum to N. It is the reference for loadScan, which decode runs
// instead (TestScanAgrees); decode calls it to name the error loadScan
// found.
func (f *Filter) validate() error {
	w := f.words
	total := uint64(f.d) * f.nb * f.bbits
	if w[len(w)-1] != 0 || (total&63 != 0 && w[len(w)-2]>>(total&63) != 0) {
		return errors.New("bits set beyond the last bucket")
	}
	var sum uint64
	var bk bucket
	for p := uint64(0); p < uint64(f.d)*f.nb; p++ {
		pos := p * f.bbits
		end := pos + f.bbits
		used := pos
		switch f.cfg.Variant {
		case Static:
			cw := f.r + f.c
			for j := 0; j < f.h; j++ {
				x := getBits(w, pos+uint64(j)*uint64(cw), cw)
				if x&lowMask(f.c) == 0 && x != 0 {
					return fmt.Errorf("bucket %d: empty cell %d holds a remainder", p, j)
				}
			}
			used = end
		case Dynamic:
			hd := getBits(w, pos, dynHeader)
			load, m, z := int(hd&15), int(hd>>4&15), int(hd>>8&15)
			if m > f.h || load > m || z > load {
				return fmt.Errorf("bucket %d: load %d, largest load %d, zero-count %d (h = %d)", p, load, m, z, f.h)
			}
			used = pos + dynHeader
			if m > 0 {
				used += uint64(load) * uint64(f.width[m])
			}
		case TwoSizes:
			hd := getBits(w, pos, twoHeader)
			a, b, s, t := int(hd&15), int(hd>>4&15), int(hd>>8&127), int(hd>>15&127)
			minW := int(f.r + f.c)
			switch {
			case a+b > f.h:
				return fmt.Errorf("bucket %d: %d cells (h = %d)", p, a+b, f.h)
			case b == 0 && (a != 0 || t != 0):
				return fmt.Errorf("bucket %d: %d short cells without long ones", p, a)
			case b > 0 && (t < minW || t > maxWidth):
				return fmt.Errorf("bucket %d: width %d out of range [%d, %d]", p, t, minW, maxWidth)
			case a == 0 && s != 0:
				return fmt.Errorf("bucket %d: short width %d with no short cells", p, s)
			case a > 0 && (s < minW || s >= t):
				return fmt.Errorf("bucket %d: short width %d, long width %d", p, s, t)
			case a*s+b*t > int(f.area):
				return fmt.Errorf("bucket %d: cells of %d bits exceed %d", p, a*s+b*t, f.area)
			}
			used = pos + twoHeader + uint64(a*s+b*t)
		}
		for q := used; q < end; q += 64 {
			if getBits(w, q, uint(min(64, end-q))) != 0 {
				return fmt.Errorf("bucket %d: unused bits set", p)
			}
		}
		f.decode(pos, &bk)
		for j := 0; j < bk.n; j++ {
			sum += bk.cnt[j]
		}
	}
	if sum != f.n {
		return fmt.Errorf("counts sum to %d, n = %d", sum, f.n)
	}
	return nil
}

// MarshalBinary returns f in the bloomlab file format (an error wrapping
// ErrParam for the zero Filter).
func (f *Filter) MarshalBinary() ([]byte, error) { return format.Marshal(f, len(f.words)*8+128) }

// UnmarshalBinary replaces f with the filter encoded in data, which must
// hold exactly one file. On error f is unchanged.
func (f *Filter) UnmarshalBinary(data []byte) error {
	return f.set(format.Unmarshal(data, "dlcbf", decode))
}

// set replaces f with g, unless err is not nil.
func (f *Filter) set(g *Filter, err error) error {
	if err == nil {
		*f = *g
	}
	return err
}
