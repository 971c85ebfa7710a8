package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
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

// stateOf renders everything a client can read of the keyspace, except
// times to live (only whether a key has one): every key's type, its
// filter's or sketch's info, its full dump (BF.SCANDUMP, CF.SCANDUMP:
// the exact bits), a sketch's counts for the items, a string's value.
func stateOf(t *testing.T, c *rawConn, items []string) string {
	t.Helper()
	c.send("KEYS", "*")
	v, _ := c.read()
	var keys []string
	for _, e := range v.Elems {
		keys = append(keys, string(e.Str))
	}
	sort.Strings(keys)
	var b strings.Builder
	dump := func(cmd, key string) {
		for it := "0"; ; {
			c.send(cmd, key, it)
			v, _ := c.read()
			if v.Kind == '-' || len(v.Elems) != 2 {
				fmt.Fprintf(&b, " %s %s: %v", cmd, it, v)
				return
			}
			fmt.Fprintf(&b, " %s %s: %x", cmd, it, v.Elems[1].Str)
			it = fmt.Sprint(v.Elems[0].Int)
			if it == "0" {
				return
			}
		}
	}
	for _, k := range keys {
		typ := c.do("TYPE", k)
		ttl := c.do("TTL", k)
		fmt.Fprintf(&b, "%s %s ttl>0=%v:", k, typ, ttl != ":-1")
		switch typ {
		case "+MBbloom--":
			b.WriteString(" " + c.do("BF.INFO", k))
			dump("BF.SCANDUMP", k)
			b.WriteString(" " + c.do("BF.CARD", k))
			b.WriteString(" " + c.do(append([]string{"BF.MEXISTS", k}, items...)...))
		case "+MBbloomCF":
			b.WriteString(" " + c.do("CF.INFO", k))
			dump("CF.SCANDUMP", k)
			for _, it := range items {
				b.WriteString(" " + c.do("CF.COUNT", k, it))
			}
		case "+CMSk-TYPE":
			b.WriteString(" " + c.do("CMS.INFO", k))
			b.WriteString(" " + c.do(append([]string{"CMS.QUERY", k}, items...)...))
		case "+string":
			b.WriteString(" " + c.do("GET", k))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestRestartReproducesState: after a workload of every write command
// (filters that grow, deletes, compaction, sketches, merges, loads in
// progress, renames, expiry times, MULTI/EXEC), a restart from the log
// alone (with and without a memory limit at the first run), from a
// snapshot taken mid-way plus the log after it, and from a final snapshot, answers every read exactly as before: replay and the
// snapshot's round trip are deterministic, so no reply (BF.CARD, BF.INFO,
// CF.COUNT, CMS.QUERY, a dump) reports a state that a crash changes.
func TestRestartReproducesState(t *testing.T) {
	var items []string
	for i := 0; i < 300; i++ {
		items = append(items, fmt.Sprint("i", i))
	}
	tight := false // a memory limit refuses some growth
	refusals := 0
	workload := func(t *testing.T, c *rawConn, from, to int, mid func()) {
		t.Helper()
		for i := from; i < to; i++ {
			if i == (from+to)/2 && mid != nil {
				mid()
			}
			it := items[i]
			for _, cmd := range [][]string{
				{"BF.ADD", "bf", it},
				{"BF.INSERT", "bfi", "CAPACITY", "7", "EXPANSION", "3", "ITEMS", it, it + "x"},
				{"BF.INSERT", "bfn", "CAPACITY", "40", "NONSCALING", "ITEMS", it},
				{"CF.ADD", "cf", it},
				{"CF.ADDNX", "cf", it + "n"},
				{"CF.INSERT", "cfi", "CAPACITY", "64", "ITEMS", it, it},
				{"CMS.INCRBY", "cm", it, fmt.Sprint(i % 7), "hot", "1"},
			} {
				c.send(cmd...)
				v, raw := c.read()
				if bytes.Contains(raw, []byte("OOM")) || bytes.Contains(raw, []byte(":-1")) {
					refusals++
				}
				if v.Kind == '-' && cmd[0] != "BF.INSERT" && !(tight && strings.HasPrefix(v.String(), "-OOM")) {
					t.Fatalf("%v: %v", cmd, v)
				}
			}
			if i%5 == 0 {
				c.do("CF.DEL", "cf", items[i/2])
				c.do("CF.DEL", "cfi", it)
			}
			if i%50 == 0 {
				c.do("CF.COMPACT", "cfi")
				c.do("CMS.MERGE", "cm2", "2", "cm", "cm2", "WEIGHTS", "2", "1")
				c.do("SET", fmt.Sprint("s", i), it, "EX", "1000")
				c.do("RENAME", "bfi", fmt.Sprint("bfi", i))
				c.do("BF.RESERVE", "bfi", "0.01", "7", "EXPANSION", "3")
				c.do("MULTI")
				c.do("BF.ADD", "tx", it)
				c.do("CF.ADD", "tx-cf", it)
				c.do("EXPIRE", "tx", "1000")
				c.do("EXEC")
			}
		}
	}
	for _, mode := range []string{"log", "log, maxmemory", "log, tight maxmemory", "snapshot mid-way", "final snapshot"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			cfg := Config{Dir: dir, AppendFsync: No, MaxMemory: -1}
			if mode == "log, maxmemory" {
				// Under a limit inserts take the paths that reserve memory
				// before growing (cuckoo's AddHashReserve, scalable's
				// Room); replay takes the unlimited ones, which must end in
				// the same state.
				cfg.MaxMemory = 1 << 30
			}
			tight, refusals = mode == "log, tight maxmemory", 0
			if tight {
				// Refusals for memory (a chain's or a cuckoo filter's
				// growth) are not logged and not replayed: replay, without
				// the limit, must not grow where the first run refused.
				// Client memory counts too: the limit is set once the
				// connection's buffers have grown (a warm-up), with 12000
				// bytes left for keys.
				cfg.MaxMemory = 1 << 40
			}
			s := start(t, cfg)
			c := dial(t, s)
			if tight {
				warm := []string{"EXISTS"}
				for i := 0; i < 400; i++ {
					warm = append(warm, fmt.Sprint("w", i))
				}
				c.do(warm...)
				c.do("ECHO", strings.Repeat("x", 12<<10))
				limitKeys(s, 12000)
			}
			c.do("CMS.INITBYDIM", "cm", "50", "4")
			c.do("CMS.INITBYDIM", "cm2", "50", "4")
			c.do("CF.RESERVE", "cf", "64", "BUCKETSIZE", "2", "EXPANSION", "2")
			var mid func()
			if mode == "snapshot mid-way" {
				mid = func() {
					if got := c.do("SAVE"); got != "+OK" {
						t.Fatal(got)
					}
				}
			}
			workload(t, c, 0, 150, mid)
			// Loads in progress: half of a BF dump and of a CF dump.
			for _, x := range [][3]string{{"BF.SCANDUMP", "BF.LOADCHUNK", "bf"}, {"CF.SCANDUMP", "CF.LOADCHUNK", "cf"}} {
				c.send(x[0], x[2], "0")
				h, _ := c.read()
				if got := c.do(x[1], "part-"+x[2], fmt.Sprint(h.Elems[0].Int), string(h.Elems[1].Str)); got != "+OK" {
					t.Fatalf("%s header: %s", x[1], got)
				}
				c.send(x[0], x[2], fmt.Sprint(h.Elems[0].Int))
				d, _ := c.read()
				if got := c.do(x[1], "part-"+x[2], fmt.Sprint(d.Elems[0].Int), string(d.Elems[1].Str)); got != "+OK" {
					t.Fatalf("%s chunk: %s", x[1], got)
				}
			}
			workload(t, c, 150, 300, mid)
			want := stateOf(t, c, items)
			if tight && refusals < 10 {
				t.Fatalf("only %d refusals for memory: the limit tests little", refusals)
			}
			if mode == "final snapshot" {
				if err := s.Shutdown(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			s = restart(t, s, cfg)
			got := stateOf(t, dial(t, s), items)
			if got != want {
				gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
				for i := 0; i < len(gl) || i < len(wl); i++ {
					var g, w string
					if i < len(gl) {
						g = gl[i]
					}
					if i < len(wl) {
						w = wl[i]
					}
					if g != w {
						t.Errorf("after the restart:\n%.600s\nbefore:\n%.600s", g, w)
					}
				}
			}
		})
	}
}

// TestDirInUse: a second server on a directory in use is refused. Both
// would append to the same log file, each at its own offset, and
// overwrite each other's records: before the lock, B's acknowledged add
// was overwritten by A's next record and absent after a restart.
func TestDirInUse(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Dir: dir, AppendFsync: Always}
	a := start(t, cfg)
	ca := dial(t, a)
	ca.do("BF.ADD", "f", "a1")
	b, err := Run(cfg)
	if err == nil {
		t.Cleanup(func() { b.Close() })
		cb := dial(t, b)
		if got := cb.do("BF.ADD", "g", "b1"); got != ":1" {
			t.Fatal(got)
		}
		ca.do("BF.ADD", "f", "a2")
		a.Close()
		b.Close()
		s, err := Run(cfg)
		if err != nil {
			t.Fatalf("a second server was allowed on the directory; the restart then fails: %v", err)
		}
		defer s.Close()
		c := dial(t, s)
		t.Fatalf("a second server was allowed on the directory in use: after a restart, B's acknowledged add: %s, A's: %s %s",
			c.do("BF.EXISTS", "g", "b1"), c.do("BF.EXISTS", "f", "a1"), c.do("BF.EXISTS", "f", "a2"))
	}
	if !strings.Contains(err.Error(), "in use") {
		t.Errorf("second server's error: %v", err)
	}
	// A runs on; once it is closed the directory is free again.
	if got := ca.do("BF.ADD", "f", "a2"); got != ":1" {
		t.Fatal(got)
	}
	s := restart(t, a, cfg)
	if got := dial(t, s).do("BF.MEXISTS", "f", "a1", "a2"); got != "*[:1, :1]" {
		t.Fatalf("after the restart: %s", got)
	}
}

// TestNoReplyAfterLostRecords: once the log has failed, no reply reports
// a state that holds writes the log lost. Client Z's fsync is held and
// then fails; meanwhile A's BF.ADD x changed the filter (its record waits
// behind Z's and is never written) and B's BF.ADD x found x present and
// logged nothing. Before the fix B's ":0" ("already present") was sent
// once the log had failed, and x was absent after a restart: an
// acknowledged key lost. Reads of the keyspace are refused from then on
// too (BF.EXISTS x would answer 1 from memory alone).
func TestNoReplyAfterLostRecords(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Dir: dir, AppendFsync: Always}
	s := start(t, cfg)
	z, a, b := dial(t, s), dial(t, s), dial(t, s)
	fill(t, z, "f", 0, 10)
	entered, release := make(chan struct{}), make(chan struct{})
	var armed atomic.Bool
	armed.Store(true)
	hookSync(t, func(f *os.File) error {
		if armed.CompareAndSwap(true, false) {
			close(entered)
			<-release
			return errors.New("injected fsync failure")
		}
		return f.Sync()
	})
	z.send("BF.ADD", "f", "z")
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("Z's add did not reach the fsync")
	}
	end := s.aof.appendedEnd()
	a.send("BF.ADD", "f", "x")
	for deadline := time.Now().Add(10 * time.Second); s.aof.appendedEnd() == end; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("A's add was not logged")
		}
	}
	n := s.totalCommands.Load()
	b.send("BF.ADD", "f", "x")
	for deadline := time.Now().Add(10 * time.Second); s.totalCommands.Load() == n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("B's add did not run")
		}
	}
	time.Sleep(50 * time.Millisecond) // B's add runs (it finds x) and waits for the log
	close(release)
	b.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	v, err := b.rr.Read()
	// No reply, or an error reply (if B's add ran only after the failure,
	// it was refused with MISCONF): either way B was not told x is present.
	if err == nil && v.Kind != '-' {
		t.Errorf("B's BF.ADD x answered %v after the log lost A's add", v)
	}
	c := dial(t, s)
	if got := c.do("BF.EXISTS", "f", "x"); !strings.HasPrefix(got, "-MISCONF") {
		t.Errorf("BF.EXISTS x after the failure: %s (x is in memory only)", got)
	}
	if got := c.do("PING"); got != "+PONG" {
		t.Errorf("PING after the failure: %s", got)
	}
	s = restart(t, s, cfg)
	c = dial(t, s)
	checkAll(t, c, "f", 0, 10)
	if err == nil && v.Kind != '-' && v.Int == 0 {
		t.Errorf("after the restart BF.EXISTS x: %s; B was told x was present", c.do("BF.EXISTS", "f", "x"))
	}
}

// TestStaleSnapshotTempRemoved: the temporary file of a snapshot that a
// crash interrupted is removed at the next start (the directory's lock
// says no other server writes it); before, each crash during a snapshot
// left a file of the dataset's size, until the disk filled and the log
// failed.
func TestStaleSnapshotTempRemoved(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, "."+snapName+".tmp-123")
	if err := os.WriteFile(stale, make([]byte, 1000), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(other, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	start(t, Config{Dir: dir})
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the interrupted snapshot's temporary file is still there (%v)", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("another file was removed: %v", err)
	}
}

// TestFailedRotationLeavesNoLog: a snapshot whose new log generation
// cannot be created (its header's fsync fails) leaves no file for it; the
// server goes on in the current generation. Before, the new file stayed:
// the current log was then no longer the last one, and when a crash tore
// its last record the next start refused ("in a log that is not the last
// one") instead of cutting the unacknowledged tail.
func TestFailedRotationLeavesNoLog(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Dir: dir, AppendFsync: Always}
	s := start(t, cfg)
	c := dial(t, s)
	fill(t, c, "f", 0, 10)
	var fail atomic.Bool
	fail.Store(true)
	hookSync(t, func(f *os.File) error {
		if strings.HasSuffix(f.Name(), logName(2)) && fail.Load() {
			return errors.New("injected fsync failure")
		}
		return f.Sync()
	})
	if got := c.do("SAVE"); !strings.HasPrefix(got, "-ERR snapshot failed") {
		t.Fatalf("SAVE with the new log's fsync failing: %s", got)
	}
	fail.Store(false)
	fill(t, c, "f", 10, 20)
	s.Close()
	// A crash tore a last record of the current log (never acknowledged).
	f, err := os.OpenFile(filepath.Join(dir, logName(1)), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{40, 0, 0, 0, 1, 2})
	f.Close()
	s2, err := Run(cfg)
	if err != nil {
		t.Fatalf("restart after a failed rotation and a torn record: %v", err)
	}
	defer s2.Close()
	checkAll(t, dial(t, s2), "f", 0, 20)
}

// TestSnapshotExpiryAndClockStep: a key the snapshot leaves out because
// its time has passed is gone from memory too, so that no later write can
// find it alive when the wall clock steps back. Before, the snapshot
// skipped the key but left it in memory; after the clock stepped back a
// BF.ADD added to it (logged after the snapshot) and BF.EXISTS answered 1
// for its old item, and after a restart the replayed BF.ADD created a new,
// default filter without it: an answer a crash took back.
func TestSnapshotExpiryAndClockStep(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Dir: dir, AppendFsync: Always}
	s := start(t, cfg)
	c := dial(t, s)
	c.do("BF.RESERVE", "k", "0.001", "1000")
	c.do("BF.ADD", "k", "a")
	c.do("PEXPIRE", "k", "100000")
	// Active expiry samples k (reading the clock) before the test moves
	// the clock, as it does on a loaded machine: the clock a test moves
	// is read by the server's goroutines, and must be safe to move (under
	// -race, a plain variable was reported here).
	time.Sleep(250 * time.Millisecond)
	t.Cleanup(func() { clockSkew.Store(0) })
	clockSkew.Store(200000) // the clock jumps ahead
	if got := c.do("SAVE"); got != "+OK" {
		t.Fatal(got)
	}
	clockSkew.Store(0) // and steps back
	c.do("BF.ADD", "k", "b")
	before := []string{c.do("BF.EXISTS", "k", "a"), c.do("BF.EXISTS", "k", "b"), c.do("BF.INFO", "k", "CAPACITY")}
	s = restart(t, s, cfg)
	c = dial(t, s)
	after := []string{c.do("BF.EXISTS", "k", "a"), c.do("BF.EXISTS", "k", "b"), c.do("BF.INFO", "k", "CAPACITY")}
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Fatalf("BF.EXISTS k a, BF.EXISTS k b, capacity: %v before the restart, %v after", before, after)
	}
}

// TestSnapshotAfterHarmlessFailure: after a log failure that lost
// nothing (EverySec: an fsync fails, every record is written), reads go
// on; a snapshot attempted then (SAVE, or the interval's BGSAVE: the
// dirty count stays) fails, and must leave the keyspace and the log as
// they were. Before, the snapshot first deleted a key whose time had
// passed and appended its DEL to the failed log: a record the log never
// holds, so the server counted writes as lost and refused every read
// from then on.
func TestSnapshotAfterHarmlessFailure(t *testing.T) {
	s := start(t, Config{Dir: t.TempDir(), AppendFsync: EverySec})
	c := dial(t, s)
	fill(t, c, "f", 0, 10)
	c.do("BF.ADD", "tmp", "a")
	if got := c.do("PEXPIRE", "tmp", "300"); got != ":1" {
		t.Fatal(got)
	}
	hookSync(t, func(*os.File) error { return errors.New("injected fsync failure") })
	if err := s.aof.flush(s.aof.appendedEnd(), true); err == nil {
		t.Fatal("the injected fsync failure did not fail the log")
	}
	time.Sleep(500 * time.Millisecond) // tmp's time passes (active expiry is off once the log failed)
	checkAll(t, c, "f", 0, 10)
	if got := c.do("SAVE"); !strings.HasPrefix(got, "-ERR snapshot failed") {
		t.Fatalf("SAVE on a failed log: %s", got)
	}
	if s.aof.lost() {
		t.Error("the failed snapshot appended records to the failed log")
	}
	checkAll(t, c, "f", 0, 10)
}
