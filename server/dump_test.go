package server

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bloomlab/bloomlab/rdb"
)

// dumpOf returns key's DUMP payload (failing the test for anything else).
func dumpOf(t *testing.T, c *rawConn, key string) string {
	t.Helper()
	c.send("DUMP", key)
	v, _ := c.read()
	if v.Kind != '$' || v.Null {
		t.Fatalf("DUMP %s: %s", key, v.String())
	}
	return string(v.Str)
}

// TestDumpRestoreReplies: DUMP and RESTORE answer as Redis 7.0 does, in
// its order of checks: nil for a missing key; a string's payload is
// Redis's bytes (version 10, its CRC-64) and RESTOREs; BUSYKEY before the
// TTL's check; the TTL's errors; a wrong checksum or a newer version
// before the value is read; "Bad data format" for a value that does not
// decode, naming a type the server does not hold; IDLETIME and FREQ
// checked (then without effect) and not together; a TTL already past
// creates nothing (and deletes a replaced key) but answers OK.
func TestDumpRestoreReplies(t *testing.T) {
	s := start(t, Config{})
	c := dial(t, s)
	want := func(got, w string, cmd ...string) {
		t.Helper()
		if got != w {
			t.Fatalf("%.60q: got %s, want %s", cmd, got, w)
		}
	}
	do := func(w string, cmd ...string) { t.Helper(); want(c.do(cmd...), w, cmd...) }
	do(`$-1`, "DUMP", "missing")
	do("+OK", "SET", "s", "hello")
	p := dumpOf(t, c, "s")
	d := rdb.NewDumpWriter(true)
	d.String([]byte("hello"))
	if p != string(d.Payload(10)) {
		t.Fatalf("DUMP of a string: %q, want %q", p, d.Payload(10))
	}
	do("+OK", "RESTORE", "t", "0", p)
	do(`$"hello"`, "GET", "t")
	do(":-1", "TTL", "t")
	do("-BUSYKEY Target key name already exists.", "RESTORE", "t", "0", p)
	do("-BUSYKEY Target key name already exists.", "RESTORE", "t", "-1", p)
	do("-ERR Invalid TTL value, must be >= 0", "RESTORE", "u", "-1", p)
	do("-ERR value is not an integer or out of range", "RESTORE", "u", "x", p)
	do("+OK", "RESTORE", "t", "100000", p, "REPLACE")
	if ttl := c.do("TTL", "t"); ttl != ":100" && ttl != ":99" {
		t.Fatalf("TTL after RESTORE t 100000: %s", ttl)
	}
	bad := []byte(p)
	bad[len(bad)-1] ^= 1
	do("-ERR DUMP payload version or checksum are wrong", "RESTORE", "u", "0", string(bad))
	do("-ERR DUMP payload version or checksum are wrong", "RESTORE", "u", "0", "short")
	do("-ERR DUMP payload version or checksum are wrong", "RESTORE", "u", "0", string(rdb.EncodeDump([]byte("\x00\x05hello"), 13)))
	do("+OK", "RESTORE", "u", "0", string(rdb.EncodeDump([]byte("\x00\x05hello"), 12)))
	if got := c.do("RESTORE", "v", "0", string(rdb.EncodeDump([]byte("\x00\x09hello"), 10))); !strings.HasPrefix(got, "-ERR Bad data format") {
		t.Fatalf("a truncated string: %s", got)
	}
	if got := c.do("RESTORE", "v", "0", string(rdb.EncodeDump([]byte("\x00\x05helloXX"), 10))); !strings.HasPrefix(got, "-ERR Bad data format") {
		t.Fatalf("bytes after the value: %s", got)
	}
	// A list (quicklist v2 of one listpack): a type the server does not hold.
	if got := c.do("RESTORE", "v", "0", string(rdb.EncodeDump([]byte("\x12\x01\x02\x0b\x0b\x00\x00\x00\x01\x00\x81a\x02\xff"), 10))); got != "-ERR Bad data format: the value is a Redis list (quicklist v2), a type bloomlab serve does not hold" {
		t.Fatalf("a list: %s", got)
	}
	// A module value of another module.
	dw := rdb.NewDumpWriter(true)
	mw, err := dw.Module("ReJSON-RL", 3)
	if err != nil {
		t.Fatal(err)
	}
	mw.Unsigned(1)
	mw.End()
	if got := c.do("RESTORE", "v", "0", string(dw.Payload(10))); got != "-ERR Bad data format: the value is a Redis module value of type ReJSON-RL (encoding version 3), a type bloomlab serve does not hold" {
		t.Fatalf("another module's value: %s", got)
	}
	do(":0", "EXISTS", "v")
	do("-ERR Invalid IDLETIME value, must be >= 0", "RESTORE", "v", "0", p, "IDLETIME", "-1")
	do("-ERR Invalid FREQ value, must be >= 0 and <= 255", "RESTORE", "v", "0", p, "FREQ", "256")
	do("-ERR syntax error", "RESTORE", "v", "0", p, "IDLETIME", "1", "FREQ", "1")
	do("-ERR syntax error", "RESTORE", "v", "0", p, "FREQ", "1", "IDLETIME", "1")
	do("-ERR syntax error", "RESTORE", "v", "0", p, "IDLETIME")
	do("-ERR syntax error", "RESTORE", "v", "0", p, "NOPE")
	do("+OK", "RESTORE", "v", "0", p, "IDLETIME", "1000", "REPLACE", "ABSTTL")
	do("+OK", "RESTORE", "w", "0", p, "FREQ", "255")
	// A time already past: nothing created; a replaced key deleted.
	do("+OK", "RESTORE", "x", "1", p, "ABSTTL")
	do(":0", "EXISTS", "x")
	do("+OK", "RESTORE", "w", "1", p, "ABSTTL", "REPLACE")
	do(":0", "EXISTS", "w")
	do("+OK", "RESTORE", "x", strconv.FormatInt(1<<62, 10), p, "ABSTTL")
	do(":1", "EXISTS", "x")
	// A relative TTL whose sum overflows wraps in Redis, into the past.
	do("+OK", "RESTORE", "y", "9223372036854775807", p)
	do(":0", "EXISTS", "y")
	do(`$-1`, "DUMP", "y")
	// Integer-looking strings: Redis's integer encodings.
	do("+OK", "SET", "n", "-12345")
	pn := dumpOf(t, c, "n")
	do("+OK", "RESTORE", "n2", "0", pn)
	do(`$"-12345"`, "GET", "n2")
	if pn[0] != 0 || pn[1] != 0xc1 {
		t.Fatalf("DUMP of -12345: %q, want Redis's 16-bit integer encoding", pn)
	}
	// What Redis cannot load: a blocked-layout BF, a load in progress.
	do("+OK", "BF.RESERVE", "blk", "0.01", "1000", "LAYOUT", "BLOCKED")
	do("-ERR key holds a bloomlab blocked-layout BF filter, which Redis cannot load", "DUMP", "blk")
	do("+OK", "BF.RESERVE", "rb", "0.01", "1000")
	chunks := scanDumpAll(t, c, "rb")
	do("+OK", "BF.LOADCHUNK", "half", chunks[0][0], chunks[0][1])
	do("-ERR key holds a BF.LOADCHUNK in progress, which Redis cannot load", "DUMP", "half")
}

// TestRestoreLogged: RESTORE is a write: a restart replays it from the log
// (value and absolute expiry), inside MULTI too, and a WATCHed key it
// creates aborts the EXEC.
func TestRestoreLogged(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Dir: dir, AppendFsync: Always}
	s, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, s)
	c.do("SET", "s", "value")
	p := dumpOf(t, c, "s")
	if got := c.do("RESTORE", "a", "500000", p); got != "+OK" {
		t.Fatal(got)
	}
	c.do("MULTI")
	c.do("RESTORE", "b", "0", p)
	if got := c.do("EXEC"); got != "*[+OK]" {
		t.Fatal(got)
	}
	c2 := dial(t, s)
	c2.do("WATCH", "w")
	c2.do("MULTI")
	c2.do("GET", "s")
	c.do("RESTORE", "w", "0", p)
	if got := c2.do("EXEC"); got != "*-1" {
		t.Fatalf("EXEC after RESTORE of a watched key: %s", got)
	}
	c.send("PTTL", "a")
	pttl, _ := c.read()
	// Stop without a snapshot: the log alone holds the RESTOREs.
	s.aof.close()
	s.aof = nil
	s.persist = nil
	s.Close()
	s2 := start(t, cfg)
	c = dial(t, s2)
	for _, k := range []string{"a", "b", "w"} {
		if got := c.do("GET", k); got != `$"value"` {
			t.Fatalf("%s after restart: %s", k, got)
		}
	}
	c.send("PTTL", "a")
	got, _ := c.read()
	if got.Int > pttl.Int || got.Int < pttl.Int-int64(time.Minute/time.Millisecond) {
		t.Fatalf("PTTL a: %d before the restart, %d after", pttl.Int, got.Int)
	}
}

// TestRestoreMaxMemory: a RESTORE that does not fit under -maxmemory is
// refused with OOM and holds nothing.
func TestRestoreMaxMemory(t *testing.T) {
	s := start(t, Config{MaxMemory: plusClients(3<<19, 1)})
	c := dial(t, s)
	big := strings.Repeat("x", 600<<10)
	d := rdb.NewDumpWriter(false)
	d.String([]byte(big))
	p := string(d.Payload(10))
	c.do("PING")
	if got := c.do("RESTORE", "a", "0", p); got != "+OK" {
		t.Fatal(got)
	}
	before := s.mem.Load()
	if got := c.do("RESTORE", "b", "0", p); got != "-OOM command not allowed when used memory > 'maxmemory'." {
		t.Fatal(got)
	}
	if after := s.mem.Load(); after > before+(64<<10) {
		t.Fatalf("memory %d before the refused RESTORE, %d after", before, after)
	}
}

// TestDumpPayloadFooter: a payload's footer is the version (2 bytes) and
// the CRC-64 of all before it, little-endian.
func TestDumpPayloadFooter(t *testing.T) {
	s := start(t, Config{})
	c := dial(t, s)
	c.do("SET", "k", "v")
	p := []byte(dumpOf(t, c, "k"))
	n := len(p) - 10
	if v := binary.LittleEndian.Uint16(p[n:]); v != rdb.DumpVersion {
		t.Fatalf("version %d", v)
	}
	if rdb.CRC64(p[:n+2]) != binary.LittleEndian.Uint64(p[n+2:]) {
		t.Fatal("CRC-64 mismatch")
	}
}

// TestDumpCommandInfo: COMMAND INFO and COMMAND DOCS describe DUMP and
// RESTORE as Redis 7.0 does (flags, key positions, group).
func TestDumpCommandInfo(t *testing.T) {
	for _, d := range []Dialect{Dialect8, Dialect24} {
		c := dial(t, start(t, Config{Dialect: d}))
		if got := c.do("COMMAND", "INFO", "dump", "restore"); !strings.HasPrefix(got, `*[*[$"dump", :2, *[+readonly], :1, :1, :1`) ||
			!strings.Contains(got, `*[$"restore", :-4, *[+write, +denyoom], :1, :1, :1`) {
			t.Fatalf("COMMAND INFO: %s", got)
		}
		if got := c.do("COMMAND", "DOCS", "restore"); !strings.Contains(got, `$"group", $"generic"`) || !strings.Contains(got, `$"since", $"2.6.0"`) {
			t.Fatalf("COMMAND DOCS: %s", got)
		}
	}
}

// TestDumpTDigestMerges: DUMP of a digest with buffered values merges the
// buffer first, as RedisBloom's save does, and logs the merge as a query
// that merges it does: after a restart from the log the digest answers
// TDIGEST.INFO and its quantiles as before the restart.
func TestDumpTDigestMerges(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Dir: dir, AppendFsync: Always}
	s, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, s)
	c.do("TDIGEST.CREATE", "td", "COMPRESSION", "20")
	add := []string{"TDIGEST.ADD", "td"}
	for i := range 50 {
		add = append(add, strconv.Itoa(i*7%31))
	}
	c.do(add...)
	if got := c.do("TDIGEST.INFO", "td"); !strings.Contains(got, `+Unmerged nodes, :50`) {
		t.Fatalf("before DUMP: %s", got)
	}
	p := dumpOf(t, c, "td")
	info := c.do("TDIGEST.INFO", "td")
	if !strings.Contains(info, `+Unmerged nodes, :0`) {
		t.Fatalf("after DUMP: %s", info)
	}
	c.do(add...) // more buffered values after the merge
	q := c.do("TDIGEST.QUANTILE", "td", "0.1", "0.5", "0.99")
	info = c.do("TDIGEST.INFO", "td")
	s.aof.close()
	s.aof = nil
	s.persist = nil
	s.Close()
	c = dial(t, start(t, cfg))
	if got := c.do("TDIGEST.INFO", "td"); got != info {
		t.Fatalf("TDIGEST.INFO after a restart from the log:\n%s\nbefore:\n%s", got, info)
	}
	if got := c.do("TDIGEST.QUANTILE", "td", "0.1", "0.5", "0.99"); got != q {
		t.Fatalf("quantiles after a restart: %s, before %s", got, q)
	}
	if got := c.do("RESTORE", "td2", "0", p); got != "+OK" {
		t.Fatal(got)
	}
}

// TestRestoreChecksMemoryFirst: the payload of a 12 MiB BF (zeros, so a
// few hundred KiB compressed) RESTOREd under an 8 MiB -maxmemory is
// refused with OOM before the filter is allocated (the process allocates
// far less than the filter), and holds nothing; under no limit it loads.
func TestRestoreChecksMemoryFirst(t *testing.T) {
	src := dial(t, start(t, Config{MaxMemory: -1}))
	if got := src.do("BF.RESERVE", "big", "0.01", "10000000", "NONSCALING"); got != "+OK" {
		t.Fatal(got)
	}
	p := dumpOf(t, src, "big")
	if len(p) > 2<<20 {
		t.Fatalf("payload of %d bytes", len(p))
	}
	s := start(t, Config{MaxMemory: 8 << 20})
	c := dial(t, s)
	c.do("PING")
	before := s.mem.Load()
	var got string
	alloc := allocatedBy(func() { got = c.do("RESTORE", "big", "0", p) })
	if got != "-OOM command not allowed when used memory > 'maxmemory'." {
		t.Fatalf("RESTORE over maxmemory: %s", got)
	}
	if alloc > 6<<20 {
		t.Fatalf("a refused RESTORE allocated %d bytes", alloc)
	}
	if after := s.mem.Load(); after > before+(64<<10) {
		t.Fatalf("memory %d before, %d after the refused RESTORE", before, after)
	}
	c2 := dial(t, start(t, Config{MaxMemory: -1}))
	if got := c2.do("RESTORE", "big", "0", p); got != "+OK" {
		t.Fatal(got)
	}
	if got := c2.do("BF.INFO", "big", "CAPACITY"); got != "*[:10000000]" {
		t.Fatal(got)
	}
}

// TestRestoreLZFStringChecksMemoryFirst: the payload of a 64 MiB string
// of one byte repeated (LZF-compressed to under 1 MiB) RESTOREd under an
// 8 MiB -maxmemory is refused with OOM before the string is decompressed
// (the command allocates under 16 MiB), and holds nothing.
func TestRestoreLZFStringChecksMemoryFirst(t *testing.T) {
	d := rdb.NewDumpWriter(true)
	d.String([]byte(strings.Repeat("x", 64<<20)))
	p := string(d.Payload(10))
	if len(p) > 1<<20 {
		t.Fatalf("payload of %d bytes", len(p))
	}
	s := start(t, Config{MaxMemory: 8 << 20})
	c := dial(t, s)
	c.do("PING")
	before := s.mem.Load()
	var got string
	alloc := allocatedBy(func() { got = c.do("RESTORE", "a", "0", p) })
	if got != "-OOM command not allowed when used memory > 'maxmemory'." {
		t.Fatalf("RESTORE over maxmemory: %s", got)
	}
	if alloc > 16<<20 {
		t.Fatalf("a refused RESTORE allocated %d bytes", alloc)
	}
	if after := s.mem.Load(); after > before+(64<<10) || c.do("EXISTS", "a") != ":0" {
		t.Fatalf("memory %d before, %d after the refused RESTORE", before, after)
	}
}

// TestDumpTDigestOneValue: a digest of one value, whose buffer
// RedisBloom's merge leaves as it is (a total weight of 1), DUMPs as
// RedisBloom 8.6.2 on Redis 7.0.15 dumps it (the bytes below, recorded
// after TDIGEST.CREATE td, TDIGEST.ADD td 7), RESTOREs, and is written by
// WriteRDB; before, DUMP answered "a digest written with its buffer
// unmerged" and WriteRDB refused the whole directory.
func TestDumpTDigestOneValue(t *testing.T) {
	const redis = "\a\x81L2\x12\xf96\x0f\x10\x00\x04\x00\x00\x00\x00\x00\x00Y@\x04\x00\x00\x00\x00\x00\x00\x1c@\x04\x00\x00\x00\x00\x00\x00\x1c@\x02Bb\x02\x00\x02\x01\x02\x00\x04\x00\x00\x00\x00\x00\x00\x00\x00\x04\x00\x00\x00\x00\x00\x00\xf0?\x00\n\x00ag\xd5N\xec\xba\x9b\x1c"
	dir := t.TempDir()
	s := start(t, Config{Dir: dir})
	c := dial(t, s)
	c.do("TDIGEST.CREATE", "td")
	c.do("TDIGEST.ADD", "td", "7")
	c.send("DUMP", "td")
	v, _ := c.read()
	if string(v.Str) != redis {
		t.Fatalf("DUMP td: %s, want RedisBloom's %q", v.String(), redis)
	}
	if got := c.do("RESTORE", "td2", "0", redis); got != "+OK" {
		t.Fatal(got)
	}
	if a, b := c.do("TDIGEST.INFO", "td"), c.do("TDIGEST.INFO", "td2"); a != b {
		t.Fatalf("TDIGEST.INFO: %s, restored %s", a, b)
	}
	s.Close()
	var out bytes.Buffer
	if st, err := WriteRDB(dir, &out, RDBWriteOptions{}); err != nil || st.Keys != 2 {
		t.Fatalf("WriteRDB: %+v, %v", st, err)
	}
}

// TestRestoreVersionByDialect: RESTORE reads the RDB versions of the
// dialect's Redis: up to 12 (Redis 8) under Dialect8, only 10 under
// Dialect24, where Redis 7.0 answers a Redis 8 payload with its checksum
// error (RedisBloom 2.4.23's flow tests test_overall's
// test_load_error_handling and test_tdigest's test_rdb_load_oob_guard
// expect it); a logged RESTORE of a newer payload replays under either.
func TestRestoreVersionByDialect(t *testing.T) {
	for _, tc := range []struct {
		d    Dialect
		want []string // replies for versions 10, 11, 12
	}{
		{Dialect8, []string{"+OK", "+OK", "+OK"}},
		{Dialect24, []string{"+OK", "-ERR DUMP payload version or checksum are wrong", "-ERR DUMP payload version or checksum are wrong"}},
	} {
		dir := t.TempDir()
		s := start(t, Config{Dir: dir, Dialect: tc.d})
		c := dial(t, s)
		for i, v := range []int{10, 11, 12} {
			key := fmt.Sprint("k", v)
			if got := c.do("RESTORE", key, "0", string(rdb.EncodeDump([]byte("\x00\x05hello"), v))); got != tc.want[i] {
				t.Errorf("dialect %s, RESTORE of a version %d payload: %s, want %s", tc.d, v, got, tc.want[i])
			}
		}
		s.Close()
		if tc.d != Dialect8 {
			continue
		}
		// The directory whose log holds a version 12 RESTORE, served
		// under Dialect24: every key as it was.
		s2 := start(t, Config{Dir: dir, Dialect: Dialect24})
		c2 := dial(t, s2)
		for _, v := range []int{10, 11, 12} {
			if got := c2.do("GET", fmt.Sprint("k", v)); got != `$"hello"` {
				t.Errorf("after a restart under 2.4, k%d: %s", v, got)
			}
		}
	}
}
