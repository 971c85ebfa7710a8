package rdb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// enc appends RDB encodings to a buffer.
type enc struct {
	buf      []byte
	compress bool
}

func (e *enc) byte(b byte) { e.buf = append(e.buf, b) }

func (e *enc) length(n uint64) {
	switch {
	case n < 1<<6:
		e.buf = append(e.buf, byte(n))
	case n < 1<<14:
		e.buf = append(e.buf, byte(n>>8)|0x40, byte(n))
	case n <= math.MaxUint32:
		e.buf = append(e.buf, 0x80)
		e.buf = binary.BigEndian.AppendUint32(e.buf, uint32(n))
	default:
		e.buf = append(e.buf, 0x81)
		e.buf = binary.BigEndian.AppendUint64(e.buf, n)
	}
}

// string writes s as Redis does: a short decimal integer that reads back
// the same as an integer encoding, a string over 20 bytes LZF-compressed
// when compression is on and saves at least 4 bytes, else raw.
func (e *enc) string(s []byte) { e.buf = append(e.buf, e.stringHead(s)...) }

// stringHead appends the encoding of s that string writes, less its
// trailing bytes (s itself, or its compressed bytes), which it returns.
func (e *enc) stringHead(s []byte) []byte {
	if len(s) <= 11 && len(s) > 0 {
		if v, err := strconv.ParseInt(string(s), 10, 64); err == nil && strconv.FormatInt(v, 10) == string(s) {
			switch {
			case v >= math.MinInt8 && v <= math.MaxInt8:
				e.buf = append(e.buf, 0xC0|encInt8, byte(v))
				return nil
			case v >= math.MinInt16 && v <= math.MaxInt16:
				e.buf = append(e.buf, 0xC0|encInt16)
				e.buf = binary.LittleEndian.AppendUint16(e.buf, uint16(v))
				return nil
			case v >= math.MinInt32 && v <= math.MaxInt32:
				e.buf = append(e.buf, 0xC0|encInt32)
				e.buf = binary.LittleEndian.AppendUint32(e.buf, uint32(v))
				return nil
			}
		}
	}
	if e.compress && len(s) > 20 {
		if c := LZFCompress(s, len(s)-4); c != nil {
			e.buf = append(e.buf, 0xC0|encLZF)
			e.length(uint64(len(c)))
			e.length(uint64(len(s)))
			return c
		}
	}
	e.length(uint64(len(s)))
	return s
}

// Writer writes an RDB file: the header, then whatever the caller writes
// (AUX fields, SELECTDB, RESIZEDB, keys), then, on Close, the EOF opcode
// and the CRC-64 of everything before it. Errors are sticky: the first one
// is returned by every later call and by Close.
type Writer struct {
	e       enc
	w       io.Writer
	crc     uint64
	err     error
	version int
	module  *ModuleWriter // open module value
	closed  bool
}

// NewWriter writes the header of an RDB file of the given version (10 to
// 12) to w. Compress says whether strings are LZF-compressed where it
// saves space (Redis's rdbcompression, on by default in Redis).
func NewWriter(w io.Writer, version int, compress bool) (*Writer, error) {
	if version < MinVersion || version > MaxVersion {
		return nil, fmt.Errorf("rdb: cannot write RDB version %d (%d to %d)", version, MinVersion, MaxVersion)
	}
	wr := &Writer{w: w, version: version, e: enc{compress: compress}}
	wr.e.buf = fmt.Appendf(wr.e.buf, "REDIS%04d", version)
	return wr, nil
}

// flush writes the buffer out once it is large.
func (w *Writer) flush(force bool) error {
	if w.err != nil {
		return w.err
	}
	if !force && len(w.e.buf) < 64<<10 {
		return nil
	}
	w.crc = crcUpdate(w.crc, w.e.buf)
	if _, err := w.w.Write(w.e.buf); err != nil {
		w.err = err
		return err
	}
	w.e.buf = w.e.buf[:0]
	return nil
}

// bigWrite is the size from which write hands bytes to the underlying
// writer directly instead of copying them into the buffer.
const bigWrite = 64 << 10

// write writes p after what the buffer holds: through the buffer when
// small, else directly (after flushing the buffer).
func (w *Writer) write(p []byte) error {
	if w.err != nil {
		return w.err
	}
	if len(p) < bigWrite {
		w.e.buf = append(w.e.buf, p...)
		return w.flush(false)
	}
	if err := w.flush(true); err != nil {
		return err
	}
	w.crc = crcUpdate(w.crc, p)
	if _, err := w.w.Write(p); err != nil {
		w.err = err
		return err
	}
	return nil
}

func (w *Writer) ready() error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return errors.New("rdb: write after Close")
	}
	if w.module != nil {
		return errors.New("rdb: a module value is still open (call its End)")
	}
	return nil
}

// Aux writes an AUX field.
func (w *Writer) Aux(key, value string) error {
	if err := w.ready(); err != nil {
		return err
	}
	w.e.byte(opAux)
	w.e.string([]byte(key))
	w.e.string([]byte(value))
	return w.flush(false)
}

// SelectDB writes a SELECTDB opcode.
func (w *Writer) SelectDB(db uint64) error {
	if err := w.ready(); err != nil {
		return err
	}
	w.e.byte(opSelectDB)
	w.e.length(db)
	return w.flush(false)
}

// ResizeDB writes a RESIZEDB hint: the number of keys of the database and
// how many of them have an expiry.
func (w *Writer) ResizeDB(keys, expires uint64) error {
	if err := w.ready(); err != nil {
		return err
	}
	w.e.byte(opResizeDB)
	w.e.length(keys)
	w.e.length(expires)
	return w.flush(false)
}

// Expire writes an expiry (absolute Unix time in milliseconds) for the
// key written next.
func (w *Writer) Expire(ms int64) error {
	if err := w.ready(); err != nil {
		return err
	}
	w.e.byte(opExpireMs)
	w.e.buf = binary.LittleEndian.AppendUint64(w.e.buf, uint64(ms))
	return w.flush(false)
}

// String writes a string key.
func (w *Writer) String(key, value []byte) error {
	if err := w.ready(); err != nil {
		return err
	}
	w.e.byte(TypeString)
	w.e.string(key)
	w.e.string(value)
	return w.flush(false)
}

// Module starts a module value of the type name and encoding version for
// key; the caller writes its fields and calls End before anything else.
func (w *Writer) Module(key []byte, name string, encver int) (*ModuleWriter, error) {
	if err := w.ready(); err != nil {
		return nil, err
	}
	id, err := ModuleID(name, encver)
	if err != nil {
		return nil, err
	}
	w.e.byte(TypeModule2)
	w.e.string(key)
	w.e.length(id)
	w.module = &ModuleWriter{e: &w.e, w: w, done: func() error { w.module = nil; return w.flush(false) }}
	return w.module, nil
}

// Close writes the EOF opcode and the CRC-64, and flushes. It does not
// close the underlying writer.
func (w *Writer) Close() error {
	if err := w.ready(); err != nil {
		return err
	}
	w.e.byte(opEOF)
	w.crc = crcUpdate(w.crc, w.e.buf)
	w.e.buf = binary.LittleEndian.AppendUint64(w.e.buf, w.crc)
	w.closed = true
	if _, err := w.w.Write(w.e.buf); err != nil {
		w.err = err
		return err
	}
	w.e.buf = w.e.buf[:0]
	return nil
}

// ModuleWriter writes the opcode-tagged fields of one module value; it
// must not be used after End.
type ModuleWriter struct {
	e    *enc
	w    *Writer // the file's Writer; nil for a DUMP payload
	err  error   // a StringFunc's error, which End returns
	done func() error
}

// Unsigned writes an unsigned integer field.
func (m *ModuleWriter) Unsigned(v uint64) { m.e.length(modUint); m.e.length(v) }

// Signed writes a signed integer field as Redis's RM_SaveSigned does: an
// unsigned field holding its 64 bits (Redis's RM_LoadSigned refuses the
// signed opcode, which rdb.h defines but Redis never writes).
func (m *ModuleWriter) Signed(v int64) { m.e.length(modUint); m.e.length(uint64(v)) }

// Float writes a float field.
func (m *ModuleWriter) Float(v float32) {
	m.e.length(modFloat)
	m.e.buf = binary.LittleEndian.AppendUint32(m.e.buf, math.Float32bits(v))
}

// Double writes a double field.
func (m *ModuleWriter) Double(v float64) {
	m.e.length(modDouble)
	m.e.buf = binary.LittleEndian.AppendUint64(m.e.buf, math.Float64bits(v))
}

// String writes a string field.
func (m *ModuleWriter) String(s []byte) { m.e.length(modString); m.e.string(s) }

// End writes the value's EOF opcode. It returns the error of a
// StringFunc that failed, if one did (the value is then not usable).
func (m *ModuleWriter) End() error {
	if m.err != nil {
		if m.done != nil {
			m.done()
		}
		return m.err
	}
	m.e.length(modEOF)
	if m.done != nil {
		return m.done()
	}
	return nil
}
