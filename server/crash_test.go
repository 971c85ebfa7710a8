package server

import (
	"strings"
	"testing"
)

// TestScanHugeCount: SCAN takes any positive COUNT, as Redis does. A COUNT
// of 2^62 made 2*count overflow to a negative bound, and the next key
// indexed best[count]: index out of range, and the process died with
// every client.
func TestScanHugeCount(t *testing.T) {
	s := start(t, Config{})
	c := dial(t, s)
	c.do("SET", "a", "b")
	for _, n := range []string{"4611686018427387904", "4611686018427387903", "9223372036854775807", "1"} {
		if got := c.do("SCAN", "0", "COUNT", n); got != `*[$"0", *[$"a"]]` {
			t.Errorf("SCAN 0 COUNT %s: %s", n, got)
		}
	}
	for i := 0; i < 40; i++ {
		c.do("SET", string(rune('b'+i)), "v")
	}
	if got := c.do("SCAN", "0", "COUNT", "4611686018427387904", "MATCH", "a"); got != `*[$"0", *[$"a"]]` {
		t.Errorf("SCAN 0 COUNT 2^62 over 41 keys: %s", got)
	}
	if got := c.do("PING"); got != "+PONG" {
		t.Fatalf("PING after SCAN: %s", got)
	}
}

// TestErrorEchoBounded: an error reply that names an argument quotes at
// most 128 bytes of it, as Redis's "%.128s" does for subcommands: a
// client's 64 KiB option made a 64 KiB error line (a second copy of the
// argument, up to MaxBulk, and a line that line-reading clients refuse).
func TestErrorEchoBounded(t *testing.T) {
	s := start(t, Config{})
	c := dial(t, s)
	long := strings.Repeat("y", 65536)
	cut := strings.Repeat("y", 128)
	for _, tc := range [][]string{
		{"-ERR Unsupported option " + cut, "EXPIRE", "a", "10", long},
		{"-ERR Syntax error in HELLO option '" + cut + "'", "HELLO", "3", long},
		{"-ERR unknown subcommand '" + cut + "'. Try CLIENT HELP.", "CLIENT", long},
		{"-ERR Unrecognized option '" + cut + "'", "CLIENT", "SETINFO", long, "x"},
		{"-ERR unknown subcommand '" + cut + "'. Try COMMAND HELP.", "COMMAND", long},
		{"-ERR Unknown option or number of arguments for CONFIG SET - '" + cut + "'", "CONFIG", "SET", long, "x"},
		{"-ERR unknown subcommand '" + cut + "'. Try CONFIG HELP.", "CONFIG", long},
	} {
		c.send(tc[1:]...)
		_, raw := c.read()
		if got := strings.TrimSuffix(string(raw), "\r\n"); got != tc[0] {
			t.Errorf("%s %s …: %d bytes: %.80q…", tc[1], tc[2], len(got), got)
		}
	}
}
