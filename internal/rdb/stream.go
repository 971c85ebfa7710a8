package rdb

import (
	"bytes"
	"fmt"
	"io"
)

// PieceSize is the most bytes ReadStringTo hands on at once.
const PieceSize = 1 << 20

// ReadStringTo reads a string field piece by piece: size is called once
// with the string's length before anything is allocated for it, then piece
// with its bytes in order (each at most PieceSize bytes; p is valid only
// during the call). Either callback's error stops the read and is
// returned.
//
// TODO(h25-rdbio): stream (a plain string straight from the input, an LZF
// one decompressed through a window) instead of reading it whole.
func (m *ModuleValue) ReadStringTo(size func(n int64) error, piece func(p []byte) error) error {
	s, err := m.ReadString()
	if err != nil {
		return err
	}
	if err := size(int64(len(s))); err != nil {
		return err
	}
	for len(s) > 0 {
		k := min(len(s), PieceSize)
		if err := piece(s[:k]); err != nil {
			return err
		}
		s = s[k:]
	}
	return nil
}

// StringFunc writes a string field of exactly n bytes, which fill writes
// to w in order (in as many calls as it likes).
//
// TODO(h25-rdbio): stream a large string to the file instead of holding it.
func (m *ModuleWriter) StringFunc(n int64, fill func(w io.Writer) error) error {
	var b bytes.Buffer
	if err := fill(&b); err != nil {
		return err
	}
	if int64(b.Len()) != n {
		return fmt.Errorf("rdb: a string field announced as %d bytes was given %d", n, b.Len())
	}
	m.String(b.Bytes())
	return nil
}
