package blrd

import (
	"fmt"
	"io"

	"github.com/bloomlab/bloomlab/internal/base"
	"github.com/bloomlab/bloomlab/internal/kind"
)

// A kind's side of SCANDUMP is a ScanFunc: the data chunk for iterator
// it ≥ 1 and the iterator that follows it (it + len(data)), or a next
// iterator of 0 past the end.
type ScanFunc = func(it int64) (next int64, data []byte)

// ChunkSize returns the chunk size a dump of package pkg is written with:
// chunkSize, or DefaultChunkSize for 0 or less; above MaxChunk it is an
// error wrapping base.ErrParam.
func ChunkSize(pkg string, chunkSize int) (int, error) {
	if chunkSize <= 0 {
		return DefaultChunkSize, nil
	}
	if chunkSize > MaxChunk {
		return 0, fmt.Errorf("%s: chunk size %d exceeds %d: %w", pkg, chunkSize, MaxChunk, base.ErrParam)
	}
	return chunkSize, nil
}

// Dump returns a whole dump: (1, hdr), then the data chunks scan gives
// from iterator 1 on, whose data it keeps (scan returns fresh bytes). The
// terminating reply is not included.
func Dump(hdr []byte, scan ScanFunc) []Chunk {
	chunks := []Chunk{{Iter: 1, Data: hdr}}
	for it := int64(1); ; {
		next, data := scan(it)
		if next == 0 {
			return chunks
		}
		chunks = append(chunks, Chunk{Iter: next, Data: data})
		it = next
	}
}

// WriteFile writes a dump framed (version 1; version 2 when trailer is
// not nil, with the trailer after the end record): the header hdr, then
// the data chunks scan gives from iterator 1 on (scan's data are written
// before the next call, and may be the filter's own memory). It returns
// the bytes written.
func WriteFile(w io.Writer, trailer, hdr []byte, scan ScanFunc) (int64, error) {
	var fw *Writer
	if trailer != nil {
		fw = NewTrailerWriter(w, trailer)
	} else {
		fw = NewWriter(w)
	}
	fw.Record(1, hdr)
	for it := int64(1); fw.Err() == nil; {
		next, data := scan(it)
		if next == 0 {
			break
		}
		fw.Record(next, data)
		it = next
	}
	return fw.Close()
}

// filePiece is the most bytes ReadFile buffers at a time.
const filePiece = 1 << 20

// ReadFile reads a framed dump of package pkg into ld, reading exactly
// the file's bytes: the first record is the header, whose length
// header(n) accepts or refuses before it is read; each other record is
// checked whole as LOADCHUNK would take it (ld.Check), then taken a piece
// of at most 1 MiB at a time. At the end record it verifies the checksum
// and returns the trailer (nil for version 1); the caller then finishes
// ld. Errors wrap format.ErrFormat (truncation also io.ErrUnexpectedEOF).
func ReadFile(r io.Reader, pkg string, ld Loader, header func(n uint32) error) ([]byte, error) {
	fr, err := NewReader(r, pkg)
	if err != nil {
		return nil, err
	}
	var buf []byte
	for first := true; ; first = false {
		iter, n, end, err := fr.Next()
		switch {
		case err != nil:
			return nil, err
		case end:
			return fr.Trailer(), nil
		case first:
			if err := header(n); err != nil {
				return nil, err
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
		if err := ld.Check(iter, int(n)); err != nil {
			return nil, err
		}
		if buf == nil {
			buf = make([]byte, filePiece)
		}
		for left := uint64(n); left > 0; {
			p := buf[:min(left, filePiece)]
			if err := fr.ReadData(p); err != nil {
				return nil, err
			}
			left -= uint64(len(p))
			got, _ := ld.Progress()
			if err := ld.LoadChunk(int64(got+uint64(len(p)))+1, p); err != nil {
				return nil, err
			}
		}
	}
}

// Export is the "redisbloom" export (kind.Export) of a kind whose filters
// F have a RedisBloom dump: Write takes an F (another kind's filter is an
// error of package pkg wrapping base.ErrParam: "cannot export a … as a
// what") and writes it framed, Read reads one (read: the kind's
// ReadRedisBloom), and Detect tells the kind's dumps by the length of
// their header record (header: BF.SCANDUMP's is 20 + 53·L bytes,
// CF.SCANDUMP's 38).
func Export[F interface {
	kind.Filter
	WriteRedisBloom(w io.Writer, chunkSize int) (int64, error)
}](pkg, what, summary string, read func(io.Reader) (F, error), header func(n uint32) bool) kind.Export {
	return kind.Export{
		Name:    "redisbloom",
		Summary: summary,
		Write: func(f kind.Filter, w io.Writer) error {
			g, ok := f.(F)
			if !ok {
				return fmt.Errorf("%s: cannot export a %s as a %s: %w", pkg, f.Kind(), what, base.ErrParam)
			}
			_, err := g.WriteRedisBloom(w, 0)
			return err
		},
		Read: func(r io.Reader) (kind.Filter, error) {
			f, err := read(r)
			if err != nil {
				return nil, err
			}
			return f, nil
		},
		Detect: func(prefix []byte) bool {
			n, ok := FirstRecordLen(prefix)
			return ok && header(n)
		},
	}
}
