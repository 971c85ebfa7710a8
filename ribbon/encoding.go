package ribbon

import (
	"fmt"
	"io"

	"github.com/bloomlab/bloomlab/internal/format"
)

// File layout (docs/FORMAT.md): the common header with kind 12 (ribbon),
// scheme 0 and the key hash's seed (hashing.Sum64); a 33-byte parameter
// block
//
//	offset size field
//	0      8    n, the number of distinct keys (≤ slots)
//	8      8    capacity: the number of keys the filter was planned for
//	            (informational)
//	16     8    shards, ≥ 1
//	24     8    blocks of 128 slots, ≥ shards, < 2^48
//	32     1    r, the result bits: 1 … 32
//
// and a payload of shards + 1 + (blocks + 1)·2r little-endian words: the
// shard table (word i: shard i's first block in the low 48 bits, its
// attempt number, below MaxAttempts, in the high 16; the first shard
// starts at block 0, each has at least one block, and word shards is the
// number of blocks), then the blocks (block b's result column j is the
// 128 bits of words 2(b·r+j) and 2(b·r+j)+1, slot b·128+p its bit p) and
// one zero block; then the CRC-32C trailer.

// WriteTo writes f in the bloomlab file format. On the zero Filter it
// returns an error wrapping ErrParam.
func (f *Filter) WriteTo(w io.Writer) (int64, error) {
	if f.shards == 0 {
		return 0, zero.Err("WriteTo")
	}
	var p format.Params
	p.U64(f.n)
	p.U64(f.capacity)
	p.U64(f.shards)
	p.U64(f.meta[f.shards])
	p.U8(uint8(f.r))
	e := format.NewEncoder(w)
	e.Begin(format.Header{Kind: format.KindRibbon, Seed: f.cfg.Seed, PayloadLen: uint64(len(f.meta)+len(f.data)) * 8}, p.Bytes())
	// Words writes each word little-endian, whatever the machine: the
	// blocks are logical words (the query shifts and masks them), so a file
	// is the same bytes on every machine.
	e.Words(f.meta)
	e.Words(f.data)
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

// decode reads one ribbon filter from d, checking every parameter before
// it allocates, and the shard table and the zero block after.
func decode(d *format.Decoder) (*Filter, error) {
	params, err := d.Begin(format.KindRibbon)
	if err != nil {
		return nil, fmt.Errorf("ribbon: %w", err)
	}
	pr := format.NewParamReader(params)
	n, capacity, shards, blocks := pr.U64(), pr.U64(), pr.U64(), pr.U64()
	r := pr.U8()
	if err := pr.Err(); err != nil {
		return nil, fmt.Errorf("ribbon: %w", err)
	}
	bad := func(msg string, args ...any) error {
		return fmt.Errorf("ribbon: "+msg+": %w", append(args, format.ErrFormat)...)
	}
	switch {
	case d.Header.Scheme != 0:
		return nil, bad("scheme %d, want 0", d.Header.Scheme)
	case r < 1 || r > 32:
		return nil, bad("%d result bits, want 1 … 32", r)
	case shards < 1 || blocks < shards || blocks >= 1<<offBits:
		return nil, bad("%d shards in %d blocks", shards, blocks)
	case n > blocks*128:
		return nil, bad("%d keys in %d slots", n, blocks*128)
	}
	metaWords := shards + 1
	dataWords := (blocks + 1) * 2 * uint64(r) // < 2^48·64: no overflow
	words := metaWords + dataWords
	if words < metaWords || d.Header.PayloadLen/8 != words || d.Header.PayloadLen%8 != 0 {
		return nil, bad("payload of %d bytes, %d shards and %d blocks of %d bits need %d words", d.Header.PayloadLen, shards, blocks, r, words)
	}
	payload, err := d.Words(words)
	if err != nil {
		return nil, fmt.Errorf("ribbon: %w", err)
	}
	if err := d.End(); err != nil {
		return nil, fmt.Errorf("ribbon: %w", err)
	}
	meta, data := payload[:metaWords:metaWords], payload[metaWords:]
	prev := uint64(0)
	for i, m := range meta[:shards] {
		off, a := m&offMask, m>>offBits
		switch {
		case i == 0 && off != 0:
			return nil, bad("the first shard starts at block %d", off)
		case i > 0 && off <= prev:
			return nil, bad("shard %d starts at block %d, after %d", i, off, prev)
		case a >= MaxAttempts:
			return nil, bad("shard %d: attempt %d", i, a)
		}
		prev = off
	}
	if meta[shards] != blocks || blocks <= prev {
		return nil, bad("the shard table ends at %d, want %d blocks after the last shard's start %d", meta[shards], blocks, prev)
	}
	for _, w := range data[blocks*2*uint64(r):] {
		if w != 0 {
			return nil, bad("the block after the last is not zero")
		}
	}
	c := Config{ResultBits: int(r), Seed: d.Header.Seed}
	return &Filter{cfg: c, r: uint32(r), meta: meta, data: data, shards: shards, n: n, capacity: capacity}, nil
}

// MarshalBinary returns f in the bloomlab file format.
func (f *Filter) MarshalBinary() ([]byte, error) {
	return format.Marshal(f, (len(f.meta)+len(f.data))*8+128)
}

// UnmarshalBinary replaces f with the filter in data, which must hold
// exactly one file. On error f is unchanged.
func (f *Filter) UnmarshalBinary(data []byte) error {
	g, err := format.Unmarshal(data, "ribbon", decode)
	if err == nil {
		*f = *g
	}
	return err
}

// Equal reports whether f and g are the same filter: the same
// configuration, counts, shard table and blocks.
func (f *Filter) Equal(g *Filter) bool {
	if f.cfg != g.cfg || f.r != g.r || f.shards != g.shards || f.n != g.n || f.capacity != g.capacity ||
		len(f.meta) != len(g.meta) || len(f.data) != len(g.data) {
		return f.shards == 0 && g.shards == 0
	}
	for i := range f.meta {
		if f.meta[i] != g.meta[i] {
			return false
		}
	}
	for i := range f.data {
		if f.data[i] != g.data[i] {
			return false
		}
	}
	return true
}
