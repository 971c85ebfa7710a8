package fuse

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"runtime"
	"testing"

	"github.com/bloomlab/bloomlab/internal/filtertest"
	"github.com/bloomlab/bloomlab/internal/format"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

func goldenFilter() *Filter {
	return must(New([][]byte{[]byte("a"), []byte("b"), []byte("c")}, Config{Arity: 3, FingerprintBits: 8, Seed: 5}))
}

// TestEncoding: the file of a filter is the one recorded in testdata
// (the format is permanent), it decodes to the same filter, and every
// single-byte corruption is refused, leaving the receiver unchanged.
func TestEncoding(t *testing.T) {
	got, err := goldenFilter().MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	const name = "testdata/fuse-v1.golden"
	if *update {
		os.WriteFile(name, got, 0o644)
	}
	want, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("encoding changed:\n got %x\nwant %x", got, want)
	}
	var g Filter
	if err := g.UnmarshalBinary(want); err != nil || !g.Equal(goldenFilter()) || g.N() != 3 || !g.Contains([]byte("b")) {
		t.Fatalf("decode: %v", err)
	}
	sentinel := goldenFilter()
	for i := range want {
		b := bytes.Clone(want)
		b[i] ^= 0x10
		g := *sentinel
		if err := g.UnmarshalBinary(b); err == nil {
			t.Fatalf("byte %d flipped: decoded", i)
		}
		if !g.Equal(sentinel) {
			t.Fatalf("byte %d flipped: a failed decode changed the receiver", i)
		}
	}
}

// TestRoundTrip: every shape, written with WriteTo and read with ReadFrom
// and UnmarshalBinary, is the same filter and answers every key.
func TestRoundTrip(t *testing.T) {
	for _, c := range shapes {
		keys := filtertest.Keys(3001, 4)
		f := must(New(keys, c))
		var buf bytes.Buffer
		n, err := f.WriteTo(&buf)
		if err != nil || n != int64(buf.Len()) {
			t.Fatalf("%+v: WriteTo %d, %v", c, n, err)
		}
		data := bytes.Clone(buf.Bytes())
		var g, h Filter
		if m, err := g.ReadFrom(&buf); err != nil || m != n || !g.Equal(f) {
			t.Fatalf("%+v: ReadFrom: %v", c, err)
		}
		if err := h.UnmarshalBinary(data); err != nil || !h.Equal(f) {
			t.Fatalf("%+v: UnmarshalBinary: %v", c, err)
		}
		for _, k := range keys {
			if !g.Contains(k) || !h.Contains(k) {
				t.Fatalf("%+v: false negative after a round trip", c)
			}
		}
		if err := h.UnmarshalBinary(append(data, 0)); !errors.Is(err, format.ErrFormat) {
			t.Errorf("%+v: trailing byte: %v", c, err)
		}
		if err := h.UnmarshalBinary(data[:len(data)-5]); err == nil {
			t.Errorf("%+v: truncated file decoded", c)
		}
	}
}

// FuzzDecode: whatever the bytes, the decoder returns a filter or an
// error, never panics; a filter it accepts re-encodes to the same bytes
// and answers queries.
func FuzzDecode(f *testing.F) {
	f.Add(must(goldenFilter().MarshalBinary()))
	for _, c := range shapes {
		f.Add(must(must(New(filtertest.Keys(50, 1), c)).MarshalBinary()))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var g Filter
		if err := g.UnmarshalBinary(data); err != nil {
			return
		}
		b, err := g.MarshalBinary()
		if err != nil || !bytes.Equal(b, data) {
			t.Fatalf("accepted input does not re-encode to itself: %v", err)
		}
		g.Contains(data)
		g.ContainsBatch([][]byte{data, nil}, nil)
	})
}

// TestLoadAllocatedOnce: reading a filter of S bytes from a reader that
// knows its length allocates about S bytes (the cells are the payload
// words, read in place), the root TestLoadMemory's 1.1 × S + 2 MiB.
func TestLoadAllocatedOnce(t *testing.T) {
	f := must(NewFromHashes(func() []uint64 {
		h := make([]uint64, 1<<20)
		for i := range h {
			h[i] = uint64(i) * 0x9E3779B97F4A7C15
		}
		return h
	}(), Config{FingerprintBits: 32}))
	data := must(f.MarshalBinary())
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var g Filter
	_, err := g.ReadFrom(bytes.NewReader(data))
	runtime.ReadMemStats(&after)
	if err != nil || !g.Equal(f) {
		t.Fatal(err)
	}
	if a := after.TotalAlloc - before.TotalAlloc; a > uint64(1.1*float64(len(data)))+2<<20 {
		t.Errorf("a file of %d bytes allocated %d", len(data), a)
	}
}
