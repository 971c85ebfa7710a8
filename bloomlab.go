// Package bloomlab is the root of the bloomlab module: Bloom-filter-family
// data structures from three research papers, with the theory beside each
// and a lab that reproduces the papers' tables (cmd/bloomlab).
//
// The structures live in their own packages:
//
//   - bloom: standard and partitioned Bloom filters (003, 004 §5, 001)
//   - counting: the counting Bloom filter (000 §2.1, 004 §9)
//   - dleft: the d-left Bloom filter with dynamic bit reassignment (002 §II)
//   - choices: the Bloom filter with c choices, online and offline (000 §3)
//   - blocked: the cache-line-blocked Bloom filter (004 §8)
//   - dlcbf: the d-left counting Bloom filter and its dynamic variants (002 §III)
//   - countmin: the Count-Min sketch with two-hash rows (001 §7); as a
//     Filter its Contains means "estimated count > 0"
//   - hashing: the base hash and the index schemes of "Less Hashing, Same
//     Performance" (001), shared by every structure
//   - theory: closed forms and optimal parameters
//
// This package reads any bloomlab file: ReadFrom and Unmarshal return
// whatever kind the file holds. The file format is specified in
// docs/FORMAT.md.
package bloomlab

import (
	"bytes"
	"fmt"
	"io"

	"github.com/bloomlab/bloomlab/blocked"
	"github.com/bloomlab/bloomlab/bloom"
	"github.com/bloomlab/bloomlab/choices"
	"github.com/bloomlab/bloomlab/counting"
	"github.com/bloomlab/bloomlab/countmin"
	"github.com/bloomlab/bloomlab/dlcbf"
	"github.com/bloomlab/bloomlab/dleft"
	"github.com/bloomlab/bloomlab/internal/format"
)

// Filter is what every bloomlab structure read from a file offers. Use a
// type switch (*bloom.Filter, *counting.Filter, …) for the rest of its API.
type Filter interface {
	// Kind names the structure ("bloom", "partitioned", "counting", …).
	Kind() string
	// Contains reports whether key may have been added.
	Contains(key []byte) bool
	// WriteTo writes the structure in the bloomlab file format.
	WriteTo(w io.Writer) (int64, error)
}

// ErrFormat is wrapped by every error about malformed input.
var ErrFormat = format.ErrFormat

// ReadFrom reads one bloomlab file of any kind from r. It reads exactly the
// file's bytes. Malformed input returns an error wrapping ErrFormat.
func ReadFrom(r io.Reader) (Filter, error) {
	var hdr [format.HeaderSize]byte
	if n, err := io.ReadFull(r, hdr[:]); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, fmt.Errorf("bloomlab: file of %d bytes is shorter than a header: %w: %w", n, io.ErrUnexpectedEOF, ErrFormat)
		}
		return nil, fmt.Errorf("bloomlab: %w", err)
	}
	kind, err := format.PeekKind(hdr[:])
	if err != nil {
		return nil, fmt.Errorf("bloomlab: %w", err)
	}
	d := format.NewDecoder(io.MultiReader(bytes.NewReader(hdr[:]), r))
	var f Filter
	switch kind {
	case format.KindBloom:
		f, err = nilIfErr(bloom.Decode(d))
	case format.KindCounting:
		f, err = nilIfErr(counting.Decode(d))
	case format.KindDleft:
		f, err = nilIfErr(dleft.Decode(d))
	case format.KindChoices:
		f, err = nilIfErr(choices.Decode(d))
	case format.KindBlocked:
		f, err = nilIfErr(blocked.Decode(d))
	case format.KindDlcbf:
		f, err = nilIfErr(dlcbf.Decode(d))
	case format.KindCountMin: // Contains: estimated count > 0
		f, err = nilIfErr(countmin.Decode(d))
	default:
		err = fmt.Errorf("bloomlab: file holds kind %v, which this build cannot read: %w", kind, ErrFormat)
	}
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Unmarshal decodes a bloomlab file of any kind held in data, which must
// contain exactly one file.
func Unmarshal(data []byte) (Filter, error) {
	r := bytes.NewReader(data)
	f, err := ReadFrom(r)
	if err != nil {
		return nil, err
	}
	if r.Len() != 0 {
		return nil, fmt.Errorf("bloomlab: %d trailing bytes after the file: %w", r.Len(), ErrFormat)
	}
	return f, nil
}

// nilIfErr converts a concrete (pointer, error) result to (Filter, error)
// without turning a nil pointer into a non-nil interface.
func nilIfErr[T Filter](f T, err error) (Filter, error) {
	if err != nil {
		return nil, err
	}
	return f, nil
}
