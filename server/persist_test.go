package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bloomlab/bloomlab/bloom"
)

// restart closes s (as a crash would leave the files: no final snapshot)
// and starts a new server on the same directory.
func restart(t *testing.T, s *Server, cfg Config) *Server {
	t.Helper()
	if s != nil {
		s.Close()
	}
	return start(t, cfg)
}

func fill(t *testing.T, c *rawConn, key string, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		c.send("BF.ADD", key, fmt.Sprint("k", i))
	}
	for i := from; i < to; i++ {
		if v, _ := c.read(); v.Kind == '-' {
			t.Fatalf("BF.ADD k%d: %v", i, v)
		}
	}
}

func checkAll(t *testing.T, c *rawConn, key string, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		c.send("BF.EXISTS", key, fmt.Sprint("k", i))
	}
	for i := from; i < to; i++ {
		if v, _ := c.read(); v.Int != 1 {
			t.Fatalf("%s: k%d absent (%v): a false negative", key, i, v)
		}
	}
}

// TestPersistence: every type survives restarts through the log alone,
// through a snapshot plus the log after it, and through a snapshot taken
// while writers run (values frozen and copied on write).
func TestPersistence(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Dir: dir, AppendFsync: Always}
	s := start(t, cfg)
	c := dial(t, s)
	fill(t, c, "f", 0, 1000)
	c.do("BF.RESERVE", "ns", "0.01", "10", "NONSCALING")
	c.do("CMS.INITBYDIM", "cm", "100", "5")
	c.do("CMS.INCRBY", "cm", "a", "7")
	c.do("SET", "str", "v")
	c.do("EXPIRE", "f", "1000")
	c.do("SET", "gone", "x", "PX", "1")
	// A load in progress (header and one chunk of two).
	src := dial(t, s)
	src.do("BF.RESERVE", "src", "0.01", "50")
	for i := 0; i < 40; i++ {
		src.do("BF.ADD", "src", fmt.Sprint("s", i))
	}
	h, _ := func() (string, string) {
		c.send("BF.SCANDUMP", "src", "0")
		v, _ := c.read()
		return string(v.Elems[1].Str), ""
	}()
	c.send("BF.SCANDUMP", "src", "1")
	d, _ := c.read()
	data := string(d.Elems[1].Str)
	if got := c.do("BF.LOADCHUNK", "partial", "1", h); got != "+OK" {
		t.Fatal(got)
	}
	half := len(data) / 2
	if got := c.do("BF.LOADCHUNK", "partial", fmt.Sprint(1+half), data[:half]); got != "+OK" {
		t.Fatal(got)
	}
	infoBefore := c.do("BF.INFO", "f")
	time.Sleep(5 * time.Millisecond)

	loaded := false
	check := func(s *Server, stage string) {
		t.Helper()
		c := dial(t, s)
		checkAll(t, c, "f", 0, 1000)
		for _, x := range [][2]string{
			{c.do("BF.INFO", "f"), infoBefore},
			{c.do("CMS.QUERY", "cm", "a"), "*[:7]"},
			{c.do("GET", "str"), `$"v"`},
			{c.do("EXISTS", "gone"), ":0"},
			{c.do("TYPE", "partial"), "+MBbloom--"},
			{fmt.Sprint(loaded || strings.Contains(c.do("BF.EXISTS", "partial", "s1"), "being loaded")), "true"},
			{c.do("BF.INFO", "ns", "EXPANSION"), "*[$-1]"},
		} {
			if x[0] != x[1] {
				t.Fatalf("%s: got %s, want %s", stage, x[0], x[1])
			}
		}
		c.send("TTL", "f")
		if ttl, _ := c.read(); ttl.Int < 990 || ttl.Int > 1000 {
			t.Fatalf("%s: TTL %v", stage, ttl)
		}
	}
	s = restart(t, s, cfg)
	check(s, "log only")
	c = dial(t, s)
	if got := c.do("SAVE"); got != "+OK" {
		t.Fatal(got)
	}
	fill(t, c, "f", 1000, 1100)
	infoBefore = c.do("BF.INFO", "f")
	s = restart(t, s, cfg)
	check(s, "snapshot and log")
	c = dial(t, s)
	checkAll(t, c, "f", 1000, 1100)
	// Finish the load after the restarts: the partial state was kept.
	if got := c.do("BF.LOADCHUNK", "partial", fmt.Sprint(1+len(data)), data[half:]); got != "+OK" {
		t.Fatal(got)
	}
	for i := 0; i < 40; i++ {
		if got := c.do("BF.EXISTS", "partial", fmt.Sprint("s", i)); got != ":1" {
			t.Fatalf("loaded filter lacks s%d: %s", i, got)
		}
	}
	loaded = true

	// A snapshot while writers add: every acknowledged key survives.
	var wg sync.WaitGroup
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			c := dial(t, s)
			fill(t, c, fmt.Sprint("w", w), 0, 3000)
		}(w)
	}
	for i := 0; i < 5; i++ {
		if got := c.do("BGSAVE"); got != "+Background saving started" && got != "-ERR Background save already in progress" {
			t.Fatal(got)
		}
		time.Sleep(2 * time.Millisecond)
	}
	wg.Wait()
	s = restart(t, s, cfg)
	c = dial(t, s)
	for w := 0; w < 3; w++ {
		checkAll(t, c, fmt.Sprint("w", w), 0, 3000)
	}
	check(s, "after concurrent snapshots")
}

func logFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "bloomlab.*.aof"))
	return m
}

// TestTornTail: a log whose last record was cut short (or is followed by
// zeros, or fails its checksum, or is an unfinished MULTI block) is cut
// back to its last whole record, with a warning, and the server starts
// with everything before it.
func TestTornTail(t *testing.T) {
	for _, tc := range []struct {
		name string
		tail func(valid []byte) []byte
	}{
		{"short header", func([]byte) []byte { return []byte{5, 0, 0} }},
		{"short body", func([]byte) []byte {
			return appendRecord(nil, [][]byte{[]byte("BF.ADD"), []byte("f"), []byte("zz")})[:15]
		}},
		{"zeros", func([]byte) []byte { return make([]byte, 100) }},
		{"bad checksum", func([]byte) []byte {
			r := appendRecord(nil, [][]byte{[]byte("BF.ADD"), []byte("f"), []byte("zz")})
			r[len(r)-1] ^= 1
			return r
		}},
		{"unfinished MULTI", func([]byte) []byte {
			return append(appendRecord(nil, [][]byte{[]byte("MULTI")}), appendRecord(nil, [][]byte{[]byte("BF.ADD"), []byte("f"), []byte("zz")})...)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var logs bytes.Buffer
			cfg := Config{Dir: dir, AppendFsync: Always, Logger: log.New(&logs, "", 0)}
			s := start(t, cfg)
			c := dial(t, s)
			fill(t, c, "f", 0, 50)
			s.Close()
			files := logFiles(t, dir)
			if len(files) != 1 {
				t.Fatalf("log files %v", files)
			}
			valid, _ := os.ReadFile(files[0])
			f, _ := os.OpenFile(files[0], os.O_APPEND|os.O_WRONLY, 0)
			f.Write(tc.tail(valid))
			f.Close()
			s = start(t, cfg)
			c = dial(t, s)
			checkAll(t, c, "f", 0, 50)
			if got := c.do("BF.EXISTS", "f", "zz"); tc.name == "unfinished MULTI" && got != ":0" {
				t.Fatalf("half a MULTI block applied")
			}
			if !strings.Contains(logs.String(), "torn last record") {
				t.Fatalf("no warning: %q", logs.String())
			}
			if now, _ := os.ReadFile(files[0]); !bytes.Equal(now, valid) {
				t.Fatalf("log not cut back to %d bytes (%d)", len(valid), len(now))
			}
		})
	}
}

// TestCorruptionRefused: damage that is not a torn tail (a flipped byte
// in a record with records after it; a damaged snapshot) refuses to start,
// naming the file and the offset.
func TestCorruptionRefused(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Dir: dir, AppendFsync: Always}
	s := start(t, cfg)
	c := dial(t, s)
	fill(t, c, "f", 0, 20)
	s.Close()
	path := logFiles(t, dir)[0]
	b, _ := os.ReadFile(path)
	good := append([]byte(nil), b...)
	b[aofHeaderLen+20] ^= 0x40 // inside the first record
	os.WriteFile(path, b, 0o644)
	_, err := New(cfg)
	var le *logError
	if !errors.As(err, &le) || le.offset != aofHeaderLen || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("corrupt log: %v", err)
	}
	os.WriteFile(path, good, 0o644)

	s = start(t, cfg)
	c = dial(t, s)
	if got := c.do("SAVE"); got != "+OK" {
		t.Fatal(got)
	}
	s.Close()
	snap := filepath.Join(dir, snapName)
	b, _ = os.ReadFile(snap)
	for _, off := range []int{2, 40, len(b) - 2} {
		bad := append([]byte(nil), b...)
		bad[off] ^= 1
		os.WriteFile(snap, bad, 0o644)
		_, err := New(cfg)
		var se *snapError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), snap) || !strings.Contains(err.Error(), "offset") {
			t.Fatalf("snapshot damaged at %d: %v", off, err)
		}
	}
	os.WriteFile(snap, b[:len(b)-10], 0o644)
	if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), snap) {
		t.Fatalf("truncated snapshot: %v", err)
	}
}

// TestSnapshotAtomic: a snapshot is written to a temporary file that is
// renamed over the old one; a temporary file left by a crash is ignored,
// and the files of the log before the snapshot are removed.
func TestSnapshotAtomic(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Dir: dir}
	s := start(t, cfg)
	c := dial(t, s)
	fill(t, c, "f", 0, 10)
	c.do("SAVE")
	os.WriteFile(filepath.Join(dir, "."+snapName+".tmp-crashed"), []byte("half a snapshot"), 0o644)
	fill(t, c, "f", 10, 20)
	c.do("BGREWRITEAOF")
	for i := 0; i < 100 && c.do("INFO", "persistence") != "" && strings.Contains(c.do("INFO", "persistence"), "rdb_bgsave_in_progress:1"); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	if files := logFiles(t, dir); len(files) != 1 {
		t.Fatalf("log files after a rewrite: %v", files)
	}
	s = restart(t, s, cfg)
	checkAll(t, dial(t, s), "f", 0, 20)
}

// TestShutdownSaves: Shutdown lets connections finish, takes a final
// snapshot and leaves an empty log.
func TestShutdownSaves(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Dir: dir}
	s := start(t, cfg)
	c := dial(t, s)
	fill(t, c, "f", 0, 100)
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	files := logFiles(t, dir)
	if st, err := os.Stat(files[len(files)-1]); err != nil || st.Size() != aofHeaderLen {
		t.Fatalf("log after shutdown: %v %v", files, err)
	}
	s = start(t, cfg)
	checkAll(t, dial(t, s), "f", 0, 100)
	// SHUTDOWN from a client does the same.
	c = dial(t, s)
	c.send("SHUTDOWN")
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("SHUTDOWN did not stop the server")
	}
}

// TestLoadFile: -load serves a filter built offline as NAME's initial
// state: BF.EXISTS/MEXISTS/INFO/CARD answer it, BF.ADD adds to it, the
// additions persist, and at restart the persisted key wins over the file
// (also once deleted).
func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	f, _ := bloom.NewWithEstimates(1000, 0.01)
	for i := 0; i < 500; i++ {
		f.AddString(fmt.Sprint("k", i))
	}
	path := filepath.Join(t.TempDir(), "users.blf")
	b, _ := f.MarshalBinary()
	os.WriteFile(path, b, 0o644)
	cfg := Config{Dir: dir, Load: []Load{{Name: "users", Path: path}}}
	s := start(t, cfg)
	c := dial(t, s)
	checkAll(t, c, "users", 0, 500)
	if got := c.do("BF.INFO", "users"); !strings.HasPrefix(got, "*[+Capacity, :1000, +Size, ") || !strings.HasSuffix(got, "+Number of items inserted, :500, +Expansion rate, $-1]") {
		t.Fatalf("BF.INFO: %s", got)
	}
	if got := c.do("BF.MADD", "users", "k1", "new"); got != "*[:0, :1]" {
		t.Fatalf("BF.MADD: %s", got)
	}
	if got := c.do("BF.CARD", "users"); got != ":501" {
		t.Fatalf("BF.CARD: %s", got)
	}
	if got := c.do("BF.SCANDUMP", "users", "0"); !strings.HasPrefix(got, "-ERR this bloom filter has no RedisBloom dump") {
		t.Fatalf("SCANDUMP: %s", got)
	}
	s = restart(t, s, cfg)
	c = dial(t, s)
	if got := c.do("BF.EXISTS", "users", "new"); got != ":1" {
		t.Fatal("an add to a loaded filter did not persist")
	}
	// The file changes; the persisted key still wins.
	f2, _ := bloom.NewWithEstimates(10, 0.01)
	b2, _ := f2.MarshalBinary()
	os.WriteFile(path, b2, 0o644)
	s = restart(t, s, cfg)
	c = dial(t, s)
	checkAll(t, c, "users", 0, 500)
	c.do("DEL", "users")
	s = restart(t, s, cfg)
	if got := dial(t, s).do("EXISTS", "users"); got != ":0" {
		t.Fatal("a deleted -load key came back at restart")
	}
	// A new name is loaded at the next start; a bad file refuses to start.
	cfg.Load = append(cfg.Load, Load{Name: "more", Path: path})
	s = restart(t, s, cfg)
	if got := dial(t, s).do("BF.CARD", "more"); got != ":0" {
		t.Fatalf("new -load: %s", got)
	}
	s.Close()
	os.WriteFile(path, b[:100], 0o644)
	if _, err := New(Config{Load: []Load{{Name: "x", Path: path}}}); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("truncated -load file: %v", err)
	}
}

// TestLogFailure: once the log cannot be written, a write waiting for
// durability gets no reply (the connection closes: an error, never an
// acknowledgment) and later writes are refused with MISCONF; so are reads
// of the keyspace, which holds the lost write (BF.EXISTS lost would
// answer 1 from memory alone); PING goes on. A failure that loses nothing
// (EverySec: an fsync fails, every record is written) refuses writes and
// lets reads go on.
func TestLogFailure(t *testing.T) {
	dir := t.TempDir()
	s := start(t, Config{Dir: dir, AppendFsync: Always})
	c := dial(t, s)
	fill(t, c, "f", 0, 10)
	s.aof.io.Lock()
	s.aof.f.Close() // the disk goes away
	s.aof.io.Unlock()
	c.send("BF.ADD", "f", "lost")
	c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.rr.Read(); err == nil {
		t.Fatal("a write that could not be logged was acknowledged")
	}
	c = dial(t, s)
	if got := c.do("BF.ADD", "f", "x"); !strings.HasPrefix(got, "-MISCONF Errors writing to the AOF file") {
		t.Fatalf("write after the failure: %s", got)
	}
	for _, cmd := range [][]string{{"BF.EXISTS", "f", "lost"}, {"BF.CARD", "f"}, {"EXISTS", "f"}} {
		if got := c.do(cmd...); !strings.HasPrefix(got, "-MISCONF Errors writing to the AOF file") || !strings.Contains(got, "reads are refused") {
			t.Fatalf("%v after a failure that lost a write: %s", cmd, got)
		}
	}
	if got := c.do("PING"); got != "+PONG" {
		t.Fatalf("PING after the failure: %s", got)
	}

	s2 := start(t, Config{Dir: t.TempDir(), AppendFsync: EverySec})
	c = dial(t, s2)
	fill(t, c, "f", 0, 10)
	hookSync(t, func(*os.File) error { return errors.New("injected fsync failure") })
	c.do("BF.ADD", "f", "written") // replied once written
	if err := s2.aof.flush(s2.aof.appendedEnd(), true); err == nil {
		t.Fatal("the injected fsync failure did not fail the log")
	}
	if got := c.do("BF.ADD", "f", "x"); !strings.HasPrefix(got, "-MISCONF Errors writing to the AOF file") {
		t.Fatalf("write after the fsync failure: %s", got)
	}
	checkAll(t, c, "f", 0, 10)
	if got := c.do("BF.EXISTS", "f", "written"); got != ":1" {
		t.Fatalf("BF.EXISTS written after the fsync failure: %s", got)
	}
}

// TestConcurrentCopyOnWrite (for the race detector): readers of every
// kind, writers (BF, CMS, CF adds and deletes) and snapshots at once;
// writers copy frozen values while readers and the snapshot read them.
// Every acknowledged add survives.
func TestConcurrentCopyOnWrite(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Dir: dir}
	s := start(t, cfg)
	c := dial(t, s)
	c.do("CMS.INITBYDIM", "cm", "100", "3")
	c.do("SET", "str", "v")
	c.do("CF.RESERVE", "cf", "64", "EXPANSION", "2")
	var wg sync.WaitGroup
	rounds := 400
	if testing.Short() {
		rounds = 100
	}
	for w := 0; w < 2; w++ {
		wg.Add(2)
		go func(w int) {
			defer wg.Done()
			c := dial(t, s)
			for i := 0; i < rounds; i++ {
				c.do("BF.ADD", "f", fmt.Sprint(w, "-", i))
				c.do("CMS.INCRBY", "cm", "a", "1")
				c.do("CF.ADD", "cf", fmt.Sprint(w, "-", i))
				c.do("CF.ADD", "cf", fmt.Sprint("gone-", w, "-", i))
				c.do("CF.DEL", "cf", fmt.Sprint("gone-", w, "-", i))
			}
		}(w)
		go func() {
			defer wg.Done()
			c := dial(t, s)
			for i := 0; i < rounds; i++ {
				for _, cmd := range [][]string{{"TYPE", "cm"}, {"GET", "str"}, {"CMS.QUERY", "cm", "a"}, {"BF.EXISTS", "f", "0-1"}, {"SCAN", "0", "TYPE", "string"}, {"BF.INFO", "f"}, {"CF.EXISTS", "cf", "0-1"}, {"CF.INFO", "cf"}, {"CF.SCANDUMP", "cf", "1"}} {
					if got := c.do(cmd...); strings.HasPrefix(got, "-") && got != "-ERR not found" {
						t.Errorf("%v: %s", cmd, got)
					}
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 20; i++ {
			s.bgsave()
			time.Sleep(time.Millisecond)
		}
	}()
	wg.Wait()
	s = restart(t, s, cfg)
	c = dial(t, s)
	for w := 0; w < 2; w++ {
		for i := 0; i < rounds; i++ {
			if got := c.do("BF.EXISTS", "f", fmt.Sprint(w, "-", i)); got != ":1" {
				t.Fatalf("%d-%d lost", w, i)
			}
			if got := c.do("CF.EXISTS", "cf", fmt.Sprint(w, "-", i)); got != ":1" {
				t.Fatalf("CF: %d-%d lost", w, i)
			}
		}
	}
	if got := c.do("CMS.QUERY", "cm", "a"); got != fmt.Sprintf("*[:%d]", 2*rounds) {
		t.Fatalf("CMS count after concurrent increments and snapshots: %s", got)
	}
}

// TestSaveTriggers: the SaveInterval snapshot when something changed, and
// the rewrite when the log outgrows AutoRewriteSize; LASTSAVE and INFO
// follow.
func TestSaveTriggers(t *testing.T) {
	dir := t.TempDir()
	s := start(t, Config{Dir: dir, SaveInterval: 300 * time.Millisecond, AutoRewriteSize: -1})
	c := dial(t, s)
	fill(t, c, "f", 0, 10)
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for i := 0; i < 100 && !ok(); i++ {
			time.Sleep(50 * time.Millisecond)
		}
		if !ok() {
			t.Fatalf("no %s", what)
		}
	}
	waitFor("interval snapshot", func() bool {
		return strings.Contains(c.do("INFO", "persistence"), "rdb_changes_since_last_save:0")
	})
	if _, err := os.Stat(filepath.Join(dir, snapName)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	dir = t.TempDir()
	s = start(t, Config{Dir: dir, AutoRewriteSize: 4 << 10})
	c = dial(t, s)
	fill(t, c, "g", 0, 400) // about 10 KiB of log
	waitFor("log rewrite", func() bool {
		st, err := os.Stat(filepath.Join(dir, snapName))
		return err == nil && st.Size() > 0 && len(logFiles(t, dir)) == 1 && s.aof.size() < 4<<10
	})
	s = restart(t, s, Config{Dir: dir})
	checkAll(t, dial(t, s), "g", 0, 400)
}

// TestRefusedLastChunkRestarts: a last CF.LOADCHUNK chunk whose filter
// fails the final check (the header's item count is not the occupied
// slots) is refused and the partial key dropped, and the log holds
// nothing that fails at replay: the server starts again. (BF.LOADCHUNK
// checks its last chunk before logging it in the same way.)
func TestRefusedLastChunkRestarts(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Dir: dir, AppendFsync: Always, Dialect: Dialect24} // the refusal's detail in the reply
	s := start(t, cfg)
	c := dial(t, s)
	c.do("CF.RESERVE", "f", "100")
	c.do("CF.ADD", "f", "x")
	c.send("CF.SCANDUMP", "f", "0")
	h, _ := c.read()
	c.send("CF.SCANDUMP", "f", "1")
	d, _ := c.read()
	lie := append([]byte(nil), h.Elems[1].Str...)
	lie[0]++ // one item more than the buckets hold
	if got := c.do("CF.LOADCHUNK", "copy", "1", string(lie)); got != "+OK" {
		t.Fatalf("header: %s", got)
	}
	if got := c.do("CF.LOADCHUNK", "copy", fmt.Sprint(d.Elems[0].Int), string(d.Elems[1].Str)); !strings.HasPrefix(got, "-Couldn't load chunk! ") || !strings.Contains(got, "the header says 2 items, the buckets hold 1") {
		t.Fatalf("a chunk failing the final check: %s", got)
	}
	if got := c.do("EXISTS", "copy"); got != ":0" {
		t.Fatal("the refused load left its key")
	}
	s = restart(t, s, cfg)
	c = dial(t, s)
	if got := c.do("CF.EXISTS", "f", "x"); got != ":1" {
		t.Fatalf("after restart: %s", got)
	}
	if got := c.do("EXISTS", "copy"); got != ":0" {
		t.Fatal("the refused load came back at restart")
	}
}

// TestRepliesWaitForObservedWrites: with Always, a reply is not sent
// before the log is synced past every write it observed, not only the
// client's own. Client A's BF.ADD x waits in a slow fsync; client B's
// BF.EXISTS x and BF.ADD x (answered 0, which logs nothing) must wait
// with it: sent at once, they would acknowledge a key that a crash during
// that fsync removes. Before the fix B's replies came back while A's
// fsync was still held.
func TestRepliesWaitForObservedWrites(t *testing.T) {
	dir := t.TempDir()
	s := start(t, Config{Dir: dir, AppendFsync: Always})
	a, b := dial(t, s), dial(t, s)
	fill(t, a, "f", 0, 10) // the filter exists, its records are synced
	entered, release := make(chan struct{}), make(chan struct{})
	var armed atomic.Bool
	armed.Store(true)
	hookSync(t, func(f *os.File) error {
		if armed.CompareAndSwap(true, false) {
			close(entered)
			<-release
		}
		return f.Sync()
	})
	a.send("BF.ADD", "f", "x")
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("A's add did not reach the fsync")
	}
	b.send("BF.EXISTS", "f", "x")
	b.send("BF.ADD", "f", "x")
	b.conn.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if v, err := b.rr.Read(); err == nil {
		close(release)
		t.Fatalf("B got %v while the write it observed was not yet synced", v)
	}
	close(release)
	if v, _ := a.read(); v.Int != 1 {
		t.Fatalf("A's BF.ADD x: %v", v)
	}
	b2 := dial(t, s) // b's reader timed out mid-read; a fresh connection checks the state
	if got := b2.do("BF.EXISTS", "f", "x"); got != ":1" {
		t.Fatalf("BF.EXISTS x after the sync: %s", got)
	}
}
