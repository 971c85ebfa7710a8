// Package resp reads and writes Redis's protocol (RESP2 and RESP3) for
// bloomlab's server: commands from clients (multibulk arrays and inline
// commands, as telnet and nc send them), replies to them in either protocol
// version, and, for tests and tools, replies read back as values.
//
// The command reader treats its input as hostile: every length is checked
// against Limits before it is believed, memory grows only as bytes arrive
// (a client announcing a 512 MB argument and sending 10 bytes costs 64
// KiB, not 512 MB; past 64 KiB the buffer is at most four times what has
// arrived), and malformed input returns a *ProtocolError whose text is
// what Redis answers ("Protocol error: invalid bulk length"), after which
// the connection must be closed. The memory it holds is reported, and can
// be refused, as it grows (Account). Nothing in it panics.
package resp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"sync"
	"weak"
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

// Sizes of the reader's arrays' elements, for Held.
const (
	sizeofSlice = 3 * strconv.IntSize / 8
	sizeofInt   = strconv.IntSize / 8
)

// Between commands a reader keeps an argument buffer and argument arrays
// of at most keep bytes each (Release): larger ones, which only large
// commands need, are dropped.
const keep = 64 << 10

// ErrNoMemory is what ReadCommand returns for a command whose memory the
// accounting function (Account) refused: the command was read to its end
// without being kept, the connection is still in step, and the caller
// answers it (a server: Redis's OOM error) and reads on.
var ErrNoMemory = errors.New("resp: no memory for the command")

// Reader reads commands.
type Reader struct {
	br   *bufio.Reader
	lim  Limits
	args [][]byte
	offs []int  // the current command's argument offsets into buf
	buf  []byte // the current command's argument bytes

	acct    func(n int64) bool // see Account
	fits    func(n int64) bool
	held    int64 // bytes reported to acct
	refused bool  // the current command is being skipped

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

// Account makes the reader report the memory it holds for commands (the
// argument bytes and the arrays that describe them) to grow as it changes:
// grow(n) with n > 0 asks for n more bytes before they are allocated and
// returns whether they may be; grow(n) with n < 0 says that -n bytes were
// released (its result is then ignored). fits(n), if not nil, is asked
// when a bulk's header arrives, with the growth the whole bulk needs: it
// says whether that much could be granted now, without taking it (the
// bytes have not arrived, and may never). When grow or fits refuses, the
// reader drops what it holds of the command, reads the rest of it without
// keeping it, and ReadCommand returns ErrNoMemory: a bulk that cannot fit
// is never stored. Between two calls, the reader holds exactly the sum of
// what grow was told (Held).
func (r *Reader) Account(grow, fits func(n int64) bool) { r.acct, r.fits = grow, fits }

// Held returns the bytes the reader holds for commands: its argument
// buffer and arrays (not its fixed 16 KiB input buffer).
func (r *Reader) Held() int64 { return r.held }

func (r *Reader) footprint() int64 {
	return int64(cap(r.buf)) + int64(cap(r.args))*sizeofSlice + int64(cap(r.offs))*sizeofInt
}

// ask asks the accounting function for n more bytes.
func (r *Reader) ask(n int64) bool {
	if r.acct == nil || n <= 0 {
		r.held += n
		return true
	}
	if !r.acct(n) {
		return false
	}
	r.held += n
	return true
}

// settle reports the difference between what the reader holds and what it
// reported, and reports whether a growth was accepted (a release always
// is).
func (r *Reader) settle() bool {
	d := r.footprint() - r.held
	if d == 0 {
		return true
	}
	if d < 0 || r.acct == nil {
		r.held += d
		if r.acct != nil {
			r.acct(d)
		}
		return true
	}
	if r.ask(d) {
		return true
	}
	// Refused: what was allocated is dropped at once.
	r.buf, r.args, r.offs = nil, nil, nil
	r.settle()
	return false
}

// Release ends the use of the last command's arguments (they must not be
// used afterwards): a buffer or an array larger than 64 KiB is dropped, so
// that a connection holds between commands only what an ordinary command
// needs, whatever its largest command was. ReadCommand calls it first; a
// caller that runs commands calls it when a command is done, so that the
// memory is released before the reply is sent.
func (r *Reader) Release() {
	if cap(r.buf) <= keep && cap(r.args)*sizeofSlice <= keep && cap(r.offs)*sizeofInt <= keep {
		return
	}
	if cap(r.buf) > keep {
		putBulkBuf(r.buf)
		r.buf = nil
	}
	if cap(r.args)*sizeofSlice > keep {
		r.args = nil
	}
	if cap(r.offs)*sizeofInt > keep {
		r.offs = nil
	}
	r.settle()
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
// slices are valid until the next call (or Release). Empty lines and empty
// arrays are skipped, as Redis does. At the end of input it returns io.EOF
// (or io.ErrUnexpectedEOF in the middle of a command); malformed input
// returns a *ProtocolError; a command whose memory Account's function
// refused returns ErrNoMemory.
func (r *Reader) ReadCommand() ([][]byte, error) {
	r.Release()
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
	if n, ok := r.fastCount(); ok {
		return n, nil
	}
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

// fastCount is readCount for the common case, a line of 1 to 18 decimal
// digits and "\r\n" already buffered: it parses the digits in place. It
// reports false, having consumed nothing, for anything else (a sign, a
// line not yet complete, a bare "\n"), which readCount then reads as it
// always has, so both agree on every input.
func (r *Reader) fastCount() (int64, bool) {
	buf, _ := r.br.Peek(min(r.br.Buffered(), 21))
	var n int64
	for i, c := range buf {
		if c >= '0' && c <= '9' {
			n = n*10 + int64(c-'0')
			continue
		}
		if c != '\r' || i == 0 || i > 18 || i+1 == len(buf) || buf[i+1] != '\n' {
			return 0, false
		}
		r.br.Discard(i + 2)
		return n, true
	}
	return 0, false
}

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
	r.refused = false
	r.buf = r.buf[:0]
	// Offsets into buf, turned into slices at the end (buf may move).
	r.offs = r.offs[:0]
	total := int64(0)
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
		if total+size > r.lim.MaxCommand {
			return nil, protoErr("command of more than %d bytes", r.lim.MaxCommand)
		}
		total += size
		if !r.refused && len(r.offs) == cap(r.offs) && !r.growOffs(n+1) {
			r.refuse()
		}
		if need := size - int64(cap(r.buf)-len(r.buf)); !r.refused && need > 0 && r.fits != nil && !r.fits(need) {
			r.refuse()
		}
		if !r.refused {
			r.offs = append(r.offs, len(r.buf))
		}
		if err := r.readBulk(int(size)); err != nil {
			return nil, err
		}
	}
	if !r.refused && len(r.offs) == cap(r.offs) && !r.growOffs(n+1) {
		r.refuse() // (room for the end offset)
	}
	if !r.refused && int64(cap(r.args)) < n {
		if r.ask((n - int64(cap(r.args))) * sizeofSlice) {
			r.args = make([][]byte, 0, n)
		} else {
			r.refuse()
		}
	}
	if r.refused {
		r.refused = false
		return nil, ErrNoMemory
	}
	r.offs = append(r.offs, len(r.buf))
	r.args = r.args[:0]
	for i := 0; i+1 < len(r.offs); i++ {
		r.args = append(r.args, r.buf[r.offs[i]:r.offs[i+1]:r.offs[i+1]])
	}
	return r.args, nil
}

// growOffs grows the offsets' array (doubling, to at most limit entries),
// reporting whether its memory was granted.
func (r *Reader) growOffs(limit int64) bool {
	c := int64(cap(r.offs))
	nc := min(max(2*c, 16), limit)
	if nc <= c {
		nc = c + 1
	}
	if !r.ask((nc - c) * sizeofInt) {
		return false
	}
	offs := make([]int, len(r.offs), nc)
	copy(offs, r.offs)
	r.offs = offs
	return true
}

// refuse drops the current command: what the reader holds of it is
// released and the rest is read without being kept.
func (r *Reader) refuse() {
	r.refused = true
	r.buf, r.offs = nil, nil
	r.settle()
}

// readBulk appends size bytes and the "\r\n" after them to r.buf (without
// the terminator), growing r.buf only as the bytes arrive. While the
// command is refused, it reads them without keeping them.
func (r *Reader) readBulk(size int) error {
	if !r.refused && size+2 <= r.br.Buffered() && size <= cap(r.buf)-len(r.buf) {
		// The whole bulk and its "\r\n" have arrived and fit: one copy.
		b, _ := r.br.Peek(size + 2)
		if b[size] != '\r' || b[size+1] != '\n' {
			return protoErr("expected CRLF after a bulk string")
		}
		r.buf = append(r.buf, b[:size]...)
		r.br.Discard(size + 2)
		return nil
	}
	for size > 0 {
		if r.refused {
			n, err := r.br.Discard(size)
			if err != nil {
				return eofInCommand(err)
			}
			size -= n
			continue
		}
		if len(r.buf) == cap(r.buf) && !r.growBuf(size) {
			r.refuse()
			continue
		}
		start := len(r.buf)
		chunk := min(size, cap(r.buf)-start)
		r.buf = r.buf[:start+chunk]
		if _, err := io.ReadFull(r.br, r.buf[start:]); err != nil {
			r.buf = r.buf[:start]
			return eofInCommand(err)
		}
		size -= chunk
	}
	for _, want := range [2]byte{'\r', '\n'} {
		c, err := r.br.ReadByte()
		if err != nil {
			return eofInCommand(err)
		}
		if c != want {
			return protoErr("expected CRLF after a bulk string")
		}
	}
	return nil
}

// growBuf grows r.buf for a bulk of which remaining bytes are still to
// come, by at least min(remaining, 64 KiB), reporting whether the memory
// was granted. The capacity grows fourfold (few copies, so little garbage:
// a 200 MiB argument allocates 285 MiB in all where doubling allocates 456,
// and the process's RSS follows the sum until the garbage is collected),
// but never more than a quarter of the buffer past the current bulk's end:
// a single 200 MiB argument ends in a buffer of exactly 200 MiB, and every
// growth is by at least a quarter (copies stay linear in the command's
// size). The buffer is at most four times the bytes received.
func (r *Reader) growBuf(remaining int) bool {
	l, c := len(r.buf), cap(r.buf)
	step := l + min(remaining, 64<<10)
	nc := max(min(4*c, l+max(remaining, c/4)), step)
	end := l + remaining
	if end > bulkBufMin && end <= bulkBufSize && c < bulkBufSize {
		// A command of up to a 16 MiB chunk (SCANDUMP's largest, as
		// LOADCHUNK sends them back): a pooled buffer if one is free,
		// else, once a quarter of it has arrived, a new one of the
		// pool's size, which Release returns to the pool.
		if buf := getBulkBuf(); buf != nil || nc > bulkBufSize/4 {
			if !r.ask(int64(bulkBufSize - c)) {
				putBulkBuf(buf)
				return false
			}
			if buf == nil {
				buf = make([]byte, 0, bulkBufSize)
			}
			r.buf = append(buf[:0], r.buf...)
			return true
		}
	}
	if !r.ask(int64(nc - c)) {
		return false
	}
	buf := make([]byte, l, nc)
	copy(buf, r.buf)
	r.buf = buf
	return true
}

// BigBufSize is the size of the pooled big buffers: RedisBloom's largest
// SCANDUMP chunk (16 MiB) and room for the rest of its LOADCHUNK. The
// reader takes one for a command of up to that size and holds it only
// while the command runs; between commands it waits in the pool (which the
// collector empties), so that a client sending 16 MiB chunks one after
// another reuses one buffer instead of leaving 21 MiB of garbage per
// chunk (Go's collector, pacing itself by a live heap of several GiB, let
// that grow to GiBs). The server builds its SCANDUMP chunks in the same
// buffers (BigBuf, PutBigBuf), so that a dump followed by a load uses one.
const (
	BigBufSize  = 16<<20 + 64<<10
	bulkBufMin  = 1 << 20
	bulkBufSize = BigBufSize
)

// bulkBufs is the pool of free big buffers: one list for the whole
// process (a sync.Pool keeps a buffer in the private slot of the
// processor that put it, where a goroutine on another one does not look,
// so a dump and a load on two processors held two), most recent last,
// each held weakly, so that the collector frees the buffers nobody uses
// as it empties a sync.Pool.
var bulkBufs struct {
	sync.Mutex
	free []weak.Pointer[[]byte]
}

func getBulkBuf() []byte {
	bulkBufs.Lock()
	defer bulkBufs.Unlock()
	for n := len(bulkBufs.free); n > 0; n-- {
		w := bulkBufs.free[n-1]
		bulkBufs.free = bulkBufs.free[:n-1]
		if p := w.Value(); p != nil {
			return *p
		}
	}
	return nil
}

func putBulkBuf(b []byte) {
	if cap(b) != bulkBufSize {
		return
	}
	p := new([]byte)
	*p = b[:0]
	bulkBufs.Lock()
	defer bulkBufs.Unlock()
	live := bulkBufs.free[:0]
	for _, w := range bulkBufs.free {
		if w.Value() != nil {
			live = append(live, w)
		}
	}
	clear(bulkBufs.free[len(live):])
	bulkBufs.free = append(live, weak.Make(p))
}

// BigBuf returns an empty buffer of capacity BigBufSize: a pooled one if
// one is free.
func BigBuf() []byte {
	if b := getBulkBuf(); b != nil {
		return b[:0]
	}
	return make([]byte, 0, BigBufSize)
}

// PutBigBuf returns a buffer of BigBuf to the pool (others are left to the
// collector); it must not be used afterwards.
func PutBigBuf(b []byte) { putBulkBuf(b) }

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
	if args != nil {
		r.args = args[:0]
	}
	if !r.settle() {
		return nil, ErrNoMemory // the line was consumed: still in step
	}
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
