package rdb

import (
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
)

// PieceSize is the most bytes ReadStringTo hands on at once.
const PieceSize = 1 << 20

// ReadStringTo reads a string field piece by piece, so that a string of
// any size costs the reader about a MiB: size (which may be nil) is called
// once with the string's length before anything is allocated for it, then
// piece with its bytes in order (each at most PieceSize bytes; p is valid
// only during the call, and the pieces together are what ReadString
// returns; none for an empty string). Either callback's error stops the
// read and is returned.
//
// The length is checked first against Limits.MaxString and, where
// Limits.InputSize is known, against what is left of the input (for an
// LZF-compressed string: its compressed length, and its length against
// what that can expand to), so that size is not called with a length the
// input cannot hold. A plain string is then read through one buffer of
// at most PieceSize bytes; an LZF-compressed one is read 64 KiB at a time
// and decompressed through a window of PieceSize bytes and the 8 KiB
// before them (as far back as an LZF reference reaches), every reference
// checked; one that does not decode to exactly its announced length is a
// *FormatError, possibly after some pieces were handed on.
func (m *ModuleValue) ReadStringTo(size func(n int64) error, piece func(p []byte) error) error {
	if err := m.expect(modString); err != nil {
		return err
	}
	return m.in.readStringTo(size, piece)
}

// readStringTo is ReadStringTo for a string in any of its encodings.
func (in *input) readStringTo(size func(n int64) error, piece func(p []byte) error) error {
	if size == nil {
		size = func(int64) error { return nil }
	}
	n, enc, err := in.readLen()
	if err != nil {
		return err
	}
	if !enc {
		if n > uint64(in.maxStr) {
			return in.fail("string of %d bytes is over the limit (%d)", n, in.maxStr)
		}
		if in.size > 0 && n > uint64(in.size-in.off) {
			return in.fail("string of %d bytes with %d bytes left in the input", n, in.size-in.off)
		}
		if err := size(int64(n)); err != nil {
			return err
		}
		return in.copyTo(int64(n), piece)
	}
	switch n {
	case encInt8, encInt16, encInt32:
		var p [4]byte
		if err := in.readFull(p[:1<<n]); err != nil {
			return err
		}
		var v int64
		switch n {
		case encInt8:
			v = int64(int8(p[0]))
		case encInt16:
			v = int64(int16(binary.LittleEndian.Uint16(p[:])))
		default:
			v = int64(int32(binary.LittleEndian.Uint32(p[:])))
		}
		var buf [20]byte
		s := strconv.AppendInt(buf[:0], v, 10)
		if err := size(int64(len(s))); err != nil {
			return err
		}
		return piece(s)
	case encLZF:
		clen, err := in.readPlainLen()
		if err != nil {
			return err
		}
		ulen, err := in.readPlainLen()
		if err != nil {
			return err
		}
		if clen > uint64(in.maxStr) || ulen > uint64(in.maxStr) {
			return in.fail("compressed string of %d bytes (%d compressed) is over the limit (%d)", ulen, clen, in.maxStr)
		}
		if clen == 0 || ulen > clen*lzfMaxRatio {
			return in.fail("compressed string of %d bytes cannot expand to %d", clen, ulen)
		}
		if in.size > 0 && clen > uint64(in.size-in.off) {
			return in.fail("compressed string of %d bytes with %d bytes left in the input", clen, in.size-in.off)
		}
		in.lzf++
		if err := size(int64(ulen)); err != nil {
			return err
		}
		return in.lzfTo(int64(clen), int64(ulen), piece)
	}
	return in.fail("unknown string encoding %d", n)
}

// copyTo hands on the next n bytes of the input in pieces.
func (in *input) copyTo(n int64, piece func(p []byte) error) error {
	if n == 0 {
		return nil
	}
	buf := make([]byte, min(n, PieceSize))
	for n > 0 {
		p := buf[:min(n, PieceSize)]
		if err := in.readFull(p); err != nil {
			return err
		}
		if err := piece(p); err != nil {
			return err
		}
		n -= int64(len(p))
	}
	return nil
}

// lzfChunk is how much compressed input lzfTo holds at once.
const lzfChunk = 64 << 10

// lzfTo decompresses the next clen bytes of the input, which must give
// exactly ulen bytes, handing them on in pieces. The output goes through
// a window of the last lzfHist bytes handed on (what a reference can
// reach) and at most PieceSize pending ones; the input is read lzfChunk
// bytes at a time, an instruction never split.
func (in *input) lzfTo(clen, ulen int64, piece func(p []byte) error) error {
	win := make([]byte, min(ulen, lzfHist+PieceSize))
	cb := make([]byte, min(clen, lzfChunk))
	ci, cn := 0, 0 // unread compressed bytes: cb[ci:cn]
	crem := clen   // compressed bytes not yet read from the input
	pos, start := 0, 0
	var total int64 // bytes decoded
	bad := func(why string) error {
		return in.fail("invalid LZF-compressed string: %s at output byte %d of %d", why, total, ulen)
	}
	for {
		// Hold a whole instruction, unless the input ends first.
		if cn-ci < lzfMaxIns && crem > 0 {
			cn = copy(cb, cb[ci:cn])
			ci = 0
			k := int(min(int64(len(cb)-cn), crem))
			if err := in.readFull(cb[cn : cn+k]); err != nil {
				return err
			}
			cn += k
			crem -= int64(k)
		}
		if ci == cn {
			break
		}
		// Room for the instruction's output: hand on what is pending
		// when it could pass PieceSize, and slide the window, keeping
		// lzfHist bytes, when its end is near.
		need := int(min(lzfMaxOut, ulen-total))
		if len(win)-pos < need || pos-start > PieceSize-need {
			if pos > start {
				if err := piece(win[start:pos]); err != nil {
					return err
				}
			}
			if len(win)-pos < need {
				pos = copy(win, win[pos-lzfHist:pos])
			}
			start = pos
		}
		ctrl := int(cb[ci])
		ci++
		if ctrl < 32 { // a literal run of ctrl+1 bytes
			run := ctrl + 1
			if run > cn-ci {
				return bad("a literal run past the input's end")
			}
			if run > need {
				return bad("a literal run past the announced length")
			}
			copy(win[pos:pos+run], cb[ci:ci+run])
			ci += run
			pos += run
			total += int64(run)
			continue
		}
		length := ctrl >> 5
		if length == 7 {
			if ci >= cn {
				return bad("input ending inside a back reference")
			}
			length += int(cb[ci])
			ci++
		}
		if ci >= cn {
			return bad("input ending inside a back reference")
		}
		back := (ctrl&0x1f)<<8 | int(cb[ci])
		ci++
		length += 2
		if int64(back) >= total {
			return bad("a back reference before the start")
		}
		if length > need {
			return bad("a back reference past the announced length")
		}
		ref := pos - back - 1 // within the window: back < lzfHist
		if pos-ref >= length {
			copy(win[pos:pos+length], win[ref:ref+length])
		} else {
			// Overlapping (a repeated pattern): each copy doubles the
			// bytes copied, which stay a whole number of periods.
			for done := 0; done < length; {
				done += copy(win[pos+done:pos+length], win[ref:pos+done])
			}
		}
		pos += length
		total += int64(length)
	}
	if total != ulen {
		return bad(fmt.Sprintf("%d bytes short", ulen-total))
	}
	if pos > start {
		return piece(win[start:pos])
	}
	return nil
}

// streamOver is the length over which StringFunc streams a string to the
// file even with compression on (a variable for tests).
var streamOver int64 = 64 << 20

// gatherMax is the length up to which StringFunc gathers a string even
// with compression off (short ones may be integer-encoded).
const gatherMax = 64 << 10

// StringFunc writes a string field of exactly n bytes, which fill writes
// to w in order (in as many calls as it likes). Fill's error, or a count
// of bytes other than n (a Write past n fails), is returned; the value is
// then unusable: End returns the error too, and for a file the Writer's
// error is set (sticky), since part of the string may be written.
//
// For a file, a string over 64 MiB, or over 64 KiB with compression off,
// is written as its length and then its bytes as fill writes them,
// through the file's checksum, without a copy of the whole string (raw:
// where compression is on, Redis would have compressed it). A shorter one
// is gathered and written as String writes it, byte for byte what Redis
// writes. For a DUMP payload the string is appended the same way.
func (m *ModuleWriter) StringFunc(n int64, fill func(w io.Writer) error) error {
	if m.err != nil {
		return m.err
	}
	if m.w != nil && m.w.err != nil {
		return m.w.err
	}
	if n < 0 {
		return m.fail(fmt.Errorf("rdb: a string field of %d bytes", n))
	}
	if n > gatherMax && (!m.e.compress || n > streamOver) {
		m.e.length(modString)
		m.e.length(uint64(n))
		sw := &stringWriter{m: m, n: n, left: n}
		err := fill(sw)
		if err == nil && sw.given != n {
			err = fmt.Errorf("rdb: a string field announced as %d bytes was given %d", n, sw.given)
		}
		if err != nil {
			return m.fail(err)
		}
		return nil
	}
	b := make([]byte, 0, n)
	sw := &stringWriter{b: &b, n: n, left: n}
	err := fill(sw)
	if err == nil && sw.given != n {
		err = fmt.Errorf("rdb: a string field announced as %d bytes was given %d", n, sw.given)
	}
	if err != nil {
		return m.fail(err)
	}
	m.e.length(modString)
	tail := m.e.stringHead(b)
	if m.w != nil {
		if err := m.w.write(tail); err != nil {
			return m.fail(err)
		}
		return nil
	}
	m.e.buf = append(m.e.buf, tail...)
	return nil
}

// fail makes err the value's error and, for a file, the Writer's.
func (m *ModuleWriter) fail(err error) error {
	m.err = err
	if m.w != nil && m.w.err == nil {
		m.w.err = err
	}
	return err
}

// stringWriter takes StringFunc's bytes: into b when gathering, else to
// the file or payload; it refuses bytes past the announced length.
type stringWriter struct {
	m     *ModuleWriter
	b     *[]byte
	n     int64 // the announced length
	left  int64 // bytes still announced
	given int64 // bytes offered, refused ones included
}

func (s *stringWriter) Write(p []byte) (int, error) {
	s.given += int64(len(p))
	if int64(len(p)) > s.left {
		return 0, fmt.Errorf("rdb: a string field announced as %d bytes was given more", s.n)
	}
	switch {
	case s.b != nil:
		*s.b = append(*s.b, p...)
	case s.m.w != nil:
		if err := s.m.w.write(p); err != nil {
			return 0, err
		}
	default:
		s.m.e.buf = append(s.m.e.buf, p...)
	}
	s.left -= int64(len(p))
	return len(p), nil
}
