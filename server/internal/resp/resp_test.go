package resp

import (
	"bytes"
	"errors"
	"io"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"
)

func readAll(t *testing.T, in string, lim Limits) ([][]string, error) {
	t.Helper()
	r := NewReader(strings.NewReader(in), lim)
	var out [][]string
	for {
		args, err := r.ReadCommand()
		if err != nil {
			if err == io.EOF {
				return out, nil
			}
			return out, err
		}
		var s []string
		for _, a := range args {
			s = append(s, string(a))
		}
		out = append(out, s)
	}
}

func TestReadCommands(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string // commands joined by "|", args by ","
	}{
		{"*1\r\n$4\r\nPING\r\n", "PING"},
		{"*3\r\n$6\r\nBF.ADD\r\n$1\r\nf\r\n$0\r\n\r\n", "BF.ADD,f,"},
		{"*2\r\n$4\r\nECHO\r\n$5\r\na\r\nb\x00\r\n*1\r\n$4\r\nPING\r\n", "ECHO,a\r\nb\x00|PING"},
		{"PING\r\n", "PING"},
		{"PING\n", "PING"},
		{"  set  a   b \r\n", "set,a,b"},
		{"\r\n\r\nPING\r\n", "PING"},
		{"*0\r\n*-1\r\nPING\r\n", "PING"},
		{`ECHO "a b" 'c d' "\x41\n" "q\"" 'it\'s'` + "\r\n", "ECHO,a b,c d,A\n,q\",it's"},
		{`ECHO ""` + "\r\n", "ECHO,"},
		{`ECHO a"b"` + "\r\n", `ECHO,a"b"`},
	} {
		got, err := readAll(t, c.in, Limits{})
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		var parts []string
		for _, args := range got {
			parts = append(parts, strings.Join(args, ","))
		}
		if s := strings.Join(parts, "|"); s != c.want {
			t.Errorf("%q: got %q, want %q", c.in, s, c.want)
		}
	}
}

func TestProtocolErrors(t *testing.T) {
	lim := Limits{MaxArgs: 10, MaxBulk: 100, MaxInline: 50, MaxCommand: 150}
	for _, c := range []struct{ in, msg string }{
		{"*x\r\n", "Protocol error: invalid multibulk length"},
		{"*11\r\n", "Protocol error: invalid multibulk length"},
		{"*1\r\n+PING\r\n", "Protocol error: expected '$', got '+'"},
		{"*1\r\n$-2\r\n", "Protocol error: invalid bulk length"},
		{"*1\r\n$101\r\n", "Protocol error: invalid bulk length"},
		{"*1\r\n$abc\r\n", "Protocol error: invalid bulk length"},
		{"*2\r\n$100\r\n" + strings.Repeat("a", 100) + "\r\n$100\r\n", "Protocol error: command of more than 150 bytes"},
		{"*1\r\n$2\r\nabcd\r\n", "Protocol error: expected CRLF after a bulk string"},
		{strings.Repeat("a", 60) + "\r\n", "Protocol error: too big inline request"},
		{`ECHO "abc` + "\r\n", "Protocol error: unbalanced quotes in request"},
		{`ECHO "abc"d` + "\r\n", "Protocol error: unbalanced quotes in request"},
		{"*" + strings.Repeat("1", 40) + "\r\n", "Protocol error: too big mbulk count string"},
	} {
		_, err := readAll(t, c.in, lim)
		var pe *ProtocolError
		if !errors.As(err, &pe) || err.Error() != c.msg {
			t.Errorf("%q: got %v, want %q", c.in, err, c.msg)
		}
	}
	for _, in := range []string{"*2\r\n$4\r\nPING\r\n", "*1\r\n$4\r\nPI", "*1\r\n"} {
		if _, err := readAll(t, in, lim); err != io.ErrUnexpectedEOF {
			t.Errorf("%q: got %v, want unexpected EOF", in, err)
		}
	}
}

// A client announcing a huge argument makes the reader allocate only as
// the bytes arrive.
func TestAnnouncedLengthNotAllocated(t *testing.T) {
	in := "*1000000\r\n$536870000\r\nabc"
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := readAll(t, in, Limits{})
	runtime.ReadMemStats(&after)
	if err != io.ErrUnexpectedEOF {
		t.Fatalf("got %v", err)
	}
	if a := after.TotalAlloc - before.TotalAlloc; a > 1<<20 {
		t.Errorf("allocated %d bytes for a 30-byte request", a)
	}
}

func TestWriterRoundTrip(t *testing.T) {
	for _, proto := range []int{2, 3} {
		var b bytes.Buffer
		w := NewWriter(&b)
		w.Proto = proto
		w.Simple("OK")
		w.Error("ERR nope")
		w.Int(-42)
		w.BulkString("a\r\nb")
		w.Null()
		w.NullArray()
		w.Array(2)
		w.Int(1)
		w.Bulk(nil)
		w.Map(1)
		w.Simple("k")
		w.Int(7)
		w.Bool(true)
		w.Double(1.5)
		w.Double(math.Inf(1))
		w.Set(1)
		w.Int(3)
		w.Verbatim("x")
		w.Flush()
		r := NewReplyReader(&b, 0)
		var got []string
		for {
			v, err := r.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, v.String())
		}
		want := map[int]string{
			2: `+OK|-ERR nope|:-42|$"a\r\nb"|$-1|*-1|*[:1, $""]|*[+k, :7]|:1|$"1.5"|$"inf"|*[:3]|$"x"`,
			3: `+OK|-ERR nope|:-42|$"a\r\nb"|_|_|*[:1, $""]|%[+k, :7]|#true|,"1.5"|,"inf"|~[:3]|="txt:x"`,
		}[proto]
		if s := strings.Join(got, "|"); s != want {
			t.Errorf("RESP%d:\n got %s\nwant %s", proto, s, want)
		}
	}
}

func FuzzReadCommand(f *testing.F) {
	for _, s := range []string{
		"*1\r\n$4\r\nPING\r\n", "PING\r\n", `ECHO "a\x41" 'b'` + "\r\n", "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n",
		"*-1\r\n", "*1\r\n$-1\r\n", "\r\n", "*3\r\n$1\r\na\r\n",
		"*2\r\n$1\r\na\r\n$1\r\nb\r\n*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n", // the offsets' array grows for the end offset
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lim := Limits{MaxArgs: 64, MaxBulk: 1 << 12, MaxInline: 1 << 10, MaxCommand: 1 << 14}
		r := NewReader(bytes.NewReader(data), lim)
		// The memory budget and the authentication come from the input.
		budget, reported := int64(1<<20), int64(0)
		if len(data) > 0 {
			budget = int64(data[0]) * 64
			r.Unauthenticated = data[0]&1 == 1
		}
		r.Account(func(n int64) bool {
			if reported+n > budget && n > 0 {
				return false
			}
			reported += n
			return true
		}, func(n int64) bool { return reported+n <= budget })
		for i := 0; i < 1000; i++ {
			args, err := r.ReadCommand()
			if reported != r.Held() || reported != r.footprint() || reported < 0 || reported > budget {
				t.Fatalf("reported %d, held %d, footprint %d, budget %d", reported, r.Held(), r.footprint(), budget)
			}
			if err == ErrNoMemory {
				continue
			}
			if err != nil {
				var pe *ProtocolError
				if err != io.EOF && err != io.ErrUnexpectedEOF && !errors.As(err, &pe) {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if r.Unauthenticated && !r.Inline && len(args) > unauthMaxArgs {
				t.Fatalf("%d arguments before AUTH", len(args))
			}
			if len(args) == 0 || len(args) > lim.MaxArgs {
				t.Fatalf("%d args", len(args))
			}
			total := 0
			for _, a := range args {
				total += len(a)
			}
			if total > len(data) {
				t.Fatalf("%d argument bytes from %d input bytes", total, len(data))
			}
		}
	})
}

func FuzzReadReply(f *testing.F) {
	for _, s := range []string{"+OK\r\n", "*2\r\n:1\r\n$1\r\na\r\n", "%1\r\n+a\r\n#t\r\n", "$-1\r\n", "_\r\n", ",1.5\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReplyReader(bytes.NewReader(data), 1<<12)
		for i := 0; i < 100; i++ {
			if _, err := r.Read(); err != nil {
				return
			}
		}
	})
}

// A line longer than the limit is refused once its bytes have arrived,
// without waiting for a newline that a hostile client never sends.
func TestLongLineWithoutNewline(t *testing.T) {
	pr, pw := io.Pipe()
	go pw.Write([]byte(strings.Repeat("a", 70<<10)))
	r := NewReader(pr, Limits{})
	done := make(chan error, 1)
	go func() { _, err := r.ReadCommand(); done <- err }()
	select {
	case err := <-done:
		var pe *ProtocolError
		if !errors.As(err, &pe) || pe.Msg != "too big inline request" {
			t.Fatalf("got %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the reader waits for a newline")
	}
	pw.Close()
}

// TestAccount: the reader reports every byte it holds for commands before
// it allocates it, refuses a command whose memory is denied without losing
// its place in the stream, gives a large command's buffers back once the
// command is done, and sizes a single large argument's buffer exactly.
func TestAccount(t *testing.T) {
	var in bytes.Buffer
	in.Write(Command("PING"))
	in.Write(Command("ECHO", strings.Repeat("a", 300<<10))) // refused: over the budget
	in.WriteString("ECHO inline\r\n")
	in.Write(Command("ECHO", strings.Repeat("b", 200<<10))) // fits once the budget is raised
	in.Write(Command("PING"))
	r := NewReader(&in, Limits{})
	budget, reported, peak := int64(256<<10), int64(0), int64(0)
	asked := int64(0)
	r.Account(func(n int64) bool {
		if n > 0 && reported+n > budget {
			return false
		}
		reported += n
		peak = max(peak, reported)
		return true
	}, func(n int64) bool { asked = n; return reported+n <= budget })
	check := func(want string, wantErr error) {
		t.Helper()
		args, err := r.ReadCommand()
		if err != wantErr {
			t.Fatalf("%s: error %v, want %v", want, err, wantErr)
		}
		if got := string(bytes.Join(args, []byte(" "))); err == nil && got[:min(len(got), 10)] != want {
			t.Fatalf("got %.20q, want %q", got, want)
		}
		if reported != r.Held() || reported != r.footprint() {
			t.Fatalf("%s: reported %d, held %d, footprint %d", want, reported, r.Held(), r.footprint())
		}
	}
	check("PING", nil)
	check("", ErrNoMemory)
	// Refused at its header: nothing of it was stored.
	if reported > 64<<10 || peak > 64<<10 || asked != 300<<10 {
		t.Fatalf("after the refused command: %d held, peak %d (%d asked)", reported, peak, asked)
	}
	check("ECHO inlin", nil)
	budget = 1 << 20
	check("ECHO bbbbb", nil)
	if c := cap(r.buf); c != 4+200<<10 {
		t.Fatalf("a 200 KiB argument's buffer: %d bytes", c)
	}
	r.Release()
	if reported > 1<<10 {
		t.Fatalf("after Release: %d bytes held", reported)
	}
	check("PING", nil)
}

// TestUnauthenticated: Redis's limits before AUTH, in Redis's order of
// checks; inline commands are not limited further.
func TestUnauthenticated(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"*11\r\n", "unauthenticated multibulk length"},
		{"*2000\r\n", "unauthenticated multibulk length"}, // past MaxArgs
		{"*3000000000\r\n", "invalid multibulk length"},
		{"*1\r\n$16385\r\n", "unauthenticated bulk length"},
		{"*1\r\n$30000\r\n", "invalid bulk length"}, // past MaxBulk: checked first, as Redis
		{"*10\r\n$16384\r\n", ""},
		{"A B C D E F G H I J K L\r\n", ""},
	} {
		r := NewReader(strings.NewReader(c.in), Limits{MaxArgs: 1000, MaxBulk: 20000})
		r.Unauthenticated = true
		_, err := r.ReadCommand()
		var pe *ProtocolError
		if errors.As(err, &pe) != (c.want != "") || pe != nil && pe.Msg != c.want {
			t.Errorf("%q: got %v, want %q", c.in, err, c.want)
		}
	}
}

// readTrace reads commands until an error, recording each command's
// arguments and the kind of the final error.
func readTrace(r *Reader) (out []string, end string) {
	for i := 0; i < 1000; i++ {
		args, err := r.ReadCommand()
		var pe *ProtocolError
		switch {
		case err == nil:
			out = append(out, string(bytes.Join(args, []byte{0})))
			continue
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			return out, "eof"
		case errors.As(err, &pe):
			return out, "protocol"
		default:
			return out, err.Error()
		}
	}
	return out, "more"
}

// FuzzReadCommandChunking: the reader's fast paths (a count or a whole
// bulk already buffered) agree with its byte-by-byte paths on every
// input: the same commands, then the same kind of end.
func FuzzReadCommandChunking(f *testing.F) {
	for _, s := range []string{
		"*1\r\n$4\r\nPING\r\n", "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", "*1\r\n$+4\r\nPING\r\n", "*1\r\n$04\r\nPING\r\n",
		"*1\r\n$4\r\nPINGxx", "*1\r\n$4\nPING\r\n", "*01\r\n$4\r\nPING\r\n", "*1\r\n$999999999999999999999\r\n",
		"*1\r\n$4\r\nPING\r", "*2\r\n$1\r\na\r\n$1\r\nb\r\nPING\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lim := Limits{MaxArgs: 64, MaxBulk: 1 << 12, MaxInline: 1 << 10, MaxCommand: 1 << 14}
		whole, wholeEnd := readTrace(NewReader(bytes.NewReader(data), lim))
		bytewise, bytewiseEnd := readTrace(NewReader(iotestOneByte{bytes.NewReader(data)}, lim))
		if wholeEnd != bytewiseEnd || len(whole) != len(bytewise) {
			t.Fatalf("whole: %q then %s; byte by byte: %q then %s", whole, wholeEnd, bytewise, bytewiseEnd)
		}
		for i := range whole {
			if whole[i] != bytewise[i] {
				t.Fatalf("command %d: whole %q, byte by byte %q", i, whole[i], bytewise[i])
			}
		}
	})
}

// iotestOneByte reads one byte at a time (testing/iotest.OneByteReader).
type iotestOneByte struct{ r io.Reader }

func (o iotestOneByte) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	return o.r.Read(p[:1])
}

// TestReadCommandAllocs: once its buffers have grown, the reader
// allocates nothing per command (the server's hot path).
func TestReadCommandAllocs(t *testing.T) {
	one := "*3\r\n$6\r\nBF.ADD\r\n$3\r\nkey\r\n$9\r\n123456789\r\n"
	in := strings.Repeat(one, 3000)
	r := NewReader(strings.NewReader(in), Limits{})
	if _, err := r.ReadCommand(); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(1000, func() {
		if args, err := r.ReadCommand(); err != nil || len(args) != 3 {
			t.Fatal(args, err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per command", allocs)
	}
}
