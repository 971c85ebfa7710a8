package hashing

import (
	"encoding/binary"
	"math/bits"
)

// RedisBloom names, in a file's scheme byte, the hash family and index rule
// of RedisBloom's Bloom filters (BF.*, module versions 2.x), so that a
// filter can move between bloomlab and Redis bit for bit:
//
//   - base hash: a = MurmurHash64A(key, 0xc6a4a7935bd1e995) and
//     b = MurmurHash64A(key, a), the second seeded with the first
//     (RedisBloomHash);
//   - position i (0 ≤ i < k) of a filter of m positions: (a + i·b) mod m,
//     with a + i·b computed in wrapping 64-bit arithmetic, exactly as C's
//     uint64_t arithmetic does (Mod64 reduces it).
//
// The key is hashed without a seed of bloomlab's: a file using this scheme
// records seed 0. Scheme values 1–63 use xxh3-128 with the file's seed;
// values from 64 up name foreign hash families. RedisBloom is not a scheme
// an Indexer implements (NewIndexer rejects it): the structures that use it
// (package scalable) compute its positions themselves.
const RedisBloom Scheme = 64

// murmurM is MurmurHash64A's multiplier; RedisBloom also uses it as the
// seed of the first hash.
const murmurM = 0xc6a4a7935bd1e995

// RedisBloomSeed is the seed of RedisBloom's first hash.
const RedisBloomSeed = murmurM

// MurmurHash64A returns Austin Appleby's MurmurHash64A of key with the
// given seed, as RedisBloom computes it (MurmurHash64A_Bloom) on a
// little-endian machine: 8-byte blocks read little-endian, the tail folded
// in from its last byte down. It allocates nothing. RedisBloom passes the
// length as a C int; keys of 2^31 bytes or more (which Redis does not
// accept) are hashed here with their full length.
func MurmurHash64A(key []byte, seed uint64) uint64 {
	const r = 47
	h := seed ^ uint64(len(key))*murmurM
	for len(key) >= 8 {
		k := binary.LittleEndian.Uint64(key)
		k *= murmurM
		k ^= k >> r
		k *= murmurM
		h ^= k
		h *= murmurM
		key = key[8:]
	}
	if len(key) > 0 {
		var t uint64
		for i := len(key) - 1; i >= 0; i-- {
			t = t<<8 | uint64(key[i])
		}
		h ^= t
		h *= murmurM
	}
	h ^= h >> r
	h *= murmurM
	h ^= h >> r
	return h
}

// RedisBloomHash returns the two 64-bit hashes RedisBloom derives from a
// key (bloom_calc_hash64): a with seed RedisBloomSeed, and b with seed a.
func RedisBloomHash(key []byte) (a, b uint64) {
	a = MurmurHash64A(key, RedisBloomSeed)
	return a, MurmurHash64A(key, a)
}

// Mod64 returns t mod m for any 64-bit t and 1 ≤ m ≤ 2^62, given
// recip = ⌊(2^64 − 1)/m⌋, with two multiplications and no branch or
// division. It is ModSmall without the bound on t: with r = (2^64 − 1) mod
// m, t·recip/2^64 = t/m − t·(1 + r)/(m·2^64) and t·(1 + r)/(m·2^64) < 1, so
// the quotient estimate ⌊t·recip/2^64⌋ is ⌊t/m⌋ or one less, and one
// conditional subtraction, done with a mask, finishes the job.
func Mod64(t, m, recip uint64) uint64 {
	q, _ := bits.Mul64(t, recip)
	r := t - q*m - m
	return r + m&uint64(int64(r)>>63)
}

// murmur2M is MurmurHash2's multiplier (the low half of MurmurHash64A's).
const murmur2M = 0x5bd1e995

// MurmurHash2 returns Austin Appleby's 32-bit MurmurHash2 of key (a
// []byte or a string, which it does not copy) with the given seed, as
// RedisBloom computes it (deps/murmur2/MurmurHash2.c) on a little-endian
// machine: 4-byte blocks read little-endian, the tail of 1 to 3 bytes
// folded in from its last byte down. RedisBloom's Count-Min sketch hashes
// row i of a key with MurmurHash2(key, i). It allocates nothing.
// RedisBloom passes the length as a C int; keys of 2^31 bytes or more
// (which Redis does not accept) are hashed here with their full length,
// the length mixed into the seed modulo 2^32.
func MurmurHash2[K []byte | string](key K, seed uint32) uint32 {
	h := seed ^ uint32(len(key))
	for len(key) >= 4 {
		k := uint32(key[0]) | uint32(key[1])<<8 | uint32(key[2])<<16 | uint32(key[3])<<24
		k *= murmur2M
		k ^= k >> 24
		k *= murmur2M
		h *= murmur2M
		h ^= k
		key = key[4:]
	}
	switch len(key) {
	case 3:
		h ^= uint32(key[2]) << 16
		fallthrough
	case 2:
		h ^= uint32(key[1]) << 8
		fallthrough
	case 1:
		h ^= uint32(key[0])
		h *= murmur2M
	}
	h ^= h >> 13
	h *= murmur2M
	h ^= h >> 15
	return h
}
