package topk

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"

	"github.com/bloomlab/bloomlab/hashing"
)

// The encoding (WriteTo, ReadFrom), little-endian:
//
//	"BLTOPK\x00\x01"                      magic and version
//	k, width, depth uint32; decay float64; seed, generator state uint64
//	width·depth buckets: fingerprint, count uint32
//	k heap slots: flag uint8 (0 empty, 1 an item), fingerprint, count,
//	              item length uint32, item bytes
//	CRC-32 (IEEE) of everything before it
//
// ReadFrom checks every field before it allocates for it: the parameters
// as New checks them, then the buckets and items are read in chunks, so
// that what it allocates never runs far ahead of the bytes that arrive;
// a heap slot's fingerprint must be its item's, its item at most
// MaxItemLen bytes, an empty slot all zero, and the checksum right. (The heap's
// order is not checked: RedisBloom restores it downwards only, so a
// decayed count can sit below its parent's in a sketch it made.)

const magic = "BLTOPK\x00\x01"

// MaxItemLen is the longest item an encoding may hold (Redis's largest
// bulk string, 512 MiB).
const MaxItemLen = 512 << 20

const headerLen = 8 + 12 + 8 + 16

type countWriter struct {
	w   io.Writer
	n   int64
	crc uint32
	err error
}

func (c *countWriter) write(b []byte) {
	if c.err != nil {
		return
	}
	c.crc = crc32.Update(c.crc, crc32.IEEETable, b)
	n, err := c.w.Write(b)
	c.n += int64(n)
	c.err = err
}

// WriteTo writes the sketch's encoding to w.
func (s *Sketch) WriteTo(w io.Writer) (int64, error) {
	if len(s.heap) == 0 {
		return 0, fmt.Errorf("topk: WriteTo of a zero Sketch (make one with New or ReadFrom): %w", ErrParam)
	}
	cw := &countWriter{w: w}
	var hdr [headerLen]byte
	copy(hdr[:], magic)
	binary.LittleEndian.PutUint32(hdr[8:], s.cfg.K)
	binary.LittleEndian.PutUint32(hdr[12:], s.cfg.Width)
	binary.LittleEndian.PutUint32(hdr[16:], s.cfg.Depth)
	binary.LittleEndian.PutUint64(hdr[20:], math.Float64bits(s.cfg.Decay))
	binary.LittleEndian.PutUint64(hdr[28:], s.cfg.Seed)
	binary.LittleEndian.PutUint64(hdr[36:], s.rng)
	cw.write(hdr[:])
	buf := make([]byte, 0, 8<<10)
	for _, b := range s.data {
		buf = binary.LittleEndian.AppendUint32(buf, b.fp)
		buf = binary.LittleEndian.AppendUint32(buf, b.count)
		if len(buf) >= 8<<10 {
			cw.write(buf)
			buf = buf[:0]
		}
	}
	cw.write(buf)
	for _, h := range s.heap {
		var sl [13]byte
		if h.full {
			sl[0] = 1
		}
		binary.LittleEndian.PutUint32(sl[1:], h.fp)
		binary.LittleEndian.PutUint32(sl[5:], h.count)
		binary.LittleEndian.PutUint32(sl[9:], uint32(len(h.item)))
		cw.write(sl[:])
		cw.write(h.item)
	}
	var sum [4]byte
	binary.LittleEndian.PutUint32(sum[:], cw.crc)
	cw.write(sum[:])
	return cw.n, cw.err
}

type countReader struct {
	r   io.Reader
	n   int64
	crc uint32
}

func (c *countReader) read(b []byte) error {
	n, err := io.ReadFull(c.r, b)
	c.n += int64(n)
	c.crc = crc32.Update(c.crc, crc32.IEEETable, b[:n])
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// readChunked reads n bytes, growing its buffer at most 1 MiB ahead of
// what arrived.
func (c *countReader) readChunked(n int) ([]byte, error) {
	const chunk = 1 << 20
	out := make([]byte, 0, min(n, chunk))
	for len(out) < n {
		m := min(n-len(out), chunk)
		if cap(out)-len(out) < m {
			grown := make([]byte, len(out), min(n, 2*cap(out)+m))
			copy(grown, out)
			out = grown
		}
		if err := c.read(out[len(out) : len(out)+m]); err != nil {
			return nil, err
		}
		out = out[:len(out)+m]
	}
	return out, nil
}

// ReadFrom replaces s with the sketch read from r (one encoding, exactly).
// On error s is unchanged and the error wraps ErrFormat (or is r's).
func (s *Sketch) ReadFrom(r io.Reader) (int64, error) {
	cr := &countReader{r: r}
	t, err := decode(cr)
	if err != nil {
		return cr.n, err
	}
	*s = *t
	return cr.n, nil
}

func decode(cr *countReader) (*Sketch, error) {
	bad := func(msg string, args ...any) error {
		return fmt.Errorf("topk: "+msg+": %w", append(args, ErrFormat)...)
	}
	var hdr [headerLen]byte
	if err := cr.read(hdr[:]); err != nil {
		return nil, bad("header: %v", err)
	}
	if string(hdr[:8]) != magic {
		return nil, bad("not a topk encoding (magic %q)", hdr[:8])
	}
	cfg := Config{
		K:     binary.LittleEndian.Uint32(hdr[8:]),
		Width: binary.LittleEndian.Uint32(hdr[12:]),
		Depth: binary.LittleEndian.Uint32(hdr[16:]),
		Decay: math.Float64frombits(binary.LittleEndian.Uint64(hdr[20:])),
		Seed:  binary.LittleEndian.Uint64(hdr[28:]),
	}
	if err := check(cfg); err != nil || cfg.Seed == 0 {
		return nil, bad("parameters k %d, width %d, depth %d, decay %v, seed %d", cfg.K, cfg.Width, cfg.Depth, cfg.Decay, cfg.Seed)
	}
	s := &Sketch{cfg: cfg, rng: binary.LittleEndian.Uint64(hdr[36:])}
	s.init()
	nb := int(uint64(cfg.Width) * uint64(cfg.Depth))
	raw, err := cr.readChunked(nb * 8)
	if err != nil {
		return nil, bad("buckets: %v", err)
	}
	s.data = make([]bucket, nb)
	for i := range s.data {
		s.data[i] = bucket{binary.LittleEndian.Uint32(raw[8*i:]), binary.LittleEndian.Uint32(raw[8*i+4:])}
	}
	raw = nil
	heap := make([]slot, 0, min(int(cfg.K), 1<<12))
	for i := 0; i < int(cfg.K); i++ {
		var sl [13]byte
		if err := cr.read(sl[:]); err != nil {
			return nil, bad("heap slot %d: %v", i, err)
		}
		h := slot{fp: binary.LittleEndian.Uint32(sl[1:]), count: binary.LittleEndian.Uint32(sl[5:])}
		n := binary.LittleEndian.Uint32(sl[9:])
		switch sl[0] {
		case 0:
			if h.fp != 0 || h.count != 0 || n != 0 {
				return nil, bad("empty heap slot %d holds fingerprint %d, count %d, length %d", i, h.fp, h.count, n)
			}
		case 1:
			if n > MaxItemLen {
				return nil, bad("heap slot %d: item of %d bytes, beyond %d", i, n, MaxItemLen)
			}
			item, err := cr.readChunked(int(n))
			if err != nil {
				return nil, bad("heap slot %d: %v", i, err)
			}
			if hashing.MurmurHash2(item, fpSeed) != h.fp {
				return nil, bad("heap slot %d: fingerprint %#x is not its item's", i, h.fp)
			}
			h.item, h.full = item, true
			s.itemCap += int64(cap(item))
		default:
			return nil, bad("heap slot %d: flag %d", i, sl[0])
		}
		heap = append(heap, h)
	}
	s.heap = heap
	want := cr.crc
	var sum [4]byte
	if err := cr.read(sum[:]); err != nil {
		return nil, bad("checksum: %v", err)
	}
	if binary.LittleEndian.Uint32(sum[:]) != want {
		return nil, bad("checksum mismatch")
	}
	return s, nil
}
