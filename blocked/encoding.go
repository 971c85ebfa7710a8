package blocked

import (
	"fmt"
	"io"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/format"
)

// File layout (docs/FORMAT.md): the common header with kind 3 (blocked),
// scheme 1 (independent positions inside the block) and the seed; a 28-byte
// parameter block
//
//	offset size field
//	0      8    b, the number of 512-bit blocks (1 … 2^39)
//	8      4    k (1 … 64)
//	12     8    n, the number of Add calls
//	20     8    capacity: the number of keys the filter was designed for
//	            (0: unknown; informational)
//
// and a payload of 8·b little-endian words, block i being words 8i … 8i+7
// and bit j of a block bit j mod 64 of its word j/64; then the CRC-32C
// trailer.

// WriteTo writes f in the bloomlab file format. It is a read method: it
// may run beside AddAtomic, and every key whose AddAtomic returned before
// WriteTo was called is in the output. On the zero Filter it returns an
// error wrapping ErrParam.
func (f *Filter) WriteTo(w io.Writer) (int64, error) {
	if f.blocks == 0 {
		return 0, zero.Err("WriteTo")
	}
	var p format.Params
	p.U64(f.blocks)
	p.U32(uint32(f.k))
	p.U64(f.N())
	p.U64(f.capacity)
	e := format.NewEncoder(w)
	e.Begin(format.Header{Kind: format.KindBlocked, Scheme: uint8(hashing.Independent), Seed: f.seed, PayloadLen: uint64(len(f.bits)) * 8}, p.Bytes())
	f.bits.Encode(e)
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

// decode reads one blocked filter from d.
func decode(d *format.Decoder) (*Filter, error) {
	params, err := d.Begin(format.KindBlocked)
	if err != nil {
		return nil, fmt.Errorf("blocked: %w", err)
	}
	pr := format.NewParamReader(params)
	blocks, k, n, capacity := pr.U64(), pr.U32(), pr.U64(), pr.U64()
	if err := pr.Err(); err != nil {
		return nil, fmt.Errorf("blocked: %w", err)
	}
	bad := func(msg string, args ...any) error {
		return fmt.Errorf("blocked: "+msg+": %w", append(args, format.ErrFormat)...)
	}
	switch {
	case d.Header.Scheme != uint8(hashing.Independent):
		return nil, bad("scheme %d, want %d (independent)", d.Header.Scheme, hashing.Independent)
	case blocks < 1 || blocks > MaxBlocks:
		return nil, bad("blocks = %d out of range [1, 2^39]", blocks)
	case k < 1 || k > hashing.MaxK:
		return nil, bad("k = %d out of range [1, %d]", k, hashing.MaxK)
	case d.Header.PayloadLen != blocks*BlockBits/8:
		return nil, bad("payload of %d bytes, %d blocks need %d", d.Header.PayloadLen, blocks, blocks*BlockBits/8)
	}
	words, err := d.Words(blocks * wordsPerBlock)
	if err != nil {
		return nil, fmt.Errorf("blocked: %w", err)
	}
	if err := d.End(); err != nil {
		return nil, fmt.Errorf("blocked: %w", err)
	}
	return &Filter{bits: words, blocks: blocks, k: int(k), seed: d.Header.Seed, n: n, capacity: capacity}, nil
}

// MarshalBinary returns f in the bloomlab file format.
func (f *Filter) MarshalBinary() ([]byte, error) { return format.Marshal(f, len(f.bits)*8+128) }

// UnmarshalBinary replaces f with the filter in data, which must hold
// exactly one file. On error f is unchanged.
func (f *Filter) UnmarshalBinary(data []byte) error {
	g, err := format.Unmarshal(data, "blocked", decode)
	if err == nil {
		*f = *g
	}
	return err
}
