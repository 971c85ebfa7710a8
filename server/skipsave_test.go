package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// snapFile returns the snapshot's file info (nil if there is none).
func snapFile(t *testing.T, dir string) os.FileInfo {
	t.Helper()
	st, err := os.Stat(filepath.Join(dir, snapName))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// rewritten reports whether the snapshot is another file than before (a
// snapshot is written to a temporary file renamed over the old one).
func rewritten(t *testing.T, dir string, before os.FileInfo) bool {
	t.Helper()
	now := snapFile(t, dir)
	return now == nil || before == nil || !os.SameFile(now, before)
}

func changes(t *testing.T, c *rawConn) string {
	t.Helper()
	c.send("INFO", "persistence")
	v, _ := c.read()
	for _, line := range strings.Split(string(v.Str), "\r\n") {
		if v, ok := strings.CutPrefix(line, "rdb_changes_since_last_save:"); ok {
			return v
		}
	}
	t.Fatal("no rdb_changes_since_last_save in INFO")
	return ""
}

// TestShutdownSkipsUnchangedSnapshot: a graceful stop takes no snapshot
// when nothing changed since the last one (a 1.8 GiB dataset took 12 s to
// save again at every stop), and the next start reproduces the state
// exactly: after a SAVE; after a start that loaded the snapshot alone;
// after a start that replayed a log (the replayed records are changes the
// snapshot lacks: the stop takes one, and the log is folded into it);
// after expiry deleted a key (a change). An explicit SAVE, BGSAVE or
// SHUTDOWN SAVE takes one anyway, as Redis does; the interval does not.
func TestShutdownSkipsUnchangedSnapshot(t *testing.T) {
	var items []string
	for i := 0; i < 50; i++ {
		items = append(items, fmt.Sprint("i", i))
	}
	dir := t.TempDir()
	cfg := Config{Dir: dir, AppendFsync: No, SaveInterval: 50 * time.Millisecond}
	s := start(t, cfg)
	c := dial(t, s)
	for _, cmd := range [][]string{
		{"BF.RESERVE", "bf", "0.01", "10", "EXPANSION", "2"},
		{"CF.RESERVE", "cf", "64", "BUCKETSIZE", "2", "EXPANSION", "2"},
		{"CMS.INITBYDIM", "cms", "50", "4"},
		{"SET", "s", "v", "EX", "1000"},
	} {
		c.do(cmd...)
	}
	for _, it := range items {
		c.do("BF.ADD", "bf", it)
		c.do("CF.ADD", "cf", it)
		c.do("CMS.INCRBY", "cms", it, "2")
	}
	// A load in progress: the header of bf's dump and its first chunk.
	c.send("BF.SCANDUMP", "bf", "0")
	h, _ := c.read()
	c.do("BF.LOADCHUNK", "part", fmt.Sprint(h.Elems[0].Int), string(h.Elems[1].Str))
	c.send("BF.SCANDUMP", "bf", fmt.Sprint(h.Elems[0].Int))
	d, _ := c.read()
	c.do("BF.LOADCHUNK", "part", fmt.Sprint(d.Elems[0].Int), string(d.Elems[1].Str))
	if got := c.do("SAVE"); got != "+OK" {
		t.Fatal(got)
	}
	want := stateOf(t, c, items)
	snap := snapFile(t, dir)
	time.Sleep(200 * time.Millisecond) // intervals pass: nothing to save
	if rewritten(t, dir, snap) {
		t.Fatal("the interval took a snapshot of an unchanged dataset")
	}

	stop := func(what string, wantSaved bool) {
		t.Helper()
		before := snapFile(t, dir)
		if err := s.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		if saved := rewritten(t, dir, before); saved != wantSaved {
			t.Fatalf("%s: the stop took a snapshot: %v, want %v", what, saved, wantSaved)
		}
		s = start(t, cfg)
		c = dial(t, s)
		if got := stateOf(t, c, items); got != want {
			t.Fatalf("%s: the state after the restart differs:\n%s\nbefore:\n%s", what, got, want)
		}
	}
	stop("after SAVE", false)
	if got := changes(t, c); got != "0" {
		t.Fatalf("rdb_changes_since_last_save %s after loading the snapshot alone", got)
	}
	stop("after a start from the snapshot alone", false)

	// Writes after the snapshot, then a crash: the next start replays
	// them, and its stop must take a snapshot holding them.
	c.do("BF.ADD", "bf", "late")
	c.do("CF.ADD", "cf", "late")
	c.do("SET", "gone", "x", "PX", "1")
	items = append(items, "late")
	s.Close() // as a crash leaves the files
	s = start(t, cfg)
	c = dial(t, s)
	if got := changes(t, c); got == "0" {
		t.Fatal("rdb_changes_since_last_save 0 after a start that replayed a log")
	}
	// Active expiry deletes "gone"; the interval saves.
	for i := 0; i < 250 && (changes(t, c) != "0" || c.do("DBSIZE") != ":5"); i++ {
		time.Sleep(20 * time.Millisecond)
	}
	if got := changes(t, c); got != "0" {
		t.Fatalf("rdb_changes_since_last_save %s: the interval did not save the replayed records", got)
	}
	want = stateOf(t, c, items)
	if strings.Contains(want, "gone") {
		t.Fatal("gone did not expire")
	}
	files := logFiles(t, dir)
	if st, err := os.Stat(files[len(files)-1]); err != nil || st.Size() != aofHeaderLen || len(files) != 1 {
		t.Fatalf("log after the interval snapshot: %v %v", files, err)
	}
	stop("after a start that replayed a log, then an interval snapshot", false)

	// The same without the interval: the stop takes the snapshot.
	cfg.SaveInterval = 0
	c.do("BF.ADD", "bf", "later")
	items = append(items, "later")
	s.Close()
	s = start(t, cfg)
	c = dial(t, s)
	want = stateOf(t, c, items)
	stop("after a start that replayed a log", true)
	stop("after a start from that snapshot", false)

	// A key that expires after the snapshot: its deletion is a change.
	c.do("SET", "brief", "x", "PX", "300")
	c.do("SAVE")
	time.Sleep(500 * time.Millisecond)
	if got := c.do("EXISTS", "brief"); got != ":0" {
		t.Fatalf("EXISTS brief: %s", got)
	}
	stop("after an expiry", true)

	// Explicit snapshots are taken even when nothing changed.
	for _, cmd := range []string{"SAVE", "BGSAVE"} {
		before := snapFile(t, dir)
		if got := c.do(cmd); strings.HasPrefix(got, "-") {
			t.Fatal(got)
		}
		for i := 0; i < 100 && !rewritten(t, dir, before); i++ {
			time.Sleep(20 * time.Millisecond)
		}
		if !rewritten(t, dir, before) {
			t.Fatalf("%s of an unchanged dataset took no snapshot", cmd)
		}
	}
	for i := 0; i < 100 && strings.Contains(c.do("INFO", "persistence"), "rdb_bgsave_in_progress:1"); i++ {
		time.Sleep(20 * time.Millisecond)
	}
	before := snapFile(t, dir)
	c.send("SHUTDOWN", "SAVE")
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("SHUTDOWN SAVE did not stop the server")
	}
	if !rewritten(t, dir, before) {
		t.Fatal("SHUTDOWN SAVE of an unchanged dataset took no snapshot")
	}
	before = snapFile(t, dir)
	s = start(t, cfg)
	c = dial(t, s)
	c.send("SHUTDOWN")
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("SHUTDOWN did not stop the server")
	}
	if rewritten(t, dir, before) {
		t.Fatal("SHUTDOWN of an unchanged dataset took a snapshot")
	}
	s = start(t, cfg)
	if got := stateOf(t, dial(t, s), items); got != want {
		t.Fatalf("the state after SHUTDOWN SAVE and SHUTDOWN differs:\n%s\nbefore:\n%s", got, want)
	}
}
