package dleft

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"hash/crc32"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/bloomlab/bloomlab/internal/format"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// goldenFilter: a small 64-bit filter with a stashed key, pinned in
// testdata/dleft-v1.golden.
func goldenFilter() *Filter {
	f := must(New(Config{Buckets: 2, Seed: 1}))
	for _, k := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p", "q", "r", "s", "t", "u", "v", "w", "x", "y", "z", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "!", "?", "#", "%", "&"} {
		f.AddString(k)
	}
	f.SetCapacity(24)
	return f
}

func TestGolden(t *testing.T) {
	const name = "testdata/dleft-v1.golden"
	f := goldenFilter()
	if f.Overflows() == 0 {
		t.Fatal("golden filter should exercise the stash")
	}
	got, err := f.MarshalBinary()
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
		t.Errorf("encoding changed:\n got %x\nwant %x", got, want)
	}
	var g Filter
	if err := g.UnmarshalBinary(want); err != nil {
		t.Fatal(err)
	}
	if !g.Equal(f) || g.N() != f.N() || g.Stored() != f.Stored() || g.Capacity() != 24 || !g.ContainsString("&") {
		t.Error("decoded filter differs")
	}
}

func TestRoundTrip(t *testing.T) {
	for _, c := range allConfigs(16) {
		c.Seed = 77
		f := must(New(c))
		for j := 0; j < 300; j++ {
			f.AddHash(key(2, j))
		}
		var buf bytes.Buffer
		n, err := f.WriteTo(&buf)
		if err != nil || n != int64(buf.Len()) {
			t.Fatalf("WriteTo: %d, %v", n, err)
		}
		buf.WriteString("next")
		var g Filter
		if _, err := g.ReadFrom(&buf); err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if !g.Equal(f) || g.N() != f.N() || g.Stored() != f.Stored() || buf.String() != "next" {
			t.Fatalf("%+v: round trip differs", c)
		}
		for j := 0; j < 300; j++ {
			if !g.ContainsHash(key(2, j)) {
				t.Fatalf("%+v: false negative after decoding", c)
			}
		}
		// The decoded filter keeps working.
		for j := 300; j < 400; j++ {
			g.AddHash(key(2, j))
			f.AddHash(key(2, j))
		}
		if !g.Equal(f) {
			t.Fatalf("%+v: decoded filter evolves differently", c)
		}
	}
}

func TestCorruptInput(t *testing.T) {
	data, _ := goldenFilter().MarshalBinary()
	sentinel := must(New(Config{Buckets: 4, BucketBits: 128}))
	sentinel.AddString("keep")
	check := func(what string, b []byte) {
		g := sentinel.Clone()
		err := g.UnmarshalBinary(b)
		if err == nil {
			t.Fatalf("%s: accepted", what)
		}
		if !errors.Is(err, format.ErrFormat) {
			t.Fatalf("%s: %v does not wrap ErrFormat", what, err)
		}
		if !g.Equal(sentinel) || !g.ContainsString("keep") {
			t.Fatalf("%s: receiver changed", what)
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
	if err := new(Filter).UnmarshalBinary(data[:40]); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("truncation should wrap io.ErrUnexpectedEOF: %v", err)
	}
}

// TestInvalidContents: files with a valid checksum but contents no filter
// can have are rejected.
func TestInvalidContents(t *testing.T) {
	f := must(New(Config{Buckets: 4, BucketBits: 128}))
	f.AddString("x")
	for name, mutate := range map[string]func(g *Filter){
		"counter 255 (no such state)":  func(g *Filter) { g.words[0] |= 255 },
		"bits beyond the fingerprints": func(g *Filter) { g.words[1] |= 1 << 63 },
		"n below the keys held":        func(g *Filter) { g.n = 0 },
		"stash over its limit": func(g *Filter) {
			g.stash = map[uint64]struct{}{1: {}, 2: {}}
			g.cfg.StashLimit = 1
			g.n = 10
		},
	} {
		g := f.Clone()
		mutate(g)
		b, err := g.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var h Filter
		if err := h.UnmarshalBinary(b); !errors.Is(err, format.ErrFormat) {
			t.Errorf("%s: got %v, want ErrFormat", name, err)
		}
	}
}

// reseal recomputes the header and file checksums of b, so that edits
// reach the decoder's checks of the contents.
func reseal(b []byte) []byte {
	b = bytes.Clone(b)
	tab := crc32.MakeTable(crc32.Castagnoli)
	if len(b) >= format.HeaderSize {
		binary.LittleEndian.PutUint32(b[28:], crc32.Checksum(b[:28], tab))
	}
	if len(b) >= format.HeaderSize+4 {
		binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.Checksum(b[:len(b)-4], tab))
	}
	return b
}

func FuzzUnmarshal(f *testing.F) {
	g := must(New(Config{Buckets: 4, BucketBits: 128, Group: 2}))
	g.AddString("z")
	for _, src := range []*Filter{goldenFilter(), g} {
		b, _ := src.MarshalBinary()
		f.Add(b)
		for _, i := range []int{32, 33, 34, 35, 36, 40, 48, 56, 64, 72, 76, 80, 90} {
			c := bytes.Clone(b)
			c[i] ^= 0x21
			f.Add(reseal(c))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, in := range [][]byte{data, reseal(data)} {
			var h Filter
			if err := h.UnmarshalBinary(in); err != nil {
				if !errors.Is(err, format.ErrFormat) || strings.Contains(err.Error(), "dleft: dleft:") {
					t.Fatalf("error %v does not wrap format.ErrFormat once", err)
				}
				continue
			}
			again, err := h.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, in) {
				t.Fatal("accepted input does not re-encode to itself")
			}
			if h.Bits() > 1<<20 {
				continue
			}
			if err := h.Add(in); err == nil && !h.Contains(in) {
				t.Fatal("false negative on decoded filter")
			}
		}
	})
}
