package bloom

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"hash/crc32"
	"io"
	"os"
	"runtime"
	"testing"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/format"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// goldenFilter is the small filter whose bytes are pinned in
// testdata/bloom-v1.golden: a change to these bytes breaks every file ever
// written, so the golden file is only rewritten on purpose (-update).
func goldenFilter(s hashing.Scheme) *Filter {
	f := must(New(100, 3, WithScheme(s), WithSeed(1)))
	for _, k := range []string{"a", "b", "c"} {
		f.AddString(k)
	}
	return f
}

func TestGolden(t *testing.T) {
	for _, s := range allSchemes() {
		name := "testdata/bloom-" + s.String() + "-v1.golden"
		got, err := goldenFilter(s).MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if *update {
			if err := os.WriteFile(name, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(name)
		if err != nil {
			t.Fatalf("%v (run go test -update to create)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: encoding changed:\n got %x\nwant %x", name, got, want)
		}
		var g Filter
		if err := g.UnmarshalBinary(want); err != nil {
			t.Fatal(err)
		}
		if !g.Equal(goldenFilter(s)) || g.N() != 3 || !g.ContainsString("a") {
			t.Errorf("%s: decoded filter differs", name)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	for _, s := range allSchemes() {
		for _, m := range []uint64{1, 63, 64, 65, 100003} {
			f := must(New(m, 4, WithScheme(s), WithSeed(m)))
			f.AddBatch(keyset(200, m))
			f.SetCapacity(3 * m)
			var buf bytes.Buffer
			n, err := f.WriteTo(&buf)
			if err != nil || n != int64(buf.Len()) {
				t.Fatalf("WriteTo: %d, %v (buffer %d)", n, err, buf.Len())
			}
			buf.WriteString("trailing data belongs to the next reader")
			var g Filter
			rn, err := g.ReadFrom(&buf)
			if err != nil || rn != n {
				t.Fatalf("ReadFrom: %d, %v", rn, err)
			}
			if !g.Equal(f) || g.N() != f.N() || g.Seed() != f.Seed() || g.Scheme() != s || g.Capacity() != 3*m {
				t.Fatalf("%v m=%d: round trip differs", s, m)
			}
			if buf.String() != "trailing data belongs to the next reader" {
				t.Fatal("ReadFrom read past the end of the filter")
			}
		}
	}
}

// TestCorruptInput: every truncation and every single-byte change of a
// valid file is rejected with an error (not a panic), and the receiver is
// left as it was.
func TestCorruptInput(t *testing.T) {
	data, _ := goldenFilter(hashing.Enhanced).MarshalBinary()
	sentinel := goldenFilter(hashing.Double)
	check := func(what string, b []byte, stream bool) {
		g := sentinel.Clone()
		err := g.UnmarshalBinary(b)
		if err == nil {
			t.Fatalf("%s: accepted", what)
		}
		if !errors.Is(err, format.ErrFormat) {
			t.Fatalf("%s: error %v does not wrap ErrFormat", what, err)
		}
		if !g.Equal(sentinel) || g.N() != sentinel.N() {
			t.Fatalf("%s: receiver changed", what)
		}
		var r Filter
		if _, err := r.ReadFrom(bytes.NewReader(b)); stream && err == nil {
			t.Fatalf("%s: ReadFrom accepted", what)
		}
	}
	for i := 0; i < len(data); i++ {
		check("truncated", data[:i], true)
	}
	for i := range data {
		for _, x := range []byte{0x01, 0x80, 0xff} {
			b := bytes.Clone(data)
			b[i] ^= x
			check("flipped", b, true)
		}
	}
	// A stream may continue after the file (ReadFrom stops at its end), but
	// UnmarshalBinary takes exactly one file.
	check("trailing", append(bytes.Clone(data), 0), false)
	if err := new(Filter).UnmarshalBinary(data[:10]); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("truncation should wrap io.ErrUnexpectedEOF: %v", err)
	}
}

// hostileHeader returns a header with a valid header checksum that claims
// the given parameters and payload length.
func hostileHeader(m uint64, k uint32, payload uint64) []byte {
	b := make([]byte, format.HeaderSize)
	copy(b, format.Magic)
	binary.LittleEndian.PutUint16(b[4:], format.Version)
	b[6] = byte(format.KindBloom)
	b[7] = byte(hashing.Double)
	binary.LittleEndian.PutUint32(b[16:], 28)
	binary.LittleEndian.PutUint64(b[20:], payload)
	binary.LittleEndian.PutUint32(b[28:], crc32.Checksum(b[:28], crc32.MakeTable(crc32.Castagnoli)))
	b = binary.LittleEndian.AppendUint64(b, m)
	b = binary.LittleEndian.AppendUint32(b, k)
	b = binary.LittleEndian.AppendUint64(b, 0)
	b = binary.LittleEndian.AppendUint64(b, 0)
	return append(b, make([]byte, 100)...)
}

func TestHostileSizes(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, c := range []struct {
		m       uint64
		k       uint32
		payload uint64
	}{
		{hashing.MaxM, 3, hashing.MaxM / 8}, // consistent but the stream is 100 bytes
		{hashing.MaxM, 3, 1 << 62},          // inconsistent payload length
		{0, 3, 0},
		{1 << 60, 3, 1 << 57},
		{100, 0, 16},
		{100, 1 << 31, 16},
	} {
		var f Filter
		if err := f.UnmarshalBinary(hostileHeader(c.m, c.k, c.payload)); err == nil {
			t.Fatalf("accepted hostile header %+v", c)
		}
		if _, err := f.ReadFrom(bytes.NewReader(hostileHeader(c.m, c.k, c.payload))); err == nil {
			t.Fatalf("ReadFrom accepted hostile header %+v", c)
		}
	}
	runtime.ReadMemStats(&after)
	if d := after.TotalAlloc - before.TotalAlloc; d > 16<<20 {
		t.Errorf("hostile headers made the decoder allocate %d bytes", d)
	}
}

func FuzzUnmarshal(f *testing.F) {
	for _, s := range allSchemes() {
		b, _ := goldenFilter(s).MarshalBinary()
		f.Add(b)
	}
	f.Add(hostileHeader(1000, 3, 128))
	f.Fuzz(func(t *testing.T, data []byte) {
		var g Filter
		if err := g.UnmarshalBinary(data); err != nil {
			return
		}
		again, err := g.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, data) {
			t.Fatal("accepted input does not re-encode to itself")
		}
		g.Add(data)
		if !g.Contains(data) {
			t.Fatal("false negative on decoded filter")
		}
	})
}
