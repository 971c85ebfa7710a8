package server

import (
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/bloomlab/bloomlab/cuckoo"
)

// expect sends each command and compares its rendered reply.
func expect(t *testing.T, c *rawConn, cases [][]string) {
	t.Helper()
	for _, tc := range cases {
		if got := c.do(tc[1:]...); got != tc[0] {
			t.Errorf("%v:\n got %s\nwant %s", tc[1:], got, tc[0])
		}
	}
}

// TestCFReplies pins what the transcripts do not: every CF command's
// arity, option and error reply as RedisBloom 2.4's src/rebloom.c has
// them (Dialect24), and this server's documented differences (WRONGTYPE
// where RedisBloom answers 0 or "Not found", capacity at most 2^30).
func TestCFReplies(t *testing.T) {
	s := start(t, Config{Dialect: Dialect24})
	c := dial(t, s)
	arity := func(name string) string { return "-ERR wrong number of arguments for '" + name + "' command" }
	expect(t, c, [][]string{
		{arity("cf.reserve"), "CF.RESERVE", "k"},
		{arity("cf.reserve"), "CF.RESERVE", "k", "100", "BUCKETSIZE"},
		{"-Bad capacity", "CF.RESERVE", "k", "x"},
		{"-Couldn't parse MAXITERATIONS", "CF.RESERVE", "k", "100", "MAXITERATIONS", "x"},
		{"-MAXITERATIONS: value must be an integer between 1 and 65535, inclusive.", "CF.RESERVE", "k", "100", "MAXITERATIONS", "0"},
		{"-MAXITERATIONS: value must be an integer between 1 and 65535, inclusive.", "CF.RESERVE", "k", "100", "MAXITERATIONS", "65536"},
		{"-Couldn't parse BUCKETSIZE", "CF.RESERVE", "k", "100", "BUCKETSIZE", "1.5"},
		{"-BUCKETSIZE: value must be an integer between 1 and 255, inclusive.", "CF.RESERVE", "k", "100", "BUCKETSIZE", "0"},
		{"-Couldn't parse EXPANSION", "CF.RESERVE", "k", "100", "EXPANSION", "-"},
		{"-EXPANSION: value must be an integer between 0 and 32768, inclusive.", "CF.RESERVE", "k", "100", "EXPANSION", "32769"},
		{"-Couldn't parse EXPANSION", "CF.RESERVE", "k", "100", "x", "EXPANSION"},
		{"-Capacity must be at least (BucketSize * 2)", "CF.RESERVE", "k", "7", "BUCKETSIZE", "4"},
		{"-Capacity must be at least (BucketSize * 2)", "CF.RESERVE", "k", "-5"},
		{"-Capacity must be in the range [2 * BUCKETSIZE, 1073741824]", "CF.RESERVE", "k", "1073741825"},
		{"+OK", "CF.RESERVE", "k", "8", "BUCKETSIZE", "4", "EXPANSION", "3", "MAXITERATIONS", "7"}, // 2 buckets of 4
		{"*[+Size, :64, +Number of buckets, :2, +Number of filters, :1, +Number of items inserted, :0, +Number of items deleted, :0, +Bucket size, :4, +Expansion rate, :4, +Max iterations, :7]", "CF.INFO", "k"},
		{"-ERR item exists", "CF.RESERVE", "k", "8"},
		{"*[:0, $-1]", "CF.SCANDUMP", "k", "0"}, // RedisBloom dumps nothing of a filter holding no keys
		{"-Invalid position", "CF.SCANDUMP", "k", "-1"},
		{"-Invalid position", "CF.SCANDUMP", "nokey", "x"},
		{"-ERR not found", "CF.SCANDUMP", "nokey", "0"},
		{arity("cf.scandump"), "CF.SCANDUMP", "k"},
		{arity("cf.info"), "CF.INFO", "k", "x"},

		{arity("cf.add"), "CF.ADD", "k", "a", "b"},
		{arity("cf.addnx"), "CF.ADDNX", "k"},
		{":1", "cf.add", "k", "a"},
		{":1", "CF.ADD", "k", "a"},
		{":0", "CF.ADDNX", "k", "a"},
		{":4", "CF.COUNT", "k", "a"}, // a's two buckets are one: counted twice, as RedisBloom does
		{"+OK", "CF.RESERVE", "k2", "1000"},
		{":1", "CF.ADD", "k2", "a"},
		{":1", "CF.ADD", "k2", "a"},
		{":2", "CF.COUNT", "k2", "a"},
		{":0", "CF.COUNT", "nokey", "a"},
		{":0", "CF.EXISTS", "nokey", "a"},
		{"*[:1, :0]", "CF.MEXISTS", "k", "a", "b"},
		{"*[:0]", "CF.MEXISTS", "nokey", "a"},
		{arity("cf.mexists"), "CF.MEXISTS", "k"},
		{arity("cf.exists"), "CF.EXISTS", "k", "a", "b"},
		{arity("cf.count"), "CF.COUNT", "k"},
		{":1", "CF.DEL", "k", "a"},
		{":1", "CF.DEL", "k", "a"},
		{":0", "CF.DEL", "k", "a"},
		{":0", "CF.EXISTS", "k", "a"},
		{"-Not found", "CF.DEL", "nokey", "a"},
		{arity("cf.del"), "CF.DEL", "k"},
		{"-Cuckoo filter was not found", "CF.COMPACT", "nokey"},
		{arity("cf.compact"), "CF.COMPACT", "k", "x"},
		{"+OK", "CF.COMPACT", "k"},

		{arity("cf.insert"), "CF.INSERT", "k", "ITEMS"},
		{arity("cf.insert"), "CF.INSERT", "k", "NOCREATE", "ITEMS"},
		{arity("cf.insertnx"), "CF.INSERTNX", "k", "CAPACITY"},
		{arity("cf.insert"), "CF.INSERT", "k", "NOCREATE", "CAPACITY"},
		{"-Unknown argument received", "CF.INSERT", "k", "BOGUS", "ITEMS", "a"},
		{"-Unknown argument received", "CF.INSERT", "k", "C", "10", "ITEMS", "a"}, // spelled out here
		{"-Bad capacity", "CF.INSERT", "k", "CAPACITY", "x", "ITEMS", "a"},
		{"-Capacity must be at least (BucketSize * 2)", "CF.INSERT", "k", "CAPACITY", "3", "ITEMS", "a"},
		{"-Capacity must be in the range [2 * BUCKETSIZE, 1073741824]", "CF.INSERT", "k", "CAPACITY", "1073741825", "ITEMS", "a"},
		{"-ERR not found", "CF.INSERT", "new", "NOCREATE", "ITEMS", "a"},
		{"-ERR not found", "CF.INSERTNX", "new", "NOCREATE", "ITEMS", "a"},
		{"*[:1, :1, :1]", "CF.INSERT", "new", "CAPACITY", "4", "ITEMS", "a", "b", "a"}, // 2 buckets of 2
		{"*[:0, :1]", "CF.INSERTNX", "new", "ITEMS", "a", "c"},                         // c needs a second sub-filter
		{"*[+Size, :80, +Number of buckets, :2, +Number of filters, :2, +Number of items inserted, :4, +Number of items deleted, :0, +Bucket size, :2, +Expansion rate, :1, +Max iterations, :20]", "CF.INFO", "new"},
		{"+MBbloomCF", "TYPE", "new"},
	})
}

// TestCFReplies8 pins RedisBloom 8.6.2's CF texts and RESP3 shapes
// (Dialect8) beyond the transcripts, as its src/rebloom.c has them and a
// real 8.6.2 answered: the ranges' texts, CF.INSERT's CAPACITY range from
// cf-bucket-size, CF.RESERVE's BUCKETSIZE range from cf-initial-size,
// cf-max-expansions; booleans for CF.ADD, CF.ADDNX, CF.INSERT (a refused
// item is false), CF.EXISTS, CF.MEXISTS and CF.DEL, integers for
// CF.INSERTNX (−1 refused) and CF.COUNT, a map for CF.INFO.
func TestCFReplies8(t *testing.T) {
	s := start(t, Config{})
	c := dial(t, s)
	expect(t, c, [][]string{
		{"-MAXITERATIONS: value must be in the range [1, 65535]", "CF.RESERVE", "k", "100", "MAXITERATIONS", "0"},
		{"-BUCKETSIZE: value must be in the range [1, 255]", "CF.RESERVE", "k", "100", "BUCKETSIZE", "256"},
		{"-EXPANSION: value must be in the range [0, 32768]", "CF.RESERVE", "k", "100", "EXPANSION", "32769"},
		{"-Capacity must be in the range [2 * BUCKETSIZE, 1073741824]", "CF.RESERVE", "k", "7", "BUCKETSIZE", "4"},
		{"-Capacity must be in the range [2 * BUCKETSIZE, 1073741824]", "CF.RESERVE", "k", "-5"},
		{"-Capacity must be in the range [2 * BUCKETSIZE, 1073741824]", "CF.RESERVE", "k", "1073741825"},
		{"-Capacity must be in the range [cf-bucket-size * 2, 1073741824]", "CF.INSERT", "k", "CAPACITY", "3", "ITEMS", "a"},
		{"-Capacity must be in the range [cf-bucket-size * 2, 1073741824]", "CF.INSERT", "k", "CAPACITY", "1073741825", "ITEMS", "a"},
	})
	expect(t, c, [][]string{
		{"+OK", "CF.RESERVE", "c", "4", "BUCKETSIZE", "2", "EXPANSION", "0"},
		{"*[:1, :1, :1, :-1, :-1, :1, :-1, :-1, :-1, :-1]", "CF.INSERT", "c", "ITEMS", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j"},
		{"-Filter is full", "CF.ADD", "c", "zz"},
	})
	c.do("HELLO", "3")
	// Measured on RedisBloom 8.6.2 under RESP3 (redis-cli -3).
	expect(t, c, [][]string{
		{"*[#false, #false, #false, #false, #false, #false, #false, #false, #false, #false]", "CF.INSERT", "c", "ITEMS", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j"},
		{"*[:0, :-1, :-1, :-1, :-1]", "CF.INSERTNX", "c", "ITEMS", "a", "x1", "x2", "x3", "x4"},
		{"*[#false, #false]", "CF.MEXISTS", "nokey", "a", "b"},
		{"#false", "CF.EXISTS", "nokey", "a"},
		{"#false", "CF.ADDNX", "c", "a"},
		{"#true", "CF.DEL", "c", "a"},
		{"#false", "CF.DEL", "c", "nothere"},
		{":2", "CF.COUNT", "c", "b"},
		{":0", "CF.COUNT", "nokey", "b"},
		{"#true", "CF.ADD", "c", "zz"}, // a's slot is free
		{"#true", "CF.ADD", "new", "a"},
	})
	if got := c.do("CF.INFO", "new"); got != "%[+Size, :1080, +Number of buckets, :512, +Number of filters, :1, +Number of items inserted, :1, +Number of items deleted, :0, +Bucket size, :2, +Expansion rate, :1, +Max iterations, :20]" {
		t.Errorf("CF.INFO under RESP3: %s", got)
	}

	// The module configs: CF.RESERVE's largest BUCKETSIZE is half of
	// cf-initial-size, CF.INSERT's least CAPACITY twice cf-bucket-size,
	// and an add refuses a filter of cf-max-expansions sub-filters.
	setCFConfig(t, s, "cf-initial-size", 100)
	setCFConfig(t, s, "cf-bucket-size", 4)
	expect(t, c, [][]string{
		{"-BUCKETSIZE: value must be in the range [1, 50]", "CF.RESERVE", "q", "1000", "BUCKETSIZE", "51"},
		{"+OK", "CF.RESERVE", "q", "1000", "BUCKETSIZE", "50"},
		{"-Capacity must be in the range [cf-bucket-size * 2, 1073741824]", "CF.INSERT", "z", "CAPACITY", "7", "ITEMS", "a"},
		{"*[#true]", "CF.INSERT", "z", "CAPACITY", "8", "ITEMS", "a"},
	})
	setCFConfig(t, s, "cf-max-expansions", 1)
	expect(t, c, [][]string{
		{"-Maximum expansions reached", "CF.INSERT", "q", "ITEMS", "a"},
		{"-Maximum expansions reached", "CF.ADD", "z", "b"},
	})
}

// TestCFWrongType: BF, CF, CMS and string keys refuse each other's
// commands with WRONGTYPE (reads included: an "absent" from a key of
// another type would be no answer); the generic key commands work on CF
// keys.
func TestCFWrongType(t *testing.T) {
	s := start(t, Config{})
	c := dial(t, s)
	wt := "-" + errWrongType
	expect(t, c, [][]string{
		{"+OK", "CF.RESERVE", "cf", "100"},
		{":1", "CF.ADD", "cf", "x"},
		{"+OK", "BF.RESERVE", "bf", "0.01", "100"},
		{"+OK", "CMS.INITBYDIM", "cm", "10", "2"},
		{"+OK", "SET", "str", "v"},
		{"+MBbloomCF", "TYPE", "cf"},
	})
	for _, k := range []string{"bf", "cm", "str"} {
		for _, cmd := range [][]string{
			{"CF.ADD", k, "x"}, {"CF.ADDNX", k, "x"}, {"CF.INSERT", k, "ITEMS", "x"}, {"CF.INSERTNX", k, "ITEMS", "x"},
			{"CF.EXISTS", k, "x"}, {"CF.MEXISTS", k, "x"}, {"CF.COUNT", k, "x"}, {"CF.DEL", k, "x"}, {"CF.COMPACT", k},
			{"CF.INFO", k}, {"CF.SCANDUMP", k, "0"}, {"CF.LOADCHUNK", k, "1", strings.Repeat("\x00", 38)},
			{"CF.LOADCHUNK", k, "40", "x"}, {"CF.RESERVE", k, "100"},
		} {
			if got := c.do(cmd...); got != wt {
				t.Errorf("%v: %s", cmd, got)
			}
		}
	}
	for _, cmd := range [][]string{
		{"BF.ADD", "cf", "x"}, {"BF.MADD", "cf", "x"}, {"BF.INSERT", "cf", "ITEMS", "x"}, {"BF.EXISTS", "cf", "x"},
		{"BF.MEXISTS", "cf", "x"}, {"BF.INFO", "cf"}, {"BF.CARD", "cf"}, {"BF.SCANDUMP", "cf", "0"},
		{"BF.LOADCHUNK", "cf", "1", "x"}, {"BF.LOADCHUNK", "cf", "9", "x"}, {"BF.RESERVE", "cf", "0.01", "10"},
		{"CMS.QUERY", "cf", "x"}, {"CMS.INCRBY", "cf", "x", "1"}, {"CMS.INFO", "cf"}, {"GET", "cf"},
		{"BF.EXISTS", "cm", "x"}, {"BF.MEXISTS", "str", "x"},
	} {
		if got := c.do(cmd...); got != wt {
			t.Errorf("%v: %s", cmd, got)
		}
	}
	expect(t, c, [][]string{
		{"*[$\"cf\"]", "KEYS", "cf"},
		{":1", "EXPIRE", "cf", "100"},
		{":100", "TTL", "cf"},
		{"+OK", "RENAME", "cf", "cf2"},
		{":1", "CF.EXISTS", "cf2", "x"},
		{"*[$\"0\", *[$\"cf2\"]]", "SCAN", "0", "TYPE", "MBbloomCF"},
		{":1", "DEL", "cf2"},
		{":0", "CF.EXISTS", "cf2", "x"},
		{"+OK", "SET", "cf2", "v"}, // SET replaces a key of any type, as in Redis
	})
}

// TestCFFullAndMaxExpansions: a filter that may not grow refuses a key
// with "Filter is full" (CF.ADD) or −1 (in CF.INSERT), changing nothing;
// a filter of 32 sub-filters refuses every add with "Maximum expansions
// reached". No accepted key is ever lost.
func TestCFFullAndMaxExpansions(t *testing.T) {
	s := start(t, Config{})
	c := dial(t, s)
	c.do("CF.RESERVE", "full", "4", "BUCKETSIZE", "1", "MAXITERATIONS", "1", "EXPANSION", "0")
	var held []string
	refused := 0
	for i := 0; i < 40; i++ {
		k := fmt.Sprint("k", i)
		switch got := c.do("CF.ADD", "full", k); got {
		case ":1":
			held = append(held, k)
		case "-Filter is full":
			refused++
		default:
			t.Fatalf("CF.ADD %s: %s", k, got)
		}
	}
	if refused == 0 || len(held) > 4 {
		t.Fatalf("%d held, %d refused in 4 slots", len(held), refused)
	}
	got := c.do("CF.INSERT", "full", "ITEMS", "x1", "x2", "x3", held[0])
	if !strings.HasPrefix(got, "*[") || !strings.Contains(got, ":-1") {
		t.Fatalf("CF.INSERT into a full filter: %s", got)
	}
	if got := c.do("CF.INSERTNX", "full", "ITEMS", held[0]); got != "*[:0]" {
		t.Fatalf("CF.INSERTNX of a held key: %s", got)
	}
	for _, k := range held {
		if got := c.do("CF.EXISTS", "full", k); got != ":1" {
			t.Fatalf("%s lost", k)
		}
	}

	c.do("CF.RESERVE", "grow", "4", "BUCKETSIZE", "1", "MAXITERATIONS", "1", "EXPANSION", "1")
	held = held[:0]
	for i := 0; ; i++ {
		k := fmt.Sprint("g", i)
		got := c.do("CF.ADD", "grow", k)
		if got == "-Maximum expansions reached" {
			break
		}
		if got != ":1" || i > 10000 {
			t.Fatalf("CF.ADD %s: %s", k, got)
		}
		held = append(held, k)
	}
	if got := c.do("CF.INFO", "grow"); !strings.Contains(got, "+Number of filters, :32,") {
		t.Fatalf("refused at %s", got)
	}
	expect(t, c, [][]string{
		{"-Maximum expansions reached", "CF.ADDNX", "grow", held[0]},
		{"-Maximum expansions reached", "CF.INSERT", "grow", "ITEMS", "a", "b"},
	})
	for _, k := range held {
		if got := c.do("CF.EXISTS", "grow", k); got != ":1" {
			t.Fatalf("%s lost", k)
		}
	}
	// Deleting half the keys compacts: fewer sub-filters, and the
	// filter takes keys again.
	for _, k := range held[:len(held)/2] {
		c.do("CF.DEL", "grow", k)
	}
	c.do("CF.COMPACT", "grow")
	if got := c.do("CF.ADD", "grow", "again"); got != ":1" {
		t.Fatalf("after deletes and CF.COMPACT: %s", got)
	}
	for _, k := range held[len(held)/2:] {
		if got := c.do("CF.EXISTS", "grow", k); got != ":1" {
			t.Fatalf("%s lost by deletes of other keys and CF.COMPACT", k)
		}
	}
}

// TestCFRefusal maps the cuckoo package's errors to RedisBloom's texts
// (a growth past 2^48 bits is hard to reach through the server).
func TestCFRefusal(t *testing.T) {
	for _, tc := range []struct {
		err  error
		d    Dialect
		want string
	}{
		{fmt.Errorf("x: %w", cuckoo.ErrCannotGrow), Dialect24, "Memory allocation failure"},
		{fmt.Errorf("x: %w", cuckoo.ErrCannotGrow), Dialect8, "ERR Insufficient memory"},
		{fmt.Errorf("x: %w", cuckoo.ErrFull), Dialect24, "Filter is full"},
		{fmt.Errorf("x: %w", cuckoo.ErrFull), Dialect8, "Filter is full"},
		{fmt.Errorf("odd\nerror"), Dialect8, "ERR odd error"},
	} {
		if got := cfRefusal(tc.err, tc.d.row()); got != tc.want {
			t.Errorf("%v (dialect %v): %q", tc.err, tc.d, got)
		}
	}
}

// TestCFMaxMemory: a filter's creation and its growth are reserved
// against MaxMemory before they are allocated. An add that needs a new
// sub-filter past the limit is refused (OOM; −1 in CF.INSERT) and changes
// nothing, while keys that find free slots are still added; the log holds
// the inserts without their refused items, so that a restart rebuilds the
// same filter byte for byte.
func TestCFMaxMemory(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Dir: dir, MaxMemory: 1 << 40}
	s := start(t, cfg)
	c := dial(t, s)
	// Client memory counts too: the connection's buffers are first grown
	// as large as the CF.INSERT below makes them, then the limit leaves
	// 4000 bytes for keys.
	warm := []string{"CF.MEXISTS", "none"}
	for i := 0; i < 320; i++ {
		warm = append(warm, fmt.Sprint("i", i))
	}
	c.do(warm...)
	limitKeys(s, 4000)
	oom := "-" + errOOM
	expect(t, c, [][]string{
		{oom, "CF.RESERVE", "big", "100000"},
		{":0", "EXISTS", "big"},
		{"+OK", "CF.RESERVE", "g", "2048"}, // 1024 buckets of 2: 2048 bytes, the next as large
	})
	var held []string
	oomSeen, addedAfter := 0, 0
	for i := 0; i < 4000; i++ {
		k := fmt.Sprint("k", i)
		switch got := c.do("CF.ADD", "g", k); got {
		case ":1":
			held = append(held, k)
			if oomSeen > 0 {
				addedAfter++
			}
		case oom:
			oomSeen++
		default:
			t.Fatalf("CF.ADD %s: %s", k, got)
		}
	}
	if oomSeen == 0 || addedAfter == 0 {
		t.Fatalf("%d refused for memory, %d added after the first refusal", oomSeen, addedAfter)
	}
	ins := make([]string, 0, 300)
	for i := 0; i < 300; i++ {
		ins = append(ins, fmt.Sprint("i", i))
	}
	v := func() []string {
		c.send(append([]string{"CF.INSERT", "g", "ITEMS"}, ins...)...)
		r, _ := c.read()
		var out []string
		for i, e := range r.Elems {
			switch e.Int {
			case 1:
				out = append(out, ins[i])
			case -1:
			default:
				t.Fatalf("CF.INSERT item %d: %v", i, e)
			}
		}
		return out
	}()
	if len(v) == 0 || len(v) == len(ins) {
		t.Fatalf("CF.INSERT near the limit added %d of %d", len(v), len(ins))
	}
	held = append(held, v...)
	if got := c.do("CF.INFO", "g"); !strings.Contains(got, "+Number of filters, :1,") {
		t.Fatalf("grew past maxmemory: %s", got)
	}
	before := cfDump(t, c, "g")
	info := c.do("CF.INFO", "g")
	s = restart(t, s, cfg)
	c = dial(t, s)
	if got := cfDump(t, c, "g"); got != before || c.do("CF.INFO", "g") != info {
		t.Fatal("the filter rebuilt from the log differs from the one served")
	}
	for _, k := range held {
		if got := c.do("CF.EXISTS", "g", k); got != ":1" {
			t.Fatalf("%s lost", k)
		}
	}
	// With room, the same filter grows.
	s.Close()
	cfg.MaxMemory = 1 << 20
	s = start(t, cfg)
	c = dial(t, s)
	for i := 0; i < 2000; i++ {
		if got := c.do("CF.ADD", "g", fmt.Sprint("more", i)); got != ":1" {
			t.Fatalf("with room: %s", got)
		}
	}
	if got := c.do("CF.INFO", "g"); strings.Contains(got, "+Number of filters, :1,") {
		t.Fatalf("did not grow: %s", got)
	}
}

// cfDump returns every CF.SCANDUMP reply of key, rendered.
func cfDump(t *testing.T, c *rawConn, key string) string {
	t.Helper()
	var b strings.Builder
	it := "0"
	for n := 0; n < 1000; n++ {
		c.send("CF.SCANDUMP", key, it)
		v, raw := c.read()
		b.Write(raw)
		if v.Kind != '*' || len(v.Elems) != 2 {
			t.Fatalf("CF.SCANDUMP %s %s: %v", key, it, v)
		}
		if v.Elems[0].Int == 0 {
			return b.String()
		}
		it = fmt.Sprint(v.Elems[0].Int)
	}
	t.Fatal("CF.SCANDUMP does not end")
	return ""
}

// TestCFLoadChunk: CF.LOADCHUNK takes CF.SCANDUMP's chunks in order and
// no other way; the key is a CF key (TYPE MBbloomCF) that answers no query
// until every byte has arrived; the copy answers as the original. Its
// refusals answer "Couldn't load chunk!" and "Couldn't create filter!",
// with the detail after them (Dialect24) or in the server's log alone
// (Dialect8: RedisBloom 8.6.2's exact texts, which its tests match). A
// header of 2^32 buckets (RedisBloom's test) is refused.
func TestCFLoadChunk(t *testing.T) {
	for _, d := range []Dialect{Dialect24, Dialect8} {
		t.Run(d.String(), func(t *testing.T) { testCFLoadChunk(t, d) })
	}
}

func testCFLoadChunk(t *testing.T, d Dialect) {
	var logs syncBuffer
	s := start(t, Config{Dialect: d, Logger: log.New(&logs, "", 0)})
	c := dial(t, s)
	// refused reports whether got is the refusal brief with its detail.
	refused := func(got, brief, detail string) bool {
		if d == Dialect24 {
			return strings.HasPrefix(got, "-"+brief+" ") && strings.Contains(got, detail)
		}
		return got == "-"+brief && strings.Contains(logs.String(), detail)
	}
	c.do("CF.RESERVE", "src", "64", "BUCKETSIZE", "4", "EXPANSION", "2")
	for i := 0; i < 300; i++ {
		c.do("CF.ADD", "src", fmt.Sprint("s", i))
	}
	var chunks [][2]string
	for it := "0"; ; {
		c.send("CF.SCANDUMP", "src", it)
		v, _ := c.read()
		if v.Elems[0].Int == 0 {
			break
		}
		it = fmt.Sprint(v.Elems[0].Int)
		chunks = append(chunks, [2]string{it, string(v.Elems[1].Str)})
	}
	if len(chunks) < 3 {
		t.Fatalf("%d chunks", len(chunks))
	}
	hdr, first := chunks[0], chunks[1]
	half := len(first[1]) / 2
	expect(t, c, [][]string{
		{"-Invalid position", "CF.LOADCHUNK", "dst", "0", hdr[1]},
		{"-Invalid position", "CF.LOADCHUNK", "dst", "x", hdr[1]},
		{"-ERR not found", "CF.LOADCHUNK", "dst", first[0], first[1]},
		{"-Invalid header", "CF.LOADCHUNK", "dst", "1", hdr[1] + "x"},
		{"-ERR item exists", "CF.LOADCHUNK", "src", "1", hdr[1]},
		{"+OK", "CF.LOADCHUNK", "dst", "1", hdr[1]},
		{"-ERR item exists", "CF.LOADCHUNK", "dst", "1", hdr[1]},
		{"+MBbloomCF", "TYPE", "dst"},
		{"-ERR item exists", "CF.RESERVE", "dst", "100"},
		{"-" + errWrongType, "BF.EXISTS", "dst", "s1"},
	})
	for _, cmd := range [][]string{{"CF.EXISTS", "dst", "s1"}, {"CF.MEXISTS", "dst", "s1"}, {"CF.COUNT", "dst", "s1"},
		{"CF.INFO", "dst"}, {"CF.ADD", "dst", "x"}, {"CF.DEL", "dst", "s1"}, {"CF.SCANDUMP", "dst", "0"}} {
		if got := c.do(cmd...); !strings.HasPrefix(got, "-ERR the filter is being loaded with CF.LOADCHUNK (0 of ") {
			t.Errorf("%v during the load: %s", cmd, got)
		}
	}
	// Out of order, overlapping, empty, across a sub-filter: refused.
	firstEnd := len(first[1]) + 1
	for _, ch := range [][2]string{
		{fmt.Sprint(firstEnd), first[1][half:]},                            // the second half first
		{fmt.Sprint(1 + half + 1), first[1][1 : half+1]},                   // a gap of one byte
		{fmt.Sprint(firstEnd + 10), first[1] + strings.Repeat("\x00", 10)}, // past the sub-filter's end
		{"2", ""},
		{"-5", "x"},
	} {
		if got := c.do("CF.LOADCHUNK", "dst", ch[0], ch[1]); !refused(got, "Couldn't load chunk!", "") {
			t.Errorf("chunk at %s of %d bytes: %s", ch[0], len(ch[1]), got)
		}
	}
	expect(t, c, [][]string{
		{"+OK", "CF.LOADCHUNK", "dst", fmt.Sprint(1 + half), first[1][:half]},
		{"+OK", "CF.LOADCHUNK", "dst", first[0], first[1][half:]},
	})
	for _, ch := range chunks[2:] {
		if got := c.do("CF.LOADCHUNK", "dst", ch[0], ch[1]); got != "+OK" {
			t.Fatalf("chunk %s: %s", ch[0], got)
		}
	}
	if got, want := c.do("CF.INFO", "dst"), c.do("CF.INFO", "src"); got != want {
		t.Fatalf("CF.INFO of the copy %s, of the original %s", got, want)
	}
	if cfDump(t, c, "dst") != cfDump(t, c, "src") {
		t.Fatal("the copy dumps other bytes")
	}
	for i := 0; i < 300; i++ {
		if got := c.do("CF.EXISTS", "dst", fmt.Sprint("s", i)); got != ":1" {
			t.Fatalf("the copy lacks s%d", i)
		}
	}
	if got := c.do("CF.LOADCHUNK", "dst", first[0], first[1]); !refused(got, "Couldn't load chunk!", "the key holds a complete filter (DEL it before loading another)") {
		t.Fatalf("a chunk onto a complete filter: %s", got)
	}
	if got := c.do("CF.LOADCHUNK", "bad", "1", strings.Repeat("\x00", 38)); !refused(got, "Couldn't create filter!", "cuckoo: RedisBloom dump: bucket size 0") {
		t.Fatalf("a header of zeros: %s", got)
	}
	// RedisBloom's test_number_of_buckets_does_not_overflow: 2^32
	// buckets of one slot, no item.
	huge := "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01\x00\x01\x00\x01\x00"
	if got := c.do("CF.LOADCHUNK", "bad", "1", huge); !refused(got, "Couldn't create filter!", "a first sub-filter of 4294967296 buckets") {
		t.Fatalf("a header of 2^32 buckets: %s", got)
	}
	if got := c.do("EXISTS", "bad"); got != ":0" {
		t.Fatal("a refused header made its key")
	}
}

// cfChunks returns key's CF.SCANDUMP chunks (iterator, data).
func cfChunks(t *testing.T, c *rawConn, key string) [][2]string {
	t.Helper()
	var out [][2]string
	for it := "0"; ; {
		c.send("CF.SCANDUMP", key, it)
		v, _ := c.read()
		if v.Kind != '*' || len(v.Elems) != 2 {
			t.Fatalf("CF.SCANDUMP %s %s: %v", key, it, v)
		}
		if v.Elems[0].Int == 0 {
			return out
		}
		it = fmt.Sprint(v.Elems[0].Int)
		out = append(out, [2]string{it, string(v.Elems[1].Str)})
	}
}

// TestCFPersistence: CF values and a CF load in progress survive restarts
// through the log alone, through a snapshot plus the log after it, and
// through a snapshot alone; every CF.INFO and every CF.SCANDUMP byte is
// the same after each restart, and the load in progress is continued
// afterwards into a copy of what was dumped.
func TestCFPersistence(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Dir: dir, AppendFsync: Always}
	s := start(t, cfg)
	c := dial(t, s)
	expect(t, c, [][]string{
		{"+OK", "CF.RESERVE", "c", "64", "BUCKETSIZE", "4", "MAXITERATIONS", "30", "EXPANSION", "2"},
		{"*[:1, :1, :0]", "CF.INSERTNX", "n", "CAPACITY", "100", "ITEMS", "a", "b", "a"},
		{"+OK", "CF.RESERVE", "e", "100"},
		{":1", "CF.ADD", "e", "x"},
		{":1", "EXPIRE", "e", "1000"},
	})
	for i := 0; i < 400; i++ {
		c.send("CF.ADD", "c", fmt.Sprint("k", i))
	}
	for i := 0; i < 400; i++ {
		if v, _ := c.read(); v.Int != 1 {
			t.Fatalf("CF.ADD k%d: %v", i, v)
		}
	}
	for i := 0; i < 400; i += 3 { // deletes, with RedisBloom's compaction
		if got := c.do("CF.DEL", "c", fmt.Sprint("k", i)); got != ":1" {
			t.Fatalf("CF.DEL k%d: %s", i, got)
		}
	}
	// A load in progress: the header and half of the first sub-filter.
	chunks := cfChunks(t, c, "c")
	dumped := cfDump(t, c, "c")
	if len(chunks) < 3 {
		t.Fatalf("%d chunks", len(chunks))
	}
	data := chunks[1][1]
	half := len(data) / 2
	expect(t, c, [][]string{
		{"+OK", "CF.LOADCHUNK", "part", "1", chunks[0][1]},
		{"+OK", "CF.LOADCHUNK", "part", fmt.Sprint(1 + half), data[:half]},
	})
	state := func() string {
		var b strings.Builder
		for _, k := range []string{"c", "n", "e"} {
			b.WriteString(c.do("CF.INFO", k))
			b.WriteString(cfDump(t, c, k))
		}
		return b.String()
	}
	want := state()
	check := func(stage string) {
		t.Helper()
		c = dial(t, s)
		if got := state(); got != want {
			t.Fatalf("%s: the CF keys differ after the restart", stage)
		}
		for i := 0; i < 400; i++ {
			got := c.do("CF.EXISTS", "c", fmt.Sprint("k", i))
			if i%3 != 0 && got != ":1" {
				t.Fatalf("%s: k%d lost", stage, i)
			}
		}
		if c.do("TYPE", "part") != "+MBbloomCF" || !strings.Contains(c.do("CF.EXISTS", "part", "k1"), "being loaded") {
			t.Fatalf("%s: the load in progress", stage)
		}
		c.send("TTL", "e")
		if ttl, _ := c.read(); ttl.Int < 990 || ttl.Int > 1000 {
			t.Fatalf("%s: TTL %v", stage, ttl)
		}
	}
	s = restart(t, s, cfg)
	check("log only")
	if got := c.do("SAVE"); got != "+OK" {
		t.Fatal(got)
	}
	expect(t, c, [][]string{{":1", "CF.ADD", "c", "after"}, {":1", "CF.DEL", "c", "after"}, {"+OK", "CF.COMPACT", "c"}})
	want = state()
	s = restart(t, s, cfg)
	check("snapshot and log")
	c.do("SAVE")
	s = restart(t, s, cfg)
	check("snapshot only")
	// Finish the load: the partial state was kept.
	if got := c.do("CF.LOADCHUNK", "part", chunks[1][0], data[half:]); got != "+OK" {
		t.Fatal(got)
	}
	for _, ch := range chunks[2:] {
		if got := c.do("CF.LOADCHUNK", "part", ch[0], ch[1]); got != "+OK" {
			t.Fatal(got)
		}
	}
	if cfDump(t, c, "part") != dumped {
		t.Fatal("the load continued after restarts differs from what was dumped")
	}
	s = restart(t, s, cfg)
	if cfDump(t, dial(t, s), "part") != dumped {
		t.Fatal("the completed load differs after a restart")
	}
}

// TestLoadCuckooFile: -load of a cuckoo file serves a CF key (TYPE
// MBbloomCF). A RedisBloom-profile file answers every CF command, its
// dump included; a bloomlab-profile file answers CF.EXISTS, MEXISTS,
// COUNT, INFO, ADD, ADDNX, INSERT, DEL and COMPACT, and refuses
// CF.SCANDUMP (it has no RedisBloom form). Changes persist. A cuckoo
// filter that an earlier server kept as a BF key (snapshot tag 1) stays
// one.
func TestLoadCuckooFile(t *testing.T) {
	rb, _ := cuckoo.NewRedisBloom(1000, 2, 20, 1)
	bl, _ := cuckoo.NewWithEstimates(1000, 0.001, 7)
	for i := 0; i < 500; i++ {
		rb.AddString(fmt.Sprint("k", i))
		bl.AddString(fmt.Sprint("k", i))
	}
	files := t.TempDir()
	write := func(name string, f *cuckoo.Filter) string {
		b, err := f.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		path := files + "/" + name
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	dir := t.TempDir()
	cfg := Config{Dir: dir, Load: []Load{{Name: "rb", Path: write("rb.blf", rb)}, {Name: "bl", Path: write("bl.blf", bl)}}}
	s := start(t, cfg)
	c := dial(t, s)
	for _, k := range []string{"rb", "bl"} {
		if got := c.do("TYPE", k); got != "+MBbloomCF" {
			t.Fatalf("TYPE %s: %s", k, got)
		}
		for i := 0; i < 500; i++ {
			if got := c.do("CF.EXISTS", k, fmt.Sprint("k", i)); got != ":1" {
				t.Fatalf("%s: k%d absent", k, i)
			}
		}
		expect(t, c, [][]string{
			{"*[:1, :0]", "CF.MEXISTS", k, "k1", "absent-key"},
			{":1", "CF.COUNT", k, "k7"},
			{":1", "CF.ADD", k, "new"},
			{":0", "CF.ADDNX", k, "new"},
			{"*[:1, :0]", "CF.INSERTNX", k, "ITEMS", "new2", "new"},
			{":1", "CF.DEL", k, "k7"},
			{"+OK", "CF.COMPACT", k},
		})
	}
	rbInfo := rb.Info()
	expect(t, c, [][]string{
		{fmt.Sprintf("*[+Size, :%d, +Number of buckets, :512, +Number of filters, :1, +Number of items inserted, :501, +Number of items deleted, :0, +Bucket size, :2, +Expansion rate, :1, +Max iterations, :20]", rbInfo.Size), "CF.INFO", "rb"},
		{fmt.Sprintf("*[+Size, :%d, +Number of buckets, :%d, +Number of filters, :1, +Number of items inserted, :501, +Number of items deleted, :0, +Bucket size, :4, +Expansion rate, :0, +Max iterations, :500]", bl.Info().Size, bl.Info().Buckets), "CF.INFO", "bl"},
		{"-ERR this cuckoo filter has the bloomlab profile: it has no RedisBloom dump (only RedisBloom-profile filters do: bloomlab build -kind cuckoo -profile redisbloom)", "CF.SCANDUMP", "bl", "0"},
		{"-" + errWrongType, "BF.EXISTS", "bl", "k1"},
	})
	rb.AddString("new")
	rb.AddString("new2")
	rb.Delete([]byte("k7"))
	rb.Compact()
	want, _ := rb.Dump(0)
	chunks := cfChunks(t, c, "rb")
	if len(chunks) != len(want) {
		t.Fatalf("%d chunks, want %d", len(chunks), len(want))
	}
	for i := range want {
		if chunks[i][0] != fmt.Sprint(want[i].Iter) || chunks[i][1] != string(want[i].Data) {
			t.Fatalf("chunk %d differs from the library's dump of the same filter", i)
		}
	}
	s = restart(t, s, cfg)
	c = dial(t, s)
	expect(t, c, [][]string{
		{":1", "CF.EXISTS", "rb", "new2"}, {":1", "CF.EXISTS", "bl", "new2"},
		{":0", "CF.COUNT", "bl", "k7"},
	})

	// A cuckoo filter kept as a BF key by an earlier server.
	s.db.mu.Lock()
	v := newBF(bl)
	s.add("old", v, 0)
	s.db.mu.Unlock()
	c.do("SAVE")
	s = restart(t, s, cfg)
	c = dial(t, s)
	expect(t, c, [][]string{
		{"+MBbloom--", "TYPE", "old"},
		{":1", "BF.EXISTS", "old", "k1"},
		{"-" + errWrongType, "CF.EXISTS", "old", "k1"},
	})
}

// TestCFLogIndependentOfDialect: keys that CF.ADD, CF.ADDNX, CF.INSERT,
// CF.INSERTNX and CF.RESERVE create with defaults (the module configs
// cf-initial-size, cf-bucket-size, cf-max-iterations,
// cf-expansion-factor) are logged with every parameter spelled out, so
// that a restart under the other dialect and other configs makes the
// same filters: written under Dialect24 with RedisBloom's defaults,
// replayed under Dialect8; written there with changed configs (in a
// transaction too), replayed under Dialect24 with the defaults.
func TestCFLogIndependentOfDialect(t *testing.T) {
	dir := t.TempDir()
	items := []string{"a", "b", "c", "x", "y"}
	write := func(c *rawConn, p string) {
		t.Helper()
		for _, cmd := range [][]string{
			{"CF.ADD", p + "add", "a"},
			{"CF.ADDNX", p + "addnx", "a"},
			{"CF.INSERT", p + "ins", "ITEMS", "a", "b"},
			{"CF.INSERTNX", p + "insnx", "CAPACITY", "100", "ITEMS", "a", "a", "c"},
			{"CF.INSERT", p + "nocreate", "NOCREATE", "ITEMS", "a"},
			{"CF.RESERVE", p + "res", "300"},
			{"CF.RESERVE", p + "res2", "300", "MAXITERATIONS", "7"},
			{"CF.INSERT", p + "res2", "CAPACITY", "9999", "ITEMS", "x", "y"},
			{"MULTI"}, {"CF.ADD", p + "tx", "a"}, {"CF.INSERT", p + "tx2", "ITEMS", "a"}, {"EXEC"},
		} {
			c.do(cmd...)
		}
		for i := 0; i < 40; i++ { // growth (cf-expansion-factor)
			c.do("CF.ADD", p+"add", "a")
		}
	}
	cfg := Config{Dir: dir, AppendFsync: Always, Dialect: Dialect24}
	s := start(t, cfg)
	c := dial(t, s)
	write(c, "d24-")
	want := stateOf(t, c, items)

	cfg.Dialect = Dialect8
	s = restart(t, s, cfg)
	c = dial(t, s)
	if got := stateOf(t, c, items); got != want {
		t.Fatalf("written under 2.4, replayed under 8:\n%s\nwant\n%s", got, want)
	}
	setCFConfig(t, s, "cf-initial-size", 200)
	setCFConfig(t, s, "cf-bucket-size", 3)
	setCFConfig(t, s, "cf-max-iterations", 9)
	setCFConfig(t, s, "cf-expansion-factor", 2)
	write(c, "d8-")
	if got := c.do("CF.INFO", "d8-ins"); !strings.Contains(got, "+Bucket size, :3, +Expansion rate, :2, +Max iterations, :9") {
		t.Fatalf("a key created with the changed configs: %s", got)
	}
	// cf-max-expansions 1: as RedisBloom, CF.ADD creates the key, then
	// refuses the add; the creation is logged.
	setCFConfig(t, s, "cf-max-expansions", 1)
	if got := c.do("CF.ADD", "d8-maxexp", "a"); got != "-Maximum expansions reached" {
		t.Fatal(got)
	}
	if got := c.do("EXISTS", "d8-maxexp"); got != ":1" {
		t.Fatalf("the key created: %s", got)
	}
	want = stateOf(t, c, items)

	cfg.Dialect = Dialect24
	s = restart(t, s, cfg)
	if got := stateOf(t, dial(t, s), items); got != want {
		t.Fatalf("written under 8 with other configs, replayed under 2.4:\n%s\nwant\n%s", got, want)
	}
}

// TestCFDebug: CF.DEBUG answers RedisBloom's one line (texts measured on
// a real RedisBloom 8.6.2: a filter of RedisBloom's defaults, one that
// may not grow, a load in progress refused as for every CF command), in
// both dialects and under RESP3 too.
func TestCFDebug(t *testing.T) {
	for _, d := range []Dialect{Dialect8, Dialect24} {
		s := start(t, Config{Dialect: d})
		c := dial(t, s)
		expect(t, c, [][]string{
			{"-ERR wrong number of arguments for 'cf.debug' command", "CF.DEBUG"},
			{"-ERR wrong number of arguments for 'cf.debug' command", "CF.DEBUG", "k", "x"},
			{"-ERR not found", "CF.DEBUG", "k"},
			{":1", "CF.ADD", "k", "a"},
			{`$"bktsize:2 buckets:512 items:1 deletes:0 filters:1 max_iterations:20 expansion:1"`, "CF.DEBUG", "k"},
			{"+OK", "CF.RESERVE", "c", "4", "BUCKETSIZE", "2", "EXPANSION", "0"},
			{"*[:1, :1, :1, :-1, :-1, :1, :-1, :-1, :-1, :-1]", "CF.INSERT", "c", "ITEMS", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j"},
			{`$"bktsize:2 buckets:2 items:4 deletes:0 filters:1 max_iterations:20 expansion:0"`, "CF.DEBUG", "c"},
			{":1", "CF.DEL", "c", "a"},
			{`$"bktsize:2 buckets:2 items:3 deletes:1 filters:1 max_iterations:20 expansion:0"`, "CF.DEBUG", "c"},
			{"+OK", "SET", "s", "v"},
			{"-" + errWrongType, "CF.DEBUG", "s"},
		})
		if got := c.do("CF.LOADCHUNK", "ld", "1", cfHeaderOf(t, c, "k")); got != "+OK" {
			t.Fatal(got)
		}
		if got := c.do("CF.DEBUG", "ld"); !strings.HasPrefix(got, "-ERR the filter is being loaded with CF.LOADCHUNK") {
			t.Errorf("CF.DEBUG of a load in progress: %s", got)
		}
		c.do("HELLO", "3")
		expect(t, c, [][]string{
			{`$"bktsize:2 buckets:512 items:1 deletes:0 filters:1 max_iterations:20 expansion:1"`, "CF.DEBUG", "k"},
		})
	}
}

// cfHeaderOf returns CF.SCANDUMP's header of key.
func cfHeaderOf(t *testing.T, c *rawConn, key string) string {
	t.Helper()
	c.send("CF.SCANDUMP", key, "0")
	v, _ := c.read()
	if len(v.Elems) != 2 {
		t.Fatalf("CF.SCANDUMP %s 0: %v", key, v)
	}
	return string(v.Elems[1].Str)
}

// TestCFHugeHeaderReplays: a CF.LOADCHUNK header that an earlier version
// took and logged (2^32 buckets, refused now) replays: the server starts
// with the load in progress, which it would refuse from a client.
func TestCFHugeHeaderReplays(t *testing.T) {
	huge := "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01\x00\x01\x00\x01\x00"
	cfg := Config{Dir: t.TempDir(), AppendFsync: Always, MaxMemory: -1}
	s := start(t, cfg)
	check := cfDumps.checkHeader
	cfDumps.checkHeader = nil // as before
	got := dial(t, s).do("CF.LOADCHUNK", "old", "1", huge)
	cfDumps.checkHeader = check
	if got != "+OK" {
		t.Fatal(got)
	}
	s = restart(t, s, cfg)
	c := dial(t, s)
	if got := c.do("CF.EXISTS", "old", "x"); !strings.HasPrefix(got, "-ERR the filter is being loaded with CF.LOADCHUNK (0 of 4294967296 bytes)") {
		t.Fatalf("after the replay: %s", got)
	}
	if got := c.do("CF.LOADCHUNK", "new", "1", huge); got != "-Couldn't create filter!" {
		t.Fatalf("from a client: %s", got)
	}
}

// setCFConfig sets the module config name of s to v, as CONFIG SET does.
func setCFConfig(t *testing.T, s *Server, name string, v int64) {
	t.Helper()
	p := lookupModConfig([]byte(name), true)
	if p < 0 {
		t.Fatalf("no module config %s", name)
	}
	if i, msg := s.modcfg.set([]modSet{{p, []byte(strconv.FormatInt(v, 10))}}); i >= 0 {
		t.Fatalf("module config %s %d: %s", name, v, msg)
	}
}

// TestLoadChunkRefusalLoggedOnce: 1,000 chunks refused because the key
// holds a complete filter are one line in the log, and a count (a line a
// chunk before: 2,155 identical lines in one of RedisBloom's flow tests).
func TestLoadChunkRefusalLoggedOnce(t *testing.T) {
	var logs syncBuffer
	s := start(t, Config{Logger: log.New(&logs, "", 0)})
	c := dial(t, s)
	c.do("CF.RESERVE", "cf", "1000")
	c.do("CF.ADD", "cf", "x")
	for i := range 1000 {
		c.send("CF.LOADCHUNK", "cf", fmt.Sprint(i+2), "data")
	}
	for range 1000 {
		c.read()
	}
	c.do("CF.RESERVE", "cf2", "1000")
	c.do("CF.ADD", "cf2", "x")
	c.do("CF.LOADCHUNK", "cf2", "2", "data") // another key's refusal ends the burst
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	complete := 0
	for _, l := range lines {
		if strings.Contains(l, "complete filter") {
			complete++
		}
	}
	if complete != 2 || !strings.Contains(logs.String(), "999 more LOADCHUNK refusals for key \"cf\"") {
		t.Errorf("%d lines name the complete filter, and the count is missing or wrong:\n%.600s", complete, logs.String())
	}
}
