package format

import (
	"bytes"
	"fmt"
	"io"
)

// The three functions below are the whole of every kind's MarshalBinary,
// UnmarshalBinary and ReadFrom: a kind supplies only WriteTo and its decode
// function, so every kind reads and writes files the same way.

// Marshal returns the bytes w writes, with sizeHint bytes reserved.
func Marshal(w io.WriterTo, sizeHint int) ([]byte, error) {
	var b bytes.Buffer
	b.Grow(sizeHint)
	if _, err := w.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Unmarshal decodes the one file that data must hold exactly; pkg prefixes
// the error about trailing bytes.
func Unmarshal[T any](data []byte, pkg string, decode func(*Decoder) (T, error)) (T, error) {
	r := bytes.NewReader(data)
	v, err := decode(NewDecoder(r))
	if err == nil && r.Len() != 0 {
		err = fmt.Errorf("%s: %d trailing bytes after the filter: %w", pkg, r.Len(), ErrFormat)
	}
	if err != nil {
		var zero T
		return zero, err
	}
	return v, nil
}

// ReadFrom decodes one file from r and returns it with the number of bytes
// read (exactly the file's bytes on success).
func ReadFrom[T any](r io.Reader, decode func(*Decoder) (T, error)) (T, int64, error) {
	d := NewDecoder(r)
	v, err := decode(d)
	return v, d.N(), err
}
