// Package bloomlab is the root of the bloomlab module: Bloom-filter-family
// data structures built from the sources that define them, with the
// theory beside each structure and a lab that reproduces the sources'
// tables and figures from the real structures (cmd/bloomlab).
//
// The sources, by the names the packages and docs cite them with (§ for a
// section; docs/ERRATA.md lists where one errs):
//
//   - 000: S. Lumetta, M. Mitzenmacher, "Using the Power of Two Choices to
//     Improve Bloom Filters", Internet Mathematics (2007)
//   - 001: A. Kirsch, M. Mitzenmacher, "Less Hashing, Same Performance:
//     Building a Better Bloom Filter", ESA 2006
//   - 002: F. Bonomi, M. Mitzenmacher, R. Panigrahy, S. Singh,
//     G. Varghese, "Bloom Filters via d-Left Hashing and Dynamic Bit
//     Reassignment"
//   - 003: the lecture notes "Notes 14 for CS 170: Bloom Filters"
//   - 004: the lecture notes "Bloom filters and Hashing"
//   - CF: B. Fan, D. G. Andersen, M. Kaminsky, M. Mitzenmacher, "Cuckoo
//     Filter: Practically Better Than Bloom", CoNEXT 2014
//   - P. S. Almeida, C. Baquero, N. Preguiça, D. Hutchison, "Scalable
//     Bloom Filters", Information Processing Letters (2007)
//   - RedisBloom 2.4 (Redis's BF.*, CF.* and CMS.* commands and their dump
//     formats), which the redisbloom profiles and the server reproduce bit
//     for bit
//
// The structures live in their own packages:
//
//   - bloom: standard and partitioned Bloom filters (003, 004 §5, 001)
//   - counting: the counting Bloom filter (000 §2.1, 004 §9)
//   - blocked: the cache-line-blocked Bloom filter (004 §8)
//   - sbbf: Parquet's split-block Bloom filter, byte for byte (the format's
//     bitset, XXH64 seed 0); its rate is theory.FPSplitBlock
//   - choices: the Bloom filter with c choices, online and offline (000 §3)
//   - dleft: the d-left Bloom filter with dynamic bit reassignment (002 §II)
//   - dlcbf: the d-left counting Bloom filter and its dynamic variants (002 §III)
//   - countmin: the Count-Min sketch with two-hash rows (001 §7); as a
//     Filter its Contains means "estimated count > 0"
//   - cuckoo: the cuckoo filter (CF), which deletes, counts and grows; its
//     RedisBloom profile is bit for bit RedisBloom's CF.* filter
//   - fuse: the binary fuse filter (Graf and Lemire, "Binary Fuse
//     Filters: Fast and Smaller Than Xor Filters", 2022), static: built
//     once from a whole key set, 3- or 4-wise, 8-, 16- or 32-bit
//     fingerprints; its sizes are theory.FuseLayout
//   - ribbon: the Standard Ribbon filter (Dillinger and Walzer, "Ribbon
//     filter: practically smaller than Bloom and Xor", 2021), static:
//     r result bits for any r from 1 to 32, 128-bit rows, sharded so that
//     its overhead (theory.RibbonBits, about 3.4%) does not grow with n
//   - scalable: a growing chain of Bloom filters whose compound rate stays
//     below its target however far it grows (Almeida et al.); its
//     RedisBloom profile is byte-compatible with the Bloom filter of Redis
//     (BF.*)
//   - topk: HeavyKeeper top-k bit for bit as RedisBloom's TOPK.*, its
//     decay drawn from a seeded generator kept in the sketch (not a
//     Filter: it answers which items are heavy, not membership)
//   - tdigest: the merging t-digest (Dunning & Ertl 2019) for quantiles,
//     CDF and ranks of a stream, bit for bit RedisBloom's TDIGEST.* (its
//     t-digest-c); not a Filter
//   - hashing: the base hash and the index schemes of "Less Hashing, Same
//     Performance" (001), shared by every structure
//   - theory: closed forms and optimal parameters
//   - server: `bloomlab serve`, RedisBloom's BF.*, CF.*, CMS.*, TOPK.* and TDIGEST.* commands
//     over Redis's protocol, with snapshots and an append-only log
//   - redisblocked: a blocked filter kept in plain Redis strings, sharded
//     over a Redis Cluster, shared by any number of processes
//   - rdb: Redis's RDB files and DUMP payloads (versions 10 to 12), read as
//     a stream and written, module values as typed fields; each RedisBloom
//     kind's ReadRedisBloomRDB and WriteRedisBloomRDB turn them into
//     structures and back
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
