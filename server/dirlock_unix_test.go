//go:build unix && !solaris && !aix

package server

import (
	"bytes"
	"log"
	"strings"
	"syscall"
	"testing"
)

// TestDirLockUnsupported: on a file system without flock (NFS without a
// lock daemon answers ENOLCK) the server starts, unlocked, and says so,
// as before the directory lock existed, instead of refusing to start.
func TestDirLockUnsupported(t *testing.T) {
	orig := flock
	flock = func(int, int) error { return syscall.ENOLCK }
	defer func() { flock = orig }()
	var buf bytes.Buffer
	s := start(t, Config{Dir: t.TempDir(), Logger: log.New(&buf, "", 0)})
	c := dial(t, s)
	if got := c.do("BF.ADD", "f", "x"); got != ":1" {
		t.Fatalf("BF.ADD on an unlocked directory: %s", got)
	}
	if !strings.Contains(buf.String(), "no lock on this file system") {
		t.Fatalf("no warning logged: %q", buf.String())
	}
}
