package server

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bloomlab/bloomlab/rdb"
	"github.com/bloomlab/bloomlab/server/internal/resp"
)

// Structured fuzzing of the command table: every command, with extreme
// integers, floats, lengths and every keyword in every argument position,
// against a server that holds a key of every type (a load in progress
// among them) under a memory limit. FuzzCommands explores combinations
// and sequences; TestCommandWalk walks every command × argument position
// × dictionary value deterministically, so that CI catches the family of
// SCAN's COUNT overflow (issue 21) without a fuzzing run.

// cmdFixture is what the dictionary and the population need from a real
// server: the dump chunks of the populated BF and CF keys.
type cmdFixture struct {
	bfChunks, cfChunks [][2]string // iterator, data: SCANDUMP's order
	// dumps are DUMP payloads of the populated keys of every type that
	// Redis loads, and damaged ones: truncated with their checksum
	// fixed, a wrong checksum, a newer version, a list.
	dumps    map[string]string
	badDumps []string
}

var (
	fixtureOnce sync.Once
	fixture     *cmdFixture
	fixtureErr  error
)

// commandFixture dumps the populated filters once per process.
func commandFixture(t testing.TB) *cmdFixture {
	t.Helper()
	fixtureOnce.Do(func() {
		s, err := New(Config{MaxMemory: -1})
		if err != nil {
			fixtureErr = err
			return
		}
		defer s.Close()
		populate(s, &cmdFixture{})
		fx := &cmdFixture{}
		for _, d := range []struct {
			cmd, key string
			out      *[][2]string
		}{{"BF.SCANDUMP", "bf", &fx.bfChunks}, {"CF.SCANDUMP", "cf", &fx.cfChunks}} {
			iter := int64(0)
			for i := 0; i < 16; i++ {
				v := internalCall(s, d.cmd, d.key, strconv.FormatInt(iter, 10))
				if len(v.Elems) != 2 || v.Elems[0].Int == 0 {
					break
				}
				iter = v.Elems[0].Int
				*d.out = append(*d.out, [2]string{strconv.FormatInt(iter, 10), string(v.Elems[1].Str)})
			}
			if len(*d.out) < 2 {
				fixtureErr = fmt.Errorf("%s %s: %d chunks", d.cmd, d.key, len(*d.out))
				return
			}
		}
		fx.dumps = map[string]string{}
		for _, k := range []string{"bf", "bfns", "cf", "cfns", "cms", "tk", "str", "exp", "td"} {
			v := internalCall(s, "DUMP", k)
			if v.Kind != resp.BulkString || v.Null {
				fixtureErr = fmt.Errorf("DUMP %s: %s", k, v.String())
				return
			}
			p := string(v.Str)
			fx.dumps[k] = p
			val, ver, err := rdb.SplitDump([]byte(p))
			if err != nil {
				fixtureErr = fmt.Errorf("DUMP %s: %v", k, err)
				return
			}
			for _, cut := range []int{1, 2, len(val) / 2, len(val) - 1} {
				if cut > 0 && cut < len(val) {
					fx.badDumps = append(fx.badDumps, string(rdb.EncodeDump(val[:cut], ver)))
				}
			}
			flip := []byte(p)
			flip[len(flip)/2] ^= 0x40
			fx.badDumps = append(fx.badDumps, string(flip), p[:len(p)-1], string(rdb.EncodeDump(val, rdb.MaxVersion+1)))
		}
		fx.badDumps = append(fx.badDumps, string(rdb.EncodeDump([]byte("\x12\x01\x02\x0b\x0b\x00\x00\x00\x01\x00\x81a\x02\xff"), 10)),
			string(rdb.EncodeDump([]byte("\x07\x81\xff\xff\xff\xff\xff\xff\xff\xff"), 10)), string(rdb.EncodeDump(nil, 10)))
		fixture = fx
	})
	if fixtureErr != nil {
		t.Fatal(fixtureErr)
	}
	return fixture
}

// internalCall runs one command on s without a connection and returns its
// reply.
func internalCall(s *Server, args ...string) resp.Value {
	var out bytes.Buffer
	c := &client{s: s, d: s.d, authed: true}
	c.w = resp.NewWriter(&out)
	c.exec(argv(args...))
	c.w.Flush()
	v, _ := resp.NewReplyReader(&out, 0).Read()
	return v
}

// populateCmds makes a key of every type: growing and full non-scaling
// Bloom filters, growing and non-growing cuckoo filters, two sketches of
// one size, strings with and without a time to live, and a BF and a CF
// load in progress (their header chunks, when fx has them).
func populateCmds(fx *cmdFixture) [][]string {
	cmds := [][]string{
		{"BF.RESERVE", "bf", "0.001", "20", "EXPANSION", "2"}, {"BF.MADD", "bf", "a", "b", "c"},
		{"BF.RESERVE", "bfns", "0.01", "2", "NONSCALING"}, {"BF.MADD", "bfns", "a", "b", "c"},
		{"BF.RESERVE", "bfbl", "0.01", "4", "LAYOUT", "BLOCKED"}, {"BF.MADD", "bfbl", "a", "b", "c", "d", "e"},
		{"CF.RESERVE", "cf", "8", "BUCKETSIZE", "2", "MAXITERATIONS", "5", "EXPANSION", "1"},
		{"CF.INSERT", "cf", "ITEMS", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j"},
		{"CF.RESERVE", "cfns", "4", "BUCKETSIZE", "1", "EXPANSION", "0"}, {"CF.ADD", "cfns", "a"},
		{"CMS.INITBYDIM", "cms", "10", "3"}, {"CMS.INCRBY", "cms", "a", "5"}, {"CMS.INITBYDIM", "cms2", "10", "3"},
		{"TOPK.RESERVE", "tk", "3", "8", "7", "0.9"}, {"TOPK.ADD", "tk", "a", "b", "a", "c", "d", "a"},
		{"SET", "str", "v"}, {"SET", "exp", "v", "EX", "1000"},
		{"TDIGEST.CREATE", "td", "COMPRESSION", "20"}, {"TDIGEST.ADD", "td", "1", "2", "3", "4.5", "-7"}, {"TDIGEST.CREATE", "td2"},
	}
	if len(fx.bfChunks) > 0 {
		cmds = append(cmds, []string{"BF.LOADCHUNK", "ld", fx.bfChunks[0][0], fx.bfChunks[0][1]},
			[]string{"CF.LOADCHUNK", "cfld", fx.cfChunks[0][0], fx.cfChunks[0][1]})
	}
	return cmds
}

func populate(s *Server, fx *cmdFixture) {
	c := &client{s: s, d: s.d, authed: true}
	c.w = resp.NewWriter(io.Discard)
	for _, cmd := range populateCmds(fx) {
		c.exec(argv(cmd...))
	}
}

// commandDict is the fuzz dictionary: numbers at every boundary the
// commands parse (int32, uint32, float64's integers, int64, uint64, the
// ranges of capacities and expansions), extreme and malformed floats,
// empty and long strings and glob patterns, every keyword a command
// takes (TestCommandDictKeywords keeps it complete), the populated keys
// of every type, and valid dump chunks with their iterators.
func commandDict(fx *cmdFixture) [][]byte {
	d := []string{
		// integers
		"0", "1", "-1", "2", "3", "4", "5", "7", "8", "10", "16", "20", "64", "100", "255", "256", "1000",
		"4096", "65535", "65536", "32768", "32769", "1073741823", "1073741824", "1073741825",
		"2147483647", "2147483648", "-2147483648", "-2147483649", "4294967295", "4294967296", "-4294967296",
		"68719476736", "9007199254740992", "9007199254740993", "-9007199254740992", "4611686018427387903",
		"4611686018427387904", "-4611686018427387904", "9223372036854775807", "-9223372036854775807",
		"-9223372036854775808", "9223372036854775808", "18446744073709551615", "18446744073709551616",
		"-18446744073709551616", "99999999999999999999999", "00", "01", "+1", "-0", " 1", "1 ", "0x10",
		"-4000000000", "-922337203685477500", "922337203685477502", // CMS.MERGE's extreme weights
		// floats
		"1.5", "0.5", "0.01", "0.001", "1e-10", "0.9999999999999999", "1.0", "-0.5", "-0.0", "0.0",
		"1e308", "-1e308", "1.8e308", "1e+308", "1e-320", "-1e-320", "4.9e-324", "2.2250738585072014e-308",
		"inf", "-inf", "+inf", "Infinity", "nan", "NaN", "-nan",
		// strings and patterns
		"", "x", "a", "*", "?", "[", "]", "[^a-z]", "\\", "*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", "\x00", "\r\n", "é",
		strings.Repeat("a", 300), strings.Repeat("*", 1000), strings.Repeat("[", 4096), strings.Repeat("x", 65536),
		// keywords of the commands (TestCommandDictKeywords)
		"MATCH", "COUNT", "TYPE", "EX", "PX", "EXAT", "PXAT", "KEEPTTL", "NX", "XX", "GT", "LT", "GET", "SET",
		"ASYNC", "SYNC", "CAPACITY", "ERROR", "EXPANSION", "NONSCALING", "NOCREATE", "ITEMS", "BUCKETSIZE",
		"MAXITERATIONS", "WEIGHTS", "SCHEDULE", "NOSAVE", "SAVE", "NOW", "FORCE", "ABORT", "AUTH", "SETNAME",
		"setname", "getname", "id", "setinfo", "info", "list", "LIB-NAME", "LIB-VER", "count", "docs",
		"resetstat", "get", "set", "capacity", "size", "filters", "items", "expansion", "default", "all",
		"everything", "server", "memory", "keyspace", "persistence", "clients", "stats", "maxmemory", "*max*",
		"replication", "cpu", "modules", "commandstats", "errorstats", "latencystats", "cluster", // INFO sections
		"string", "MBbloom--", "MBbloomCF", "CMSk-TYPE", "none", "expire", "pexpire", "expireat",
		"cms.initbydim", "bgrewriteaof", "DEL", "EXEC", "MULTI", "FLUSHALL", "PEXPIREAT", "OK", "PONG",
		"B", "K", "M", "G", "T", "RELOAD", "MERGE", "NOFLUSH", "debug", // DEBUG RELOAD
		"PROFILE", "redisbloom", "bloomlab", // the log's CMS.INITBYDIM … PROFILE p (replay only)
		"LAYOUT", "BLOCKED", "REDISBLOOM", "layout", "bloomlab-bf-layout", "bfbl", // bloomlab's BF layouts
		"WITHCOUNT", "WITH", "withcount", "WITHCOUNTS", "topk.incrby", "100000", "100001", "TopK-TYPE", // TOPK
		"COMPRESSION", "OVERRIDE", "TDIS-TYPE", "tdigest.min", "tdigest.revrank", "tdigest.byrevrank", // TDIGEST.*
		"usage", "SAMPLES", // MEMORY USAGE
		"REPLCONF", "GETACK", "getack", "ack", "no", "one", "listening-port", "ip-address", "capa", "eof", "psync2",
		"rdb-channel", "rdb-only", "rdb-filter-only", "fack", "?", "127.0.0.1", // replication
		"kill", "normal", "master", "replica", "slave", "pubsub", "addr", "laddr", "skipme", "yes", "rewrite", // CLIENT KILL, CONFIG REWRITE
		"REPLACE", "ABSTTL", "IDLETIME", "FREQ", "RESTORE", // RESTORE
		"CHANNELS", "NUMSUB", "NUMPAT", "channels", "numsub", "numpat", "ch", "c*", "message", "RESET", // PUBSUB, RESET
		// MODULE, and the module configs (CONFIG GET/SET)
		"filterby", "aclcat", "pattern", "BF", "CMS.I*",
		"module", "help", "load", "loadex", "unload", "bf-error-rate", "bf-initial-size", "bf-expansion-factor",
		"cf-bucket-size", "cf-initial-size", "cf-max-iterations", "cf-expansion-factor", "cf-max-expansions",
		"bf-*", "cf-?ucket-size", "0.25", "0x10", "65536",
		// keys of every type, and one that does not exist
		"bf", "bfns", "cf", "cfns", "cms", "cms2", "tk", "str", "exp", "ld", "cfld", "nokey", "td", "td2",
	}
	for _, ch := range [][][2]string{fx.bfChunks, fx.cfChunks} {
		for _, c := range ch {
			d = append(d, c[0], c[1])
		}
	}
	// DUMP payloads of every type that has one, and damaged ones.
	for _, k := range sortedKeys(fx.dumps) {
		d = append(d, fx.dumps[k])
	}
	d = append(d, fx.badDumps...)
	out := make([][]byte, len(d))
	for i, s := range d {
		out[i] = []byte(s)
	}
	return out
}

// commandTemplates are valid invocations of every command, reaching its
// options; the walk replaces each argument (and appends one) with every
// dictionary value. TestCommandWalk fails for a command without one.
func commandTemplates(fx *cmdFixture) [][]string {
	return [][]string{
		{"bf.reserve", "new", "0.01", "100", "EXPANSION", "2"}, {"bf.reserve", "new", "0.01", "100", "NONSCALING"},
		{"bf.add", "bf", "x"}, {"bf.madd", "bf", "x", "y"},
		{"bf.insert", "new", "CAPACITY", "100", "ERROR", "0.01", "EXPANSION", "2", "NONSCALING", "ITEMS", "x", "y"},
		{"bf.insert", "bf", "NOCREATE", "ITEMS", "x"},
		{"bf.reserve", "new", "0.01", "100", "LAYOUT", "BLOCKED"},
		{"bf.insert", "new", "CAPACITY", "100", "NONSCALING", "LAYOUT", "BLOCKED", "ITEMS", "x", "y"},
		{"bf.add", "bfbl", "x"}, {"bf.info", "bfbl", "layout"}, {"bf.scandump", "bfbl", "0"},
		{"bf.exists", "bf", "a"}, {"bf.mexists", "bf", "a", "z"}, {"bf.info", "bf", "capacity"}, {"bf.info", "bf"},
		{"bf.card", "bf"}, {"bf.debug", "bf"}, {"bf.scandump", "bf", "0"}, {"bf.scandump", "bf", fx.bfChunks[0][0]},
		{"bf.loadchunk", "new", fx.bfChunks[0][0], fx.bfChunks[0][1]},
		{"bf.loadchunk", "ld", fx.bfChunks[1][0], fx.bfChunks[1][1]},
		{"cf.reserve", "new", "100", "BUCKETSIZE", "2", "MAXITERATIONS", "20", "EXPANSION", "1"},
		{"cf.add", "cf", "x"}, {"cf.addnx", "cf", "x"},
		{"cf.insert", "new", "CAPACITY", "100", "NOCREATE", "ITEMS", "x", "y"}, {"cf.insert", "cfns", "ITEMS", "x", "y"},
		{"cf.insertnx", "new", "CAPACITY", "100", "ITEMS", "x", "a"},
		{"cf.exists", "cf", "a"}, {"cf.mexists", "cf", "a", "z"}, {"cf.count", "cf", "a"}, {"cf.del", "cf", "a"},
		{"cf.compact", "cf"}, {"cf.info", "cf"}, {"cf.debug", "cf"}, {"cf.scandump", "cf", "0"}, {"cf.scandump", "cf", fx.cfChunks[0][0]},
		{"cf.loadchunk", "new", fx.cfChunks[0][0], fx.cfChunks[0][1]},
		{"cf.loadchunk", "cfld", fx.cfChunks[1][0], fx.cfChunks[1][1]},
		{"cms.initbydim", "new", "100", "5"}, {"cms.initbyprob", "new", "0.01", "0.01"},
		{"cms.incrby", "cms", "x", "1", "y", "2"}, {"cms.query", "cms", "a", "x"},
		{"cms.merge", "cms", "2", "cms", "cms2", "WEIGHTS", "1", "2"}, {"cms.merge", "cms", "2", "cms", "cms2", "WEIGHTS", "-1", "2"}, {"cms.merge", "new", "1", "cms"}, {"cms.info", "cms"},
		{"topk.reserve", "new", "3", "8", "7", "0.9"}, {"topk.reserve", "new", "5"}, {"topk.add", "tk", "x", "a"},
		{"topk.incrby", "tk", "x", "3", "a", "100000"}, {"topk.query", "tk", "a", "x"}, {"topk.count", "tk", "a", "x"},
		{"topk.list", "tk", "WITHCOUNT"}, {"topk.list", "tk"}, {"topk.info", "tk"},
		{"tdigest.create", "new", "COMPRESSION", "50"}, {"tdigest.add", "td", "1.5", "-3"}, {"tdigest.reset", "td"},
		{"tdigest.merge", "new", "2", "td", "td2", "COMPRESSION", "30", "OVERRIDE"}, {"tdigest.merge", "td", "1", "td"},
		{"tdigest.min", "td"}, {"tdigest.max", "td"}, {"tdigest.quantile", "td", "0.5", "0.1", "1"}, {"tdigest.cdf", "td", "1", "2.5"},
		{"tdigest.rank", "td", "1", "9"}, {"tdigest.revrank", "td", "1", "9"}, {"tdigest.byrank", "td", "0", "2", "9"},
		{"tdigest.byrevrank", "td", "0", "2", "9"}, {"tdigest.trimmed_mean", "td", "0.1", "0.9"}, {"tdigest.info", "td"},
		{"memory", "usage", "td", "SAMPLES", "5"},
		{"dump", "bf"}, {"dump", "td"}, {"dump", "bfbl"}, {"restore", "new", "0", fx.dumps["bf"]}, {"restore", "new", "0", fx.dumps["tk"]},
		{"restore", "new", "0", fx.dumps["cf"]}, {"restore", "new", "0", fx.dumps["cms"]}, {"restore", "new", "0", fx.dumps["td"]},
		{"restore", "bf", "100000", fx.dumps["str"], "REPLACE", "ABSTTL", "IDLETIME", "5"},
		{"restore", "new", "1", fx.dumps["bf"], "FREQ", "3"},
		{"del", "bf", "str"}, {"unlink", "str"}, {"exists", "bf", "cf"}, {"type", "bf"}, {"keys", "*"},
		{"scan", "0", "MATCH", "*", "COUNT", "10", "TYPE", "string"}, {"dbsize"}, {"rename", "str", "new"},
		{"expire", "str", "100", "NX"}, {"pexpire", "exp", "100000", "GT"}, {"expireat", "str", "100", "XX"},
		{"pexpireat", "exp", "100", "LT"}, {"ttl", "exp"}, {"pttl", "exp"}, {"persist", "exp"},
		{"flushdb", "ASYNC"}, {"flushall", "SYNC"},
		{"set", "str", "v", "EX", "100", "NX", "GET"}, {"set", "exp", "v", "PXAT", "100", "XX", "KEEPTTL"}, {"get", "str"},
		{"ping", "x"}, {"echo", "x"}, {"hello", "3", "AUTH", "default", "pw", "SETNAME", "n"}, {"auth", "default", "pw"},
		{"select", "0"}, {"quit"}, {"reset"},
		{"client", "setname", "n"}, {"client", "getname"}, {"client", "id"}, {"client", "setinfo", "lib-name", "x"},
		{"client", "info"}, {"client", "list"},
		{"command"}, {"command", "count"}, {"command", "info", "get"}, {"command", "docs", "get"}, {"command", "list"},
		{"command", "docs", "bf.insert", "cms.merge"}, {"command", "info", "cf.reserve", "nokey"},
		{"command", "list", "FILTERBY", "MODULE", "bf"}, {"command", "list", "FILTERBY", "PATTERN", "cms.*"},
		{"config", "get", "maxmemory"}, {"config", "set", "x", "y"}, {"config", "resetstat"},
		{"config", "get", "bf-*", "cf-initial-size"}, {"config", "set", "bloomlab-bf-layout", "blocked"},
		{"config", "get", "bloomlab-bf-layout"}, {"config", "set", "bf-error-rate", "0.02", "cf-bucket-size", "3"},
		{"module", "list"}, {"module", "help"}, {"module", "unload", "bf"},
		{"info", "memory"}, {"save"}, {"bgsave", "SCHEDULE"}, {"bgrewriteaof"}, {"lastsave"}, {"shutdown", "NOSAVE"},
		{"debug", "reload"}, {"debug", "reload", "NOSAVE"},
		{"multi"}, {"exec"}, {"discard"}, {"watch", "bf"}, {"unwatch"},
		{"role"}, {"wait", "0", "10"}, {"replconf", "listening-port", "1", "capa", "eof", "capa", "psync2"},
		{"replconf", "ip-address", "127.0.0.1"}, {"replconf", "ack", "0"}, {"replconf", "getack", "*"},
		{"replconf", "rdb-channel", "1"}, {"psync", "?", "-1"}, {"sync"},
		{"replicaof", "127.0.0.1", "1"}, {"slaveof", "no", "one"}, {"replicaof", "no", "one"},
		{"config", "rewrite"}, {"client", "kill", "TYPE", "pubsub", "SKIPME", "yes"}, {"client", "kill", "ID", "999999"},
		{"subscribe", "ch", "bf"}, {"psubscribe", "c*", "[^a-z]"}, {"unsubscribe", "ch"}, {"unsubscribe"},
		{"punsubscribe", "c*"}, {"punsubscribe"}, {"publish", "ch", "message"},
		{"pubsub", "channels", "c*"}, {"pubsub", "numsub", "ch", "bf"}, {"pubsub", "numpat"}, {"pubsub", "help"},
	}
}

// subscribing reports whether cmd changes a connection's subscriptions:
// its replies are one per channel, and RESP2's subscribed mode answers
// what follows otherwise.
func subscribing(cmd *command) bool {
	switch cmd.name {
	case "subscribe", "psubscribe", "unsubscribe", "punsubscribe":
		return true
	}
	return false
}

// pongLike reports whether v is PING's answer: PONG, or ["pong", ""] in
// RESP2's subscribed mode.
func pongLike(v resp.Value) bool {
	return v.String() == "+PONG" || v.Kind == resp.ArrayReply && len(v.Elems) == 2 && string(v.Elems[0].Str) == "pong" && len(v.Elems[1].Str) == 0
}

// fuzzable is the command table without the commands tests add.
func fuzzable() []*command {
	var out []*command
	for _, c := range sortedCommands() {
		if !strings.HasPrefix(c.name, "test.") {
			out = append(out, c)
		}
	}
	return out
}

// allocated is the bytes the process has allocated so far.
func allocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// walker runs the walk's steps against one server over one connection.
type walker struct {
	t      *testing.T
	fx     *cmdFixture
	proto  int
	dir    string
	s      *Server
	conn   net.Conn
	rr     *resp.ReplyReader
	dirty  bool // the keyspace may differ from the population
	steps  int
	maxMem int64
}

func (w *walker) cfg() Config {
	return Config{Dir: w.dir, AppendFsync: No, AutoRewriteSize: 4 << 20, MaxMemory: w.maxMem,
		MaxBulk: 1 << 20, MaxArgs: 1 << 10, MaxCommand: 1 << 22}
}

func (w *walker) start() {
	s, err := Run(w.cfg())
	if err != nil {
		w.t.Fatalf("after %d steps: the server does not start again: %v", w.steps, err)
	}
	w.s = s
	w.connect()
}

func (w *walker) connect() {
	if w.conn != nil {
		w.conn.Close()
	}
	conn, err := net.Dial("tcp", w.s.Addr().String())
	if err != nil {
		w.t.Fatal(err)
	}
	w.conn, w.rr = conn, resp.NewReplyReader(conn, 0)
	if w.proto == 3 {
		w.send([]string{"HELLO", "3"})
		w.read()
	}
}

func (w *walker) send(cmds ...[]string) {
	var b bytes.Buffer
	for _, c := range cmds {
		b.Write(resp.Command(c...))
	}
	w.conn.SetWriteDeadline(time.Now().Add(20 * time.Second))
	if _, err := w.conn.Write(b.Bytes()); err != nil {
		w.t.Fatalf("step %d: %v", w.steps, err)
	}
}

func (w *walker) read() (resp.Value, error) {
	w.conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	return w.rr.Read()
}

// step runs args, then DISCARD (ending a MULTI it opened) and PING, which
// must answer PONG: the server is up and answers.
func (w *walker) step(args []string) {
	w.steps++
	if w.s.repl.replicaLink() != nil {
		w.s.promote() // a REPLICAOF step: back to a primary
	}
	if cmd := commandTable[strings.ToLower(args[0])]; cmd != nil && cmd.name == "wait" && len(args) == 3 {
		// WAIT for replicas that do not exist blocks for its timeout (0:
		// for ever), as in Redis: the walk waits at most 10 ms.
		if ms, ok := parseInt([]byte(args[2])); ok && (ms == 0 || ms > 10) {
			args = []string{args[0], args[1], "10"}
		}
	}
	if w.dirty {
		internalCall(w.s, "FLUSHALL")
		populate(w.s, w.fx)
		w.dirty = false
	}
	cmd := commandTable[strings.ToLower(args[0])]
	before := allocated()
	if subscribing(cmd) {
		w.subscribeStep(args)
		return
	}
	cmds := [][]string{args, {"DISCARD"}}
	if cmd.name == "hello" || cmd.name == "reset" {
		cmds = append(cmds, []string{"HELLO", strconv.Itoa(w.proto)}) // RESET: RESP2
	}
	cmds = append(cmds, []string{"PING"})
	w.send(cmds...)
	show := func() string {
		q := make([]string, len(args))
		for i, a := range args {
			if len(a) > 40 {
				a = a[:40] + fmt.Sprintf("…(%d bytes)", len(a))
			}
			q[i] = strconv.Quote(a)
		}
		return fmt.Sprintf("RESP%d step %d %v", w.proto, w.steps, q)
	}
	v, err := w.read()
	switch {
	case cmd.name == "psync" || cmd.name == "sync":
		// The connection is a replica's now (or was refused and closed):
		// its replies are the sender's.
		w.connect()
		w.dirty = true
		return
	case err != nil && cmd.name == "shutdown":
		select {
		case <-w.s.Done():
		case <-time.After(30 * time.Second):
			w.t.Fatalf("%s: the connection closed and the server did not stop", show())
		}
		w.start() // a restart from the directory: the log must replay
		w.dirty = true
		return
	case err != nil:
		w.t.Fatalf("%s: no reply: %v", show(), err)
	case cmd.name == "quit":
		if _, err := w.read(); err == nil {
			w.t.Fatalf("%s: QUIT did not close the connection", show())
		}
		w.connect()
		return
	}
	for range cmds[1:] {
		if v, err = w.read(); err != nil {
			w.t.Fatalf("%s: no reply after it: %v (the connection or the server died)", show(), err)
		}
	}
	if v.String() != "+PONG" {
		w.t.Fatalf("%s: PING after it answers %s", show(), v)
	}
	if m := w.s.mem.Load(); m > w.maxMem {
		w.t.Fatalf("%s: %d bytes accounted, over the limit %d", show(), m, w.maxMem)
	}
	if a := allocated() - before; a > 4*uint64(w.maxMem) {
		w.t.Fatalf("%s: allocated %d bytes for one command under a %d-byte limit", show(), a, w.maxMem)
	}
	if cmd.flags&(fWrite|fAdmin) != 0 || cmd.name == "multi" || cmd.name == "exec" {
		w.dirty = true
	}
}

// subscribeStep runs a step that subscribes or unsubscribes: one reply
// per channel or pattern (or one, or an error), then PING's answer,
// which RESP2's subscribed mode gives as ["pong", ""]. The connection is
// made again after it, without subscriptions.
func (w *walker) subscribeStep(args []string) {
	w.send(args, []string{"PING"})
	for i := 0; ; i++ {
		v, err := w.read()
		if err != nil {
			w.t.Fatalf("RESP%d step %d %q: no reply: %v", w.proto, w.steps, args, err)
		}
		if pongLike(v) {
			break
		}
		if i > len(args) {
			w.t.Fatalf("RESP%d step %d %q: %d replies and no PONG (last %s)", w.proto, w.steps, args, i+1, v)
		}
	}
	if m := w.s.mem.Load(); m > w.maxMem {
		w.t.Fatalf("RESP%d step %d %q: %d bytes accounted, over the limit %d", w.proto, w.steps, args, m, w.maxMem)
	}
	w.connect()
}

// TestCommandWalk walks every command of the table × every argument
// position (and one more) × every dictionary value, in RESP2 and RESP3,
// against a persisting server under a 64 MiB limit that holds a key of
// every type: each answers (a PING after it answers PONG: nothing panics
// or hangs), accounted memory stays under the limit, no command allocates
// more than four times the limit, and the server restarts from what it
// wrote (after SHUTDOWN, and at the end). With -short it takes every
// fifth value.
func TestCommandWalk(t *testing.T) {
	fx := commandFixture(t)
	dict := commandDict(fx)
	tpls := commandTemplates(fx)
	have := map[string]bool{}
	for _, tpl := range tpls {
		if commandTable[tpl[0]] == nil {
			t.Fatalf("template for unknown command %q", tpl[0])
		}
		have[tpl[0]] = true
	}
	for _, c := range fuzzable() {
		if !have[c.name] {
			t.Errorf("command %s has no template in commandTemplates", c.name)
		}
	}
	stride := 1
	if testing.Short() {
		stride = 5
	}
	for _, proto := range []int{2, 3} {
		w := &walker{t: t, fx: fx, proto: proto, dir: t.TempDir(), maxMem: 64 << 20}
		w.start()
		for _, tpl := range tpls {
			w.step(tpl)
			for pos := 1; pos <= len(tpl); pos++ {
				for i := (pos + proto) % stride; i < len(dict); i += stride {
					args := append([]string(nil), tpl...)
					if pos == len(tpl) {
						args = append(args, string(dict[i]))
					} else {
						args[pos] = string(dict[i])
					}
					w.step(args)
				}
			}
		}
		// What the walk left restarts whole: every key, its type.
		keys := map[string]string{}
		for _, k := range internalCall(w.s, "KEYS", "*").Elems {
			keys[string(k.Str)] = internalCall(w.s, "TYPE", string(k.Str)).String()
		}
		w.conn.Close()
		w.s.Close()
		w.start()
		for k, typ := range keys {
			if got := internalCall(w.s, "TYPE", k).String(); got != typ {
				t.Errorf("RESP%d: after a restart key %q is %s, was %s", proto, k, got, typ)
			}
		}
		if n := internalCall(w.s, "DBSIZE").Int; n != int64(len(keys)) {
			t.Errorf("RESP%d: %d keys after a restart, %d before", proto, n, len(keys))
		}
		t.Logf("RESP%d: %d steps", proto, w.steps)
		w.conn.Close()
		w.s.Close()
	}
}

// TestCommandDictKeywords: the dictionary holds every keyword the
// command files compare arguments with (upper-case literals, eqFold's
// names, subcommands), so that the walk and the fuzzer reach every option.
func TestCommandDictKeywords(t *testing.T) {
	in := map[string]bool{}
	for _, v := range commandDict(&cmdFixture{}) {
		in[strings.ToLower(string(v))] = true
	}
	files, _ := filepath.Glob("cmd_*.go")
	res := []*regexp.Regexp{
		regexp.MustCompile(`"([A-Z][A-Z0-9-]+)"`),
		regexp.MustCompile(`eqFold\([^,]+, "([^"]+)"\)`),
		regexp.MustCompile(`case "([a-z-]+)":`),
	}
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, re := range res {
			for _, m := range re.FindAllSubmatch(src, -1) {
				n++
				if !in[strings.ToLower(string(m[1]))] {
					t.Errorf("%s: keyword %q is not in commandDict", f, m[1])
				}
			}
		}
	}
	if n < 50 {
		t.Fatalf("found only %d keywords: the patterns no longer match the sources", n)
	}
}

// Fuzz inputs: a flags byte (bit 0: RESP3), then commands. A command is a
// selector (below 0x80: the command of fuzzable() at that index modulo
// their number; else a length byte and that many bytes of name), an
// argument count (modulo 12), and each argument: a dictionary index, or
// 0xFF, a length byte and raw bytes, or 0xFE and 8 bytes of a decimal
// int64, or 0xFD and 8 bytes of a float64 ('g'). Stored inputs name
// commands and spell arguments out (encodeCommands), so that they keep
// their meaning when the table or the dictionary grows.

func decodeCommands(data []byte, cmds []*command, dict [][]byte) (proto int, out [][][]byte) {
	if len(data) == 0 {
		return 2, nil
	}
	proto = 2 + int(data[0]&1)
	p := data[1:]
	next := func() (byte, bool) {
		if len(p) == 0 {
			return 0, false
		}
		b := p[0]
		p = p[1:]
		return b, true
	}
	take := func(n int) []byte {
		n = min(n, len(p))
		b := p[:n]
		p = p[n:]
		return b
	}
	for len(out) < 64 {
		sel, ok := next()
		if !ok {
			break
		}
		var name []byte
		if sel < 0x80 {
			name = []byte(cmds[int(sel)%len(cmds)].name)
		} else {
			n, _ := next()
			name = take(int(n))
		}
		nb, _ := next()
		args := [][]byte{name}
		for i := 0; i < int(nb%12); i++ {
			s, ok := next()
			if !ok {
				break
			}
			switch {
			case int(s) < len(dict):
				args = append(args, dict[s])
			case s == 0xFF:
				n, _ := next()
				args = append(args, take(int(n)))
			case s == 0xFE:
				var b [8]byte
				copy(b[:], take(8))
				args = append(args, []byte(strconv.FormatInt(int64(binary.LittleEndian.Uint64(b[:])), 10)))
			case s == 0xFD:
				var b [8]byte
				copy(b[:], take(8))
				args = append(args, []byte(strconv.FormatFloat(math.Float64frombits(binary.LittleEndian.Uint64(b[:])), 'g', -1, 64)))
			default:
				args = append(args, dict[int(s)%len(dict)])
			}
		}
		out = append(out, args)
	}
	return proto, out
}

// encodeCommands is a fuzz input for cmds, commands by name and arguments
// spelled out (arguments longer than 255 bytes are cut).
func encodeCommands(proto int, cmds ...[]string) []byte {
	out := []byte{byte(proto - 2)}
	for _, c := range cmds {
		out = append(out, 0x80, byte(len(c[0])))
		out = append(out, c[0]...)
		out = append(out, byte(len(c)-1))
		for _, a := range c[1:] {
			if len(a) > 255 {
				a = a[:255]
			}
			out = append(out, 0xFF, byte(len(a)))
			out = append(out, a...)
		}
	}
	return out
}

// captureConn is a fakeConn that keeps the replies.
type captureConn struct {
	fakeConn
	mu  sync.Mutex
	out bytes.Buffer
}

func (c *captureConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.Write(p)
}

// FuzzCommands runs sequences of commands chosen from the table, with
// arguments from the dictionary or raw bytes, on a server that holds a
// key of every type under a 32 MiB limit, in RESP2 or RESP3: nothing
// panics or hangs, every command gets exactly one well-formed reply (a
// PING at the end answers PONG unless the input quit or shut down),
// accounted memory stays under the limit and the input allocates no more
// than its commands could within it.
func FuzzCommands(f *testing.F) {
	fx := commandFixture(f)
	dict := commandDict(fx)
	cmds := fuzzable()
	f.Add(encodeCommands(2, []string{"SET", "a", "b"}, []string{"SCAN", "0", "COUNT", "4611686018427387904"}))
	f.Add(encodeCommands(3, []string{"SCAN", "0", "COUNT", "9223372036854775807", "MATCH", "*"}))
	for i, tpl := range commandTemplates(fx) {
		f.Add(encodeCommands(2+i%2, tpl))
	}
	f.Add(encodeCommands(2, []string{"SUBSCRIBE", "ch", "bf"}, []string{"PSUBSCRIBE", "c*"}, []string{"PUBLISH", "ch", "m"},
		[]string{"GET", "str"}, []string{"PING"}, []string{"UNSUBSCRIBE"}, []string{"PUNSUBSCRIBE"}, []string{"GET", "str"}))
	f.Add(encodeCommands(3, []string{"SUBSCRIBE", "ch"}, []string{"PSUBSCRIBE", "c*"}, []string{"PUBLISH", "ch", "m"},
		[]string{"MULTI"}, []string{"PUBLISH", "ch", "m"}, []string{"UNSUBSCRIBE"}, []string{"EXEC"}, []string{"PUBSUB", "NUMSUB", "ch"}))
	f.Add(encodeCommands(2, []string{"MULTI"}, []string{"SUBSCRIBE", "ch"}, []string{"EXEC"}, []string{"DISCARD"}, []string{"PING", "x"}))
	f.Add(encodeCommands(2, []string{"MULTI"}, []string{"BF.ADD", "bf", "q"}, []string{"CF.RESERVE", "new", "4611686018427387904"},
		[]string{"SCAN", "0", "COUNT", "4611686018427387904"}, []string{"EXEC"}))
	const maxMem = 32 << 20
	f.Fuzz(func(t *testing.T, data []byte) {
		proto, list := decodeCommands(data, cmds, dict)
		s, err := New(Config{MaxMemory: maxMem, MaxBulk: 1 << 20, MaxArgs: 1 << 10, MaxCommand: 1 << 22})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		populate(s, fx)
		var in bytes.Buffer
		want := len(list) + 2
		if proto == 3 {
			in.Write(resp.Command("HELLO", "3"))
			want++
		}
		stops := false
		var lower [32]byte
		for _, args := range list {
			if c := lookupCommand(args[0], &lower); c != nil && (c.name == "quit" || c.name == "shutdown" || c.name == "psync" || c.name == "sync") {
				stops = true // PSYNC, SYNC: the connection is a replica's, its replies the sender's
			}
			if c := lookupCommand(args[0], &lower); c != nil && subscribing(c) {
				// A reply per channel, messages of its own PUBLISH, RESP2's
				// subscribed mode: the count is not one per command.
				stops = true
			}
			if c := lookupCommand(args[0], &lower); c != nil && c.name == "wait" && len(args) == 3 {
				// WAIT for replicas that do not exist blocks for its
				// timeout (0: for ever), as in Redis: 10 ms at most here.
				if ms, ok := parseInt(args[2]); ok && (ms == 0 || ms > 10) {
					args = [][]byte{args[0], args[1], []byte("10")}
				}
			}
			in.WriteString("*" + strconv.Itoa(len(args)) + "\r\n")
			for _, a := range args {
				in.WriteString("$" + strconv.Itoa(len(a)) + "\r\n")
				in.Write(a)
				in.WriteString("\r\n")
			}
		}
		in.Write(resp.Command("DISCARD"))
		in.Write(resp.Command("PING"))
		before := allocated()
		done := make(chan struct{})
		conn := &captureConn{fakeConn: fakeConn{r: bytes.NewReader(in.Bytes()), closed: done}}
		s.accept(conn)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("the connection hangs")
		}
		if a := allocated() - before; a > uint64(len(list)+1)*4*maxMem {
			t.Fatalf("%d commands allocated %d bytes under a %d-byte limit", len(list), a, maxMem)
		}
		if m := s.mem.Load(); m > maxMem {
			t.Fatalf("%d bytes accounted, over the limit %d", m, maxMem)
		}
		conn.mu.Lock()
		out := append([]byte(nil), conn.out.Bytes()...)
		conn.mu.Unlock()
		rr := resp.NewReplyReader(bytes.NewReader(out), 0)
		var replies []string
		for {
			v, err := rr.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("malformed reply after %d replies: %v", len(replies), err)
			}
			replies = append(replies, v.String())
		}
		if stops {
			return
		}
		if len(replies) != want || replies[len(replies)-1] != "+PONG" {
			last := replies
			if len(last) > 3 {
				last = last[len(last)-3:]
			}
			t.Fatalf("%d replies to %d commands, ending %v", len(replies), want, last)
		}
	})
}
