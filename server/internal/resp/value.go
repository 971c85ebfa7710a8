package resp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Kind is the type of a reply Value.
type Kind byte

// Reply types (the RESP type bytes).
const (
	SimpleString Kind = '+'
	ErrorReply   Kind = '-'
	Integer      Kind = ':'
	BulkString   Kind = '$'
	ArrayReply   Kind = '*'
	NullReply    Kind = '_'
	BoolReply    Kind = '#'
	DoubleReply  Kind = ','
	MapReply     Kind = '%'
	SetReply     Kind = '~'
	VerbatimStr  Kind = '='
	BigNumber    Kind = '('
	PushReply    Kind = '>'
)

// Value is one reply, as a client reads it.
type Value struct {
	Kind  Kind
	Str   []byte  // simple, error, bulk, verbatim (format prefix included), double, big number
	Int   int64   // integer; 1/0 for a boolean
	Elems []Value // array, set, push; a map's keys and values alternate
	// Null marks a RESP2 null bulk string or null array (Kind BulkString or
	// ArrayReply) and RESP3 null (Kind NullReply).
	Null bool
}

// String renders v compactly, for test messages.
func (v Value) String() string {
	switch v.Kind {
	case SimpleString:
		return "+" + string(v.Str)
	case ErrorReply:
		return "-" + string(v.Str)
	case Integer:
		return ":" + strconv.FormatInt(v.Int, 10)
	case BoolReply:
		return fmt.Sprintf("#%v", v.Int == 1)
	case NullReply:
		return "_"
	}
	if v.Null {
		return string(v.Kind) + "-1"
	}
	if v.Elems != nil || v.Kind == ArrayReply || v.Kind == MapReply || v.Kind == SetReply || v.Kind == PushReply {
		var b bytes.Buffer
		b.WriteByte(byte(v.Kind))
		b.WriteByte('[')
		for i, e := range v.Elems {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(e.String())
		}
		b.WriteByte(']')
		return b.String()
	}
	return string(v.Kind) + strconv.Quote(string(v.Str))
}

// ReplyReader reads replies (for tests and tools).
type ReplyReader struct {
	br  *bufio.Reader
	max int64
}

// NewReplyReader returns a ReplyReader over r; strings longer than maxBulk
// (default 512 MiB) or aggregates of more than 1<<24 elements are errors.
func NewReplyReader(r io.Reader, maxBulk int64) *ReplyReader {
	if maxBulk <= 0 {
		maxBulk = DefaultLimits.MaxBulk
	}
	return &ReplyReader{br: bufio.NewReader(r), max: maxBulk}
}

// ErrReply is returned for malformed replies.
var ErrReply = errors.New("resp: malformed reply")

// Read reads one reply.
func (r *ReplyReader) Read() (Value, error) { return r.read(0) }

func (r *ReplyReader) line() ([]byte, error) {
	l, err := r.br.ReadSlice('\n')
	if err != nil {
		if err == io.EOF && len(l) > 0 {
			return nil, io.ErrUnexpectedEOF
		}
		if err == bufio.ErrBufferFull {
			return nil, fmt.Errorf("%w: line too long", ErrReply)
		}
		return nil, err
	}
	if len(l) < 2 || l[len(l)-2] != '\r' {
		return nil, fmt.Errorf("%w: line without CRLF", ErrReply)
	}
	return l[:len(l)-2], nil
}

func (r *ReplyReader) read(depth int) (Value, error) {
	if depth > 64 {
		return Value{}, fmt.Errorf("%w: nested too deep", ErrReply)
	}
	l, err := r.line()
	if err != nil {
		return Value{}, err
	}
	if len(l) == 0 {
		return Value{}, fmt.Errorf("%w: empty line", ErrReply)
	}
	v := Value{Kind: Kind(l[0])}
	body := l[1:]
	switch v.Kind {
	case SimpleString, ErrorReply, DoubleReply, BigNumber:
		v.Str = append([]byte(nil), body...)
	case Integer:
		if v.Int, err = strconv.ParseInt(string(body), 10, 64); err != nil {
			return Value{}, fmt.Errorf("%w: integer %q", ErrReply, body)
		}
	case NullReply:
		v.Null = true
	case BoolReply:
		switch string(body) {
		case "t":
			v.Int = 1
		case "f":
		default:
			return Value{}, fmt.Errorf("%w: boolean %q", ErrReply, body)
		}
	case BulkString, VerbatimStr:
		n, err := strconv.ParseInt(string(body), 10, 64)
		if err != nil || n < -1 || n > r.max {
			return Value{}, fmt.Errorf("%w: bulk length %q", ErrReply, body)
		}
		if n == -1 {
			v.Null = true
			return v, nil
		}
		var buf bytes.Buffer
		if _, err := io.CopyN(&buf, r.br, n); err != nil {
			return Value{}, eofInCommand(err)
		}
		v.Str = buf.Bytes()
		var crlf [2]byte
		if _, err := io.ReadFull(r.br, crlf[:]); err != nil || crlf != [2]byte{'\r', '\n'} {
			return Value{}, fmt.Errorf("%w: bulk string without CRLF", ErrReply)
		}
	case ArrayReply, SetReply, PushReply, MapReply:
		n, err := strconv.ParseInt(string(body), 10, 64)
		if err != nil || n < -1 || n > 1<<24 {
			return Value{}, fmt.Errorf("%w: aggregate length %q", ErrReply, body)
		}
		if n == -1 {
			v.Null = true
			return v, nil
		}
		if v.Kind == MapReply {
			n *= 2
		}
		v.Elems = make([]Value, 0, min(n, 1024))
		for i := int64(0); i < n; i++ {
			e, err := r.read(depth + 1)
			if err != nil {
				return Value{}, eofInCommand(err)
			}
			v.Elems = append(v.Elems, e)
		}
	default:
		return Value{}, fmt.Errorf("%w: type byte %q", ErrReply, l[0])
	}
	return v, nil
}

// Command encodes args as a RESP multibulk command.
func Command(args ...string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b.Bytes()
}
