package main

import (
	"bufio"
	"math/rand/v2"
	"net"
	"strings"
	"testing"
)

func TestReply(t *testing.T) {
	ok := []string{":1\r\n", "+OK\r\n", "$3\r\nabc\r\n", "$-1\r\n", "*2\r\n:1\r\n:0\r\n", "*-1\r\n",
		"%1\r\n+a\r\n:1\r\n", "#t\r\n", "_\r\n", ",1.5\r\n", "*2\r\n*1\r\n$1\r\nx\r\n:3\r\n"}
	for _, s := range ok {
		r := bufio.NewReader(strings.NewReader(s + ":9\r\n"))
		if err := reply(r); err != nil {
			t.Errorf("reply(%q): %v", s, err)
			continue
		}
		// The reply is consumed exactly: the next one follows.
		if line, _ := r.ReadString('\n'); line != ":9\r\n" {
			t.Errorf("reply(%q) left %q before the next reply", s, line)
		}
	}
	bad := []string{"-ERR x\r\n", "*2\r\n:1\r\n-ERR y\r\n", "?\r\n", "$x\r\n", "$5\r\nab", ""}
	for _, s := range bad {
		if err := reply(bufio.NewReader(strings.NewReader(s))); err == nil {
			t.Errorf("reply(%q): no error", s)
		}
	}
}

func TestWrite(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	c := &client{conn: a, r: 1000, rng: rand.New(rand.NewPCG(1, 2))}
	c.w = bufio.NewWriter(a)
	for _, f := range strings.Fields("BF.MADD {key} {item} {item}") {
		c.items = append(c.items, f == "{item}")
		c.parts = append(c.parts, strings.ReplaceAll(f, "{key}", "k7"))
	}
	go func() { c.write(); c.w.Flush() }()
	r := bufio.NewReader(b)
	want := []string{"*4", "$7", "BF.MADD", "$2", "k7", "$12", "", "$12", ""}
	for i, w := range want {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		line = strings.TrimSuffix(line, "\r\n")
		if w == "" { // an item: 12 digits below -r
			if len(line) != 12 || strings.Trim(line, "0123456789") != "" || line[:9] != "000000000" {
				t.Errorf("word %d: %q is not a 12-digit item below 1000", i, line)
			}
		} else if line != w {
			t.Errorf("word %d: %q, want %q", i, line, w)
		}
	}
}
