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
	v2 := bytes.Clone(data)
	v2[4] = 2
	if _, err := readAll(bytes.NewReader(v2)); !errors.Is(err, format.ErrVersion) {
		t.Errorf("version 2: %v", err)
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
