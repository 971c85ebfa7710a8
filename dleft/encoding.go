package dleft

import (
	"fmt"
	"io"
	"strings"

	"github.com/bloomlab/bloomlab/internal/format"
)

// File layout (docs/FORMAT.md, kind 5): the common header with kind 5
// (dleft), scheme 0 and the filter's seed; a 44-byte parameter block
//
//	offset size field
//	0      1    D, subtables (1 … 8)
//	1      1    semi-sorting prefix bits (0, 1, 2)
//	2      1    Group (1, 2, 4, 8; Group·BucketBits ≤ 512)
//	3      1    MinFingerprintBits (4 … 32)
//	4      4    BucketBits (64 or 128)
//	8      8    Buckets per subtable (a multiple of Group, D·Buckets ≤ 2^40)
//	16     8    n: keys offered (Add calls and Build keys)
//	24     8    capacity: keys the filter was designed for (0: unknown)
//	32     8    S: stashed keys
//	40     4    StashLimit (0: none)
//
// and a payload of D·Buckets·BucketBits/64 words of buckets (subtable by
// subtable, group by group; in a group, the Group counter fields from bit
// 0 of its first word, then the fingerprints from bit Group·BucketBits/16,
// bucket by bucket, each bucket's semi-sorted by prefix, every one
// BucketBits/16 … stored bits; unused bits zero), then the S stashed
// fingerprints in increasing order; then the CRC-32C trailer.

const paramsLen = 44

// WriteTo writes f in the bloomlab file format. The zero Filter is not
// written: WriteTo returns an error wrapping ErrParam.
func (f *Filter) WriteTo(w io.Writer) (int64, error) {
	if f.words == nil {
		return 0, errZero("WriteTo")
	}
	var p format.Params
	c := f.cfg
	p.U8(uint8(c.D))
	p.U8(uint8(c.Semisort.PrefixBits()))
	p.U8(uint8(c.Group))
	p.U8(uint8(c.MinFingerprintBits))
	p.U32(uint32(c.BucketBits))
	p.U64(c.Buckets)
	p.U64(f.n)
	p.U64(f.capacity)
	p.U64(uint64(len(f.stash)))
	p.U32(uint32(c.StashLimit))
	e := format.NewEncoder(w)
	e.Begin(format.Header{Kind: format.KindDleft, Seed: c.Seed, PayloadLen: uint64(len(f.words)+len(f.stash)) * 8}, p.Bytes())
	e.Words(f.words)
	if len(f.stash) > 0 {
		e.Words(f.stashSorted())
	}
	return e.Close()
}

// ReadFrom replaces f with the filter read from r. It reads exactly one
// file. On error f is unchanged; corrupt or hostile input yields an error
// wrapping format.ErrFormat, never a panic, and nothing is allocated beyond
// what the bytes received justify.
func (f *Filter) ReadFrom(r io.Reader) (int64, error) {
	g, n, err := format.ReadFrom(r, decode)
	return n, f.set(g, err)
}

func decode(d *format.Decoder) (*Filter, error) {
	params, err := d.Begin(format.KindDleft)
	if err != nil {
		return nil, fmt.Errorf("dleft: %w", err)
	}
	bad := func(msg string, args ...any) error {
		return fmt.Errorf("dleft: "+msg+": %w", append(args, format.ErrFormat)...)
	}
	if len(params) != paramsLen {
		return nil, bad("parameter block of %d bytes, want %d", len(params), paramsLen)
	}
	pr := format.NewParamReader(params)
	D, pre, group, minBits := pr.U8(), pr.U8(), pr.U8(), pr.U8()
	bucketBits, buckets, n, capacity, nstash, limit := pr.U32(), pr.U64(), pr.U64(), pr.U64(), pr.U64(), pr.U32()
	if err := pr.Err(); err != nil {
		return nil, fmt.Errorf("dleft: %w", err)
	}
	if d.Header.Scheme != 0 {
		return nil, bad("hash scheme %d, want 0", d.Header.Scheme)
	}
	if pre > 2 || bucketBits > 128 || limit > 1<<31-1 {
		return nil, bad("semisort %d / bucket bits %d / stash limit %d out of range", pre, bucketBits, limit)
	}
	cfg := Config{D: int(D), BucketBits: int(bucketBits), Buckets: buckets, Semisort: Semisort(pre + 1),
		Group: int(group), MinFingerprintBits: int(minBits), StashLimit: int(limit), Seed: d.Header.Seed}
	if D == 0 || bucketBits == 0 || group == 0 || minBits == 0 {
		return nil, bad("zero D, bucket bits, group or minimum fingerprint bits")
	}
	if err := cfg.Validate(); err != nil {
		return nil, bad("%s", strings.TrimPrefix(err.Error(), "dleft: "))
	}
	nw := uint64(cfg.D) * buckets * uint64(bucketBits) / 64
	if nstash > d.Header.PayloadLen/8 || d.Header.PayloadLen/8 != nw+nstash {
		return nil, bad("payload of %d bytes, parameters need %d + %d stashed words", d.Header.PayloadLen, nw, nstash)
	}
	if limit > 0 && nstash > uint64(limit) {
		return nil, bad("%d stashed keys exceed the stash limit %d", nstash, limit)
	}
	g := &Filter{cfg: cfg, n: n, capacity: capacity}
	g.init()
	// The groups are checked as they arrive (scan); check, the reference,
	// runs only to name what scan found wrong.
	s := newScan(g)
	words, err := d.WordsFunc(nw, 0, s.each)
	if err != nil {
		return nil, fmt.Errorf("dleft: %w", err)
	}
	var st []uint64
	if nstash > 0 {
		if st, err = d.Words(nstash); err != nil {
			return nil, fmt.Errorf("dleft: %w", err)
		}
	}
	if err := d.End(); err != nil {
		return nil, fmt.Errorf("dleft: %w", err)
	}
	g.words = words
	stored := s.stored
	if s.bad {
		if stored, err = g.check(); err != nil {
			return nil, bad("%v", err)
		}
	}
	for i, h := range st {
		if i > 0 && h <= st[i-1] {
			return nil, bad("stash not in strictly increasing order")
		}
	}
	if len(st) > 0 {
		g.stash = make(map[uint64]struct{}, len(st))
		for _, h := range st {
			g.stash[h] = struct{}{}
		}
	}
	g.stored = stored
	if n < stored+nstash {
		return nil, bad("n = %d is less than the %d keys held", n, stored+nstash)
	}
	return g, nil
}

// check validates every group of a decoded table (valid counter values,
// fingerprint lengths allowed, unused bits zero) and returns the number of
// fingerprints. It is the reference for scan, which decode runs instead
// (TestScanAgrees); decode calls it to name the error scan found.
func (f *Filter) check() (uint64, error) { return f.checkGroups(f.words, 0) }

// checkGroups checks the groups held in ws, the first being group g0.
func (f *Filter) checkGroups(ws []uint64, g0 int) (uint64, error) {
	var total uint64
	G := f.cfg.Group
	for g := 0; g*f.wpg < len(ws); g++ {
		ws := ws[g*f.wpg : (g+1)*f.wpg]
		w0 := ws[0]
		A := 0
		for k := 0; k < G; k++ {
			s := &f.states[(w0>>(uint(k)*f.cbits))&f.cmask]
			if !s.valid {
				return 0, fmt.Errorf("group %d: bucket %d has an invalid counter value %d", g0+g, k, (w0>>(uint(k)*f.cbits))&f.cmask)
			}
			A += int(s.load)
		}
		used := uint(G) * f.cbits
		for k := 0; k < G; k++ {
			s := &f.states[(w0>>(uint(k)*f.cbits))&f.cmask]
			if s.load == 0 {
				continue
			}
			fl := f.fb[s.load][A]
			if fl < 0 {
				return 0, fmt.Errorf("group %d: loads (%d of %d) a bucket cannot hold", g0+g, s.load, A)
			}
			used += uint(s.load) * uint(fl-int(s.pre))
		}
		total += uint64(A)
		for x := range ws {
			lo := uint(x) * 64
			var m uint64 // bits of word x at or beyond used
			switch {
			case used <= lo:
				m = ^uint64(0)
			case used < lo+64:
				m = ^uint64(0) << (used - lo)
			}
			if ws[x]&m != 0 {
				return 0, fmt.Errorf("group %d: bits set beyond the fingerprints", g0+g)
			}
		}
	}
	return total, nil
}

// MarshalBinary returns f in the bloomlab file format.
func (f *Filter) MarshalBinary() ([]byte, error) {
	return format.Marshal(f, len(f.words)*8+len(f.stash)*8+128)
}

// UnmarshalBinary replaces f with the filter encoded in data, which must
// hold exactly one file. On error f is unchanged.
func (f *Filter) UnmarshalBinary(data []byte) error {
	return f.set(format.Unmarshal(data, "dleft", decode))
}

// set replaces f with g, unless err is not nil.
func (f *Filter) set(g *Filter, err error) error {
	if err == nil {
		*f = *g
	}
	return err
}
