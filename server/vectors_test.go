package server

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

// The transcripts recorded from RedisBloom 2.4.23 on Redis 7.0.15
// (testdata, from the recorded vectors), replayed in Dialect24: every
// command is sent over a socket and every reply must be the recorded
// bytes, SCANDUMP chunks included.

type vector struct {
	Name     string `json:"name"`
	Commands []struct {
		Args  []string        `json:"args"`
		Reply json.RawMessage `json:"reply"`
	} `json:"commands"`
}

func loadVectors(t testing.TB, name string) []vector {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var vs []vector
	if err := json.NewDecoder(z).Decode(&vs); err != nil {
		t.Fatal(err)
	}
	return vs
}

// encodeReply renders a recorded reply (the JSON encoding of the vectors'
// README) as the bytes Redis sent.
func encodeReply(t testing.TB, raw json.RawMessage, proto int) []byte {
	t.Helper()
	var b bytes.Buffer
	var enc func(v any)
	enc = func(v any) {
		switch x := v.(type) {
		case nil:
			if proto == 3 {
				b.WriteString("_\r\n")
			} else {
				b.WriteString("$-1\r\n")
			}
		case float64:
			fmt.Fprintf(&b, ":%d\r\n", int64(x))
		case string:
			fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(x), x)
		case []any:
			fmt.Fprintf(&b, "*%d\r\n", len(x))
			for _, e := range x {
				enc(e)
			}
		case map[string]any:
			switch {
			case x["simple"] != nil:
				fmt.Fprintf(&b, "+%s\r\n", x["simple"])
			case x["error"] != nil:
				fmt.Fprintf(&b, "-%s\r\n", x["error"])
			case x["hex"] != nil:
				d, err := hex.DecodeString(x["hex"].(string))
				if err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(d), d)
			default:
				t.Fatalf("reply encoding %v", x)
			}
		default:
			t.Fatalf("reply encoding %T", v)
		}
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	enc(v)
	return b.Bytes()
}

func replay(t *testing.T, c *rawConn, vs []vector, proto int, skip func(args []string) bool) (n int) {
	for _, v := range vs {
		for i, cmd := range v.Commands {
			if skip != nil && skip(cmd.Args) {
				continue
			}
			want := encodeReply(t, cmd.Reply, proto)
			c.send(cmd.Args...)
			_, got := c.read()
			if !bytes.Equal(got, want) {
				t.Fatalf("%s, command %d %s: got\n%.300q\nwant\n%.300q", v.Name, i, short(cmd.Args), got, want)
			}
			n++
		}
	}
	return n
}

func short(args []string) string {
	if len(args) > 6 {
		return strings.Join(args[:6], " ") + fmt.Sprintf(" … (%d arguments)", len(args))
	}
	return strings.Join(args, " ")
}

// TestTranscriptsRESP2 replays the RESP2 transcripts: every BF and CMS
// command (RESERVE with EXPANSION and NONSCALING, MADD past capacity and
// at a full non-scaling filter, MEXISTS, INFO and its fields, CARD,
// SCANDUMP to the end, INSERT, the error replies, CMS.*, TYPE).
func TestTranscriptsRESP2(t *testing.T) {
	s := start(t, Config{Dialect: Dialect24})
	c := dial(t, s)
	n := replay(t, c, loadVectors(t, "redisbloom-2.4.23.json.gz"), 2, nil)
	if n != 81 {
		t.Fatalf("replayed %d commands, want 81", n)
	}
}

// TestTranscriptsCuckoo replays the CF transcripts: CF.RESERVE with
// BUCKETSIZE, MAXITERATIONS and EXPANSION, 50 CF.ADDs, ADDNX, EXISTS,
// MEXISTS, COUNT and DEL (of an added key and of a key never added),
// INFO, SCANDUMP to its final [0, nil] byte for byte, an INSERT of 400
// items growing to 3 sub-filters, INSERTNX with CAPACITY, NOCREATE, the
// error replies and TYPE.
func TestTranscriptsCuckoo(t *testing.T) {
	s := start(t, Config{Dialect: Dialect24})
	c := dial(t, s)
	n := replay(t, c, loadVectors(t, "redisbloom-2.4.23-cuckoo.json.gz"), 2, nil)
	if n != 83 {
		t.Fatalf("replayed %d commands, want 83", n)
	}
}

// TestTranscriptsRESP3 replays the connection recorded after HELLO 3:
// RedisBloom 2.4.23 answers BF, CF and CMS commands as under RESP2. The
// HELLO reply names the server and its modules (compared in shape).
func TestTranscriptsRESP3(t *testing.T) {
	s := start(t, Config{Dialect: Dialect24})
	c := dial(t, s)
	vs := loadVectors(t, "redisbloom-2.4.23-resp3.json.gz")
	hello := vs[0].Commands[0]
	if strings.Join(hello.Args, " ") != "HELLO 3 SETNAME vec" {
		t.Fatalf("first command %v", hello.Args)
	}
	c.send(hello.Args...)
	v, raw := c.read()
	if !bytes.HasPrefix(raw, []byte("%7\r\n$6\r\nserver\r\n")) || len(v.Elems) != 14 || v.Elems[4].String() != `$"proto"` || v.Elems[5].Int != 3 {
		t.Fatalf("HELLO 3: %q", raw)
	}
	vs[0].Commands = vs[0].Commands[1:]
	if n := replay(t, c, vs, 3, nil); n != 20 {
		t.Fatalf("replayed %d commands, want 20", n)
	}
}
