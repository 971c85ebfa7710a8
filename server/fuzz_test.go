package server

import (
	"bytes"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/bloomlab/bloomlab/server/internal/resp"
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
		{"CF.RESERVE", "k", "8", "BUCKETSIZE", "1", "MAXITERATIONS", "2", "EXPANSION", "1"},
		{"CF.INSERT", "k", "ITEMS", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}, {"CF.ADDNX", "k", "a"},
		{"CF.INSERTNX", "n", "CAPACITY", "4", "NOCREATE", "ITEMS", "x"}, {"CF.MEXISTS", "k", "a", "z"}, {"CF.COUNT", "k", "a"},
		{"CF.DEL", "k", "a"}, {"CF.COMPACT", "k"}, {"CF.INFO", "k"}, {"CF.SCANDUMP", "k", "0"}, {"CF.SCANDUMP", "k", "1"},
		{"CF.LOADCHUNK", "m", "1", "\x01\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01\x00\x01\x00\x00\x00"},
		{"CF.LOADCHUNK", "m", "2", "\x07"}, {"CF.LOADCHUNK", "m", "3", "\x00"},
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

// seedFiles returns a real snapshot and log: a server with every value
// type (BF and CF loads in progress included), a snapshot, then more
// writes (a MULTI block among them).
func seedFiles(f *testing.F) (snap, aof []byte) {
	dir := f.TempDir()
	s, err := Run(Config{Dir: dir})
	if err != nil {
		f.Fatal(err)
	}
	c := dial(f, s)
	c.do("BF.RESERVE", "f", "0.01", "20", "EXPANSION", "3")
	c.do("CF.RESERVE", "k", "8", "BUCKETSIZE", "2", "EXPANSION", "2")
	c.do("CF.INSERT", "k", "ITEMS", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j")
	for _, cmd := range [][]string{
		{"BF.MADD", "f", "a", "b", "c"},
		{"CMS.INITBYDIM", "c", "10", "3"}, {"CMS.INCRBY", "c", "a", "5"}, {"SET", "s", "v", "EX", "100"},
		{"BF.LOADCHUNK", "l", "1", string(header(f, s, "f"))},
		{"CF.LOADCHUNK", "m", "1", string(cfHeader(f, s, "k"))}, {"SAVE"},
		{"BF.ADD", "f", "d"}, {"MULTI"}, {"BF.ADD", "g", "x"}, {"DEL", "s"}, {"EXEC"}, {"EXPIRE", "c", "1000"},
		{"CF.ADD", "k", "z"}, {"CF.DEL", "k", "a"}, {"CF.INSERTNX", "k2", "CAPACITY", "4", "ITEMS", "x", "y"},
		{"CF.LOADCHUNK", "m2", "1", string(cfHeader(f, s, "k"))}, {"CF.COMPACT", "k"},
	} {
		c.do(cmd...)
	}
	s.Close()
	snap, _ = os.ReadFile(filepath.Join(dir, snapName))
	logs, _ := filepath.Glob(filepath.Join(dir, "bloomlab.*.aof"))
	aof, _ = os.ReadFile(logs[len(logs)-1])
	return snap, aof
}

func header(f *testing.F, s *Server, key string) []byte {
	c := dial(f, s)
	c.send("BF.SCANDUMP", key, "0")
	v, _ := c.read()
	return v.Elems[1].Str
}

func cfHeader(f *testing.F, s *Server, key string) []byte {
	c := dial(f, s)
	c.send("CF.SCANDUMP", key, "0")
	v, _ := c.read()
	return v.Elems[1].Str
}

// FuzzSnapshot: a damaged or hostile snapshot never panics the server
// at start; it starts or refuses with an error.
func FuzzSnapshot(f *testing.F) {
	snap, _ := seedFiles(f)
	f.Add(snap)
	f.Add(snap[:len(snap)/2])
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, snapName), data, 0o644)
		if s, err := New(Config{Dir: dir, MaxMemory: 64 << 20}); err == nil {
			s.Close()
		}
	})
}

// FuzzLog: likewise a damaged or hostile log (replayed, possibly cut back).
func FuzzLog(f *testing.F) {
	_, aof := seedFiles(f)
	f.Add(aof)
	f.Add(aof[:len(aof)-3])
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, logName(1)), data, 0o644)
		if s, err := New(Config{Dir: dir, MaxMemory: 64 << 20}); err == nil {
			s.Close()
		}
	})
}
