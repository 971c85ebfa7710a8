package server

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// statInt returns an integer field of INFO stats.
func statInt(t *testing.T, c *rawConn, field string) int64 {
	t.Helper()
	c.send("INFO", "stats")
	v, _ := c.read()
	for _, line := range strings.Split(string(v.Str), "\r\n") {
		if f, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("INFO stats has no %s", field)
	return 0
}

// TestReplyMemoryRefused: a command that only reads and whose reply would
// take the used memory past MaxMemory is answered OOM instead of the
// reply. Before, replies counted in used_memory but nothing refused them:
// one connection queueing 40 × GET of an 2 MiB string in MULTI made EXEC
// build an 80 MiB reply under a 16 MiB limit (1,000 queued BF.SCANDUMP
// chunks of 16 MiB make 16 GB), and connections that do not read their
// replies each held one (60 × BF.SCANDUMP: 1.26 GB RSS under
// -maxmemory 300mb).
func TestReplyMemoryRefused(t *testing.T) {
	const size, big, limit = 2 << 20, 8 << 20, 32 << 20
	s := start(t, Config{MaxMemory: limit})
	ctl := dial(t, s)
	if got := ctl.do("SET", "s", strings.Repeat("v", size)); got != "+OK" {
		t.Fatal(got)
	}
	if got := ctl.do("SET", "big", strings.Repeat("b", big)); got != "+OK" {
		t.Fatal(got)
	}

	// One connection, a transaction of 40 reads of 2 MiB.
	c := dial(t, s)
	c.do("MULTI")
	for range 40 {
		if got := c.do("GET", "s"); got != "+QUEUED" {
			t.Fatal(got)
		}
	}
	c.send("EXEC")
	v, _ := c.read()
	full, oom := 0, 0
	for _, r := range v.Elems {
		switch {
		case len(r.Str) == size:
			full++
		case r.String() == "-"+errOOM:
			oom++
		default:
			t.Fatalf("EXEC's reply holds %.80v", r)
		}
	}
	if full+oom != 40 || full > limit/size || oom == 0 {
		t.Fatalf("EXEC of 40 GET of %d bytes under a limit of %d: %d replies, %d OOM", size, limit, full, oom)
	}
	// (Past the limit by at most the spare capacity of the reply buffer,
	// which grows by a quarter at a time.)
	if peak := infoInt(t, ctl, "used_memory_peak"); peak > limit+limit/4+2*clientFree {
		t.Fatalf("used_memory_peak %d under a limit of %d", peak, limit)
	}

	// Connections that do not read their replies (of 8 MiB: more than the
	// kernel's socket buffers take): each may hold one while it fits, the
	// others are answered OOM.
	before := infoInt(t, ctl, "mem_clients_normal")
	const conns = 16
	cmds := statInt(t, ctl, "total_commands_processed")
	cs := make([]*rawConn, conns)
	for i := range cs {
		cs[i] = dialSmallWindow(t, s)
		cs[i].send("GET", "big")
	}
	// Every GET has run once the commands counted are ctl's INFOs and
	// theirs (a command is counted as it begins: wait for its reply to be
	// built too).
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if statInt(t, ctl, "total_commands_processed") >= cmds+conns+1 || time.Now().After(deadline) {
			break
		}
	}
	time.Sleep(100 * time.Millisecond)
	if used := infoInt(t, ctl, "used_memory"); used > limit+conns*clientFree+1<<20 {
		t.Fatalf("used_memory %d under a limit of %d while %d connections do not read a reply of %d bytes", used, limit, conns, big)
	}
	full, oom = 0, 0
	for _, c := range cs {
		v, _ := c.read()
		switch {
		case len(v.Str) == big:
			full++
		case v.String() == "-"+errOOM:
			oom++
		default:
			t.Fatalf("GET: %.80v", v)
		}
		if got := c.do("PING"); got != "+PONG" {
			t.Fatal(got)
		}
	}
	if oom == 0 || full == 0 {
		t.Fatalf("%d connections not reading a GET of %d bytes under a limit of %d: %d replies, %d OOM", conns, big, limit, full, oom)
	}
	for _, c := range cs {
		c.conn.Close()
	}
	if after := waitInfoDown(t, ctl, "mem_clients_normal", before); after != before {
		t.Fatalf("mem_clients_normal %d before, %d after", before, after)
	}
}

// waitInfoDown polls INFO until field is at most want (a minute at most).
func waitInfoDown(t testing.TB, c *rawConn, field string, want int64) int64 {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if n := infoInt(t, c, field); n <= want || time.Now().After(deadline) {
			return n
		}
	}
}

// TestReplyMemoryCommandDocs: COMMAND DOCS and COMMAND INFO of many names
// (a name of 9 bytes in, up to a kilobyte of docs out) are answered OOM
// when their reply would not fit under MaxMemory, without building it:
// before, 10^6 names (a 15 MB request) built 2.4 GB of replies under
// -maxmemory 100mb before dropping them.
func TestReplyMemoryCommandDocs(t *testing.T) {
	const limit = 32 << 20
	s := start(t, Config{MaxMemory: limit})
	ctl := dial(t, s)
	c := dial(t, s)
	for _, sub := range []string{"DOCS", "INFO"} {
		args := []string{"COMMAND", sub}
		for range 200000 {
			args = append(args, "cms.merge")
		}
		if got := c.do(args...); got != "-"+errOOM {
			t.Fatalf("COMMAND %s of 200,000 names under a limit of %d: %.80s", sub, limit, got)
		}
		if peak := infoInt(t, ctl, "used_memory_peak"); peak > limit+limit/4+2*clientFree {
			t.Fatalf("COMMAND %s: used_memory_peak %d under a limit of %d", sub, peak, limit)
		}
		if got := c.do("COMMAND", sub, "cms.merge"); !strings.HasPrefix(got, "*[") {
			t.Fatalf("COMMAND %s cms.merge: %.80s", sub, got)
		}
	}
}

// TestReplyMemoryTopKList: TOPK.LIST reserves its reply, and the list it
// is built from, before building either, and lists only filled slots.
// Before, one client crashed the server: TOPK.RESERVE big 67108864 1 1 0.9
// under -maxmemory 4gb, then TOPK.LIST big WITHCOUNT on the empty sketch
// appended and sorted an entry per slot (2 GiB) outside -maxmemory until
// the runtime died out of memory; and a reply that did not fit was built
// whole before fitReply dropped it.
func TestReplyMemoryTopKList(t *testing.T) {
	const limit = 20 << 20
	s := start(t, Config{MaxMemory: limit})
	c := dial(t, s)
	// An empty sketch of k = 2^17: nothing to list, nothing allocated.
	if got := c.do("TOPK.RESERVE", "empty", strconv.Itoa(1<<17), "1", "1", "0.9"); got != "+OK" {
		t.Fatal(got)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if got := c.do("TOPK.LIST", "empty", "WITHCOUNT"); got != "*[]" {
		t.Fatalf("TOPK.LIST of an empty sketch: %s", got)
	}
	runtime.ReadMemStats(&after)
	if d := after.TotalAlloc - before.TotalAlloc; d > 1<<20 {
		t.Errorf("TOPK.LIST of an empty sketch of k = 2^17 allocated %d bytes", d)
	}
	// 3,000 items of 2,500 bytes: a reply of 7.5 MB, more than is left.
	if got := c.do("TOPK.RESERVE", "full", "3000", "6000", "4", "0.9"); got != "+OK" {
		t.Fatal(got)
	}
	for i := 0; i < 3000; i += 100 {
		args := []string{"TOPK.ADD", "full"}
		for j := i; j < i+100; j++ {
			args = append(args, fmt.Sprintf("%04d", j)+strings.Repeat("x", 2496))
		}
		c.do(args...)
	}
	used := s.mem.Load()
	if used+7<<20 < limit {
		t.Skipf("used memory %d leaves room for the reply under %d", used, limit)
	}
	runtime.ReadMemStats(&before)
	if got := c.do("TOPK.LIST", "full"); !strings.HasPrefix(got, "-OOM") {
		t.Fatalf("TOPK.LIST of 7.5 MB with %d of %d bytes used: %.80s", used, limit, got)
	}
	runtime.ReadMemStats(&after)
	if d := after.TotalAlloc - before.TotalAlloc; d > 1<<20 {
		t.Errorf("a TOPK.LIST refused for memory allocated %d bytes first", d)
	}
}

// reservedBuilders are the commands whose reply's size the client
// chooses without sending as much (a key's size, a COUNT, k, a keyspace):
// each reserves its reply against MaxMemory before it builds it
// (replyFits, replyGrows). The replies of every other command are at
// most a few times its request (an element per argument) or bounded
// (INFO, CLIENT LIST within maxclients), and counted after they are
// built (fitReply). TestReplyMemoryBuilders checks each one listed.
var reservedBuilders = []string{"get", "keys", "scan", "dump", "bf.scandump", "cf.scandump", "topk.list", "command"}

// TestReplyMemoryBuilders: each reply builder of reservedBuilders, asked
// for a reply larger than what is left under MaxMemory, answers OOM
// without building it (it allocates less than a tenth of the reply).
func TestReplyMemoryBuilders(t *testing.T) {
	const limit = 48 << 20
	s := start(t, Config{MaxMemory: limit})
	c := dial(t, s)
	big := strings.Repeat("v", 6<<20)
	setup := [][]string{
		{"SET", "s", big},
		{"BF.RESERVE", "bf", "0.001", "7000000"}, // about 12 MiB
		{"CF.RESERVE", "cf", "8000000"},          // about 8 MiB
		{"TOPK.RESERVE", "tk", "2000", "4000", "3", "0.9"},
	}
	for _, cmd := range setup {
		if got := c.do(cmd...); got != "+OK" {
			t.Fatalf("%v: %.80s", cmd, got)
		}
	}
	c.do("CF.ADD", "cf", "x")
	c.send("CF.SCANDUMP", "cf", "0")
	hdr, _ := c.read()
	cfHeader := strconv.FormatInt(hdr.Elems[0].Int, 10) // the first data chunk's iterator
	for i := 0; i < 2000; i += 100 {
		args := []string{"TOPK.ADD", "tk"}
		for j := i; j < i+100; j++ {
			args = append(args, fmt.Sprintf("%04d", j)+strings.Repeat("x", 4996))
		}
		c.do(args...)
	}
	for i := range 3000 {
		c.send("SET", fmt.Sprintf("key-%d-%s", i, strings.Repeat("k", 1000)), "1")
	}
	for range 3000 {
		c.read()
	}
	// Fill what is left to under 1 MiB: less than each reply below.
	filler := strings.Repeat("f", 512<<10)
	for i := 0; ; i++ {
		if got := c.do("SET", fmt.Sprint("fill", i), filler); got != "+OK" {
			break
		}
	}
	left := limit - s.mem.Load()
	if left > 3<<20 {
		t.Skipf("%d bytes left under %d: the replies would fit", left, limit)
	}
	covered := map[string]bool{}
	for _, tc := range []struct {
		args []string
		size int64
	}{
		{[]string{"GET", "s"}, 6 << 20},
		{[]string{"KEYS", "*"}, 3 << 20},
		{[]string{"SCAN", "0", "COUNT", "100000"}, 3 << 20},
		{[]string{"DUMP", "s"}, 6 << 20},
		{[]string{"BF.SCANDUMP", "bf", "1"}, 12 << 20},
		{[]string{"CF.SCANDUMP", "cf", cfHeader}, 8 << 20},
		{[]string{"TOPK.LIST", "tk"}, 10 << 20},
	} {
		covered[strings.ToLower(tc.args[0])] = true
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		got := c.do(tc.args...)
		runtime.ReadMemStats(&after)
		if !strings.HasPrefix(got, "-OOM") {
			t.Errorf("%v with %d bytes left: %.60s, want OOM", tc.args, left, got)
		}
		if d := int64(after.TotalAlloc - before.TotalAlloc); d > tc.size/10 {
			t.Errorf("%v: refused after allocating %d bytes (the reply is about %d)", tc.args, d, tc.size)
		}
	}
	covered["command"] = true // TestReplyMemoryCommandDocs
	for _, name := range reservedBuilders {
		if !covered[name] {
			t.Errorf("%s reserves its reply, but no case here checks it", name)
		}
	}
}
