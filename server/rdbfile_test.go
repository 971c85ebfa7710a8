package server

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/bloomlab/bloomlab/rdb"
	"github.com/bloomlab/bloomlab/scalable"
)

// writeRDBFile writes an RDB file (version 10, compressed strings) at
// path with what fill writes after the AUX fields.
func writeRDBFile(t testing.TB, path string, fill func(w *rdb.Writer)) {
	t.Helper()
	writeRDBFileC(t, path, true, fill)
}

// writeRDBFileC is writeRDBFile, with compressed strings or not.
func writeRDBFileC(t testing.TB, path string, compress bool, fill func(w *rdb.Writer)) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriter(f)
	w, err := rdb.NewWriter(bw, 10, compress)
	if err != nil {
		t.Fatal(err)
	}
	w.Aux("redis-ver", "7.0.15")
	w.Aux("redis-bits", "64")
	fill(w)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// stringsRDB writes n string keys k0… (value "v<i>-" repeated to size
// bytes) in database 0, plus "gone" (expired in 2001) and "later" (an
// hour from now).
func stringsRDB(t testing.TB, path string, n, size int) {
	writeRDBFile(t, path, func(w *rdb.Writer) {
		w.SelectDB(0)
		w.ResizeDB(uint64(n+2), 2)
		for i := range n {
			w.String([]byte(fmt.Sprintf("k%d", i)), []byte(stringValue(i, size)))
		}
		w.Expire(1_000_000_000_000)
		w.String([]byte("gone"), []byte("x"))
		w.Expire(time.Now().Add(time.Hour).UnixMilli())
		w.String([]byte("later"), []byte("y"))
	})
}

func stringValue(i, size int) string {
	v := fmt.Sprintf("v%d-", i)
	return strings.Repeat(v, max(1, size/len(v)))
}

// logBuffer is a Config.Logger whose output the test reads.
type logBuffer struct {
	mu  chan struct{}
	buf bytes.Buffer
}

func newLogBuffer() *logBuffer { return &logBuffer{mu: make(chan struct{}, 1)} }

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu <- struct{}{}
	defer func() { <-l.mu }()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu <- struct{}{}
	defer func() { <-l.mu }()
	return l.buf.String()
}

// TestLoadRDBStrings: -load-rdb loads a file's keys into an empty
// directory as its first snapshot (expired keys dropped, expiry times
// kept, counts logged); a restart without the file, or with another file,
// keeps the persisted dataset (the file is ignored, with a notice).
func TestLoadRDBStrings(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(t.TempDir(), "dump.rdb")
	stringsRDB(t, file, 300, 50)
	lb := newLogBuffer()
	s := start(t, Config{Dir: dir, LoadRDB: file, Logger: log.New(lb, "", 0)})
	if _, err := os.Stat(filepath.Join(dir, snapName)); err != nil {
		t.Fatalf("no snapshot after the load: %v", err)
	}
	if !strings.Contains(lb.String(), "301 keys loaded, 0 skipped (none), 1 expired") {
		t.Fatalf("log: %s", lb.String())
	}
	check := func(s *Server) {
		t.Helper()
		c := dial(t, s)
		for i := range 300 {
			if got := c.do("GET", fmt.Sprintf("k%d", i)); got != fmt.Sprintf("$%q", stringValue(i, 50)) {
				t.Fatalf("k%d: %s", i, got)
			}
		}
		if got := c.do("EXISTS", "gone"); got != ":0" {
			t.Fatalf("an expired key was loaded: %s", got)
		}
		if got := c.do("TTL", "later"); got != ":3600" && got != ":3599" {
			t.Fatalf("TTL later: %s", got)
		}
		if got := c.do("DBSIZE"); got != ":301" {
			t.Fatalf("DBSIZE %s", got)
		}
	}
	check(s)
	dial(t, s).do("SET", "k0", "changed")
	s.Close()
	other := filepath.Join(t.TempDir(), "other.rdb")
	writeRDBFile(t, other, func(w *rdb.Writer) { w.SelectDB(0); w.String([]byte("z"), []byte("z")) })
	lb2 := newLogBuffer()
	s2 := start(t, Config{Dir: dir, LoadRDB: other, Logger: log.New(lb2, "", 0)})
	c := dial(t, s2)
	if got := c.do("GET", "k0"); got != `$"changed"` {
		t.Fatalf("k0 after a restart: %s", got)
	}
	if got := c.do("EXISTS", "z"); got != ":0" {
		t.Fatal("a second file was loaded over the persisted dataset")
	}
	if !strings.Contains(lb2.String(), "already holds a dataset, which wins over the file: not loaded") {
		t.Fatalf("log: %s", lb2.String())
	}
	// Without a directory, the file is loaded at every start.
	check(start(t, Config{LoadRDB: file}))
}

// TestLoadRDBRefusals: a key of another database refuses the file
// (naming the database) unless -db picks it or -skip-unsupported leaves
// it out; a key of another Redis type refuses it, naming the key and the
// type, unless skipped (counted by type); a file larger than -maxmemory,
// or whose values do not fit, is refused; a refused load leaves the
// directory without a dataset.
func TestLoadRDBRefusals(t *testing.T) {
	file := filepath.Join(t.TempDir(), "dump.rdb")
	writeRDBFile(t, file, func(w *rdb.Writer) {
		w.SelectDB(0)
		w.String([]byte("a"), []byte("1"))
		w.SelectDB(1)
		w.String([]byte("b"), []byte("2"))
	})
	newErr := func(cfg Config) string {
		t.Helper()
		cfg.Dir = t.TempDir()
		s, err := New(cfg)
		if err == nil {
			s.Close()
			return ""
		}
		if _, serr := os.Stat(filepath.Join(cfg.Dir, snapName)); serr == nil {
			t.Fatalf("a refused load left a snapshot (%v)", err)
		}
		if gens, _ := listLogs(cfg.Dir); len(gens) != 0 {
			t.Fatalf("a refused load left a log (%v)", err)
		}
		return err.Error()
	}
	if got := newErr(Config{LoadRDB: file}); !strings.Contains(got, `key "b" is in database 1, and this server loads database 0 (-db 1 loads that one`) {
		t.Fatalf("a key of database 1: %v", got)
	}
	if got := newErr(Config{LoadRDB: file, LoadRDBDB: 1}); !strings.Contains(got, `key "a" is in database 0`) {
		t.Fatalf("a key of database 0 under -db 1: %v", got)
	}
	lb := newLogBuffer()
	s := start(t, Config{LoadRDB: file, LoadRDBDB: 1, LoadRDBSkipUnsupported: true, Logger: log.New(lb, "", 0)})
	c := dial(t, s)
	if got := c.do("GET", "b"); got != `$"2"` || c.do("EXISTS", "a") != ":0" {
		t.Fatalf("-db 1 -skip-unsupported: b %s", got)
	}
	if !strings.Contains(lb.String(), "1 keys loaded, 1 skipped (1 in database 0)") {
		t.Fatalf("log: %s", lb.String())
	}

	// A set (listpack-encoded, type 20) among strings.
	setFile := filepath.Join(t.TempDir(), "set.rdb")
	raw := rdbWithRawKey(t, "a", "myset", 20, []byte("\x0a\x0a\x00\x00\x00\x01\x00\x81a\x02\xff"))
	if err := os.WriteFile(setFile, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := newErr(Config{LoadRDB: setFile}); !strings.Contains(got, `key "myset": the value is a Redis set (listpack), a type bloomlab serve does not hold; -skip-unsupported leaves such keys out`) {
		t.Fatalf("a set: %v", got)
	}
	lb = newLogBuffer()
	s = start(t, Config{LoadRDB: setFile, LoadRDBSkipUnsupported: true, Logger: log.New(lb, "", 0)})
	if !strings.Contains(lb.String(), "2 keys loaded, 1 skipped (1 set (listpack))") {
		t.Fatalf("log: %s", lb.String())
	}

	// Memory: a file larger than the limit; a small file of large values.
	big := filepath.Join(t.TempDir(), "big.rdb")
	writeRDBFileC(t, big, false, func(w *rdb.Writer) {
		w.SelectDB(0)
		for i := range 20 {
			w.String([]byte(fmt.Sprint("b", i)), bytes.Repeat([]byte{'b'}, 10000))
		}
	})
	if got := newErr(Config{LoadRDB: big, MaxMemory: 100 << 10}); !strings.Contains(got, "is larger than maxmemory allows") {
		t.Fatalf("a file over maxmemory: %v", got)
	}
	lzf := filepath.Join(t.TempDir(), "lzf.rdb")
	writeRDBFile(t, lzf, func(w *rdb.Writer) {
		w.SelectDB(0)
		for i := range 20 {
			w.String([]byte(fmt.Sprint("z", i)), bytes.Repeat([]byte{'z'}, 1<<20))
		}
	})
	if st, _ := os.Stat(lzf); st.Size() > 1<<20 {
		t.Fatalf("the LZF file is %d bytes", st.Size())
	}
	if got := newErr(Config{LoadRDB: lzf, MaxMemory: 8 << 20}); !strings.Contains(got, "does not fit under maxmemory") {
		t.Fatalf("values over maxmemory: %v", got)
	}
}

// rdbWithRawKey is an RDB file of string key a ("1"), then a key of type
// typ with the raw value bytes, then string "z".
func rdbWithRawKey(t *testing.T, a, key string, typ byte, value []byte) []byte {
	var b bytes.Buffer
	w, err := rdb.NewWriter(&b, 10, false)
	if err != nil {
		t.Fatal(err)
	}
	w.SelectDB(0)
	w.String([]byte(a), []byte("1"))
	w.Close()
	// Cut the EOF and CRC, append the raw key, a string, and a new trailer.
	p := b.Bytes()[:b.Len()-9]
	p = append(p, typ, byte(len(key)))
	p = append(p, key...)
	p = append(p, value...)
	p = append(p, 0, 1, 'z', 1, 'z', 0xff)
	var crc [8]byte
	c := rdb.CRC64(p)
	for i := range crc {
		crc[i] = byte(c >> (8 * i))
	}
	return append(p, crc[:]...)
}

// TestLoadRDBKill9: a server killed with SIGKILL in the middle of a
// -load-rdb (the child process, this test binary again, stops after 700
// of 2,000 keys) leaves no dataset behind; the next start loads the whole
// file, every key complete. The child runs what `bloomlab serve -dir D
// -load-rdb F` runs (server.New with Config.LoadRDB).
func TestLoadRDBKill9(t *testing.T) {
	if env := os.Getenv("BLOOMLAB_TEST_LOADRDB"); env != "" {
		dir, file, _ := strings.Cut(env, "|")
		loadRDBHook = func(n int64) {
			if n == 700 {
				fmt.Println("MIDLOAD")
				time.Sleep(time.Minute)
			}
		}
		s, err := New(Config{Dir: dir, LoadRDB: file})
		if err != nil {
			fmt.Println("ERROR", err)
			os.Exit(3)
		}
		s.Close()
		os.Exit(0)
	}
	dir := t.TempDir()
	file := filepath.Join(t.TempDir(), "dump.rdb")
	stringsRDB(t, file, 2000, 2000)
	child := exec.Command(os.Args[0], "-test.run=^TestLoadRDBKill9$")
	child.Env = append(os.Environ(), "BLOOMLAB_TEST_LOADRDB="+dir+"|"+file)
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { child.Process.Kill(); child.Wait() })
	sc := bufio.NewScanner(out)
	mid := false
	for sc.Scan() {
		if sc.Text() == "MIDLOAD" {
			mid = true
			break
		}
	}
	if !mid {
		t.Fatal("the child did not reach the middle of the load")
	}
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	if _, err := os.Stat(filepath.Join(dir, snapName)); err == nil {
		t.Fatal("a snapshot exists after a kill in the middle of the load")
	}
	s := start(t, Config{Dir: dir, LoadRDB: file})
	c := dial(t, s)
	if got := c.do("DBSIZE"); got != ":2001" {
		t.Fatalf("DBSIZE after the restart: %s", got)
	}
	for i := range 2000 {
		if got := c.do("GET", fmt.Sprint("k", i)); got != fmt.Sprintf("$%q", stringValue(i, 2000)) {
			t.Fatalf("k%d after the restart: %.80s", i, got)
		}
	}
}

// dirState lists dir's files with their sizes and times.
func dirState(t *testing.T, dir string) string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %d %v", e.Name(), fi.Size(), fi.ModTime().UnixNano()))
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// readRDBKeys reads an RDB file's keys: name -> type, string value and
// expiry.
func readRDBKeys(t *testing.T, p []byte) (map[string]string, *rdb.Reader) {
	t.Helper()
	r, err := rdb.NewReader(bytes.NewReader(p), rdb.Limits{InputSize: int64(len(p))})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		desc := rdb.TypeName(e.Type)
		if e.Module != nil {
			desc = e.Module.Name
			if err := e.Module.Skip(); err != nil {
				t.Fatal(err)
			}
		} else {
			desc += " " + string(e.String)
		}
		if e.ExpireMs >= 0 {
			desc += " expires"
		}
		out[string(e.Key)] = desc
	}
	return out, r
}

// TestWriteRDBStrings: WriteRDB writes a stopped server's dataset (the
// snapshot and the log after it) without changing its directory, with
// Redis 7.0's AUX fields and expiry times; a running server's directory
// is refused, naming the lock; keys Redis cannot load refuse the file,
// named, unless skipped (counted by what they hold).
func TestWriteRDBStrings(t *testing.T) {
	dir := t.TempDir()
	s := start(t, Config{Dir: dir, AppendFsync: Always})
	c := dial(t, s)
	c.do("SET", "a", "1")
	c.do("SAVE")
	c.do("SET", "b", "2", "EX", "1000")
	c.do("SET", "gone", "3", "PX", "1")
	c.do("BF.RESERVE", "blk", "0.01", "1000", "LAYOUT", "BLOCKED")
	var out bytes.Buffer
	if _, err := WriteRDB(dir, &out, RDBWriteOptions{}); err == nil || !strings.Contains(err.Error(), lockName) {
		t.Fatalf("WriteRDB of a running server's directory: %v", err)
	}
	s.aof.close() // stop without a snapshot: b and blk only in the log
	s.aof = nil
	s.persist = nil
	s.Close()
	time.Sleep(5 * time.Millisecond)
	before := dirState(t, dir)
	_, err := WriteRDB(dir, &out, RDBWriteOptions{})
	if err == nil || !strings.Contains(err.Error(), `"blk" holds a bloomlab blocked-layout BF filter`) || !strings.Contains(err.Error(), "-skip-unsupported") {
		t.Fatalf("a blocked-layout BF key: %v", err)
	}
	if out.Len() != 0 {
		t.Fatal("a refused WriteRDB wrote something")
	}
	for _, v := range []int{10, 11, 12} {
		out.Reset()
		st, err := WriteRDB(dir, &out, RDBWriteOptions{Version: v, SkipUnsupported: true, Dialect: Dialect24})
		if err != nil {
			t.Fatal(err)
		}
		if st.Keys != 2 || st.Expired != 1 || st.Skipped["bloomlab blocked-layout BF filter"] != 1 {
			t.Fatalf("stats %+v", st)
		}
		keys, r := readRDBKeys(t, out.Bytes())
		if r.Version() != v {
			t.Fatalf("version %d, want %d", r.Version(), v)
		}
		if fmt.Sprint(keys) != "map[a:string 1 b:string 2 expires]" {
			t.Fatalf("keys %v", keys)
		}
		var aux []string
		for _, a := range r.Aux() {
			aux = append(aux, a.Key)
			if a.Key == "redis-ver" && a.Value != "7.0.15" {
				t.Fatalf("redis-ver %s", a.Value)
			}
		}
		if strings.Join(aux, " ") != "redis-ver redis-bits ctime used-mem aof-base" {
			t.Fatalf("AUX fields %v", aux)
		}
	}
	if after := dirState(t, dir); after != before {
		t.Fatalf("WriteRDB changed the directory:\n%s\nwas\n%s", after, before)
	}
	if _, err := WriteRDB(filepath.Join(dir, "nope"), &out, RDBWriteOptions{}); err == nil {
		t.Fatal("WriteRDB of a missing directory")
	}
	if _, err := WriteRDB(t.TempDir(), &out, RDBWriteOptions{}); err == nil || !strings.Contains(err.Error(), "holds no bloomlab dataset") {
		t.Fatalf("WriteRDB of an empty directory: %v", err)
	}
	if _, err := WriteRDB(dir, &out, RDBWriteOptions{Version: 13}); err == nil {
		t.Fatal("WriteRDB of version 13")
	}
}

// TestLoadRDBMemory: -load-rdb of a generated file of four 16 MiB BF keys
// (LZF-compressed, as Redis saves them) allocates at most 1.1 × the
// values' bytes + the largest compressed value + 32 MiB (TotalAlloc over
// the whole load, the first snapshot's write included): the file is
// streamed and each value allocated once, at its size.
func TestLoadRDBMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 64 MiB of filters")
	}
	const keys = 4
	file := filepath.Join(t.TempDir(), "big.rdb")
	var values int64
	writeRDBFile(t, file, func(w *rdb.Writer) {
		w.SelectDB(0)
		for i := range keys {
			f, err := scalable.NewRedisBloom(0.01, 14_000_000, 2, true)
			if err != nil {
				t.Fatal(err)
			}
			for j := range 20000 {
				f.Add([]byte(fmt.Sprint(i, "-", j)))
			}
			values += newBF(f).memory()
			m, err := w.Module([]byte(fmt.Sprint("bf", i)), scalable.RDBTypeName, scalable.RDBEncVer)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.WriteRedisBloomRDB(m); err != nil {
				t.Fatal(err)
			}
			if err := m.End(); err != nil {
				t.Fatal(err)
			}
		}
	})
	st, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var s *Server
	got := allocatedBy(func() {
		s, err = New(Config{Dir: dir, LoadRDB: file, MaxMemory: -1})
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// The largest compressed value is at most the file.
	limit := uint64(1.1*float64(values)) + uint64(st.Size()) + 32<<20
	t.Logf("values %d bytes, file %d bytes: the load allocated %d bytes (limit %d)", values, st.Size(), got, limit)
	if got > limit {
		t.Fatalf("the load allocated %d bytes, over %d", got, limit)
	}
	for i := range keys {
		if r := internalCall(s, "BF.EXISTS", fmt.Sprint("bf", i), fmt.Sprint(i, "-", 19999)).String(); r != ":1" {
			t.Fatalf("bf%d: %s", i, r)
		}
	}
}

// TestLoadRDBLZFStringChecksMemoryFirst: a file of under 1 MiB holding
// one 64 MiB string (LZF-compressed) is refused under an 8 MiB
// -maxmemory before the string is decompressed (the load allocates under
// 16 MiB), naming the limit.
func TestLoadRDBLZFStringChecksMemoryFirst(t *testing.T) {
	file := filepath.Join(t.TempDir(), "bomb.rdb")
	writeRDBFile(t, file, func(w *rdb.Writer) {
		w.SelectDB(0)
		w.String([]byte("bomb"), bytes.Repeat([]byte{'z'}, 64<<20))
	})
	if st, _ := os.Stat(file); st.Size() > 1<<20 {
		t.Fatalf("the file is %d bytes", st.Size())
	}
	var err error
	alloc := allocatedBy(func() {
		var s *Server
		if s, err = New(Config{LoadRDB: file, MaxMemory: 8 << 20}); err == nil {
			s.Close()
		}
	})
	if alloc > 16<<20 {
		t.Fatalf("a refused load allocated %d bytes (%v)", alloc, err)
	}
	if err == nil || !strings.Contains(err.Error(), "does not fit under maxmemory") {
		t.Fatalf("a 64 MiB string under an 8 MiB maxmemory: %v", err)
	}
}

// TestLoadRDBNegativeExpiry: a key whose expiry is a negative time
// (before 1970, other than -1, which Redis reads as none) is dropped as
// expired, as Redis drops it; before, it was loaded without a TTL.
func TestLoadRDBNegativeExpiry(t *testing.T) {
	file := filepath.Join(t.TempDir(), "neg.rdb")
	writeRDBFile(t, file, func(w *rdb.Writer) {
		w.SelectDB(0)
		w.String([]byte("a"), []byte("1"))
		w.Expire(-5)
		w.String([]byte("neg"), []byte("1"))
		w.Expire(math.MinInt64)
		w.String([]byte("min"), []byte("1"))
	})
	lb := newLogBuffer()
	c := dial(t, start(t, Config{LoadRDB: file, Logger: log.New(lb, "", 0)}))
	if got := c.do("EXISTS", "a", "neg", "min"); got != ":1" {
		t.Fatalf("EXISTS a neg min: %s (neg PTTL %s)", got, c.do("PTTL", "neg"))
	}
	if !strings.Contains(lb.String(), "1 keys loaded, 0 skipped (none), 2 expired") {
		t.Fatalf("log: %s", lb.String())
	}
}

// TestLoadRDBNegativeDB: Config.LoadRDBDB below 0 is refused, as
// serve's -db is, instead of loading database 0.
func TestLoadRDBNegativeDB(t *testing.T) {
	file := filepath.Join(t.TempDir(), "d.rdb")
	writeRDBFile(t, file, func(w *rdb.Writer) {
		w.SelectDB(0)
		w.String([]byte("a"), []byte("1"))
	})
	s, err := New(Config{LoadRDB: file, LoadRDBDB: -1})
	if err == nil {
		s.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "database -1") {
		t.Fatalf("LoadRDBDB -1: %v", err)
	}
}

// TestLoadRDBSkipsStreams: -skip-unsupported leaves out the streams (and
// the list) of the file Redis 7.0.15 saved (consumer groups, a pending
// entry) and loads the string after them; before, a stream stopped the
// load ("cannot be skipped").
func TestLoadRDBSkipsStreams(t *testing.T) {
	lb := newLogBuffer()
	c := dial(t, start(t, Config{LoadRDB: "../rdb/testdata/redis-7.0.15-streams.rdb", LoadRDBSkipUnsupported: true, Logger: log.New(lb, "", 0)}))
	if got := c.do("GET", "after"); got != `$"yes"` {
		t.Fatalf("GET after: %s (%s)", got, lb.String())
	}
	if !strings.Contains(lb.String(), "1 keys loaded, 3 skipped (1 list (quicklist v2), 2 stream (listpacks v2))") {
		t.Fatalf("log: %s", lb.String())
	}
}
