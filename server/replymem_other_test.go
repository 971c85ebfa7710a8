//go:build !unix

package server

import (
	"bufio"
	"io"
	"net"
	"testing"

	"github.com/bloomlab/bloomlab/server/internal/resp"
)

// dialSmallWindow dials s and sets a receive buffer of 4 KiB once the
// connection is made (where the socket option cannot be set before):
// the server's replies wait in its own buffers until the test reads them.
func dialSmallWindow(t *testing.T, s *Server) *rawConn {
	t.Helper()
	conn, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	conn.(*net.TCPConn).SetReadBuffer(4 << 10)
	t.Cleanup(func() { conn.Close() })
	c := &rawConn{t: t, conn: conn}
	c.rr = resp.NewReplyReader(io.TeeReader(bufio.NewReader(conn), &c.raw), 0)
	return c
}
