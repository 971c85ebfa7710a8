package server

import (
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/bloomlab/bloomlab/internal/redistest"
)

func port(s *Server) string {
	a := s.Addr().String()
	return a[strings.LastIndexByte(a, ':')+1:]
}

// TestRedisCLI drives the server with Debian's redis-cli: plain and
// formatted output, RESP3 (-3), a password, and --pipe mass insertion.
func TestRedisCLI(t *testing.T) {
	cli := redistest.Need(t, "redis-cli")
	s := start(t, Config{Password: "pw"})
	run := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.Command(cli, append([]string{"-p", port(s), "-a", "pw", "--no-auth-warning"}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("redis-cli %v: %v\n%s", args, err, out)
		}
		return strings.TrimRight(string(out), "\n")
	}
	for _, tc := range [][]string{
		{"OK", "BF.RESERVE", "f", "0.01", "100"},
		{"1", "BF.ADD", "f", "a"},
		{"0", "BF.ADD", "f", "a"},
		{"1\n1\n0", "BF.MADD", "f", "b", "c", "a"},
		{"Capacity\n100\nSize\n240\nNumber of filters\n1\nNumber of items inserted\n3\nExpansion rate\n2", "BF.INFO", "f"},
		{"(integer) 1", "--no-raw", "BF.EXISTS", "f", "b"},
		{"1) (integer) 1\n2) (integer) 0", "--no-raw", "BF.MEXISTS", "f", "c", "zz"},
		{"1# Capacity => (integer) 100\n2# Size => (integer) 240\n3# Number of filters => (integer) 1\n4# Number of items inserted => (integer) 3\n5# Expansion rate => (integer) 2", "-3", "--no-raw", "BF.INFO", "f"},
		{"(error) ERR not found", "--no-raw", "BF.INFO", "nokey"},
		{"MBbloom--", "TYPE", "f"},
		{"OK", "CMS.INITBYDIM", "c", "100", "5"},
		{"1) (integer) 3", "-3", "--no-raw", "CMS.INCRBY", "c", "x", "3"},
		{"PONG", "PING"},
		{"(error) NOPROTO unsupported protocol version", "--no-raw", "HELLO", "4"},
	} {
		if got := run("", tc[1:]...); got != tc[0] {
			t.Errorf("redis-cli %v:\n got %q\nwant %q", tc[1:], got, tc[0])
		}
	}
	if got := run("", "-3", "INFO", "keyspace"); !strings.Contains(got, "db0:keys=2,expires=0") {
		t.Errorf("INFO keyspace: %q", got)
	}
	// Commands on standard input, one per line.
	if got := run("BF.ADD f d\nBF.EXISTS f d\nBF.CARD f\n"); got != "1\n1\n4" {
		t.Errorf("commands on stdin: %q", got)
	}
	// --pipe: 10,000 commands in the protocol, all answered.
	var b strings.Builder
	for i := 0; i < 10000; i++ {
		fmt.Fprintf(&b, "*3\r\n$6\r\nBF.ADD\r\n$4\r\npipe\r\n$%d\r\n%d\r\n", len(strconv.Itoa(i)), i)
	}
	out := run(b.String(), "--pipe")
	if !strings.Contains(out, "errors: 0, replies: 10000") {
		t.Fatalf("--pipe: %s", out)
	}
	for i := 0; i < 10000; i += 997 {
		if got := run("", "BF.EXISTS", "pipe", strconv.Itoa(i)); got != "1" {
			t.Fatalf("key %d of the pipe absent", i)
		}
	}
}
