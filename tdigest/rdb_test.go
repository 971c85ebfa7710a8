package tdigest

import (
	"bytes"
	"compress/gzip"
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

// rdbFileDigests reads a recorded RDB file to its end (CRC checked) and
// decodes every TDIS-TYPE value.
func rdbFileDigests(t testing.TB, name string) map[string]*Digest {
	f, err := os.Open("../rdb/testdata/" + name + "-rdb.rdb")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := rdb.NewReader(f, rdb.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*Digest{}
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
		d, err := ReadRedisBloomRDB(e.Module, nil)
		if err != nil {
			t.Fatalf("%s: key %q: %v", name, e.Key, err)
		}
		out[string(e.Key)] = d
	}
}

func readDumpDigest(payload []byte, alloc func(int64) error) (*Digest, error) {
	v, err := rdb.ReadDump(payload, rdb.Limits{MaxFields: 1 << 20})
	if err != nil {
		return nil, err
	}
	if v.Module == nil {
		return nil, errors.New("not a module value")
	}
	d, err := ReadRedisBloomRDB(v.Module, alloc)
	if err != nil {
		return nil, err
	}
	return d, v.Finish()
}

func dumpOf(t testing.TB, d *Digest) []byte {
	w := rdb.NewDumpWriter(true)
	m, err := w.Module(RDBTypeName, RDBEncVer)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.WriteRedisBloomRDB(m); err != nil {
		t.Fatal(err)
	}
	if err := m.End(); err != nil {
		t.Fatal(err)
	}
	return w.Payload(rdb.DumpVersion)
}

// sameDigest reports whether a and b hold the same fields and nodes, bit
// for bit.
func sameDigest(a, b *Digest) bool {
	n := a.merged + a.unmerged
	if math.Float64bits(a.min) != math.Float64bits(b.min) || math.Float64bits(a.max) != math.Float64bits(b.max) ||
		a.compression != b.compression || a.cap != b.cap || a.merged != b.merged || a.unmerged != b.unmerged ||
		a.mergedW != b.mergedW || a.unmergW != b.unmergW || a.totalCompressions != b.totalCompressions ||
		len(a.means) < n || len(b.means) < n || len(a.weights) < n || len(b.weights) < n {
		return false
	}
	for i := range n {
		if math.Float64bits(a.means[i]) != math.Float64bits(b.means[i]) || a.weights[i] != b.weights[i] {
			return false
		}
	}
	return true
}

// TestRedisBloomRDBRecorded: every TDIS-TYPE key of both recorded files
// (RedisBloom 8.6.2 and 2.4.23 on Redis 7.0.15) decodes, from the RDB file
// and from its DUMP payload, to the same digest, which answers the probe
// transcript the real module answered after loading the file
// (TDIGEST.INFO; MIN, MAX, QUANTILE, CDF and TRIMMED_MEAN bit for bit);
// written back, its DUMP payload is Redis's byte for byte (a TDIGEST
// value has no string to compress).
func TestRedisBloomRDBRecorded(t *testing.T) {
	for _, name := range rdbRecordings {
		fromFile := rdbFileDigests(t, name)
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
			d, err := readDumpDigest(payload, nil)
			if err != nil {
				t.Fatalf("%s: %s: %v", name, k.Key, err)
			}
			if f := fromFile[k.Key]; f == nil || !sameDigest(f, d) {
				t.Errorf("%s: %s: the file's value and the DUMP payload's differ", name, k.Key)
			}
			delete(fromFile, k.Key)
			if got := dumpOf(t, d); !bytes.Equal(got, payload) {
				t.Errorf("%s: %s: written back:\n got %x\nwant %x", name, k.Key, got, payload)
			}
			for _, p := range k.Probe {
				checkTDigestProbe(t, name, k.Key, d, p.Args, p.Reply)
			}
		}
		if seen < 8 || len(fromFile) != 0 {
			t.Errorf("%s: %d TDIGEST keys in the json, %d more in the file", name, seen, len(fromFile))
		}
	}
}

// checkTDigestProbe checks one recorded command against the digest:
// doubles by value (render, vectors_test.go), integers exactly.
func checkTDigestProbe(t *testing.T, name, key string, d *Digest, args []string, reply any) {
	t.Helper()
	where := name + ": " + key
	floats := func(a []string) []float64 {
		out := make([]float64, len(a))
		for i, s := range a {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatal(err)
			}
			out[i] = f
		}
		return out
	}
	check := func(got []float64) {
		t.Helper()
		want, ok := reply.([]any)
		if !ok {
			want = []any{reply}
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %v: %d answers, %d recorded", where, args, len(got), len(want))
		}
		for i := range got {
			if render(got[i]) != render(want[i]) {
				t.Errorf("%s: %v: answer %d = %v, want %v", where, args, i, got[i], want[i])
			}
		}
	}
	switch strings.ToUpper(args[0]) {
	case "TYPE":
	case "TDIGEST.INFO":
		r := reply.([]any)
		got := map[string]int64{
			"Compression": d.Compression(), "Capacity": int64(d.Capacity()),
			"Merged nodes": int64(d.MergedNodes()), "Unmerged nodes": int64(d.UnmergedNodes()),
			"Merged weight": d.MergedWeight(), "Unmerged weight": d.UnmergedWeight(),
			"Observations": d.Size(), "Total compressions": d.TotalCompressions(),
			"Memory usage": d.MemoryUsage(),
		}
		for i := 0; i+1 < len(r); i += 2 {
			field := r[i].(map[string]any)["simple"].(string)
			if field == "Memory usage" && name != "redisbloom-8.6.2" {
				continue // 2.4.23's struct is 8 bytes smaller: the server's dialect
			}
			g, ok := got[field]
			if want := r[i+1].(json.Number).String(); !ok || strconv.FormatInt(g, 10) != want {
				t.Errorf("%s: TDIGEST.INFO %s = %d, want %s", where, field, g, want)
			}
		}
	case "TDIGEST.MIN":
		check([]float64{d.Min()})
	case "TDIGEST.MAX":
		check([]float64{d.Max()})
	case "TDIGEST.QUANTILE": // ascending in the probes: one walk, as TDIGEST.QUANTILE makes it
		qs := floats(args[2:])
		out := make([]float64, len(qs))
		d.Quantiles(qs, out)
		check(out)
	case "TDIGEST.CDF":
		var out []float64
		for _, x := range floats(args[2:]) {
			out = append(out, d.CDF(x))
		}
		check(out)
	case "TDIGEST.TRIMMED_MEAN":
		lh := floats(args[2:4])
		check([]float64{d.TrimmedMean(lh[0], lh[1])})
	default:
		t.Errorf("%s: unexpected probe %v", where, args)
	}
}

// TestRedisBloomRDBRoundTrip: writing merges the buffer (the digest after
// the write is the digest compressed, and so is what is written), and the
// digest read back is that digest, bit for bit, answering alike; alloc is
// asked once for MemoryUsage. A digest of one value written and read back
// is as RedisBloom loads it: the unmerged node counted, its value lost
// (mean 0, weight 0), the min and max kept.
func TestRedisBloomRDBRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 3))
	for _, comp := range []int64{1, 5, 100, 500} {
		for _, n := range []int{0, 2, 3, 7, 1000, 5000} {
			d, _ := New(comp)
			for range n {
				if err := d.Add(rng.NormFloat64() * 1e3); err != nil {
					t.Fatal(err)
				}
			}
			want := d.Clone()
			want.Compress()
			var asked []int64
			p := dumpOf(t, d)
			if !sameDigest(d, want) || d.UnmergedNodes() != 0 && n > 1 {
				t.Fatalf("compression %d, %d values: the write did not merge the digest as Compress does", comp, n)
			}
			g, err := readDumpDigest(p, func(b int64) error { asked = append(asked, b); return nil })
			if err != nil {
				t.Fatal(err)
			}
			if !sameDigest(g, want) || !reflect.DeepEqual(asked, []int64{MemoryUsage(comp)}) {
				t.Fatalf("compression %d, %d values: read back differs (alloc asked %v)", comp, n, asked)
			}
			for _, q := range []float64{0, 0.01, 0.5, 0.99, 1} {
				if render(g.Quantile(q)) != render(want.Quantile(q)) || render(g.CDF(q*100)) != render(want.CDF(q*100)) {
					t.Fatalf("compression %d, %d values: answers differ at %v", comp, n, q)
				}
			}
			// Both go on alike.
			for range 700 {
				x := rng.Float64()
				g.Add(x)
				want.Add(x)
			}
			if render(g.Quantile(0.3)) != render(want.Quantile(0.3)) || !sameDigest(g, want) {
				t.Fatalf("compression %d, %d values: diverge after adds", comp, n)
			}
		}
	}
	d, _ := New(100)
	d.Add(5)
	g, err := readDumpDigest(dumpOf(t, d), nil)
	if err != nil {
		t.Fatal(err)
	}
	if g.merged != 0 || g.unmerged != 1 || g.unmergW != 1 || g.means[0] != 0 || g.weights[0] != 0 || g.Min() != 5 || g.Max() != 5 {
		t.Fatalf("one value read back: %+v", g)
	}
	if d.unmerged != 1 || d.means[0] != 5 || d.weights[0] != 1 {
		t.Fatalf("the digest written lost its value: %+v", d)
	}
	// What RedisBloom's loaded digest does next: a node of mean 0 and
	// weight 0 merged with the next value, the weight counting the lost one.
	g.Add(7)
	if got := g.Quantile(0.5); g.merged != 2 || g.mergedW != 2 || g.means[0] != 0 || g.weights[0] != 0 || got != 7 {
		t.Fatalf("after an add: %+v, median %v", g, got)
	}
	if err := new(Digest).WriteRedisBloomRDB(nil); err == nil {
		t.Fatal("the zero Digest written")
	}
}

// tdValue writes a TDIS-TYPE payload: each field a double unless it is
// an integer (an unsigned field, as RedisModule_SaveSigned writes one), or
// a string, a signed field of that number.
func tdValue(name string, encver int, fields ...any) []byte {
	w := rdb.NewDumpWriter(false)
	m, _ := w.Module(name, encver)
	var signed []int // the offsets of the signed fields' opcodes
	for _, f := range fields {
		switch x := f.(type) {
		case float64:
			m.Double(x)
		case int64: // as RedisModule_SaveSigned writes it
			m.Unsigned(uint64(x))
		case int:
			m.Unsigned(uint64(x))
		case uint64:
			m.Unsigned(x)
		case string: // a signed field (opcode 1), which Redis never writes
			// ModuleWriter.Signed writes an unsigned field, as Redis does:
			// its opcode (2) is made 1 below.
			n, _ := strconv.ParseInt(x, 10, 64)
			signed = append(signed, len(w.Payload(10))-10)
			m.Unsigned(uint64(n))
		}
	}
	m.End()
	p := w.Payload(10)
	if len(signed) == 0 {
		return p
	}
	v := p[:len(p)-10]
	for _, off := range signed {
		v[off] = 1
	}
	return rdb.EncodeDump(v, 10)
}

// TestRedisBloomRDBRefuses: values RedisBloom's load would take into a
// broken digest, or could not have written, are errors (never a panic);
// alloc is asked nothing for them, and its error stops the read; a value
// cut anywhere is an error.
func TestRedisBloomRDBRefuses(t *testing.T) {
	inf := math.Inf(1)
	nan := math.NaN()
	// compression, min, max, cap, merged, unmerged, tc, mw, uw, means…, weights…
	good := []any{10.0, 1.0, 3.0, 70, 2, 0, 1, 3.0, 0.0, 1.0, 3.0, 1.0, 2.0}
	with := func(i int, v any) []any { f := append([]any(nil), good...); f[i] = v; return f }
	if d, err := readDumpDigest(tdValue(RDBTypeName, 0, good...), nil); err != nil || d.Quantile(1) != 3 || d.Size() != 3 {
		t.Fatalf("the good value: %v", err)
	}
	one := []any{100.0, 5.0, 5.0, 610, 0, 1, 0, 0.0, 1.0}
	if _, err := readDumpDigest(tdValue(RDBTypeName, 0, one...), nil); err != nil {
		t.Fatalf("one unmerged value: %v", err)
	}
	cases := map[string][]any{
		"compression 0":         with(0, 0.0),
		"compression 1.5":       with(0, 1.5),
		"compression NaN":       with(0, nan),
		"compression huge":      with(0, 0x1p40),
		"cap not compression's": with(3, 71),
		"cap negative":          with(3, -1),
		"merged negative":       with(4, -1),
		"merged over cap":       with(4, 71),
		"unmerged negative":     with(5, -1),
		"unmerged 2":            {100.0, 5.0, 6.0, 610, 0, 2, 0, 0.0, 2.0},
		"unmerged, weight 2":    {100.0, 5.0, 6.0, 610, 0, 1, 0, 0.0, 2.0},
		"unmerged over cap":     {10.0, 5.0, 6.0, 70, 70, 1, 0, 0.0, 0.0},
		"tc negative":           with(6, -1),
		"min NaN":               with(1, nan),
		"max inf":               with(2, inf),
		"merged weight -1":      with(7, -1.0),
		"merged weight 0.5":     with(7, 0.5),
		"merged weight 2^63":    with(7, 0x1p63),
		"merged weight inf":     with(7, inf),
		"weights sum overflow":  {10.0, 1.0, 3.0, 70, 0, 0, 1, 0x1p62 * 1.5, 0x1p62 * 1.5},
		"node weight -1":        with(11, -1.0),
		"node weight NaN":       with(12, nan),
		"node weight 1.5":       with(12, 1.5),
		"node weights overflow": {10.0, 1.0, 3.0, 70, 2, 0, 1, 3.0, 0.0, 1.0, 3.0, 0x1p62 * 1.5, 0x1p62 * 1.5},
		"newer encver":          nil,
		"other type":            nil,
		"an integer for a mean": with(9, int64(1)),
		"a signed for merged":   with(4, "2"),
		"missing weight":        good[:len(good)-1],
		"extra field":           append(append([]any(nil), good...), 1.0),
	}
	for name, f := range cases {
		p := tdValue(RDBTypeName, 0, f...)
		switch name {
		case "newer encver":
			p = tdValue(RDBTypeName, 1, good...)
		case "other type":
			p = tdValue("TopK-TYPE", 0, good...)
		}
		called := false
		if _, err := readDumpDigest(p, func(int64) error { called = true; return nil }); err == nil {
			t.Errorf("%s: accepted", name)
		} else if called && !strings.HasPrefix(name, "node") && !strings.HasPrefix(name, "an integer") && name != "missing weight" && name != "extra field" {
			t.Errorf("%s: alloc asked before the refusal (%v)", name, err)
		}
	}
	value := tdValue(RDBTypeName, 0, good...)
	value = value[:len(value)-10]
	for cut := range len(value) - 1 {
		if _, err := readDumpDigest(rdb.EncodeDump(value[:cut], 10), nil); err == nil {
			t.Errorf("value cut at %d of %d bytes accepted", cut, len(value))
		}
	}
	errFull := errors.New("over maxmemory")
	if _, err := readDumpDigest(tdValue(RDBTypeName, 0, good...), func(int64) error { return errFull }); !errors.Is(err, errFull) {
		t.Fatalf("alloc's error: %v", err)
	}
}

// FuzzReadRedisBloomRDB: any value (given a right footer) reads as a
// digest or an error, never a panic; a digest read answers queries and
// takes adds without a panic, and writes back (merged, as RedisBloom
// saves) to a value that reads back the same digest. Seeded with the
// recorded TDIGEST payloads.
func FuzzReadRedisBloomRDB(f *testing.F) {
	for _, name := range rdbRecordings {
		for _, k := range loadRDBRecorded(f, name) {
			if k.Type == RDBTypeName {
				p, _ := hex.DecodeString(k.Dump)
				f.Add(p[:len(p)-10])
			}
		}
	}
	f.Fuzz(func(t *testing.T, value []byte) {
		limit := func(n int64) error {
			if n > 1<<24 {
				return errors.New("too big")
			}
			return nil
		}
		d, err := readDumpDigest(rdb.EncodeDump(value, 10), limit)
		if err != nil {
			return
		}
		d.Quantile(0.5)
		d.CDF(1)
		d.TrimmedMean(0.1, 0.9)
		d.Rank(1)
		d.ByRank(1)
		d.Add(1)
		w := d.Clone()
		g, err := readDumpDigest(dumpOf(t, d), nil)
		if err != nil {
			t.Fatalf("written back: %v", err)
		}
		w.Compress()
		if d.unmerged == 0 && !sameDigest(g, w) {
			t.Fatal("written back: another digest")
		}
	})
}
