package counting

import (
	"fmt"
	"io"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/format"
)

// File layout (docs/FORMAT.md): the common header with kind 2 (counting),
// the filter's scheme and seed; a 29-byte parameter block
//
//	offset size field
//	0      8    m, the number of counters (1 … 2^48; for partitioned
//	            schemes a valid partition size for k)
//	8      4    k (1 … 64)
//	12     1    w, the counter width in bits (2, 4, 8, 16 or 32)
//	13     8    n, Add calls minus successful Remove calls
//	21     8    capacity: the number of keys the filter was designed for
//	            (0: unknown; informational)
//
// and a payload of ⌈m·w/64⌉ little-endian words, counter i occupying bits
// (i mod 64/w)·w … (i mod 64/w)·w + w − 1 of word i/(64/w) (bits past the
// last counter are zero), then the CRC-32C trailer. The number of saturated
// counters is not stored: it is recounted on load.

// WriteTo writes f in the bloomlab file format. A filter with a custom
// index function cannot be written (its positions are not reproducible from
// the file) and returns an error wrapping ErrParam, as does the zero
// Filter.
func (f *Filter) WriteTo(w io.Writer) (int64, error) {
	if f.ix == nil {
		return 0, zero.Err("WriteTo")
	}
	if f.scheme == hashing.Custom {
		return 0, fmt.Errorf("counting: a filter with a custom index function cannot be serialized: %w", ErrParam)
	}
	var p format.Params
	p.U64(f.m)
	p.U32(uint32(f.k))
	p.U8(uint8(f.lay.width()))
	p.U64(f.n)
	p.U64(f.capacity)
	e := format.NewEncoder(w)
	e.Begin(format.Header{Kind: format.KindCounting, Scheme: uint8(f.scheme), Seed: f.seed, PayloadLen: uint64(len(f.words)) * 8}, p.Bytes())
	e.Words(f.words)
	return e.Close()
}

// ReadFrom replaces f with the filter read from r. It reads exactly one
// file. On error f is unchanged; corrupt or hostile input yields an error
// wrapping format.ErrFormat, never a panic, and nothing is allocated beyond
// what the bytes actually received justify.
func (f *Filter) ReadFrom(r io.Reader) (int64, error) {
	g, n, err := format.ReadFrom(r, decode)
	if err == nil {
		*f = *g
	}
	return n, err
}

func decode(d *format.Decoder) (*Filter, error) {
	params, err := d.Begin(format.KindCounting)
	if err != nil {
		return nil, fmt.Errorf("counting: %w", err)
	}
	pr := format.NewParamReader(params)
	m, k, w, n, capacity := pr.U64(), pr.U32(), pr.U8(), pr.U64(), pr.U64()
	if err := pr.Err(); err != nil {
		return nil, fmt.Errorf("counting: %w", err)
	}
	bad := func(msg string, args ...any) error {
		return fmt.Errorf("counting: "+msg+": %w", append(args, format.ErrFormat)...)
	}
	scheme := hashing.Scheme(d.Header.Scheme)
	if !scheme.Valid() || scheme == hashing.Custom {
		return nil, bad("unknown hash scheme %d", d.Header.Scheme)
	}
	if scheme.Uses64BitHash() {
		return nil, bad("hash scheme %v is an imported Bloom filter's (kind bloom only)", scheme)
	}
	if m < 1 || m > hashing.MaxM {
		return nil, bad("m = %d out of range [1, 2^48]", m)
	}
	if k < 1 || k > hashing.MaxK {
		return nil, bad("k = %d out of range [1, %d]", k, hashing.MaxK)
	}
	if checkBits(int(w)) != nil {
		return nil, bad("counter bits = %d, want one of 2, 4, 8, 16, 32", w)
	}
	if l := newLayout(int(w)); m<<l.logw > hashing.MaxM {
		return nil, bad("m = %d counters of %d bits exceed 2^48 bits", m, w)
	}
	if hashing.PartitionSize(scheme, m, int(k)) != m {
		return nil, bad("m = %d is not a valid size for scheme %v with k = %d", m, scheme, k)
	}
	lay := newLayout(int(w))
	nw := lay.nwords(m) // m·w ≤ 2^53: no overflow
	if d.Header.PayloadLen != nw*8 {
		return nil, bad("payload of %d bytes, m = %d counters of %d bits need %d", d.Header.PayloadLen, m, w, nw*8)
	}
	ix, err := hashing.NewIndexer(scheme, m, int(k))
	if err != nil {
		return nil, bad("%v", err)
	}
	// The counters are tallied as they arrive, while in cache.
	t := tally{lay: lay}
	words, err := d.WordsFunc(nw, 0, t.each)
	if err != nil {
		return nil, fmt.Errorf("counting: %w", err)
	}
	if err := d.End(); err != nil {
		return nil, fmt.Errorf("counting: %w", err)
	}
	if tail := (m << lay.logw) & 63; tail != 0 && words[nw-1]>>tail != 0 {
		return nil, bad("bits set beyond the last counter")
	}
	f := newFilterOf(words, ix, d.Header.Seed, lay)
	f.n, f.capacity = n, capacity
	f.sat = t.sat
	// While no counter has saturated, every Add and Remove changed exactly
	// k counters by one, so the counters sum to k·n (mod 2^64).
	if f.sat == 0 && t.sum != uint64(k)*n {
		return nil, bad("counters sum to %d, k·n = %d·%d with no saturated counter", t.sum, k, n)
	}
	return f, nil
}

// MarshalBinary returns f in the bloomlab file format.
func (f *Filter) MarshalBinary() ([]byte, error) { return format.Marshal(f, len(f.words)*8+128) }

// UnmarshalBinary replaces f with the filter encoded in data, which must
// hold exactly one file. On error f is unchanged.
func (f *Filter) UnmarshalBinary(data []byte) error {
	g, err := format.Unmarshal(data, "counting", decode)
	if err == nil {
		*f = *g
	}
	return err
}
