package hashing

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// BitsAndBlooms names, in a file's scheme byte, the hash family and index
// rule of github.com/bits-and-blooms/bloom/v3 (its BloomFilter), so that a
// filter that library serialised can be imported and answer exactly as it
// did:
//
//   - base hashes: (h1, h2) = MurmurHash3_x64_128(key, 0) and
//     (h3, h4) = MurmurHash3_x64_128(key ‖ 0x01, 0), the key followed by one
//     byte 1 (its baseHashes; BitsAndBloomsHashes);
//   - position i (0 ≤ i < k) of a filter of m positions:
//     (h[i mod 2] + i·h[2 + ((i + i mod 2) mod 4)/2]) mod m with h = (h1,
//     h2, h3, h4), the sum and product in wrapping 64-bit arithmetic (its
//     location; BitsAndBloomsLocation), reduced by Mod64.
//
// Four 64-bit hashes do not fit a Digest: an Indexer of this scheme
// (NewBitsAndBloomsIndexer) maps keys, not digests, to positions
// (KeyPositions), and its Positions panics. Files using this scheme record
// seed 0.
const BitsAndBlooms Scheme = 65

// MurmurHash3_x64_128 returns Austin Appleby's MurmurHash3_x64_128 of key
// with the given seed as its two 64-bit halves (h1 first: the first eight
// bytes of the reference's output, read little-endian). It allocates
// nothing.
func MurmurHash3_x64_128(key []byte, seed uint32) (h1, h2 uint64) {
	h1, h2 = murmur3Blocks(key, uint64(seed), uint64(seed))
	n := len(key) &^ 15
	return murmur3Final(h1, h2, key[n:], uint64(len(key)))
}

// BitsAndBloomsHashes returns the four base hashes bits-and-blooms/bloom
// v3 derives from a key (its baseHashes): MurmurHash3_x64_128 with seed 0
// of the key, then of the key followed by one byte 1. It allocates
// nothing and does not copy the key but its last 15 bytes at most.
func BitsAndBloomsHashes(key []byte) (h [4]uint64) {
	a1, a2 := murmur3Blocks(key, 0, 0)
	n := len(key) &^ 15
	tail := key[n:]
	h[0], h[1] = murmur3Final(a1, a2, tail, uint64(len(key)))
	var buf [16]byte
	copy(buf[:], tail)
	buf[len(tail)] = 1
	if len(tail) == 15 { // key ‖ 1 ends on a block boundary
		a1, a2 = murmur3Mix(a1, a2, binary.LittleEndian.Uint64(buf[:8]), binary.LittleEndian.Uint64(buf[8:]))
		h[2], h[3] = murmur3Final(a1, a2, nil, uint64(len(key))+1)
		return h
	}
	h[2], h[3] = murmur3Final(a1, a2, buf[:len(tail)+1], uint64(len(key))+1)
	return h
}

// BitsAndBloomsLocation returns the i-th location of bits-and-blooms/bloom
// v3 for base hashes h, before its reduction modulo m: h[i mod 2] +
// i·h[2 + ((i + i mod 2) mod 4)/2] in wrapping 64-bit arithmetic. The
// second index runs 2, 3, 3, 2, 2, 3, 3, 2, … (it is 2 + ⌊(i+1)/2⌋ mod 2).
func BitsAndBloomsLocation(h [4]uint64, i uint64) uint64 {
	return h[i&1] + i*h[2+((i+1)>>1)&1]
}

// NewBitsAndBloomsIndexer returns the Indexer of a bits-and-blooms/bloom
// v3 filter of m positions and k per key (scheme BitsAndBlooms; m in [1,
// 2^48], k in [1, 64]). Its positions come from keys (KeyPositions);
// Positions, which takes a Digest, panics.
func NewBitsAndBloomsIndexer(m uint64, k int) (*Indexer, error) {
	if err := checkMK(m, k); err != nil {
		return nil, err
	}
	return &Indexer{scheme: BitsAndBlooms, k: k, m: m, sub: m, recip: ^uint64(0) / m, stepN: 1}, nil
}

// KeyPositions writes the k positions of key to out[:k] and returns
// out[:k], for an Indexer of scheme BitsAndBlooms: Mod64 of
// BitsAndBloomsLocation(BitsAndBloomsHashes(key), i) for i < k, exactly
// bits-and-blooms/bloom v3's positions. It panics for the other schemes
// (their positions come from a Digest: Positions). It allocates nothing.
func (ix *Indexer) KeyPositions(key []byte, out []uint64) []uint64 {
	if ix.scheme != BitsAndBlooms {
		panic(fmt.Sprintf("hashing: KeyPositions on an indexer of scheme %v (use Positions)", ix.scheme))
	}
	h := BitsAndBloomsHashes(key)
	out = out[:ix.k]
	for i := range out {
		out[i] = Mod64(BitsAndBloomsLocation(h, uint64(i)), ix.m, ix.recip)
	}
	return out
}

const (
	murmur3C1 = 0x87c37b91114253d5
	murmur3C2 = 0x4cf5ad432745937f
)

// murmur3Blocks mixes the whole 16-byte blocks of key into (h1, h2).
func murmur3Blocks(key []byte, h1, h2 uint64) (uint64, uint64) {
	for len(key) >= 16 {
		h1, h2 = murmur3Mix(h1, h2, binary.LittleEndian.Uint64(key), binary.LittleEndian.Uint64(key[8:]))
		key = key[16:]
	}
	return h1, h2
}

func murmur3Mix(h1, h2, k1, k2 uint64) (uint64, uint64) {
	k1 *= murmur3C1
	k1 = bits.RotateLeft64(k1, 31)
	k1 *= murmur3C2
	h1 ^= k1
	h1 = bits.RotateLeft64(h1, 27)
	h1 += h2
	h1 = h1*5 + 0x52dce729
	k2 *= murmur3C2
	k2 = bits.RotateLeft64(k2, 33)
	k2 *= murmur3C1
	h2 ^= k2
	h2 = bits.RotateLeft64(h2, 31)
	h2 += h1
	h2 = h2*5 + 0x38495ab5
	return h1, h2
}

// murmur3Final folds in the tail (fewer than 16 bytes) and the total
// length, and finalises.
func murmur3Final(h1, h2 uint64, tail []byte, length uint64) (uint64, uint64) {
	var k1, k2 uint64
	for i := len(tail) - 1; i >= 8; i-- {
		k2 = k2<<8 | uint64(tail[i])
	}
	if len(tail) > 8 {
		k2 *= murmur3C2
		k2 = bits.RotateLeft64(k2, 33)
		k2 *= murmur3C1
		h2 ^= k2
	}
	for i := min(len(tail), 8) - 1; i >= 0; i-- {
		k1 = k1<<8 | uint64(tail[i])
	}
	if len(tail) > 0 {
		k1 *= murmur3C1
		k1 = bits.RotateLeft64(k1, 31)
		k1 *= murmur3C2
		h1 ^= k1
	}
	h1 ^= length
	h2 ^= length
	h1 += h2
	h2 += h1
	h1 = fmix64(h1)
	h2 = fmix64(h2)
	h1 += h2
	h2 += h1
	return h1, h2
}

func fmix64(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	k ^= k >> 33
	return k
}
