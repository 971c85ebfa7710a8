package blrd

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/bloomlab/bloomlab/internal/format"
)

func frame(t *testing.T, recs [][]byte) []byte {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for i, r := range recs {
		w.Record(int64(i+1), r)
	}
	n, err := w.Close()
	if err != nil || n != int64(buf.Len()) {
		t.Fatalf("Close: %d, %v", n, err)
	}
	return buf.Bytes()
}

// readAll reads every record of a framed dump.
func readAll(r io.Reader) ([][]byte, error) {
	fr, err := NewReader(r, "test")
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for {
		_, n, end, err := fr.Next()
		if err != nil {
			return nil, err
		}
		if end {
			return out, nil
		}
		b := make([]byte, n)
		if err := fr.ReadData(b); err != nil {
			return nil, err
		}
		out = append(out, b)
	}
}

// TestFraming: a framed dump reads back exactly, with nothing read past
// its end; every truncation and every changed byte is refused with an
// error wrapping format.ErrFormat; a huge record is refused before its
// bytes are read.
func TestFraming(t *testing.T) {
	recs := [][]byte{[]byte("header"), {}, bytes.Repeat([]byte{7}, 1000), {1, 2, 3}}
	data := frame(t, recs)
	r := bytes.NewReader(append(bytes.Clone(data), "next"...))
	got, err := readAll(r)
	if err != nil || len(got) != len(recs) || r.Len() != 4 {
		t.Fatalf("read back: %v, %d records, %d bytes left", err, len(got), r.Len())
	}
	for i := range recs {
		if !bytes.Equal(got[i], recs[i]) {
			t.Fatalf("record %d differs", i)
		}
	}
	for i := 0; i < len(data); i++ {
		if _, err := readAll(bytes.NewReader(data[:i])); !errors.Is(err, io.ErrUnexpectedEOF) || !errors.Is(err, format.ErrFormat) {
			t.Fatalf("truncated at %d: %v", i, err)
		}
	}
	for i := range data {
		b := bytes.Clone(data)
		b[i] ^= 0x10
		if _, err := readAll(bytes.NewReader(b)); !errors.Is(err, format.ErrFormat) {
			t.Fatalf("byte %d changed: %v", i, err)
		}
	}
	huge := append([]byte(Magic), 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0x20)
	if _, err := readAll(bytes.NewReader(huge)); !errors.Is(err, format.ErrFormat) {
		t.Errorf("huge record: %v", err)
	}
	v3 := bytes.Clone(data)
	v3[4] = 3
	if _, err := readAll(bytes.NewReader(v3)); !errors.Is(err, format.ErrVersion) {
		t.Errorf("version 3: %v", err)
	}
	fr, _ := NewReader(bytes.NewReader(data), "test")
	fr.Next()
	if _, _, _, err := fr.Next(); err == nil {
		t.Error("Next with the previous record unread")
	}
}

func TestFirstRecordLen(t *testing.T) {
	data := frame(t, [][]byte{make([]byte, 38), {1}})
	if n, ok := FirstRecordLen(data); !ok || n != 38 {
		t.Errorf("FirstRecordLen = %d, %v; want 38", n, ok)
	}
	for _, bad := range [][]byte{data[:19], append([]byte("XLRD"), data[4:]...), nil} {
		if _, ok := FirstRecordLen(bad); ok {
			t.Errorf("FirstRecordLen(%x) accepted", bad)
		}
	}
}

// TestTrailer: version 2 carries a trailer after the end record (the
// metadata the dump's chunks lack: the cuckoo filter's capacity), inside
// the checksum; a reader stopping at the end record, as the redis-py
// loaders of docs/SCALABLE.md do, reads version 2 as version 1. Version 1
// has no trailer. Every truncation and changed byte is refused, and a
// trailer longer than MaxTrailer too, before it is read.
func TestTrailer(t *testing.T) {
	recs := [][]byte{[]byte("header"), {1, 2, 3}}
	for _, trailer := range [][]byte{{}, []byte("capacity"), bytes.Repeat([]byte{9}, MaxTrailer)} {
		var buf bytes.Buffer
		w := NewTrailerWriter(&buf, trailer)
		for i, r := range recs {
			w.Record(int64(i+1), r)
		}
		if n, err := w.Close(); err != nil || n != int64(buf.Len()) {
			t.Fatalf("Close: %d, %v", n, err)
		}
		data := buf.Bytes()
		fr, err := NewReader(bytes.NewReader(data), "test")
		if err != nil || fr.Version() != 2 {
			t.Fatalf("NewReader: version %d, %v", fr.Version(), err)
		}
		var got [][]byte
		for {
			_, n, end, err := fr.Next()
			if err != nil {
				t.Fatal(err)
			}
			if end {
				break
			}
			b := make([]byte, n)
			fr.ReadData(b)
			got = append(got, b)
		}
		if len(got) != len(recs) || !bytes.Equal(fr.Trailer(), trailer) || fr.N() != int64(len(data)) {
			t.Fatalf("trailer of %d bytes: %d records, trailer %q, %d of %d bytes", len(trailer), len(got), fr.Trailer(), fr.N(), len(data))
		}
		if len(trailer) > 64 {
			continue
		}
		for i := 0; i < len(data); i++ {
			if _, err := readAll(bytes.NewReader(data[:i])); !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("truncated at %d: %v", i, err)
			}
		}
		for i := range data {
			b := bytes.Clone(data)
			b[i] ^= 0x10
			if _, err := readAll(bytes.NewReader(b)); !errors.Is(err, format.ErrFormat) {
				t.Fatalf("byte %d changed: %v", i, err)
			}
		}
	}
	fr, _ := NewReader(bytes.NewReader(frame(t, recs)), "test")
	for {
		if _, n, end, _ := fr.Next(); end {
			break
		} else {
			fr.ReadData(make([]byte, n))
		}
	}
	if fr.Version() != 1 || fr.Trailer() != nil {
		t.Errorf("version 1: version %d, trailer %q", fr.Version(), fr.Trailer())
	}
	if _, err := NewTrailerWriter(io.Discard, make([]byte, MaxTrailer+1)).Close(); err == nil {
		t.Error("a trailer over MaxTrailer written")
	}
	// A trailer length past MaxTrailer is refused before its bytes.
	var buf bytes.Buffer
	w := NewTrailerWriter(&buf, nil)
	w.Close()
	b := buf.Bytes()[:buf.Len()-8]
	b = append(b, 0xff, 0xff, 0xff, 0x7f)
	if _, err := readAll(bytes.NewReader(b)); !errors.Is(err, format.ErrFormat) || errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("trailer of 2^31 bytes: %v", err)
	}
}
