package server

import "testing"

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
