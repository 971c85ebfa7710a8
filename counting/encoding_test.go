package counting

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

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/format"
	"github.com/bloomlab/bloomlab/internal/kind"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

const goldenPath = "testdata/counting-v1.golden"

// goldenFilter is the filter of the golden file: m = 64, k = 3, 4-bit
// counters, seed 1, keys "a", "b", "c".
func goldenFilter(t testing.TB) *Filter {
	f, err := New(64, 3, WithSeed(1), WithCounterBits(4))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a", "b", "c"} {
		f.AddString(k)
	}
	return f
}

func TestGolden(t *testing.T) {
	got, err := goldenFilter(t).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.MkdirAll(filepath.Dir(goldenPath), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(goldenPath, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("encoding changed:\n got %x\nwant %x\n(a format change needs a new version; -update only for a deliberate change)", got, want)
	}
	// Spot-check the layout documented in encoding.go.
	if len(want) != format.HeaderSize+29+32+4 {
		t.Fatalf("golden file is %d bytes, want %d", len(want), format.HeaderSize+29+32+4)
	}
	if want[6] != byte(format.KindCounting) || want[7] != byte(hashing.DefaultScheme) || binary.LittleEndian.Uint64(want[8:]) != 1 {
		t.Fatal("golden header: kind, scheme or seed wrong")
	}
	p := want[format.HeaderSize:]
	if binary.LittleEndian.Uint64(p) != 64 || binary.LittleEndian.Uint32(p[8:]) != 3 || p[12] != 4 || binary.LittleEndian.Uint64(p[13:]) != 3 {
		t.Fatalf("golden parameter block %x", p[:21])
	}
	var g Filter
	if err := g.UnmarshalBinary(want); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a", "b", "c"} {
		if !g.ContainsString(k) || g.CountString(k) == 0 {
			t.Fatalf("decoded golden filter lacks %q", k)
		}
	}
}

// TestRoundTrip: every width, with saturated counters, through
// MarshalBinary/UnmarshalBinary, WriteTo/ReadFrom and Decode.
func TestRoundTrip(t *testing.T) {
	for _, w := range widths {
		for _, s := range []hashing.Scheme{hashing.Enhanced, hashing.PrimePartition, hashing.Independent} {
			f, err := New(333, 5, WithCounterBits(w), WithScheme(s), WithSeed(99))
			if err != nil {
				t.Fatal(err)
			}
			for i := range 150 {
				f.Add(key("r", i))
			}
			for range 40 {
				f.AddString("hot")
			}
			for i := range 30 {
				if err := f.Remove(key("r", i)); err != nil {
					t.Fatal(err)
				}
			}
			if w <= 4 && f.Saturated() == 0 {
				t.Fatalf("w=%d: no saturated counter to round-trip", w)
			}
			data, err := f.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if want := format.HeaderSize + 29 + 8*int((333*uint64(w)+63)/64) + 4; s != hashing.PrimePartition && len(data) != want {
				t.Fatalf("w=%d: %d bytes, want %d", w, len(data), want)
			}
			check := func(how string, g *Filter) {
				t.Helper()
				if !g.Equal(f) || g.N() != f.N() || g.Saturated() != f.Saturated() || g.CounterBits() != w || g.Kind() != "counting" {
					t.Fatalf("w=%d %v %s: decoded filter differs", w, s, how)
				}
				for i := range 150 {
					if g.Count(key("r", i)) != f.Count(key("r", i)) {
						t.Fatalf("w=%d %v %s: Count differs", w, s, how)
					}
				}
				again, err := g.MarshalBinary()
				if err != nil || !bytes.Equal(again, data) {
					t.Fatalf("w=%d %v %s: re-encoding differs", w, s, how)
				}
				checkInvariants(t, g)
			}
			var g Filter
			if err := g.UnmarshalBinary(data); err != nil {
				t.Fatal(err)
			}
			check("UnmarshalBinary", &g)

			// ReadFrom reads exactly one file: two back to back.
			var buf bytes.Buffer
			n1, err := f.WriteTo(&buf)
			if err != nil || n1 != int64(len(data)) {
				t.Fatalf("WriteTo = %d, %v", n1, err)
			}
			f.WriteTo(&buf)
			var h1, h2 Filter
			if n, err := h1.ReadFrom(&buf); err != nil || n != n1 {
				t.Fatalf("ReadFrom = %d, %v", n, err)
			}
			if _, err := h2.ReadFrom(&buf); err != nil || buf.Len() != 0 {
				t.Fatalf("second ReadFrom: %v, %d bytes left", err, buf.Len())
			}
			check("ReadFrom", &h1)
			check("ReadFrom 2", &h2)

			// The registry's decoder (kind.Decode, as the root loader
			// reads files) finds this package's.
			dec, err := kind.Decode(format.NewDecoder(bytes.NewReader(data)))
			if err != nil {
				t.Fatal(err)
			}
			check("kind.Decode", dec.(*Filter))
		}
	}
}

func TestWriteCustom(t *testing.T) {
	f, _ := New(10, 2, WithIndexFunc(func(d hashing.Digest, i int) uint64 { return uint64(i) }))
	if _, err := f.MarshalBinary(); err == nil || !strings.HasPrefix(err.Error(), "counting: ") {
		t.Fatalf("MarshalBinary of a custom filter: %v", err)
	}
}

// victim returns a non-empty filter to decode into, and a copy to compare
// it with afterwards.
func victim(t testing.TB) (*Filter, *Filter) {
	v, err := New(100, 2, WithCounterBits(8), WithSeed(3))
	if err != nil {
		t.Fatal(err)
	}
	v.AddString("victim")
	return v, v.Clone()
}

func untouched(t testing.TB, v, before *Filter, what string) {
	t.Helper()
	if !v.Equal(before) || v.N() != before.N() || v.Saturated() != before.Saturated() || v.M() != 100 || v.CounterBits() != 8 {
		t.Fatalf("%s: failed decode modified the receiver", what)
	}
}

// TestCorrupt: every truncation and every single-byte change of the golden
// file is an error wrapping format.ErrFormat, not a panic, and leaves the
// receiver untouched.
func TestCorrupt(t *testing.T) {
	good, err := goldenFilter(t).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	v, before := victim(t)
	for n := 0; n < len(good); n++ {
		err := v.UnmarshalBinary(good[:n])
		if !errors.Is(err, format.ErrFormat) {
			t.Fatalf("truncated to %d bytes: %v", n, err)
		}
		if n > 0 && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("truncated to %d bytes: %v does not wrap io.ErrUnexpectedEOF", n, err)
		}
		untouched(t, v, before, "truncation")
		if _, err := v.ReadFrom(bytes.NewReader(good[:n])); err == nil {
			t.Fatalf("ReadFrom of %d bytes succeeded", n)
		}
		untouched(t, v, before, "truncation ReadFrom")
	}
	if err := v.UnmarshalBinary(append(append([]byte(nil), good...), 0)); !errors.Is(err, format.ErrFormat) {
		t.Fatalf("trailing byte: %v", err)
	}
	untouched(t, v, before, "trailing byte")
	bad := make([]byte, len(good))
	for i := range good {
		for _, x := range []byte{0x01, 0x10, 0x80, 0xFF} {
			copy(bad, good)
			bad[i] ^= x
			if err := v.UnmarshalBinary(bad); !errors.Is(err, format.ErrFormat) {
				t.Fatalf("byte %d ^ %#x: %v", i, x, err)
			}
			untouched(t, v, before, "flip")
		}
	}
}

// reseal recomputes the header and file checksums of a file, so that tests
// (and the fuzzer) reach the validation behind them.
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

// TestInvalidContent: well-formed files (valid checksums) whose content is
// invalid.
func TestInvalidContent(t *testing.T) {
	good, _ := goldenFilter(t).MarshalBinary()
	const P = format.HeaderSize // parameter block offset
	const W = P + 29            // payload offset
	cases := []struct {
		name, want string
		edit       func(b []byte)
	}{
		{"scheme 0", "unknown hash scheme 0", func(b []byte) { b[7] = 0 }},
		{"scheme custom", "unknown hash scheme 255", func(b []byte) { b[7] = 255 }},
		{"scheme 9", "unknown hash scheme 9", func(b []byte) { b[7] = 9 }},
		{"m=0", "m = 0", func(b []byte) { binary.LittleEndian.PutUint64(b[P:], 0) }},
		{"m=2^48+1", "m = 281474976710657", func(b []byte) { binary.LittleEndian.PutUint64(b[P:], 1<<48+1) }},
		{"m=65", "payload of 32 bytes", func(b []byte) { binary.LittleEndian.PutUint64(b[P:], 65) }},
		{"k=0", "k = 0", func(b []byte) { binary.LittleEndian.PutUint32(b[P+8:], 0) }},
		{"k=65", "k = 65", func(b []byte) { binary.LittleEndian.PutUint32(b[P+8:], 65) }},
		{"w=3", "counter bits = 3", func(b []byte) { b[P+12] = 3 }},
		{"w=0", "counter bits = 0", func(b []byte) { b[P+12] = 0 }},
		{"w=64", "counter bits = 64", func(b []byte) { b[P+12] = 64 }},
		{"w=8", "payload of 32 bytes", func(b []byte) { b[P+12] = 8 }},
		{"w=2", "payload of 32 bytes", func(b []byte) { b[P+12] = 2 }},
		{"n=4", "counters sum to 9", func(b []byte) { binary.LittleEndian.PutUint64(b[P+13:], 4) }},
		{"counter+1", "counters sum to 10", func(b []byte) { b[W+5]++ }},
		{"partition m", "not a valid size", func(b []byte) { b[7] = byte(hashing.Partition) }},
		{"import scheme", "imported Bloom filter's", func(b []byte) { b[7] = byte(hashing.BoomFilters) }},
		{"kind", "not a counting", func(b []byte) { b[6] = byte(format.KindBloom) }},
	}
	v, before := victim(t)
	for _, c := range cases {
		b := append([]byte(nil), good...)
		c.edit(b)
		err := v.UnmarshalBinary(reseal(b))
		if !errors.Is(err, format.ErrFormat) || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "counting: ") {
			t.Errorf("%s: %v, want an ErrFormat naming %q", c.name, err, c.want)
		}
		untouched(t, v, before, c.name)
	}

	// A counter past the last one (m = 63 leaves the top nibble spare).
	f, _ := New(63, 3, WithSeed(1))
	f.AddString("a")
	b, _ := f.MarshalBinary()
	b[W+31] |= 0x10
	if err := v.UnmarshalBinary(reseal(b)); !errors.Is(err, format.ErrFormat) || !strings.Contains(err.Error(), "beyond the last counter") {
		t.Errorf("bits past m: %v", err)
	}
	untouched(t, v, before, "bits past m")
}

// TestHostileHeader: a header claiming the largest valid array (2^48 bits
// of counters), followed by a short stream, fails fast and allocates little.
func TestHostileHeader(t *testing.T) {
	for _, w := range []uint8{4, 32} {
		m := uint64(hashing.MaxM) / uint64(w)
		var p format.Params
		p.U64(m)
		p.U32(3)
		p.U8(w)
		p.U64(0)
		p.U64(0)
		var buf bytes.Buffer
		e := format.NewEncoder(&buf)
		e.Begin(format.Header{Kind: format.KindCounting, Scheme: uint8(hashing.Double), PayloadLen: m * uint64(w) / 8}, p.Bytes())
		b := buf.Bytes()
		for len(b) < 100 {
			b = append(b, 0xAB)
		}
		v, before := victim(t)
		var err error
		var ms0, ms1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms0)
		err = v.UnmarshalBinary(b)
		runtime.ReadMemStats(&ms1)
		if !errors.Is(err, io.ErrUnexpectedEOF) || !errors.Is(err, format.ErrFormat) {
			t.Fatalf("w=%d: %v, want a truncation error", w, err)
		}
		if a := ms1.TotalAlloc - ms0.TotalAlloc; a > 10<<20 {
			t.Fatalf("w=%d: decoding a 100-byte hostile file allocated %d bytes", w, a)
		}
		untouched(t, v, before, "hostile")
	}
}

func FuzzUnmarshal(f *testing.F) {
	golden, err := goldenFilter(f).MarshalBinary()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(golden)
	f.Add(golden[:40])
	f.Add(reseal(append(golden[:len(golden)-1:len(golden)-1], 0, 0, 0, 0)))
	for _, w := range widths {
		g, _ := New(40, 2, WithCounterBits(w), WithScheme(hashing.Partition))
		for range 5 {
			g.AddString("x")
		}
		b, _ := g.MarshalBinary()
		f.Add(b)
	}
	for _, i := range []int{6, 7, 8, 32, 40, 44, 45, 53, 60} {
		b := append([]byte(nil), golden...)
		b[i] ^= 0x41
		f.Add(b)
		f.Add(reseal(b))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// As given, and with checksums repaired so the content checks run.
		for _, in := range [][]byte{data, reseal(data)} {
			var g Filter
			if err := g.UnmarshalBinary(in); err != nil {
				if !errors.Is(err, format.ErrFormat) {
					t.Fatalf("error %v does not wrap format.ErrFormat", err)
				}
				continue
			}
			out, err := g.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out, in) {
				t.Fatalf("re-encoding differs:\n in %x\nout %x", in, out)
			}
			checkInvariants(t, &g)
			g.AddString("fuzz")
			if !g.ContainsString("fuzz") {
				t.Fatal("false negative in a decoded filter")
			}
			if err := g.RemoveString("fuzz"); err != nil {
				t.Fatal(err)
			}
		}
	})
}
