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
//   - scalable: a growing chain of Bloom filters whose compound rate stays
//     below its target however far it grows; its RedisBloom profile is
//     byte-compatible with the Bloom filter of Redis (BF.*)
//   - hashing: the base hash and the index schemes of "Less Hashing, Same
//     Performance" (001), shared by every structure
//   - theory: closed forms and optimal parameters
//
// This package reads any bloomlab file: ReadFrom and Unmarshal return
// whatever kind the file holds, as a Filter, the contract every kind
// satisfies. The file format is specified in docs/FORMAT.md; the names the
// kinds share (Capacity, Bits, N, Union, Merge) in docs/API.md.
package bloomlab

import (
	"bytes"
	"fmt"
	"io"

	"github.com/bloomlab/bloomlab/internal/format"
	"github.com/bloomlab/bloomlab/internal/kind"
)

// Filter is what every bloomlab structure offers: Kind, Contains, WriteTo,
// Capacity (the number of keys it was sized for), Bits (its memory), N (the
// keys added), Seed and EstimatedFPR (the false-positive rate of its
// state). Use a type assertion (*bloom.Filter, *counting.Filter, …) for the
// rest of its API.
type Filter = kind.Filter

// Errors. ErrFormat is wrapped by every error about malformed input,
// ErrTooLarge by a refusal to load a structure larger than the memory the
// process may use (checked before allocating),
// ErrParam by every parameter error of every bloomlab package,
// ErrIncompatible by every refusal to combine two structures.
var (
	ErrFormat       = format.ErrFormat
	ErrTooLarge     = format.ErrTooLarge
	ErrParam        = kind.ErrParam
	ErrIncompatible = kind.ErrIncompatible
)

// Kinds returns the names of the kinds this build reads and writes, in
// listing order.
func Kinds() []string { return kind.Names() }

// ReadFrom reads one bloomlab file of any kind from r. It reads exactly the
// file's bytes. Malformed input returns an error wrapping ErrFormat.
func ReadFrom(r io.Reader) (Filter, error) {
	f, err := kind.Decode(format.NewDecoder(r))
	if err != nil {
		return nil, fmt.Errorf("bloomlab: %w", err)
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
