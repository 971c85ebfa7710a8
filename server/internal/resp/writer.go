package resp

import (
	"bufio"
	"io"
	"strconv"
)

// Writer writes replies in RESP2 or RESP3 (Proto).
type Writer struct {
	bw    *bufio.Writer
	under io.Writer
	Proto int // 2 or 3
	// Shortest formats doubles as Redis 8 does (the shortest text that
	// reads back as the same double), not as Redis 7.0 (%.17g).
	Shortest bool
	num      []byte
}

// NewWriter returns a RESP2 Writer over w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{bw: bufio.NewWriterSize(w, 16<<10), under: w, Proto: 2}
}

// Holder is a Writer's destination that can keep a large payload by
// reference, to send it from where it lies (BulkHeld) instead of copying
// it: Hold reports whether it took p.
type Holder interface {
	Hold(p []byte) bool
}

// Buffered returns the number of bytes written but not yet flushed.
func (w *Writer) Buffered() int { return w.bw.Buffered() }

// Flush sends what was written.
func (w *Writer) Flush() error { return w.bw.Flush() }

func (w *Writer) head(c byte, n int64) {
	w.bw.WriteByte(c)
	w.num = strconv.AppendInt(w.num[:0], n, 10)
	w.bw.Write(w.num)
	w.bw.WriteString("\r\n")
}

// Simple writes a simple string (+OK).
func (w *Writer) Simple(s string) {
	w.bw.WriteByte('+')
	w.bw.WriteString(s)
	w.bw.WriteString("\r\n")
}

// Error writes an error reply; s is the whole text after '-', its code
// included ("ERR unknown command", "WRONGTYPE …").
func (w *Writer) Error(s string) {
	w.bw.WriteByte('-')
	w.bw.WriteString(s)
	w.bw.WriteString("\r\n")
}

// Int writes an integer.
func (w *Writer) Int(n int64) {
	if 0 <= n && n < int64(len(smallInts)) {
		w.bw.WriteString(smallInts[n]) // BF.EXISTS's 0 and 1, counts
		return
	}
	w.head(':', n)
}

var smallInts = [...]string{":0\r\n", ":1\r\n", ":2\r\n", ":3\r\n", ":4\r\n", ":5\r\n", ":6\r\n", ":7\r\n", ":8\r\n", ":9\r\n"}

// Bulk writes a bulk string.
func (w *Writer) Bulk(b []byte) {
	w.head('$', int64(len(b)))
	w.bw.Write(b)
	w.bw.WriteString("\r\n")
}

// BulkHeld writes a bulk string whose bytes the destination may keep by
// reference until it sends them (if it is a Holder that takes them): b
// must not change until then. It reports whether b was kept; if not, b
// was copied, as by Bulk, and is the caller's again.
func (w *Writer) BulkHeld(b []byte) bool {
	w.head('$', int64(len(b)))
	if h, ok := w.under.(Holder); ok && len(b) > w.bw.Available() {
		w.bw.Flush() // what came before, into the destination: b goes after it
		if h.Hold(b) {
			w.bw.WriteString("\r\n")
			return true
		}
	}
	w.bw.Write(b)
	w.bw.WriteString("\r\n")
	return false
}

// BulkString writes a bulk string.
func (w *Writer) BulkString(s string) {
	w.head('$', int64(len(s)))
	w.bw.WriteString(s)
	w.bw.WriteString("\r\n")
}

// Null writes a null (RESP2: the null bulk string $-1).
func (w *Writer) Null() {
	if w.Proto >= 3 {
		w.bw.WriteString("_\r\n")
		return
	}
	w.bw.WriteString("$-1\r\n")
}

// NullArray writes a null array (RESP2: *-1).
func (w *Writer) NullArray() {
	if w.Proto >= 3 {
		w.bw.WriteString("_\r\n")
		return
	}
	w.bw.WriteString("*-1\r\n")
}

// Array starts an array of n elements.
func (w *Writer) Array(n int) { w.head('*', int64(n)) }

// Push starts a push of n elements (RESP2: an array), as pub/sub
// messages and subscription replies.
func (w *Writer) Push(n int) {
	if w.Proto >= 3 {
		w.head('>', int64(n))
		return
	}
	w.Array(n)
}

// Raw writes b, whole replies already encoded.
func (w *Writer) Raw(b []byte) { w.bw.Write(b) }

// Set starts a set of n elements (RESP2: an array).
func (w *Writer) Set(n int) {
	if w.Proto >= 3 {
		w.head('~', int64(n))
		return
	}
	w.Array(n)
}

// Map starts a map of n pairs (RESP2: an array of 2n elements).
func (w *Writer) Map(n int) {
	if w.Proto >= 3 {
		w.head('%', int64(n))
		return
	}
	w.Array(2 * n)
}

// Bool writes a boolean (RESP2: the integer 1 or 0).
func (w *Writer) Bool(b bool) {
	if w.Proto >= 3 {
		if b {
			w.bw.WriteString("#t\r\n")
		} else {
			w.bw.WriteString("#f\r\n")
		}
		return
	}
	if b {
		w.Int(1)
	} else {
		w.Int(0)
	}
}

// Double writes a floating-point number (RESP2: a bulk string), in
// Redis 8's shortest form when Shortest is set, else Redis 7.0's %.17g
// (AppendDouble).
func (w *Writer) Double(f float64) {
	var buf [40]byte
	b := AppendDouble(buf[:0], f, w.Shortest)
	if w.Proto >= 3 {
		w.bw.WriteByte(',')
		w.bw.Write(b)
		w.bw.WriteString("\r\n")
		return
	}
	w.Bulk(b)
}

// Verbatim writes a verbatim string of format "txt" (RESP2: a bulk string),
// as INFO replies under RESP3.
func (w *Writer) Verbatim(s string) {
	if w.Proto >= 3 {
		w.head('=', int64(len(s)+4))
		w.bw.WriteString("txt:")
		w.bw.WriteString(s)
		w.bw.WriteString("\r\n")
		return
	}
	w.BulkString(s)
}
