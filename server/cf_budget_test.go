package server

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// cfSize returns CF.INFO's Size of key.
func cfSize(t *testing.T, c *rawConn, key string) int64 {
	t.Helper()
	info := c.do("CF.INFO", key)
	_, rest, ok := strings.Cut(info, "+Size, :")
	if !ok {
		t.Fatalf("CF.INFO %s: %s", key, info)
	}
	n, err := strconv.ParseInt(rest[:strings.IndexByte(rest, ',')], 10, 64)
	if err != nil {
		t.Fatalf("CF.INFO %s: %s", key, info)
	}
	return n
}

// Copies of one key take a slot each, so they force a growth every 2b
// copies (CF.RESERVE … EXPANSION 2: the table doubles every 4 copies of
// one key; 4 GiB at 88 adds). Under -maxmemory each growth is reserved
// first and refused with OOM, changing nothing, and the cuckoo package's
// default budget does not stand in the way of the limit (the server lifts
// it, and a replay repeats what was acknowledged). With -no-maxmemory the
// package's default budget (2^30 bits for this filter, at most half the
// process's memory) refuses the growth with RedisBloom's reply to a failed
// allocation where the server used to grow until it died out of memory.
func TestCFCopiesOfOneKey(t *testing.T) {
	cfg := Config{Dir: t.TempDir(), MaxMemory: 1 << 20}
	s := start(t, cfg)
	c := dial(t, s)
	c.do("CF.RESERVE", "g", "1000", "EXPANSION", "2")
	added := 0
	for ; added < 100; added++ {
		got := c.do("CF.ADD", "g", "same")
		if got == "-"+errOOM {
			break
		}
		if got != ":1" {
			t.Fatalf("CF.ADD %d: %s", added, got)
		}
	}
	if added == 100 || cfSize(t, c, "g") > 1<<20 {
		t.Fatalf("%d copies added, %d bytes", added, cfSize(t, c, "g"))
	}
	budget := func() uint64 {
		e := s.get([]byte("g"))
		e.mu.RLock()
		defer e.mu.RUnlock()
		return e.v.(*cfValue).f.MaxBits()
	}
	if b := budget(); b != 0 {
		t.Errorf("under -maxmemory the filter keeps a budget of its own: %d bits", b)
	}
	s = restart(t, s, cfg)
	c = dial(t, s)
	if got := c.do("CF.COUNT", "g", "same"); got != fmt.Sprintf(":%d", added) {
		t.Errorf("after the replay CF.COUNT is %s, %d were added", got, added)
	}
	if b := budget(); b != 0 {
		t.Errorf("after the replay the filter has a budget of its own: %d bits", b)
	}

	if testing.Short() {
		t.Skip("the unlimited case allocates 128 MiB")
	}
	s = start(t, Config{MaxMemory: -1})
	c = dial(t, s)
	c.do("CF.RESERVE", "h", "1000", "EXPANSION", "2")
	for added = 0; added < 200; added++ {
		got := c.do("CF.ADD", "h", "same")
		if size := cfSize(t, c, "h"); size > 1<<27+1<<16 {
			t.Fatalf("after %d copies of one key the filter takes %d bytes", added, size)
		}
		if got == "-"+Dialect8.row().cfAllocText { // Dialect8's text for a growth refused
			break
		}
		if got != ":1" {
			t.Fatalf("CF.ADD %d: %s", added, got)
		}
	}
	if added == 200 {
		t.Fatal("200 copies of one key added")
	}
	if got := c.do("CF.COUNT", "h", "same"); got != fmt.Sprintf(":%d", added) {
		t.Errorf("CF.COUNT %s, %d added", got, added)
	}
}

// Extreme expansions are refused by range, never wrapped into a small
// or zero factor: 2^31, 2^63 − 1, 2^63 (not an int64), −1.
func TestCFExtremeExpansion(t *testing.T) {
	s := start(t, Config{})
	c := dial(t, s)
	rng := "-EXPANSION: value must be in the range [0, 32768]"
	expect(t, c, [][]string{
		{rng, "CF.RESERVE", "k", "100", "EXPANSION", "2147483648"},
		{rng, "CF.RESERVE", "k", "100", "EXPANSION", "9223372036854775807"},
		{"-Couldn't parse EXPANSION", "CF.RESERVE", "k", "100", "EXPANSION", "9223372036854775808"},
		{rng, "CF.RESERVE", "k", "100", "EXPANSION", "-1"},
		{rng, "CF.RESERVE", "k", "100", "EXPANSION", "-9223372036854775808"},
		{":0", "EXISTS", "k"},
		{"+OK", "CF.RESERVE", "k", "100", "EXPANSION", "32767"}, // rounded up to 32768
	})
	if got := c.do("CF.INFO", "k"); !strings.Contains(got, "+Expansion rate, :32768,") {
		t.Errorf("CF.INFO: %s", got)
	}
}
