package server

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyFixtureDir copies testdata/<name> (a -dir) into a temporary
// directory, so that a server may write there.
func copyFixtureDir(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join("testdata", name)
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// cmsStep is a command and the reply it must get.
type cmsStep struct {
	want string
	cmd  []string
}

func cmsRun(t *testing.T, c *rawConn, steps []cmsStep) {
	t.Helper()
	for _, st := range steps {
		if got := c.do(st.cmd...); got != st.want {
			t.Errorf("%v: got %s, want %s", st.cmd, got, st.want)
		}
	}
}

func cs(want string, cmd ...string) cmsStep { return cmsStep{want, cmd} }

// TestCMSRedisBloom: CMS.* answer as RedisBloom 8.6.2 does (every reply
// here was checked against the real module, test_cms.py's cases
// included): MurmurHash2 rows, 32-bit counters that saturate with an
// error element for the item, negative MERGE weights and RedisBloom's
// MERGE overflow refusals (which change nothing), INFO a map under RESP3,
// its texts for oversize keys.
func TestCMSRedisBloom(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprint("RESP", proto), func(t *testing.T) {
			s := start(t, Config{})
			c := dial(t, s)
			if proto == 3 {
				c.do("HELLO", "3")
			}
			cmsRun(t, c, cmsRedisBloomSteps(proto))
		})
	}
}

// cmsRedisBloomSteps are TestCMSRedisBloom's commands and replies.
func cmsRedisBloomSteps(proto int) []cmsStep {
	info := "*[+width, :%d, +depth, :%d, +count, :%d]"
	if proto == 3 {
		info = "%%[+width, :%d, +depth, :%d, +count, :%d]"
	}
	inf := func(w, d, n int64) string { return fmt.Sprintf(info, w, d, n) }
	of := "-CMS: INCRBY overflow"
	mo := "-CMS: MERGE overflow"
	return []cmsStep{
		// test_smallset: foo and bar collide in no row of 2 × 2.
		cs("+OK", "CMS.INITBYDIM", "s", "2", "2"),
		cs("*[:10, :42]", "CMS.INCRBY", "s", "foo", "10", "bar", "42"),
		cs("*[:10, :42]", "CMS.QUERY", "s", "foo", "bar"),
		// test_overflow: a saturates at 2^32 − 1, its item answers the
		// error element, the add is kept, INFO counts it whole.
		cs("+OK", "CMS.INITBYDIM", "o", "5", "2"),
		cs("*[:2147483647, :10, :17, :5]", "CMS.INCRBY", "o", "a", "2147483647", "b", "10", "c", "7", "d", "5"),
		cs("*[:4294967294, :27, :34, :10]", "CMS.INCRBY", "o", "a", "2147483647", "b", "10", "c", "7", "d", "5"),
		cs("*["+of+", :44, :51, :15]", "CMS.INCRBY", "o", "a", "2147483647", "b", "10", "c", "7", "d", "5"),
		cs("*[:4294967295, :51, :51, :15]", "CMS.QUERY", "o", "a", "b", "c", "d"),
		cs(inf(5, 2, 3*2147483647+3*22), "CMS.INFO", "o"),
		cs("+OK", "CMS.INITBYDIM", "e", "10", "2"),
		cs("*["+of+"]", "CMS.INCRBY", "e", "a", "4294967295"),
		cs("*["+of+", :1]", "CMS.INCRBY", "e", "a", "4294967296", "b", "1"),
		cs(inf(10, 2, 4294967295+4294967296+1), "CMS.INFO", "e"),
		// test_merge_overflow_large_cell: refused, nothing changed.
		cs("+OK", "CMS.INITBYDIM", "m1", "2", "2"),
		cs("+OK", "CMS.INITBYDIM", "m2", "2", "2"),
		cs("*[:4000000000]", "CMS.INCRBY", "m1", "foo", "4000000000"),
		cs("*[:4000000000]", "CMS.INCRBY", "m2", "foo", "4000000000"),
		cs(mo, "CMS.MERGE", "m1", "2", "m1", "m2", "WEIGHTS", "1", "-2"),
		cs(mo, "CMS.MERGE", "m1", "2", "m1", "m2", "WEIGHTS", "-2", "-2"),
		cs(mo, "CMS.MERGE", "m1", "2", "m1", "m2", "WEIGHTS", "-2", "1"),
		cs(mo, "CMS.MERGE", "m1", "2", "m1", "m2", "WEIGHTS", "2", "0"),
		cs(mo, "CMS.MERGE", "m1", "2", "m1", "m2", "WEIGHTS", "0", "2"),
		cs(mo, "CMS.MERGE", "m1", "2", "m1", "m2", "WEIGHTS", "-1", "-1"),
		cs(inf(2, 2, 4000000000), "CMS.INFO", "m1"),
		cs("*[:4000000000]", "CMS.QUERY", "m1", "foo"),
		cs("+OK", "CMS.MERGE", "m1", "2", "m1", "m2", "WEIGHTS", "1", "-1"),
		cs("*[:0]", "CMS.QUERY", "m1", "foo"),
		cs(inf(2, 2, 0), "CMS.INFO", "m1"),
		// test_merge_overflow_large_weight.
		cs("+OK", "CMS.INITBYDIM", "w1", "2", "2"),
		cs("+OK", "CMS.INITBYDIM", "w2", "2", "2"),
		cs("*[:4]", "CMS.INCRBY", "w1", "foo", "4"),
		cs("*[:4]", "CMS.INCRBY", "w2", "foo", "4"),
		cs(mo, "CMS.MERGE", "w1", "2", "w1", "w2", "WEIGHTS", "9223372036854775807", "-4000000000"),
		cs(mo, "CMS.MERGE", "w1", "2", "w1", "w2", "WEIGHTS", "8000000000", "-4000000000"),
		cs(mo, "CMS.MERGE", "w1", "2", "w1", "w2", "WEIGHTS", "-8000000000", "4000000000"),
		cs(mo, "CMS.MERGE", "w1", "2", "w1", "w2", "WEIGHTS", "-800000000000", "8000000000"),
		cs(mo, "CMS.MERGE", "w1", "2", "w1", "w2", "WEIGHTS", "-5", "-4"),
		cs("-CMS: invalid weight value", "CMS.MERGE", "w1", "2", "w1", "w2", "WEIGHTS", "1", "9223372036854775808"),
		cs(inf(2, 2, 4), "CMS.INFO", "w1"),
		cs("+OK", "CMS.MERGE", "w1", "2", "w1", "w2", "WEIGHTS", "-922337203685477500", "922337203685477502"),
		cs(inf(2, 2, 8), "CMS.INFO", "w1"),
		cs("*[:8]", "CMS.QUERY", "w1", "foo"),
		cs(mo, "CMS.MERGE", "w1", "2", "w1", "w2", "WEIGHTS", "-1", "1"),
		cs("+OK", "CMS.MERGE", "w1", "2", "w1", "w2", "WEIGHTS", "1", "-2"),
		cs("*[:0]", "CMS.QUERY", "w1", "foo"),
		// test_insufficient_memory.
		cs("-CMS: Insufficient memory to create the key", "CMS.INITBYPROB", "x", "0.0000000000000001", "0.0000000000000001"),
		cs("-CMS: Insufficient memory to create the key", "CMS.INITBYDIM", "x", "1000000000", "1000000000"),
		cs("-CMS: Insufficient memory to create the key", "CMS.INITBYDIM", "x", "2294967296", "2294967296"),
		cs("-CMS: invalid init arguments", "CMS.INITBYDIM", "x", "100000000000000", "100000000000000"),
		cs("-CMS: invalid init arguments", "CMS.INITBYPROB", "x", "0.5", "0.99999999"),
		cs("+OK", "CMS.INITBYDIM", "deep", "10", "100"), // more than bloomlab's 64 rows
		cs("-ERR wrong number of arguments for 'cms.initbydim' command", "CMS.INITBYDIM", "x", "10", "2", "PROFILE", "redisbloom"),
		cs(":0", "EXISTS", "x"),
	}
}

// TestCMSDialect24: under dialect 2.4 the same sketch (RedisBloom 2.4.23
// has 8.6.2's), INFO an array under RESP3, and negative weights refused
// as before.
func TestCMSDialect24(t *testing.T) {
	s := start(t, Config{Dialect: Dialect24})
	c := dial(t, s)
	c.do("HELLO", "3")
	cmsRun(t, c, []cmsStep{
		cs("+OK", "CMS.INITBYDIM", "s", "2", "2"),
		cs("*[:10, :42]", "CMS.INCRBY", "s", "foo", "10", "bar", "42"),
		cs("*[-CMS: INCRBY overflow]", "CMS.INCRBY", "s", "foo", "4294967295"),
		cs("*[+width, :2, +depth, :2, +count, :4294967347]", "CMS.INFO", "s"),
		cs("-CMS: invalid weight value", "CMS.MERGE", "s", "1", "s", "WEIGHTS", "-1"),
		cs("-CMS: MERGE overflow", "CMS.MERGE", "s", "1", "s", "WEIGHTS", "2"),
		cs("+OK", "CMS.MERGE", "s", "1", "s", "WEIGHTS", "1"),
		cs("*[:4294967295, :42]", "CMS.QUERY", "s", "foo", "bar"),
	})
}

// TestCMSCountBound: the count N stays within int64: an INCRBY that would
// take it past 2^63 − 1 is refused whole (RedisBloom wraps it modulo 2^64
// and reports a negative count).
func TestCMSCountBound(t *testing.T) {
	s := start(t, Config{})
	c := dial(t, s)
	cmsRun(t, c, []cmsStep{
		cs("+OK", "CMS.INITBYDIM", "c", "10", "5"),
		cs("*[-CMS: INCRBY overflow]", "CMS.INCRBY", "c", "a", "9223372036854775000"),
		cs("-CMS: INCRBY overflow", "CMS.INCRBY", "c", "b", "1", "a", "1000"),
		cs("-CMS: Cannot parse number", "CMS.INCRBY", "c", "b", "1", "a", "1000", "z", "x"),
		cs("*[:0]", "CMS.QUERY", "c", "b"),
		cs("*[+width, :10, +depth, :5, +count, :9223372036854775000]", "CMS.INFO", "c"),
	})
}

// TestCMSMemory: a sketch accounts 4 bytes a counter (RedisBloom's
// uint32 counters), reserved before it is made.
func TestCMSMemory(t *testing.T) {
	s := start(t, Config{})
	c := dial(t, s)
	c.do("PING")
	before := s.mem.Load()
	if got := c.do("CMS.INITBYDIM", "c", "1000", "5"); got != "+OK" {
		t.Fatal(got)
	}
	if d := s.mem.Load() - before; d < 20000 || d > 20000+512 {
		t.Fatalf("a 1000 × 5 sketch accounts %d bytes, want 20000 and the key's overhead", d)
	}
	limitKeys(s, 20000)
	if got := c.do("CMS.INITBYDIM", "d", "1000", "5"); got != "-"+errOOM {
		t.Fatalf("a sketch past the limit: %s", got)
	}
	if got := c.do("CMS.INITBYDIM", "d", "1000", "4"); got != "+OK" {
		t.Fatalf("a 16000-byte sketch under a 20000-byte room: %s", got)
	}
}

// TestCMSLegacyDir: a -dir written before the redisbloom profile (its
// sketches bloomlab's: 64-bit counters, xxh3 rows; in the snapshot and as
// CMS.INITBYDIM/INITBYPROB records in the log) loads under both dialects
// with every key answering as then, and keeps its profile through writes
// and restarts: foo and bar collide in the 2 × 2 logd, big holds 6·10^9.
func TestCMSLegacyDir(t *testing.T) {
	want := map[string]string{
		"old":  "*[+width, :20, +depth, :3, +count, :60] *[:11, :42, :0, :0, :0, :0]",
		"oldp": "*[+width, :20, +depth, :2, +count, :11] *[:0, :0, :0, :5, :6, :0]",
		"logd": "*[+width, :2, +depth, :2, +count, :52] *[:52, :52, :52, :52, :0, :52]",
		"logp": "*[+width, :20, +depth, :4, +count, :3] *[:0, :0, :3, :0, :0, :0]",
		"big":  "*[+width, :4, +depth, :2, +count, :6000000000] *[:0, :6000000000, :0, :6000000000, :0, :0]",
	}
	check := func(c *rawConn) {
		t.Helper()
		for k, w := range want {
			if got := c.do("CMS.INFO", k) + " " + c.do("CMS.QUERY", k, "foo", "bar", "x", "a", "b", "zz"); got != w {
				t.Errorf("%s: got %s, want %s", k, got, w)
			}
		}
	}
	for _, d := range []Dialect{Dialect8, Dialect24} {
		dir := copyFixtureDir(t, "cms-bloomlab-profile")
		cfg := Config{Dir: dir, AppendFsync: Always, Dialect: d}
		s := start(t, cfg)
		c := dial(t, s)
		check(c)
		cmsRun(t, c, []cmsStep{
			cs("*[:53]", "CMS.INCRBY", "logd", "foo", "1"),
			cs("+OK", "CMS.MERGE", "big", "1", "big", "WEIGHTS", "2"),
			cs("-CMS: invalid weight value", "CMS.MERGE", "big", "1", "big", "WEIGHTS", "-1"),
			cs("+OK", "CMS.INITBYDIM", "new", "2", "2"),
			cs("-CMS: width/depth is not equal", "CMS.MERGE", "logd", "1", "new"),
			cs("-CMS: width/depth is not equal", "CMS.MERGE", "new", "1", "logd"),
			cs("*[:10, :42]", "CMS.INCRBY", "new", "foo", "10", "bar", "42"),
		})
		want["logd"] = "*[+width, :2, +depth, :2, +count, :53] *[:53, :53, :53, :53, :0, :53]"
		want["big"] = "*[+width, :4, +depth, :2, +count, :12000000000] *[:0, :12000000000, :0, :12000000000, :0, :0]"
		want["new"] = "*[+width, :2, +depth, :2, +count, :52] *[:10, :42, :0, :0, :0, :10]"
		check(c)
		other := Dialect8 + Dialect24 - d
		for _, snap := range []bool{false, true} { // from the log, then a snapshot
			if snap {
				if got := c.do("SAVE"); got != "+OK" {
					t.Fatal(got)
				}
			}
			cfg.Dialect = other
			s = restart(t, s, cfg)
			c = dial(t, s)
			check(c)
		}
		delete(want, "new")
		want["logd"] = "*[+width, :2, +depth, :2, +count, :52] *[:52, :52, :52, :52, :0, :52]"
		want["big"] = "*[+width, :4, +depth, :2, +count, :6000000000] *[:0, :6000000000, :0, :6000000000, :0, :0]"
	}
}

// TestCMSDialectRestart: the log and the snapshot of CMS keys do not
// depend on the dialect: keys written under one (a negative-weight merge
// under dialect 8, which dialect 2.4 refuses from a client) restart under
// the other, from the log and from a snapshot, in the same state.
func TestCMSDialectRestart(t *testing.T) {
	items := []string{"a", "b", "c", "foo", "bar", "zz"}
	for _, first := range []Dialect{Dialect24, Dialect8} {
		dir := t.TempDir()
		cfg := Config{Dir: dir, AppendFsync: Always, Dialect: first}
		s := start(t, cfg)
		c := dial(t, s)
		for _, cmd := range [][]string{
			{"CMS.INITBYDIM", "d", "5", "2"}, {"CMS.INITBYPROB", "p", "0.01", "0.01"}, {"CMS.INITBYDIM", "q", "5", "2"},
			{"CMS.INCRBY", "d", "a", "2147483647", "b", "10", "c", "7"},
			{"CMS.INCRBY", "d", "a", "2147483647", "b", "10", "c", "7"},
			{"CMS.INCRBY", "d", "a", "2147483647", "b", "10", "c", "7"},
			{"CMS.INCRBY", "q", "a", "3", "foo", "9", "bar", "1"},
			{"CMS.INCRBY", "p", "a", "3", "foo", "9", "bar", "1"},
			{"CMS.MERGE", "q", "2", "q", "d", "WEIGHTS", "1", "0"},
			{"CMS.MERGE", "q", "2", "q", "q", "WEIGHTS", "3", "-1"},
		} {
			c.do(cmd...)
		}
		if first == Dialect8 {
			if got := c.do("CMS.INFO", "q"); got != "*[+width, :5, +depth, :2, +count, :26]" {
				t.Fatalf("negative-weight merge under dialect 8: %s", got)
			}
		}
		before := stateOf(t, c, items)
		if !strings.Contains(before, "CMSk-TYPE") {
			t.Fatalf("no sketches: %s", before)
		}
		for _, snap := range []bool{false, true} {
			if snap {
				if got := c.do("SAVE"); got != "+OK" {
					t.Fatal(got)
				}
			}
			cfg.Dialect = Dialect8 + Dialect24 - first
			s = restart(t, s, cfg)
			c = dial(t, s)
			if got := stateOf(t, c, items); got != before {
				t.Fatalf("written under %v, restarted under %v (snapshot %v):\n%s\nwant\n%s", first, cfg.Dialect, snap, got, before)
			}
		}
	}
}
