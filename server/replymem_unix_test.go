//go:build unix

package server

import (
	"bufio"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/bloomlab/bloomlab/server/internal/resp"
)

// dialSmallWindow dials s with a receive buffer of 4 KiB, set before the
// connection is made (so that the window is small from the start): the
// server's replies wait in its own buffers until the test reads them.
func dialSmallWindow(t *testing.T, s *Server) *rawConn {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var err error
		rc.Control(func(fd uintptr) {
			err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4<<10)
		})
		return err
	}}
	conn, err := d.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	c := &rawConn{t: t, conn: conn}
	c.rr = resp.NewReplyReader(io.TeeReader(bufio.NewReader(conn), &c.raw), 0)
	return c
}
