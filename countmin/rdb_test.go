package countmin

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/bloomlab/bloomlab/rdb"
)

// rdbRecorded is one key of a recorded file's json.gz (rdb's
// testdata: the DUMP payload of every key and the probe transcript the real
// module answered after it loaded the file).
type rdbRecorded struct {
	Key   string `json:"key"`
	Type  string `json:"type"`
	Dump  string `json:"dump"`
	Probe []struct {
		Args  []string `json:"args"`
		Reply any      `json:"reply"`
	} `json:"probe"`
}

var rdbRecordings = []string{"redisbloom-8.6.2", "redisbloom-2.4.23"}

func loadRDBRecorded(t testing.TB, name string) []rdbRecorded {
	f, err := os.Open("../rdb/testdata/" + name + "-rdb.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(z)
	dec.UseNumber()
	var v struct{ Keys []rdbRecorded }
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v.Keys
}

// rdbFileSketches reads a recorded RDB file to its end (CRC checked) and
// decodes every CMSk-TYPE value.
func rdbFileSketches(t testing.TB, name string) map[string]*Sketch {
	f, err := os.Open("../rdb/testdata/" + name + "-rdb.rdb")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := rdb.NewReader(f, rdb.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*Sketch{}
	for {
		e, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if e.Module == nil || e.Module.Name != RDBTypeName {
			continue // the next Next passes over the value
		}
		s, err := ReadRedisBloomRDB(e.Module, nil)
		if err != nil {
			t.Fatalf("%s: key %q: %v", name, e.Key, err)
		}
		out[string(e.Key)] = s
	}
}

// canonicalDump rewrites a DUMP payload's module value field by field,
// uncompressed: the fields Redis wrote, without its LZF choices.
func canonicalDump(t testing.TB, payload []byte) []byte {
	v, err := rdb.ReadDump(payload, rdb.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	d := rdb.NewDumpWriter(false)
	m, err := d.Module(v.Module.Name, v.Module.EncVer)
	if err != nil {
		t.Fatal(err)
	}
	for {
		op, err := v.Module.Next()
		if err != nil {
			t.Fatal(err)
		}
		switch op {
		case 0:
			if err := v.Module.End(); err != nil {
				t.Fatal(err)
			}
			if err := m.End(); err != nil {
				t.Fatal(err)
			}
			if err := v.Finish(); err != nil {
				t.Fatal(err)
			}
			return d.Payload(v.Version)
		case 1:
			x, err := v.Module.ReadSigned()
			if err != nil {
				t.Fatal(err)
			}
			m.Signed(x)
		case 2:
			x, err := v.Module.ReadUnsigned()
			if err != nil {
				t.Fatal(err)
			}
			m.Unsigned(x)
		case 3:
			x, err := v.Module.ReadFloat()
			if err != nil {
				t.Fatal(err)
			}
			m.Float(x)
		case 4:
			x, err := v.Module.ReadDouble()
			if err != nil {
				t.Fatal(err)
			}
			m.Double(x)
		case 5:
			x, err := v.Module.ReadString()
			if err != nil {
				t.Fatal(err)
			}
			m.String(x)
		}
	}
}

// readDumpSketch decodes a DUMP payload of a CMSk-TYPE value.
func readDumpSketch(payload []byte, alloc func(int64) error) (*Sketch, error) {
	v, err := rdb.ReadDump(payload, rdb.Limits{MaxString: 1 << 26})
	if err != nil {
		return nil, err
	}
	if v.Module == nil {
		return nil, errors.New("not a module value")
	}
	s, err := ReadRedisBloomRDB(v.Module, alloc)
	if err != nil {
		return nil, err
	}
	return s, v.Finish()
}

// dumpOf writes s as a DUMP payload (RDB version 10).
func dumpOf(t testing.TB, s *Sketch, compress bool) []byte {
	d := rdb.NewDumpWriter(compress)
	m, err := d.Module(RDBTypeName, RDBEncVer)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.WriteRedisBloomRDB(m); err != nil {
		t.Fatal(err)
	}
	if err := m.End(); err != nil {
		t.Fatal(err)
	}
	return d.Payload(rdb.DumpVersion)
}

// TestRedisBloomRDBRecorded: every CMSk-TYPE key of both recorded files
// (RedisBloom 8.6.2 and 2.4.23 on Redis 7.0.15) decodes, from the RDB file
// and from its DUMP payload, to the same sketch; the decoded sketch answers
// the probe transcript the real module answered after loading the file
// (CMS.INFO's width, depth and count, CMS.QUERY of the added keys and of
// keys never added); written back, its fields are the ones Redis wrote,
// byte for byte (compared uncompressed; whether the LZF-compressed payload
// is Redis's too is logged).
func TestRedisBloomRDBRecorded(t *testing.T) {
	for _, name := range rdbRecordings {
		fromFile := rdbFileSketches(t, name)
		seen, identical := 0, 0
		for _, k := range loadRDBRecorded(t, name) {
			if k.Type != RDBTypeName {
				continue
			}
			seen++
			payload, err := hex.DecodeString(k.Dump)
			if err != nil {
				t.Fatal(err)
			}
			s, err := readDumpSketch(payload, nil)
			if err != nil {
				t.Fatalf("%s: %s: %v", name, k.Key, err)
			}
			if f := fromFile[k.Key]; f == nil || !f.Equal(s) {
				t.Errorf("%s: %s: the file's value and the DUMP payload's differ", name, k.Key)
			}
			delete(fromFile, k.Key)
			if s.Profile() != RedisBloom {
				t.Errorf("%s: %s: profile %v", name, k.Key, s.Profile())
			}
			for _, p := range k.Probe {
				checkCMSProbe(t, name+": "+k.Key, s, p.Args, p.Reply)
			}
			if got, want := dumpOf(t, s, false), canonicalDump(t, payload); !bytes.Equal(got, want) {
				t.Errorf("%s: %s: written fields differ from Redis's:\n got %x\nwant %x", name, k.Key, got, want)
			}
			if bytes.Equal(dumpOf(t, s, true), payload) {
				identical++
			}
		}
		if seen < 8 || len(fromFile) != 0 {
			t.Errorf("%s: %d CMS keys in the json, %d more in the file", name, seen, len(fromFile))
		}
		if identical != seen {
			t.Errorf("%s: %d of %d CMS payloads written with compression are Redis's bytes, want all", name, identical, seen)
		}
	}
}

// checkCMSProbe checks one recorded command against the sketch.
func checkCMSProbe(t *testing.T, where string, s *Sketch, args []string, reply any) {
	t.Helper()
	num := func(v any) uint64 {
		n, ok := v.(json.Number)
		if !ok {
			t.Fatalf("%s: %v: reply %v is not a number", where, args, v)
		}
		var x uint64
		if err := json.Unmarshal([]byte(n), &x); err != nil {
			t.Fatal(err)
		}
		return x
	}
	switch strings.ToUpper(args[0]) {
	case "TYPE":
	case "CMS.INFO":
		r := reply.([]any)
		got := []uint64{s.Width(), uint64(s.Depth()), s.N()}
		for i := range got {
			if want := num(r[2*i+1]); got[i] != want {
				t.Errorf("%s: CMS.INFO field %v = %d, want %d", where, r[2*i], got[i], want)
			}
		}
	case "CMS.QUERY":
		r := reply.([]any)
		for i, key := range args[2:] {
			if got, want := s.EstimateString(key), num(r[i]); got != want {
				t.Errorf("%s: CMS.QUERY %q = %d, want %d", where, key, got, want)
			}
		}
	default:
		t.Errorf("%s: unexpected probe %v", where, args)
	}
}

// TestRedisBloomRDBRoundTrip: sketches with odd and even numbers of
// counters, saturated counters and a count past 2^32, written and read
// back, are equal; the counter string is RedisBloom's uint32_t array,
// little-endian, row-major; the read calls alloc once with Bits()/8.
func TestRedisBloomRDBRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 1))
	for _, dim := range [][2]uint64{{1, 1}, {3, 1}, {7, 3}, {24, 4}, {1000, 5}, {99999, 3}} {
		s, err := NewRedisBloom(dim[0], int(dim[1]))
		if err != nil {
			t.Fatal(err)
		}
		for i := range 300 {
			s.Add([]byte{byte(i), byte(i >> 8)}, uint64(rng.IntN(1<<20)))
		}
		s.Add([]byte("big"), RedisMaxCounter+5)
		payload := dumpOf(t, s, true)
		var asked []int64
		g, err := readDumpSketch(payload, func(n int64) error { asked = append(asked, n); return nil })
		if err != nil {
			t.Fatal(err)
		}
		if !g.Equal(s) || len(asked) != 1 || asked[0] != int64(s.Bits()/8) {
			t.Fatalf("%v: round trip: equal %v, alloc asked %v (Bits/8 = %d)", dim, g.Equal(s), asked, s.Bits()/8)
		}
		// The string field: width·depth little-endian uint32 counters.
		v, _ := rdb.ReadDump(payload, rdb.Limits{})
		for range 3 {
			v.Module.ReadUnsigned()
		}
		arr, err := v.Module.ReadString()
		if err != nil {
			t.Fatal(err)
		}
		n := dim[0] * dim[1]
		if uint64(len(arr)) != 4*n {
			t.Fatalf("%v: array of %d bytes", dim, len(arr))
		}
		for j := range n {
			if got := binary.LittleEndian.Uint32(arr[4*j:]); uint64(got) != get32(s.cells, j) {
				t.Fatalf("%v: counter %d = %d in the string, %d in the sketch", dim, j, got, get32(s.cells, j))
			}
		}
	}
}

// cmsValue writes a CMSk-TYPE payload of the given fields: unsigned
// integers, then a string for each []byte.
func cmsValue(name string, encver int, fields ...any) []byte {
	d := rdb.NewDumpWriter(false)
	m, _ := d.Module(name, encver)
	for _, f := range fields {
		switch x := f.(type) {
		case uint64:
			m.Unsigned(x)
		case int:
			m.Unsigned(uint64(x))
		case []byte:
			m.String(x)
		case float64:
			m.Double(x)
		}
	}
	m.End()
	return d.Payload(10)
}

// TestRedisBloomRDBRefuses: values RedisBloom's load refuses, or that
// NewRedisBloom cannot hold, or that end early or carry more, are errors
// (never a panic), and alloc is not called for them before the length
// checks; alloc's error stops the read before anything is allocated.
func TestRedisBloomRDBRefuses(t *testing.T) {
	arr := func(n int) []byte { return make([]byte, n) }
	cases := map[string][]byte{
		"width 0":            cmsValue(RDBTypeName, 0, 0, 5, 0, arr(0)),
		"depth 0":            cmsValue(RDBTypeName, 0, 5, 0, 0, arr(0)),
		"newer encver":       cmsValue(RDBTypeName, 1, 2, 2, 0, arr(16)),
		"other type":         cmsValue("TopK-TYPE", 0, 2, 2, 0, arr(16)),
		"short array":        cmsValue(RDBTypeName, 0, 2, 2, 0, arr(15)),
		"long array":         cmsValue(RDBTypeName, 0, 2, 2, 0, arr(17)),
		"overflowing w·d":    cmsValue(RDBTypeName, 0, uint64(1)<<40, uint64(1)<<40, 0, arr(0)),
		"w·d over MaxCells":  cmsValue(RDBTypeName, 0, uint64(1)<<20, uint64(1)<<20, 0, arr(0)),
		"depth over 2^32-1":  cmsValue(RDBTypeName, 0, 1, uint64(1)<<32, 0, arr(0)),
		"no array":           cmsValue(RDBTypeName, 0, 2, 2, 0),
		"a double for width": cmsValue(RDBTypeName, 0, 2.0, 2, 0, arr(16)),
		"extra field":        cmsValue(RDBTypeName, 0, 2, 2, 0, arr(16), 1),
	}
	for name, p := range cases {
		called := false
		if _, err := readDumpSketch(p, func(int64) error { called = true; return nil }); err == nil {
			t.Errorf("%s: accepted", name)
		} else if called && name != "extra field" {
			t.Errorf("%s: alloc called before the value was refused (%v)", name, err)
		}
	}
	// Truncated payloads (a right footer on a cut value).
	good := cmsValue(RDBTypeName, 0, 3, 2, 7, arr(24))
	value := good[:len(good)-10]
	for cut := range len(value) - 1 {
		if _, err := readDumpSketch(rdb.EncodeDump(value[:cut], 10), nil); err == nil {
			t.Errorf("value cut at %d of %d bytes accepted", cut, len(value))
		}
	}
	if s, err := readDumpSketch(good, nil); err != nil || s.N() != 7 || s.Width() != 3 || s.Depth() != 2 {
		t.Fatalf("the uncut value: %v", err)
	}
	errFull := errors.New("over maxmemory")
	big := cmsValue(RDBTypeName, 0, 1000, 4, 0, arr(16000))
	var asked int64
	if _, err := readDumpSketch(big, func(n int64) error { asked = n; return errFull }); !errors.Is(err, errFull) || asked != 16000 {
		t.Fatalf("alloc's error: %v (asked %d)", err, asked)
	}
	// Only a redisbloom-profile sketch is written.
	s, _ := New(Config{Width: 10, Depth: 2})
	if err := s.WriteRedisBloomRDB(nil); !errors.Is(err, ErrParam) {
		t.Fatalf("bloomlab-profile sketch written: %v", err)
	}
	if err := new(Sketch).WriteRedisBloomRDB(nil); !errors.Is(err, ErrParam) {
		t.Fatalf("zero sketch written: %v", err)
	}
}

// FuzzReadRedisBloomRDB: any value (given a right footer) reads as a
// sketch or an error, never a panic, with alloc bounding what it
// allocates; a sketch read writes back to a value that reads back equal.
// Seeded with the recorded CMS payloads, and the same values written
// uncompressed.
func FuzzReadRedisBloomRDB(f *testing.F) {
	for _, name := range rdbRecordings {
		for _, k := range loadRDBRecorded(f, name) {
			if k.Type == RDBTypeName {
				p, _ := hex.DecodeString(k.Dump)
				f.Add(p[:len(p)-10])
				if s, err := readDumpSketch(p, nil); err == nil { // uncompressed too
					u := dumpOf(f, s, false)
					f.Add(u[:len(u)-10])
				}
			}
		}
	}
	small := cmsValue(RDBTypeName, 0, 3, 1, 2, make([]byte, 12))
	f.Add(small[:len(small)-10])
	f.Fuzz(func(t *testing.T, value []byte) {
		limit := func(n int64) error {
			if n > 1<<24 {
				return errors.New("too big")
			}
			return nil
		}
		s, err := readDumpSketch(rdb.EncodeDump(value, 10), limit)
		if err != nil {
			return
		}
		g, err := readDumpSketch(dumpOf(t, s, true), limit)
		if err != nil || !g.Equal(s) {
			t.Fatalf("written back: %v", err)
		}
	})
}
