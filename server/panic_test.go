package server

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bloomlab/bloomlab/server/internal/resp"
)

// Two commands that exist only in the tests: bugs in a command that only
// reads (it panics holding the keyspace shared and a key's read lock,
// halfway through its reply) and in a write (it panics holding a Bloom
// filter's write lock after adding an item, before logging it). They
// panic only while a test arms them, so that the fuzzers, which may
// come upon their names, do not report them.
var panicsArmed atomic.Bool

func armPanics(t *testing.T) {
	panicsArmed.Store(true)
	t.Cleanup(func() { panicsArmed.Store(false) })
}

func init() {
	registerFamily(&family{name: "test", commands: []*command{
		{name: "test.panicread", arity: 2, flags: fReadonly, lock: lockRead, keys: readKey1, acl: "read",
			since: "0.0.0", summary: "Panics while reading (tests only)", run: testPanicRead},
		{name: "test.panicwrite", arity: 3, flags: fWrite, lock: lockWrite, keys: writeKey1, acl: "write",
			since: "0.0.0", summary: "Panics halfway through a write (tests only)", run: testPanicWrite},
	}})
}

func testPanicRead(c *client, args [][]byte) bool {
	e := c.s.get(args[1])
	if e == nil || !panicsArmed.Load() {
		c.err("ERR no such key, or not armed")
		return false
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	c.w.Array(2)
	c.w.Int(1) // half a reply, which the client must not see
	panic("test.panicread: a bug in a command that only reads")
}

func testPanicWrite(c *client, args [][]byte) bool {
	e := c.s.get(args[1])
	if e == nil || !panicsArmed.Load() {
		c.err("ERR no such key, or not armed")
		return false
	}
	e.mu.Lock()
	defer unlockWritten(e)
	if err := c.s.writable(e); err != nil {
		c.err("ERR " + err.Error())
		return false
	}
	e.v.(*bfValue).chain.Add(args[2]) // changed, not logged, not acknowledged
	panic("test.panicwrite: a bug halfway through a write")
}

// syncBuffer is a log destination tests read while the server writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestPanicInReadIsContained: a panic in a command that only reads costs
// its client the connection and nothing else. The client gets the
// replies of the commands before it, "ERR internal error" instead of the
// half-written reply, and the connection closes; the stack is logged;
// the keyspace lock and the key's read lock it held are released (a
// write to the same key and a command that takes the keyspace
// exclusively both run), a client connected before and one connecting
// after are served. Before, the process died with every client.
func TestPanicInReadIsContained(t *testing.T) {
	armPanics(t)
	var logs syncBuffer
	s := start(t, Config{Logger: log.New(&logs, "", 0)})
	before := dial(t, s)
	a := dial(t, s)
	if got := a.do("BF.RESERVE", "f", "0.001", "100"); got != "+OK" {
		t.Fatal(got)
	}
	var b []byte
	for _, c := range [][]string{{"PING"}, {"BF.ADD", "f", "x"}, {"TEST.PANICREAD", "f"}, {"PING"}} {
		b = append(b, resp.Command(c...)...)
	}
	a.sendRaw(string(b))
	a.conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	got, err := io.ReadAll(a.conn)
	if err != nil {
		t.Fatalf("reading until the connection closes: %v", err)
	}
	if want := "+PONG\r\n:1\r\n-ERR internal error\r\n"; string(got) != want {
		t.Fatalf("replies %q, want %q and the connection closed", got, want)
	}
	for _, tc := range [][]string{
		{":1", "BF.ADD", "f", "y"}, // the key's write lock
		{"+OK", "SET", "k", "v"},   // the keyspace, exclusively
		{":1", "BF.EXISTS", "f", "x"},
		{"+PONG", "PING"},
	} {
		if got := before.do(tc[1:]...); got != tc[0] {
			t.Fatalf("client connected before: %v: %s, want %s", tc[1:], got, tc[0])
		}
	}
	if !s.db.mu.TryLock() {
		t.Fatal("the keyspace lock is held")
	}
	s.db.mu.Unlock()
	if e := s.db.m["f"]; e == nil || !e.mu.TryLock() {
		t.Fatal("the key's lock is held")
	} else {
		e.mu.Unlock()
	}
	if got := dial(t, s).do("BF.EXISTS", "f", "y"); got != ":1" {
		t.Fatalf("a new client: %s", got)
	}
	l := logs.String()
	for _, want := range []string{"panic in TEST.PANICREAD", "a bug in a command that only reads", "server.testPanicRead(", "closing this connection"} {
		if !strings.Contains(l, want) {
			t.Errorf("the log lacks %q:\n%s", want, l)
		}
	}
}

// TestPanicInWriteStopsServer: a panic in a write, or in any command
// while MULTI/EXEC holds the keyspace exclusively, stops the server as a
// crash would: the process exits with status 2 and the stack on standard
// error, without a snapshot, and the panicking client gets no reply.
// After a restart every acknowledged write is there and the change the
// panicking command made is not (the item the write added before
// panicking; the queued BF.ADD that EXEC had applied). The server runs
// in a child process (this test binary again).
func TestPanicInWriteStopsServer(t *testing.T) {
	if dir := os.Getenv("BLOOMLAB_TEST_PANIC_DIR"); dir != "" {
		panicsArmed.Store(true)
		s, err := Run(Config{Dir: dir, AppendFsync: Always})
		if err != nil {
			fmt.Println("ERROR", err)
			os.Exit(3)
		}
		fmt.Println("ADDR", s.Addr())
		select {
		case <-s.Done():
			os.Exit(0)
		case <-time.After(2 * time.Minute):
			os.Exit(4)
		}
	}
	for _, tc := range []struct {
		name, gone string
		cmds       [][]string
	}{
		{"write", "half", [][]string{{"TEST.PANICWRITE", "f", "half"}}},
		{"read inside EXEC", "queued", [][]string{{"MULTI"}, {"BF.ADD", "f", "queued"}, {"TEST.PANICREAD", "f"}, {"EXEC"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			child := exec.Command(os.Args[0], "-test.run=^TestPanicInWriteStopsServer$")
			child.Env = append(os.Environ(), "BLOOMLAB_TEST_PANIC_DIR="+dir)
			var stderr syncBuffer
			child.Stderr = &stderr
			out, err := child.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := child.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { child.Process.Kill(); child.Wait() })
			sc := bufio.NewScanner(out)
			addr := ""
			for sc.Scan() {
				if a, ok := strings.CutPrefix(sc.Text(), "ADDR "); ok {
					addr = a
					break
				}
			}
			if addr == "" {
				t.Fatalf("the child did not start a server: %s", stderr.String())
			}
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			c := &rawConn{t: t, conn: conn}
			c.rr = resp.NewReplyReader(io.TeeReader(bufio.NewReader(conn), &c.raw), 0)
			for _, cmd := range [][]string{{"BF.RESERVE", "f", "0.000001", "1000"}, {"BF.ADD", "f", "acked"}, {"SET", "s", "v"}} {
				if got := c.do(cmd...); got != "+OK" && got != ":1" {
					t.Fatalf("%v: %s", cmd, got)
				}
			}
			snap, _ := os.ReadFile(filepath.Join(dir, snapName))
			var b []byte
			for _, cmd := range tc.cmds {
				b = append(b, resp.Command(cmd...)...)
			}
			c.sendRaw(string(b))
			conn.SetReadDeadline(time.Now().Add(30 * time.Second))
			rest, _ := io.ReadAll(conn)
			if bytes.Contains(rest, []byte("internal error")) || bytes.Contains(rest, []byte("*")) {
				t.Errorf("the panicking client got a reply: %q", rest)
			}
			err = child.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 2 {
				t.Fatalf("the child ended with %v, want exit status 2; stderr:\n%s", err, stderr.String())
			}
			for _, want := range []string{"bloomlab: panic in", "server.testPanic", "stopping without a snapshot"} {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("standard error lacks %q:\n%s", want, stderr.String())
				}
			}
			if after, _ := os.ReadFile(filepath.Join(dir, snapName)); !bytes.Equal(after, snap) {
				t.Errorf("the snapshot changed (%d bytes, was %d)", len(after), len(snap))
			}
			s := start(t, Config{Dir: dir})
			r := dial(t, s)
			for _, q := range [][]string{{":1", "BF.EXISTS", "f", "acked"}, {`$"v"`, "GET", "s"}, {":0", "BF.EXISTS", "f", tc.gone}} {
				if got := r.do(q[1:]...); got != q[0] {
					t.Errorf("after a restart: %v: %s, want %s", q[1:], got, q[0])
				}
			}
		})
	}
}
