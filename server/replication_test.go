package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bloomlab/bloomlab/internal/redistest"
	"github.com/bloomlab/bloomlab/rdb"
	"github.com/bloomlab/bloomlab/server/internal/resp"
)

// waitFor polls cond every 10 ms for up to 20 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// infoField returns field of INFO section on c.
func infoField(c *rawConn, section, field string) string {
	c.send("INFO", section)
	v, _ := c.read()
	for _, line := range strings.Split(string(v.Str), "\r\n") {
		if k, val, ok := strings.Cut(line, ":"); ok && k == field {
			return val
		}
	}
	return ""
}

// keysOf returns the sorted keys of a server.
func keysOf(c *rawConn) []string {
	c.send("KEYS", "*")
	v, _ := c.read()
	var ks []string
	for _, e := range v.Elems {
		ks = append(ks, string(e.Str))
	}
	sort.Strings(ks)
	return ks
}

// sameData fails unless the two servers hold the same keys with equal
// DUMP payloads and TTLs (a TTL within a second).
func sameData(t *testing.T, a, b *rawConn) {
	t.Helper()
	ka, kb := keysOf(a), keysOf(b)
	if strings.Join(ka, ",") != strings.Join(kb, ",") {
		t.Fatalf("keys differ:\nprimary %q\nreplica %q", ka, kb)
	}
	for _, k := range ka {
		da, db := a.do("DUMP", k), b.do("DUMP", k)
		if da != db {
			t.Errorf("key %q: DUMP differs (%d and %d bytes)", k, len(da), len(db))
		}
		ta, _ := strconv.Atoi(strings.TrimPrefix(a.do("PTTL", k), ":"))
		tb, _ := strconv.Atoi(strings.TrimPrefix(b.do("PTTL", k), ":"))
		if (ta < 0) != (tb < 0) || ta-tb > 1000 || tb-ta > 1000 {
			t.Errorf("key %q: PTTL %d on the primary, %d on the replica", k, ta, tb)
		}
	}
}

// workload runs commands of every family on c, some of them before the
// replica attaches (the full sync) and the rest after (the stream).
func workload(t *testing.T, c *rawConn, phase int) {
	p := strconv.Itoa(phase)
	cmds := [][]string{
		{"SET", "s" + p, "v"},
		{"SET", "sx" + p, "v", "PX", "600000"},
		{"BF.ADD", "bf" + p, "a"},
		{"BF.MADD", "bf" + p, "b", "c"},
		{"BF.INSERT", "bfi" + p, "CAPACITY", "50", "ERROR", "0.001", "ITEMS", "x", "y"},
		{"CF.ADD", "cf" + p, "a"},
		{"CF.ADDNX", "cf" + p, "b"},
		{"CF.INSERT", "cfi" + p, "CAPACITY", "1000", "ITEMS", "x"},
		{"CF.DEL", "cf" + p, "a"},
		{"CMS.INITBYDIM", "cms" + p, "100", "5"},
		{"CMS.INITBYPROB", "cmp" + p, "0.01", "0.01"},
		{"CMS.INCRBY", "cms" + p, "a", "3", "b", "4"},
		{"TOPK.RESERVE", "tk" + p, "3", "20", "3", "0.9"},
		{"TOPK.ADD", "tk" + p, "a", "b", "c", "d", "a", "a", "e", "f", "a", "g"},
		{"TOPK.INCRBY", "tk" + p, "x", "5"},
		{"TDIGEST.CREATE", "td" + p},
		{"TDIGEST.ADD", "td" + p, "1", "2", "3", "4.5"},
		{"TDIGEST.CREATE", "td2" + p, "COMPRESSION", "50"},
		{"TDIGEST.ADD", "td2" + p, "10", "20"},
		{"TDIGEST.MERGE", "tdm" + p, "2", "td" + p, "td2" + p},
		{"EXPIRE", "bf" + p, "1000"},
		{"SET", "gone" + p, "v"},
		{"DEL", "gone" + p},
	}
	for _, cmd := range cmds {
		if r := c.do(cmd...); strings.HasPrefix(r, "-") {
			t.Fatalf("%q: %s", cmd, r)
		}
	}
	for i := 0; i < 200; i++ {
		c.do("TOPK.ADD", "tk"+p, "k"+strconv.Itoa(i%17))
		c.do("TDIGEST.ADD", "td"+p, strconv.Itoa(i))
		c.do("CF.ADD", "cfc"+p, "same") // a chain of copies of one item
	}
	c.do("MULTI")
	c.do("BF.ADD", "tx"+p, "1")
	c.do("INCRBYFLOAT", "nope", "1") // not a bloomlab command: an error in the block
	c.do("CF.ADD", "tx2"+p, "1")
	c.do("EXEC")
	// A LOADCHUNK copy of a filter.
	chunks := scanDumpAll(t, c, "bf"+p)
	for _, ch := range chunks {
		c.do("BF.LOADCHUNK", "bfcopy"+p, ch[0], ch[1])
	}
	// A key that expires on the primary (its DEL reaches the replica).
	c.do("SET", "short"+p, "v", "PX", "30")
	time.Sleep(60 * time.Millisecond)
	c.do("GET", "short"+p)
}

// TestReplicationServeToServe: a serve replica of a serve primary, fed a
// full sync and then the stream, ends with every key's DUMP equal to the
// primary's, for the five RedisBloom families and strings, MULTI/EXEC,
// LOADCHUNK, TOPK's decay, a t-digest merge and expiries; WAIT counts it;
// ROLE and INFO replication describe both sides; the replica is read-only.
func TestReplicationServeToServe(t *testing.T) {
	p := start(t, Config{Dir: t.TempDir()})
	pc := dial(t, p)
	workload(t, pc, 1)
	r := start(t, Config{Dir: t.TempDir(), ReplicaOf: p.Addr().String()})
	rc := dial(t, r)
	waitFor(t, "the replica's link", func() bool { return infoField(rc, "replication", "master_link_status") == "up" })
	workload(t, pc, 2)
	if got := pc.do("WAIT", "1", "5000"); got != ":1" {
		t.Fatalf("WAIT 1 5000: %s", got)
	}
	waitFor(t, "the replica's offset", func() bool {
		return infoField(rc, "replication", "slave_repl_offset") == infoField(pc, "replication", "master_repl_offset")
	})
	sameData(t, pc, rc)
	if got := rc.do("BF.ADD", "bf1", "z"); !strings.HasPrefix(got, "-READONLY") {
		t.Errorf("BF.ADD on the replica: %s", got)
	}
	if got := rc.do("BF.EXISTS", "bf1", "a"); got != ":1" && got != "#true" {
		t.Errorf("BF.EXISTS on the replica: %s", got)
	}
	if role := pc.do("ROLE"); !strings.HasPrefix(role, `*[$"master", :`) {
		t.Errorf("ROLE on the primary: %s", role)
	}
	if role := rc.do("ROLE"); !strings.Contains(role, `$"slave"`) || !strings.Contains(role, `$"connected"`) {
		t.Errorf("ROLE on the replica: %s", role)
	}
	if n := infoField(pc, "replication", "connected_slaves"); n != "1" {
		t.Errorf("connected_slaves %s", n)
	}
	if n := infoField(pc, "stats", "sync_full"); n != "1" {
		t.Errorf("sync_full %s", n)
	}
}

// TestReplicationPartialResync: a replica whose link breaks resumes with
// PSYNC from the backlog (+CONTINUE, sync_partial_ok), not a full sync;
// after REPLICAOF NO ONE the promoted replica continues its former
// primary, attached as its replica, partially too (PSYNC2's secondary ID).
func TestReplicationPartialResync(t *testing.T) {
	p := start(t, Config{})
	pc := dial(t, p)
	pc.do("BF.ADD", "f", "1")
	r := start(t, Config{ReplicaOf: p.Addr().String()})
	rc := dial(t, r)
	waitFor(t, "the link", func() bool { return infoField(rc, "replication", "master_link_status") == "up" })
	l := r.repl.replicaLink()
	l.mu.Lock()
	l.conn.Close() // the link breaks
	l.mu.Unlock()
	pc.do("BF.ADD", "f", "2")
	waitFor(t, "the partial resync", func() bool { return infoField(pc, "stats", "sync_partial_ok") == "1" })
	if pc.do("WAIT", "1", "5000") != ":1" {
		t.Fatal("WAIT after the partial resync")
	}
	waitFor(t, "the offsets", func() bool {
		return infoField(rc, "replication", "slave_repl_offset") == infoField(pc, "replication", "master_repl_offset")
	})
	sameData(t, pc, rc)
	if n := infoField(pc, "stats", "sync_full"); n != "1" {
		t.Errorf("sync_full %s after a broken link, want 1", n)
	}
	// Failover: the replica is promoted, the old primary follows it.
	if got := rc.do("REPLICAOF", "NO", "ONE"); got != "+OK" {
		t.Fatalf("REPLICAOF NO ONE: %s", got)
	}
	rc.do("BF.ADD", "f", "3")
	if got := pc.do("REPLICAOF", "127.0.0.1", port(r)); got != "+OK" {
		t.Fatalf("REPLICAOF: %s", got)
	}
	waitFor(t, "the old primary's link", func() bool { return infoField(pc, "replication", "master_link_status") == "up" })
	if n := infoField(rc, "stats", "sync_partial_ok"); n != "1" {
		t.Errorf("the promoted replica's sync_partial_ok %s, want 1 (PSYNC2)", n)
	}
	waitFor(t, "the offsets", func() bool {
		return infoField(pc, "replication", "slave_repl_offset") == infoField(rc, "replication", "master_repl_offset")
	})
	sameData(t, rc, pc)
	if id2 := infoField(rc, "replication", "master_replid2"); id2 == noReplID {
		t.Error("no secondary ID after the promotion")
	}
}

// TestRedisReplicaOfServe: Debian's redis-server replicates from serve
// (strings: a plain Redis has no RedisBloom), through the full sync and
// the stream.
func TestRedisReplicaOfServe(t *testing.T) {
	p := start(t, Config{})
	pc := dial(t, p)
	pc.do("SET", "a", "1")
	pc.do("SET", "b", "2", "PX", "600000")
	rs := redistest.Start(t, redistest.Options{Extra: []string{"--replicaof", "127.0.0.1", port(p), "--repl-diskless-load", "disabled"}})
	rc := dialAddr(t, rs.Addr)
	waitFor(t, "redis-server's link", func() bool { return infoField(rc, "replication", "master_link_status") == "up" })
	pc.do("SET", "c", "3")
	pc.do("MULTI")
	pc.do("SET", "d", "4")
	pc.do("DEL", "a")
	pc.do("EXEC")
	if got := pc.do("WAIT", "1", "5000"); got != ":1" {
		t.Fatalf("WAIT: %s", got)
	}
	for k, want := range map[string]string{"a": "$-1", "b": `$"2"`, "c": `$"3"`, "d": `$"4"`} {
		if got := rc.do("GET", k); got != want {
			t.Errorf("redis-server's GET %s: %s, want %s", k, got, want)
		}
	}
	if ttl := rc.do("PTTL", "b"); !strings.HasPrefix(ttl, ":") || ttl == ":-1" {
		t.Errorf("redis-server's PTTL b: %s", ttl)
	}
}

// TestServeReplicaOfRedis: serve replicates from Debian's redis-server:
// strings through the full sync and the stream; a key of another type
// stops replication with a message unless -replica-skip-unsupported
// skips and counts it.
func TestServeReplicaOfRedis(t *testing.T) {
	rs := redistest.Start(t, redistest.Options{Extra: []string{"--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0"}})
	rcl := rs.Client("")
	ctx := context.Background()
	rcl.Set(ctx, "a", "1", 0)
	rcl.Set(ctx, "b", "2", time.Hour)
	r := start(t, Config{ReplicaOf: rs.Addr, ReplicaSkipUnsupported: true})
	sc := dial(t, r)
	waitFor(t, "serve's link", func() bool { return infoField(sc, "replication", "master_link_status") == "up" })
	rcl.Set(ctx, "c", "3", 0)
	rcl.RPush(ctx, "list", "x") // skipped and counted
	rcl.Del(ctx, "a")
	rcl.IncrBy(ctx, "n", 5) // serve has no INCRBY: skipped and counted
	if n, err := rcl.Wait(ctx, 1, 5*time.Second).Result(); err != nil || n != 1 {
		t.Fatalf("redis-server's WAIT: %d %v", n, err)
	}
	waitFor(t, "the offsets", func() bool {
		return infoField(sc, "replication", "slave_repl_offset") == infoField(dialAddr(t, rs.Addr), "replication", "master_repl_offset")
	})
	for k, want := range map[string]string{"a": "$-1", "b": `$"2"`, "c": `$"3"`} {
		if got := sc.do("GET", k); got != want {
			t.Errorf("serve's GET %s: %s, want %s", k, got, want)
		}
	}
	for _, k := range []string{"list", "n"} {
		if ex := sc.do("EXISTS", k); ex != ":0" {
			t.Errorf("EXISTS %s: %s", k, ex)
		}
	}
	if got := infoField(sc, "replication", "bloomlab_replica_skipped"); got != "command incrby=1,command rpush=1" {
		t.Errorf("bloomlab_replica_skipped: %q", got)
	}
}

// TestReplicaRestartResumes: a replica with a directory that stops (its
// log holds every change and its position in the primary's stream) starts
// again with PSYNC from where it was: a partial resync, the writes made
// meanwhile applied, nothing applied twice (CMS.INCRBY counts).
func TestReplicaRestartResumes(t *testing.T) {
	p := start(t, Config{})
	pc := dial(t, p)
	pc.do("CMS.INITBYDIM", "c", "100", "4")
	pc.do("CMS.INCRBY", "c", "a", "1")
	dir := t.TempDir()
	cfg := Config{Dir: dir, ReplicaOf: p.Addr().String()}
	r, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rc := dial(t, r)
	waitFor(t, "the link", func() bool { return infoField(rc, "replication", "master_link_status") == "up" })
	for i := 0; i < 10; i++ {
		pc.do("CMS.INCRBY", "c", "a", "1")
	}
	if pc.do("WAIT", "1", "5000") != ":1" {
		t.Fatal("WAIT")
	}
	r.Close() // as a kill: no final snapshot, the log holds everything
	pc.do("CMS.INCRBY", "c", "a", "5")
	r = start(t, cfg)
	rc = dial(t, r)
	waitFor(t, "the link after the restart", func() bool { return infoField(rc, "replication", "master_link_status") == "up" })
	if n := infoField(pc, "stats", "sync_partial_ok"); n != "1" {
		t.Errorf("sync_partial_ok %s after the replica's restart, want 1; sync_full %s", n, infoField(pc, "stats", "sync_full"))
	}
	if pc.do("WAIT", "1", "5000") != ":1" {
		t.Fatal("WAIT after the restart")
	}
	waitFor(t, "the offsets", func() bool {
		return infoField(rc, "replication", "slave_repl_offset") == infoField(pc, "replication", "master_repl_offset")
	})
	if got := rc.do("CMS.QUERY", "c", "a"); got != "*[:16]" {
		t.Errorf("CMS.QUERY c a on the replica: %s, want 16", got)
	}
	sameData(t, pc, rc)
}

// TestReplicationCarriesBloomlabValues: values Redis cannot load (a
// blocked-layout BF, a LOADCHUNK in progress) reach a serve replica in the
// full sync (the carrier module type) DUMP-equal; while a replica that is
// not serve is attached, BF.RESERVE … LAYOUT BLOCKED is refused, nothing
// made, and the full sync of such a replica is refused while the keyspace
// holds one.
func TestReplicationCarriesBloomlabValues(t *testing.T) {
	p := start(t, Config{})
	pc := dial(t, p)
	pc.do("BF.RESERVE", "bl", "0.01", "1000", "LAYOUT", "BLOCKED")
	pc.do("BF.ADD", "bl", "a")
	pc.do("BF.ADD", "src", "a")
	chunks := scanDumpAll(t, pc, "src")
	pc.do("BF.LOADCHUNK", "half", chunks[0][0], chunks[0][1]) // a load in progress
	r := start(t, Config{ReplicaOf: p.Addr().String()})
	rc := dial(t, r)
	waitFor(t, "the link", func() bool { return infoField(rc, "replication", "master_link_status") == "up" })
	if got := rc.do("BF.EXISTS", "bl", "a"); got != "#true" && got != ":1" {
		t.Errorf("the blocked BF on the replica: BF.EXISTS %s", got)
	}
	for _, k := range []string{"bl", "src"} {
		if a, b := pc.do("DUMP", k), rc.do("DUMP", k); a != b {
			t.Errorf("%s: DUMP differs", k)
		}
	}
	if typ := rc.do("TYPE", "half"); typ != pc.do("TYPE", "half") {
		t.Errorf("the load in progress: TYPE %s on the replica", typ)
	}
	// A plain Redis replica: refused at its full sync, and blocked keys
	// are refused while it is attached.
	rs := redistest.Start(t, redistest.Options{Extra: []string{"--replicaof", "127.0.0.1", port(p)}})
	waitFor(t, "the refusal", func() bool { return infoField(pc, "replication", "bloomlab_replicas_refused") != "" })
	if why := infoField(pc, "replication", "bloomlab_last_refusal"); !strings.Contains(why, `"bl" holds a`) {
		t.Errorf("INFO's refusal: %q", why)
	}
	pc.do("DEL", "bl", "half", "src") // a Redis without RedisBloom cannot load src either
	waitFor(t, "redis-server's link", func() bool { return infoField(dialAddr(t, rs.Addr), "replication", "master_link_status") == "up" })
	if got := pc.do("BF.RESERVE", "bl2", "0.01", "1000", "LAYOUT", "BLOCKED"); !strings.Contains(got, "not bloomlab serve") {
		t.Errorf("BF.RESERVE LAYOUT BLOCKED with a Redis replica attached: %s", got)
	}
	if ex := pc.do("EXISTS", "bl2"); ex != ":0" {
		t.Errorf("the refused BF.RESERVE made a key: EXISTS %s", ex)
	}
}

// TestMinReplicasToWrite: with min-replicas-to-write 1 a write is refused
// with Redis's NOREPLICAS text until a replica is online and acknowledging,
// and reads are not.
func TestMinReplicasToWrite(t *testing.T) {
	p := start(t, Config{MinReplicasToWrite: 1, MinReplicasMaxLag: 2 * time.Second})
	pc := dial(t, p)
	if got := pc.do("BF.ADD", "f", "a"); got != "-NOREPLICAS Not enough good replicas to write." {
		t.Fatalf("BF.ADD without replicas: %s", got)
	}
	if got := pc.do("BF.EXISTS", "f", "a"); strings.HasPrefix(got, "-") {
		t.Fatalf("BF.EXISTS without replicas: %s", got)
	}
	r := start(t, Config{ReplicaOf: p.Addr().String()})
	rc := dial(t, r)
	waitFor(t, "the link", func() bool { return infoField(rc, "replication", "master_link_status") == "up" })
	waitFor(t, "a good replica", func() bool { return !strings.HasPrefix(pc.do("BF.ADD", "f", "a"), "-") })
}

// TestMigrationFromRedisBloom runs when BLOOMLAB_REDISBLOOM_SO names a
// RedisBloom module: serve replicates a redis-server with RedisBloom
// under writes of all five families, then is promoted (live migration):
// every BF, CF, CMS and TDIGEST key is DUMP-equal to Redis's, TOPK keys
// list the same items (RedisBloom's decay draws from rand(), so their
// counts may differ), strings equal.
func TestMigrationFromRedisBloom(t *testing.T) {
	so := os.Getenv("BLOOMLAB_REDISBLOOM_SO")
	if so == "" {
		t.Skip("BLOOMLAB_REDISBLOOM_SO names no RedisBloom module")
	}
	rs := redistest.Start(t, redistest.Options{Extra: []string{"--loadmodule", so, "--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0"}})
	rc := dialAddr(t, rs.Addr)
	before := [][]string{{"BF.ADD", "b1", "x"}, {"BF.RESERVE", "b2", "0.001", "1000"}, {"CF.ADD", "c1", "x"},
		{"CMS.INITBYDIM", "m1", "100", "4"}, {"CMS.INCRBY", "m1", "a", "3"}, {"TOPK.RESERVE", "t1", "3"},
		{"TDIGEST.CREATE", "d1"}, {"TDIGEST.ADD", "d1", "1", "2", "3"}, {"SET", "s1", "v"}}
	for _, cmd := range before {
		rc.do(cmd...)
	}
	r := start(t, Config{Dir: t.TempDir(), ReplicaOf: rs.Addr, ReplicaSkipUnsupported: true})
	sc := dial(t, r)
	waitFor(t, "the link", func() bool { return infoField(sc, "replication", "master_link_status") == "up" })
	for i := 0; i < 200; i++ {
		it := "i" + strconv.Itoa(i)
		for _, cmd := range [][]string{{"BF.ADD", "b1", it}, {"BF.ADD", "bn" + strconv.Itoa(i%3), it}, {"CF.ADD", "c1", it},
			{"CF.ADDNX", "cn", it}, {"CF.INSERT", "ci", "ITEMS", it}, {"CMS.INCRBY", "m1", "k" + strconv.Itoa(i%5), "1"},
			{"TOPK.ADD", "t1", "k" + strconv.Itoa(i%7)}, {"TDIGEST.ADD", "d1", strconv.Itoa(i)}, {"BF.INSERT", "bi", "ITEMS", it},
			{"RPUSH", "list", it}} {
			rc.do(cmd...)
		}
	}
	for _, cmd := range [][]string{{"CF.DEL", "c1", "i3"}, {"BF.MADD", "b2", "a", "b"}, {"TDIGEST.CREATE", "d2"},
		{"TDIGEST.ADD", "d2", "5", "6"}, {"TDIGEST.MERGE", "dm", "2", "d1", "d2"}} {
		rc.do(cmd...)
	}
	if got := rc.do("WAIT", "1", "5000"); got != ":1" {
		t.Fatalf("WAIT on Redis: %s", got)
	}
	if got := sc.do("REPLICAOF", "NO", "ONE"); got != "+OK" {
		t.Fatalf("REPLICAOF NO ONE: %s", got)
	}
	for _, k := range keysOf(rc) {
		switch typ := rc.do("TYPE", k); typ {
		case "+list":
			if ex := sc.do("EXISTS", k); ex != ":0" {
				t.Errorf("%s: a list on serve", k)
			}
		case "+TopK-TYPE":
			if a, b := rc.do("TOPK.LIST", k), sc.do("TOPK.LIST", k); a != b {
				t.Errorf("%s: TOPK.LIST %s on Redis, %s on serve", k, a, b)
			}
		case "+TDIS-TYPE":
			// A digest unmerged at the full sync: Redis's forked child
			// merges its copy for the payload and the primary keeps its
			// buffer, so every replica's (Redis's own too) counts one
			// compression more; the centroids are the same.
			q := []string{"TDIGEST.QUANTILE", k, "0", "0.1", "0.5", "0.9", "1"}
			if a, b := rc.do(q...), sc.do(q...); a != b {
				t.Errorf("%s: quantiles %s on Redis, %s on serve", k, a, b)
			}
			info := func(c *rawConn) string {
				v := c.do("TDIGEST.INFO", k)
				return v[:strings.Index(v, "+Total compressions")]
			}
			if a, b := info(rc), info(sc); a != b {
				t.Errorf("%s: TDIGEST.INFO %s on Redis, %s on serve", k, a, b)
			}
		default:
			if a, b := rc.do("DUMP", k), sc.do("DUMP", k); a != b {
				t.Errorf("%s (%s): DUMP differs", k, typ)
			}
		}
	}
	if got := sc.do("BF.ADD", "b1", "after"); got != "#true" && got != ":1" {
		t.Errorf("a write after the promotion: %s", got)
	}
}

// TestRedisBloomReplicaOfServe runs when BLOOMLAB_REDISBLOOM_SO names a
// RedisBloom module: a redis-server with RedisBloom replicates from serve
// (the reverse migration) through the full sync and the stream: BF, CF and
// CMS keys DUMP-equal, TOPK lists and TDIGEST quantiles equal.
func TestRedisBloomReplicaOfServe(t *testing.T) {
	so := os.Getenv("BLOOMLAB_REDISBLOOM_SO")
	if so == "" {
		t.Skip("BLOOMLAB_REDISBLOOM_SO names no RedisBloom module")
	}
	p := start(t, Config{})
	pc := dial(t, p)
	workload(t, pc, 1)
	rs := redistest.Start(t, redistest.Options{Extra: []string{"--loadmodule", so, "--replicaof", "127.0.0.1", port(p)}})
	rc := dialAddr(t, rs.Addr)
	waitFor(t, "redis-server's link", func() bool { return infoField(rc, "replication", "master_link_status") == "up" })
	workload(t, pc, 2)
	if got := pc.do("WAIT", "1", "5000"); got != ":1" {
		t.Fatalf("WAIT: %s", got)
	}
	for _, k := range keysOf(pc) {
		switch typ := pc.do("TYPE", k); typ {
		case "+TopK-TYPE":
			if a, b := pc.do("TOPK.LIST", k), rc.do("TOPK.LIST", k); a != b {
				t.Errorf("%s: TOPK.LIST %s on serve, %s on Redis", k, a, b)
			}
		case "+TDIS-TYPE":
			// serve replicates its digests' compressions, which Redis's
			// RedisBloom refuses (an error it logs) and makes at its own
			// queries: the quantiles agree to rounding.
			q := []string{"TDIGEST.QUANTILE", k, "0", "0.1", "0.5", "0.9", "1"}
			pc.send(q...)
			a, _ := pc.read()
			rc.send(q...)
			b, _ := rc.read()
			for i := range a.Elems {
				x, _ := strconv.ParseFloat(string(a.Elems[i].Str), 64)
				y, _ := strconv.ParseFloat(string(b.Elems[i].Str), 64)
				if d := x - y; d > 1e-9*max(1, x) || d < -1e-9*max(1, x) {
					t.Errorf("%s: quantiles %s on serve, %s on Redis", k, a, b)
					break
				}
			}
		default:
			if a, b := pc.do("DUMP", k), rc.do("DUMP", k); a != b {
				t.Errorf("%s (%s): DUMP differs", k, typ)
			}
		}
	}
}

// fakePrimary serves one replication handshake per connection, then
// sends payload after +FULLRESYNC and keeps the connection open.
func fakePrimary(t *testing.T, payload func(c net.Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				rd := resp.NewReader(c, resp.Limits{})
				for {
					args, err := rd.ReadCommand()
					if err != nil {
						return
					}
					switch strings.ToLower(string(args[0])) {
					case "ping":
						c.Write([]byte("+PONG\r\n"))
					case "replconf":
						c.Write([]byte("+OK\r\n"))
					case "psync":
						c.Write([]byte("+FULLRESYNC " + strings.Repeat("a", 40) + " 100\r\n"))
						payload(c)
						time.Sleep(2 * time.Second)
						return
					}
				}
			}()
		}
	}()
	return l.Addr().String()
}

// TestReplicaRefusesBadPrimary: a "primary" that sends a truncated,
// corrupt, oversized or endless payload, or a stream of a command larger
// than maxmemory allows, makes the replica refuse it with a log line: its
// previous dataset stays, its memory stays under maxmemory, nothing panics.
func TestReplicaRefusesBadPrimary(t *testing.T) {
	var good bytes.Buffer
	rw, _ := rdb.NewWriter(&good, 10, false)
	rw.SelectDB(0)
	rw.String([]byte("k"), []byte("v"))
	rw.Close()
	cases := map[string]func(c net.Conn){
		"truncated": func(c net.Conn) { fmt.Fprintf(c, "$%d\r\n%s", good.Len(), good.Bytes()[:good.Len()-5]) },
		"corrupt": func(c net.Conn) {
			b := bytes.Clone(good.Bytes())
			b[len(b)-3] ^= 0xff // the checksum
			fmt.Fprintf(c, "$%d\r\n%s", len(b), b)
		},
		"huge length": func(c net.Conn) { fmt.Fprintf(c, "$99999999999999\r\nREDIS0010") },
		"not an rdb":  func(c net.Conn) { fmt.Fprintf(c, "$5\r\nhello") },
		"no mark":     func(c net.Conn) { fmt.Fprintf(c, "$EOF:%s\r\n%s", strings.Repeat("b", 40), good.Bytes()) },
		"bad header":  func(c net.Conn) { fmt.Fprintf(c, "*3\r\n") },
		"huge string": func(c net.Conn) {
			fmt.Fprintf(c, "$EOF:%s\r\nREDIS0010\xfe\x00\x00\x01k\x80\x00\x00\x00\x10\x00\x00\x00", strings.Repeat("c", 40)) // a 64 GiB string
		},
		"big command": func(c net.Conn) {
			fmt.Fprintf(c, "$EOF:%s\r\n%s%s", strings.Repeat("d", 40), good.Bytes(), strings.Repeat("d", 40))
			fmt.Fprintf(c, "*3\r\n$3\r\nSET\r\n$1\r\nx\r\n$%d\r\n", 64<<20)
			c.Write(bytes.Repeat([]byte("x"), 40<<20))
		},
	}
	for name, payload := range cases {
		t.Run(name, func(t *testing.T) {
			var logs syncBuf
			r := start(t, Config{MaxMemory: 32 << 20, Logger: log.New(&logs, "", 0)})
			rc := dial(t, r)
			rc.do("SET", "old", "1")
			addr := fakePrimary(t, payload)
			if got := rc.do("REPLICAOF", "127.0.0.1", addr[strings.LastIndexByte(addr, ':')+1:]); got != "+OK" {
				t.Fatalf("REPLICAOF: %s", got)
			}
			refusal := func() string {
				for _, line := range strings.Split(logs.String(), "\n") {
					if strings.Contains(line, "replication from") && !strings.Contains(line, "full sync of") {
						return line
					}
				}
				return ""
			}
			waitFor(t, "a refusal in the log", func() bool { return refusal() != "" })
			if m := r.mem.Load(); m > 32<<20 {
				t.Errorf("%d bytes in use under a 32 MiB maxmemory", m)
			}
			if name != "big command" {
				if got := rc.do("GET", "old"); got != `$"1"` {
					t.Errorf("the previous dataset: GET old %s", got)
				}
			}
			t.Logf("%s", refusal())
		})
	}
}

// syncBuf is a bytes.Buffer safe for a logger and a test.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// TestReplicaofInsideExec: Sentinel's reconfiguration block (MULTI,
// SLAVEOF host port or NO ONE, CONFIG REWRITE, CLIENT KILL TYPE normal,
// CLIENT KILL TYPE pubsub, EXEC) queues whole, answers as Redis's does
// (CONFIG REWRITE fails at EXEC without a file) and changes the role.
func TestReplicaofInsideExec(t *testing.T) {
	p := start(t, Config{})
	r := start(t, Config{})
	rc := dial(t, r)
	block := func(args ...string) string {
		for _, cmd := range [][]string{{"MULTI"}, args, {"CONFIG", "REWRITE"}, {"CLIENT", "KILL", "TYPE", "normal"}, {"CLIENT", "KILL", "TYPE", "pubsub"}} {
			if got := rc.do(cmd...); got != "+OK" && got != "+QUEUED" {
				t.Fatalf("%q: %s", cmd, got)
			}
		}
		return rc.do("EXEC")
	}
	if got := block("SLAVEOF", "127.0.0.1", port(p)); got != "*[+OK, -ERR The server is running without a config file, :0, :0]" {
		t.Errorf("EXEC: %s", got)
	}
	waitFor(t, "the link", func() bool { return infoField(rc, "replication", "master_link_status") == "up" })
	if got := block("SLAVEOF", "NO", "ONE"); !strings.HasPrefix(got, "*[+OK,") {
		t.Errorf("EXEC: %s", got)
	}
	waitFor(t, "the promotion", func() bool { return infoField(rc, "replication", "role") == "master" })
}

// TestReplicationChain: a replica of a replica (A -> B -> C) gets A's
// stream through B, with A's replication ID and offsets: every key equal
// on all three; PSYNC, SYNC and REPLCONF need AUTH when a password is set,
// and -masterauth gives it.
func TestReplicationChain(t *testing.T) {
	a := start(t, Config{Password: "pw"})
	ac := dial(t, a)
	if got := ac.do("PSYNC", "?", "-1"); !strings.HasPrefix(got, "-NOAUTH") {
		t.Errorf("PSYNC before AUTH: %s", got)
	}
	if got := ac.do("REPLCONF", "listening-port", "1"); !strings.HasPrefix(got, "-NOAUTH") {
		t.Errorf("REPLCONF before AUTH: %s", got)
	}
	ac.do("AUTH", "pw")
	ac.do("BF.ADD", "f", "1")
	b := start(t, Config{ReplicaOf: a.Addr().String(), MasterAuth: "pw"})
	bc := dial(t, b)
	c := start(t, Config{ReplicaOf: b.Addr().String()})
	cc := dial(t, c)
	waitFor(t, "the chain", func() bool {
		return infoField(bc, "replication", "master_link_status") == "up" && infoField(cc, "replication", "master_link_status") == "up"
	})
	workload(t, ac, 1)
	waitFor(t, "C's offset", func() bool {
		return infoField(cc, "replication", "slave_repl_offset") == infoField(ac, "replication", "master_repl_offset")
	})
	if id := infoField(cc, "replication", "master_replid"); id != infoField(ac, "replication", "master_replid") {
		t.Errorf("C's replication ID %s is not A's", id)
	}
	sameData(t, ac, bc)
	sameData(t, ac, cc)
}

// cutProxy forwards loopback connections to target until cut closes them
// all (the link breaks; new connections are forwarded again).
type cutProxy struct {
	l     net.Listener
	mu    sync.Mutex
	conns []net.Conn
	slow  atomic.Bool // the primary's bytes at 32 MiB/s (a full sync long enough to cut)
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{l: l}
	t.Cleanup(func() { l.Close(); p.cut() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, u)
			p.mu.Unlock()
			go func() { io.Copy(u, c); u.Close() }()
			go func() {
				buf := make([]byte, 32<<10)
				for {
					n, err := u.Read(buf)
					if n > 0 {
						if _, werr := c.Write(buf[:n]); werr != nil {
							break
						}
						if p.slow.Load() {
							time.Sleep(time.Millisecond)
						}
					}
					if err != nil {
						break
					}
				}
				c.Close()
			}()
		}
	}()
	return p
}

func (p *cutProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// TestReplicationLinkCuts: the link between a replica and its primary is
// cut during the full sync of a 48 MiB dataset and then three times
// while writes go on: the replica never serves a half-loaded dataset,
// resynchronises (partially, once it has a history), and ends with every
// key equal to the primary's; WAIT-acknowledged writes are all there.
func TestReplicationLinkCuts(t *testing.T) {
	p := start(t, Config{})
	pc := dial(t, p)
	for i := 0; i < 6; i++ {
		pc.do("BF.RESERVE", "big"+strconv.Itoa(i), "0.01", "7000000", "NONSCALING") // 8 MiB each
		pc.do("BF.ADD", "big"+strconv.Itoa(i), "x")
	}
	px := newCutProxy(t, p.Addr().String())
	px.slow.Store(true)
	r := start(t, Config{ReplicaOf: px.l.Addr().String()})
	rc := dial(t, r)
	// Cut as soon as the full sync is under way (it may be over first).
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		if l := r.repl.replicaLink(); l != nil && l.syncing.Load() {
			time.Sleep(200 * time.Millisecond)
			if r.repl.loading.Load() {
				// Clients of a replica that is loading are answered as
				// Redis answers them, not made to wait.
				if got := rc.do("GET", "big0"); !strings.HasPrefix(got, "-LOADING") {
					t.Errorf("GET during the load: %s", got)
				}
				t.Log("a GET during the load answered LOADING")
				if got := infoField(rc, "persistence", "loading"); got != "1" {
					t.Errorf("INFO persistence loading:%s during the load", got)
				}
			}
			px.cut() // mid-transfer
			t.Log("cut during the full sync")
			break
		}
		if infoField(rc, "replication", "master_link_status") == "up" {
			t.Logf("the full sync ended before a cut (%s)", infoField(pc, "replication", "master_repl_offset"))
			break
		}
	}
	if n := rc.do("DBSIZE"); n != ":0" && n != ":6" {
		t.Errorf("DBSIZE %s during the full sync: a half-loaded dataset", n)
	}
	px.slow.Store(false)
	waitFor(t, "the link", func() bool { return infoField(rc, "replication", "master_link_status") == "up" })
	var acked []string
	for round := 0; round < 3; round++ {
		for i := 0; i < 50; i++ {
			it := fmt.Sprintf("r%d-%d", round, i)
			pc.do("BF.ADD", "f", it)
			pc.do("CMS.INCRBY", "c", "a", "1") // not idempotent: applied twice would show
			if i%10 == 0 && pc.do("WAIT", "1", "2000") == ":1" {
				acked = append(acked, it)
			}
		}
		px.cut()
		waitFor(t, "the link back", func() bool { return infoField(rc, "replication", "master_link_status") == "up" })
	}
	if pc.do("WAIT", "1", "5000") != ":1" {
		t.Fatal("WAIT at the end")
	}
	waitFor(t, "the offsets", func() bool {
		return infoField(rc, "replication", "slave_repl_offset") == infoField(pc, "replication", "master_repl_offset")
	})
	sameData(t, pc, rc)
	for _, it := range acked {
		if got := rc.do("BF.EXISTS", "f", it); got != "#true" && got != ":1" {
			t.Errorf("%s, acknowledged by WAIT, is not on the replica: %s", it, got)
		}
	}
	if n := infoField(pc, "stats", "sync_partial_ok"); n == "0" {
		t.Errorf("no partial resync after %d cuts (sync_full %s)", 3, infoField(pc, "stats", "sync_full"))
	}
}

// TestReplicationPrimaryRestarts: a primary stopped and started again on
// its address and directory has a new replication ID (its history before
// the restart is not served): its replica, reconnecting, is refused a
// partial resync and takes a full sync, and ends equal to it.
func TestReplicationPrimaryRestarts(t *testing.T) {
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	p, err := New(Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	go p.Serve(l)
	pc := dialAddr(t, addr)
	pc.do("BF.ADD", "f", "1")
	r := start(t, Config{ReplicaOf: addr})
	rc := dial(t, r)
	waitFor(t, "the link", func() bool { return infoField(rc, "replication", "master_link_status") == "up" })
	id1 := infoField(pc, "replication", "master_replid")
	p.Close()
	l2, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the address is taken meanwhile: %v", err)
	}
	p2, err := New(Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close()
	go p2.Serve(l2)
	pc2 := dialAddr(t, addr)
	pc2.do("BF.ADD", "f", "2")
	waitFor(t, "the full sync from the restarted primary", func() bool { return infoField(pc2, "stats", "sync_full") == "1" })
	if id2 := infoField(pc2, "replication", "master_replid"); id2 == id1 {
		t.Errorf("the restarted primary kept its replication ID %s", id1)
	}
	if pc2.do("WAIT", "1", "5000") != ":1" {
		t.Fatal("WAIT")
	}
	waitFor(t, "the offsets", func() bool {
		return infoField(rc, "replication", "slave_repl_offset") == infoField(pc2, "replication", "master_repl_offset")
	})
	sameData(t, pc2, rc)
}

// TestReplicationSplitBrain: a replica promoted while its primary still
// takes writes, then the old primary made a replica of the new one: it
// takes the new primary's dataset (a full sync: its history went on after
// the split), and the writes it accepted alone are gone, as in Redis.
func TestReplicationSplitBrain(t *testing.T) {
	p := start(t, Config{})
	pc := dial(t, p)
	pc.do("BF.ADD", "f", "before")
	r := start(t, Config{ReplicaOf: p.Addr().String()})
	rc := dial(t, r)
	waitFor(t, "the link", func() bool { return infoField(rc, "replication", "master_link_status") == "up" })
	if pc.do("WAIT", "1", "5000") != ":1" {
		t.Fatal("WAIT")
	}
	rc.do("REPLICAOF", "NO", "ONE")
	pc.do("BF.ADD", "f", "alone-on-the-old") // the split: both take writes
	rc.do("BF.ADD", "f", "on-the-new")
	if got := pc.do("REPLICAOF", "127.0.0.1", port(r)); got != "+OK" {
		t.Fatalf("REPLICAOF: %s", got)
	}
	waitFor(t, "the old primary's link", func() bool { return infoField(pc, "replication", "master_link_status") == "up" })
	waitFor(t, "the offsets", func() bool {
		return infoField(pc, "replication", "slave_repl_offset") == infoField(rc, "replication", "master_repl_offset")
	})
	sameData(t, rc, pc)
	if got := pc.do("BF.EXISTS", "f", "on-the-new"); got != ":1" && got != "#true" {
		t.Errorf("the new primary's write on the old one: %s", got)
	}
	if got := pc.do("BF.EXISTS", "f", "alone-on-the-old"); got != ":0" && got != "#false" {
		t.Errorf("the write the old primary took alone is still there: %s", got)
	}
	if full, part := infoField(rc, "stats", "sync_full"), infoField(rc, "stats", "sync_partial_ok"); full != "1" || part != "0" {
		t.Errorf("the new primary served %s full and %s partial syncs, want 1 and 0 (the old primary's history diverged)", full, part)
	}
}

// TestFeedAllocs: with a backlog (a replica attached), a write's feed
// into the stream encodes into the stream's blocks: nothing allocated per
// command but a new block every 64 KiB, and the bytes are the command's
// RESP encoding, commandLen long, for every length of argument.
func TestFeedAllocs(t *testing.T) {
	var r replication
	r.init(0)
	r.active.Store(true)
	r.selectd = true
	args := [][]byte{[]byte("BF.ADD"), []byte("key"), bytes.Repeat([]byte("x"), 150)}
	for _, n := range []int{0, 1, 9, 10, 99, 100, 12345} {
		a := [][]byte{[]byte("SET"), bytes.Repeat([]byte("k"), n)}
		before := r.offset.Load()
		r.feed(a)
		if got, want := r.offset.Load()-before, int64(len(appendCommand(nil, a))); got != want || int(want) != commandLen(a) {
			t.Fatalf("argument of %d bytes: fed %d bytes, its encoding %d, commandLen %d", n, got, want, commandLen(a))
		}
	}
	per := int(replBlockSize / commandLen(args))
	avg := testing.AllocsPerRun(10*per, func() { r.feed(args) })
	if avg > 2/float64(per) { // one block (and its slot) per block's worth of commands
		t.Errorf("%.4f allocations per fed command, want at most %.4f (a block per %d commands)", avg, 2/float64(per), per)
	}
}
