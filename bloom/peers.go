package bloom

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/bitvec"
	"github.com/bloomlab/bloomlab/internal/format"
)

// Imports of other Go libraries' serialised Bloom filters. Each returns a
// Filter whose scheme (hashing.BoomFilters, hashing.BoomPartitioned,
// hashing.BlobloomXXH64) reproduces the library's hash and positions, so it
// answers Contains exactly as the original answered Test (Has) for every
// key, and keeps accepting Add; it is written and read back as any bloom
// file, and combines with filters of the same scheme, m and k. Errors wrap
// format.ErrFormat; every length is checked before anything is allocated,
// and the bit array grows only as its bytes arrive.

// maxBoomBits is the largest filter BoomFilters handles consistently: its
// Buckets.Set truncates the bit offset to 32 bits, so a larger filter sets
// other bits than Test reads.
const maxBoomBits = 1 << 32

// ReadBoomFilters reads a tylertreat/BoomFilters classic BloomFilter as its
// WriteTo (and GobEncode, the same bytes) writes it: count, m and k as
// big-endian uint64, then its Buckets (bucket size 1, maximum 1, count m,
// the length ⌈m/8⌉ and the bytes, bit i at bit i mod 8 of byte i/8). The
// filter must have been built with BoomFilters' default hash (FNV-1 64):
// the file does not record a hash set with SetHash, and a filter built
// with another answers wrongly here (its keys read as absent): such a
// filter cannot be imported.
func ReadBoomFilters(r io.Reader) (*Filter, error) {
	var h [24]byte
	if err := readFull(r, h[:], "header"); err != nil {
		return nil, err
	}
	count, m, k := binary.BigEndian.Uint64(h[:]), binary.BigEndian.Uint64(h[8:]), binary.BigEndian.Uint64(h[16:])
	if err := checkBoom(m, k, "boom-classic"); err != nil {
		return nil, err
	}
	ix, err := hashing.NewIndexer(hashing.BoomFilters, m, int(k))
	if err != nil {
		return nil, peerErr("boom-classic: %v", err)
	}
	words, err := readBoomBuckets(r, m, "boom-classic")
	if err != nil {
		return nil, err
	}
	f, err := fromIndexer(ix, 0, words, count)
	if err != nil {
		return nil, peerErr("boom-classic: %v", err)
	}
	return f, nil
}

// ReadBoomPartitioned reads a tylertreat/BoomFilters PartitionedBloomFilter
// as its WriteTo (and GobEncode) writes it: m, k, s (= ⌈m/k⌉), count and the
// number of partitions (k) as big-endian uint64, then k Buckets of s bits.
// The result is a partitioned filter of k·s bits (M reports k·s, not the m
// BoomFilters recorded): partition i holds bits i·s … i·s + s − 1. As for
// ReadBoomFilters, only filters built with the default hash (FNV-1 64) can
// be imported.
func ReadBoomPartitioned(r io.Reader) (*Filter, error) {
	var h [40]byte
	if err := readFull(r, h[:], "header"); err != nil {
		return nil, err
	}
	m, k, s := binary.BigEndian.Uint64(h[:]), binary.BigEndian.Uint64(h[8:]), binary.BigEndian.Uint64(h[16:])
	count, parts := binary.BigEndian.Uint64(h[24:]), binary.BigEndian.Uint64(h[32:])
	if err := checkBoom(m, k, "boom-partitioned"); err != nil {
		return nil, err
	}
	switch {
	case s != (m+k-1)/k:
		return nil, peerErr("boom-partitioned: partition size %d, want ⌈m/k⌉ = %d", s, (m+k-1)/k)
	case parts != k:
		return nil, peerErr("boom-partitioned: %d partitions, want k = %d", parts, k)
	}
	ix, err := hashing.NewIndexer(hashing.BoomPartitioned, k*s, int(k))
	if err != nil {
		return nil, peerErr("boom-partitioned: %v", err)
	}
	var words []uint64
	for i := range k {
		part, err := readBoomBuckets(r, s, "boom-partitioned")
		if err != nil {
			return nil, err
		}
		if i == 0 {
			words = make([]uint64, bitvec.Words(k*s)) // the first partition arrived whole
		}
		base := i * s
		for w, x := range part {
			for x != 0 {
				p := base + uint64(w)*64 + uint64(bits.TrailingZeros64(x))
				words[p>>6] |= 1 << (p & 63)
				x &= x - 1
			}
		}
	}
	f, err := fromIndexer(ix, 0, words, count)
	if err != nil {
		return nil, peerErr("boom-partitioned: %v", err)
	}
	return f, nil
}

func checkBoom(m, k uint64, name string) error {
	switch {
	case m < 1 || m > maxBoomBits:
		return peerErr("%s: m = %d out of range [1, 2^32] (BoomFilters' buckets address 32-bit offsets)", name, m)
	case k < 1 || k > hashing.MaxK:
		return peerErr("%s: k = %d out of range [1, %d]", name, k, hashing.MaxK)
	}
	return nil
}

// readBoomBuckets reads one BoomFilters Buckets of n one-bit buckets and
// returns its bits as ⌈n/64⌉ words, checking that no bit past n is set.
func readBoomBuckets(r io.Reader, n uint64, name string) ([]uint64, error) {
	var h [18]byte
	if err := readFull(r, h[:], "buckets header"); err != nil {
		return nil, err
	}
	size, maxv, count, length := h[0], h[1], binary.BigEndian.Uint64(h[2:]), binary.BigEndian.Uint64(h[10:])
	switch {
	case size != 1 || maxv != 1:
		return nil, peerErr("%s: buckets of %d bits (maximum %d), want 1 (1): not a Bloom filter's", name, size, maxv)
	case count != n:
		return nil, peerErr("%s: %d buckets, want %d", name, count, n)
	case length != (n+7)/8:
		return nil, peerErr("%s: %d bytes of buckets, want ⌈%d/8⌉ = %d", name, length, n, (n+7)/8)
	}
	words, err := readLEWords(r, length)
	if err != nil {
		return nil, peerErr("%s: %v", name, err)
	}
	if !bitvec.Vec(words).TailClear(n) {
		return nil, peerErr("%s: bits set past bucket %d", name, n)
	}
	return words, nil
}

// readLEWords reads n bytes and returns them as ⌈n/8⌉ little-endian words
// (the last one zero-padded), growing the slice only as bytes arrive.
func readLEWords(r io.Reader, n uint64) ([]uint64, error) {
	const chunk = 1 << 16
	var words []uint64
	var buf [chunk]byte
	for left := n; left > 0; {
		c := min(left, chunk)
		if _, err := io.ReadFull(r, buf[:c]); err != nil {
			return nil, fmt.Errorf("truncated: %d of %d bytes of bits", n-left, n)
		}
		if words == nil {
			words = make([]uint64, 0, min(bitvec.Words(n*8), 2*chunk/8))
		}
		b := buf[:c]
		for len(b) >= 8 {
			words = append(words, binary.LittleEndian.Uint64(b))
			b = b[8:]
		}
		if len(b) > 0 {
			var t [8]byte
			copy(t[:], b)
			words = append(words, binary.LittleEndian.Uint64(t[:]))
		}
		left -= c
	}
	return words, nil
}

// Hashes that ReadBlobloom accepts, by the name -hash takes.
var blobloomHashes = map[string]hashing.Scheme{"xxhash64": hashing.BlobloomXXH64}

// BlobloomHashes lists the names ReadBlobloom accepts for hash.
func BlobloomHashes() []string { return []string{"xxhash64"} }

// ErrHashUnknown is returned by ReadBlobloom when the hash is not named or
// not one it supports.
var ErrHashUnknown = errors.New("bloom: unknown hash")

// ReadBlobloom reads a greatroar/blobloom Filter (or SyncFilter) as its Dump
// writes it: a 64-byte header ("blobloom", version 0, blocks − 1 and the
// number of hashes as little-endian uint32, a comment of at most 44 bytes,
// which is dropped), then each 512-bit block as sixteen little-endian
// uint32 words. blobloom hashes nothing itself: the program passed Add a
// 64-bit hash of each key, which the dump does not record, so the caller
// names it (hash, one of BlobloomHashes: "xxhash64" is cespare/xxhash/v2's
// Sum64) and the choice is kept in the result's scheme. A filter fed
// another hash answers wrongly here: there is no guessing it.
//
// The result has m = 512·blocks bits and k = hashes − 1 (blobloom's first
// hash picks the block, the others set bits in it; a dump of fewer than 2
// hashes loads as 2, as blobloom's Loader does). Its N is blobloom's
// Cardinality estimate of the dump (which records no count), rounded.
func ReadBlobloom(r io.Reader, hash string) (*Filter, error) {
	scheme, ok := blobloomHashes[hash]
	if !ok {
		if hash == "" {
			return nil, fmt.Errorf("blobloom: the dump does not record the hash the program gave blobloom's Add: name it (one of %v): %w", BlobloomHashes(), ErrHashUnknown)
		}
		return nil, fmt.Errorf("blobloom: hash %q is not supported (one of %v): %w", hash, BlobloomHashes(), ErrHashUnknown)
	}
	var h [64]byte
	if err := readFull(r, h[:], "header"); err != nil {
		return nil, err
	}
	version := binary.LittleEndian.Uint32(h[8:])
	blocks := uint64(binary.LittleEndian.Uint32(h[12:])) + 1
	nh := uint64(binary.LittleEndian.Uint32(h[16:]))
	switch {
	case string(h[:8]) != "blobloom":
		return nil, peerErr("blobloom: not a blobloom dump (no \"blobloom\" magic)")
	case version != 0:
		return nil, peerErr("blobloom: dump version %d, want 0", version)
	case nh == 0:
		return nil, peerErr("blobloom: zero hashes")
	case nh-1 > hashing.MaxK:
		return nil, peerErr("blobloom: %d hashes, at most %d supported", nh, hashing.MaxK+1)
	}
	if err := checkBlobloomComment(h[20:]); err != nil {
		return nil, err
	}
	k := int(max(nh, 2) - 1)
	m := blocks * hashing.BlobloomBlockBits
	ix, err := hashing.NewIndexer(scheme, m, k)
	if err != nil {
		return nil, peerErr("blobloom: %v", err)
	}
	words, err := readLEWords(r, m/8)
	if err != nil {
		return nil, peerErr("blobloom: %v", err)
	}
	f, err := fromIndexer(ix, 0, words, 0)
	if err != nil {
		return nil, peerErr("blobloom: %v", err)
	}
	f.n = blobloomCount(words, k)
	return f, nil
}

// blobloomCount is blobloom's Cardinality of the blocks in words (the
// dump does not record a count): Σ ln(1 − ones/512) / (k·ln(1 − 1/512))
// over the blocks, rounded, and 0 when a block is full (+Inf there).
func blobloomCount(words []uint64, k int) uint64 {
	const wb = hashing.BlobloomBlockBits / 64
	sum := 0.0
	for b := 0; b+wb <= len(words); b += wb {
		ones := 0
		for _, w := range words[b : b+wb] {
			ones += bits.OnesCount64(w)
		}
		if ones == hashing.BlobloomBlockBits {
			return 0
		}
		sum += math.Log1p(-float64(ones) / hashing.BlobloomBlockBits)
	}
	return uint64(math.Round(sum / (float64(k) * math.Log1p(-1.0/hashing.BlobloomBlockBits))))
}

// checkBlobloomComment applies blobloom's rule: after the comment's first
// zero byte, only zero bytes.
func checkBlobloomComment(p []byte) error {
	for i, c := range p {
		if c == 0 {
			for _, d := range p[i:] {
				if d != 0 {
					return peerErr("blobloom: comment block contains a zero byte")
				}
			}
			return nil
		}
	}
	return nil
}

func readFull(r io.Reader, b []byte, what string) error {
	if _, err := io.ReadFull(r, b); err != nil {
		return peerErr("truncated %s: %v", what, err)
	}
	return nil
}

// peerError is the error of a refused BoomFilters or blobloom filter: it
// wraps format.ErrFormat without ending in that error's text, which speaks
// of bloomlab's own files.
type peerError struct{ msg string }

func (e *peerError) Error() string { return "bloom: " + e.msg }
func (e *peerError) Unwrap() error { return format.ErrFormat }

func peerErr(msg string, args ...any) error {
	return &peerError{fmt.Sprintf(msg, args...)}
}
