package theory

import "math"

// Standard Ribbon filters (Dillinger and Walzer, "Ribbon filter:
// practically smaller than Bloom and Xor", 2021, §2–§4), as package ribbon
// builds them: a key's w-bit coefficient row starts at a uniform slot of a
// shard (start ≤ slots − w), and the filter stores, for each of r result
// columns, one bit per slot: a solution Z of the linear system row·Z =
// result over GF(2) found by on-the-fly Gaussian elimination. A query
// reads one w-bit window per column and answers yes to an absent key with
// probability 2^-r (FPRibbon).
//
// Keys are split by hash into shards of about RibbonShardKeys keys, each an
// independent system: a shard of k keys has
//
//	slots(k) = 128·⌈(⌈k·(1 + RibbonEpsilon)⌉ + w) / 128⌉
//
// slots (w = 128: the start range is slots − w + 1), so the space
// overhead is RibbonEpsilon plus about (w + 64)/k from the window and the
// rounding to 128-slot blocks, whatever n: it does not grow with n as an
// unsharded Standard Ribbon's must (its ε grows with log n for a fixed
// success probability, §4). A shard whose banding fails is retried with a
// new seed; after RibbonGrowAfter failures it gets one more block (at most
// RibbonMaxGrowth times).
//
// Memory: r bits per slot, plus one zero block (128·r bits) after the
// last so that a query reads two blocks without a branch, plus one 64-bit
// word per shard and one more (the shards' block offsets and attempt
// seeds).

// RibbonWidth is w, the coefficient row width in bits.
const RibbonWidth = 128

// RibbonShardKeys is the number of keys per shard the ribbon package aims
// at: shards = ⌈n / RibbonShardKeys⌉.
const RibbonShardKeys = 1 << 15

// RibbonEpsilon is the slot overhead ε of a shard beyond the window:
// chosen by measurement so that most shards band at the first or second
// seed (package ribbon's TestRibbonAttempts).
const RibbonEpsilon = 0.028

// RibbonGrowAfter is the number of failed attempts after which a shard
// gets one more block; RibbonMaxGrowth the most blocks it gets so.
const (
	RibbonGrowAfter = 16
	RibbonMaxGrowth = 1
)

// RibbonSaturate is the number of keys above which RibbonSlots,
// RibbonBits and RibbonMaxBits answer math.MaxUint64 (more than any
// memory; their formulas would overflow 64 bits at r = 32) and
// RibbonBitsPerKey +Inf.
const RibbonSaturate = 1 << 56

// RibbonShards returns the number of shards of a filter of n keys.
func RibbonShards(n uint64) uint64 {
	return max(1, n/RibbonShardKeys+(n%RibbonShardKeys+RibbonShardKeys-1)/RibbonShardKeys)
}

// RibbonShardBlocks returns the number of 128-slot blocks of a shard of k
// keys (before any growth after failed attempts).
func RibbonShardBlocks(k uint64) uint64 {
	if k > RibbonSaturate {
		return math.MaxUint64 / 128
	}
	want := uint64(math.Ceil(float64(k)*(1+RibbonEpsilon))) + RibbonWidth
	return (want + 127) / 128
}

// RibbonSlots returns the expected number of slots of a filter of n keys:
// its shards' slots with the keys split evenly (the shards of a built
// filter hold binomially scattered counts; RibbonMaxBits bounds them).
func RibbonSlots(n uint64) uint64 {
	if n > RibbonSaturate {
		return math.MaxUint64
	}
	s := RibbonShards(n)
	q, rem := n/s, n%s
	return 128 * (rem*RibbonShardBlocks(q+1) + (s-rem)*RibbonShardBlocks(q))
}

// RibbonBits returns the expected memory, in bits, of a filter of n keys
// with r result bits (1 … 32): r bits per slot (RibbonSlots), the zero
// block after the last, and the shard table.
func RibbonBits(n uint64, r int) uint64 {
	if n > RibbonSaturate {
		return math.MaxUint64
	}
	return RibbonSlots(n)*uint64(r) + 128*uint64(r) + 64*(RibbonShards(n)+1)
}

// RibbonMaxBits bounds the memory of any filter of n keys with r result
// bits, however its keys fall into shards and however many shards grew: a
// shard of k keys has at most k·(1 + RibbonEpsilon) + 1 + 128 + 127 slots
// before growth (the ceiling, the window, the rounding to blocks) and
// RibbonMaxGrowth blocks more after it. It grows with n.
func RibbonMaxBits(n uint64, r int) uint64 {
	if n > RibbonSaturate {
		return math.MaxUint64
	}
	s := RibbonShards(n)
	slots := uint64(math.Ceil(float64(n)*(1+RibbonEpsilon))) + s*(1+RibbonWidth+127+RibbonMaxGrowth*128)
	return slots*uint64(r) + 128*uint64(r) + 64*(s+1)
}

// RibbonBitsPerKey returns RibbonBits per key (NaN for n = 0).
func RibbonBitsPerKey(n uint64, r int) float64 {
	if n == 0 {
		return math.NaN()
	}
	if n > RibbonSaturate {
		return math.Inf(1)
	}
	return float64(RibbonBits(n, r)) / float64(n)
}

// RibbonOverhead returns RibbonBitsPerKey ÷ r − 1: the space above the
// lower bound n·log2(1/ε) of a filter of rate ε = 2^-r.
func RibbonOverhead(n uint64, r int) float64 { return RibbonBitsPerKey(n, r)/float64(r) - 1 }

// FPRibbon returns the false-positive rate of a Ribbon filter with r result
// bits: 2^-r (an absent key's r result bits are compared with r parities
// of its row and the solution, independent of them).
func FPRibbon(r int) float64 { return math.Ldexp(1, -r) }
