package theory

import "math"

// Binary fuse filters (Graf and Lemire, "Binary Fuse Filters: Fast and
// Smaller Than Xor Filters", 2022, §3–§4): an array of c cells of f-bit
// fingerprints, cut into segments of L cells (L a power of two); a key
// maps to `arity` consecutive segments (the first uniform over the first
// c/L − arity + 1 of them) and one cell in each, and the xor of those
// cells is the key's fingerprint. The array is c = ⌈n·s/L⌉·L cells (at
// least arity segments), with the paper's empirical segment length L and
// size factor s (§4, Table 3; the formulas of the authors' C and Go code):
//
//	3-wise: L = 2^⌊ln n / ln 3.33 + 2.25⌋, s = max(1.125, 0.875 + 0.25·ln 10^6 / ln n)
//	4-wise: L = 2^⌊ln n / ln 2.91 − 0.5⌋,  s = max(1.075, 0.77 + 0.305·ln 600000 / ln n)
//
// L is kept within [4, 2^18] (the authors' Go code caps it at 2^18; the
// 4-wise formula gives L < 4 below 20 keys), and n·s is rounded to the
// nearest integer (0 for n ≤ 1). A query reads arity cells and answers
// yes to an absent key when its f-bit fingerprint equals the xor of
// those cells: with probability 2^-f (FPFuse).

// MaxFuseKeys is the largest number of keys a binary fuse filter holds:
// its cell indexes are 32-bit.
const MaxFuseKeys = 3_500_000_000

// FuseSegmentLength returns the segment length L, in cells, of a binary
// fuse filter of the given arity (3 or 4) for n keys.
func FuseSegmentLength(arity int, n uint64) uint64 {
	if n == 0 {
		return 4
	}
	var e float64
	if arity == 4 {
		e = math.Floor(math.Log(float64(n))/math.Log(2.91) - 0.5)
	} else {
		e = math.Floor(math.Log(float64(n))/math.Log(3.33) + 2.25)
	}
	return 1 << uint(min(max(e, 2), 18))
}

// FuseSizeFactor returns the size factor s (cells per key before rounding
// to whole segments) of a binary fuse filter of the given arity for n ≥ 2
// keys.
func FuseSizeFactor(arity int, n uint64) float64 {
	ln := math.Log(float64(n))
	if arity == 4 {
		return max(1.075, 0.77+0.305*math.Log(600000)/ln)
	}
	return max(1.125, 0.875+0.25*math.Log(1e6)/ln)
}

// FuseLayout returns the array of a binary fuse filter of the given arity
// for n keys: its length in cells and its segment length. ok is false for
// n above MaxFuseKeys or an arity other than 3 and 4.
func FuseLayout(arity int, n uint64) (cells, segLen uint64, ok bool) {
	if (arity != 3 && arity != 4) || n > MaxFuseKeys {
		return 0, 0, false
	}
	segLen = FuseSegmentLength(arity, n)
	capacity := uint64(0)
	if n > 1 {
		capacity = uint64(math.Round(float64(n) * FuseSizeFactor(arity, n)))
	}
	segments := max((capacity+segLen-1)/segLen, uint64(arity))
	return segments * segLen, segLen, true
}

// FuseBits returns the memory, in bits, of a binary fuse filter of the
// given arity with f-bit fingerprints for n keys: its cells, rounded up
// to whole 64-bit words (the file's payload). 0 where FuseLayout is not ok.
func FuseBits(arity, f int, n uint64) uint64 {
	cells, _, ok := FuseLayout(arity, n)
	if !ok {
		return 0
	}
	return (cells*uint64(f) + 63) / 64 * 64
}

// FuseBitsPerKey returns FuseBits per key (NaN for n = 0).
func FuseBitsPerKey(arity, f int, n uint64) float64 {
	if n == 0 {
		return math.NaN()
	}
	return float64(FuseBits(arity, f, n)) / float64(n)
}

// FPFuse returns the false-positive rate of a binary fuse filter with
// f-bit fingerprints: 2^-f, whatever n (an absent key's fingerprint is
// compared with the xor of arity cells, which is independent of it).
func FPFuse(f int) float64 { return math.Ldexp(1, -f) }
