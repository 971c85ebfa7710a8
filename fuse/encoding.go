package fuse

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"

	"github.com/bloomlab/bloomlab/internal/format"
)

// File layout (docs/FORMAT.md): the common header with kind 11 (fuse),
// scheme 0 and the key hash's seed (hashing.Sum64); a 34-byte parameter
// block
//
//	offset size field
//	0      8    attempt seed: the seed the key's hash is re-mixed with
//	8      8    n, the number of distinct keys (≤ cells)
//	16     8    capacity: the number of keys the filter was planned for
//	            (informational)
//	24     4    cells, the array's length: a multiple of the segment
//	            length, at least arity segments
//	28     4    segment length: a power of two in [4, 2^18]
//	32     1    arity: 3 or 4
//	33     1    fingerprint bits: 8, 16 or 32
//
// and a payload of ⌈cells·bits/64⌉ words: the cells packed little-endian
// (cell i in bytes i·bits/8 … of the payload), the unused high bytes of
// the last word zero; then the CRC-32C trailer.

// bigEndian: the machine's byte order is not the file's, so the cells'
// memory (viewed through the words) is swapped word by word on reading
// and writing.
var bigEndian = binary.NativeEndian.Uint16([]byte{0, 1}) == 1

// WriteTo writes f in the bloomlab file format. On the zero Filter it
// returns an error wrapping ErrParam.
func (f *Filter) WriteTo(w io.Writer) (int64, error) {
	if f.shape == shapeZero {
		return 0, zero.Err("WriteTo")
	}
	var p format.Params
	p.U64(f.lay.seed)
	p.U64(f.n)
	p.U64(f.capacity)
	p.U32(f.lay.cells)
	p.U32(f.lay.segLen)
	p.U8(uint8(f.lay.arity))
	p.U8(uint8(f.lay.fingerBit))
	e := format.NewEncoder(w)
	e.Begin(format.Header{Kind: format.KindFuse, Seed: f.cfg.Seed, PayloadLen: uint64(len(f.words)) * 8}, p.Bytes())
	if !bigEndian {
		e.Words(f.words)
	} else {
		var buf [512]uint64
		for w := f.words; len(w) > 0; {
			c := copy(buf[:], w)
			for i := range buf[:c] {
				buf[i] = bits.ReverseBytes64(buf[i])
			}
			e.Words(buf[:c])
			w = w[c:]
		}
	}
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

// decode reads one fuse filter from d, checking every parameter before it
// allocates the cells.
func decode(d *format.Decoder) (*Filter, error) {
	params, err := d.Begin(format.KindFuse)
	if err != nil {
		return nil, fmt.Errorf("fuse: %w", err)
	}
	pr := format.NewParamReader(params)
	seed, n, capacity := pr.U64(), pr.U64(), pr.U64()
	cells, segLen := pr.U32(), pr.U32()
	arity, fbits := pr.U8(), pr.U8()
	if err := pr.Err(); err != nil {
		return nil, fmt.Errorf("fuse: %w", err)
	}
	bad := func(msg string, args ...any) error {
		return fmt.Errorf("fuse: "+msg+": %w", append(args, format.ErrFormat)...)
	}
	words := (uint64(cells)*uint64(fbits) + 63) / 64
	switch {
	case d.Header.Scheme != 0:
		return nil, bad("scheme %d, want 0", d.Header.Scheme)
	case arity != 3 && arity != 4:
		return nil, bad("arity %d, want 3 or 4", arity)
	case fbits != 8 && fbits != 16 && fbits != 32:
		return nil, bad("%d-bit fingerprints, want 8, 16 or 32", fbits)
	case segLen < 4 || segLen > 1<<18 || segLen&(segLen-1) != 0:
		return nil, bad("segment length %d, want a power of two in [4, 2^18]", segLen)
	case cells%segLen != 0 || cells/segLen < uint32(arity):
		return nil, bad("%d cells: want a multiple of the segment length %d, at least %d segments", cells, segLen, arity)
	case n > uint64(cells) || n > MaxKeys:
		return nil, bad("%d keys in %d cells", n, cells)
	case d.Header.PayloadLen != words*8:
		return nil, bad("payload of %d bytes, %d cells of %d bits need %d", d.Header.PayloadLen, cells, fbits, words*8)
	}
	payload, err := d.Words(words)
	if err != nil {
		return nil, fmt.Errorf("fuse: %w", err)
	}
	if err := d.End(); err != nil {
		return nil, fmt.Errorf("fuse: %w", err)
	}
	if bigEndian {
		for i := range payload {
			payload[i] = bits.ReverseBytes64(payload[i])
		}
	}
	if used := uint64(cells) * uint64(fbits) % 64; used != 0 {
		last := payload[len(payload)-1]
		if bigEndian {
			last = bits.ReverseBytes64(last)
		}
		if last>>used != 0 {
			return nil, bad("the unused bits of the last word are not zero")
		}
	}
	c := Config{Arity: int(arity), FingerprintBits: int(fbits), Seed: d.Header.Seed}
	l := layout{seed: seed, segLen: segLen, segMask: segLen - 1, cells: cells, arity: uint32(arity), fingerBit: uint32(fbits)}
	l.segCount = cells/segLen - (l.arity - 1)
	l.segCells = l.segCount * segLen
	f := &Filter{cfg: c, lay: l, n: n, capacity: capacity}
	f.attach(payload)
	return f, nil
}

// MarshalBinary returns f in the bloomlab file format.
func (f *Filter) MarshalBinary() ([]byte, error) { return format.Marshal(f, len(f.words)*8+128) }

// UnmarshalBinary replaces f with the filter in data, which must hold
// exactly one file. On error f is unchanged.
func (f *Filter) UnmarshalBinary(data []byte) error {
	g, err := format.Unmarshal(data, "fuse", decode)
	if err == nil {
		*f = *g
	}
	return err
}

// Equal reports whether f and g are the same filter: the same
// configuration, layout, counts and cells.
func (f *Filter) Equal(g *Filter) bool {
	if f.cfg != g.cfg || f.lay != g.lay || f.n != g.n || f.capacity != g.capacity || len(f.words) != len(g.words) {
		return f.shape == shapeZero && g.shape == shapeZero
	}
	for i := range f.words {
		if f.words[i] != g.words[i] {
			return false
		}
	}
	return true
}
