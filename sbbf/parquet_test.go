package sbbf

import (
	"bytes"
	"errors"
	"testing"

	"github.com/bloomlab/bloomlab/internal/format"
)

// TestParquetHeaderBytes: the header of a one-block filter, encoded by
// hand from parquet.thrift in Thrift's compact protocol: field 1 i32
// (0x15) numBytes 32 (zigzag 64: 0x40); fields 2, 3, 4 structs (0x1c),
// each a union whose field 1 is an empty struct (0x1c 0x00) then the
// union's stop (0x00); the header's stop.
func TestParquetHeaderBytes(t *testing.T) {
	f := must(New(1))
	f.Add([]byte("abc"))
	var b bytes.Buffer
	if err := f.WriteParquet(&b); err != nil {
		t.Fatal(err)
	}
	header := []byte{0x15, 0x40, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0}
	if got := b.Bytes(); !bytes.Equal(got[:len(header)], header) || !bytes.Equal(got[len(header):], f.Bytes()) {
		t.Fatalf("WriteParquet = %x, want header %x and the bitset", got, header)
	}
	// 1000 blocks: numBytes 32000, zigzag 64000 = varint 0x80 0xf4 0x03.
	b.Reset()
	if err := must(New(1000)).WriteParquet(&b); err != nil || !bytes.HasPrefix(b.Bytes(), []byte{0x15, 0x80, 0xf4, 0x03, 0x1c}) {
		t.Fatalf("1000 blocks: %x…, %v", b.Bytes()[:5], err)
	}
}

func TestParquetRoundTrip(t *testing.T) {
	for _, blocks := range []uint64{1, 3, 1000} {
		f := must(New(blocks))
		for i := range 5000 {
			f.AddHash(uint64(i) * 0x9E3779B97F4A7C15)
		}
		var b bytes.Buffer
		if err := f.WriteParquet(&b); err != nil {
			t.Fatal(err)
		}
		g, err := ReadParquet(&b)
		if err != nil || !g.Equal(f) {
			t.Fatalf("%d blocks: round trip: %v", blocks, err)
		}
	}
}

// TestParquetRefuses: a truncated or trailing stream, another algorithm,
// hash or compression, a bad numBytes: errors wrapping format.ErrFormat.
func TestParquetRefuses(t *testing.T) {
	f := must(New(2))
	var b bytes.Buffer
	f.WriteParquet(&b)
	good := b.Bytes()
	for cut := range len(good) {
		if _, err := ReadParquet(bytes.NewReader(good[:cut])); !errors.Is(err, format.ErrFormat) {
			t.Fatalf("cut at %d: %v", cut, err)
		}
	}
	if _, err := ReadParquet(bytes.NewReader(append(bytes.Clone(good), 0))); !errors.Is(err, format.ErrFormat) {
		t.Errorf("a trailing byte: %v", err)
	}
	bitset := make([]byte, 64)
	for name, h := range map[string][]byte{
		"numBytes 0":        {0x15, 0x00, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0},
		"numBytes 33":       {0x15, 0x42, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0},
		"numBytes -64":      {0x15, 0x7f, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0},
		"numBytes 2^35":     {0x15, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0},
		"algorithm field 2": {0x15, 0x80, 0x01, 0x1c, 0x2c, 0, 0, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0},
		"hash field 2":      {0x15, 0x80, 0x01, 0x1c, 0x1c, 0, 0, 0x1c, 0x2c, 0, 0, 0x1c, 0x1c, 0, 0, 0},
		"compression gzip":  {0x15, 0x80, 0x01, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0x1c, 0x2c, 0, 0, 0},
		"no compression":    {0x15, 0x80, 0x01, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0},
		"field 1 twice":     {0x15, 0x80, 0x01, 0x05, 0x02, 0x80, 0x01},
		"deep nesting":      bytes.Repeat([]byte{0x1c}, 100),
	} {
		if _, err := ReadParquet(bytes.NewReader(append(h, bitset...))); !errors.Is(err, format.ErrFormat) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// An unknown field (5: a string) is skipped, as Thrift readers do.
	h := []byte{0x15, 0x80, 0x01, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0x18, 0x02, 'h', 'i', 0}
	if g, err := ReadParquet(bytes.NewReader(append(h, bitset...))); err != nil || g.Blocks() != 2 {
		t.Errorf("an unknown field: %v", err)
	}
}

func FuzzReadParquet(f *testing.F) {
	g := must(New(1))
	g.Add([]byte("x"))
	var b bytes.Buffer
	g.WriteParquet(&b)
	f.Add(b.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := ReadParquet(bytes.NewReader(data))
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := h.WriteParquet(&out); err != nil {
			t.Fatal(err)
		}
		h2, err := ReadParquet(&out)
		if err != nil || !h2.Equal(h) {
			t.Fatalf("re-encoded filter differs: %v", err)
		}
	})
}
