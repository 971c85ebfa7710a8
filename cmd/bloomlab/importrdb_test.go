package main

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bloomlab/bloomlab/countmin"
	"github.com/bloomlab/bloomlab/cuckoo"
	"github.com/bloomlab/bloomlab/internal/blrd"
	"github.com/bloomlab/bloomlab/rdb"
	"github.com/bloomlab/bloomlab/scalable"
)

// importKey runs import -format rdb of key from file into out.
func importKey(file, key, out string, extra ...string) (string, int) {
	_, e, code := invoke(append([]string{"import", "-format", "rdb", "-key", key, "-o", out, file}, extra...), "")
	return e, code
}

// TestImportRDBRecorded: every BF, CF and CMS key of both recorded files
// imports into a file of the kind and profile its type maps to, and that
// file answers every membership and count probe of the transcript as the
// real module did: every item it reported present is present (no false
// negative), and every never-added item it reported absent, or present by
// a false positive, is answered the same; CF.COUNT and CMS.QUERY give the
// same counts. bloomlab query agrees on the present items.
func TestImportRDBRecorded(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, name := range recordedRDB {
		for _, k := range loadRecorded(t, name) {
			kindName := map[string]string{"MBbloom--": "scalable", "MBbloomCF": "cuckoo", "CMSk-TYPE": "countmin"}[k.Type]
			if kindName == "" {
				continue
			}
			t.Run(name+"/"+k.Key, func(t *testing.T) {
				out := k.Key + ".blf"
				if e, code := importKey(recordedPath(name, "rdb"), k.Key, out); code != 0 {
					t.Fatalf("exit %d: %s", code, e)
				}
				f, err := loadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				if f.Kind() != kindName {
					t.Fatalf("kind %s, want %s", f.Kind(), kindName)
				}
				switch x := f.(type) {
				case *scalable.Filter:
					if x.Config().Profile != scalable.RedisBloom {
						t.Errorf("profile %v", x.Config().Profile)
					}
				case *cuckoo.Filter:
					if x.Info().Profile != cuckoo.RedisBloom {
						t.Errorf("profile %v", x.Info().Profile)
					}
				case *countmin.Sketch:
					if x.Config().Profile != countmin.RedisBloom {
						t.Errorf("profile %v", x.Config().Profile)
					}
				}
				var present []string
				checked := 0
				for _, p := range k.Probe {
					switch p.Args[0] {
					case "BF.MEXISTS", "CF.MEXISTS", "CMS.QUERY":
						reply := p.Reply.([]any)
						for i, item := range p.Args[2:] {
							want := reply[i].(float64)
							var got float64
							if p.Args[0] == "CMS.QUERY" {
								got = float64(f.(*countmin.Sketch).Estimate([]byte(item)))
							} else if f.Contains([]byte(item)) {
								got = 1
							}
							if got != want {
								t.Errorf("%s %s: %v, RedisBloom answered %v", p.Args[0], item, got, want)
							}
							if want > 0 {
								present = append(present, item)
							}
							checked++
						}
					case "CF.COUNT":
						if got := f.(*cuckoo.Filter).Count([]byte(p.Args[2])); float64(got) != p.Reply.(float64) {
							t.Errorf("CF.COUNT %s: %d, RedisBloom answered %v", p.Args[2], got, p.Reply)
						}
						checked++
					}
				}
				if checked == 0 || len(present) == 0 && k.Key != "cp" && k.Key != "dst" {
					t.Fatalf("%d probes checked, %d items present", checked, len(present))
				}
				if len(present) > 0 {
					must(t, os.WriteFile("present.txt", []byte(strings.Join(present, "\n")+"\n"), 0o644))
					// query -v prints the keys certainly absent: none, exit 1.
					if o, e, code := invoke([]string{"query", "-v", out, "present.txt"}, ""); code != 1 || o != "" {
						t.Errorf("query -v: exit %d, %q %s", code, o, e)
					}
				}
			})
		}
	}
}

// TestImportRDBRefusals: TOPK and TDIGEST keys are refused with a pointer
// to serve -load-rdb, a string key by its type, a missing key by its name
// and database (and where it is when another database holds it), a
// mismatched -kind, an expired key, a key of another type before the key
// unless -skip-unsupported (which prints the count passed over), a value
// that cannot be passed over before the key; -key without -format rdb
// and -format rdb without -key are usage errors; nothing is written.
func TestImportRDBRefusals(t *testing.T) {
	t.Chdir(t.TempDir())
	file := recordedPath("redisbloom-8.6.2", "rdb")
	now = func() time.Time { return time.UnixMilli(1_800_000_000_000) }
	defer func() { now = time.Now }()
	build := func(w *rdb.Writer) {
		must(t, w.Expire(1_700_000_000_000))
		recordedValue(t, w, "ns", "expired")
		m, err := w.Module([]byte("json"), "ReJSON-RL", 3)
		must(t, err)
		m.Unsigned(7)
		must(t, m.End())
		recordedValue(t, w, "tk-a", "top")
		must(t, w.SelectDB(1))
		recordedValue(t, w, "ns", "elsewhere")
		must(t, w.SelectDB(0))
	}
	list := rawKey(18, "alist", 1, 2, 3, 'a', 'b', 'c')
	late := rawKey(0, "late", 1, 'x')
	must(t, os.WriteFile("mixed.rdb", rdbFile(t, 11, build, list, late), 0o644))
	must(t, os.WriteFile("stream.rdb", rdbFile(t, 11, build, rawKey(6, "events", 0), late), 0o644))
	for _, c := range []struct {
		name, file, key string
		extra           []string
		code            int
		want            []string
	}{
		{"topk", file, "tk-a", nil, 1, []string{"key tk-a (db 0) is a TopK-TYPE (TOPK) key, which is not a filter", "bloomlab serve -load-rdb"}},
		{"tdigest", file, "td-g", nil, 1, []string{"key td-g (db 0) is a TDIS-TYPE (TDIGEST) key", "bloomlab serve -load-rdb"}},
		{"string", file, "str", nil, 1, []string{"key str (db 0) is a string, not a BF, CF or CMS key"}},
		{"missing", file, "nope", nil, 1, []string{"no key nope in db 0"}},
		{"missing db", file, "small", []string{"-db", "2"}, 1, []string{"no key small in db 2 (there is one in db 0: give -db 0)"}},
		{"kind", file, "cf", []string{"-kind", "scalable"}, 2, []string{"key cf is a MBbloomCF (CF), which imports as -kind cuckoo, not scalable"}},
		{"expired", "mixed.rdb", "expired", nil, 1, []string{"key expired (db 0) expired at 2023-11-14T22:13:20Z", "Redis drops it"}},
		{"other module before", "mixed.rdb", "top", nil, 1, []string{"key json (db 0), before top, is a ReJSON-RL, which bloomlab does not load; -skip-unsupported"}},
		{"skip", "mixed.rdb", "late", []string{"-skip-unsupported"}, 1, []string{"passed over 2 keys", "key late (db 0) is a string"}},
		{"other db", "mixed.rdb", "elsewhere", []string{"-skip-unsupported"}, 1, []string{"passed over 2 keys", "no key elsewhere in db 0 (there is one in db 1: give -db 1)"}},
		{"stream before", "stream.rdb", "late", []string{"-skip-unsupported"}, 1, []string{`key "events" (type module (v1)) cannot be skipped`, "late was not reached"}},
		{"no key", file, "", nil, 2, []string{"-format rdb needs -key KEY"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, code := importKey(c.file, c.key, "out.blf", c.extra...)
			if code != c.code {
				t.Errorf("exit %d, want %d: %s", code, c.code, e)
			}
			for _, w := range c.want {
				if !strings.Contains(e, w) {
					t.Errorf("stderr %q lacks %q", e, w)
				}
			}
			if _, err := os.Stat("out.blf"); err == nil {
				t.Errorf("out.blf written")
			}
		})
	}
	if _, e, code := invoke([]string{"import", "-format", "redisbloom", "-key", "k", "-o", "x.blf", "x.rbd"}, ""); code != 2 || !strings.Contains(e, "-key goes with -format rdb") {
		t.Errorf("-key without -format rdb: exit %d: %s", code, e)
	}
}

// TestImportRDBChecksum: the file is read to its end before the output
// is written, so a file whose checksum is wrong, or that is cut after the
// key, writes nothing, although the key's own bytes are intact; a key
// that cannot be passed over after the key leaves the checksum unverified,
// which a warning says.
func TestImportRDBChecksum(t *testing.T) {
	t.Chdir(t.TempDir())
	raw, err := os.ReadFile(recordedPath("redisbloom-8.6.2", "rdb"))
	must(t, err)
	full, _, _ := rdbInfoJSON(t, recordedPath("redisbloom-8.6.2", "rdb"))
	first := full.Keys[0].Key
	bad := slices.Clone(raw)
	bad[len(bad)-1] ^= 1
	must(t, os.WriteFile("crc.rdb", bad, 0o644))
	must(t, os.WriteFile("cut.rdb", raw[:len(raw)-100], 0o644))
	for _, f := range []string{"crc.rdb", "cut.rdb"} {
		e, code := importKey(f, first, "out.blf")
		if code != 1 || !strings.Contains(e, f+": ") {
			t.Errorf("%s: exit %d: %s", f, code, e)
		}
		if _, err := os.Stat("out.blf"); err == nil {
			t.Errorf("%s: out.blf written", f)
		}
	}
	build := func(w *rdb.Writer) { recordedValue(t, w, "small", "bf") }
	must(t, os.WriteFile("stream.rdb", rdbFile(t, 10, build, rawKey(6, "events", 0)), 0o644))
	e, code := importKey("stream.rdb", "bf", "out.blf")
	if code != 0 || !strings.Contains(e, "checksum is not verified") {
		t.Errorf("stream after the key: exit %d: %s", code, e)
	}
}

// TestImportRDBSameAsScanDump: a BF or CF key imported from the RDB file
// is the same bloomlab file, byte for byte, as the key's BF.SCANDUMP or
// CF.SCANDUMP chunks (recorded from the same server) imported with
// -format redisbloom: the two ways out of Redis agree.
func TestImportRDBSameAsScanDump(t *testing.T) {
	t.Chdir(t.TempDir())
	compared := 0
	for _, name := range recordedRDB {
		for _, k := range loadRecorded(t, name) {
			if k.Type != "MBbloom--" && k.Type != "MBbloomCF" {
				continue
			}
			compared++
			var b bytes.Buffer
			w := blrd.NewWriter(&b)
			for _, p := range k.Probe {
				if !strings.HasSuffix(p.Args[0], ".SCANDUMP") {
					continue
				}
				r := p.Reply.([]any)
				iter := int64(r[0].(float64))
				if iter == 0 {
					continue
				}
				data, _ := r[1].(map[string]any)
				h, err := hex.DecodeString(data["hex"].(string))
				must(t, err)
				w.Record(iter, h)
			}
			_, err := w.Close()
			must(t, err)
			must(t, os.WriteFile(k.Key+".rbd", b.Bytes(), 0o644))
			if _, e, code := invoke([]string{"import", "-format", "redisbloom", "-o", "scan.blf", k.Key + ".rbd"}, ""); code != 0 {
				t.Fatalf("%s %s: import -format redisbloom: exit %d: %s", name, k.Key, code, e)
			}
			if e, code := importKey(recordedPath(name, "rdb"), k.Key, "rdb.blf"); code != 0 {
				t.Fatalf("%s %s: import -format rdb: exit %d: %s", name, k.Key, code, e)
			}
			a, err := os.ReadFile("scan.blf")
			must(t, err)
			c, err := os.ReadFile("rdb.blf")
			must(t, err)
			if !bytes.Equal(a, c) {
				t.Errorf("%s %s: the file imported from the RDB file (%d bytes) differs from the SCANDUMP's (%d bytes)", name, k.Key, len(c), len(a))
			}
		}
	}
	if compared != 16 {
		t.Errorf("%d BF and CF keys compared, want 8 in each file", compared)
	}
}

// TestImportRDBCorruptValue: a RedisBloom value of an RDB file whose
// fields are well formed but wrong (key ns's error rate made negative)
// is reported as the RDB value it is (key, module type, encoding
// version, offset), not as an "invalid bloomlab file".
func TestImportRDBCorruptValue(t *testing.T) {
	d, err := os.ReadFile("../../rdb/testdata/redisbloom-8.6.2-rdb.rdb")
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(d, []byte("\x07\x02ns"))
	if i < 0 || d[i+31] != 0x3f {
		t.Fatal("key ns not where expected")
	}
	d[i+31] = 0xbf // the error rate 0.01 becomes -0.01
	t.Chdir(t.TempDir())
	if err := os.WriteFile("bad.rdb", d, 0o644); err != nil {
		t.Fatal(err)
	}
	_, e, code := invoke([]string{"import", "-format", "rdb", "-key", "ns", "-o", "x.blf", "bad.rdb"}, "")
	want := fmt.Sprintf(`key "ns" (module value MBbloom-- encoding version 4) at offset %d: link 0: error rate -0.01 out of (0, 1)`, i+13) // its first field, after the key and the module id
	if code != 1 || !strings.Contains(e, want) || strings.Contains(e, "invalid bloomlab file") {
		t.Fatalf("exit %d: %s\nwant %s", code, e, want)
	}
}
