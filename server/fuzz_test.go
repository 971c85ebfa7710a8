package server

import (
	"bytes"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/bloomlab/bloomlab/internal/resp"
)

// FuzzConn feeds arbitrary byte streams to a connection of a fresh
// server: the dispatch path (parsing, every command's argument handling,
// MULTI/EXEC, replies in RESP2 and RESP3) must never panic or hang, and
// memory stays under the server's limits.
func FuzzConn(f *testing.F) {
	var seed bytes.Buffer
	for _, cmd := range [][]string{
		{"HELLO", "3"}, {"BF.RESERVE", "f", "0.01", "100", "EXPANSION", "3"}, {"BF.MADD", "f", "a", "b", "c"},
		{"BF.INSERT", "g", "CAPACITY", "5", "ERROR", "0.1", "NONSCALING", "ITEMS", "a", "b", "c", "d", "e", "f"},
		{"BF.INFO", "f"}, {"BF.INFO", "g", "EXPANSION"}, {"BF.SCANDUMP", "f", "0"}, {"BF.SCANDUMP", "f", "1"},
		{"BF.LOADCHUNK", "h", "1", "\x01\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x05\x00\x00\x00\x02\x00\x00\x00"},
		{"CMS.INITBYPROB", "c", "0.01", "0.01"}, {"CMS.INCRBY", "c", "a", "5"}, {"CMS.MERGE", "c", "1", "c", "WEIGHTS", "2"},
		{"MULTI"}, {"SET", "s", "v", "EX", "10"}, {"EXPIRE", "f", "100", "GT"}, {"RENAME", "f", "f2"}, {"EXEC"},
		{"WATCH", "f2"}, {"SCAN", "0", "MATCH", "*[a-z]", "COUNT", "2"}, {"KEYS", "*"}, {"COMMAND", "DOCS", "bf.add"},
		{"CLIENT", "SETINFO", "lib-name", "x"}, {"CONFIG", "GET", "*"}, {"INFO"}, {"DEL", "f2", "g"}, {"FLUSHALL"},
	} {
		seed.Write(resp.Command(cmd...))
	}
	f.Add(seed.Bytes())
	f.Add([]byte("PING\r\nBF.ADD f \"a b\"\r\nBF.EXISTS f 'a b'\r\n"))
	f.Add([]byte("*3\r\n$6\r\nBF.ADD\r\n$1\r\nf\r\n$-1\r\n"))
	f.Add([]byte("MULTI\r\nBF.ADD\r\nEXEC\r\nDISCARD\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := New(Config{MaxMemory: 32 << 20, MaxBulk: 1 << 16, MaxArgs: 1 << 10, MaxCommand: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		done := make(chan struct{})
		s.accept(&fakeConn{r: bytes.NewReader(data), closed: done})
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("the connection hangs")
		}
	})
}

// fakeConn is a connection whose client sends r and then closes; replies
// are discarded.
type fakeConn struct {
	r      *bytes.Reader
	once   sync.Once
	closed chan struct{}
}

func (c *fakeConn) Read(p []byte) (int, error)  { return c.r.Read(p) }
func (c *fakeConn) Write(p []byte) (int, error) { return len(p), nil }
func (c *fakeConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return nil
}
func (c *fakeConn) LocalAddr() net.Addr                { return &net.TCPAddr{} }
func (c *fakeConn) RemoteAddr() net.Addr               { return &net.TCPAddr{} }
func (c *fakeConn) SetDeadline(t time.Time) error      { return nil }
func (c *fakeConn) SetReadDeadline(t time.Time) error  { return nil }
func (c *fakeConn) SetWriteDeadline(t time.Time) error { return nil }

var _ = io.EOF
