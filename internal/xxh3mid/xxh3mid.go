// Package xxh3mid computes XXH3-64 of a key of 9 to 16 bytes in its
// caller: the XXH3 specification's 9–16-byte path (XXH3_len_9to16_64b)
// with xxh3's default secret, small enough for the compiler to inline.
// hashing.Sum64 and the static filters' queries (fuse, ribbon) use it so
// that such a key (a UUID, an 8-byte id with a prefix) is hashed without
// a call into the xxh3 package; the tests check it against
// github.com/zeebo/xxh3 for every length and many seeds.
package xxh3mid

import (
	"encoding/binary"
	"math/bits"
)

// The 64-bit words of xxh3's default secret (kSecret) at bytes 24 … 55.
const (
	secret24 = 0x1f67b3b7a4a44072
	secret32 = 0x78e5c0cc4ee679cb
	secret40 = 0x2172ffcc7dd05a82
	secret48 = 0x8e2443f7744608b8
)

// In reports whether Hash computes XXH3-64 of a key of n bytes.
func In(n int) bool { return uint(n)-9 < 8 }

// Hash is xxh3.HashSeed(key, seed) for 9 ≤ len(key) ≤ 16 (In). For any
// other length its value is not XXH3's, and below 8 bytes it panics:
// callers check In first.
func Hash(key []byte, seed uint64) uint64 {
	lo := binary.LittleEndian.Uint64(key) ^ ((secret24 ^ secret32) + seed)
	hi := binary.LittleEndian.Uint64(key[len(key)-8:]) ^ ((secret40 ^ secret48) - seed)
	mh, ml := bits.Mul64(lo, hi)
	x := uint64(len(key)) + bits.ReverseBytes64(lo) + hi + (mh ^ ml)
	x ^= x >> 37
	x *= 0x165667919e3779f9
	return x ^ x>>32
}
