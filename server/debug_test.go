package server

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// debugWorkload makes a key of every kind DEBUG RELOAD round-trips: a
// scaling BF of several links, a CF with deletes (and sub-filters it
// added), a sketch, strings with and without a time to live; and a BF and
// a CF load in progress (their header chunks), which it keeps as they
// are. It returns the items the state is read with.
func debugWorkload(t *testing.T, c *rawConn) []string {
	t.Helper()
	var items []string
	for i := 0; i < 200; i++ {
		items = append(items, fmt.Sprint("i", i))
	}
	ok := func(args ...string) {
		t.Helper()
		if got := c.do(args...); got[0] == '-' {
			t.Fatalf("%v: %s", args, got)
		}
	}
	ok("BF.RESERVE", "bf", "0.01", "10", "EXPANSION", "2")
	ok(append([]string{"BF.MADD", "bf"}, items...)...)
	ok("CF.RESERVE", "cf", "16", "BUCKETSIZE", "2", "EXPANSION", "1")
	ok(append([]string{"CF.INSERT", "cf", "ITEMS"}, items[:100]...)...)
	for _, it := range items[:5] { // few: more than 10% compacts (deletes: 0)
		ok("CF.DEL", "cf", it)
	}
	ok("CMS.INITBYDIM", "cms", "100", "4")
	ok("CMS.INCRBY", "cms", "i1", "5", "i2", "7")
	ok("SET", "str", "v")
	ok("SET", "exp", "w", "EX", "1000")
	ok("BF.RESERVE", "ttlbf", "0.01", "100")
	ok("PEXPIRE", "ttlbf", "5000000")
	for _, d := range [][3]string{{"BF.SCANDUMP", "bf", "BF.LOADCHUNK"}, {"CF.SCANDUMP", "cf", "CF.LOADCHUNK"}} {
		c.send(d[0], d[1], "0")
		v, _ := c.read()
		if len(v.Elems) != 2 {
			t.Fatalf("%s %s 0: %v", d[0], d[1], v)
		}
		ok(d[2], "ld"+d[1], fmt.Sprint(v.Elems[0].Int), string(v.Elems[1].Str))
	}
	if info := c.do("BF.INFO", "bf", "FILTERS"); info == "*[:1]" {
		t.Fatalf("bf has one link: %s", info)
	}
	if got := c.do("CF.DEBUG", "cf"); !containsStr(got, "deletes:5 ") {
		t.Fatalf("CF.DEBUG cf: %s", got)
	}
	return items
}

func containsStr(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// keyspaceOf is every key's value, expiry time and accounted memory.
type keySnap struct {
	v        value
	expireAt int64
	mem      int64
}

func keyspaceOf(s *Server) map[string]keySnap {
	s.db.mu.RLock()
	defer s.db.mu.RUnlock()
	m := map[string]keySnap{}
	for k, e := range s.db.m {
		m[k] = keySnap{e.v, e.expireAt, e.mem}
	}
	return m
}

// TestDebugReload: DEBUG RELOAD answers +OK and every client-visible
// read (stateOf: types, infos, full dumps, counts, strings, CF.DEBUG's
// deletes) is the same after it; each filter, sketch and string is a new
// value (it went through the snapshot's encoding and decoding), a load
// in progress is the very same value, expiry times and accounted memory
// are unchanged, and nothing is logged. With a directory it also takes a
// snapshot (as Redis writes its RDB), and a restart after it gives the
// same state. Before DEBUG existed it answered "ERR unknown command".
func TestDebugReload(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Dir: dir, AppendFsync: Always}
	s := start(t, cfg)
	c := dial(t, s)
	items := debugWorkload(t, c)
	want := stateOf(t, c, items)
	wantDebug := c.do("CF.DEBUG", "cf")
	before := keyspaceOf(s)

	check := func(what string, s *Server, c *rawConn, fresh bool) {
		t.Helper()
		if got := stateOf(t, c, items); got != want {
			t.Errorf("%s: state differs:\n got %s\nwant %s", what, got, want)
		}
		if got := c.do("CF.DEBUG", "cf"); got != wantDebug {
			t.Errorf("%s: CF.DEBUG cf = %s, want %s", what, got, wantDebug)
		}
		if !fresh {
			return
		}
		after := keyspaceOf(s)
		if len(after) != len(before) {
			t.Fatalf("%s: %d keys, was %d", what, len(after), len(before))
		}
		for k, b := range before {
			a := after[k]
			loading := k == "ldbf" || k == "ldcf"
			switch {
			case loading && a.v != b.v:
				t.Errorf("%s: load in progress %s was replaced", what, k)
			case !loading && a.v == b.v:
				t.Errorf("%s: %s was not reloaded (same value)", what, k)
			}
			if a.expireAt != b.expireAt || a.mem != b.mem {
				t.Errorf("%s: %s expiry %d mem %d, was %d %d", what, k, a.expireAt, a.mem, b.expireAt, b.mem)
			}
		}
		before = after
	}

	// NOSAVE: the round trip alone; the log does not change.
	if got := c.do("SAVE"); got != "+OK" {
		t.Fatal(got)
	}
	logPath := filepath.Join(dir, logName(s.aof.gen))
	st0, _ := os.Stat(logPath)
	dirty0 := s.persist.dirty.Load()
	if got := c.do("DEBUG", "RELOAD", "NOSAVE"); got != "+OK" {
		t.Fatalf("DEBUG RELOAD NOSAVE: %s", got)
	}
	check("after DEBUG RELOAD NOSAVE", s, c, true)
	if st1, _ := os.Stat(logPath); st1.Size() != st0.Size() || s.persist.dirty.Load() != dirty0 {
		t.Errorf("the log changed: %d bytes, was %d; dirty %d, was %d", st1.Size(), st0.Size(), s.persist.dirty.Load(), dirty0)
	}

	// The plain form also takes a snapshot.
	c.do("SET", "str2", "x")
	c.do("DEL", "str2")
	gen := s.aof.gen
	if got := c.do("DEBUG", "reload"); got != "+OK" {
		t.Fatalf("DEBUG reload: %s", got)
	}
	check("after DEBUG reload", s, c, true)
	if s.aof.gen == gen || s.persist.dirty.Load() != 0 {
		t.Errorf("DEBUG RELOAD did not snapshot: generation %d (was %d), %d changes since", s.aof.gen, gen, s.persist.dirty.Load())
	}

	// A restart from what it wrote gives the same state.
	s = restart(t, s, cfg)
	c = dial(t, s)
	check("after a restart", s, c, false)

	// Without a directory: the round trip alone.
	s2 := start(t, Config{})
	c2 := dial(t, s2)
	debugWorkload(t, c2)
	before = keyspaceOf(s2)
	if got := c2.do("DEBUG", "RELOAD"); got != "+OK" {
		t.Fatalf("DEBUG RELOAD without a directory: %s", got)
	}
	check("without a directory", s2, c2, true)
}

// TestDebugReloadOOM: a round trip whose decoded copies do not fit under
// MaxMemory is refused with Redis's OOM text and changes nothing.
func TestDebugReloadOOM(t *testing.T) {
	s := start(t, Config{MaxMemory: plusClients(4<<20, 1)})
	c := dial(t, s)
	if got := c.do("BF.RESERVE", "big", "0.0001", "1000000", "NONSCALING"); got != "+OK" {
		t.Fatal(got)
	}
	c.do("BF.ADD", "big", "a")
	c.do("PING")
	before := keyspaceOf(s)
	if b := before["big"].mem; b < 2<<20 {
		t.Fatalf("big accounts %d bytes", b)
	}
	limitKeys(s, 1<<20) // room for 1 MiB, the copy needs more
	mem := s.mem.Load()
	if got := c.do("DEBUG", "RELOAD"); got != "-"+errOOM {
		t.Fatalf("DEBUG RELOAD over the limit: %s", got)
	}
	after := keyspaceOf(s)
	if after["big"] != before["big"] {
		t.Errorf("the refused reload changed big")
	}
	if got := s.mem.Load(); got > mem+1024 || got < mem-1024 { // the connection's buffers may move a little
		t.Errorf("accounted memory %d after the refusal, was %d: the reservation was not given back", got, mem)
	}
	if got := c.do("BF.EXISTS", "big", "a"); got != ":1" {
		t.Errorf("BF.EXISTS big a: %s", got)
	}
	limitKeys(s, 8<<20)
	if got := c.do("DEBUG", "RELOAD"); got != "+OK" {
		t.Fatalf("DEBUG RELOAD with room: %s", got)
	}
	if keyspaceOf(s)["big"].v == before["big"].v {
		t.Errorf("big was not reloaded")
	}
}

// TestDebugRefusals: DEBUG's other subcommands, its arity and RELOAD's
// unknown options are refused with Redis 7's texts; MERGE and NOFLUSH
// (which load a file over the keyspace) are refused; inside MULTI the
// reload runs at EXEC, or is refused there when it would save.
func TestDebugRefusals(t *testing.T) {
	s := start(t, Config{})
	c := dial(t, s)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"DEBUG"}, "-ERR wrong number of arguments for 'debug' command"},
		{[]string{"DEBUG", "FOO"}, "-ERR unknown subcommand or wrong number of arguments for 'FOO'. Try DEBUG HELP."},
		{[]string{"DEBUG", "sleep", "0"}, "-ERR unknown subcommand or wrong number of arguments for 'sleep'. Try DEBUG HELP."},
		{[]string{"DEBUG", "RELOAD", "x"}, "-ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options."},
		{[]string{"DEBUG", "RELOAD", "MERGE"}, "-ERR DEBUG RELOAD MERGE and NOFLUSH are not supported here (they load a file over the keyspace)"},
		{[]string{"DEBUG", "RELOAD", "noflush"}, "-ERR DEBUG RELOAD MERGE and NOFLUSH are not supported here (they load a file over the keyspace)"},
	} {
		if got := c.do(tc.args...); got != tc.want {
			t.Errorf("%v: %s, want %s", tc.args, got, tc.want)
		}
	}
	// Inside MULTI the reload runs at EXEC, unless it would save.
	c.do("SET", "k", "v")
	for _, tc := range []struct {
		dir  bool
		args []string
		want string
	}{
		{false, []string{"DEBUG", "RELOAD"}, "*[+OK, +OK]"},
		{true, []string{"DEBUG", "RELOAD", "NOSAVE"}, "*[+OK, +OK]"},
		{true, []string{"DEBUG", "RELOAD"}, "*[-ERR DEBUG RELOAD inside MULTI is not supported here with a directory (it would save): use DEBUG RELOAD NOSAVE, +OK]"},
	} {
		c := c
		if tc.dir {
			c = dial(t, start(t, Config{Dir: t.TempDir()}))
		}
		c.do("MULTI")
		c.do(tc.args...)
		c.do("SET", "k", "w")
		if got := c.do("EXEC"); got != tc.want {
			t.Errorf("dir %v: MULTI, %v, SET, EXEC: %s, want %s", tc.dir, tc.args, got, tc.want)
		}
		if got := c.do("GET", "k"); got != `$"w"` {
			t.Errorf("GET k after the transaction: %s", got)
		}
	}
}

// TestDebugReloadLongChain: RedisBloom's
// test_load_bloom_with_large_number_of_filters (error 0.0001, capacity 1,
// EXPANSION 1, 5000 adds: 1061 links whose rates reach subnormal doubles)
// reloads, and a restart from the snapshot DEBUG RELOAD took gives the
// same state. Before the scalable fix the reload was refused (its
// decoding failed at link 1008) and the server refused to start from
// that snapshot.
func TestDebugReloadLongChain(t *testing.T) {
	cfg := Config{Dir: t.TempDir(), AppendFsync: No}
	s := start(t, cfg)
	c := dial(t, s)
	c.do("BF.RESERVE", "poc", "0.0001", "1", "EXPANSION", "1")
	args := []string{"BF.MADD", "poc"}
	for i := 10000; i < 15000; i++ {
		args = append(args, fmt.Sprint(i))
	}
	c.do(args...)
	items := args[2:12]
	want := stateOf(t, c, items)
	if got := c.do("DEBUG", "RELOAD"); got != "+OK" {
		t.Fatalf("DEBUG RELOAD: %s", got)
	}
	if got := stateOf(t, c, items); got != want {
		t.Errorf("state after DEBUG RELOAD differs")
	}
	s = restart(t, s, cfg)
	c = dial(t, s)
	if got := stateOf(t, c, items); got != want {
		t.Errorf("state after a restart differs")
	}
}
