package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bloomlab/bloomlab/countmin"
	"github.com/bloomlab/bloomlab/rdb"
	"github.com/bloomlab/bloomlab/server"
)

// The RDB files recorded from Redis 7.0.15 with RedisBloom 2.4.23 and
// 8.6.2 (rdb/testdata), each with its json.gz of keys, DUMP
// payloads and probe transcripts.
var recordedRDB = []string{"redisbloom-8.6.2", "redisbloom-2.4.23"}

func recordedPath(name, ext string) string {
	return filepath.Join(testdataDir, "..", "..", "..", "rdb", "testdata", name+"-rdb."+ext)
}

type probe struct {
	Args  []string `json:"args"`
	Reply any      `json:"reply"`
}

type recordedKey struct {
	Key   string  `json:"key"`
	Type  string  `json:"type"`
	Dump  string  `json:"dump"`
	Probe []probe `json:"probe"`
}

func loadRecorded(t *testing.T, name string) []recordedKey {
	t.Helper()
	f, err := os.Open(recordedPath(name, "json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Keys []recordedKey `json:"keys"`
	}
	if err := json.NewDecoder(z).Decode(&v); err != nil {
		t.Fatal(err)
	}
	if len(v.Keys) == 0 {
		t.Fatalf("%s: no keys", name)
	}
	return v.Keys
}

// wantLabel is rdb info's type for a type the transcript's TYPE names.
var wantLabel = map[string]string{
	"string": "string", "MBbloom--": "MBbloom-- (BF)", "MBbloomCF": "MBbloomCF (CF)",
	"CMSk-TYPE": "CMSk-TYPE (CMS)", "TopK-TYPE": "TopK-TYPE (TOPK)", "TDIS-TYPE": "TDIS-TYPE (TDIGEST)",
}

type infoJSON struct {
	File    string           `json:"file"`
	Version int              `json:"rdb_version"`
	Keys    []rdbKeyInfo     `json:"keys"`
	Aux     []rdbAux         `json:"aux"`
	Count   int64            `json:"key_count"`
	Types   map[string]int64 `json:"types"`
	Expired int64            `json:"expired"`
	Other   map[string]int64 `json:"other_dbs"`
	Error   string           `json:"error"`
}

func rdbInfoJSON(t *testing.T, args ...string) (infoJSON, string, int) {
	t.Helper()
	o, e, code := invoke(append([]string{"rdb", "info", "-json"}, args...), "")
	var r infoJSON
	if err := json.Unmarshal([]byte(o), &r); err != nil {
		t.Fatalf("rdb info -json %v: %v\n%s", args, err, o)
	}
	return r, e, code
}

// TestRDBInfoRecorded: rdb info lists every key of both recorded files
// with the type the real server's TYPE gave, each module value's size is
// its DUMP payload's less the type byte and the 10-byte footer, the
// summary counts the keys per type and names redis-ver; the text form
// has one line per key with its type.
func TestRDBInfoRecorded(t *testing.T) {
	for _, name := range recordedRDB {
		t.Run(name, func(t *testing.T) {
			keys := loadRecorded(t, name)
			r, e, code := rdbInfoJSON(t, recordedPath(name, "rdb"))
			if code != 0 || e != "" {
				t.Fatalf("exit %d: %s", code, e)
			}
			if r.Version != 10 || len(r.Keys) != len(keys) || r.Count != int64(len(keys)) || r.Error != "" {
				t.Fatalf("version %d, %d keys (count %d), want 10, %d; error %q", r.Version, len(r.Keys), r.Count, len(keys), r.Error)
			}
			got := map[string]rdbKeyInfo{}
			for _, k := range r.Keys {
				got[k.Key] = k
			}
			types := map[string]int64{}
			for _, k := range keys {
				g, ok := got[k.Key]
				if !ok {
					t.Errorf("key %q not listed", k.Key)
					continue
				}
				types[wantLabel[k.Type]]++
				if g.Type != wantLabel[k.Type] || g.DB != 0 || g.Expire != nil || g.Expired {
					t.Errorf("key %q: %+v, want type %s, db 0, no expiry", k.Key, g, wantLabel[k.Type])
				}
				if k.Type != "string" {
					want := int64(len(k.Dump)/2 - 11)
					if g.Size != want || g.Module != k.Type || g.EncVer == nil {
						t.Errorf("key %q: size %d module %q, want %d bytes of %s", k.Key, g.Size, g.Module, want, k.Type)
					}
				}
			}
			if !mapsEqual(r.Types, types) {
				t.Errorf("types %v, want %v", r.Types, types)
			}
			var ver string
			for _, a := range r.Aux {
				if a.Key == "redis-ver" {
					ver = a.Value
				}
			}
			if ver != "7.0.15" {
				t.Errorf("redis-ver %q, want 7.0.15 (aux %v)", ver, r.Aux)
			}

			o, e, code := invoke([]string{"rdb", "info", recordedPath(name, "rdb")}, "")
			if code != 0 || e != "" {
				t.Fatalf("text: exit %d: %s", code, e)
			}
			lines := strings.Split(o, "\n")
			for _, k := range keys {
				found := false
				for _, l := range lines {
					f := strings.Fields(l)
					if len(f) > 2 && f[len(f)-1] == k.Key && strings.Contains(l, " "+wantLabel[k.Type]+" ") {
						found = true
					}
				}
				if !found {
					t.Errorf("text: no line lists %q as %s:\n%s", k.Key, wantLabel[k.Type], o)
				}
			}
			if !strings.Contains(o, "RDB version 10, redis-ver 7.0.15") || !strings.Contains(o, fmt.Sprintf("%d keys in db 0", len(keys))) {
				t.Errorf("text summary:\n%s", o)
			}
		})
	}
}

func mapsEqual(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestRDBInfoCorrupt: a truncated copy lists the keys whose values lie
// before the cut, in the file's order, then fails (exit 1) with the
// offset of the fault; a copy whose checksum trailer is wrong lists every
// key and fails naming the checksum; a copy with a bad opcode fails at
// its offset.
func TestRDBInfoCorrupt(t *testing.T) {
	t.Chdir(t.TempDir())
	src := recordedPath("redisbloom-8.6.2", "rdb")
	raw, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	full, _, _ := rdbInfoJSON(t, src)
	// Where each key's value ends, from the full listing's sizes: the
	// reader reports keys in file order.
	cut := len(raw) / 2
	must(t, os.WriteFile("trunc.rdb", raw[:cut], 0o644))
	r, e, code := rdbInfoJSON(t, "trunc.rdb")
	if code != 1 || !strings.Contains(e, "trunc.rdb: at byte") || !strings.Contains(e, "unexpected end of input") || r.Error == "" {
		t.Fatalf("truncated: exit %d, stderr %q, error %q", code, e, r.Error)
	}
	if len(r.Keys) == 0 || len(r.Keys) >= len(full.Keys) {
		t.Fatalf("truncated: %d keys listed of %d", len(r.Keys), len(full.Keys))
	}
	for i, k := range r.Keys {
		want := full.Keys[i]
		if k.Key != want.Key || k.Type != want.Type {
			t.Errorf("truncated: key %d is %q %s, want %q %s", i, k.Key, k.Type, want.Key, want.Type)
		}
		if i < len(r.Keys)-1 && k.Size != want.Size {
			t.Errorf("truncated: key %q size %d, want %d", k.Key, k.Size, want.Size)
		}
	}
	o, e, code := invoke([]string{"rdb", "info", "trunc.rdb"}, "")
	if code != 1 || !strings.HasPrefix(e, "bloomlab: trunc.rdb: at byte ") || strings.Count(e, "\n") != 1 || !strings.Contains(o, r.Keys[0].Key) {
		t.Fatalf("truncated, text: exit %d, stderr %q\n%s", code, e, o)
	}

	bad := slices.Clone(raw)
	bad[len(bad)-1] ^= 1
	must(t, os.WriteFile("crc.rdb", bad, 0o644))
	r, e, code = rdbInfoJSON(t, "crc.rdb")
	if code != 1 || !strings.Contains(e, "CRC-64") || len(r.Keys) != len(full.Keys) {
		t.Fatalf("checksum: exit %d, stderr %q, %d keys", code, e, len(r.Keys))
	}

	// The first key's type byte (after the header and AUX fields)
	// replaced by an opcode the format does not have.
	first := bytes.Index(raw, []byte("aof-base"))
	if first < 0 {
		t.Fatal("no aof-base AUX field")
	}
	bad = slices.Clone(raw)
	off := first + len("aof-base") + 2 // the value "0" is an 8-bit integer: 0xC0 0x00
	for bad[off] != 0xFE {             // SELECTDB
		off++
	}
	bad[off] = 0xF0
	must(t, os.WriteFile("op.rdb", bad, 0o644))
	_, e, code = invoke([]string{"rdb", "info", "op.rdb"}, "")
	if code != 1 || !strings.Contains(e, fmt.Sprintf("at byte %d: unknown opcode 0xf0", off+1)) {
		t.Fatalf("bad opcode at %d: exit %d, stderr %q", off, code, e)
	}

	for _, c := range []struct {
		data []byte
		want string
	}{
		{[]byte("REDIS0013"), "RDB version 13 is newer"},
		{[]byte("REDIS0009"), "RDB version 9 is older"},
		{[]byte("hello world, not a file"), "not a Redis RDB file"},
		{nil, "unexpected end of input"},
	} {
		must(t, os.WriteFile("x.rdb", c.data, 0o644))
		_, e, code := invoke([]string{"rdb", "info", "x.rdb"}, "")
		if code != 1 || !strings.Contains(e, c.want) {
			t.Errorf("%q: exit %d, stderr %q, want %q", c.data, code, e, c.want)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// copyModule copies the fields of a module value, to its EOF opcode.
func copyModule(t *testing.T, src *rdb.ModuleValue, dst *rdb.ModuleWriter) {
	t.Helper()
	for {
		op, err := src.Next()
		must(t, err)
		switch op {
		case 0:
			must(t, src.End())
			must(t, dst.End())
			return
		case 1:
			v, err := src.ReadSigned()
			must(t, err)
			dst.Signed(v)
		case 2:
			v, err := src.ReadUnsigned()
			must(t, err)
			dst.Unsigned(v)
		case 3:
			v, err := src.ReadFloat()
			must(t, err)
			dst.Float(v)
		case 4:
			v, err := src.ReadDouble()
			must(t, err)
			dst.Double(v)
		case 5:
			v, err := src.ReadString()
			must(t, err)
			dst.String(v)
		}
	}
}

// recordedValue copies the module value of key name of the 8.6.2 file to
// w under key as.
func recordedValue(t *testing.T, w *rdb.Writer, name, as string) {
	t.Helper()
	f, err := os.Open(recordedPath("redisbloom-8.6.2", "rdb"))
	must(t, err)
	defer f.Close()
	r, err := rdb.NewReader(f, rdb.Limits{})
	must(t, err)
	for {
		e, err := r.Next()
		must(t, err)
		if string(e.Key) == name {
			m, err := w.Module([]byte(as), e.Module.Name, e.Module.EncVer)
			must(t, err)
			copyModule(t, e.Module, m)
			return
		}
	}
}

// rdbFile builds an RDB file: what build writes with a Writer, then the
// raw bytes (values the Writer does not write), the EOF opcode and the
// CRC-64.
func rdbFile(t *testing.T, version int, build func(w *rdb.Writer), raw ...[]byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := rdb.NewWriter(&b, version, true)
	must(t, err)
	build(w)
	must(t, w.Close())
	p := b.Bytes()[:b.Len()-9] // less EOF and CRC
	for _, r := range raw {
		p = append(p, r...)
	}
	p = append(p, 0xFF)
	return binary.LittleEndian.AppendUint64(p, rdb.CRC64(p))
}

// rawKey is a key of type typ with a value of raw bytes.
func rawKey(typ byte, key string, value ...byte) []byte {
	return append(append([]byte{typ, byte(len(key))}, key...), value...)
}

// TestRDBInfoConstructed: a version-12 file with two databases, a key
// that is not printable, an expired key and one that expires later, a
// value of another module, a list and a stream: db 0 by default with the
// other database counted, -db 1, -all-dbs; the key quoted, the expiry in
// RFC 3339 UTC marked expired when past; the list's type named and its
// size counted; a v1 module value, which cannot be passed over, listed
// and then a clear error.
func TestRDBInfoConstructed(t *testing.T) {
	t.Chdir(t.TempDir())
	now = func() time.Time { return time.UnixMilli(1_800_000_000_000) }
	defer func() { now = time.Now }()
	past, future := int64(1_700_000_000_123), int64(1_900_000_000_000)
	build := func(w *rdb.Writer) {
		must(t, w.Aux("redis-ver", "8.2.1"))
		must(t, w.SelectDB(0))
		must(t, w.ResizeDB(5, 2))
		must(t, w.String([]byte("a b\x00\xff"), []byte("v")))
		must(t, w.Expire(past))
		must(t, w.String([]byte("old"), []byte("gone")))
		must(t, w.Expire(future))
		recordedValue(t, w, "ns", "bf")
		m, err := w.Module([]byte("json"), "ReJSON-RL", 3)
		must(t, err)
		m.Unsigned(7)
		m.String([]byte(`{"a":1}`))
		must(t, m.End())
		must(t, w.SelectDB(1))
		must(t, w.String([]byte("one"), []byte("1")))
	}
	// A quicklist (v2) of one listpack node: node count, container kind,
	// the listpack as a string.
	list := rawKey(18, "alist", 1, 2, 3, 'a', 'b', 'c')
	must(t, os.WriteFile("v12.rdb", rdbFile(t, 12, build, []byte{0xFE, 0}, list), 0o644))

	r, e, code := rdbInfoJSON(t, "v12.rdb")
	if code != 0 || e != "" || r.Version != 12 {
		t.Fatalf("exit %d, version %d: %s", code, r.Version, e)
	}
	var names []string
	for _, k := range r.Keys {
		names = append(names, k.Key)
	}
	if want := []string{"a b\x00\uFFFD", "old", "bf", "json", "alist"}; !slices.Equal(names, want) {
		t.Fatalf("keys %q, want %q", names, want)
	}
	if k := r.Keys[0]; k.KeyHex != hex.EncodeToString([]byte("a b\x00\xff")) || k.Type != "string" || k.Size != 1 {
		t.Errorf("binary key: %+v", k)
	}
	if k := r.Keys[1]; k.Expire == nil || *k.Expire != "2023-11-14T22:13:20.123Z" || !k.Expired {
		t.Errorf("expired key: %+v", k)
	}
	if k := r.Keys[2]; k.Expire == nil || *k.Expire != "2030-03-17T17:46:40.000Z" || k.Expired || k.Type != "MBbloom-- (BF)" {
		t.Errorf("key expiring later: %+v", k)
	}
	if k := r.Keys[3]; k.Type != "ReJSON-RL" || k.Module != "ReJSON-RL" || *k.EncVer != 3 || k.Size != 9+2+1+8+1 {
		t.Errorf("other module: %+v", k)
	}
	if k := r.Keys[4]; k.Type != "list (quicklist v2)" || k.Size != 6 {
		t.Errorf("list: %+v", k)
	}
	if r.Expired != 1 || r.Other["1"] != 1 || r.Count != 5 {
		t.Errorf("expired %d, other dbs %v, count %d", r.Expired, r.Other, r.Count)
	}

	o, e, code := invoke([]string{"rdb", "info", "v12.rdb"}, "")
	for _, want := range []string{`"a b\x00\xff"`, "2023-11-14T22:13:20.123Z expired", "RDB version 12, redis-ver 8.2.1", "1 of them expired", "1 keys in other databases (db 1: 1)"} {
		if !strings.Contains(o, want) {
			t.Errorf("text lacks %q:\n%s", want, o)
		}
	}
	if code != 0 || e != "" {
		t.Errorf("text: exit %d: %s", code, e)
	}
	r, _, code = rdbInfoJSON(t, "-db", "1", "v12.rdb")
	if code != 0 || len(r.Keys) != 1 || r.Keys[0].Key != "one" || r.Keys[0].DB != 1 || r.Other["0"] != 5 {
		t.Errorf("-db 1: exit %d, %+v", code, r)
	}
	r, _, code = rdbInfoJSON(t, "-all-dbs", "v12.rdb")
	if code != 0 || len(r.Keys) != 6 || len(r.Other) != 0 {
		t.Errorf("-all-dbs: exit %d, %+v", code, r)
	}
	// Standard input, named as the other commands name it; the JSON
	// indented alike before and after the keys.
	v12, err := os.ReadFile("v12.rdb")
	must(t, err)
	o, _, code = invoke([]string{"rdb", "info", "-json", "-"}, string(v12))
	if code != 0 || !strings.HasPrefix(o, "{\n  \"file\": \"<stdin>\",\n") || !strings.Contains(o, "\n  ],\n  \"aux\": [\n    {\n") || !strings.HasSuffix(o, "\n}\n") {
		t.Errorf("standard input: exit %d\n%s", code, o)
	}
	if _, e, code := invoke([]string{"rdb", "info", "-all-dbs", "-db", "1", "v12.rdb"}, ""); code != 2 {
		t.Errorf("-all-dbs with -db: exit %d, %s", code, e)
	}

	// A v1 module value cannot be passed over: the keys before it are
	// listed, it too, then an error naming it.
	stream := rawKey(6, "events", 0)
	must(t, os.WriteFile("stream.rdb", rdbFile(t, 12, build, []byte{0xFE, 0}, stream, list), 0o644))
	o, e, code = invoke([]string{"rdb", "info", "stream.rdb"}, "")
	if code != 1 || !strings.Contains(e, `key "events" (type module (v1)) cannot be skipped`) || !strings.Contains(e, "not listed") ||
		!strings.Contains(o, "json") || !strings.Contains(o, "events") || strings.Contains(o, "alist") {
		t.Errorf("stream: exit %d, stderr %q\n%s", code, e, o)
	}
}

// serverDir runs a server on a new directory, gives it the commands, and
// stops it.
func serverDir(t *testing.T, cmds [][]any) string {
	t.Helper()
	dir := t.TempDir()
	s, err := server.Run(server.Config{Dir: dir})
	must(t, err)
	c := client(s.Addr().String())
	for _, cmd := range cmds {
		if err := c.Do(context.Background(), cmd...).Err(); err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
	}
	c.Close()
	must(t, s.Close())
	return dir
}

// TestRDBWrite: a directory a server wrote BF, CF, CMS, TOPK and TDIGEST
// keys to is written as an RDB file (version 10 by default, 12 on
// request, to a file or standard output) that rdb info lists with every
// key and its type, and from which import reads the BF, CF and CMS keys
// back answering as the server did; a blocked-layout BF key is refused by
// name unless -skip-unsupported, which counts it on stderr; a running
// server's directory is refused naming the lock, and nothing is written.
func TestRDBWrite(t *testing.T) {
	t.Chdir(t.TempDir())
	dir := serverDir(t, [][]any{
		{"BF.RESERVE", "bf", 0.01, 100},
		{"BF.MADD", "bf", "a", "b", "c"},
		{"CF.RESERVE", "cf", 64},
		{"CF.ADD", "cf", "x"},
		{"CMS.INITBYDIM", "cms", 50, 4},
		{"CMS.INCRBY", "cms", "p", 5, "q", 2},
		{"TOPK.RESERVE", "tk", 3},
		{"TOPK.ADD", "tk", "h", "h", "i"},
		{"TDIGEST.CREATE", "td"},
		{"TDIGEST.ADD", "td", 1, 2, 3},
		{"SET", "s", "v"},
	})
	want := map[string]string{"bf": "MBbloom-- (BF)", "cf": "MBbloomCF (CF)", "cms": "CMSk-TYPE (CMS)", "tk": "TopK-TYPE (TOPK)", "td": "TDIS-TYPE (TDIGEST)", "s": "string"}
	for _, version := range []string{"", "12"} {
		args := []string{"rdb", "write", "-dir", dir, "-o", "dump.rdb"}
		if version != "" {
			args = append(args, "-rdb-version", version)
		}
		_, e, code := invoke(args, "")
		if code != 0 || !strings.Contains(e, fmt.Sprintf("%d keys written to dump.rdb", len(want))) {
			t.Fatalf("%v: exit %d: %s", args, code, e)
		}
		r, e, code := rdbInfoJSON(t, "dump.rdb")
		if code != 0 || r.Version != map[string]int{"": 10, "12": 12}[version] || len(r.Keys) != len(want) {
			t.Fatalf("rdb info: exit %d, version %d, %d keys: %s", code, r.Version, len(r.Keys), e)
		}
		for _, k := range r.Keys {
			if want[k.Key] != k.Type {
				t.Errorf("key %q: type %s, want %s", k.Key, k.Type, want[k.Key])
			}
		}
		for key, items := range map[string][]string{"bf": {"a", "b", "c"}, "cf": {"x"}, "cms": {"p", "q"}} {
			if e, code := importKey("dump.rdb", key, key+".blf"); code != 0 {
				t.Fatalf("import %s: exit %d: %s", key, code, e)
			}
			f, err := loadFile(key + ".blf")
			must(t, err)
			for _, it := range items {
				if !f.Contains([]byte(it)) {
					t.Errorf("%s: %s absent after the round trip", key, it)
				}
			}
		}
		cms, err := loadFile("cms.blf")
		must(t, err)
		if c := cms.(*countmin.Sketch); c.Estimate([]byte("p")) != 5 || c.Estimate([]byte("q")) != 2 {
			t.Errorf("cms: p %d q %d, want 5 2", c.Estimate([]byte("p")), c.Estimate([]byte("q")))
		}
	}
	o, e, code := invoke([]string{"rdb", "write", "-dir", dir, "-o", "-", "-dialect", "2.4", "-no-compress"}, "")
	if code != 0 || !strings.HasPrefix(o, "REDIS0010") || !strings.Contains(e, "written to standard output") {
		t.Fatalf("-o -: exit %d, %q…: %s", code, o[:min(len(o), 9)], e)
	}

	blocked := serverDir(t, [][]any{
		{"BF.RESERVE", "fast", 0.01, 1000, "LAYOUT", "BLOCKED"},
		{"BF.ADD", "fast", "a"},
		{"BF.ADD", "plain", "a"},
	})
	_, e, code = invoke([]string{"rdb", "write", "-dir", blocked, "-o", "b.rdb"}, "")
	if code != 1 || !strings.Contains(e, "fast") {
		t.Errorf("blocked key: exit %d: %s", code, e)
	}
	if _, err := os.Stat("b.rdb"); err == nil {
		t.Errorf("b.rdb written after a refusal")
	}
	_, e, code = invoke([]string{"rdb", "write", "-skip-unsupported", "-dir", blocked, "-o", "b.rdb"}, "")
	if code != 0 || !strings.Contains(e, "1 keys written") || !strings.Contains(e, "skipped 1 keys") {
		t.Errorf("-skip-unsupported: exit %d: %s", code, e)
	}

	s, err := server.Run(server.Config{Dir: dir})
	must(t, err)
	defer s.Close()
	_, e, code = invoke([]string{"rdb", "write", "-dir", dir, "-o", "running.rdb"}, "")
	if code != 1 || !strings.Contains(e, "bloomlab.lock") {
		t.Errorf("running server: exit %d: %s", code, e)
	}
	if _, err := os.Stat("running.rdb"); err == nil {
		t.Errorf("running.rdb written")
	}
	for _, args := range [][]string{
		{"rdb", "write", "-o", "x.rdb"},
		{"rdb", "write", "-dir", dir},
		{"rdb", "write", "-dir", dir, "-o", "x.rdb", "-rdb-version", "9"},
		{"rdb", "write", "-dir", dir, "-o", "x.rdb", "-dialect", "3"},
		{"rdb", "frob"},
		{"rdb"},
	} {
		if _, e, code := invoke(args, ""); code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", args, code, e)
		}
	}
}

// TestRDBGarbageNeverPanics: copies of a recorded file with random bytes
// flipped or cut short make rdb info and import -format rdb exit 0 or 1
// (a flip in a filter's bits is caught by the checksum), never panic, and
// rdb info -json prints a valid JSON document whatever the damage.
func TestRDBGarbageNeverPanics(t *testing.T) {
	t.Chdir(t.TempDir())
	raw, err := os.ReadFile(recordedPath("redisbloom-8.6.2", "rdb"))
	must(t, err)
	rng := rand.New(rand.NewPCG(25, 1))
	for i := range 120 {
		p := slices.Clone(raw)
		if i%4 == 0 {
			p = p[:rng.IntN(len(p))]
		} else {
			for range 1 + rng.IntN(4) {
				// Most keys are small and lie before or after "big":
				// aim at the whole file, not only its bits.
				p[rng.IntN(len(p))] ^= byte(1 + rng.IntN(255))
			}
		}
		must(t, os.WriteFile("g.rdb", p, 0o644))
		o, e, code := invoke([]string{"rdb", "info", "-json", "-all-dbs", "g.rdb"}, "")
		if code > 1 || strings.Contains(e, "panic") || !json.Valid([]byte(o)) {
			t.Fatalf("mutation %d: rdb info: exit %d, stderr %q, valid JSON %v", i, code, e, json.Valid([]byte(o)))
		}
		if code == 1 && (strings.Count(e, "\n") != 1 || !strings.HasPrefix(e, "bloomlab: g.rdb: ")) {
			t.Fatalf("mutation %d: rdb info: stderr %q", i, e)
		}
		for _, key := range []string{"small", "cf", "cm"} {
			e, code := importKey("g.rdb", key, "g.blf")
			if code > 1 || strings.Contains(e, "panic") {
				t.Fatalf("mutation %d: import %s: exit %d, stderr %q", i, key, code, e)
			}
		}
	}
}

// TestRDBStringBombBounded: rdb info lists, and import -format rdb passes
// over, a 256 MiB string LZF-compressed to 3 MiB without holding it
// (each allocates under 64 MiB; before, each decompressed it whole), and
// rdb info gives its length.
func TestRDBStringBombBounded(t *testing.T) {
	t.Chdir(t.TempDir())
	must(t, os.WriteFile("bomb.rdb", rdbFile(t, 10, func(w *rdb.Writer) {
		must(t, w.SelectDB(0))
		must(t, w.String([]byte("bomb"), bytes.Repeat([]byte{'z'}, 256<<20)))
	}), 0o644))
	if st, err := os.Stat("bomb.rdb"); err != nil || st.Size() > 4<<20 {
		t.Fatalf("the file: %v %v", st.Size(), err)
	}
	var r infoJSON
	var code int
	alloc := allocatedBy(func() { r, _, code = rdbInfoJSON(t, "bomb.rdb") })
	if code != 0 || len(r.Keys) != 1 || r.Keys[0].Size != 256<<20 {
		t.Fatalf("rdb info: exit %d, %+v", code, r.Keys)
	}
	if alloc > 64<<20 {
		t.Fatalf("rdb info allocated %d bytes", alloc)
	}
	var e string
	alloc = allocatedBy(func() {
		_, e, code = invoke([]string{"import", "-format", "rdb", "-key", "x", "bomb.rdb", "-o", "x.blf"}, "")
	})
	if code == 0 || !strings.Contains(e, "no key x") {
		t.Fatalf("import of a missing key: exit %d: %s", code, e)
	}
	if alloc > 64<<20 {
		t.Fatalf("import allocated %d bytes", alloc)
	}
}

// allocatedBy returns the bytes f allocates.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestRDBWriteNotIntoDir: rdb write refuses an output file in the
// server's directory, which it promises not to write into (a usage
// error, exit 2), and leaves the directory as it was; before, -o
// DIR/bloomlab.snap replaced the snapshot with the RDB file, and the
// dataset was gone (the server then refused to start).
func TestRDBWriteNotIntoDir(t *testing.T) {
	t.Chdir(t.TempDir())
	dir := serverDir(t, [][]any{{"SET", "s", "v"}, {"BF.ADD", "bf", "x"}})
	state := func() string {
		var b strings.Builder
		ents, err := os.ReadDir(dir)
		must(t, err)
		for _, d := range ents {
			p, err := os.ReadFile(filepath.Join(dir, d.Name()))
			must(t, err)
			fmt.Fprintf(&b, "%s %x\n", d.Name(), sha256.Sum256(p))
		}
		return b.String()
	}
	before := state()
	for _, out := range []string{filepath.Join(dir, "bloomlab.snap"), filepath.Join(dir, "dump.rdb"), filepath.Join(dir, ".", "sub", "..", "x.rdb")} {
		_, e, code := invoke([]string{"rdb", "write", "-dir", dir, "-o", out}, "")
		if code != 2 || !strings.Contains(e, "writes nothing into") {
			t.Errorf("-o %s: exit %d: %s", out, code, e)
		}
		if after := state(); after != before {
			t.Fatalf("-o %s changed the directory:\n%s\nwas\n%s", out, after, before)
		}
	}
	if _, e, code := invoke([]string{"rdb", "write", "-dir", dir, "-o", "dump.rdb"}, ""); code != 0 {
		t.Fatalf("-o dump.rdb elsewhere: exit %d: %s", code, e)
	}
}
