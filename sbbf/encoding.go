package sbbf

import (
	"fmt"
	"io"

	"github.com/bloomlab/bloomlab/internal/format"
)

// File layout (docs/FORMAT.md): the common header with kind 10 (sbbf),
// scheme 0 and seed 0 (the format's hash is XXH64 seed 0); a 24-byte
// parameter block
//
//	offset size field
//	0      8    z, the number of 256-bit blocks (1 … 2^31 − 1)
//	8      8    n, the number of Add calls
//	16     8    capacity: the number of keys the filter was designed for
//	            (0: unknown; informational)
//
// and a payload of 32·z bytes: the bitset exactly as Parquet stores it
// (Bytes); then the CRC-32C trailer.

// WriteTo writes f in the bloomlab file format. On the zero Filter it
// returns an error wrapping ErrParam.
func (f *Filter) WriteTo(w io.Writer) (int64, error) {
	if f.blocks == 0 {
		return 0, zero.Err("WriteTo")
	}
	var p format.Params
	p.U64(f.blocks)
	p.U64(f.n)
	p.U64(f.capacity)
	e := format.NewEncoder(w)
	e.Begin(format.Header{Kind: format.KindSBBF, PayloadLen: uint64(len(f.bits)) * 8}, p.Bytes())
	e.Words(f.bits)
	return e.Close()
}

// ReadFrom replaces f with the filter read from r (exactly one file). On
// error f is unchanged; malformed input yields an error wrapping
// format.ErrFormat, never a panic, and no allocation beyond what the bytes
// received justify.
func (f *Filter) ReadFrom(r io.Reader) (int64, error) {
	g, n, err := format.ReadFrom(r, decode)
	if err == nil {
		*f = *g
	}
	return n, err
}

// decode reads one sbbf filter from d.
func decode(d *format.Decoder) (*Filter, error) {
	params, err := d.Begin(format.KindSBBF)
	if err != nil {
		return nil, fmt.Errorf("sbbf: %w", err)
	}
	pr := format.NewParamReader(params)
	blocks, n, capacity := pr.U64(), pr.U64(), pr.U64()
	if err := pr.Err(); err != nil {
		return nil, fmt.Errorf("sbbf: %w", err)
	}
	bad := func(msg string, args ...any) error {
		return fmt.Errorf("sbbf: "+msg+": %w", append(args, format.ErrFormat)...)
	}
	switch {
	case d.Header.Scheme != 0:
		return nil, bad("scheme %d, want 0", d.Header.Scheme)
	case d.Header.Seed != 0:
		return nil, bad("seed %d, want 0 (the format hashes with XXH64 seed 0)", d.Header.Seed)
	case blocks < 1 || blocks > MaxBlocks:
		return nil, bad("%d blocks out of range [1, 2^31 − 1]", blocks)
	case d.Header.PayloadLen != blocks*BlockBytes:
		return nil, bad("payload of %d bytes, %d blocks need %d", d.Header.PayloadLen, blocks, blocks*BlockBytes)
	}
	words, err := d.Words(blocks * wordsPerBlock)
	if err != nil {
		return nil, fmt.Errorf("sbbf: %w", err)
	}
	if err := d.End(); err != nil {
		return nil, fmt.Errorf("sbbf: %w", err)
	}
	return &Filter{bits: words, blocks: blocks, n: n, capacity: capacity}, nil
}

// MarshalBinary returns f in the bloomlab file format.
func (f *Filter) MarshalBinary() ([]byte, error) { return format.Marshal(f, len(f.bits)*8+128) }

// UnmarshalBinary replaces f with the filter in data, which must hold
// exactly one file. On error f is unchanged.
func (f *Filter) UnmarshalBinary(data []byte) error {
	g, err := format.Unmarshal(data, "sbbf", decode)
	if err == nil {
		*f = *g
	}
	return err
}
