package cuckoo

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/bloomlab/bloomlab/internal/blrd"
	"github.com/bloomlab/bloomlab/internal/format"
	"github.com/bloomlab/bloomlab/rdb"
)

// The recorded RDB vectors (rdb/testdata): each key's DUMP
// payload from the real module and a transcript of read commands with
// its replies, recorded after the module loaded the file.
type rdbVectors struct {
	Redis string `json:"redis"`
	Keys  []struct {
		Key   string `json:"key"`
		Type  string `json:"type"`
		Dump  string `json:"dump"`
		Probe []struct {
			Args  []string `json:"args"`
			Reply any      `json:"reply"`
		} `json:"probe"`
	} `json:"keys"`
}

var rdbModules = []string{"8.6.2", "2.4.23"}

func loadRDBVectors(t testing.TB, module string) *rdbVectors {
	fh, err := os.Open("../rdb/testdata/redisbloom-" + module + "-rdb.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	zr, err := gzip.NewReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	var v rdbVectors
	if err := json.NewDecoder(zr).Decode(&v); err != nil {
		t.Fatal(err)
	}
	return &v
}

// rfield is one field of a module value: an unsigned integer, a double or
// a string.
type rfield struct {
	op int // 2 unsigned, 4 double, 5 string
	u  uint64
	d  float64
	s  []byte
}

func (f rfield) String() string {
	switch f.op {
	case 2:
		return fmt.Sprintf("u%d", f.u)
	case 4:
		return fmt.Sprintf("d%v", f.d)
	}
	return fmt.Sprintf("s[%d]", len(f.s))
}

func u64(v uint64) rfield { return rfield{op: 2, u: v} }

// payloadFields returns a DUMP payload's RDB version and fields.
func payloadFields(t testing.TB, payload []byte) (int, []rfield) {
	t.Helper()
	v, err := rdb.ReadDump(payload, rdb.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var fs []rfield
	for {
		op, err := v.Module.Next()
		if err != nil {
			t.Fatal(err)
		}
		f := rfield{op: op}
		switch op {
		case 0:
			if err := v.Module.End(); err != nil {
				t.Fatal(err)
			}
			if err := v.Finish(); err != nil {
				t.Fatal(err)
			}
			return v.Version, fs
		case 2:
			f.u, err = v.Module.ReadUnsigned()
		case 4:
			f.d, err = v.Module.ReadDouble()
		case 5:
			f.s, err = v.Module.ReadString()
		default:
			t.Fatalf("unexpected field opcode %d", op)
		}
		if err != nil {
			t.Fatal(err)
		}
		fs = append(fs, f)
	}
}

// fieldsPayload builds a DUMP payload (uncompressed) of a module value
// with these fields.
func fieldsPayload(t testing.TB, name string, encver int, fs []rfield) []byte {
	t.Helper()
	d := rdb.NewDumpWriter(false)
	m, err := d.Module(name, encver)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		switch f.op {
		case 2:
			m.Unsigned(f.u)
		case 4:
			m.Double(f.d)
		case 5:
			m.String(f.s)
		}
	}
	if err := m.End(); err != nil {
		t.Fatal(err)
	}
	return d.Payload(rdb.DumpVersion)
}

func cloneFields(fs []rfield) []rfield {
	out := make([]rfield, len(fs))
	for i, f := range fs {
		out[i] = f
		out[i].s = bytes.Clone(f.s)
	}
	return out
}

// readPayload decodes a DUMP payload holding an MBbloomCF value, with
// strings of at most 64 MiB.
func readPayload(payload []byte, alloc func(int64) error) (*Filter, error) {
	return readPayloadLim(payload, rdb.Limits{MaxString: 1 << 26}, alloc)
}

func readPayloadLim(payload []byte, lim rdb.Limits, alloc func(int64) error) (*Filter, error) {
	v, err := rdb.ReadDump(payload, lim)
	if err != nil {
		return nil, err
	}
	if v.Module == nil {
		return nil, errors.New("not a module value")
	}
	f, err := ReadRedisBloomRDB(v.Module, alloc)
	if err != nil {
		return nil, err
	}
	return f, v.Finish()
}

// writePayload encodes f as a DUMP payload of RDB version version.
func writePayload(f *Filter, compress bool, version int) ([]byte, error) {
	d := rdb.NewDumpWriter(compress)
	m, err := d.Module(rdbTypeName, rdbEncVer)
	if err != nil {
		return nil, err
	}
	if err := f.WriteRedisBloomRDB(m); err != nil {
		return nil, err
	}
	if err := m.End(); err != nil {
		return nil, err
	}
	return d.Payload(version), nil
}

// TestRDBRecorded decodes every MBbloomCF payload of both recorded files,
// checks that writing it again gives the same fields (and the same bytes
// where Redis compressed nothing), replays each key's probe transcript
// (TYPE, CF.INFO, CF.MEXISTS, CF.COUNT, every CF.SCANDUMP chunk) on the
// decoded filter with the CF emulation of vectors_test.go, checks that
// every item the transcript reports present is present, and that the key
// read from the .rdb file equals the one from its DUMP payload.
func TestRDBRecorded(t *testing.T) {
	for _, module := range rdbModules {
		vs := loadRDBVectors(t, module)
		fromDump := map[string]*Filter{}
		identical := 0
		for _, k := range vs.Keys {
			if k.Type != rdbTypeName {
				continue
			}
			payload, err := hex.DecodeString(k.Dump)
			if err != nil {
				t.Fatal(err)
			}
			f, err := readPayload(payload, nil)
			if err != nil {
				t.Fatalf("%s %s: %v", module, k.Key, err)
			}
			fromDump[k.Key] = f
			version, want := payloadFields(t, payload)
			for _, compress := range []bool{false, true} {
				again, err := writePayload(f, compress, version)
				if err != nil {
					t.Fatal(err)
				}
				if _, got := payloadFields(t, again); !reflect.DeepEqual(got, want) {
					t.Errorf("%s %s: written fields differ:\n got %v\nwant %v", module, k.Key, got, want)
				}
				if !compress && len(again) == len(payload) && !bytes.Equal(again, payload) {
					t.Errorf("%s %s: payload differs from Redis's", module, k.Key)
				}
				if compress && bytes.Equal(again, payload) {
					identical++
				}
			}
			s := &cfServer{cf: map[string]*Filter{k.Key: f}}
			for i, c := range k.Probe {
				got := s.do(c.Args)
				if want := normalize(c.Reply); !reflect.DeepEqual(normalize(toJSON(got)), want) {
					t.Errorf("%s %s #%d %.60v:\n got %.300v\nwant %.300v", module, k.Key, i, c.Args, got, want)
				}
				switch cmd := strings.ToUpper(c.Args[0]); cmd {
				case "CF.MEXISTS", "CF.EXISTS", "CF.COUNT":
					replies, ok := c.Reply.([]any)
					if !ok {
						replies = []any{c.Reply}
					}
					for j, r := range replies {
						if n, _ := r.(float64); n >= 1 && !f.Contains([]byte(c.Args[2+j])) {
							t.Errorf("%s %s: false negative for %q", module, k.Key, c.Args[2+j])
						}
					}
				}
			}
		}
		if len(fromDump) != 3 {
			t.Errorf("%s: %d MBbloomCF payloads, want 3", module, len(fromDump))
		}
		t.Logf("%s: %d MBbloomCF payloads decoded; written again with LZF, %d byte-identical to Redis's", module, len(fromDump), identical)
		if identical != len(fromDump) {
			t.Errorf("%s: %d of %d MBbloomCF payloads written again with LZF are Redis's bytes, want all", module, identical, len(fromDump))
		}

		fh, err := os.Open("../rdb/testdata/redisbloom-" + module + "-rdb.rdb")
		if err != nil {
			t.Fatal(err)
		}
		r, err := rdb.NewReader(fh, rdb.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		seen := 0
		for {
			e, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if e.Module == nil || e.Module.Name != rdbTypeName {
				continue
			}
			f, err := ReadRedisBloomRDB(e.Module, nil)
			if err != nil {
				t.Fatalf("%s file, key %s: %v", module, e.Key, err)
			}
			if g := fromDump[string(e.Key)]; g == nil || !g.Equal(f) || cfInfo(g) != cfInfo(f) {
				t.Errorf("%s file, key %s: differs from its DUMP payload", module, e.Key)
			}
			seen++
		}
		fh.Close()
		if seen != len(fromDump) {
			t.Errorf("%s file: %d MBbloomCF keys, the payloads %d", module, seen, len(fromDump))
		}
	}
}

// recordedFields returns the fields of a recorded key's payload (8.6.2).
func recordedFields(t testing.TB, key string) []rfield {
	t.Helper()
	for _, k := range loadRDBVectors(t, "8.6.2").Keys {
		if k.Key == key {
			payload, err := hex.DecodeString(k.Dump)
			if err != nil {
				t.Fatal(err)
			}
			_, fs := payloadFields(t, payload)
			return fs
		}
	}
	t.Fatalf("no key %s", key)
	return nil
}

// TestRDBOlderEncVers: versions 2 and 3 (numFilters, numBuckets, numItems,
// then each filter's buckets) are read, validated and refused for their
// 32-bit hashing, naming the type and the version; so are newer versions.
func TestRDBOlderEncVers(t *testing.T) {
	fs := recordedFields(t, "cfc") // 1 filter, 64 buckets of 2, expansion 1, 2 items
	old := append(cloneFields(fs[:3]), fs[8])
	for _, encver := range []int{2, 3, 5, 1023} {
		vfs := fs
		if encver < 4 {
			vfs = old
		}
		_, err := readPayload(fieldsPayload(t, rdbTypeName, encver, vfs), nil)
		if err == nil || !strings.Contains(err.Error(), rdbTypeName) || !strings.Contains(err.Error(), fmt.Sprintf("version %d", encver)) || !errors.Is(err, format.ErrFormat) {
			t.Errorf("encver %d: %v", encver, err)
		}
		if encver < 4 && !strings.Contains(err.Error(), "32-bit hash") {
			t.Errorf("encver %d: %v, want a refusal of 32-bit hashing", encver, err)
		}
	}
	// A malformed old value gets its own error first: a bucket string of
	// the wrong length is never reached, but a header is checked.
	bad := cloneFields(old)
	bad[1] = u64(63)
	if _, err := readPayload(fieldsPayload(t, rdbTypeName, 3, bad), nil); err == nil || !strings.Contains(err.Error(), "power of two") {
		t.Errorf("encver 3, 63 buckets: %v", err)
	}
}

// TestRDBMalformed: every inconsistency of the fields is an error (never
// a panic).
func TestRDBMalformed(t *testing.T) {
	base := recordedFields(t, "cfb") // 3 filters of 16·2^i buckets of 4, expansion 2, 400 items
	if len(base) != 7+2*3 {
		t.Fatalf("%d fields", len(base))
	}
	sub := func(i, f int) int { return 7 + 2*i + f } // f: 0 numBuckets, 1 buckets
	cases := []struct {
		name string
		edit func(fs []rfield) []rfield
	}{
		{"no filters", func(fs []rfield) []rfield { fs[0] = u64(0); return fs }},
		{"too many filters", func(fs []rfield) []rfield { fs[0] = u64(maxSubFilters + 1); return fs }},
		{"2^64 filters", func(fs []rfield) []rfield { fs[0] = u64(math.MaxUint64); return fs }},
		{"more filters than fields", func(fs []rfield) []rfield { fs[0] = u64(4); return fs }},
		{"fewer filters than fields", func(fs []rfield) []rfield { fs[0] = u64(2); fs[2] = u64(fs[2].u - 0); return fs }},
		{"no buckets", func(fs []rfield) []rfield { fs[1] = u64(0); return fs }},
		{"buckets not a power of two", func(fs []rfield) []rfield { fs[1] = u64(24); return fs }},
		{"2^64-1 buckets", func(fs []rfield) []rfield { fs[1] = u64(math.MaxUint64); return fs }},
		{"2^63 buckets", func(fs []rfield) []rfield { fs[1] = u64(1 << 63); return fs }},
		{"items beyond the slots", func(fs []rfield) []rfield { fs[2] = u64(1 << 40); return fs }},
		{"items disagree", func(fs []rfield) []rfield { fs[2] = u64(fs[2].u + 1); return fs }},
		{"bucket size 0", func(fs []rfield) []rfield { fs[4] = u64(0); return fs }},
		{"bucket size 256", func(fs []rfield) []rfield { fs[4] = u64(256); return fs }},
		{"bucket size + 2^16", func(fs []rfield) []rfield { fs[4] = u64(4 + 1<<16); return fs }},
		{"max iterations 0", func(fs []rfield) []rfield { fs[5] = u64(0); return fs }},
		{"max iterations 2^16 + 1", func(fs []rfield) []rfield { fs[5] = u64(1<<16 + 1); return fs }},
		{"expansion 3", func(fs []rfield) []rfield { fs[6] = u64(3); return fs }},
		{"expansion 0 with 3 filters", func(fs []rfield) []rfield { fs[6] = u64(0); return fs }},
		{"expansion + 2^16", func(fs []rfield) []rfield { fs[6] = u64(2 + 1<<16); return fs }},
		{"a filter's buckets disagree", func(fs []rfield) []rfield { fs[sub(1, 0)] = u64(16); return fs }},
		{"a filter's buckets 2^32 more", func(fs []rfield) []rfield { fs[sub(2, 0)] = u64(fs[sub(2, 0)].u + 1<<32); return fs }},
		{"buckets one byte short", func(fs []rfield) []rfield { s := &fs[sub(0, 1)]; s.s = s.s[:len(s.s)-1]; return fs }},
		{"buckets one byte long", func(fs []rfield) []rfield { s := &fs[sub(2, 1)]; s.s = append(s.s, 0); return fs }},
		{"a string for numBuckets", func(fs []rfield) []rfield { fs[sub(0, 0)] = rfield{op: 5, s: []byte("16")}; return fs }},
		{"an integer for the buckets", func(fs []rfield) []rfield { fs[sub(0, 1)] = u64(0); return fs }},
		{"a double for an integer", func(fs []rfield) []rfield { fs[3] = rfield{op: 4, d: 0}; return fs }},
		{"an extra field", func(fs []rfield) []rfield { return append(fs, u64(0)) }},
		{"a field missing", func(fs []rfield) []rfield { return fs[:len(fs)-1] }},
	}
	for _, c := range cases {
		p := fieldsPayload(t, rdbTypeName, rdbEncVer, c.edit(cloneFields(base)))
		f, err := readPayload(p, nil)
		if err == nil {
			t.Errorf("%s: accepted (%+v)", c.name, cfInfo(f))
			continue
		}
		t.Logf("%s: %v", c.name, err)
	}
	if _, err := readPayload(fieldsPayload(t, "MBbloom--", 4, base), nil); err == nil || !strings.Contains(err.Error(), "MBbloom--") {
		t.Errorf("another type: %v", err)
	}
	value, _, _ := rdb.SplitDump(fieldsPayload(t, rdbTypeName, rdbEncVer, base))
	for n := 1; n < len(value); n += 5 {
		if _, err := readPayload(rdb.EncodeDump(value[:n], rdb.DumpVersion), nil); err == nil {
			t.Errorf("value cut at %d of %d bytes: accepted", n, len(value))
		}
	}
}

// TestRDBAlloc: alloc is called once, with the sub-filters' total bytes,
// before any is allocated; its error stops the read; and a value
// announcing huge sub-filters is refused before anything near that size
// is allocated.
func TestRDBAlloc(t *testing.T) {
	fs := recordedFields(t, "cfb")
	p := fieldsPayload(t, rdbTypeName, rdbEncVer, fs)
	var calls []int64
	if _, err := readPayload(p, func(n int64) error { calls = append(calls, n); return nil }); err != nil {
		t.Fatal(err)
	}
	if want := []int64{(16 + 32 + 64) * 4}; !reflect.DeepEqual(calls, want) {
		t.Errorf("alloc calls %v, want %v", calls, want)
	}
	errOOM := errors.New("OOM command not allowed")
	if _, err := readPayload(p, func(int64) error { return errOOM }); err != errOOM {
		t.Errorf("alloc's error: %v", err)
	}

	// 2^43 buckets of 4 (2^48 bits) announced, a string of 2^45 bytes
	// begun and cut.
	defer func(f func() uint64) { blrd.MemLimit = f }(blrd.MemLimit)
	blrd.MemLimit = func() uint64 { return 1 << 30 }
	huge := []rfield{u64(1), u64(1 << 43), u64(0), u64(0), u64(4), u64(20), u64(1), u64(1 << 43)}
	value, _, _ := rdb.SplitDump(fieldsPayload(t, rdbTypeName, rdbEncVer, huge))
	value = append(value[:len(value)-1], 5, 0x81) // the EOF opcode replaced by a string's, a 64-bit length
	value = append(value, 0, 0, 0x20, 0, 0, 0, 0, 0)
	value = append(value, make([]byte, 4096)...)
	trunc := rdb.EncodeDump(value, rdb.DumpVersion)
	for _, withAlloc := range []bool{true, false} {
		var asked []int64
		var alloc func(int64) error
		if withAlloc {
			alloc = func(n int64) error { asked = append(asked, n); return errOOM }
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := readPayloadLim(trunc, rdb.Limits{MaxString: 1 << 50}, alloc)
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Fatal("a truncated 2^45-byte sub-filter was accepted")
		}
		if withAlloc && (err != errOOM || !reflect.DeepEqual(asked, []int64{1 << 45})) {
			t.Errorf("alloc asked %v, error %v", asked, err)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
			t.Errorf("alloc %v: %d bytes allocated for a truncated value", withAlloc, grew)
		}
		t.Logf("alloc %v: asked %v; %v", withAlloc, asked, err)
	}
}

// TestRDBWrite: RedisBloom-profile filters (growing, with deletes) go
// through an RDB value and back equal, every key still present; a
// bloomlab-profile filter is refused by name, with nothing written.
func TestRDBWrite(t *testing.T) {
	f, err := NewRedisBloom(100, 4, 50, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 1000 {
		if err := f.Add(fmt.Appendf(nil, "k%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 100 {
		f.Delete(fmt.Appendf(nil, "k%d", 2*i+1))
	}
	p, err := writePayload(f, true, rdb.DumpVersion)
	if err != nil {
		t.Fatal(err)
	}
	g, err := readPayload(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !g.Equal(f) || cfInfo(g) != cfInfo(f) || g.Info().SubFilters < 3 || g.Info().Deletes != f.Info().Deletes {
		t.Errorf("differs after the round trip (%d sub-filters, %d deletes)", g.Info().SubFilters, g.Info().Deletes)
	}
	for i := range 1000 {
		if (i >= 200 || i%2 == 0) && !g.Contains(fmt.Appendf(nil, "k%d", i)) {
			t.Fatalf("key %d lost", i)
		}
	}

	b, err := New(Config{Capacity: 1000})
	if err != nil {
		t.Fatal(err)
	}
	d := rdb.NewDumpWriter(false)
	m, _ := d.Module(rdbTypeName, rdbEncVer)
	err = b.WriteRedisBloomRDB(m)
	if err == nil || !strings.Contains(err.Error(), "Redis cannot load") || !strings.Contains(err.Error(), "bloomlab") || !errors.Is(err, ErrParam) {
		t.Errorf("bloomlab profile: %v", err)
	}
	m.End()
	if _, fs := payloadFields(t, d.Payload(rdb.DumpVersion)); len(fs) != 0 {
		t.Errorf("bloomlab profile: %d fields written", len(fs))
	}
	var zero Filter
	if err := zero.WriteRedisBloomRDB(nil); err == nil {
		t.Error("the zero Filter was written")
	}
}

// FuzzReadRedisBloomRDB: no value panics or makes the reader allocate
// beyond what alloc allows, and a value it accepts writes back to the same
// filter. The fuzzer mutates the value; the payload's footer (version and
// CRC-64) is added to it, so that mutations reach the decoder.
func FuzzReadRedisBloomRDB(f *testing.F) {
	for _, k := range loadRDBVectors(f, "8.6.2").Keys {
		if k.Type == rdbTypeName {
			p, _ := hex.DecodeString(k.Dump)
			value, _, _ := rdb.SplitDump(p)
			f.Add(value)
		}
	}
	fs := recordedFields(f, "cfc")
	value, _, _ := rdb.SplitDump(fieldsPayload(f, rdbTypeName, 3, append(cloneFields(fs[:3]), fs[8])))
	f.Add(value)
	f.Fuzz(func(t *testing.T, value []byte) {
		g, err := readPayload(rdb.EncodeDump(value, rdb.DumpVersion), func(n int64) error {
			if n > 1<<24 {
				return errors.New("too large")
			}
			return nil
		})
		if err != nil {
			return
		}
		p, err := writePayload(g, false, rdb.DumpVersion)
		if err != nil {
			t.Fatal(err)
		}
		h, err := readPayload(p, nil)
		if err != nil {
			t.Fatalf("written back, refused: %v", err)
		}
		if !h.Equal(g) || cfInfo(h) != cfInfo(g) {
			t.Fatal("written back, differs")
		}
	})
}
