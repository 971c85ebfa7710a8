package hashing

import "github.com/cespare/xxhash/v2"

// Schemes that reproduce, bit for bit, the filters of other Go libraries,
// so that a filter they serialised can be imported and keeps answering
// (and accepting keys) exactly as it did there. Each names both the base
// hash of the key and the index rule, so a structure using one hashes keys
// with ForeignSum instead of Sum (the seed is not used: files record 0)
// and the file's scheme byte records the choice. Like every value from 64
// up, they name a foreign hash family. They are not offered for new filters
// (ParseScheme does not accept them): they exist to import.
const (
	// BoomFilters is tylertreat/BoomFilters' classic BloomFilter with its
	// default hash: h = FNV-1 64 of the key (hash/fnv.New64, not FNV-1a),
	// lower = h mod 2^32, upper = h >> 32, position i (0 ≤ i < k) =
	// (lower + i·upper) mod m, computed in 64-bit arithmetic (exact for
	// k ≤ 64: lower + i·upper < 2^39).
	BoomFilters Scheme = 66
	// BoomPartitioned is BoomFilters' PartitionedBloomFilter with its
	// default hash: k partitions of s = m/k bits, position i in partition
	// i at (lower + i·upper) mod s, lower and upper as for BoomFilters.
	BoomPartitioned Scheme = 67
	// BlobloomXXH64 is greatroar/blobloom's blocked filter fed with
	// h = XXH64 of the key with seed 0 (cespare/xxhash/v2's Sum64): m is
	// a multiple of 512 bits (blocks of 512, at most 2^32 blocks); with
	// h1 = h >> 32 and h2 = h mod 2^32 (32-bit words), the block is
	// ⌊h2·blocks/2^32⌋, and for i = 1 … k (k is blobloom's nhashes − 1,
	// the bits set per key) h1 += h2, h2 += i, the bit is h1 mod 512 of
	// the block (word (h1/32) mod 16 of its sixteen little-endian 32-bit
	// words, bit h1 mod 32).
	BlobloomXXH64 Scheme = 68
)

// BlobloomBlockBits is the size of blobloom's blocks.
const BlobloomBlockBits = 512

// blobloomMaxBlocks is blobloom's MaxBits / BlockBits.
const blobloomMaxBlocks = 1 << 32

// Uses64BitHash reports whether s is the scheme of another library's
// filter whose positions derive from one 64-bit hash of the key: its keys
// hash with ForeignSum, not Sum (BoomFilters, BoomPartitioned,
// BlobloomXXH64; not RedisBloom or BitsAndBlooms, which have their own
// paths).
func (s Scheme) Uses64BitHash() bool {
	return s == BoomFilters || s == BoomPartitioned || s == BlobloomXXH64
}

// ForeignSum returns the digest of key under the foreign scheme s, in the
// form that scheme's Positions reads: H1 is the library's 64-bit hash of the
// key (FNV-1 64 for BoomFilters and BoomPartitioned, XXH64 seed 0 for
// BlobloomXXH64) and H2 is 0. It allocates nothing. For any other scheme it
// returns the zero Digest.
func ForeignSum(s Scheme, key []byte) Digest {
	switch s {
	case BoomFilters, BoomPartitioned:
		return Digest{H1: FNV1(key)}
	case BlobloomXXH64:
		return Digest{H1: xxhash.Sum64(key)}
	}
	return Digest{}
}

// ForeignSumString is ForeignSum for a string key, without copying it.
func ForeignSumString(s Scheme, key string) Digest {
	switch s {
	case BoomFilters, BoomPartitioned:
		return Digest{H1: FNV1(key)}
	case BlobloomXXH64:
		return Digest{H1: xxhash.Sum64String(key)}
	}
	return Digest{}
}

// FNV1 returns the 64-bit FNV-1 hash of key (hash/fnv.New64's Sum64):
// multiply by the FNV prime, then XOR the byte.
func FNV1[K []byte | string](key K) uint64 {
	const (
		offset = 14695981039346656037
		prime  = 1099511628211
	)
	h := uint64(offset)
	for i := 0; i < len(key); i++ {
		h *= prime
		h ^= uint64(key[i])
	}
	return h
}

// foreignPositions writes the positions of the foreign schemes (see their
// definitions). Only the low 64 bits of d.H1 are read, so any digest gives
// positions in range.
func (ix *Indexer) foreignPositions(d Digest, out []uint64) {
	switch ix.scheme {
	case BoomFilters:
		lo, hi := d.H1&0xffffffff, d.H1>>32
		m, r := ix.m, ix.recip
		for i := range out {
			out[i] = ModSmall(lo, m, r)
			lo += hi
		}
	case BoomPartitioned:
		lo, hi := d.H1&0xffffffff, d.H1>>32
		sub, r := ix.sub, ix.recip
		base := uint64(0)
		for i := range out {
			out[i] = base + ModSmall(lo, sub, r)
			lo += hi
			base += sub
		}
	case BlobloomXXH64:
		h1, h2 := uint32(d.H1>>32), uint32(d.H1)
		base := (uint64(h2) * ix.stepN) >> 32 * BlobloomBlockBits
		for i := range out {
			h1 += h2
			h2 += uint32(i + 1)
			out[i] = base + uint64(h1&(BlobloomBlockBits-1))
		}
	}
}

// foreignSize returns the smallest m' ≥ m the foreign scheme s accepts.
func foreignSize(s Scheme, m uint64, k int) uint64 {
	switch s {
	case BoomPartitioned:
		kk := uint64(k)
		return (m + kk - 1) / kk * kk
	case BlobloomXXH64:
		return (m + BlobloomBlockBits - 1) / BlobloomBlockBits * BlobloomBlockBits
	}
	return m
}

// BlobloomBlocks returns the number of 512-bit blocks of a BlobloomXXH64
// indexer (m/512), for structures that walk its probes inline.
func (ix *Indexer) BlobloomBlocks() uint64 {
	if ix.scheme != BlobloomXXH64 {
		return 0
	}
	return ix.stepN
}
