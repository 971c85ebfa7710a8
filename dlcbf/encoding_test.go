package dlcbf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/bloomlab/bloomlab/internal/format"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// goldenFilter is the filter of variant v's golden file: d = 2, B = 3,
// h = 4, r = 6, c = 1 (dynamic: R = 40), seed 1, keys "a" … "f", "a" again,
// then "c" removed.
func goldenFilter(t testing.TB, v Variant) *Filter {
	cfg := Config{Variant: v, Subtables: 2, Buckets: 3, Cells: 4, RemainderBits: 6, CounterBits: 1, Seed: 1, Ties: Tie(v & 1)}
	if v != Static {
		cfg.BucketBits = 40
	}
	f, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a", "b", "c", "d", "e", "f", "a"} {
		if err := f.AddString(k); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.RemoveString("c"); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestGolden(t *testing.T) {
	for _, v := range variants {
		path := "testdata/dlcbf-" + v.String() + "-v2.golden"
		f := goldenFilter(t, v)
		f.SetCapacity(6)
		got, err := f.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -update to create it)", err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%v: encoding changed:\n got %x\nwant %x", v, got, want)
		}
		if want[6] != byte(format.KindDlcbf) || want[7] != 0 || binary.LittleEndian.Uint64(want[8:]) != 1 || binary.LittleEndian.Uint32(want[16:]) != paramsLen {
			t.Fatalf("%v: golden header wrong", v)
		}
		p := want[format.HeaderSize:]
		if p[0] != byte(v) || p[1] != 2 || p[2] != 4 || p[3] != 6 || p[4] != 1 || binary.LittleEndian.Uint64(p[9:]) != 3 ||
			binary.LittleEndian.Uint64(p[17:]) != 6 || p[25] != byte(v&1) || binary.LittleEndian.Uint64(p[26:]) != 6 {
			t.Fatalf("%v: golden parameter block %x", v, p[:paramsLen])
		}
		var g Filter
		if err := g.UnmarshalBinary(want); err != nil {
			t.Fatal(err)
		}
		if !g.Equal(f) || g.Capacity() != 6 {
			t.Fatalf("%v: decoded golden filter differs", v)
		}
		for _, k := range []string{"a", "b", "d", "e", "f"} {
			if !g.ContainsString(k) {
				t.Fatalf("%v: decoded golden filter lacks %q", v, k)
			}
		}
		if g.CountString("a") < 2 {
			t.Fatalf("%v: Count(a) = %d", v, g.CountString("a"))
		}
	}
}

// TestGoldenV1: files written before the capacity was recorded (a 26-byte
// parameter block) still load, with capacity 0, equal to the filter they
// were written from, and are rewritten in today's layout.
func TestGoldenV1(t *testing.T) {
	for _, v := range variants {
		old, err := os.ReadFile("testdata/dlcbf-" + v.String() + "-v1.golden")
		if err != nil {
			t.Fatal(err)
		}
		if binary.LittleEndian.Uint32(old[16:]) != paramsLenV1 {
			t.Fatalf("%v: v1 fixture has a %d-byte parameter block", v, binary.LittleEndian.Uint32(old[16:]))
		}
		var g Filter
		if err := g.UnmarshalBinary(old); err != nil {
			t.Fatalf("%v: v1 file no longer loads: %v", v, err)
		}
		if want := goldenFilter(t, v); !g.Equal(want) || g.Capacity() != 0 {
			t.Fatalf("%v: v1 file decodes to a different filter", v)
		}
		var h Filter
		if _, err := h.ReadFrom(bytes.NewReader(old)); err != nil || !h.Equal(&g) {
			t.Fatalf("%v: ReadFrom of the v1 file: %v", v, err)
		}
		now, err := g.MarshalBinary()
		if err != nil || len(now) != len(old)+8 || binary.LittleEndian.Uint32(now[16:]) != paramsLen {
			t.Fatalf("%v: v1 filter rewritten as %d bytes (%v), want %d in today's layout", v, len(now), err, len(old)+8)
		}
	}
}

func reseal(b []byte) []byte {
	b = append([]byte(nil), b...)
	tab := crc32.MakeTable(crc32.Castagnoli)
	if len(b) >= format.HeaderSize {
		binary.LittleEndian.PutUint32(b[28:], crc32.Checksum(b[:28], tab))
	}
	if len(b) >= format.HeaderSize+4 {
		binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.Checksum(b[:len(b)-4], tab))
	}
	return b
}

func TestRoundTripWriteToReadFrom(t *testing.T) {
	for _, v := range variants {
		f := goldenFilter(t, v)
		var buf bytes.Buffer
		n, err := f.WriteTo(&buf)
		if err != nil || n != int64(buf.Len()) {
			t.Fatalf("WriteTo: %d, %v", n, err)
		}
		buf.WriteString("next file")
		var g Filter
		if m, err := g.ReadFrom(&buf); err != nil || m != n {
			t.Fatalf("ReadFrom: %d, %v", m, err)
		}
		if !g.Equal(f) || buf.String() != "next file" {
			t.Fatalf("%v: round trip differs or read too far", v)
		}
	}
}

// TestCorruptFiles: truncations, flipped bits, invalid content with valid
// checksums; the receiver is untouched every time.
func TestCorruptFiles(t *testing.T) {
	for _, v := range variants {
		good, _ := goldenFilter(t, v).MarshalBinary()
		victim := goldenFilter(t, Static)
		before := victim.Clone()
		check := func(name string, b []byte) {
			t.Helper()
			if err := victim.UnmarshalBinary(b); !errors.Is(err, format.ErrFormat) {
				t.Errorf("%v %s: %v, want ErrFormat", v, name, err)
			}
			if !victim.Equal(before) {
				t.Fatalf("%v %s: receiver changed", v, name)
			}
		}
		for _, n := range []int{0, 10, 32, 40, len(good) - 5, len(good) - 1} {
			check("truncated", good[:n])
		}
		for i := 0; i < len(good); i++ {
			b := append([]byte(nil), good...)
			b[i] ^= 0x10
			check("bit flip", b)
		}
		const P = format.HeaderSize
		for _, edit := range []func(b []byte){
			func(b []byte) { b[P] = 9 },                                       // variant
			func(b []byte) { b[P+1] = 0 },                                     // d
			func(b []byte) { b[P+2] = 16 },                                    // h
			func(b []byte) { b[P+3] = 40 },                                    // r
			func(b []byte) { binary.LittleEndian.PutUint64(b[P+17:], 99) },    // n
			func(b []byte) { binary.LittleEndian.PutUint64(b[P+9:], 1<<41) },  // B
			func(b []byte) { binary.LittleEndian.PutUint32(b[P+5:], 1) },      // R
			func(b []byte) { b[len(b)-5] = 0x80 },                             // bits past the end
			func(b []byte) { b[7] = 3 },                                       // scheme
			func(b []byte) { b[P+34] ^= 0xFF; b[P+35] ^= 0xF0; b[P+37] ^= 1 }, // first bucket
		} {
			b := append([]byte(nil), good...)
			edit(b)
			check("content", reseal(b))
		}
		check("trailing", append(append([]byte(nil), good...), 0))
	}
}

// TestHostileHeader: a header claiming a huge filter followed by a short
// stream fails without allocating the claimed size.
func TestHostileHeader(t *testing.T) {
	// The largest filter a file may hold: 2 × 2^40 buckets of 8 cells of
	// 14 + 2 bits, 2^48 bits.
	var p format.Params
	p.U8(1)
	p.U8(2)
	p.U8(8)
	p.U8(14)
	p.U8(2)
	p.U32(8 * 16)
	p.U64(1 << 40)
	p.U64(0)
	p.U8(0)
	p.U64(0)
	var buf bytes.Buffer
	e := format.NewEncoder(&buf)
	e.Begin(format.Header{Kind: format.KindDlcbf, PayloadLen: MaxBits / 8}, p.Bytes())
	b := buf.Bytes()
	for len(b) < 200 {
		b = append(b, 0xAB)
	}
	var ms0, ms1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms0)
	var g Filter
	err := g.UnmarshalBinary(b)
	runtime.ReadMemStats(&ms1)
	if !errors.Is(err, io.ErrUnexpectedEOF) || !errors.Is(err, format.ErrFormat) {
		t.Fatalf("%v, want a truncation error", err)
	}
	if a := ms1.TotalAlloc - ms0.TotalAlloc; a > 10<<20 {
		t.Fatalf("a 200-byte hostile file allocated %d bytes", a)
	}
}

func FuzzUnmarshal(f *testing.F) {
	for _, v := range variants {
		old, err := os.ReadFile("testdata/dlcbf-" + v.String() + "-v1.golden")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(old)
		gf := goldenFilter(f, v)
		gf.SetCapacity(6)
		g, _ := gf.MarshalBinary()
		f.Add(g)
		f.Add(g[:40])
		for _, i := range []int{32, 33, 34, 35, 36, 41, 49, 57, 60, 64} {
			b := append([]byte(nil), g...)
			b[i] ^= 0x21
			f.Add(reseal(b))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, in := range [][]byte{data, reseal(data)} {
			var g Filter
			if err := g.UnmarshalBinary(in); err != nil {
				if !errors.Is(err, format.ErrFormat) || strings.Contains(err.Error(), "dlcbf: dlcbf:") {
					t.Fatalf("error %v does not wrap format.ErrFormat", err)
				}
				continue
			}
			out, err := g.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			// One encoding per state, except that a file of the first
			// layout is rewritten in today's.
			var h Filter
			if err := h.UnmarshalBinary(out); err != nil || !h.Equal(&g) || h.Capacity() != g.Capacity() ||
				!bytes.Equal(out, in) && binary.LittleEndian.Uint32(in[16:]) != paramsLenV1 {
				t.Fatalf("re-encoding differs (%v):\n in %x\nout %x", err, in, out)
			}
			if err := g.validate(); err != nil {
				t.Fatal(err)
			}
			if g.Bits() > 1<<20 {
				continue
			}
			if err := g.AddString("fuzz"); err != nil {
				if !errors.Is(err, ErrFull) {
					t.Fatal(err)
				}
				continue
			}
			if !g.ContainsString("fuzz") {
				t.Fatal("false negative in a decoded filter")
			}
			if err := g.RemoveString("fuzz"); err != nil {
				t.Fatal(err)
			}
		}
	})
}
