package scalable

import (
	"fmt"
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
	// MaxFrameChunk bounds a record's length.
	MaxFrameChunk = blrd.MaxChunk
	framePiece    = 1 << 20 // bytes read at a time
)

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
	fw := blrd.NewWriter(w)
	fw.Record(1, f.appendHeader(nil, ls))
	for it := int64(1); fw.Err() == nil; {
		next, data := scanLinks(ls, it, chunkSize)
		if next == 0 {
			break
		}
		fw.Record(next, data)
		it = next
	}
	return fw.Close()
}

// ReadRedisBloom reads a RedisBloom dump in the framing above and returns
// the filter, reading exactly the file's bytes. It validates the header
// chunk before allocating links, allocates a link's bits only as they
// arrive (at most 1 MiB is buffered), insists on SCANDUMP's order with
// every byte present, and checks the trailing CRC before returning.
// Errors wrap format.ErrFormat (truncation also io.ErrUnexpectedEOF).
func ReadRedisBloom(r io.Reader) (*Filter, error) {
	fr, err := blrd.NewReader(r, "scalable")
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
			if t := fr.Trailer(); len(t) != 0 {
				// Version 2's trailer carries what a dump's chunks lack;
				// BF.SCANDUMP's header records everything.
				return nil, badDump("a trailer of %d bytes after the chunks; a BF dump has none", len(t))
			}
			return ld.Filter()
		case ld.f == nil:
			if n > headerFixed+headerLink*MaxLinks {
				return nil, badDump("header record of %d bytes", n)
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
