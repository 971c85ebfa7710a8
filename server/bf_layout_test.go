package server

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bloomlab/bloomlab/internal/redistest"
	"github.com/bloomlab/bloomlab/scalable"
	"github.com/bloomlab/bloomlab/server/internal/resp"
)

// TestBFLayoutCommands: LAYOUT BLOCKED on BF.RESERVE and BF.INSERT (and
// the server's default, Config.BFLayout or CONFIG SET
// bloomlab-bf-layout) makes a key of the blocked layout; every BF.*
// command answers on it; BF.INFO adds its layout while a key of
// RedisBloom's layout answers RedisBloom's five fields unchanged; bad
// values are refused with a clear text and change nothing.
func TestBFLayoutCommands(t *testing.T) {
	s := start(t, Config{})
	c := dial(t, s)
	for _, tc := range [][]string{
		{"+OK", "BF.RESERVE", "b", "0.01", "100", "LAYOUT", "BLOCKED"},
		{"+OK", "BF.RESERVE", "r", "0.01", "100"},
		{"+OK", "BF.RESERVE", "r2", "0.01", "100", "EXPANSION", "4", "layout", "redisbloom"},
		{"+OK", "BF.RESERVE", "ns", "0.01", "50", "LAYOUT", "blocked", "NONSCALING"},
		{"-" + errBadLayout, "BF.RESERVE", "x", "0.01", "100", "LAYOUT", "cuckoo"},
		{"-" + errNoLayout, "BF.RESERVE", "x", "0.01", "100", "LAYOUT"},
		{"-ERR wrong number of arguments for 'bf.reserve' command", "BF.RESERVE", "x", "0.01", "100", "EXPANSION", "2", "NONSCALING", "LAYOUT", "BLOCKED", "y"},
		{"-" + errBadLayout, "BF.INSERT", "x", "LAYOUT", "nope", "ITEMS", "a"},
		{"-" + errNoLayout, "BF.INSERT", "x", "NOCREATE", "LAYOUT"},
		{":0", "EXISTS", "x"},
		{"*[:1, :1]", "BF.INSERT", "i", "CAPACITY", "10", "ERROR", "0.001", "LAYOUT", "BLOCKED", "ITEMS", "a", "b"},
		{":1", "BF.ADD", "b", "k0"},
		{":0", "BF.ADD", "b", "k0"},
		{"*[:1, :1, :0]", "BF.MADD", "b", "k1", "k2", "k1"},
		{"*[:1, :0]", "BF.INSERT", "b", "ITEMS", "k3", "k3"},
		{":1", "BF.EXISTS", "b", "k2"},
		{"*[:1, :1, :1, :1]", "BF.MEXISTS", "b", "k0", "k1", "k2", "k3"},
		{":4", "BF.CARD", "b"},
		{"*[+blocked]", "BF.INFO", "b", "LAYOUT"},
		{"*[+redisbloom]", "BF.INFO", "r", "LAYOUT"},
		{"*[+blocked]", "BF.INFO", "i", "layout"},
		{"*[:100]", "BF.INFO", "b", "CAPACITY"},
		{"*[+Capacity, :100, +Size, :240, +Number of filters, :1, +Number of items inserted, :0, +Expansion rate, :2]", "BF.INFO", "r"},
		{"*[+Capacity, :50, +Size, :" + strconv.Itoa(32+64+int(blockedBytes(t, 50, 0.01, true))) + ", +Number of filters, :1, +Number of items inserted, :0, +Expansion rate, $-1, +Layout, +blocked]", "BF.INFO", "ns"},
	} {
		if got := c.do(tc[1:]...); got != tc[0] {
			t.Errorf("%q: got %s, want %s", tc[1:], got, tc[0])
		}
	}
	if got := c.do("BF.DEBUG", "b"); !strings.Contains(got, "hashwidth:128 capacity:100 size:4") {
		t.Errorf("BF.DEBUG: %s", got)
	}
	// A non-scaling blocked key refuses the key past its capacity.
	for i := 0; i < 200; i++ {
		c.do("BF.ADD", "ns", fmt.Sprint(i))
	}
	if got := c.do("BF.ADD", "ns", "one more"); got != "-"+errBFFull {
		t.Errorf("full non-scaling blocked key: %s", got)
	}
	// A growing blocked key: many links, no key lost.
	for i := 0; i < 5000; i++ {
		c.send("BF.ADD", "b", "g"+strconv.Itoa(i))
	}
	for i := 0; i < 5000; i++ {
		if v, _ := c.read(); v.Kind == '-' {
			t.Fatalf("add %d: %v", i, v)
		}
	}
	for i := 0; i < 5000; i++ {
		if got := c.do("BF.EXISTS", "b", "g"+strconv.Itoa(i)); got != ":1" {
			t.Fatalf("false negative g%d", i)
		}
	}
	if got := c.do("BF.INFO", "b", "FILTERS"); got == "*[:1]" {
		t.Errorf("5,000 keys in a chain of 100: %s links", got)
	}
	// The default layout: CONFIG SET bloomlab-bf-layout.
	for _, tc := range [][]string{
		{"*[$\"bloomlab-bf-layout\", $\"redisbloom\"]", "CONFIG", "GET", "bloomlab-bf-layout"},
		{"+OK", "CONFIG", "SET", "bloomlab-bf-layout", "BLOCKED"},
		{"*[$\"bloomlab-bf-layout\", $\"blocked\"]", "CONFIG", "GET", "bloomlab-*"},
		{":1", "BF.ADD", "d", "x"},
		{"*[+blocked]", "BF.INFO", "d", "LAYOUT"},
		{"+OK", "BF.RESERVE", "d2", "0.01", "100"},
		{"*[+blocked]", "BF.INFO", "d2", "LAYOUT"},
		{"+OK", "BF.RESERVE", "d3", "0.01", "100", "LAYOUT", "REDISBLOOM"},
		{"*[+redisbloom]", "BF.INFO", "d3", "LAYOUT"},
		{"-ERR CONFIG SET failed (possibly related to argument 'bloomlab-bf-layout') - Invalid value for `bloomlab-bf-layout` (want redisbloom or blocked)", "CONFIG", "SET", "bloomlab-bf-layout", "bloom"},
		{"+OK", "CONFIG", "SET", "bloomlab-bf-layout", "redisbloom"},
		{":1", "BF.ADD", "d4", "x"},
		{"*[+redisbloom]", "BF.INFO", "d4", "LAYOUT"},
	} {
		if got := c.do(tc[1:]...); got != tc[0] {
			t.Errorf("%q: got %s, want %s", tc[1:], got, tc[0])
		}
	}
	if got := c.do("CONFIG", "GET", "*"); !strings.Contains(got, "$\"bloomlab-bf-layout\", $\"redisbloom\"") {
		t.Errorf("CONFIG GET * lacks bloomlab-bf-layout: %s", got)
	}
	// Under Dialect24 too, and from Config.BFLayout.
	s24 := start(t, Config{Dialect: Dialect24, BFLayout: "blocked"})
	c24 := dial(t, s24)
	if got := c24.do("BF.ADD", "k", "x"); got != ":1" {
		t.Fatal(got)
	}
	if got := c24.do("BF.INFO", "k", "LAYOUT"); got != "*[+blocked]" {
		t.Errorf("Dialect24, BFLayout blocked: %s", got)
	}
	if got := c24.do("CONFIG", "GET", "bloomlab-bf-layout"); got != "*[$\"bloomlab-bf-layout\", $\"blocked\"]" {
		t.Errorf("Dialect24 CONFIG GET: %s", got)
	}
	if _, err := Run(Config{BFLayout: "bloom"}); err == nil {
		t.Error("Config.BFLayout bloom accepted")
	}
}

// blockedBytes is the bytes of a blocked-layout key's first link.
func blockedBytes(t *testing.T, capacity uint64, rate float64, nonScaling bool) uint64 {
	p := bfParams{errRate: rate, capacity: int64(capacity), nonScaling: nonScaling, layout: layoutBlocked}
	f, err := newChainFilter(p)
	if err != nil {
		t.Fatal(err)
	}
	return f.Bits() / 8
}

// scanDumpAll returns key's BF.SCANDUMP chunks (iterator, data), header
// first.
func scanDumpAll(t *testing.T, c *rawConn, key string) [][2]string {
	var out [][2]string
	for it := "0"; ; {
		c.send("BF.SCANDUMP", key, it)
		v, _ := c.read()
		if v.Kind == '-' || len(v.Elems) != 2 {
			t.Fatalf("BF.SCANDUMP %s %s: %v", key, it, v)
		}
		it = strconv.FormatInt(v.Elems[0].Int, 10)
		if it == "0" {
			return out
		}
		out = append(out, [2]string{it, string(v.Elems[1].Str)})
	}
}

// TestBFLayoutDump: BF.SCANDUMP of a blocked-layout key moves it in
// bloomlab's framing (its first chunk begins BLOOMLAB-BF1, never
// RedisBloom's header); BF.LOADCHUNK takes the chunks back into a key
// that answers every query alike and keeps its layout; the chunks
// survive a restart mid-load and the loaded key a restart.
func TestBFLayoutDump(t *testing.T) {
	dir := t.TempDir()
	s := start(t, Config{Dir: dir})
	c := dial(t, s)
	c.do("BF.RESERVE", "b", "0.01", "50", "LAYOUT", "BLOCKED")
	for i := 0; i < 1000; i++ {
		c.send("BF.ADD", "b", "k"+strconv.Itoa(i))
	}
	for i := 0; i < 1000; i++ {
		c.read()
	}
	chunks := scanDumpAll(t, c, "b")
	if !strings.HasPrefix(chunks[0][1], "BLOOMLAB-BF1") || len(chunks) < 3 {
		t.Fatalf("first chunk %q…, %d chunks", chunks[0][1][:12], len(chunks))
	}
	for i, ch := range chunks {
		if got := c.do("BF.LOADCHUNK", "copy", ch[0], ch[1]); got != "+OK" {
			t.Fatalf("chunk %d: %s", i, got)
		}
		if i == 1 { // a restart while the load is in progress
			s.Close()
			s = start(t, Config{Dir: dir})
			c = dial(t, s)
		}
	}
	same := func() {
		t.Helper()
		for _, f := range []string{"LAYOUT", "CAPACITY", "FILTERS", "ITEMS", "SIZE"} {
			if a, b := c.do("BF.INFO", "b", f), c.do("BF.INFO", "copy", f); a != b {
				t.Errorf("BF.INFO %s: %s, copy %s", f, a, b)
			}
		}
		for i := 0; i < 3000; i++ {
			k := "k" + strconv.Itoa(i)
			if a, b := c.do("BF.EXISTS", "b", k), c.do("BF.EXISTS", "copy", k); a != b || i < 1000 && a != ":1" {
				t.Fatalf("BF.EXISTS %s: %s, copy %s", k, a, b)
			}
		}
	}
	same()
	s.Close()
	s = start(t, Config{Dir: dir})
	c = dial(t, s)
	same()
	if got := c.do("BF.INFO", "copy", "LAYOUT"); got != "*[+blocked]" {
		t.Errorf("loaded key's layout: %s", got)
	}
	// A RedisBloom-layout key still dumps RedisBloom's header.
	c.do("BF.RESERVE", "r", "0.01", "50")
	if ch := scanDumpAll(t, c, "r"); strings.HasPrefix(ch[0][1], "BLOOMLAB") || len(ch[0][1]) != 20+53 {
		t.Errorf("RedisBloom key's header: %d bytes", len(ch[0][1]))
	}
	// A damaged bloomlab header is refused.
	bad := []byte(chunks[0][1])
	bad[12] = 64
	if got := c.do("BF.LOADCHUNK", "bad", "1", string(bad)); !strings.HasPrefix(got, "-ERR received bad data") {
		t.Errorf("damaged header: %s", got)
	}
}

// TestBFLayoutLog: the log's record of a key made in the blocked layout
// says LAYOUT BLOCKED (BF.RESERVE, and BF.INSERT for a key that BF.ADD
// made under the blocked default), so a replay under the default
// layout, redisbloom, makes the same keys; a RedisBloom-layout key's
// records are RedisBloom's as before.
func TestBFLayoutLog(t *testing.T) {
	dir := t.TempDir()
	s := start(t, Config{Dir: dir, BFLayout: "blocked", SaveInterval: -1})
	c := dial(t, s)
	for _, cmd := range [][]string{
		{"BF.ADD", "a", "x"}, {"BF.RESERVE", "r", "0.01", "100"}, {"BF.INSERT", "i", "ITEMS", "y"},
		{"BF.RESERVE", "rr", "0.01", "100", "LAYOUT", "REDISBLOOM"},
	} {
		if got := c.do(cmd...); strings.HasPrefix(got, "-") {
			t.Fatalf("%q: %s", cmd, got)
		}
	}
	s.Close()
	var log []byte
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil {
			log = append(log, b...)
		}
	}
	if n := strings.Count(string(log), "LAYOUT\x07\x00\x00\x00BLOCKED"); n != 3 {
		t.Errorf("%d records say LAYOUT BLOCKED, want 3", n)
	}
	s = start(t, Config{Dir: dir})
	c = dial(t, s)
	for k, want := range map[string]string{"a": "blocked", "r": "blocked", "i": "blocked", "rr": "redisbloom"} {
		if got := c.do("BF.INFO", k, "LAYOUT"); got != "*[+"+want+"]" {
			t.Errorf("%s after replay under the default layout: %s, want %s", k, got, want)
		}
	}
	if got := c.do("BF.EXISTS", "a", "x"); got != ":1" {
		t.Error(got)
	}
}

// TestBFLayoutMaxMemory: a blocked-layout key counts against maxmemory
// as a RedisBloom one does: BF.RESERVE of a link past the limit is
// refused, and the add that would open a link past it is refused with
// OOM, changing nothing.
func TestBFLayoutMaxMemory(t *testing.T) {
	s := start(t, Config{MaxMemory: plusClients(64<<10, 1)})
	c := dial(t, s)
	oom := "-OOM command not allowed when used memory > 'maxmemory'."
	if got := c.do("BF.RESERVE", "big", "0.001", "10000000", "LAYOUT", "BLOCKED"); got != oom {
		t.Fatalf("a 17 MiB blocked filter under 64 KiB: %s", got)
	}
	if got := c.do("BF.RESERVE", "g", "0.01", "20000", "LAYOUT", "BLOCKED"); got != "+OK" {
		t.Fatal(got)
	}
	for i := 0; i < 25000; i++ {
		c.send("BF.ADD", "g", fmt.Sprint(i))
	}
	refused := 0
	for i := 0; i < 25000; i++ {
		if last, _ := c.read(); last.Kind == '-' {
			if last.String() != oom {
				t.Fatalf("add %d: %v", i, last)
			}
			refused++
		}
	}
	if refused == 0 {
		t.Fatal("the add that opens a link past maxmemory was accepted")
	}
	if got := c.do("BF.INFO", "g", "FILTERS"); got != "*[:1]" {
		t.Fatalf("links: %s", got)
	}
}

// TestBFLayoutRedisBloomRefuses runs when BLOOMLAB_REDISBLOOM_SO names a
// RedisBloom module (built by the build-redisbloom script for Debian's
// redis-server): the first chunk of a blocked-layout key's BF.SCANDUMP,
// fed to the real module's BF.LOADCHUNK, is refused and makes no key.
func TestBFLayoutRedisBloomRefuses(t *testing.T) {
	so := os.Getenv("BLOOMLAB_REDISBLOOM_SO")
	if so == "" {
		t.Skip("BLOOMLAB_REDISBLOOM_SO names no RedisBloom module")
	}
	r := redistest.Start(t, redistest.Options{Extra: []string{"--loadmodule", so}})
	s := start(t, Config{})
	c := dial(t, s)
	c.do("BF.RESERVE", "b", "0.01", "100", "LAYOUT", "BLOCKED")
	for i := 0; i < 500; i++ {
		c.do("BF.ADD", "b", strconv.Itoa(i))
	}
	chunks := scanDumpAll(t, c, "b")
	rc := dialAddr(t, r.Addr)
	got := rc.do("BF.LOADCHUNK", "b", chunks[0][0], chunks[0][1])
	if !strings.HasPrefix(got, "-") {
		t.Fatalf("RedisBloom took bloomlab's header: %s", got)
	}
	if ex := rc.do("EXISTS", "b"); ex != ":0" {
		t.Errorf("RedisBloom made a key of it: EXISTS %s", ex)
	}
	t.Logf("RedisBloom's BF.LOADCHUNK of the first chunk (%d bytes): %s", len(chunks[0][1]), got)
}

// dialAddr is dial for a server at addr (a real redis-server).
func dialAddr(t testing.TB, addr string) *rawConn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	c := &rawConn{t: t, conn: conn}
	c.rr = resp.NewReplyReader(io.TeeReader(bufio.NewReader(conn), &c.raw), 0)
	return c
}

// TestBFLayoutTwice: LAYOUT given twice reads as BF.INSERT reads its
// repeated options, on BF.RESERVE as on BF.INSERT: every value must be a
// layout, and the last one counts. (BF.RESERVE took the first and
// ignored the second, "LAYOUT junk" included.)
func TestBFLayoutTwice(t *testing.T) {
	s := start(t, Config{})
	c := dial(t, s)
	for _, tc := range [][]string{
		{"+OK", "BF.RESERVE", "a", "0.01", "100", "LAYOUT", "BLOCKED", "LAYOUT", "REDISBLOOM"},
		{"*[+redisbloom]", "BF.INFO", "a", "LAYOUT"},
		{"+OK", "BF.RESERVE", "b", "0.01", "100", "LAYOUT", "REDISBLOOM", "LAYOUT", "BLOCKED"},
		{"*[+blocked]", "BF.INFO", "b", "LAYOUT"},
		{"-" + errBadLayout, "BF.RESERVE", "x", "0.01", "100", "LAYOUT", "BLOCKED", "LAYOUT", "junk"},
		{"-" + errNoLayout, "BF.RESERVE", "x", "0.01", "100", "LAYOUT", "BLOCKED", "LAYOUT"},
		{"+OK", "BF.RESERVE", "c", "0.01", "100", "LAYOUT", "BLOCKED", "EXPANSION", "4", "LAYOUT", "BLOCKED"},
		{"*[+blocked]", "BF.INFO", "c", "LAYOUT"},
		{"*[:4]", "BF.INFO", "c", "EXPANSION"},
		{":0", "EXISTS", "x"},
		{"*[:1]", "BF.INSERT", "i", "LAYOUT", "BLOCKED", "LAYOUT", "REDISBLOOM", "ITEMS", "a"},
		{"*[+redisbloom]", "BF.INFO", "i", "LAYOUT"},
		{"-" + errBadLayout, "BF.INSERT", "x", "LAYOUT", "BLOCKED", "LAYOUT", "junk", "ITEMS", "a"},
		{":0", "EXISTS", "x"},
	} {
		if got := c.do(tc[1:]...); got != tc[0] {
			t.Errorf("%q: got %s, want %s", tc[1:], got, tc[0])
		}
	}
}

// TestBFLayoutOOMBeforeSizing: a blocked key that cannot fit under
// maxmemory is refused without sizing its first link (which takes up to
// tens of milliseconds at large capacities, the keyspace held: a client
// repeating a refused BF.RESERVE held every other one back), and the
// bound that refuses it never exceeds the link's real size.
func TestBFLayoutOOMBeforeSizing(t *testing.T) {
	calls := 0
	firstLinkBits = func(c scalable.Config) (uint64, error) {
		calls++
		return scalable.FirstLinkBits(c)
	}
	t.Cleanup(func() { firstLinkBits = scalable.FirstLinkBits })
	s := start(t, Config{MaxMemory: plusClients(64<<10, 1)})
	c := dial(t, s)
	oom := "-OOM command not allowed when used memory > 'maxmemory'."
	for _, cmd := range [][]string{
		{"BF.RESERVE", "big", "0.01", "1073741824", "LAYOUT", "BLOCKED"},
		{"BF.RESERVE", "big", "1e-30", "1073741824", "NONSCALING", "LAYOUT", "BLOCKED"},
		{"BF.INSERT", "big", "CAPACITY", "1073741824", "ERROR", "0.001", "LAYOUT", "BLOCKED", "ITEMS", "a"},
	} {
		if got := c.do(cmd...); got != oom {
			t.Errorf("%q: %s", cmd, got)
		}
	}
	if calls != 0 {
		t.Errorf("%d links sized for keys that cannot fit", calls)
	}
	if got := c.do("BF.RESERVE", "small", "0.01", "1000", "LAYOUT", "BLOCKED"); got != "+OK" || calls != 1 {
		t.Errorf("a key that fits: %s, %d sizings", got, calls)
	}
	// The bound is below the link's bytes.
	for _, rate := range []float64{0.25, 0.01, 1e-5, 1e-12, 1e-30} {
		for _, n := range []int64{1, 2, 7, 100, 1000, 123457, 1 << 24} {
			for _, ns := range []bool{false, true} {
				p := bfParams{errRate: rate, capacity: n, expansion: 2, nonScaling: ns, layout: layoutBlocked}
				bits, err := scalable.FirstLinkBits(p.blockedConfig())
				if err != nil {
					t.Fatal(err)
				}
				if lb := int64(chainBytes(rate, n, ns)) - 128; lb > int64(bits/8)+64 {
					t.Errorf("rate %g, %d keys, nonscaling %v: bound %d > %d bytes", rate, n, ns, lb, bits/8+64)
				}
			}
		}
	}
}
