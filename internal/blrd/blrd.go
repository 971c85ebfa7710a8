// Package blrd is RedisBloom's dump, once for every kind that has one
// (BF.SCANDUMP and BF.LOADCHUNK of package scalable's redisbloom profile,
// CF.SCANDUMP and CF.LOADCHUNK of package cuckoo's): the chunk type
// (Chunk), the loader contract the kinds implement and the server and the
// command use (Loader), its mechanics with the allocation policy (Core, on
// a kind's Body), and the dump in a file.
//
// In a file, the chunks, each exactly the (iterator, data) pair of one
// LOADCHUNK, are framed so that the file can be checked and streamed (the
// "redisbloom" export of the command; docs/SCALABLE.md, docs/CUCKOO.md).
// All integers little-endian:
//
//	offset size field
//	0      4    magic "BLRD"
//	4      2    version: 1, or 2 (a trailer follows the end record)
//	6      2    flags, 0
//	8      …    records: iterator (int64), length L (uint32), L bytes
//	            (at most MaxChunk, Redis's default proto-max-bulk-len);
//	            the first is the header (iterator 1), then the data
//	            chunks in SCANDUMP order
//	…      12   end record: iterator 0, length 0
//	…      4+T  version 2 only: the trailer's length T (uint32, at most
//	            MaxTrailer), then T bytes: what the dump's chunks do not
//	            carry, defined by the package that owns the dump (cuckoo:
//	            the design capacity)
//	…      4    CRC-32C (Castagnoli) of every byte before it
//
// Version 1 is written when there is no trailer, so that older readers
// read it; a reader of this package reads both. A loader that stops at the
// end record (the redis-py loaders of docs/SCALABLE.md) reads a version-2
// file as it reads a version-1 one.
//
// The packages that own a dump format (scalable, cuckoo) validate the
// records and the trailer; this package only frames them. A Reader reads
// exactly the file's bytes, bounds every record's and the trailer's
// length before the caller allocates for it, and verifies the checksum
// before it reports the end.
package blrd

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/bloomlab/bloomlab/internal/format"
)

const (
	// Magic is the first four bytes of a framed dump.
	Magic = "BLRD"
	// Version is the newest framing version: 2, which has a trailer.
	// Version 1 (no trailer) is written when there is none.
	Version = 2
	// MaxChunk bounds a record's length (512 MiB).
	MaxChunk = 512 << 20
	// MaxTrailer bounds the trailer's length.
	MaxTrailer = 4096
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Writer writes a framed dump: NewWriter (or NewTrailerWriter), Record
// for each chunk, Close.
type Writer struct {
	w       io.Writer
	crc     uint32
	n       int64
	err     error
	trailer []byte // version 2: written by Close
	v2      bool
}

// NewWriter writes the magic, version 1 and flags to w: a dump without a
// trailer.
func NewWriter(w io.Writer) *Writer { return newWriter(w, nil, false) }

// NewTrailerWriter writes the magic, version 2 and flags to w: a dump
// whose Close writes trailer (at most MaxTrailer bytes, else Close fails)
// after the end record.
func NewTrailerWriter(w io.Writer, trailer []byte) *Writer { return newWriter(w, trailer, true) }

func newWriter(w io.Writer, trailer []byte, v2 bool) *Writer {
	fw := &Writer{w: w, trailer: trailer, v2: v2}
	if len(trailer) > MaxTrailer {
		fw.err = fmt.Errorf("blrd: trailer of %d bytes exceeds %d", len(trailer), MaxTrailer)
	}
	var h [8]byte
	copy(h[:], Magic)
	binary.LittleEndian.PutUint16(h[4:], 1)
	if v2 {
		binary.LittleEndian.PutUint16(h[4:], 2)
	}
	fw.write(h[:])
	return fw
}

func (w *Writer) write(p []byte) {
	if w.err != nil {
		return
	}
	w.crc = crc32.Update(w.crc, castagnoli, p)
	n, err := w.w.Write(p)
	w.n += int64(n)
	w.err = err
}

// Record writes one chunk.
func (w *Writer) Record(iter int64, data []byte) {
	if w.err == nil && len(data) > MaxChunk {
		w.err = fmt.Errorf("blrd: chunk of %d bytes exceeds %d", len(data), MaxChunk)
	}
	var h [12]byte
	binary.LittleEndian.PutUint64(h[:], uint64(iter))
	binary.LittleEndian.PutUint32(h[8:], uint32(len(data)))
	w.write(h[:])
	w.write(data)
}

// Err returns the first error so far.
func (w *Writer) Err() error { return w.err }

// Close writes the end record, the trailer (version 2) and the checksum,
// and returns the bytes written and the first error.
func (w *Writer) Close() (int64, error) {
	w.Record(0, nil)
	if w.v2 {
		w.write(binary.LittleEndian.AppendUint32(nil, uint32(len(w.trailer))))
		w.write(w.trailer)
	}
	var t [4]byte
	binary.LittleEndian.PutUint32(t[:], w.crc)
	if w.err == nil {
		n, err := w.w.Write(t[:])
		w.n += int64(n)
		w.err = err
	}
	return w.n, w.err
}

// FirstRecordLen returns the length of the first record (the dump's
// header chunk) of a framed dump whose first bytes are prefix, and false
// if prefix is not the start of a framed dump or is too short (20
// bytes are needed). BF.SCANDUMP's header is 20 + 53·L bytes, CF.SCANDUMP's
// 38: the kinds sharing the framing tell their dumps apart by it.
func FirstRecordLen(prefix []byte) (uint32, bool) {
	if len(prefix) < 20 || string(prefix[:4]) != Magic || binary.LittleEndian.Uint64(prefix[8:]) != 1 {
		return 0, false
	}
	return binary.LittleEndian.Uint32(prefix[16:]), true
}

// Reader reads a framed dump: NewReader, then Next for each record, whose
// bytes are read with ReadData before the next call to Next.
type Reader struct {
	r       io.Reader
	crc     uint32
	n       int64
	pkg     string
	left    uint64 // bytes of the current record not read yet
	version uint16
	trailer []byte
}

// NewReader reads and checks the magic, version and flags. pkg prefixes
// the errors ("scalable", "cuckoo"); every error about the bytes wraps
// format.ErrFormat (truncation also io.ErrUnexpectedEOF, a wrong version
// format.ErrVersion).
func NewReader(r io.Reader, pkg string) (*Reader, error) {
	fr := &Reader{r: r, pkg: pkg}
	var h [8]byte
	if err := fr.read(h[:], "magic"); err != nil {
		return nil, err
	}
	switch {
	case string(h[:4]) != Magic:
		return nil, fr.bad("bad magic %q, not a bloomlab RedisBloom dump", h[:4])
	case binary.LittleEndian.Uint16(h[4:]) < 1 || binary.LittleEndian.Uint16(h[4:]) > Version:
		return nil, fmt.Errorf("%s: RedisBloom dump version %d (this build reads 1 … %d): %w", pkg, binary.LittleEndian.Uint16(h[4:]), Version, format.ErrVersion)
	case binary.LittleEndian.Uint16(h[6:]) != 0:
		return nil, fr.bad("flags %#x, want 0", binary.LittleEndian.Uint16(h[6:]))
	}
	fr.version = binary.LittleEndian.Uint16(h[4:])
	return fr, nil
}

// Version returns the dump's framing version: 1, or 2 (with a trailer).
func (r *Reader) Version() int { return int(r.version) }

// Trailer returns the trailer of a version-2 dump once Next has reported
// the end (empty if it has none), and nil for version 1.
func (r *Reader) Trailer() []byte { return r.trailer }

func (r *Reader) bad(msg string, args ...any) error {
	return fmt.Errorf("%s: RedisBloom dump: "+msg+": %w", append([]any{r.pkg}, append(args, format.ErrFormat)...)...)
}

func (r *Reader) read(p []byte, what string) error {
	n, err := io.ReadFull(r.r, p)
	r.n += int64(n)
	r.crc = crc32.Update(r.crc, castagnoli, p[:n])
	if err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return r.bad("truncated %s after %d bytes: %w", what, r.n, io.ErrUnexpectedEOF)
		}
		return fmt.Errorf("%s: reading %s: %w", r.pkg, what, err)
	}
	return nil
}

// Next reads the next record's iterator and length (at most MaxChunk).
// At the end record it reads and verifies the checksum and reports end.
// The previous record's bytes must all have been read.
func (r *Reader) Next() (iter int64, n uint32, end bool, err error) {
	if r.left != 0 {
		return 0, 0, false, fmt.Errorf("%s: blrd: %d bytes of the previous record not read", r.pkg, r.left)
	}
	var h [12]byte
	if err := r.read(h[:], "record"); err != nil {
		return 0, 0, false, err
	}
	iter, n = int64(binary.LittleEndian.Uint64(h[:])), binary.LittleEndian.Uint32(h[8:])
	switch {
	case iter == 0 && n == 0:
		if r.version >= 2 {
			var l [4]byte
			if err := r.read(l[:], "trailer length"); err != nil {
				return 0, 0, false, err
			}
			tl := binary.LittleEndian.Uint32(l[:])
			if tl > MaxTrailer {
				return 0, 0, false, r.bad("trailer of %d bytes exceeds %d", tl, MaxTrailer)
			}
			r.trailer = make([]byte, tl)
			if err := r.read(r.trailer, "trailer"); err != nil {
				return 0, 0, false, err
			}
		}
		sum := r.crc
		var t [4]byte
		if err := r.read(t[:], "checksum"); err != nil {
			return 0, 0, false, err
		}
		if got := binary.LittleEndian.Uint32(t[:]); got != sum {
			return 0, 0, false, fmt.Errorf("%s: RedisBloom dump checksum %08x, computed %08x: %w", r.pkg, got, sum, format.ErrChecksum)
		}
		return 0, 0, true, nil
	case n > MaxChunk:
		return 0, 0, false, r.bad("record of %d bytes exceeds %d", n, MaxChunk)
	}
	r.left = uint64(n)
	return iter, n, false, nil
}

// ReadData reads the next len(p) bytes of the current record.
func (r *Reader) ReadData(p []byte) error {
	if uint64(len(p)) > r.left {
		return fmt.Errorf("%s: blrd: reading %d bytes of a record with %d left", r.pkg, len(p), r.left)
	}
	r.left -= uint64(len(p))
	return r.read(p, "chunk")
}

// N returns the bytes read so far.
func (r *Reader) N() int64 { return r.n }
