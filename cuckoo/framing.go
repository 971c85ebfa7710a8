package cuckoo

import (
	"encoding/binary"
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

// WriteRedisBloom writes f's CF.SCANDUMP chunks (of at most chunkSize
// bytes; 0: RedisBloom's 16 MiB) framed, with its capacity in the trailer
// when it knows it, and returns the number of bytes written. Unlike
// CF.SCANDUMP it dumps a filter holding no keys too. Only
// RedisBloom-profile filters have this format.
func (f *Filter) WriteRedisBloom(w io.Writer, chunkSize int) (int64, error) {
	chunkSize, err := blrd.ChunkSize("cuckoo", chunkSize)
	if err != nil {
		return 0, err
	}
	if err := f.checkRedis(); err != nil {
		return 0, err
	}
	var trailer []byte
	if f.capacity != 0 {
		trailer = binary.LittleEndian.AppendUint64(nil, f.capacity)
	}
	return blrd.WriteFile(w, trailer, f.appendHeader(nil), func(it int64) (int64, []byte) { return f.chunkAt(it, chunkSize) })
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
func readRedisBloom(r io.Reader) (*Filter, error) {
	var ld Loader
	trailer, err := blrd.ReadFile(r, "cuckoo", &ld, func(n uint32) error {
		if n != headerSize {
			return badDump("header record of %d bytes, want %d", n, headerSize)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return withTrailer(&ld, trailer)
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
	if f := blrd.BodyOf(&ld.Session).f; f != nil && t != nil {
		// f is the header's filter, whose first sub-filter has m0
		// buckets of b bytes.
		if slots := (f.m0 + 1) * uint64(f.lay.b); capacity == 0 || capacity >= slots {
			return nil, badDump("capacity %d for %d buckets of %d (want 1 … %d)", capacity, f.m0, f.lay.b, slots-1)
		}
	}
	f, err := ld.Filter()
	if err != nil {
		return nil, err
	}
	f.capacity = capacity
	return f, nil
}
