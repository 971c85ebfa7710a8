package scalable

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
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
	"sync/atomic"
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
// a string (the only kinds RedisBloom's BF and CF values have).
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

// payloadFields returns a DUMP payload's module type, encoding version,
// RDB version and fields.
func payloadFields(t testing.TB, payload []byte) (string, int, int, []rfield) {
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
			return v.Module.Name, v.Module.EncVer, v.Version, fs
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

// fieldsPayload builds a DUMP payload (RDB version 10, uncompressed) of a
// module value with these fields.
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

// readPayload decodes a DUMP payload holding an MBbloom-- value, with
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
	m, err := d.Module(RDBTypeName, RDBEncVer)
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

// TestRDBRecorded decodes every MBbloom-- payload of both recorded files,
// checks that writing it again gives the same fields (and says whether the
// payload is byte-identical, LZF compression included), replays each
// key's probe transcript (TYPE, BF.INFO, BF.CARD, BF.MEXISTS, every
// BF.SCANDUMP chunk) on the decoded filter with the BF emulation of
// vectors_test.go, checks that every item the transcript reports present
// is present, and that the key read from the .rdb file equals the one
// from its DUMP payload.
func TestRDBRecorded(t *testing.T) {
	for _, module := range rdbModules {
		vs := loadRDBVectors(t, module)
		fromDump := map[string]*Filter{}
		identical := 0
		for _, k := range vs.Keys {
			if k.Type != RDBTypeName {
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
			name, encver, version, want := payloadFields(t, payload)
			if name != RDBTypeName || encver != RDBEncVer {
				t.Fatalf("%s %s: %s encver %d", module, k.Key, name, encver)
			}
			for _, compress := range []bool{false, true} {
				again, err := writePayload(f, compress, version)
				if err != nil {
					t.Fatal(err)
				}
				if _, _, _, got := payloadFields(t, again); !reflect.DeepEqual(got, want) {
					t.Errorf("%s %s: written fields differ:\n got %v\nwant %v", module, k.Key, got, want)
				}
				// Where Redis compressed nothing (the same length
				// uncompressed), the payload is Redis's byte for byte.
				if !compress && len(again) == len(payload) && !bytes.Equal(again, payload) {
					t.Errorf("%s %s: payload differs from Redis's", module, k.Key)
				}
				if compress && bytes.Equal(again, payload) {
					identical++
				}
			}
			s := &server{bf: map[string]*Filter{k.Key: f}, strings: map[string]bool{}, foreign: map[string]bool{}}
			for i, c := range k.Probe {
				got, err := s.do(c.Args)
				if err != nil {
					t.Fatalf("%s %s #%d %v: %v", module, k.Key, i, c.Args[:min(len(c.Args), 4)], err)
				}
				if want := normalize(c.Reply); !reflect.DeepEqual(normalize(toJSON(got)), want) {
					t.Errorf("%s %s #%d %v:\n got %s\nwant %s", module, k.Key, i, c.Args[:min(len(c.Args), 4)], short(got), short(want))
				}
				if cmd := strings.ToUpper(c.Args[0]); cmd == "BF.MEXISTS" || cmd == "BF.EXISTS" {
					replies, ok := c.Reply.([]any)
					if !ok {
						replies = []any{c.Reply}
					}
					for j, r := range replies {
						if r == float64(1) && !f.Contains([]byte(c.Args[2+j])) {
							t.Errorf("%s %s: false negative for %q", module, k.Key, c.Args[2+j])
						}
					}
				}
			}
		}
		if len(fromDump) != 5 {
			t.Errorf("%s: %d MBbloom-- payloads, want 5", module, len(fromDump))
		}
		t.Logf("%s: %d MBbloom-- payloads decoded; written again with LZF, %d byte-identical to Redis's", module, len(fromDump), identical)
		if identical != len(fromDump) {
			t.Errorf("%s: %d of %d MBbloom-- payloads written again with LZF are Redis's bytes, want all", module, identical, len(fromDump))
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
			if e.Module == nil || e.Module.Name != RDBTypeName {
				continue
			}
			f, err := ReadRedisBloomRDB(e.Module, nil)
			if err != nil {
				t.Fatalf("%s file, key %s: %v", module, e.Key, err)
			}
			if g := fromDump[string(e.Key)]; g == nil || !g.Equal(f) || !reflect.DeepEqual(g.RedisInfo(), f.RedisInfo()) {
				t.Errorf("%s file, key %s: differs from its DUMP payload", module, e.Key)
			}
			seen++
		}
		fh.Close()
		if seen != len(fromDump) {
			t.Errorf("%s file: %d MBbloom-- keys, the payloads %d", module, seen, len(fromDump))
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
			_, _, _, fs := payloadFields(t, payload)
			return fs
		}
	}
	t.Fatalf("no key %s", key)
	return nil
}

func cloneFields(fs []rfield) []rfield {
	out := make([]rfield, len(fs))
	for i, f := range fs {
		out[i] = f
		out[i].s = bytes.Clone(f.s)
	}
	return out
}

// TestRDBOlderEncVers reads values of the older encoding versions: 3 and
// 2 (no growth field: 2), and refuses 0 and 1 (32-bit hashing) and 5
// (newer), naming the type and the version.
func TestRDBOlderEncVers(t *testing.T) {
	fs := recordedFields(t, "ins") // 2 links, growth 2
	want, err := readPayload(fieldsPayload(t, RDBTypeName, 4, fs), nil)
	if err != nil {
		t.Fatal(err)
	}
	noGrowth := append(cloneFields(fs[:3]), cloneFields(fs[4:])...)
	for _, encver := range []int{2, 3} {
		f, err := readPayload(fieldsPayload(t, RDBTypeName, encver, noGrowth), nil)
		if err != nil {
			t.Fatalf("encver %d: %v", encver, err)
		}
		if !f.Equal(want) || !reflect.DeepEqual(f.RedisInfo(), want.RedisInfo()) {
			t.Errorf("encver %d: differs from encver 4", encver)
		}
		for i := range 12 {
			if !f.Contains(fmt.Appendf(nil, "i%d", i)) {
				t.Errorf("encver %d: i%d absent", encver, i)
			}
		}
	}
	// Version 1: size, nfilters, then links; version 0: no bits or n2.
	v1 := append(cloneFields(fs[:2]), cloneFields(fs[4:])...)
	for encver, vfs := range map[int][]rfield{0: v1, 1: v1, 5: fs, 1023: fs} {
		_, err := readPayload(fieldsPayload(t, RDBTypeName, encver, vfs), nil)
		if err == nil || !strings.Contains(err.Error(), RDBTypeName) || !strings.Contains(err.Error(), fmt.Sprintf("version %d", encver)) || !errors.Is(err, format.ErrFormat) {
			t.Errorf("encver %d: %v", encver, err)
		}
	}
	if _, err := readPayload(fieldsPayload(t, RDBTypeName, 1, v1), nil); err == nil || !strings.Contains(err.Error(), "32 bits") {
		t.Errorf("encver 1: %v, want a refusal of 32-bit hashing", err)
	}
}

// TestRDBMalformed: every inconsistency of the fields is an error (never
// a panic), before anything is kept.
func TestRDBMalformed(t *testing.T) {
	base := recordedFields(t, "small") // size, nf 2, options 5, growth 2, 2 × (entries, error, hashes, bpe, bits, n2, bits, size)
	if len(base) != 4+2*8 {
		t.Fatalf("%d fields", len(base))
	}
	link := func(i, f int) int { return 4 + 8*i + f } // f: 0 entries … 7 size
	u := func(v uint64) rfield { return rfield{op: 2, u: v} }
	d := func(v float64) rfield { return rfield{op: 4, d: v} }
	cases := []struct {
		name string
		edit func(fs []rfield) []rfield
	}{
		{"no links", func(fs []rfield) []rfield { fs[1] = u(0); return fs }},
		{"too many links", func(fs []rfield) []rfield { fs[1] = u(maxLinks + 1); return fs }},
		{"2^64 links", func(fs []rfield) []rfield { fs[1] = u(math.MaxUint64); return fs }},
		{"more links than fields", func(fs []rfield) []rfield { fs[1] = u(3); return fs }},
		{"fewer links than fields", func(fs []rfield) []rfield { fs[1] = u(1); return fs }},
		{"no FORCE64", func(fs []rfield) []rfield { fs[2] = u(1); return fs }},
		{"unknown option", func(fs []rfield) []rfield { fs[2] = u(5 | 2); return fs }},
		{"options beyond 32 bits", func(fs []rfield) []rfield { fs[2] = u(5 | 1<<32); return fs }},
		{"growth beyond 32 bits", func(fs []rfield) []rfield { fs[3] = u(1<<32 + 2); return fs }},
		{"size disagrees", func(fs []rfield) []rfield { fs[0] = u(fs[0].u + 1); return fs }},
		{"link sizes overflow", func(fs []rfield) []rfield {
			fs[link(0, 7)] = u(math.MaxUint64)
			fs[0] = u(fs[link(1, 7)].u - 1)
			return fs
		}},
		{"capacity 0", func(fs []rfield) []rfield { fs[link(0, 0)] = u(0); return fs }},
		{"error 0", func(fs []rfield) []rfield { fs[link(0, 1)] = d(0); return fs }},
		{"error 1", func(fs []rfield) []rfield { fs[link(1, 1)] = d(1); return fs }},
		{"error NaN", func(fs []rfield) []rfield { fs[link(0, 1)] = d(math.NaN()); return fs }},
		{"hashes 0", func(fs []rfield) []rfield { fs[link(0, 2)] = u(0); return fs }},
		{"hashes + 2^32", func(fs []rfield) []rfield { fs[link(0, 2)] = u(fs[link(0, 2)].u + 1<<32); return fs }},
		{"too many hashes", func(fs []rfield) []rfield { fs[link(0, 2)] = u(fs[link(0, 2)].u + 1); return fs }},
		{"bpe disagrees with the rate", func(fs []rfield) []rfield { fs[link(0, 3)] = d(fs[link(0, 3)].d * 1.01); return fs }},
		{"bpe NaN", func(fs []rfield) []rfield { fs[link(0, 3)] = d(math.NaN()); return fs }},
		{"bits 0", func(fs []rfield) []rfield { fs[link(0, 4)] = u(0); return fs }},
		{"bits not whole bytes", func(fs []rfield) []rfield { fs[link(0, 4)] = u(fs[link(0, 4)].u - 1); return fs }},
		{"bits beyond the array", func(fs []rfield) []rfield { fs[link(0, 4)] = u(fs[link(0, 4)].u + 64); return fs }},
		{"bits beyond 2^48", func(fs []rfield) []rfield { fs[link(0, 4)] = u(1<<48 + 64); return fs }},
		{"array one byte short", func(fs []rfield) []rfield { s := &fs[link(0, 6)]; s.s = s.s[:len(s.s)-1]; return fs }},
		{"array one word long", func(fs []rfield) []rfield { s := &fs[link(1, 6)]; s.s = append(s.s, make([]byte, 8)...); return fs }},
		{"array one word short, bits too", func(fs []rfield) []rfield {
			s := &fs[link(1, 6)]
			s.s = s.s[:len(s.s)-8]
			fs[link(1, 4)] = u(fs[link(1, 4)].u + 64)
			return fs
		}},
		{"n2 beyond the bits", func(fs []rfield) []rfield { fs[link(0, 5)] = u(63); return fs }},
		{"n2 beyond 8 bits", func(fs []rfield) []rfield { fs[link(0, 5)] = u(256 + 6); return fs }},
		{"a bit beyond 2^n2", func(fs []rfield) []rfield {
			bitsN := fs[link(1, 4)].u
			n2 := uint64(63 - bitsLeading(bitsN)) // 2^n2 < bits
			fs[link(1, 5)] = u(n2)
			fs[link(1, 6)].s[len(fs[link(1, 6)].s)-1] = 0x80
			return fs
		}},
		{"a double for an integer", func(fs []rfield) []rfield { fs[link(0, 0)] = d(100); return fs }},
		{"an integer for a double", func(fs []rfield) []rfield { fs[link(0, 1)] = u(1); return fs }},
		{"an integer for the array", func(fs []rfield) []rfield { fs[link(0, 6)] = u(1); return fs }},
		{"an extra field", func(fs []rfield) []rfield { return append(fs, u(0)) }},
		{"a field missing", func(fs []rfield) []rfield { return fs[:len(fs)-1] }},
	}
	for _, c := range cases {
		p := fieldsPayload(t, RDBTypeName, RDBEncVer, c.edit(cloneFields(base)))
		f, err := readPayload(p, nil)
		if err == nil {
			t.Errorf("%s: accepted (%v)", c.name, f.RedisInfo())
			continue
		}
		t.Logf("%s: %v", c.name, err)
	}
	// A module value of another type.
	if _, err := readPayload(fieldsPayload(t, "CMSk-TYPE", 0, base), nil); err == nil || !strings.Contains(err.Error(), "CMSk-TYPE") {
		t.Errorf("another type: %v", err)
	}
	// Truncated anywhere: an error.
	p := fieldsPayload(t, RDBTypeName, RDBEncVer, base)
	value, _, _ := rdb.SplitDump(p)
	for n := 1; n < len(value); n += 7 {
		if _, err := readPayload(rdb.EncodeDump(value[:n], rdb.DumpVersion), nil); err == nil {
			t.Errorf("value cut at %d of %d bytes: accepted", n, len(value))
		}
	}
}

func bitsLeading(x uint64) int {
	n := 0
	for x&(1<<63) == 0 {
		x <<= 1
		n++
	}
	return n
}

// TestRDBAlloc: alloc is called with the size of each link's bit array
// before it is allocated, its error stops the read, and a value
// announcing a huge bit array is refused before anything near that size
// is allocated.
func TestRDBAlloc(t *testing.T) {
	fs := recordedFields(t, "grow4") // 3 links
	p := fieldsPayload(t, RDBTypeName, RDBEncVer, fs)
	var calls []int64
	if _, err := readPayload(p, func(n int64) error { calls = append(calls, n); return nil }); err != nil {
		t.Fatal(err)
	}
	var want []int64
	for i := range 3 {
		want = append(want, int64(len(fs[4+8*i+6].s)))
	}
	if !reflect.DeepEqual(calls, want) {
		t.Errorf("alloc calls %v, want %v", calls, want)
	}
	errOOM := errors.New("OOM command not allowed")
	calls = nil
	if _, err := readPayload(p, func(n int64) error {
		calls = append(calls, n)
		if len(calls) == 2 {
			return errOOM
		}
		return nil
	}); err != errOOM || len(calls) != 2 {
		t.Errorf("alloc's error on its second call: %v after %d calls", err, len(calls))
	}

	// A link of 2^48 bits (a valid header) whose bit array announces
	// 2^45 bytes and stops: refused by alloc when it is asked, and with
	// no alloc never allocated at that size (MemLimit pinned at 1 GiB).
	defer func(f func() uint64) { blrd.MemLimit = f }(blrd.MemLimit)
	blrd.MemLimit = func() uint64 { return 1 << 30 }
	huge := cloneFields(fs[:4+8])
	huge[1] = u64(1)
	huge[4+4] = u64(1 << 48)
	huge[4+6].s = nil
	head := fieldsPayload(t, RDBTypeName, RDBEncVer, huge[:4+6]) // up to n2
	value, _, _ := rdb.SplitDump(head)
	value = append(value[:len(value)-1], 5, 0x81) // the EOF opcode replaced by a string's, a 64-bit length
	value = binary.BigEndian.AppendUint64(value, 1<<45)
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
		_, err := readPayloadLim(trunc, rdb.Limits{MaxString: 1 << 46}, alloc)
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Fatal("a truncated 2^45-byte bit array was accepted")
		}
		if len(asked) > 0 && (err != errOOM || asked[0] != 1<<45) {
			t.Errorf("alloc asked %v, error %v", asked, err)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
			t.Errorf("alloc %v: %d bytes allocated for a truncated value", withAlloc, grew)
		}
		t.Logf("alloc %v: asked %v; %v", withAlloc, asked, err)
	}
}

func u64(v uint64) rfield { return rfield{op: 2, u: v} }

// TestRDBWrite: RedisBloom-profile chains (scaling, non-scaling, with
// power-of-two links) go through an RDB value and back equal, every key
// still present; the other profiles are refused by name, with nothing
// written.
func TestRDBWrite(t *testing.T) {
	mk := func(c Config) *Filter {
		f, err := New(c)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	pow2 := mk(Config{Profile: RedisBloom, Capacity: 100, FPR: 0.01, Expansion: 2})
	pow2.options &^= optNoRound // links from now on are powers of two
	chains := map[string]*Filter{
		"scaling":     mk(Config{Profile: RedisBloom, Capacity: 100, FPR: 0.01, Expansion: 2}),
		"expansion 3": mk(Config{Profile: RedisBloom, Capacity: 50, FPR: 0.001, Expansion: 3}),
		"nonscaling":  mk(Config{Profile: RedisBloom, Capacity: 1000, FPR: 0.05, Expansion: 2, NonScaling: true}),
		"pow2":        pow2,
	}
	for name, f := range chains {
		for i := range 900 {
			if _, err := f.Add(fmt.Appendf(nil, "%s-%d", name, i)); err != nil {
				t.Fatal(err)
			}
		}
		p, err := writePayload(f, true, rdb.DumpVersion)
		if err != nil {
			t.Fatal(err)
		}
		g, err := readPayload(p, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !g.Equal(f) || !reflect.DeepEqual(g.RedisInfo(), f.RedisInfo()) || g.Links() < 2 && name != "nonscaling" {
			t.Errorf("%s: differs after the round trip (%d links)", name, g.Links())
		}
		for i := range 900 {
			if !g.Contains(fmt.Appendf(nil, "%s-%d", name, i)) {
				t.Fatalf("%s: key %d lost", name, i)
			}
		}
	}
	for _, p := range []Profile{Bloomlab, Blocked} {
		f := mk(Config{Profile: p, Capacity: 100, FPR: 0.01})
		d := rdb.NewDumpWriter(false)
		m, _ := d.Module(RDBTypeName, RDBEncVer)
		err := f.WriteRedisBloomRDB(m)
		if err == nil || !strings.Contains(err.Error(), "Redis cannot load") || !strings.Contains(err.Error(), p.String()) || !errors.Is(err, ErrParam) {
			t.Errorf("%v profile: %v", p, err)
		}
		m.End()
		if _, _, _, fs := payloadFields(t, d.Payload(rdb.DumpVersion)); len(fs) != 0 {
			t.Errorf("%v profile: %d fields written", p, len(fs))
		}
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
		if k.Type == RDBTypeName && len(k.Dump) < 1<<16 {
			p, _ := hex.DecodeString(k.Dump)
			value, _, _ := rdb.SplitDump(p)
			f.Add(value)
		}
	}
	fs := recordedFields(f, "ins")
	value, _, _ := rdb.SplitDump(fieldsPayload(f, RDBTypeName, 3, append(cloneFields(fs[:3]), cloneFields(fs[4:])...)))
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
		if !h.Equal(g) || !reflect.DeepEqual(h.RedisInfo(), g.RedisInfo()) {
			t.Fatal("written back, differs")
		}
	})
}

// TestRDBWriteConcurrent: a value written while keys are being added is
// one state between two adds: it decodes (the links' sizes add up to the
// chain's) and holds every key added before the write began.
func TestRDBWriteConcurrent(t *testing.T) {
	f, err := NewRedisBloom(0.01, 100, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	var added atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 20000 {
			if _, err := f.Add(fmt.Appendf(nil, "c%d", i)); err != nil {
				t.Error(err)
				return
			}
			added.Store(int64(i + 1))
		}
	}()
	for range 20 {
		before := added.Load()
		p, err := writePayload(f, false, rdb.DumpVersion)
		if err != nil {
			t.Fatal(err)
		}
		g, err := readPayload(p, nil)
		if err != nil {
			t.Fatalf("written during adds: %v", err)
		}
		for i := range before {
			if !g.Contains(fmt.Appendf(nil, "c%d", i)) {
				t.Fatalf("key %d, added before the write, absent", i)
			}
		}
	}
	<-done
}
