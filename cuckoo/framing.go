package cuckoo

import (
	"fmt"
	"io"

	"github.com/bloomlab/bloomlab/internal/blrd"
)

// A RedisBloom dump in a file (the "redisbloom" export of the command):
// the CF.SCANDUMP chunks in the BLRD framing of package internal/blrd
// (docs/CUCKOO.md), each record the argument pair of one CF.LOADCHUNK.

// framePiece is the most bytes ReadRedisBloom buffers at a time.
const framePiece = 1 << 20

// WriteRedisBloom writes f's CF.SCANDUMP chunks (of at most chunkSize
// bytes; 0: DefaultChunkSize) framed, and returns the number of bytes
// written. Unlike CF.SCANDUMP it dumps a filter holding no keys too. Only
// RedisBloom-profile filters have this format.
func (f *Filter) WriteRedisBloom(w io.Writer, chunkSize int) (int64, error) {
	if chunkSize <= 0 {
		chunkSize = DefaultChunkSize
	}
	if chunkSize > blrd.MaxChunk {
		return 0, fmt.Errorf("cuckoo: chunk size %d exceeds %d: %w", chunkSize, blrd.MaxChunk, ErrParam)
	}
	if err := f.checkRedis(); err != nil {
		return 0, err
	}
	fw := blrd.NewWriter(w)
	fw.Record(1, f.appendHeader(nil))
	for it := int64(1); fw.Err() == nil; {
		next, data := f.chunkAt(it, chunkSize)
		if data == nil {
			break
		}
		fw.Record(next, data)
		it = next
	}
	return fw.Close()
}

// ReadRedisBloom reads a framed RedisBloom dump and returns the filter,
// reading exactly the file's bytes. It validates the header before
// allocating, allocates a sub-filter's bytes only as they arrive (at most
// 1 MiB is buffered), insists on SCANDUMP's order with every byte present
// (Loader), and checks the trailing CRC before returning. Errors wrap
// format.ErrFormat (truncation also io.ErrUnexpectedEOF).
func ReadRedisBloom(r io.Reader) (*Filter, error) {
	fr, err := blrd.NewReader(r, "cuckoo")
	if err != nil {
		return nil, err
	}
	var ld Loader
	var buf []byte
	for {
		iter, n, end, err := fr.Next()
		switch {
		case err != nil:
			return nil, err
		case end:
			return ld.Filter()
		case ld.f == nil:
			if n != headerSize {
				return nil, badDump("header record of %d bytes, want %d", n, headerSize)
			}
			hdr := make([]byte, n)
			if err := fr.ReadData(hdr); err != nil {
				return nil, err
			}
			if err := ld.LoadChunk(iter, hdr); err != nil {
				return nil, err
			}
			continue
		}
		// A data record: check its whole span as CF.LOADCHUNK would, then
		// take it a piece at a time.
		if err := ld.Check(iter, int(n)); err != nil {
			return nil, err
		}
		if buf == nil {
			buf = make([]byte, framePiece)
		}
		for left := uint64(n); left > 0; {
			p := buf[:min(left, framePiece)]
			if err := fr.ReadData(p); err != nil {
				return nil, err
			}
			left -= uint64(len(p))
			if err := ld.LoadChunk(int64(ld.done+uint64(len(p)))+1, p); err != nil {
				return nil, err
			}
		}
	}
}
