package server

import (
	"testing"
	"time"
)

// TestReplayIgnoresExpiry: a key that had an expiry time and lost it
// (PERSIST, or a write after a later EXPIRE) survives a crash whatever
// the clock says at restart. The log holds PEXPIREAT k t before PERSIST
// k; replayed after t, a replay that expires keys deleted k at the
// PERSIST (answered 0 there instead of 1), losing the acknowledged
// BF.ADDs: a false negative.
func TestReplayIgnoresExpiry(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Dir: dir, AppendFsync: Always}
	s := start(t, cfg)
	c := dial(t, s)
	if got := c.do("BF.RESERVE", "k", "0.001", "1000"); got != "+OK" {
		t.Fatal(got)
	}
	c.do("BF.ADD", "k", "a")
	if got := c.do("PEXPIRE", "k", "200"); got != ":1" {
		t.Fatal(got)
	}
	if got := c.do("PERSIST", "k"); got != ":1" {
		t.Fatal(got)
	}
	c.do("BF.ADD", "k", "b")
	// A second key: its expiry is replaced by a later one, then it is
	// written to; at restart the first time has passed, the second not.
	c.do("BF.ADD", "j", "a")
	c.do("PEXPIRE", "j", "200")
	c.do("PEXPIRE", "j", "100000")
	c.do("BF.ADD", "j", "b")
	c.do("BF.ADD", "gone", "a") // expires for good
	c.do("PEXPIRE", "gone", "200")
	time.Sleep(300 * time.Millisecond)
	s = restart(t, s, cfg)
	c = dial(t, s)
	for _, key := range []string{"k", "j"} {
		for _, item := range []string{"a", "b"} {
			if got := c.do("BF.EXISTS", key, item); got != ":1" {
				t.Errorf("%s %s absent after the restart: %s", key, item, got)
			}
		}
	}
	if got := c.do("BF.INFO", "k", "CAPACITY"); got != "*[:1000]" {
		t.Errorf("k's capacity after the restart: %s", got)
	}
	if got := c.do("TTL", "k"); got != ":-1" {
		t.Errorf("TTL k after the restart: %s", got)
	}
	if got := c.do("EXISTS", "gone"); got != ":0" {
		t.Errorf("EXISTS gone after the restart: %s (its time has passed)", got)
	}
}
