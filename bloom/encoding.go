package bloom

import (
	"errors"
	"fmt"
	"io"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/bitvec"
	"github.com/bloomlab/bloomlab/internal/format"
)

// File layout (docs/FORMAT.md): the common header with kind 1 (bloom), the
// filter's scheme and seed; a 28-byte parameter block
//
//	offset size field
//	0      8    m, the number of bits (1 … 2^48; for partitioned schemes a
//	            valid partition size for k)
//	8      4    k (1 … 64)
//	12     8    n, the number of Add calls
//	20     8    capacity: the number of keys the filter was designed for
//	            (0: unknown; informational)
//
// and a payload of ⌈m/64⌉ little-endian words, bit i of the filter being bit
// i mod 64 of word i/64 (bits past m are zero), then the CRC-32C trailer.

// WriteTo writes f in the bloomlab file format. A filter with a custom
// index function cannot be written (its positions are not reproducible from
// the file) and returns an error wrapping ErrParam, as does the zero
// Filter. It is a read method: it may run beside AddAtomic, and every key
// whose AddAtomic returned before WriteTo was called is in the output.
func (f *Filter) WriteTo(w io.Writer) (int64, error) {
	if f.ix == nil {
		return 0, zero.Err("WriteTo")
	}
	if f.scheme == hashing.Custom {
		return 0, fmt.Errorf("bloom: a filter with a custom index function cannot be serialized: %w", ErrParam)
	}
	var p format.Params
	p.U64(f.m)
	p.U32(uint32(f.k))
	p.U64(f.N())
	p.U64(f.capacity)
	e := format.NewEncoder(w)
	e.Begin(format.Header{Kind: format.KindBloom, Scheme: uint8(f.scheme), Seed: f.seed, PayloadLen: uint64(len(f.bits)) * 8}, p.Bytes())
	f.bits.Encode(e)
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
	params, err := d.Begin(format.KindBloom)
	if err != nil {
		return nil, fmt.Errorf("bloom: %w", err)
	}
	pr := format.NewParamReader(params)
	m, k, n, capacity := pr.U64(), pr.U32(), pr.U64(), pr.U64()
	if err := pr.Err(); err != nil {
		return nil, fmt.Errorf("bloom: %w", err)
	}
	bad := func(msg string, args ...any) error {
		return fmt.Errorf("bloom: "+msg+": %w", append(args, format.ErrFormat)...)
	}
	scheme := hashing.Scheme(d.Header.Scheme)
	if err := validate(m, int(min(k, 1<<16)), scheme); err != nil {
		return nil, bad("%v", err)
	}
	nw := bitvec.Words(m)
	if d.Header.PayloadLen != nw*8 {
		return nil, bad("payload of %d bytes, m = %d needs %d", d.Header.PayloadLen, m, nw*8)
	}
	words, err := d.Words(nw)
	if err != nil {
		return nil, fmt.Errorf("bloom: %w", err)
	}
	if err := d.End(); err != nil {
		return nil, fmt.Errorf("bloom: %w", err)
	}
	g, err := fromBits(m, int(k), scheme, d.Header.Seed, words, n)
	if err != nil {
		return nil, bad("%v", err)
	}
	g.capacity = capacity
	return g, nil
}

// MarshalBinary returns f in the bloomlab file format.
func (f *Filter) MarshalBinary() ([]byte, error) { return format.Marshal(f, len(f.bits)*8+128) }

// UnmarshalBinary replaces f with the filter encoded in data, which must
// hold exactly one file. On error f is unchanged.
func (f *Filter) UnmarshalBinary(data []byte) error {
	g, err := format.Unmarshal(data, "bloom", decode)
	if err == nil {
		*f = *g
	}
	return err
}

// FromBits returns a filter over the given bit words, validated as a decoded
// file would be: m in [1, 2^48] and valid for the scheme, k in [1, 64],
// len(words) = ⌈m/64⌉, no bit set beyond m. The filter takes ownership of
// words. n is the number of keys to report from N. It is how other
// structures (a counting filter, a c-choice filter built offline) hand over
// a plain Bloom filter.
func FromBits(m uint64, k int, scheme hashing.Scheme, seed uint64, words []uint64, n uint64) (*Filter, error) {
	f, err := fromBits(m, k, scheme, seed, words, n)
	if err != nil {
		return nil, fmt.Errorf("bloom: %v: %w", err, ErrParam)
	}
	return f, nil
}

func fromBits(m uint64, k int, scheme hashing.Scheme, seed uint64, words []uint64, n uint64) (*Filter, error) {
	if err := validate(m, k, scheme); err != nil {
		return nil, err
	}
	var ix *hashing.Indexer
	var err error
	if scheme == hashing.BitsAndBlooms {
		ix, err = newBBIndexer(m, k, seed)
	} else {
		ix, err = hashing.NewIndexer(scheme, m, k)
	}
	if err != nil {
		return nil, err
	}
	return fromIndexer(ix, seed, words, n)
}

// FromIndexer is FromBits for a structure that already has a validated
// Indexer (custom index functions included): the filter uses ix for its
// positions and takes ownership of words, which must hold ⌈M/64⌉ words with
// no bit set beyond M.
func FromIndexer(ix *hashing.Indexer, seed uint64, words []uint64, n uint64) (*Filter, error) {
	if ix == nil {
		return nil, fmt.Errorf("bloom: nil indexer: %w", ErrParam)
	}
	f, err := fromIndexer(ix, seed, words, n)
	if err != nil {
		return nil, fmt.Errorf("bloom: %v: %w", err, ErrParam)
	}
	return f, nil
}

func fromIndexer(ix *hashing.Indexer, seed uint64, words []uint64, n uint64) (*Filter, error) {
	m := ix.M()
	if uint64(len(words)) != bitvec.Words(m) {
		return nil, fmt.Errorf("%d words for m = %d, want %d", len(words), m, bitvec.Words(m))
	}
	if !bitvec.Vec(words).TailClear(m) {
		return nil, errors.New("bits set beyond m")
	}
	return &Filter{bits: words, m: m, k: ix.K(), seed: seed, scheme: ix.Scheme(), ix: ix, n: n}, nil
}

// validate checks the parameters a filter read from outside must satisfy.
func validate(m uint64, k int, scheme hashing.Scheme) error {
	switch {
	case (!scheme.Valid() || scheme == hashing.Custom) && scheme != hashing.BitsAndBlooms:
		return fmt.Errorf("hash scheme %d cannot be rebuilt from bits", uint8(scheme))
	case m < 1 || m > hashing.MaxM:
		return fmt.Errorf("m = %d out of range [1, 2^48]", m)
	case k < 1 || k > hashing.MaxK:
		return fmt.Errorf("k = %d out of range [1, %d]", k, hashing.MaxK)
	case hashing.PartitionSize(scheme, m, k) != m:
		return fmt.Errorf("m = %d is not a valid size for scheme %v with k = %d", m, scheme, k)
	}
	return nil
}
