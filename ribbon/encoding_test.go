package ribbon

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"testing"

	"github.com/bloomlab/bloomlab/internal/filtertest"
	"github.com/bloomlab/bloomlab/internal/format"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

func goldenFilter() *Filter {
	return must(New([][]byte{[]byte("a"), []byte("b"), []byte("c")}, Config{ResultBits: 3, Seed: 5}))
}

// TestEncoding: the file of a filter is the one recorded in testdata
// (the format is permanent), it decodes to the same filter, and every
// single-byte corruption is refused, leaving the receiver unchanged.
func TestEncoding(t *testing.T) {
	got, err := goldenFilter().MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	const name = "testdata/ribbon-v1.golden"
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

// TestRoundTrip: filters of one and several shards, at several r, written
// with WriteTo and read with ReadFrom and UnmarshalBinary, are the same
// filter and answer every key; a trailing byte and a truncation are
// refused.
func TestRoundTrip(t *testing.T) {
	for _, c := range []struct{ n, r int }{{0, 8}, {1, 1}, {3001, 7}, {70_000, 16}, {40_000, 32}} {
		keys := filtertest.Keys(c.n, 4)
		f := must(New(keys, Config{ResultBits: c.r, Seed: 9}))
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
	for _, r := range []int{1, 8, 32} {
		f.Add(must(must(New(filtertest.Keys(50, 1), Config{ResultBits: r})).MarshalBinary()))
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
		g.ContainsHash64(^uint64(0))
		g.ContainsBatch([][]byte{data, nil}, nil)
	})
}
