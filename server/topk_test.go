package server

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/bloomlab/bloomlab/server/internal/resp"
)

// TestTopKDefaultProperties checks the topk-default vectors of RedisBloom
// 8.6.2 (TOPK.RESERVE tk-a 5: width 8, depth 7, 30 items), which no two
// runs of the real module answer alike (rand()), by their properties,
// over RESP2 and RESP3: every reply has the recorded shape (kind, length)
// and every error the recorded text; an expelled item is one added
// before; LIST holds at most k distinct added items in count order, with
// counts that agree with it; QUERY agrees with LIST; COUNT never exceeds
// an item's true count; INFO and TYPE are the recorded ones exactly.
func TestTopKDefaultProperties(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprint("RESP", proto), func(t *testing.T) {
			s := start(t, Config{Dialect: Dialect8})
			c := dial(t, s)
			if proto == 3 {
				c.do("HELLO", "3")
			}
			var v *vector
			vs := loadVectors(t, fmt.Sprintf("redisbloom-8.6.2-resp%d.json.gz", proto))
			for i := range vs {
				if vs[i].Name == "topk-default" {
					v = &vs[i]
				}
			}
			if v == nil {
				t.Fatal("no topk-default vector")
			}
			truth := map[string]int64{}
			checked := 0
			for _, cmd := range v.Commands {
				var want any
				if err := json.Unmarshal(cmd.Reply, &want); err != nil {
					t.Fatal(err)
				}
				c.send(cmd.Args...)
				got, _ := c.read()
				name := strings.ToUpper(cmd.Args[0])
				if name == "TOPK.ADD" {
					for _, it := range cmd.Args[2:] {
						truth[it]++
					}
				}
				if name == "TOPK.INCRBY" && !strings.Contains(string(cmd.Reply), "error") {
					for i := 2; i+1 < len(cmd.Args); i += 2 {
						var n int64
						fmt.Sscan(cmd.Args[i+1], &n)
						truth[cmd.Args[i]] += n
					}
				}
				checkShape(t, cmd.Args, got, want)
				switch name {
				case "TOPK.ADD", "TOPK.INCRBY":
					for _, e := range got.Elems {
						if e.Kind == resp.BulkString && !e.Null && truth[string(e.Str)] == 0 {
							t.Fatalf("%.60v: expelled %q, never added", cmd.Args, e.Str)
						}
					}
				case "TOPK.LIST", "TOPK.COUNT", "TOPK.QUERY":
				default:
					if m := matchReply(got, want, proto); m != "" {
						t.Fatalf("%v: %s", cmd.Args, m)
					}
				}
				checked++
			}
			// The properties of the final state.
			key := v.Commands[0].Args[1]
			c.send("TOPK.LIST", key, "WITHCOUNT")
			list, _ := c.read()
			if len(list.Elems) > 10 || len(list.Elems)%2 != 0 {
				t.Fatalf("LIST WITHCOUNT of %d elements", len(list.Elems))
			}
			listed := map[string]bool{}
			for i := 0; i < len(list.Elems); i += 2 {
				it := string(list.Elems[i].Str)
				if listed[it] || truth[it] == 0 || i > 0 && list.Elems[i+1].Int > list.Elems[i-1].Int {
					t.Fatalf("LIST %s: entry %q", list.String(), it)
				}
				listed[it] = true
			}
			for it, n := range truth {
				c.send("TOPK.COUNT", key, it)
				cnt, _ := c.read()
				c.send("TOPK.QUERY", key, it)
				q, _ := c.read()
				in := q.Elems[0].Int == 1
				if cnt.Elems[0].Int > n {
					t.Errorf("COUNT %s = %d > %d added", it, cnt.Elems[0].Int, n)
				}
				if in != listed[it] {
					t.Errorf("QUERY %s = %v, listed %v", it, in, listed[it])
				}
			}
			if checked < 30 || len(truth) < 20 {
				t.Fatalf("checked %d replies, %d items", checked, len(truth))
			}
		})
	}
}

// checkShape fails unless got has want's kind and length, and the same
// error text where want is an error (an element's included).
func checkShape(t *testing.T, args []string, got resp.Value, want any) {
	t.Helper()
	switch w := want.(type) {
	case nil:
		if !got.Null && got.Kind != resp.NullReply {
			t.Fatalf("%.60v: want null, got %.100s", args, got.String())
		}
	case float64:
		if got.Kind != resp.Integer {
			t.Fatalf("%.60v: want an integer, got %.100s", args, got.String())
		}
	case string:
		if got.Kind != resp.BulkString || got.Null {
			t.Fatalf("%.60v: want a bulk string, got %.100s", args, got.String())
		}
	case []any:
		if got.Kind != resp.ArrayReply || len(got.Elems) != len(w) {
			t.Fatalf("%.60v: want an array of %d, got %.200s", args, len(w), got.String())
		}
		for i := range w {
			if _, isStr := w[i].(string); w[i] == nil || isStr {
				// ADD: an item expelled here, none there, or the reverse
				if e := got.Elems[i]; e.Null || e.Kind == resp.NullReply || e.Kind == resp.BulkString {
					continue
				}
			}
			checkShape(t, args, got.Elems[i], w[i])
		}
	case map[string]any:
		if e, ok := w["error"]; ok {
			if got.Kind != resp.ErrorReply || string(got.Str) != e {
				t.Fatalf("%.60v: want -%v, got %.100s", args, e, got.String())
			}
		}
		if _, ok := w["bool"]; ok && got.Kind != resp.BoolReply {
			t.Fatalf("%.60v: want a boolean, got %.100s", args, got.String())
		}
		if _, ok := w["simple"]; ok && got.Kind != resp.SimpleString {
			t.Fatalf("%.60v: want a simple string, got %.100s", args, got.String())
		}
		if m, ok := w["map"]; ok && (got.Kind != resp.MapReply || len(got.Elems) != 2*len(m.([]any))) {
			t.Fatalf("%.60v: want a map, got %.100s", args, got.String())
		}
	}
}

// topkProbe is the 2.4.23 probe file's TOPK keys: their replies on
// RedisBloom 2.4.23 after the 8.6.2 transcripts' commands were replayed
// on it and the server restarted.
func topkProbe(t *testing.T) map[string][]struct {
	Args  []string        `json:"args"`
	Reply json.RawMessage `json:"reply"`
} {
	f, err := os.Open("testdata/redisbloom-2.4.23-topk-rdb.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Keys []struct {
			Key   string `json:"key"`
			Probe []struct {
				Args  []string        `json:"args"`
				Reply json.RawMessage `json:"reply"`
			} `json:"probe"`
		} `json:"keys"`
	}
	if err := json.NewDecoder(z).Decode(&rec); err != nil {
		t.Fatal(err)
	}
	out := map[string][]struct {
		Args  []string        `json:"args"`
		Reply json.RawMessage `json:"reply"`
	}{}
	for _, k := range rec.Keys {
		out[k.Key] = k.Probe
	}
	return out
}

// TestTopKDialect24: under Dialect24 the topk-wide commands (deterministic)
// leave tk-b answering RedisBloom 2.4.23's probe exactly, over RESP2 and
// RESP3 (2.4.23's shapes under both): LIST WITHCOUNT items as simple
// strings, INFO an array, QUERY integers, COUNT; and an expelled item is
// a simple string.
func TestTopKDialect24(t *testing.T) {
	probe := topkProbe(t)["tk-b"]
	if len(probe) < 5 {
		t.Fatal("no probe of tk-b")
	}
	var wide *vector
	vs := loadVectors(t, "redisbloom-8.6.2-resp2.json.gz")
	for i := range vs {
		if vs[i].Name == "topk-wide" {
			wide = &vs[i]
		}
	}
	for _, proto := range []int{2, 3} {
		s := start(t, Config{Dialect: Dialect24})
		c := dial(t, s)
		if proto == 3 {
			c.do("HELLO", "3")
		}
		expelled := 0
		for _, cmd := range wide.Commands {
			if strings.HasPrefix(cmd.Args[0], "TOPK.ADD") {
				c.send(cmd.Args...)
				got, _ := c.read()
				for _, e := range got.Elems {
					if e.Kind == resp.SimpleString {
						expelled++
					} else if e.Kind != resp.NullReply && !e.Null {
						t.Fatalf("RESP%d: ADD answered %s", proto, e.String())
					}
				}
				continue
			}
			if cmd.Args[0] == "TOPK.RESERVE" || cmd.Args[0] == "TOPK.INCRBY" {
				c.do(cmd.Args...)
			}
		}
		if expelled == 0 {
			t.Fatalf("RESP%d: no expelled item seen", proto)
		}
		for _, cmd := range probe {
			var want any
			if err := json.Unmarshal(cmd.Reply, &want); err != nil {
				t.Fatal(err)
			}
			if proto == 3 && cmd.Args[0] == "TOPK.INFO" {
				want.([]any)[7] = map[string]any{"double": want.([]any)[7]} // RESP3's double
			}
			c.send(cmd.Args...)
			got, _ := c.read()
			if m := matchReply(got, want, 2); m != "" {
				t.Fatalf("RESP%d: %.80v: %s", proto, cmd.Args, m)
			}
		}
	}
}

// TestTopKRestart: a decaying sketch (width 8, so that buckets decay on
// nearly every add) restarts from the log, then from a snapshot plus the
// log, then from the log again, and every time answers TOPK.LIST
// WITHCOUNT, COUNT and QUERY of every item exactly as a server without
// persistence that ran the same commands: the decay's generator state is
// in the snapshot, and replay advances it as the commands did.
func TestTopKRestart(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Dir: dir, AppendFsync: Always}
	s := start(t, cfg)
	c := dial(t, s)
	ref := dial(t, start(t, Config{}))
	items := []string{}
	for i := 0; i < 40; i++ {
		items = append(items, fmt.Sprint("it", i))
	}
	state := func(c *rawConn) string {
		var b strings.Builder
		b.WriteString(c.do("TOPK.LIST", "tk", "WITHCOUNT"))
		b.WriteString(c.do(append([]string{"TOPK.COUNT", "tk"}, items...)...))
		b.WriteString(c.do(append([]string{"TOPK.QUERY", "tk"}, items...)...))
		b.WriteString(c.do("TOPK.INFO", "tk"))
		return b.String()
	}
	both := func(args ...string) {
		if a, b := c.do(args...), ref.do(args...); a != b {
			t.Fatalf("%v: %s, reference %s", args, a, b)
		}
	}
	both("TOPK.RESERVE", "tk", "5", "8", "7", "0.9")
	round := func(r int) {
		for i := 0; i < 60; i++ {
			args := []string{"TOPK.ADD", "tk"}
			for j := 0; j < 7; j++ {
				args = append(args, items[(i*j+r*13+j*j)%(5+i%35)])
			}
			both(args...)
		}
		both("TOPK.INCRBY", "tk", "it1", "50", "it30", "3", "it2", "-1", "it3", "9")
	}
	for r, how := range []string{"log", "snapshot", "log"} {
		round(r)
		if how == "snapshot" {
			if got := c.do("SAVE"); got != "+OK" {
				t.Fatal(got)
			}
			round(10 + r)
		}
		want := state(ref)
		if got := state(c); got != want {
			t.Fatalf("before the restart: %s\nreference %s", got, want)
		}
		s = restart(t, s, cfg)
		c = dial(t, s)
		if got := state(c); got != want {
			t.Fatalf("after a restart from the %s: %s\nwant %s", how, got, want)
		}
	}
}

// TestTopKErrors: WRONGTYPE both ways, the errors of RESERVE, INCRBY and
// LIST as RedisBloom words them, the memory limit before a sketch is
// made, an item with a NUL byte listed up to it (a C string), and
// INCRBY's bad increment answered in place, the items before it added.
func TestTopKErrors(t *testing.T) {
	s := start(t, Config{MaxMemory: plusClients(1<<20, 2)})
	c := dial(t, s)
	for _, tc := range [][2]string{
		{"SET str v", "+OK"},
		{"TOPK.ADD str x", "-" + errWrongType},
		{"TOPK.RESERVE tk 3 8 7 1", "+OK"},
		{"GET tk", "-" + errWrongType},
		{"TYPE tk", "+TopK-TYPE"},
		{"TOPK.RESERVE tk 3", "-TopK: key already exists"},
		{"TOPK.RESERVE x 4294967296", "-TopK: invalid k"},
		{"TOPK.RESERVE x 2 0 7 0.9", "-TopK: invalid width"},
		{"TOPK.RESERVE x 2 8 4294967296 0.9", "-TopK: invalid depth"},
		{"TOPK.RESERVE x 2 8 7 0", "-TopK: invalid decay value. must be '<= 1' & '> 0'"},
		{"TOPK.RESERVE x 2 8 7", "-ERR wrong number of arguments for 'topk.reserve' command"},
		{"TOPK.RESERVE big 10 1000000 10 0.9", "-" + errOOM},
		{"TOPK.RESERVE huge 10 4294967295 4294967295 0.9", "-" + errTopKMemory},
		{"TOPK.LIST tk WITHCOUNTS", "-WITHCOUNT keyword expected"},
		{"TOPK.LIST tk with", "*[]"},
		{"TOPK.INCRBY tk a 2 b 100001 c 1", "*[$-1, -" + errTopKIncr + ", -" + errTopKIncr + "]"},
		{"TOPK.LIST tk WITHCOUNT", `*[$"a", :2]`},
		{"TOPK.QUERY tk a b c", "*[:1, :0, :0]"},
		{"TOPK.INFO tk", "*[+k, :3, +width, :8, +depth, :7, +decay, $\"1\"]"},
		{"TOPK.COUNT nokey a", "-TopK: key does not exist"},
	} {
		if got := c.do(strings.Fields(tc[0])...); got != tc[1] {
			t.Errorf("%s: %s, want %s", tc[0], got, tc[1])
		}
	}
	c.do("TOPK.INCRBY", "tk", "n\x00ul", "5")
	if got := c.do("TOPK.LIST", "tk"); got != `*[$"n", $"a"]` {
		t.Errorf("LIST with a NUL item: %s", got)
	}
	if got := c.do("TOPK.QUERY", "tk", "n\x00ul", "n"); got != "*[:1, :0]" {
		t.Errorf("QUERY of a NUL item: %s", got)
	}
}

// TestGoRedisTopK drives TOPK.* with go-redis v9's typed calls under both
// dialects and protocols (go-redis checks the reply shapes: INFO's map or
// array, QUERY's booleans or integers, LIST WITHCOUNT's pairs).
func TestGoRedisTopK(t *testing.T) {
	forDialects(t, func(t *testing.T, d Dialect, proto int) {
		ctx := context.Background()
		rdb := goRedis(t, start(t, Config{Dialect: d}), proto, "")
		if err := rdb.TopKReserveWithOptions(ctx, "tk", 3, 50, 4, 0.9).Err(); err != nil {
			t.Fatal(err)
		}
		if err := rdb.TopKReserve(ctx, "tk2", 2).Err(); err != nil {
			t.Fatal(err)
		}
		if _, err := rdb.TopKAdd(ctx, "tk", "a", "b", "a", "c", "a", "b", "d").Result(); err != nil {
			t.Fatal(err)
		}
		if _, err := rdb.TopKIncrBy(ctx, "tk", "c", 10).Result(); err != nil {
			t.Fatal(err)
		}
		if q, err := rdb.TopKQuery(ctx, "tk", "a", "c", "zz").Result(); err != nil || fmt.Sprint(q) != "[true true false]" {
			t.Fatalf("TopKQuery: %v %v", q, err)
		}
		if n, err := rdb.TopKCount(ctx, "tk", "a", "c", "zz").Result(); err != nil || fmt.Sprint(n) != "[3 11 0]" {
			t.Fatalf("TopKCount: %v %v", n, err)
		}
		if l, err := rdb.TopKList(ctx, "tk").Result(); err != nil || fmt.Sprint(l) != "[c a b]" {
			t.Fatalf("TopKList: %v %v", l, err)
		}
		if l, err := rdb.TopKListWithCount(ctx, "tk").Result(); err != nil || fmt.Sprint(l) != "map[a:3 b:2 c:11]" {
			t.Fatalf("TopKListWithCount: %v %v", l, err)
		}
		if in, err := rdb.TopKInfo(ctx, "tk").Result(); err != nil || in.K != 3 || in.Width != 50 || in.Depth != 4 || in.Decay != 0.9 {
			t.Fatalf("TopKInfo: %+v %v", in, err)
		}
	})
}

// TestTopKItemLimit: an item longer than the snapshot's limit
// (topk.MaxItemLen, lowered here; reachable with -proto-max-bulk-len
// above 512 MiB) is refused before anything changes, where it used to
// enter the heap and make the snapshot unreadable at the next start.
func TestTopKItemLimit(t *testing.T) {
	defer func(n int) { topkMaxItem = n }(topkMaxItem)
	topkMaxItem = 8
	dir := t.TempDir()
	cfg := Config{Dir: dir}
	s := start(t, cfg)
	c := dial(t, s)
	c.do("TOPK.RESERVE", "tk", "3")
	for _, args := range [][]string{{"TOPK.ADD", "tk", "short", "123456789"}, {"TOPK.INCRBY", "tk", "short", "2", "123456789", "1"}} {
		if got := c.do(args...); !strings.HasPrefix(got, "-ERR TopK: item of 9 bytes") {
			t.Errorf("%v: %s", args, got)
		}
	}
	c.do("TOPK.ADD", "tk", "12345678")
	want := `*[$"12345678", :1]`
	if got := c.do("TOPK.LIST", "tk", "WITHCOUNT"); got != want {
		t.Fatalf("LIST: %s, want %s", got, want)
	}
	if got := c.do("SAVE"); got != "+OK" {
		t.Fatal(got)
	}
	s = restart(t, s, cfg)
	if got := dial(t, s).do("TOPK.LIST", "tk", "WITHCOUNT"); got != want {
		t.Fatalf("LIST after a restart: %s, want %s", got, want)
	}
}
