package server

import (
	"strconv"
	"strings"
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
