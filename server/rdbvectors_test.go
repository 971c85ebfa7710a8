package server

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bloomlab/bloomlab/internal/redistest"
	"github.com/bloomlab/bloomlab/rdb"
)

// The recorded RDB files of RedisBloom 8.6.2 and 2.4.23 on Redis 7.0.15
// (rdb/testdata, from the project's recorded vectors: the
// database after the 8.6.2 RESP2 transcripts, saved with SAVE), each with
// its keys' DUMP payloads and probe transcripts of read commands, recorded
// from the real module after it loaded the file. Every probe must answer
// the recorded replies (doubles by value, everything else exactly) on a
// server that loaded the file (-load-rdb), RESTOREd the payloads, or
// loaded a file WriteRDB wrote.

type rdbVectorKey struct {
	Key   string `json:"key"`
	Type  string `json:"type"`
	Dump  string `json:"dump"`
	Probe []struct {
		Args  []string        `json:"args"`
		Reply json.RawMessage `json:"reply"`
	} `json:"probe"`
}

type rdbVectors struct {
	rdb     string // the RDB file's path
	dialect Dialect
	keys    []rdbVectorKey
}

// rdbRecorded returns both recorded files: 8.6.2's under Dialect8,
// 2.4.23's under Dialect24.
func rdbRecorded(t testing.TB) []rdbVectors {
	t.Helper()
	var out []rdbVectors
	for _, v := range []struct {
		name string
		d    Dialect
	}{{"redisbloom-8.6.2-rdb", Dialect8}, {"redisbloom-2.4.23-rdb", Dialect24}} {
		base := filepath.Join("..", "rdb", "testdata", v.name)
		f, err := os.Open(base + ".json.gz")
		if err != nil {
			t.Fatal(err)
		}
		z, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		var rec struct {
			Keys []rdbVectorKey `json:"keys"`
		}
		err = json.NewDecoder(z).Decode(&rec)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rdbVectors{rdb: base + ".rdb", dialect: v.d, keys: rec.Keys})
	}
	return out
}

// probeKey replays k's probe on c and returns its first mismatch ("" if
// every reply is the recorded one).
func probeKey(t testing.TB, c *rawConn, k rdbVectorKey) string {
	t.Helper()
	for i, cmd := range k.Probe {
		var want any
		if err := json.Unmarshal(cmd.Reply, &want); err != nil {
			t.Fatal(err)
		}
		c.send(cmd.Args...)
		got, _ := c.read()
		if m := matchReply(got, want, 2); m != "" {
			return fmt.Sprintf("key %q, probe command %d %s: %s", k.Key, i, short(cmd.Args), m)
		}
	}
	return ""
}

// probeAll replays every key's probe, failing the test for each key that
// does not answer as recorded.
func probeAll(t *testing.T, c *rawConn, keys []rdbVectorKey) {
	t.Helper()
	bad := 0
	for _, k := range keys {
		if m := probeKey(t, c, k); m != "" {
			t.Error(m)
			bad++
		}
	}
	if bad == 0 {
		t.Logf("%d keys answer their probes", len(keys))
	}
}

// TestRDBRecordedLoad: a server that loaded a recorded file (-load-rdb,
// in the file's dialect) answers every probe, and so does one restarted
// on its directory (the first snapshot).
func TestRDBRecordedLoad(t *testing.T) {
	for _, v := range rdbRecorded(t) {
		t.Run(v.dialect.String(), func(t *testing.T) {
			dir := t.TempDir()
			s := start(t, Config{Dir: dir, LoadRDB: v.rdb, Dialect: v.dialect})
			c := dial(t, s)
			if got := c.do("DBSIZE"); got != fmt.Sprintf(":%d", len(v.keys)) {
				t.Fatalf("DBSIZE %s, the file holds %d keys", got, len(v.keys))
			}
			probeAll(t, c, v.keys)
			s.Close()
			probeAll(t, dial(t, start(t, Config{Dir: dir, Dialect: v.dialect})), v.keys)
		})
	}
}

// TestRDBRecordedRestore: every recorded DUMP payload RESTOREs into a
// fresh server and answers its probe; DUMP of the restored key gives a
// payload that RESTOREs (into another server) to the same answers, and
// is the recorded payload byte for byte but for TOPK's (RedisBloom writes
// its heap items' pointers: bytes that differ by design).
func TestRDBRecordedRestore(t *testing.T) {
	for _, v := range rdbRecorded(t) {
		t.Run(v.dialect.String(), func(t *testing.T) {
			c := dial(t, start(t, Config{Dialect: v.dialect}))
			c2 := dial(t, start(t, Config{Dialect: v.dialect}))
			same, differ := 0, []string{}
			for _, k := range v.keys {
				p, err := hex.DecodeString(k.Dump)
				if err != nil {
					t.Fatal(err)
				}
				if got := c.do("RESTORE", k.Key, "0", string(p)); got != "+OK" {
					t.Errorf("RESTORE %s (%s): %s", k.Key, k.Type, got)
					continue
				}
				if m := probeKey(t, c, k); m != "" {
					t.Errorf("restored: %s", m)
				}
				mine := dumpOf(t, c, k.Key)
				if got := c2.do("RESTORE", k.Key, "0", mine); got != "+OK" {
					t.Errorf("RESTORE of our DUMP of %s (%s): %s", k.Key, k.Type, got)
					continue
				}
				if m := probeKey(t, c2, k); m != "" {
					t.Errorf("restored from our DUMP: %s", m)
				}
				switch {
				case mine == string(p):
					same++
				case k.Type == "TopK-TYPE":
					differ = append(differ, k.Key)
				default:
					differ = append(differ, k.Key)
					t.Errorf("DUMP %s (%s): %d bytes differ from Redis's %d (first difference at byte %d)", k.Key, k.Type, len(mine), len(p), firstDiff([]byte(mine), p))
				}
			}
			t.Logf("%d of %d DUMP payloads are Redis's bytes; differing: %v", same, len(v.keys), differ)
		})
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// rdbKeyOrder returns a file's AUX field names and its keys in order.
func rdbKeyOrder(t *testing.T, p []byte) (aux, keys []string) {
	t.Helper()
	r, err := rdb.NewReader(bytes.NewReader(p), rdb.Limits{InputSize: int64(len(p))})
	if err != nil {
		t.Fatal(err)
	}
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, string(e.Key))
		if e.Module != nil {
			if err := e.Module.Skip(); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, a := range r.Aux() {
		aux = append(aux, a.Key+"="+a.Value)
	}
	return aux, keys
}

// writtenRDB loads a recorded file into a directory, stops the server and
// returns WriteRDB's file of the directory.
func writtenRDB(t *testing.T, v rdbVectors) []byte {
	t.Helper()
	dir := t.TempDir()
	s, err := New(Config{Dir: dir, LoadRDB: v.rdb, Dialect: v.dialect})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	var out bytes.Buffer
	st, err := WriteRDB(dir, &out, RDBWriteOptions{Dialect: v.dialect})
	if err != nil {
		t.Fatal(err)
	}
	if st.Keys != int64(len(v.keys)) || len(st.Skipped) != 0 || st.Expired != 0 {
		t.Fatalf("WriteRDB: %+v", st)
	}
	return out.Bytes()
}

// TestRDBRecordedWrite: WriteRDB of a directory that loaded a recorded
// file writes a file that a fresh server loads and that answers every
// probe; it logs how the file differs from Redis's in its AUX fields and
// its order of keys.
func TestRDBRecordedWrite(t *testing.T) {
	for _, v := range rdbRecorded(t) {
		t.Run(v.dialect.String(), func(t *testing.T) {
			p := writtenRDB(t, v)
			path := filepath.Join(t.TempDir(), "written.rdb")
			if err := os.WriteFile(path, p, 0o644); err != nil {
				t.Fatal(err)
			}
			probeAll(t, dial(t, start(t, Config{LoadRDB: path, Dialect: v.dialect})), v.keys)
			orig, err := os.ReadFile(v.rdb)
			if err != nil {
				t.Fatal(err)
			}
			// Each value as Redis wrote it (its DUMP payload's value,
			// after the type byte and the key) is in the file, but TOPK's.
			same := 0
			for _, k := range v.keys {
				d, _ := hex.DecodeString(k.Dump)
				val, _, err := rdb.SplitDump(d)
				if err != nil || len(k.Key) > 63 {
					t.Fatalf("%s: %v", k.Key, err)
				}
				rec := append([]byte{val[0], byte(len(k.Key))}, k.Key...)
				rec = append(rec, val[1:]...)
				switch {
				case bytes.Contains(p, rec):
					same++
				case k.Type != "TopK-TYPE":
					t.Errorf("key %s (%s): the value written is not Redis's", k.Key, k.Type)
				}
			}
			t.Logf("%d of %d values are Redis's bytes (TOPK's heap pointers differ by design)", same, len(v.keys))
			oa, ok := rdbKeyOrder(t, orig)
			wa, wk := rdbKeyOrder(t, p)
			t.Logf("AUX fields: Redis's %v, ours %v", oa, wa)
			t.Logf("keys: Redis's order %v; ours (sorted) %v; same order: %v", ok, wk, strings.Join(ok, " ") == strings.Join(wk, " "))
		})
	}
}

// TestRDBRedisBloomLoads runs when BLOOMLAB_REDISBLOOM_SO names a
// RedisBloom module (8.6.2, built by the build-redisbloom script for
// Debian's redis-server): redis-server with the module loads the file
// WriteRDB wrote of a directory that loaded the 8.6.2 recorded file, and
// every key answers its recorded probe.
func TestRDBRedisBloomLoads(t *testing.T) {
	so := os.Getenv("BLOOMLAB_REDISBLOOM_SO")
	if so == "" {
		t.Skip("BLOOMLAB_REDISBLOOM_SO names no RedisBloom module")
	}
	v := rdbRecorded(t)[0]
	p := writtenRDB(t, v)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "dump.rdb"), p, 0o644); err != nil {
		t.Fatal(err)
	}
	r := redistest.Start(t, redistest.Options{Extra: []string{"--dir", dir, "--dbfilename", "dump.rdb", "--loadmodule", so}})
	c := dialAddr(t, r.Addr)
	if got := c.do("DBSIZE"); got != fmt.Sprintf(":%d", len(v.keys)) {
		t.Fatalf("redis-server loaded %s keys of %d: %s", got, len(v.keys), r.LogTail())
	}
	probeAll(t, c, v.keys)
}

// TestRDBRecordedRestorePersists: every recorded payload RESTOREd on a
// persisting server answers its probe after a restart from the log alone
// (the server stopped without a snapshot, as after a kill -9), then after
// one from a snapshot.
func TestRDBRecordedRestorePersists(t *testing.T) {
	v := rdbRecorded(t)[0]
	dir := t.TempDir()
	cfg := Config{Dir: dir, AppendFsync: Always, Dialect: v.dialect}
	s, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, s)
	for _, k := range v.keys {
		p, _ := hex.DecodeString(k.Dump)
		if got := c.do("RESTORE", k.Key, "0", string(p)); got != "+OK" {
			t.Fatalf("RESTORE %s: %s", k.Key, got)
		}
	}
	s.aof.close()
	s.aof = nil
	s.persist = nil
	s.Close()
	s = start(t, cfg)
	probeAll(t, dial(t, s), v.keys)
	s.Close()
	probeAll(t, dial(t, start(t, cfg)), v.keys)
}
