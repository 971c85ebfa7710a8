package server

import (
	"fmt"
	"log"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/bloomlab/bloomlab/server/internal/resp"
)

// TestBFTexts24: under Dialect24, BF's refusals are RedisBloom 2.4.23's
// (8.6.2's are in TestRedisReplies and the 8.6.2 transcripts).
func TestBFTexts24(t *testing.T) {
	s := start(t, Config{Dialect: Dialect24})
	c := dial(t, s)
	for _, tc := range [][]string{
		{"-ERR (0 < error rate range < 1) ", "BF.RESERVE", "b", "1", "10"},
		{"-ERR capacity must be in the range [1, 1073741824]", "BF.RESERVE", "b", "0.01", "1073741825"},
		{"-ERR expansion must be in the range [1, 32768]", "BF.RESERVE", "b", "0.01", "10", "EXPANSION", "0"},
		{"-ERR bad error rate", "BF.RESERVE", "b", "nan", "10"},
		{"-Bad argument received", "BF.INSERT", "b", "ERROR", "2", "ITEMS", "x"},
		{"-Bad argument received", "BF.INSERT", "b", "EXPANSION", "0", "ITEMS", "x"},
		{"-Nonscaling filters cannot expand", "BF.RESERVE", "b", "0.01", "10", "NONSCALING", "EXPANSION", "x"},
		{"-Unknown argument received", "BF.INSERT", "b", "FOO", "ITEMS", "x"},
		{"+OK", "BF.RESERVE", "big", "0.5", "10"},
		{"*[:10]", "BF.INFO", "big", "CAPACITY"},
	} {
		if got := c.do(tc[1:]...); got != tc[0] {
			t.Errorf("%v: got %q, want %q", tc[1:], got, tc[0])
		}
	}
	// 2.4 makes a filter at the rate asked for (8 caps it at 0.25).
	if got := c.do("BF.DEBUG", "big"); !strings.Contains(got, "ratio:0.25") {
		t.Errorf("BF.DEBUG of a filter at 0.5 (scaling: 0.25 for link 0): %q", got)
	}
}

// TestBFDebug: BF.DEBUG answers RedisBloom 8.6.2's texts (its
// tests/flow/test_overall.py test_debug: a filter of 0.01 and 10 after
// 100 adds, one of 0.001 and 100 after 4,000), in both dialects and
// protocols, and its refusals.
func TestBFDebug(t *testing.T) {
	for _, d := range []Dialect{Dialect8, Dialect24} {
		s := start(t, Config{Dialect: d})
		for _, proto := range []string{"2", "3"} {
			c := dial(t, s)
			c.do("HELLO", proto)
			c.do("FLUSHALL")
			debug := func(n int, rate, capacity string, want ...string) {
				t.Helper()
				c.do("BF.RESERVE", "bf", rate, capacity)
				for i := 0; i < n; i++ {
					c.send("BF.ADD", "bf", strconv.Itoa(i))
				}
				for i := 0; i < n; i++ {
					c.read()
				}
				c.send("BF.DEBUG", "bf")
				v, _ := c.read()
				var got []string
				for _, e := range v.Elems {
					if e.Kind != resp.BulkString {
						t.Errorf("dialect %s RESP%s: element %v is not a bulk string", d, proto, e)
					}
					got = append(got, string(e.Str))
				}
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("dialect %s RESP%s: BF.DEBUG\n got %q\nwant %q", d, proto, got, want)
				}
				c.do("DEL", "bf")
			}
			debug(100, "0.01", "10", "size:99",
				"bytes:16 bits:128 hashes:8 hashwidth:64 capacity:10 size:10 ratio:0.005",
				"bytes:32 bits:256 hashes:9 hashwidth:64 capacity:20 size:20 ratio:0.0025",
				"bytes:72 bits:576 hashes:10 hashwidth:64 capacity:40 size:40 ratio:0.00125",
				"bytes:160 bits:1280 hashes:11 hashwidth:64 capacity:80 size:29 ratio:0.000625")
			debug(4000, "0.001", "100", "size:3997",
				"bytes:200 bits:1600 hashes:11 hashwidth:64 capacity:100 size:100 ratio:0.0005",
				"bytes:432 bits:3456 hashes:12 hashwidth:64 capacity:200 size:200 ratio:0.00025",
				"bytes:936 bits:7488 hashes:13 hashwidth:64 capacity:400 size:400 ratio:0.000125",
				"bytes:2016 bits:16128 hashes:14 hashwidth:64 capacity:800 size:800 ratio:6.25e-05",
				"bytes:4320 bits:34560 hashes:15 hashwidth:64 capacity:1600 size:1600 ratio:3.125e-05",
				"bytes:9216 bits:73728 hashes:16 hashwidth:64 capacity:3200 size:897 ratio:1.5625e-05")
			c.do("BF.RESERVE", "ns", "0.01", "100", "NONSCALING")
			c.do("SET", "str", "v")
			for _, tc := range [][]string{
				{`*[$"size:0", $"bytes:120 bits:960 hashes:7 hashwidth:64 capacity:100 size:0 ratio:0.01"]`, "BF.DEBUG", "ns"},
				{"-ERR not found", "BF.DEBUG", "nokey"},
				{"-ERR wrong number of arguments for 'bf.debug' command", "BF.DEBUG"},
				{"-ERR wrong number of arguments for 'bf.debug' command", "BF.DEBUG", "ns", "x"},
				{"-" + errWrongType, "BF.DEBUG", "str"},
			} {
				if got := c.do(tc[1:]...); got != tc[0] {
					t.Errorf("dialect %s RESP%s: %v: got %s, want %s", d, proto, tc[1:], got, tc[0])
				}
			}
		}
	}
}

// setBFConfigs sets bf-error-rate, bf-initial-size and
// bf-expansion-factor as CONFIG SET does.
func setBFConfigs(s *Server, rate float64, size, expansion int64) {
	pairs := []modSet{
		{mcBFErrorRate, []byte(strconv.FormatFloat(rate, 'g', -1, 64))},
		{mcBFInitialSize, []byte(strconv.FormatInt(size, 10))},
		{mcBFExpansion, []byte(strconv.FormatInt(expansion, 10))},
	}
	if i, msg := s.modcfg.set(pairs); i >= 0 {
		panic(fmt.Sprintf("setBFConfigs: %s", msg))
	}
}

// TestBFParams8: under Dialect8 an error rate above 0.25 makes a filter
// at 0.25, EXPANSION 0 a non-scaling one (its dump header records
// expansion 0, as RedisBloom 8's does), and new keys take the module
// configs (RedisBloom 8.6.2's test_configs: bytes 240, capacity 200,
// Size 336, expansion 3). The BF.DEBUG texts are those of RedisBloom
// 8.6.2 for the same commands.
func TestBFParams8(t *testing.T) {
	s := start(t, Config{})
	c := dial(t, s)
	for _, tc := range [][]string{
		{"+OK", "BF.RESERVE", "capped", "0.5", "100"},
		{`*[$"size:0", $"bytes:56 bits:448 hashes:4 hashwidth:64 capacity:100 size:0 ratio:0.125"]`, "BF.DEBUG", "capped"},
		{"*[:1]", "BF.INSERT", "capped2", "ERROR", "0.999", "NONSCALING", "ITEMS", "a"},
		{`*[$"size:1", $"bytes:40 bits:320 hashes:3 hashwidth:64 capacity:100 size:1 ratio:0.25"]`, "BF.DEBUG", "capped2"},
		{"+OK", "BF.RESERVE", "e0", "0.01", "100", "EXPANSION", "0"},
		{"*[$-1]", "BF.INFO", "e0", "EXPANSION"},
		{`*[$"size:0", $"bytes:120 bits:960 hashes:7 hashwidth:64 capacity:100 size:0 ratio:0.01"]`, "BF.DEBUG", "e0"},
		{"*[:1]", "BF.INSERT", "e0i", "EXPANSION", "0", "ITEMS", "a"},
		{"*[$-1]", "BF.INFO", "e0i", "EXPANSION"},
		{"+OK", "BF.RESERVE", "e0n", "0.01", "100", "NONSCALING", "EXPANSION", "0"},
		{"-ERR expansion must be in the range [0, 32768]", "BF.RESERVE", "e", "0.01", "100", "EXPANSION", "32769"},
		{"-Bad expansion", "BF.INSERT", "e", "EXPANSION", "-1", "ITEMS", "a"},
		{"-Bad capacity", "BF.INSERT", "e", "CAPACITY", "0", "ITEMS", "a"},
		{"-Bad error rate", "BF.INSERT", "e", "ERROR", "0", "ITEMS", "a"},
		{"-ERR bad capacity", "BF.RESERVE", "e", "0.01", "x"},
		{"-ERR bad expansion", "BF.RESERVE", "e", "0.01", "100", "EXPANSION", "x"},
		{"-ERR no expansion", "BF.RESERVE", "e", "0.01", "100", "EXPANSION"},
	} {
		if got := c.do(tc[1:]...); got != tc[0] {
			t.Errorf("%v: got %s, want %s", tc[1:], got, tc[0])
		}
	}
	// The growth recorded in the dump header (bytes 16 … 19): 0.
	c.send("BF.SCANDUMP", "e0", "0")
	if v, _ := c.read(); len(v.Elems) != 2 || len(v.Elems[1].Str) < 20 || string(v.Elems[1].Str[16:20]) != "\x00\x00\x00\x00" {
		t.Errorf("BF.SCANDUMP e0 0: %v", v)
	}
	setBFConfigs(s, 0.02, 200, 3)
	for _, tc := range [][]string{
		{":1", "BF.ADD", "cfg", "a"},
		{`*[$"size:1", $"bytes:240 bits:1920 hashes:7 hashwidth:64 capacity:200 size:1 ratio:0.01"]`, "BF.DEBUG", "cfg"},
		{`*[+Capacity, :200, +Size, :336, +Number of filters, :1, +Number of items inserted, :1, +Expansion rate, :3]`, "BF.INFO", "cfg"},
		{"+OK", "BF.RESERVE", "cfgr", "0.01", "100"},
		{"*[:3]", "BF.INFO", "cfgr", "EXPANSION"},
	} {
		if got := c.do(tc[1:]...); got != tc[0] {
			t.Errorf("configs 0.02 200 3: %v: got %s, want %s", tc[1:], got, tc[0])
		}
	}
	setBFConfigs(s, 0.01, 100, 0) // bf-expansion-factor 0: non-scaling
	for _, tc := range [][]string{
		{":1", "BF.ADD", "cfg0", "a"},
		{"*[$-1]", "BF.INFO", "cfg0", "EXPANSION"},
		{"-Nonscaling filters cannot expand", "BF.RESERVE", "cfg0r", "0.01", "100", "EXPANSION", "2"},
	} {
		if got := c.do(tc[1:]...); got != tc[0] {
			t.Errorf("configs 0.01 100 0: %v: got %s, want %s", tc[1:], got, tc[0])
		}
	}
}

// TestBFLogIgnoresDialect: the log makes the same filters whatever the
// dialect and module configs of the server that replays it. A workload
// under one dialect and changed configs (defaults taken, rates capped,
// EXPANSION 0) is replayed by a server of the other dialect and other
// configs, and by a restart of the other dialect: every filter answers
// as before (stateOf: BF.INFO, the dump, BF.CARD, BF.MEXISTS).
func TestBFLogIgnoresDialect(t *testing.T) {
	for _, tc := range []struct{ write, read Dialect }{{Dialect24, Dialect8}, {Dialect8, Dialect24}} {
		t.Run(tc.write.String()+" to "+tc.read.String(), func(t *testing.T) {
			dir := t.TempDir()
			s := start(t, Config{Dir: dir, AppendFsync: Always, Dialect: tc.write})
			setBFConfigs(s, 0.02, 50, 3)
			c := dial(t, s)
			var items []string
			for i := 0; i < 300; i++ {
				items = append(items, fmt.Sprint("i", i))
			}
			cmds := [][]string{
				{"BF.ADD", "add", "x"},
				append([]string{"BF.MADD", "madd"}, items...),
				append([]string{"BF.INSERT", "ins", "ITEMS"}, items...),
				append([]string{"BF.INSERT", "insopt", "ERROR", "0.4", "CAPACITY", "20", "ITEMS"}, items...),
				append([]string{"BF.INSERT", "insexp0", "EXPANSION", "0", "CAPACITY", "400", "ITEMS"}, items...),
				{"BF.RESERVE", "res", "0.5", "30"},
				append([]string{"BF.MADD", "res"}, items...),
				{"BF.RESERVE", "resns", "0.01", "30", "NONSCALING"},
				{"BF.RESERVE", "resexp0", "0.01", "30", "EXPANSION", "0"},
				{"MULTI"}, {"BF.ADD", "tx", "a"}, {"BF.MADD", "tx", "b", "c"}, {"EXEC"},
			}
			setBFConfigs(s, 0.02, 50, 3)
			for _, cmd := range cmds {
				c.do(cmd...)
			}
			setBFConfigs(s, 0.01, 100, 0)
			c.do("BF.ADD", "add0", "x") // bf-expansion-factor 0: non-scaling
			want := stateOf(t, c, items[:20])
			s.Close()

			// A server of the other dialect and configs replays the log.
			r := start(t, Config{Dir: t.TempDir(), Dialect: tc.read})
			setBFConfigs(r, 0.1, 7, 5)
			gens, err := listLogs(dir)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.replay(dir, gens); err != nil {
				t.Fatal(err)
			}
			if got := stateOf(t, dial(t, r), items[:20]); got != want {
				t.Errorf("replayed under dialect %s, configs 0.1 7 5:\n got %s\nwant %s", tc.read, got, want)
			}
			// A restart in the other dialect.
			s = restart(t, nil, Config{Dir: dir, Dialect: tc.read})
			if got := stateOf(t, dial(t, s), items[:20]); got != want {
				t.Errorf("restarted under dialect %s:\n got %s\nwant %s", tc.read, got, want)
			}
		})
	}
}

// TestBFLoadChunk8: under Dialect8, BF.LOADCHUNK's refusals are worded
// as RedisBloom 8.6.2 words its nearest refusal (each text below is what
// it answered to the same command, but where it took a chunk over a
// live filter and answered OK), the detail goes to the server's log, and
// the filter is unchanged; under Dialect24 the detail stays in the reply.
func TestBFLoadChunk8(t *testing.T) {
	var logged strings.Builder
	var mu sync.Mutex
	s := start(t, Config{Logger: log.New(lockedWriter{&mu, &logged}, "", 0)})
	c := dial(t, s)
	c.do("BF.RESERVE", "bf", "0.01", "10") // links of 16, 32, 72 and 160 bytes
	for i := 0; i < 100; i++ {
		c.do("BF.ADD", "bf", strconv.Itoa(i))
	}
	want := stateOf(t, c, []string{"1", "2"})
	c.send("BF.SCANDUMP", "bf", "0")
	hv, _ := c.read()
	hdr := string(hv.Elems[1].Str)
	big := strings.Repeat("x", 100001)
	for _, tc := range [][]string{
		{"-ERR received bad data", "BF.LOADCHUNK", "bf", "0", "abc"},
		{"-ERR received bad data", "BF.LOADCHUNK", "bf", "2", "abc"},
		{"-ERR invalid offset - no link found", "BF.LOADCHUNK", "bf", "3", "abc"},
		{"-ERR received bad data", "BF.LOADCHUNK", "bf", "20", "abc"}, // RedisBloom: OK, over link 1
		{"-ERR invalid chunk - Too big for current filter", "BF.LOADCHUNK", "bf", "18", "abc"},
		{"-ERR invalid chunk - Too big for current filter", "BF.LOADCHUNK", "bf", "283", "abc"},
		{"-ERR invalid offset - no link found", "BF.LOADCHUNK", "bf", "284", "abc"},
		{"-ERR invalid offset - no link found", "BF.LOADCHUNK", "bf", "100001", big},
		{"-ERR received bad data", "BF.LOADCHUNK", "bf", "1", hdr},
		// A load in progress.
		{"+OK", "BF.LOADCHUNK", "ld", "1", hdr},
		{"-ERR invalid offset - no link found", "BF.LOADCHUNK", "ld", "3", "abc"},
		{"-ERR invalid offset - no link found", "BF.LOADCHUNK", "ld", "284", "abc"},
		{"-ERR received bad data", "BF.LOADCHUNK", "ld", "0", "abc"},
		{"-ERR received bad data", "BF.LOADCHUNK", "ld", "20", "abc"}, // out of order
		{"-ERR invalid chunk - Too big for current filter", "BF.LOADCHUNK", "ld", "18", strings.Repeat("x", 17)},
		// A header whose second link is 0 bytes (test_scandump_invalid_header).
		{"-ERR received bad data", "BF.LOADCHUNK", "bad", "1", hdr[:72] + strings.Repeat("\x00", 8) + hdr[80:]},
	} {
		if got := c.do(tc[1:]...); got != tc[0] {
			t.Errorf("%.60q: got %s, want %s", tc[1:], got, tc[0])
		}
	}
	c.do("DEL", "ld")
	if got := stateOf(t, c, []string{"1", "2"}); got != want {
		t.Errorf("the filter changed:\n got %s\nwant %s", got, want)
	}
	mu.Lock()
	l := logged.String()
	mu.Unlock()
	for _, detail := range []string{"the key holds a complete filter", "chunks must come in BF.SCANDUMP's order", "link 1: 0 bytes"} {
		if !strings.Contains(l, detail) {
			t.Errorf("the log lacks %q:\n%s", detail, l)
		}
	}

	s24 := start(t, Config{Dialect: Dialect24})
	c24 := dial(t, s24)
	c24.do("BF.RESERVE", "bf", "0.01", "10")
	if got := c24.do("BF.LOADCHUNK", "bf", "3", "abc"); !strings.Contains(got, "the key holds a complete filter") {
		t.Errorf("dialect 2.4: %s", got)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *strings.Builder
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestChainBytesSubnormal: the memory reserved for a filter of a
// subnormal error rate follows ln(rate): Go's math.Log on amd64 is wrong
// near the smallest subnormals (ln 5e-324 as -709.09, not -744.44), which
// reserved 5% too little for a filter of BF.RESERVE k 5e-324 n.
func TestChainBytesSubnormal(t *testing.T) {
	for _, rate := range []float64{1e-300, 1e-310, 1e-320, 5e-324} {
		want := float64(1000)*(-math.Log10(rate)*math.Ln10)/(math.Ln2*math.Ln2)/8 + 64
		if rate < 1e-300 {
			// math.Log10 shares the defect: the decimal exponent (5e-324 is 2^-1074).
			e := map[float64]float64{1e-310: 310, 1e-320: 320, 5e-324: 1074 * math.Ln2 / math.Ln10}[rate]
			want = float64(1000)*(e*math.Ln10)/(math.Ln2*math.Ln2)/8 + 64
		}
		if got := chainBytes(rate, 1000, true); math.Abs(got-want) > want*1e-6 {
			t.Errorf("chainBytes(%g, 1000, non-scaling) = %.1f, want %.1f", rate, got, want)
		}
	}
}

// TestDoubleArgsAsRedis: BF's and CMS's double arguments read as Redis
// reads a double (strtod over the whole argument, refused on underflow
// to zero, overflow or NaN): the replies RedisBloom 8.6.2 on Redis gave
// to the same commands. Go's own syntax is not Redis's: "0.0_1" (Go's
// digit separators) is no number there, and C's hexadecimal form needs
// no exponent.
func TestDoubleArgsAsRedis(t *testing.T) {
	s := start(t, Config{})
	c := dial(t, s)
	for _, tc := range [][]string{
		{"-ERR bad error rate", "BF.RESERVE", "u1", "0.0_1", "100"},
		{"-ERR bad error rate", "BF.RESERVE", "u2", "1_0e-3", "100"},
		{"-Bad error rate", "BF.INSERT", "u3", "ERROR", "0.0_1", "ITEMS", "a"},
		{"-CMS: invalid overestimation value", "CMS.INITBYPROB", "u4", "0.0_1", "0.01"},
		{"-CMS: invalid prob value", "CMS.INITBYPROB", "u4", "0.01", "0x1_0p-5"},
		{"-ERR bad error rate", "BF.RESERVE", "u5", "1e-400", "100"},
		{"-ERR bad error rate", "BF.RESERVE", "u5", "-1e-400", "100"},
		{"-ERR error rate must be in the range (0.000000, 1.000000)", "BF.RESERVE", "u5", "infinity", "100"},
		{"-ERR bad error rate", "BF.RESERVE", "u5", "1e400", "100"},
		{"+OK", "BF.RESERVE", "u6", "0x0.04", "100"},
		{`*[+Capacity, :100, +Size, :224, +Number of filters, :1, +Number of items inserted, :0, +Expansion rate, :2]`, "BF.INFO", "u6"},
		{"*[:1]", "BF.INSERT", "u7", "ERROR", "0x1p-7", "ITEMS", "a"},
		{"+OK", "BF.RESERVE", "u9", "0X.1", "100"},
		{"-ERR bad error rate", "BF.RESERVE", "u10", "0x", "100"},
		{"-ERR bad error rate", "BF.RESERVE", "u10", "0x1p", "100"},
		{"+OK", "CMS.INITBYPROB", "u8", "0x0.04", "0x0.1"},
		{`*[+width, :128, +depth, :4, +count, :0]`, "CMS.INFO", "u8"},
	} {
		if got := c.do(tc[1:]...); got != tc[0] {
			t.Errorf("%v: got %s, want %s", tc[1:], got, tc[0])
		}
	}
}

// TestDoubleArgsLegacyLog: a log written before doubles were read as
// Redis reads them holds the client's text of BF.RESERVE's, BF.INSERT's
// and CMS.INITBYPROB's doubles, read then by Go's syntax ("0.0_1" was
// 0.01): it replays as then, under both dialects, instead of refusing to
// start over keys that were acknowledged.
func TestDoubleArgsLegacyLog(t *testing.T) {
	for _, d := range []Dialect{Dialect8, Dialect24} {
		dir := t.TempDir()
		cfg := Config{Dir: dir, AppendFsync: Always, Dialect: d}
		s := start(t, cfg)
		if got := dial(t, s).do("SET", "x", "1"); got != "+OK" {
			t.Fatal(got)
		}
		s.Close()
		files := logFiles(t, dir)
		if len(files) != 1 {
			t.Fatalf("log files %v", files)
		}
		var recs []byte
		for _, r := range [][]string{
			{"BF.RESERVE", "old", "0.0_1", "100"},
			{"BF.ADD", "old", "a"},
			{"BF.INSERT", "oldi", "ERROR", "1_0e-3", "ITEMS", "a"},
			{"CMS.INITBYPROB", "oldc", "0.0_1", "0.0_1"},
		} {
			args := make([][]byte, len(r))
			for i, a := range r {
				args[i] = []byte(a)
			}
			recs = appendRecord(recs, args)
		}
		f, err := os.OpenFile(files[0], os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.Write(recs)
		f.Close()
		s, err = Run(cfg)
		if err != nil {
			t.Fatalf("dialect %v: %v", d, err)
		}
		c := dial(t, s)
		for _, tc := range [][]string{
			{`*[$"size:1", $"bytes:144 bits:1152 hashes:8 hashwidth:64 capacity:100 size:1 ratio:0.005"]`, "BF.DEBUG", "old"},
			{`*[$"size:1", $"bytes:144 bits:1152 hashes:8 hashwidth:64 capacity:100 size:1 ratio:0.005"]`, "BF.DEBUG", "oldi"},
			{`*[+width, :200, +depth, :7, +count, :0]`, "CMS.INFO", "oldc"},
		} {
			if got := c.do(tc[1:]...); got != tc[0] {
				t.Errorf("dialect %v, %v: got %s, want %s", d, tc[1:], got, tc[0])
			}
		}
		s.Close()
	}
}

// TestBFCannotGrow8: a scaling filter whose next link cannot be made (a
// chain of capacity 1 and expansion 1 reaches a link at rate 0 after 1,072
// links) answers each item it cannot insert with RedisBloom 8.6.2's "ERR
// problem inserting into filter" and goes on with the next, as RedisBloom
// does (its reply has an element per item; an item already present
// answers 0), the detail in the server log; nothing after the failure is
// added, and a restart from the log finds the same filter. The reply of
// the batch that fails is RedisBloom 8.6.2's (1 added, 0 present, E the
// error). Under Dialect24 the reply stops at our error (2.4.23 answered 1
// for an item it did not insert).
func TestBFCannotGrow8(t *testing.T) {
	for _, d := range []Dialect{Dialect8, Dialect24} {
		var logs strings.Builder
		var mu sync.Mutex
		cfg := Config{Dir: t.TempDir(), AppendFsync: No, Dialect: d, Logger: log.New(lockedWriter{&mu, &logs}, "", 0)}
		s := start(t, cfg)
		c := dial(t, s)
		if got := c.do("BF.RESERVE", "t", "0.25", "1", "EXPANSION", "1"); got != "+OK" {
			t.Fatal(got)
		}
		var pattern string
		for b := 0; b < 100 && pattern == ""; b++ {
			args := []string{"BF.MADD", "t"}
			for j := range 50 {
				args = append(args, fmt.Sprintf("it%d-%d", b, j))
			}
			c.send(args...)
			v, _ := c.read()
			var p strings.Builder
			failed := false
			for _, e := range v.Elems {
				switch {
				case e.Kind == '-':
					failed = true
					if want := "ERR problem inserting into filter"; d == Dialect8 && string(e.Str) != want {
						t.Fatalf("dialect %v: %s, want %s", d, e.Str, want)
					}
					p.WriteByte('E')
				default:
					p.WriteString(strconv.FormatInt(e.Int, 10))
				}
			}
			if failed {
				pattern = fmt.Sprint(b, " ", p.String())
			}
		}
		want := "44 11000000010111100011010100001101010EEE00EE0E00E0E0"
		if d == Dialect24 {
			want = want[:3+36]
		}
		if pattern != want {
			t.Errorf("dialect %v: the failing batch answered %s, RedisBloom 8.6.2 %s", d, pattern, want)
		}
		info := c.do("BF.INFO", "t")
		if !strings.Contains(info, ":1072") {
			t.Errorf("dialect %v: BF.INFO %s", d, info)
		}
		mu.Lock()
		if d == Dialect8 && !strings.Contains(logs.String(), "rate 0") {
			t.Errorf("dialect %v: the log does not say why: %s", d, logs.String())
		}
		mu.Unlock()
		s = restart(t, s, cfg)
		if got := dial(t, s).do("BF.INFO", "t"); got != info {
			t.Errorf("dialect %v: after a restart %s, before %s", d, got, info)
		}
	}
}
