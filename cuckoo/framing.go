package cuckoo

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/bloomlab/bloomlab/internal/blrd"
)

// A RedisBloom dump in a file (the "redisbloom" export of the command):
// the CF.SCANDUMP chunks in the BLRD framing of package internal/blrd
// (docs/CUCKOO.md), each record the argument pair of one CF.LOADCHUNK.
// CF.SCANDUMP's header does not record the design capacity (CF.RESERVE's
// capacity, Capacity): a filter that knows it is written in version 2,
// whose trailer holds it (8 bytes, little-endian); one that does not (it
// came from chunks) in version 1, without a trailer.

// trailerSize is the length of the version-2 trailer: the capacity.
const trailerSize = 8

// framePiece is the most bytes ReadRedisBloom buffers at a time.
const framePiece = 1 << 20

// WriteRedisBloom writes f's CF.SCANDUMP chunks (of at most chunkSize
// bytes; 0: DefaultChunkSize) framed, with its capacity in the trailer
// when it knows it, and returns the number of bytes written. Unlike
// CF.SCANDUMP it dumps a filter holding no keys too. Only
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
	var fw *blrd.Writer
	if f.capacity != 0 {
		fw = blrd.NewTrailerWriter(w, binary.LittleEndian.AppendUint64(nil, f.capacity))
	} else {
		fw = blrd.NewWriter(w)
	}
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
// (Loader), and checks the trailing CRC before returning. The capacity is
// the trailer's (version 2: at least 1 and below (buckets + 1) × bucket
// size, as in the bloomlab file), else unknown: Capacity then reports the
// slots, as after CF.LOADCHUNK. Errors wrap format.ErrFormat (truncation
// also io.ErrUnexpectedEOF).
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
			return withTrailer(&ld, fr.Trailer())
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

// withTrailer returns the filter ld loaded with the capacity of the
// trailer t (nil: version 1, none).
func withTrailer(ld *Loader, t []byte) (*Filter, error) {
	var capacity uint64
	if t != nil {
		if len(t) != trailerSize {
			return nil, badDump("trailer of %d bytes, want %d (the capacity)", len(t), trailerSize)
		}
		capacity = binary.LittleEndian.Uint64(t)
	}
	if ld.f != nil && t != nil {
		// ld.f is the header's filter, whose first sub-filter has m0
		// buckets of b bytes.
		if slots := (ld.f.m0 + 1) * uint64(ld.f.lay.b); capacity == 0 || capacity >= slots {
			return nil, badDump("capacity %d for %d buckets of %d (want 1 … %d)", capacity, ld.f.m0, ld.f.lay.b, slots-1)
		}
	}
	f, err := ld.Filter()
	if err != nil {
		return nil, err
	}
	f.capacity = capacity
	return f, nil
}
