package theory

import (
	"fmt"
	"math"
)

// Split-block Bloom filter (Parquet's SBBF, parquet-format BloomFilter.md):
// blocks of SplitBlockWords 32-bit words; a key sets one bit in each word of
// its block.
const (
	// SplitBlockBits is the size of a split block in bits.
	SplitBlockBits = 256
	// SplitBlockWords is the number of 32-bit words of a split block, and
	// the number of bits a key sets (one per word).
	SplitBlockWords = 8
	// MaxSplitBlocks is the largest number of blocks the format allows
	// (z < 2^31).
	MaxSplitBlocks = 1<<31 - 1
)

// FPSplitBlock returns the false-positive probability of a split-block
// Bloom filter of the given number of 256-bit blocks holding n distinct
// keys. The model: each key's block is uniform over the blocks, and inside
// it the key sets one bit in each of the eight 32-bit words, uniform over
// the word's 32 bits and independent of the other words (the format's
// bit (x·salt_i) >> 27 of word i is uniform for uniform x, since x ↦ x·salt_i
// is a bijection of the 32-bit integers for an odd salt). A query for a key
// never added tests one bit in each word of its block; in a block that
// received j keys, a given bit of a word is still clear with probability
// (1 − 1/32)^j, the words are independent, so with J ~ Bin(n, 1/blocks)
//
//	FP = Σ_j P(J = j) · (1 − (31/32)^j)^8.
//
// It is the blocked filter's formula (FPBlocked) with the query's k = 8
// bits each in a 32-bit sub-block of its own, where FPBlocked's k bits
// share the whole block: a split block is a partitioned Bloom filter of
// 8 × 32 bits, blocked. The cost is FPBlocked's, bounded whatever n. It
// returns NaN for n < 0 or blocks < 1.
func FPSplitBlock(n, blocks float64) float64 {
	return fpSplitBlock(n, blocks, nil)
}

func fpSplitBlock(n, blocks float64, terms *int) float64 {
	if !nonNeg(n) || !finite(blocks) || blocks < 1 {
		return math.NaN()
	}
	return fpLoads(n, blocks, math.Log1p(-1.0/32), SplitBlockWords, terms)
}

// SizeSplitBlock returns the smallest number of 256-bit blocks for which
// FPSplitBlock(n, blocks) ≤ eps, in O(log MaxSplitBlocks) evaluations.
// Errors wrap ErrInvalid (n = 0, eps outside (0, 1)) or ErrTooLarge (more
// than MaxSplitBlocks blocks, which it says instead of 2^48 bits).
func SizeSplitBlock(n uint64, eps float64) (blocks uint64, err error) {
	if err := checkSizeArgs(n, eps); err != nil {
		return 0, err
	}
	nf := float64(n)
	fits := func(b uint64) bool { return FPSplitBlock(nf, float64(b)) <= eps }
	// Start from the standard filter's size, which a split-block filter
	// needs about as much as (a little more).
	start := uint64(MaxSplitBlocks)
	if m, _, err := Size(n, eps); err == nil {
		start = min(start, max(1, m/SplitBlockBits))
	}
	b, ok := searchUp(start, MaxSplitBlocks, fits)
	if !ok {
		return 0, tooManySplitBlocks(fmt.Sprintf("theory: the split-block filter would need more than 2^31 − 1 blocks of 256 bits (64 GiB, the format's limit): n = %d, eps = %g", n, eps))
	}
	return b, nil
}

// tooManySplitBlocks is ErrTooLarge with the split-block format's limit
// in its text.
type tooManySplitBlocks string

func (e tooManySplitBlocks) Error() string { return string(e) }
func (e tooManySplitBlocks) Unwrap() error { return ErrTooLarge }
