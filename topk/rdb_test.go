package topk

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/bloomlab/bloomlab/hashing"
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
// decodes every TopK-TYPE value.
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
			continue
		}
		s, err := ReadRedisBloomRDB(e.Module, nil)
		if err != nil {
			t.Fatalf("%s: key %q: %v", name, e.Key, err)
		}
		out[string(e.Key)] = s
	}
}

// rdbFields reads a DUMP payload's module value field by field.
func rdbFields(t testing.TB, payload []byte) []any {
	v, err := rdb.ReadDump(payload, rdb.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var out []any
	for {
		op, err := v.Module.Next()
		if err != nil {
			t.Fatal(err)
		}
		var x any
		switch op {
		case 0:
			if err := v.Module.End(); err != nil {
				t.Fatal(err)
			}
			if err := v.Finish(); err != nil {
				t.Fatal(err)
			}
			return out
		case 1:
			x, err = v.Module.ReadSigned()
		case 2:
			x, err = v.Module.ReadUnsigned()
		case 3:
			x, err = v.Module.ReadFloat()
		case 4:
			x, err = v.Module.ReadDouble()
		case 5:
			x, err = v.Module.ReadString()
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, x)
	}
}

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

// sameSketch reports whether a and b hold the same parameters, buckets,
// heap and generator state.
func sameSketch(a, b *Sketch) bool {
	if a.cfg != b.cfg || a.rng != b.rng || a.table != b.table || !reflect.DeepEqual(a.data, b.data) || len(a.heap) != len(b.heap) {
		return false
	}
	for i := range a.heap {
		x, y := a.heap[i], b.heap[i]
		if x.fp != y.fp || x.count != y.count || x.full != y.full || !bytes.Equal(x.item, y.item) || (x.item == nil) != (y.item == nil) {
			return false
		}
	}
	return true
}

// maskHeap zeroes the pointer and padding bytes of each heap struct (field
// 5 of a TopK-TYPE value), which hold Redis's addresses.
func maskHeap(fields []any) (pointers, padding int) {
	h := fields[5].([]byte)
	for i := 0; i+heapBucketSize <= len(h); i += heapBucketSize {
		for j := 8; j < 16; j++ {
			if h[i+j] != 0 {
				pointers++
				break
			}
		}
		for j := 20; j < 24; j++ {
			if h[i+j] != 0 {
				padding++
				break
			}
		}
		clear(h[i+8 : i+16])
		clear(h[i+20 : i+24])
	}
	return
}

// TestRedisBloomRDBRecorded: every TopK-TYPE key of both recorded files
// (RedisBloom 8.6.2 and 2.4.23 on Redis 7.0.15) decodes, from the RDB file
// and from its DUMP payload, to the same sketch, with the heap layout of
// 64-bit RedisBloom (every slot with an item has a non-zero pointer in
// bytes 8-15 of its struct, the count at 16 is the listed one); the
// sketch answers the probe transcript the real module answered after
// loading the file (TOPK.INFO, TOPK.LIST WITHCOUNT, TOPK.QUERY,
// TOPK.COUNT); written back, its fields are Redis's but for the heap's
// pointer bytes, which hold Redis's addresses (so the payloads are never
// byte for byte Redis's).
func TestRedisBloomRDBRecorded(t *testing.T) {
	for _, name := range rdbRecordings {
		fromFile := rdbFileSketches(t, name)
		seen := 0
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
			if f := fromFile[k.Key]; f == nil || !sameSketch(f, s) {
				t.Errorf("%s: %s: the file's value and the DUMP payload's differ", name, k.Key)
			}
			delete(fromFile, k.Key)
			for _, p := range k.Probe {
				checkTopKProbe(t, name+": "+k.Key, s, p.Args, p.Reply)
			}
			got, want := rdbFields(t, dumpOf(t, s, false)), rdbFields(t, payload)
			full := 0
			for _, h := range s.heap {
				if h.full {
					full++
				}
			}
			if p, pad := maskHeap(want); p != full {
				t.Errorf("%s: %s: %d heap structs with a pointer, %d slots with an item", name, k.Key, p, full)
			} else {
				t.Logf("%s: %s: %d heap slots, %d with an item and a pointer, %d with non-zero padding", name, k.Key, len(s.heap), p, pad)
			}
			if p, pad := maskHeap(got); p != 0 || pad != 0 {
				t.Errorf("%s: %s: written pointer or padding bytes not zero", name, k.Key)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: %s: written fields differ from Redis's (pointer bytes aside):\n got %v\nwant %v", name, k.Key, got, want)
			}
			if bytes.Equal(dumpOf(t, s, true), payload) {
				t.Errorf("%s: %s: the payload is Redis's byte for byte, pointers included?", name, k.Key)
			}
		}
		if seen < 2 || len(fromFile) != 0 {
			t.Errorf("%s: %d TOPK keys in the json, %d more in the file", name, seen, len(fromFile))
		}
	}
}

// checkTopKProbe checks one recorded command against the sketch.
func checkTopKProbe(t *testing.T, where string, s *Sketch, args []string, reply any) {
	t.Helper()
	num := func(v any) uint64 {
		n, ok := v.(json.Number)
		if !ok {
			t.Fatalf("%s: %v: reply %v is not a number", where, args, v)
		}
		x, err := strconv.ParseUint(string(n), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	switch strings.ToUpper(args[0]) {
	case "TYPE":
	case "TOPK.INFO":
		r := reply.([]any)
		c := s.Config()
		for i, got := range []uint64{uint64(c.K), uint64(c.Width), uint64(c.Depth)} {
			if want := num(r[2*i+1]); got != want {
				t.Errorf("%s: TOPK.INFO %v = %d, want %d", where, r[2*i], got, want)
			}
		}
		if d, err := strconv.ParseFloat(r[7].(string), 64); err != nil || d != c.Decay {
			t.Errorf("%s: decay %v, want %v", where, c.Decay, r[7])
		}
	case "TOPK.LIST":
		var r []any
		for _, x := range reply.([]any) {
			if m, ok := x.(map[string]any); ok { // 2.4.23 answers simple strings
				x = m["simple"]
			}
			r = append(r, x)
		}
		var got []any
		for _, e := range s.List(nil) {
			got = append(got, string(e.Item))
			if len(args) > 2 {
				got = append(got, json.Number(strconv.Itoa(int(e.Count))))
			}
		}
		if !reflect.DeepEqual(got, r) {
			t.Errorf("%s: TOPK.LIST = %v, want %v", where, got, r)
		}
	case "TOPK.QUERY":
		r := reply.([]any)
		for i, item := range args[2:] {
			want := num(r[i]) == 1
			if got := s.Query([]byte(item)); got != want {
				t.Errorf("%s: TOPK.QUERY %q = %v, want %v", where, item, got, want)
			}
		}
	case "TOPK.COUNT":
		r := reply.([]any)
		for i, item := range args[2:] {
			if got, want := uint64(s.Count([]byte(item))), num(r[i]); got != want {
				t.Errorf("%s: TOPK.COUNT %q = %d, want %d", where, item, got, want)
			}
		}
	default:
		t.Errorf("%s: unexpected probe %v", where, args)
	}
}

// TestRedisBloomRDBRoundTrip: sketches with empty heap slots, the empty
// item, an item holding NUL bytes, long items and decayed buckets, written
// and read back, are the same sketch (the generator restarting from
// DefaultSeed); alloc is asked, in all, for Bytes(); an empty slot's item
// string is the NUL alone and an item's is the item and a NUL.
func TestRedisBloomRDBRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 2))
	for _, cfg := range []Config{{K: 1, Width: 1, Depth: 1, Decay: 1}, {K: 5, Width: 8, Depth: 7, Decay: 0.9}, {K: 50, Width: 30, Depth: 4, Decay: 0.5, Seed: 77}} {
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		s.Add([]byte{})
		s.Add([]byte("a\x00b"))
		s.IncrBy(bytes.Repeat([]byte("L"), 70000), 3)
		for range 2000 {
			s.Add([]byte(strconv.Itoa(int(rng.ExpFloat64() * 20))))
		}
		want := s.Clone()
		want.rng, want.cfg.Seed = DefaultSeed, DefaultSeed
		var asked int64
		g, err := readDumpSketch(dumpOf(t, s, true), func(n int64) error { asked += n; return nil })
		if err != nil {
			t.Fatal(err)
		}
		if !sameSketch(g, want) {
			t.Fatalf("%+v: round trip differs", cfg)
		}
		if asked != g.Bytes() {
			t.Fatalf("%+v: alloc asked for %d bytes, Bytes() = %d", cfg, asked, g.Bytes())
		}
		f := rdbFields(t, dumpOf(t, s, false))
		for i, h := range s.heap {
			if got := f[6+i].([]byte); !bytes.Equal(got, append(bytes.Clone(h.item), 0)) {
				t.Fatalf("%+v: slot %d: item string %q", cfg, i, got)
			}
		}
	}
	// A fresh sketch: every slot empty.
	s, _ := New(Config{K: 3, Width: 2, Depth: 2, Decay: 0.9})
	g, err := readDumpSketch(dumpOf(t, s, false), nil)
	if err != nil || !sameSketch(g, s) {
		t.Fatalf("empty sketch: %v", err)
	}
	if hashing.MurmurHash2([]byte{}, fpSeed) == 0 {
		t.Fatal("the empty item's fingerprint is 0: an empty slot and the empty item look alike")
	}
}

// topkValue writes a TopK-TYPE payload of k, width, depth, decay and the
// strings given.
func topkValue(name string, encver int, k, w, d uint64, decay float64, strs ...[]byte) []byte {
	dw := rdb.NewDumpWriter(false)
	m, _ := dw.Module(name, encver)
	m.Unsigned(k)
	m.Unsigned(w)
	m.Unsigned(d)
	m.Double(decay)
	for _, s := range strs {
		m.String(s)
	}
	m.End()
	return dw.Payload(10)
}

// heapStruct is one HeapBucket as 64-bit RedisBloom lays it out.
func heapStruct(fp, n, count uint32) []byte {
	var r [heapBucketSize]byte
	binary.LittleEndian.PutUint32(r[0:], fp)
	binary.LittleEndian.PutUint32(r[4:], n)
	binary.LittleEndian.PutUint64(r[8:], 0x7f0011223344) // an address
	binary.LittleEndian.PutUint32(r[16:], count)
	return r[:]
}

// announce replaces the EOF opcode of a payload's value by a string
// field that announces n bytes and ends there.
func announce(payload []byte, n uint32) []byte {
	v := bytes.Clone(payload[:len(payload)-11])
	v = append(v, 5, 0x80)
	v = binary.BigEndian.AppendUint32(v, n)
	return rdb.EncodeDump(v, 10)
}

// TestRedisBloomRDBRefuses: values RedisBloom's load refuses or could not
// use, and values New could not hold, are errors (never a panic), before
// alloc is asked for anything where the parameters or lengths are wrong;
// alloc's error stops the read; a value cut anywhere is an error.
func TestRedisBloomRDBRefuses(t *testing.T) {
	fpA := hashing.MurmurHash2([]byte("a"), fpSeed)
	fpE := hashing.MurmurHash2([]byte{}, fpSeed)
	b := make([]byte, 2*2*8)
	goodHeap := append(heapStruct(fpA, 1, 5), heapStruct(0, 0, 0)...)
	good := topkValue(RDBTypeName, 0, 2, 2, 2, 0.9, b, goodHeap, []byte("a\x00"), []byte{0})
	s, err := readDumpSketch(good, nil)
	if err != nil || !s.Query([]byte("a")) || s.heap[0].count != 5 || s.heap[1].full {
		t.Fatalf("the good value: %v", err)
	}
	emptyItem := topkValue(RDBTypeName, 0, 2, 2, 2, 0.9, b, append(heapStruct(fpE, 0, 3), heapStruct(0, 0, 0)...), []byte{0}, []byte{0})
	if s, err := readDumpSketch(emptyItem, nil); err != nil || !s.Query([]byte{}) || !s.heap[0].full {
		t.Fatalf("the empty item: %v", err)
	}
	cases := map[string]struct {
		p          []byte
		allocFirst bool // alloc may be asked before the refusal
	}{
		"k 0":             {p: topkValue(RDBTypeName, 0, 0, 2, 2, 0.9, b)},
		"width 0":         {p: topkValue(RDBTypeName, 0, 2, 0, 2, 0.9, b)},
		"depth 0":         {p: topkValue(RDBTypeName, 0, 2, 2, 0, 0.9, b)},
		"k over 32 bits":  {p: topkValue(RDBTypeName, 0, 1<<32+2, 2, 2, 0.9, b)},
		"k over MaxK":     {p: topkValue(RDBTypeName, 0, MaxK+1, 2, 2, 0.9, b)},
		"w·d over bound":  {p: topkValue(RDBTypeName, 0, 2, 1<<20, 1<<20, 0.9, b)},
		"decay 0":         {p: topkValue(RDBTypeName, 0, 2, 2, 2, 0, b)},
		"decay 1.5":       {p: topkValue(RDBTypeName, 0, 2, 2, 2, 1.5, b)},
		"decay NaN":       {p: topkValue(RDBTypeName, 0, 2, 2, 2, math.NaN(), b)},
		"newer encver":    {p: topkValue(RDBTypeName, 1, 2, 2, 2, 0.9, b, goodHeap, []byte("a\x00"), []byte{0})},
		"other type":      {p: topkValue("CMSk-TYPE", 0, 2, 2, 2, 0.9, b, goodHeap, []byte("a\x00"), []byte{0})},
		"short buckets":   {p: topkValue(RDBTypeName, 0, 2, 2, 2, 0.9, b[1:], goodHeap, []byte("a\x00"), []byte{0})},
		"short heap":      {p: topkValue(RDBTypeName, 0, 2, 2, 2, 0.9, b, goodHeap[1:], []byte("a\x00"), []byte{0}), allocFirst: true},
		"missing item":    {p: topkValue(RDBTypeName, 0, 2, 2, 2, 0.9, b, goodHeap, []byte("a\x00")), allocFirst: true},
		"extra field":     {p: topkValue(RDBTypeName, 0, 2, 2, 2, 0.9, b, goodHeap, []byte("a\x00"), []byte{0}, []byte{0}), allocFirst: true},
		"no NUL":          {p: topkValue(RDBTypeName, 0, 2, 2, 2, 0.9, b, append(heapStruct(fpA, 2, 5), heapStruct(0, 0, 0)...), []byte("a\x01"), []byte{0}), allocFirst: true},
		"NUL-only not 0":  {p: topkValue(RDBTypeName, 0, 2, 2, 2, 0.9, b, goodHeap, []byte("a\x00"), []byte{1}), allocFirst: true},
		"empty string":    {p: topkValue(RDBTypeName, 0, 2, 2, 2, 0.9, b, goodHeap, []byte("a\x00"), []byte{}), allocFirst: true},
		"length mismatch": {p: topkValue(RDBTypeName, 0, 2, 2, 2, 0.9, b, append(heapStruct(fpA, 3, 5), heapStruct(0, 0, 0)...), []byte("a\x00"), []byte{0}), allocFirst: true},
		"cut at a NUL":    {p: topkValue(RDBTypeName, 0, 2, 2, 2, 0.9, b, append(heapStruct(hashing.MurmurHash2([]byte("a\x00b"), fpSeed), 3, 5), heapStruct(0, 0, 0)...), []byte("a\x00"), []byte{0}), allocFirst: true},
		"wrong fp":        {p: topkValue(RDBTypeName, 0, 2, 2, 2, 0.9, b, append(heapStruct(fpA+1, 1, 5), heapStruct(0, 0, 0)...), []byte("a\x00"), []byte{0}), allocFirst: true},
		"no item, fp":     {p: topkValue(RDBTypeName, 0, 2, 2, 2, 0.9, b, append(heapStruct(fpA, 1, 5), heapStruct(0, 0, 0)...), []byte{0}, []byte{0}), allocFirst: true},
		"no item, count":  {p: topkValue(RDBTypeName, 0, 2, 2, 2, 0.9, b, append(heapStruct(0, 0, 5), heapStruct(0, 0, 0)...), []byte("a\x00"), []byte{0}), allocFirst: true},
		"item too long":   {p: announce(topkValue(RDBTypeName, 0, 1, 2, 2, 0.9, b, heapStruct(fpA, MaxItemLen+1, 5)), MaxItemLen+2), allocFirst: true},
	}
	for name, c := range cases {
		called := false
		_, err := readDumpSketch(c.p, func(int64) error { called = true; return nil })
		if err == nil {
			t.Errorf("%s: accepted", name)
		} else if called && !c.allocFirst {
			t.Errorf("%s: alloc asked before the refusal (%v)", name, err)
		}
	}
	value := good[:len(good)-10]
	for cut := range len(value) - 1 {
		if _, err := readDumpSketch(rdb.EncodeDump(value[:cut], 10), nil); err == nil {
			t.Errorf("value cut at %d of %d bytes accepted", cut, len(value))
		}
	}
	errFull := errors.New("over maxmemory")
	if _, err := readDumpSketch(good, func(int64) error { return errFull }); !errors.Is(err, errFull) {
		t.Fatalf("alloc's error: %v", err)
	}
	if err := new(Sketch).WriteRedisBloomRDB(nil); !errors.Is(err, ErrParam) {
		t.Fatalf("zero sketch written: %v", err)
	}
}

// FuzzReadRedisBloomRDB: any value (given a right footer) reads as a
// sketch or an error, never a panic, with alloc bounding what it
// allocates; a sketch read writes back to a value that reads back the
// same. Seeded with the recorded TOPK payloads.
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
	f.Fuzz(func(t *testing.T, value []byte) {
		var total int64
		limit := func(n int64) error {
			if total += n; total > 1<<24 {
				return errors.New("too big")
			}
			return nil
		}
		s, err := readDumpSketch(rdb.EncodeDump(value, 10), limit)
		if err != nil {
			return
		}
		g, err := readDumpSketch(dumpOf(t, s, true), nil)
		if err != nil || !sameSketch(g, s) {
			t.Fatalf("written back: %v", err)
		}
		s.Add([]byte("x"))
		s.List(nil)
		s.Count([]byte("x"))
	})
}
