package server

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/bloomlab/bloomlab/server/internal/resp"
)

// start runs an in-process server for the test and stops it at the end.
// plusClients is a MaxMemory of limit bytes for the keys plus the client
// memory of conns connections sending small commands (their fixed buffers
// and a few KiB of arguments and replies), which counts in the used memory
// too.
func plusClients(limit int64, conns int) int64 {
	return limit + int64(conns)*(connFixed+16<<10)
}

// limitKeys sets the memory limit to what s uses now (its keys and its
// clients' buffers) plus room bytes, for a test that measures a key's
// memory against the limit to the byte: its connections must be idle,
// with buffers already as large as the test's commands make them (a
// warm-up), so that the room is all for keys. The next command a
// connection sends orders this write before the server's reads.
func limitKeys(s *Server, room int64) { s.maxMem = s.mem.Load() + room }

func start(t testing.TB, cfg Config) *Server {
	t.Helper()
	s, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// hookSync makes the log's fsyncs call fn until the test ends.
func hookSync(t testing.TB, fn func(*os.File) error) {
	syncHook.Store(&fn)
	t.Cleanup(func() { syncHook.Store(nil) })
}

// rawConn is a client that sends commands and reads replies as bytes.
type rawConn struct {
	t    testing.TB
	conn net.Conn
	raw  bytes.Buffer // the bytes of the reply being read
	rr   *resp.ReplyReader
}

func dial(t testing.TB, s *Server) *rawConn {
	t.Helper()
	conn, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	c := &rawConn{t: t, conn: conn}
	c.rr = resp.NewReplyReader(io.TeeReader(bufio.NewReader(conn), &c.raw), 0)
	return c
}

func (c *rawConn) send(args ...string) {
	c.t.Helper()
	c.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.conn.Write(resp.Command(args...)); err != nil {
		c.t.Fatal(err)
	}
}

func (c *rawConn) sendRaw(b string) {
	c.t.Helper()
	if _, err := c.conn.Write([]byte(b)); err != nil {
		c.t.Fatal(err)
	}
}

// read returns the next reply, as a value and as the bytes sent.
func (c *rawConn) read() (resp.Value, []byte) {
	c.t.Helper()
	c.raw.Reset()
	c.conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	v, err := c.rr.Read()
	if err != nil {
		c.t.Fatalf("reading a reply: %v", err)
	}
	return v, append([]byte(nil), c.raw.Bytes()...)
}

// do sends a command and returns its reply rendered by Value.String.
func (c *rawConn) do(args ...string) string {
	c.t.Helper()
	c.send(args...)
	v, _ := c.read()
	return v.String()
}
