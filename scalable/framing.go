package scalable

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/bloomlab/bloomlab/internal/format"
)

// A RedisBloom dump in a file (the "redisbloom" export of the command;
// docs/SCALABLE.md): the BF.SCANDUMP chunks, each exactly the (iterator,
// data) pair BF.LOADCHUNK takes, framed so that the file can be checked
// and streamed. All integers little-endian:
//
//	offset size field
//	0      4    magic "BLRD"
//	4      2    version 1
//	6      2    flags, 0
//	8      …    records: iterator (int64), length L (uint32), L bytes
//	            (at most 512 MiB, Redis's default proto-max-bulk-len);
//	            the first is the header (iterator 1), then the data
//	            chunks in SCANDUMP order
//	…      12   end record: iterator 0, length 0
//	…      4    CRC-32C (Castagnoli) of every byte before it
//
// To load a file into Redis, send BF.LOADCHUNK key iterator data for every
// record before the end record, in order.

const (
	frameMagic   = "BLRD"
	frameVersion = 1
	// MaxFrameChunk bounds a record's length.
	MaxFrameChunk = 512 << 20
	framePiece    = 1 << 20 // bytes read at a time
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// crcWriter counts and checksums what it writes.
type crcWriter struct {
	w   io.Writer
	crc uint32
	n   int64
	err error
}

func (c *crcWriter) write(p []byte) {
	if c.err != nil {
		return
	}
	c.crc = crc32.Update(c.crc, castagnoli, p)
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
}

func (c *crcWriter) record(iter int64, data []byte) {
	var h [12]byte
	binary.LittleEndian.PutUint64(h[:], uint64(iter))
	binary.LittleEndian.PutUint32(h[8:], uint32(len(data)))
	c.write(h[:])
	c.write(data)
}

// WriteRedisBloom writes f's BF.SCANDUMP chunks (of at most chunkSize
// bytes; 0: DefaultChunkSize) in the framing above, taken in one
// consistent state, and returns the number of bytes written. Only
// RedisBloom-profile chains have this format.
func (f *Filter) WriteRedisBloom(w io.Writer, chunkSize int) (int64, error) {
	if chunkSize <= 0 {
		chunkSize = DefaultChunkSize
	}
	if chunkSize > MaxFrameChunk {
		return 0, fmt.Errorf("scalable: chunk size %d exceeds %d: %w", chunkSize, MaxFrameChunk, ErrParam)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	ls, err := f.checkRedis()
	if err != nil {
		return 0, err
	}
	c := &crcWriter{w: w}
	var h [8]byte
	copy(h[:], frameMagic)
	binary.LittleEndian.PutUint16(h[4:], frameVersion)
	c.write(h[:])
	c.record(1, f.appendHeader(nil, ls))
	for it := int64(1); c.err == nil; {
		next, data := scanLinks(ls, it, chunkSize)
		if next == 0 {
			break
		}
		c.record(next, data)
		it = next
	}
	c.record(0, nil)
	var t [4]byte
	binary.LittleEndian.PutUint32(t[:], c.crc)
	if c.err == nil {
		n, err := w.Write(t[:])
		c.n += int64(n)
		c.err = err
	}
	return c.n, c.err
}

// crcReader reads exactly what is asked and checksums it.
type crcReader struct {
	r   io.Reader
	crc uint32
	n   int64
}

func (c *crcReader) read(p []byte, what string) error {
	n, err := io.ReadFull(c.r, p)
	c.n += int64(n)
	c.crc = crc32.Update(c.crc, castagnoli, p[:n])
	if err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return badDump("truncated %s after %d bytes: %w", what, c.n, io.ErrUnexpectedEOF)
		}
		return fmt.Errorf("scalable: reading %s: %w", what, err)
	}
	return nil
}

// ReadRedisBloom reads a RedisBloom dump in the framing above and returns
// the filter, reading exactly the file's bytes. It validates the header
// chunk before allocating links, allocates a link's bits only as they
// arrive (at most 1 MiB is buffered), insists on SCANDUMP's order with
// every byte present, and checks the trailing CRC before returning.
// Errors wrap format.ErrFormat (truncation also io.ErrUnexpectedEOF).
func ReadRedisBloom(r io.Reader) (*Filter, error) {
	c := &crcReader{r: r}
	var h [8]byte
	if err := c.read(h[:], "magic"); err != nil {
		return nil, err
	}
	switch {
	case string(h[:4]) != frameMagic:
		return nil, badDump("bad magic %q, not a bloomlab RedisBloom dump", h[:4])
	case binary.LittleEndian.Uint16(h[4:]) != frameVersion:
		return nil, fmt.Errorf("scalable: RedisBloom dump version %d (this build reads %d): %w", binary.LittleEndian.Uint16(h[4:]), frameVersion, format.ErrVersion)
	case binary.LittleEndian.Uint16(h[6:]) != 0:
		return nil, badDump("flags %#x, want 0", binary.LittleEndian.Uint16(h[6:]))
	}
	var ld Loader
	var buf []byte
	for {
		var rh [12]byte
		if err := c.read(rh[:], "record"); err != nil {
			return nil, err
		}
		iter, n := int64(binary.LittleEndian.Uint64(rh[:])), binary.LittleEndian.Uint32(rh[8:])
		switch {
		case iter == 0 && n == 0:
			sum := c.crc
			var t [4]byte
			if err := c.read(t[:], "checksum"); err != nil {
				return nil, err
			}
			if got := binary.LittleEndian.Uint32(t[:]); got != sum {
				return nil, fmt.Errorf("scalable: RedisBloom dump checksum %08x, computed %08x: %w", got, sum, format.ErrChecksum)
			}
			return ld.Filter()
		case n > MaxFrameChunk:
			return nil, badDump("record of %d bytes exceeds %d", n, MaxFrameChunk)
		case ld.f == nil:
			if n > headerFixed+headerLink*MaxLinks {
				return nil, badDump("header record of %d bytes", n)
			}
			hdr := make([]byte, n)
			if err := c.read(hdr, "header"); err != nil {
				return nil, err
			}
			if err := ld.LoadChunk(iter, hdr); err != nil {
				return nil, err
			}
			continue
		}
		// A data record: check its whole span as BF.LOADCHUNK would, then
		// take it a piece at a time.
		if err := ld.span(iter, uint64(n)); err != nil {
			return nil, err
		}
		if buf == nil {
			buf = make([]byte, framePiece)
		}
		for left := uint64(n); left > 0; {
			p := buf[:min(left, framePiece)]
			if err := c.read(p, "chunk"); err != nil {
				return nil, err
			}
			left -= uint64(len(p))
			if err := ld.LoadChunk(int64(ld.done+uint64(len(p)))+1, p); err != nil {
				return nil, err
			}
		}
	}
}

// span checks that a chunk of n bytes with iterator iter is the next one
// and lies within one link.
func (ld *Loader) span(iter int64, n uint64) error {
	if ld.err != nil {
		return ld.err
	}
	if iter < 1 || uint64(iter)-1 < n {
		ld.err = badDump("iterator %d with %d bytes", iter, n)
	} else if start := uint64(iter) - 1 - n; start != ld.done {
		ld.err = badDump("chunk for bytes %d … %d, expected byte %d next (chunks must come in SCANDUMP order)", start, start+n, ld.done)
	} else if ld.li >= len(ld.ls) {
		ld.err = badDump("%d bytes beyond the %d the header announces", n, ld.total)
	} else if left := ld.ls[ld.li].bits/8 - ld.loff; n > left {
		ld.err = badDump("chunk of %d bytes crosses the end of link %d (%d bytes left in it)", n, ld.li, left)
	}
	return ld.err
}
