package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// memConn is a raw connection to `bloomlab serve` that can stream a large
// argument from a small buffer.
type memConn struct {
	t    *testing.T
	conn net.Conn
	rr   *bufio.Reader
}

func dialMem(t *testing.T, addr string) *memConn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &memConn{t: t, conn: conn, rr: bufio.NewReader(conn)}
}

// reply is a RESP2 reply: Kind is its type byte; Str the line of a
// simple string, error or integer, or the bytes of a bulk string; Elems
// an array's elements.
type reply struct {
	Kind  byte
	Str   []byte
	Elems []reply
}

// String is the reply as "+OK", "-ERR …", ":1", or the bulk's text.
func (v reply) String() string {
	if v.Kind == '$' {
		return string(v.Str)
	}
	return string(v.Kind) + string(v.Str)
}

func (c *memConn) read() reply {
	c.t.Helper()
	c.conn.SetReadDeadline(time.Now().Add(60 * time.Second))
	v, err := readReply(c.rr)
	if err != nil {
		c.t.Fatalf("reading a reply: %v", err)
	}
	return v
}

// readReply reads one RESP2 reply (the server's replies to these tests
// are small: no bound is needed).
func readReply(r *bufio.Reader) (reply, error) {
	line, err := r.ReadBytes('\n')
	if err != nil {
		return reply{}, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return reply{}, fmt.Errorf("bad reply line %q", line)
	}
	v := reply{Kind: line[0], Str: line[1 : len(line)-2]}
	switch v.Kind {
	case '+', '-', ':':
		return v, nil
	case '$', '*':
		n, err := strconv.Atoi(string(v.Str))
		if err != nil {
			return reply{}, fmt.Errorf("bad length in %q", line)
		}
		if n < 0 {
			return reply{Kind: v.Kind}, nil
		}
		if v.Kind == '$' {
			b := make([]byte, n+2)
			if _, err := io.ReadFull(r, b); err != nil {
				return reply{}, err
			}
			return reply{Kind: '$', Str: b[:n]}, nil
		}
		v.Elems = make([]reply, n)
		for i := range v.Elems {
			if v.Elems[i], err = readReply(r); err != nil {
				return reply{}, err
			}
		}
		return v, nil
	}
	return reply{}, fmt.Errorf("unknown reply type in %q", line)
}

// respCommand encodes args as a RESP array of bulk strings.
func respCommand(args ...string) []byte {
	b := fmt.Appendf(nil, "*%d\r\n", len(args))
	for _, a := range args {
		b = fmt.Appendf(b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b
}

func (c *memConn) do(args ...string) reply {
	c.t.Helper()
	c.conn.SetWriteDeadline(time.Now().Add(60 * time.Second))
	if _, err := c.conn.Write(respCommand(args...)); err != nil {
		c.t.Fatal(err)
	}
	return c.read()
}

// sendBig sends name and an argument of size bytes, all but its final
// CRLF: the server then holds the argument.
func (c *memConn) sendBig(name string, size int) error {
	chunk := bytes.Repeat([]byte{'x'}, 1<<20)
	c.conn.SetWriteDeadline(time.Now().Add(60 * time.Second))
	if _, err := fmt.Fprintf(c.conn, "*2\r\n$%d\r\n%s\r\n$%d\r\n", len(name), name, size); err != nil {
		return err
	}
	for size > 0 {
		n := min(size, len(chunk))
		if _, err := c.conn.Write(chunk[:n]); err != nil {
			return err
		}
		size -= n
	}
	return nil
}

func (c *memConn) info(field string) int64 {
	c.t.Helper()
	v := c.do("INFO", "memory")
	for _, line := range strings.Split(string(v.Str), "\r\n") {
		if s, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				c.t.Fatalf("INFO %s: %q", field, s)
			}
			return n
		}
	}
	c.t.Fatalf("INFO memory has no %s", field)
	return 0
}

// procStatus returns a field of /proc/PID/status in bytes (VmRSS, VmHWM).
func procStatus(t *testing.T, pid int, field string) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if s, ok := strings.CutPrefix(line, field+":"); ok {
			f := strings.Fields(s)
			kb, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil || len(f) != 2 || f[1] != "kB" {
				t.Fatalf("%s: %q", field, line)
			}
			return kb << 10
		}
	}
	t.Fatalf("/proc/%d/status has no %s", pid, field)
	return 0
}

// TestServeClientMemory is issue 21's scenario on a real `bloomlab serve`
// process holding a 114 MiB filter: 8 connections each send a 200 MiB
// argument to an unknown command at once. While the server holds them,
// INFO's mem_clients_normal counts them and a write that would fit
// without them is refused with OOM under -maxmemory; once they are
// answered, mem_clients_normal is back at its earlier value to the byte,
// and the server returns the memory to the system (a second after the
// last large release): its RSS comes back within 10% of what it was.
// Before, the 1.6 GB counted nowhere and the RSS stayed near 3 GB for
// minutes. (The filter makes the baseline a server's: an empty one's RSS
// is about 11 MiB, and the Go runtime keeps about 6 MiB of metadata for a
// heap that once reached 2 GiB, which 10% of 11 MiB cannot absorb.) The
// server's RSS peaks at up to about 2.4 GiB (the test itself streams from
// a 1 MiB buffer), so -short skips it; server's TestClientMemory runs the
// same scenario in-process at 8 × 16 MiB.
func TestServeClientMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("8 × 200 MiB requests: up to 2.4 GiB of RSS")
	}
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/PID/status")
	}
	const conns, size = 8, 200 << 20
	p := startServe(t, t.TempDir(), "-maxmemory", "1800mb", "-save", "0", "-appendfsync", "no")
	pid := p.cmd.Process.Pid
	ctl := dialMem(t, p.addr)
	// The filter's bits are resident once 100,000 keys have set them.
	if v := ctl.do("BF.RESERVE", "data", "0.01", "100000000"); v.String() != "+OK" {
		t.Fatal(v)
	}
	for i := 0; i < 100; i++ {
		keys := []string{"BF.MADD", "data"}
		for j := 0; j < 1000; j++ {
			keys = append(keys, fmt.Sprint(i, ":", j))
		}
		if v := ctl.do(keys...); v.Kind != '*' {
			t.Fatal(v)
		}
	}
	ctl.do("ECHO", strings.Repeat("e", 8<<10)) // ctl's buffers hold INFO's replies without growing
	ctl.do("FOO", "a", "b", "c", "d", "e")
	cs := make([]*memConn, conns)
	small := func(c *memConn) {
		c.do("FOO", strings.Repeat("x", 200)) // the same buffers before and after
		if v := c.do("PING"); v.String() != "+PONG" {
			t.Fatal(v)
		}
	}
	for i := range cs {
		cs[i] = dialMem(t, p.addr)
		small(cs[i])
	}
	before, rssBefore := ctl.info("mem_clients_normal"), procStatus(t, pid, "VmRSS")

	start := time.Now()
	errs := make(chan error, conns)
	for _, c := range cs {
		go func() { errs <- c.sendBig("FOO", size) }()
	}
	for range cs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	want := before + conns*(size-1024)
	during := ctl.info("mem_clients_normal")
	for deadline := time.Now().Add(time.Minute); during < want && time.Now().Before(deadline); during = ctl.info("mem_clients_normal") {
		time.Sleep(10 * time.Millisecond)
	}
	sent := time.Since(start)
	rssDuring := procStatus(t, pid, "VmRSS")
	if during < want || during > before+conns*size+1<<20 {
		t.Fatalf("mem_clients_normal %d before, %d while %d connections hold %d bytes each", before, during, conns, size)
	}
	// Another 114 MiB filter: it fits under -maxmemory, but not beside
	// 1600 MiB of requests.
	if v := ctl.do("BF.RESERVE", "f", "0.01", "100000000"); v.String() != "-OOM command not allowed when used memory > 'maxmemory'." {
		t.Fatalf("a write past -maxmemory while clients hold %d bytes: %v", during, v)
	}
	for _, c := range cs {
		c.conn.Write([]byte("\r\n"))
	}
	for _, c := range cs {
		if v := c.read(); !strings.HasPrefix(v.String(), "-ERR unknown command 'FOO'") {
			t.Fatalf("the large command: %.80v", v)
		}
		small(c)
	}
	after := ctl.info("mem_clients_normal")
	if after != before {
		t.Fatalf("mem_clients_normal %d before, %d during, %d after", before, during, after)
	}
	answered := time.Now()
	rssAfter := procStatus(t, pid, "VmRSS")
	for deadline := time.Now().Add(20 * time.Second); rssAfter > rssBefore*11/10 && time.Now().Before(deadline); rssAfter = procStatus(t, pid, "VmRSS") {
		time.Sleep(50 * time.Millisecond)
	}
	returned := time.Since(answered)
	peak := procStatus(t, pid, "VmHWM")

	t.Logf("mem_clients_normal %d before, %d during, %d after; RSS %.1f MiB before, %.1f during, peak %.1f, %.1f after (%v after the replies; requests sent in %v)",
		before, during, after, mib(rssBefore), mib(rssDuring), mib(peak), mib(rssAfter), returned.Round(10*time.Millisecond), sent.Round(10*time.Millisecond))
	if rssAfter > rssBefore*11/10 {
		t.Fatalf("RSS %.1f MiB before, %.1f MiB 20 s after the requests were answered", mib(rssBefore), mib(rssAfter))
	}
	if v := ctl.do("BF.RESERVE", "f", "0.01", "100000000"); v.String() != "+OK" {
		t.Fatalf("the same write once the requests are done: %v", v)
	}
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }
