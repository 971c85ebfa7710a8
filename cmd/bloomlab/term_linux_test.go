package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// openPTY opens a pseudo-terminal: the controlling side and the terminal
// a program sees. It skips the test where the system has no /dev/ptmx.
func openPTY(t *testing.T) (master, tty *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Skipf("no pseudo-terminal: unlock: %v", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Skipf("no pseudo-terminal: number: %v", e)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}

// TestStdinTerminalNotice: a command that reads its keys from standard
// input says so when that is a terminal, before it waits (issue 21: `build
// -o redis://…` without a key file waited silently, as cat does), and
// still reads what is typed there; a pipe or /dev/null gets no notice.
func TestStdinTerminalNotice(t *testing.T) {
	t.Chdir(t.TempDir())
	master, tty := openPTY(t)
	if !isTerminal(tty) {
		t.Fatal("isTerminal(pty) = false")
	}
	// Typed keys, then Ctrl-D at the start of a line: end of input.
	if _, err := master.WriteString("alice\nbob\n\x04"); err != nil {
		t.Fatal(err)
	}
	var o, e bytes.Buffer
	code := exitCode(run([]string{"build", "-kind", "bloom", "-n", "100", "-fpr", "0.01", "-o", "t.blf"}, tty, &o, &e))
	if code != 0 {
		t.Fatalf("build from the terminal: exit %d: %s", code, e.String())
	}
	if !strings.Contains(e.String(), "reading keys from standard input") || !strings.Contains(e.String(), "Ctrl-D") {
		t.Errorf("no notice on a terminal: stderr %q", e.String())
	}
	out, errs, code := invoke([]string{"query", "t.blf", "-"}, "alice\ncarol\n")
	if code != 0 || !strings.Contains(out, "alice") {
		t.Fatalf("the typed keys were not added: exit %d, %q %q", code, out, errs)
	}
	if strings.Contains(errs, "reading keys") {
		t.Errorf("notice for a non-terminal standard input: %q", errs)
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if isTerminal(null) {
		t.Errorf("isTerminal(%s) = true: a character device is not a terminal", os.DevNull)
	}
	e.Reset()
	if code := exitCode(run([]string{"build", "-kind", "bloom", "-n", "100", "-fpr", "0.01", "-o", "empty.blf"}, null, &o, &e)); code != 0 || e.Len() != 0 {
		t.Errorf("build < %s: exit %d, stderr %q", os.DevNull, code, e.String())
	}
}

// TestOutputDevNull: `-o -` refuses a terminal (a filter is binary) but
// not /dev/null, which is a character device and was taken for one.
func TestOutputDevNull(t *testing.T) {
	t.Chdir(t.TempDir())
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	var e bytes.Buffer
	if code := exitCode(run([]string{"build", "-kind", "bloom", "-n", "100", "-fpr", "0.01", "-o", "-"}, strings.NewReader("a\n"), null, &e)); code != 0 {
		t.Errorf("build -o - > %s: exit %d: %s", os.DevNull, code, e.String())
	}
	_, tty := openPTY(t)
	e.Reset()
	if code := exitCode(run([]string{"build", "-kind", "bloom", "-n", "100", "-fpr", "0.01", "-o", "-"}, strings.NewReader("a\n"), tty, &e)); code != 2 || !strings.Contains(e.String(), "terminal") {
		t.Errorf("build -o - on a terminal: exit %d: %s", code, e.String())
	}
}
