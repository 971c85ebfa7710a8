package server

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
)

var updateReplay = flag.Bool("update-replay", false, "rewrite testdata/replay-digests.txt from this build's replies")

// replayFiles are the recorded transcripts that TestReplayGolden replays.
var replayFiles = []string{
	"redisbloom-2.4.23.json.gz",
	"redisbloom-2.4.23-cuckoo.json.gz",
	"redisbloom-2.4.23-resp3.json.gz",
	"redisbloom-8.6.2-resp2.json.gz",
	"redisbloom-8.6.2-resp3.json.gz",
}

// TestReplayGolden replays every recorded transcript under both dialects
// (each file under its own protocol), and COMMAND INFO, COMMAND DOCS,
// COMMAND LIST and COMMAND COUNT of every command, and compares the
// digest of each vector's reply bytes with testdata/replay-digests.txt.
// The golden file was written before the command table and the dialects
// were reorganised (issue 34), so a refactor that changes one byte of
// any reply, in the dialect a transcript was recorded in or in the
// other, fails here and names the vector. Regenerate on purpose only:
// go test ./server -run TestReplayGolden -update-replay.
func TestReplayGolden(t *testing.T) {
	var lines []string
	for _, d := range []Dialect{Dialect8, Dialect24} {
		for _, file := range replayFiles {
			proto := 2
			if strings.Contains(file, "resp3") {
				proto = 3
			}
			s := start(t, Config{Dialect: d})
			c := dial(t, s)
			if proto == 3 {
				c.do("HELLO", "3")
			}
			for _, v := range loadVectors(t, file) {
				h := sha256.New()
				n := 0
				for _, cmd := range v.Commands {
					if strings.EqualFold(cmd.Args[0], "HELLO") {
						continue // the connection's id and the server's version: not the command table's
					}
					c.send(cmd.Args...)
					_, raw := c.read()
					h.Write(raw)
					n++
				}
				lines = append(lines, fmt.Sprintf("%s dialect=%s %s commands=%d %s", file, d, v.Name, n, hex.EncodeToString(h.Sum(nil))[:16]))
			}
		}
		for _, proto := range []int{2, 3} {
			s := start(t, Config{Dialect: d})
			c := dial(t, s)
			if proto == 3 {
				c.do("HELLO", "3")
			}
			names := make([]string, 0, len(commandTable))
			for name := range commandTable {
				names = append(names, name)
			}
			sort.Strings(names)
			for _, q := range [][]string{{"COMMAND", "INFO"}, {"COMMAND", "DOCS"}} {
				for _, name := range names {
					c.send(append(q, name)...)
					_, raw := c.read()
					sum := sha256.Sum256(raw)
					lines = append(lines, fmt.Sprintf("%s dialect=%s RESP%d %s", strings.Join(q, "-"), d, proto, name)+" "+hex.EncodeToString(sum[:])[:16])
				}
			}
			for _, q := range [][]string{{"COMMAND", "COUNT"}, {"COMMAND", "LIST"}, {"COMMAND", "LIST", "FILTERBY", "MODULE", "bf"},
				{"COMMAND", "LIST", "FILTERBY", "ACLCAT", "bf"}, {"COMMAND", "LIST", "FILTERBY", "ACLCAT", "server"}, {"COMMAND", "INFO", "nosuch"}} {
				c.send(q...)
				_, raw := c.read()
				sum := sha256.Sum256(raw)
				lines = append(lines, fmt.Sprintf("%s dialect=%s RESP%d", strings.Join(q, "-"), d, proto)+" "+hex.EncodeToString(sum[:])[:16])
			}
		}
	}
	got := strings.Join(lines, "\n") + "\n"
	const golden = "testdata/replay-digests.txt"
	if *updateReplay {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got == string(want) {
		return
	}
	wl := strings.Split(string(want), "\n")
	gl := strings.Split(got, "\n")
	bad := 0
	for i := 0; i < max(len(wl), len(gl)); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			t.Errorf("line %d: got %q, want %q", i+1, g, w)
			if bad++; bad > 20 {
				break
			}
		}
	}
}
