package choices

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
// testdata/choices-*-v1.golden; the offline one pins Build too.
func goldenFilter(s hashing.Scheme, rounds int) *Filter {
	cfg := Config{M: 100, K: 3, C: 2, Scheme: s, Seed: 1, TieSeed: 2}
	keys := [][]byte{[]byte("a"), []byte("b"), []byte("c")}
	if rounds > 0 {
		return must(Build(cfg, keys, rounds))
	}
	f := must(New(cfg))
	f.AddBatch(keys)
	return f
}

func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		s      hashing.Scheme
		rounds int
		name   string
	}{
		{hashing.Independent, 0, "independent"},
		{hashing.Double, 0, "double"},
		{hashing.Enhanced, 0, "enhanced"},
		{hashing.Independent, 3, "independent-offline"},
	} {
		name := "testdata/choices-" + tc.name + "-v1.golden"
		got, err := goldenFilter(tc.s, tc.rounds).MarshalBinary()
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
		if !g.Equal(goldenFilter(tc.s, tc.rounds)) || g.N() != 3 || g.Rounds() != tc.rounds || !g.ContainsString("a") {
			t.Errorf("%s: decoded filter differs", name)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	for _, s := range groupSchemes {
		for _, m := range []uint64{1, 63, 64, 65, 100003} {
			f := must(New(Config{M: m, K: 4, C: 3, Scheme: s, Seed: m, TieSeed: 5}))
			f.AddBatch(keyset(200, m))
			f.SetCapacity(3 * m)
			var buf bytes.Buffer
			n, err := f.WriteTo(&buf)
			if err != nil || n != int64(buf.Len()) {
				t.Fatalf("WriteTo: %d, %v (buffer %d)", n, err, buf.Len())
			}
			buf.WriteString("next")
			var g Filter
			rn, err := g.ReadFrom(&buf)
			if err != nil || rn != n {
				t.Fatalf("ReadFrom: %d, %v", rn, err)
			}
			if !g.Equal(f) || g.N() != f.N() || g.C() != 3 || g.Scheme() != s || g.Capacity() != 3*m || g.rng != f.rng {
				t.Fatalf("%v m=%d: round trip differs", s, m)
			}
			if buf.String() != "next" {
				t.Fatal("ReadFrom read past the end of the filter")
			}
			// The generator state travels with the file: adding after a
			// reload makes the same choices as adding without one.
			more := keyset(100, m+1)
			f.AddBatch(more)
			g.AddBatch(more)
			if !g.Equal(f) {
				t.Fatalf("%v m=%d: adds after reload differ", s, m)
			}
		}
	}
}

// Every truncation and every single-byte change of a valid file is
// rejected with an error wrapping ErrFormat, and the receiver is unchanged.
func TestCorruptInput(t *testing.T) {
	data, _ := goldenFilter(hashing.Enhanced, 0).MarshalBinary()
	sentinel := goldenFilter(hashing.Double, 2)
	check := func(what string, b []byte) {
		g := sentinel.Clone()
		err := g.UnmarshalBinary(b)
		if err == nil {
			t.Fatalf("%s: accepted", what)
		}
		if !errors.Is(err, format.ErrFormat) {
			t.Fatalf("%s: error %v does not wrap ErrFormat", what, err)
		}
		if !g.Equal(sentinel) || g.N() != sentinel.N() || g.Rounds() != sentinel.Rounds() {
			t.Fatalf("%s: receiver changed", what)
		}
		if _, err := g.ReadFrom(bytes.NewReader(b)); err == nil && what != "trailing" {
			t.Fatalf("%s: ReadFrom accepted", what)
		}
	}
	for i := 0; i < len(data); i++ {
		check("truncated", data[:i])
	}
	for i := range data {
		for _, x := range []byte{0x01, 0x80, 0xff} {
			b := bytes.Clone(data)
			b[i] ^= x
			check("flipped", b)
		}
	}
	check("trailing", append(bytes.Clone(data), 0))
	if err := new(Filter).UnmarshalBinary(data[:10]); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("truncation should wrap io.ErrUnexpectedEOF: %v", err)
	}
}

// hostileFile returns a file with valid checksums that claims the given
// parameters; the payload is payload bytes long (declared) but only
// `have` bytes are present.
func hostileFile(scheme hashing.Scheme, m uint64, k uint32, c uint8, payload uint64, have int) []byte {
	b := make([]byte, format.HeaderSize)
	copy(b, format.Magic)
	binary.LittleEndian.PutUint16(b[4:], format.Version)
	b[6] = byte(format.KindChoices)
	b[7] = byte(scheme)
	binary.LittleEndian.PutUint32(b[16:], paramsLen)
	binary.LittleEndian.PutUint64(b[20:], payload)
	binary.LittleEndian.PutUint32(b[28:], crc32.Checksum(b[:28], crc32.MakeTable(crc32.Castagnoli)))
	b = binary.LittleEndian.AppendUint64(b, m)
	b = binary.LittleEndian.AppendUint32(b, k)
	b = append(b, c)
	b = binary.LittleEndian.AppendUint64(b, 0)
	b = binary.LittleEndian.AppendUint64(b, 0)
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = binary.LittleEndian.AppendUint64(b, 0)
	b = append(b, make([]byte, have)...)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))
}

func TestHostileSizes(t *testing.T) {
	if err := new(Filter).UnmarshalBinary(hostileFile(hashing.Double, 128, 3, 2, 16, 16)); err != nil {
		t.Fatalf("the well-formed base case is rejected: %v", err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, c := range []struct {
		s       hashing.Scheme
		m       uint64
		k       uint32
		c       uint8
		payload uint64
	}{
		{hashing.Double, hashing.MaxM, 3, 2, hashing.MaxM / 8}, // consistent, but the stream is short
		{hashing.Double, hashing.MaxM, 3, 2, 1 << 62},
		{hashing.Double, 0, 3, 2, 0},
		{hashing.Double, 1 << 60, 3, 2, 1 << 57},
		{hashing.Double, 128, 0, 2, 16},
		{hashing.Double, 128, 65, 2, 16},
		{hashing.Double, 128, 3, 0, 16},
		{hashing.Double, 128, 3, MaxC + 1, 16},
		{hashing.Partition, 128, 4, 2, 16},
		{hashing.Custom, 128, 3, 2, 16},
		{0, 128, 3, 2, 16},
	} {
		var f Filter
		if err := f.UnmarshalBinary(hostileFile(c.s, c.m, c.k, c.c, c.payload, 16)); !errors.Is(err, format.ErrFormat) {
			t.Fatalf("hostile %+v: %v", c, err)
		}
	}
	runtime.ReadMemStats(&after)
	if d := after.TotalAlloc - before.TotalAlloc; d > 16<<20 {
		t.Errorf("hostile headers made the decoder allocate %d bytes", d)
	}
	// Bits beyond m are rejected.
	b := hostileFile(hashing.Double, 100, 3, 2, 16, 16)
	b[format.HeaderSize+paramsLen+15] = 0x80
	b = append(b[:len(b)-4], 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.Checksum(b[:len(b)-4], crc32.MakeTable(crc32.Castagnoli)))
	if err := new(Filter).UnmarshalBinary(b); !errors.Is(err, format.ErrFormat) {
		t.Errorf("bits beyond m accepted: %v", err)
	}
}

func FuzzUnmarshal(f *testing.F) {
	for _, s := range []hashing.Scheme{hashing.Independent, hashing.Double, hashing.Enhanced} {
		b, _ := goldenFilter(s, 0).MarshalBinary()
		f.Add(b)
	}
	b, _ := goldenFilter(hashing.Independent, 3).MarshalBinary()
	f.Add(b)
	f.Add(hostileFile(hashing.Double, 128, 3, 2, 16, 16))
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
