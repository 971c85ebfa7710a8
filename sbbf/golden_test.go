package sbbf

import (
	"bytes"
	"flag"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

func goldenFilter() *Filter {
	f := must(New(4))
	f.SetCapacity(3)
	for _, k := range []string{"a", "b", "c"} {
		f.AddString(k)
	}
	return f
}

// TestEncoding: the bloomlab file of a filter is the one recorded in
// testdata (the format is permanent), it decodes to the same filter, and
// every single-byte corruption is refused, leaving the receiver unchanged.
func TestEncoding(t *testing.T) {
	got, err := goldenFilter().MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	const name = "testdata/sbbf-v1.golden"
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
	if err := g.UnmarshalBinary(want); err != nil || !g.Equal(goldenFilter()) || g.Capacity() != 3 || g.N() != 3 {
		t.Fatalf("decode: %v", err)
	}
	sentinel := goldenFilter()
	for i := range want {
		b := bytes.Clone(want)
		b[i] ^= 0x10
		g := sentinel.Clone()
		if err := g.UnmarshalBinary(b); err == nil {
			t.Fatalf("byte %d flipped: decoded", i)
		}
		if !g.Equal(sentinel) || g.N() != 3 {
			t.Fatalf("byte %d flipped: a failed decode changed the receiver", i)
		}
	}
}
