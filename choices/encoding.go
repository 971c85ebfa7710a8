package choices

import (
	"fmt"
	"io"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/bitvec"
	"github.com/bloomlab/bloomlab/internal/format"
)

// File layout (docs/FORMAT.md): the common header with kind 4 (choices),
// the scheme used inside each group and the seed; a 41-byte parameter
// block
//
//	offset size field
//	0      8    m, the number of bits (1 … 2^48)
//	8      4    k, hash functions per group (1 … 64)
//	12     1    c, groups (1 … 8)
//	13     8    n, keys added
//	21     8    capacity: the number of keys the filter was designed for
//	            (0: unknown; informational)
//	29     4    rounds of the offline build that produced the filter (0:
//	            built online; informational)
//	33     8    state of the tie-breaking generator (SplitMix64)
//
// and a payload of ⌈m/64⌉ little-endian words, bit i of the filter being bit
// i mod 64 of word i/64 (bits past m are zero), then the CRC-32C trailer.

// paramsLen is the size of the parameter block.
const paramsLen = 41

// WriteTo writes f in the bloomlab file format. It is a read method: it may
// run concurrently with Contains, not with Add. On the zero Filter it
// returns an error wrapping ErrParam (it used to write a file no decoder
// accepts).
func (f *Filter) WriteTo(w io.Writer) (int64, error) {
	if f.ix == nil {
		return 0, zeroFilter.Err("WriteTo")
	}
	var p format.Params
	p.U64(f.m)
	p.U32(uint32(f.k))
	p.U8(uint8(f.c))
	p.U64(f.N())
	p.U64(f.capacity)
	p.U32(f.rounds)
	p.U64(f.rng)
	e := format.NewEncoder(w)
	e.Begin(format.Header{Kind: format.KindChoices, Scheme: uint8(f.scheme), Seed: f.seed, PayloadLen: uint64(len(f.bits)) * 8}, p.Bytes())
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
	params, err := d.Begin(format.KindChoices)
	if err != nil {
		return nil, fmt.Errorf("choices: %w", err)
	}
	bad := func(msg string, args ...any) error {
		return fmt.Errorf("choices: "+msg+": %w", append(args, format.ErrFormat)...)
	}
	if len(params) != paramsLen {
		return nil, bad("parameter block of %d bytes, want %d", len(params), paramsLen)
	}
	pr := format.NewParamReader(params)
	m, k, c, n, capacity, rounds, rng := pr.U64(), pr.U32(), pr.U8(), pr.U64(), pr.U64(), pr.U32(), pr.U64()
	if err := pr.Err(); err != nil {
		return nil, fmt.Errorf("choices: %w", err)
	}
	scheme := hashing.Scheme(d.Header.Scheme)
	switch {
	case !validScheme(scheme):
		return nil, bad("hash scheme %d is not allowed for a c-choice filter", d.Header.Scheme)
	case m < 1 || m > hashing.MaxM:
		return nil, bad("m = %d out of range [1, 2^48]", m)
	case k < 1 || k > hashing.MaxK:
		return nil, bad("k = %d out of range [1, %d]", k, hashing.MaxK)
	case c < 1 || c > MaxC:
		return nil, bad("c = %d out of range [1, %d]", c, MaxC)
	case rounds > MaxRounds:
		return nil, bad("rounds = %d out of range [0, %d]", rounds, MaxRounds)
	}
	nw := bitvec.Words(m)
	if d.Header.PayloadLen != nw*8 {
		return nil, bad("payload of %d bytes, m = %d needs %d", d.Header.PayloadLen, m, nw*8)
	}
	words, err := d.Words(nw)
	if err != nil {
		return nil, fmt.Errorf("choices: %w", err)
	}
	if err := d.End(); err != nil {
		return nil, fmt.Errorf("choices: %w", err)
	}
	if !bitvec.Vec(words).TailClear(m) {
		return nil, bad("bits set beyond m = %d", m)
	}
	ix, err := hashing.NewIndexer(scheme, m, int(k))
	if err != nil {
		return nil, bad("%v", err)
	}
	return &Filter{
		bits: words, m: m, k: int(k), c: int(c), seed: d.Header.Seed, scheme: scheme, ix: ix,
		n: n, rounds: rounds, capacity: capacity, rng: rng,
	}, nil
}

// MarshalBinary returns f in the bloomlab file format.
func (f *Filter) MarshalBinary() ([]byte, error) { return format.Marshal(f, len(f.bits)*8+128) }

// UnmarshalBinary replaces f with the filter encoded in data, which must
// hold exactly one file. On error f is unchanged.
func (f *Filter) UnmarshalBinary(data []byte) error {
	g, err := format.Unmarshal(data, "choices", decode)
	if err == nil {
		*f = *g
	}
	return err
}
