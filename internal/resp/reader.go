// Package resp reads and writes Redis's protocol (RESP2 and RESP3) for
// bloomlab's server: commands from clients (multibulk arrays and inline
// commands, as telnet and nc send them), replies to them in either protocol
// version, and, for tests and tools, replies read back as values.
//
// The command reader treats its input as hostile: every length is checked
// against Limits before it is believed, memory grows only as bytes arrive
// (a client announcing a 512 MB argument and sending 10 bytes costs 10
// bytes, not 512 MB), and malformed input returns a *ProtocolError whose
// text is what Redis answers ("Protocol error: invalid bulk length"), after
// which the connection must be closed. Nothing in it panics.
package resp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// Limits bound what one command may hold.
type Limits struct {
	// MaxArgs bounds the number of arguments of one command (default 1<<20).
	MaxArgs int
	// MaxBulk bounds one argument's length in bytes (default 512 MiB, as
	// Redis's proto-max-bulk-len).
	MaxBulk int64
	// MaxInline bounds an inline command's line (default 64 KiB, as Redis).
	MaxInline int
	// MaxCommand bounds the total bytes of one command's arguments
	// (default 1 GiB, as Redis's client-query-buffer-limit).
	MaxCommand int64
}

// DefaultLimits are Redis's defaults.
var DefaultLimits = Limits{MaxArgs: 1 << 20, MaxBulk: 512 << 20, MaxInline: 64 << 10, MaxCommand: 1 << 30}

func (l Limits) withDefaults() Limits {
	if l.MaxArgs <= 0 {
		l.MaxArgs = DefaultLimits.MaxArgs
	}
	if l.MaxBulk <= 0 {
		l.MaxBulk = DefaultLimits.MaxBulk
	}
	if l.MaxInline <= 0 {
		l.MaxInline = DefaultLimits.MaxInline
	}
	if l.MaxCommand <= 0 {
		l.MaxCommand = DefaultLimits.MaxCommand
	}
	return l
}

// ProtocolError is malformed input. Its text is Redis's reply after "ERR ";
// the server sends "-ERR " + Error() and closes the connection.
type ProtocolError struct{ Msg string }

func (e *ProtocolError) Error() string { return "Protocol error: " + e.Msg }

func protoErr(format string, args ...any) error {
	return &ProtocolError{Msg: fmt.Sprintf(format, args...)}
}

// Redis's limits for a client that has not authenticated (Reader.Unauthenticated).
const (
	unauthMaxArgs = 10
	unauthMaxBulk = 16384
)

// Reader reads commands.
type Reader struct {
	br   *bufio.Reader
	lim  Limits
	args [][]byte
	buf  []byte // the current command's argument bytes
	// Inline reports whether the last command was an inline one.
	Inline bool
	// Unauthenticated applies Redis's limits for a client that has not
	// authenticated (set it while a password is required and not given):
	// a multibulk of more than 10 arguments or a bulk of more than 16384
	// bytes is a *ProtocolError ("unauthenticated multibulk length",
	// "unauthenticated bulk length") as soon as its header arrives.
	// Inline commands are not limited further (as in Redis: their line
	// is at most MaxInline).
	Unauthenticated bool
}

// NewReader returns a Reader over r with the given limits (zero fields take
// the defaults).
func NewReader(r io.Reader, lim Limits) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 16<<10), lim: lim.withDefaults()}
}

// Buffered returns the number of bytes read from the connection but not yet
// consumed (a pipelined client's next commands).
func (r *Reader) Buffered() int { return r.br.Buffered() }

// ReadCommand returns the next command's arguments (at least one). The
// slices are valid until the next call. Empty lines and empty arrays are
// skipped, as Redis does. At the end of input it returns io.EOF (or
// io.ErrUnexpectedEOF in the middle of a command); malformed input returns
// a *ProtocolError.
func (r *Reader) ReadCommand() ([][]byte, error) {
	for {
		c, err := r.br.ReadByte()
		if err != nil {
			return nil, err
		}
		if c == '*' {
			args, err := r.readMultibulk()
			if err != nil || len(args) > 0 {
				return args, err
			}
			continue
		}
		r.br.UnreadByte()
		args, err := r.readInline()
		if err != nil || len(args) > 0 {
			return args, err
		}
	}
}

// readLine reads a line ending in "\r\n" (or "\n" for inline commands) of at
// most max bytes, without the terminator. The slice is valid until the
// next read. A line longer than max is an error as soon as more than max
// bytes have arrived without a newline (as Redis does), not when the
// newline comes.
func (r *Reader) readLine(max int, tooBig string) ([]byte, error) {
	var long []byte // the line so far, when it spans several buffers
	for {
		if r.br.Buffered() == 0 {
			if _, err := r.br.Peek(1); err != nil {
				if err == io.EOF && len(long) > 0 {
					return nil, io.ErrUnexpectedEOF
				}
				return nil, err
			}
		}
		buf, _ := r.br.Peek(r.br.Buffered())
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			if len(long)+i > max+1 {
				return nil, protoErr("%s", tooBig)
			}
			line := buf[:i+1]
			if long != nil {
				long = append(long, line...)
				line = long
			}
			r.br.Discard(i + 1)
			line = line[:len(line)-1]
			if n := len(line); n > 0 && line[n-1] == '\r' {
				line = line[:n-1]
			}
			return line, nil
		}
		if len(long)+len(buf) > max+1 {
			return nil, protoErr("%s", tooBig)
		}
		long = append(long, buf...)
		r.br.Discard(len(buf))
	}
}

// readCount reads the number after '*' or '$'.
func (r *Reader) readCount(tooBig string) (int64, error) {
	line, err := r.readLine(32, tooBig)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(string(line), 10, 64)
	if err != nil {
		return 0, errNumber
	}
	return n, nil
}

var errNumber = errors.New("not a number")

func (r *Reader) readMultibulk() ([][]byte, error) {
	n, err := r.readCount("too big mbulk count string")
	if err == errNumber || err == nil && n > math.MaxInt32 {
		return nil, protoErr("invalid multibulk length")
	}
	if err == nil && r.Unauthenticated && n > unauthMaxArgs {
		return nil, protoErr("unauthenticated multibulk length")
	}
	if err == nil && n > int64(r.lim.MaxArgs) {
		return nil, protoErr("invalid multibulk length")
	}
	if err != nil {
		return nil, eofInCommand(err)
	}
	if n <= 0 {
		return nil, nil
	}
	r.Inline = false
	r.buf = r.buf[:0]
	// Offsets into buf, turned into slices at the end (buf may move).
	offs := make([]int, 0, min(n, 1024)+1)
	for i := int64(0); i < n; i++ {
		c, err := r.br.ReadByte()
		if err != nil {
			return nil, eofInCommand(err)
		}
		if c != '$' {
			return nil, protoErr("expected '$', got '%c'", c)
		}
		size, err := r.readCount("too big bulk count string")
		if err == errNumber || err == nil && (size < 0 || size > r.lim.MaxBulk) {
			return nil, protoErr("invalid bulk length")
		}
		if err == nil && r.Unauthenticated && size > unauthMaxBulk {
			return nil, protoErr("unauthenticated bulk length")
		}
		if err != nil {
			return nil, eofInCommand(err)
		}
		if int64(len(r.buf))+size > r.lim.MaxCommand {
			return nil, protoErr("command of more than %d bytes", r.lim.MaxCommand)
		}
		offs = append(offs, len(r.buf))
		if err := r.readBulk(int(size)); err != nil {
			return nil, err
		}
	}
	offs = append(offs, len(r.buf))
	r.args = r.args[:0]
	for i := 0; i+1 < len(offs); i++ {
		r.args = append(r.args, r.buf[offs[i]:offs[i+1]:offs[i+1]])
	}
	return r.args, nil
}

// readBulk appends size bytes and the "\r\n" after them to r.buf (without
// the terminator), growing r.buf only as the bytes arrive.
func (r *Reader) readBulk(size int) error {
	for size > 0 {
		chunk := min(size, 64<<10)
		if cap(r.buf)-len(r.buf) < chunk {
			r.buf = append(r.buf[:len(r.buf):len(r.buf)], make([]byte, chunk)...)[:len(r.buf)]
		}
		start := len(r.buf)
		r.buf = r.buf[:start+chunk]
		if _, err := io.ReadFull(r.br, r.buf[start:]); err != nil {
			r.buf = r.buf[:start]
			return eofInCommand(err)
		}
		size -= chunk
	}
	var crlf [2]byte
	if _, err := io.ReadFull(r.br, crlf[:]); err != nil {
		return eofInCommand(err)
	}
	if crlf != [2]byte{'\r', '\n'} {
		return protoErr("expected CRLF after a bulk string")
	}
	return nil
}

func eofInCommand(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// readInline reads an inline command: arguments separated by spaces, with
// "double" (backslash escapes as Redis: \n \r \t \b \a \\ \" \xHH) and
// 'single' (only \' escaped) quotes.
func (r *Reader) readInline() ([][]byte, error) {
	line, err := r.readLine(r.lim.MaxInline, "too big inline request")
	if err != nil {
		return nil, err
	}
	r.Inline = true
	r.buf = append(r.buf[:0], line...)
	args, err := splitArgs(r.buf, r.args[:0])
	if err != nil {
		return nil, err
	}
	if len(args) > r.lim.MaxArgs {
		return nil, protoErr("invalid multibulk length")
	}
	r.args = args
	return args, nil
}

// splitArgs splits an inline line in place (unquoting rewrites line's own
// bytes, which only shrink).
func splitArgs(line []byte, args [][]byte) ([][]byte, error) {
	i := 0
	for {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i == len(line) {
			return args, nil
		}
		start, w := i, i // w: write position for the unquoted argument
		inDq, inSq := false, false
		for {
			if i == len(line) {
				if inDq || inSq {
					return nil, protoErr("unbalanced quotes in request")
				}
				break
			}
			c := line[i]
			switch {
			case inDq:
				if c == '\\' && i+3 < len(line) && line[i+1] == 'x' && isHex(line[i+2]) && isHex(line[i+3]) {
					line[w] = unhex(line[i+2])<<4 | unhex(line[i+3])
					i += 4
					w++
					continue
				}
				if c == '\\' && i+1 < len(line) {
					i++
					c = line[i]
					switch c {
					case 'n':
						c = '\n'
					case 'r':
						c = '\r'
					case 't':
						c = '\t'
					case 'b':
						c = '\b'
					case 'a':
						c = '\a'
					}
					line[w] = c
					i++
					w++
					continue
				}
				if c == '"' {
					// A closing quote must be followed by a space or the end.
					if i+1 < len(line) && !isSpace(line[i+1]) {
						return nil, protoErr("unbalanced quotes in request")
					}
					inDq = false
					i++
					goto next
				}
			case inSq:
				if c == '\\' && i+1 < len(line) && line[i+1] == '\'' {
					line[w] = '\''
					i += 2
					w++
					continue
				}
				if c == '\'' {
					if i+1 < len(line) && !isSpace(line[i+1]) {
						return nil, protoErr("unbalanced quotes in request")
					}
					inSq = false
					i++
					goto next
				}
			default:
				if isSpace(c) {
					goto next
				}
				if c == '"' && w == start {
					inDq = true
					i++
					continue
				}
				if c == '\'' && w == start {
					inSq = true
					i++
					continue
				}
			}
			line[w] = c
			w++
			i++
		}
	next:
		args = append(args, line[start:w:w])
	}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

// Equal reports whether an argument equals a command or option name, ASCII
// case-insensitively (as Redis compares them).
func Equal(arg []byte, name string) bool { return bytes.EqualFold(arg, []byte(name)) }
