package scalable

import (
	"io"

	"github.com/bloomlab/bloomlab/internal/blrd"
)

// A RedisBloom dump in a file (the "redisbloom" export of the command;
// docs/SCALABLE.md): the BF.SCANDUMP chunks, each exactly the (iterator,
// data) pair BF.LOADCHUNK takes, in the framing of package internal/blrd
// (shared with package cuckoo's CF dumps). All integers little-endian:
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
	frameMagic = blrd.Magic
	// maxFrameChunk bounds a record's length (512 MiB).
	maxFrameChunk = blrd.MaxChunk
)

// WriteRedisBloom writes f's BF.SCANDUMP chunks (of at most chunkSize
// bytes; 0: 16 MiB, as RedisBloom) in the framing above, taken in one
// consistent state, and returns the number of bytes written. Only
// RedisBloom-profile chains have this format.
func (f *Filter) WriteRedisBloom(w io.Writer, chunkSize int) (int64, error) {
	chunkSize, err := blrd.ChunkSize("scalable", chunkSize)
	if err != nil {
		return 0, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	ls, err := f.checkRedis()
	if err != nil {
		return 0, err
	}
	return blrd.WriteFile(w, nil, f.appendHeader(nil, ls), func(it int64) (int64, []byte) { return scanLinks(nil, ls, it, chunkSize) })
}

// ReadRedisBloom reads a RedisBloom dump in the framing above and returns
// the filter, reading exactly the file's bytes. It validates the header
// chunk before allocating links, allocates a link's bits only as they
// arrive (at most 1 MiB is buffered), insists on SCANDUMP's order with
// every byte present, and checks the trailing CRC before returning.
// Errors wrap format.ErrFormat (truncation also io.ErrUnexpectedEOF).
func ReadRedisBloom(r io.Reader) (*Filter, error) {
	var ld Loader
	blrd.BodyOf(&ld.Session).redisOnly = true
	trailer, err := blrd.ReadFile(r, "scalable", &ld, func(n uint32) error {
		if n > headerFixed+headerLink*maxLinks {
			return badDump("header record of %d bytes", n)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(trailer) != 0 {
		// Version 2's trailer carries what a dump's chunks lack;
		// BF.SCANDUMP's header records everything.
		return nil, badDump("a trailer of %d bytes after the chunks; a BF dump has none", len(trailer))
	}
	return ld.Filter()
}
