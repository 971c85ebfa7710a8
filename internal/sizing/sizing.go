// Package sizing turns a kind.Target into the m and k of the filters that
// share the standard filter's shape (bloom, partitioned, counting): one
// place for the rules every such kind follows, so that they plan alike.
package sizing

import (
	"fmt"
	"math"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/theory"
)

// MaxBitsPerKey bounds a bits-per-key target.
const MaxBitsPerKey = 1 << 20

// Check validates the shape of a target: exactly one sizing, in range, and
// N ≥ 1 unless the size is explicit.
func Check(pkg string, t kind.Target) error {
	modes := 0
	if t.FPR != 0 {
		modes++
	}
	if t.BitsPerKey != 0 {
		modes++
	}
	if t.M != 0 || t.K != 0 {
		modes++
	}
	switch {
	case modes != 1:
		return kind.Paramf(pkg, "give exactly one of a false-positive rate ({fpr}), bits per key ({bits-per-key}), or m with k ({m}, {k})")
	case t.FPR != 0 && !(t.FPR > 0 && t.FPR < 1):
		return kind.Paramf(pkg, "{fpr} %v out of range (0, 1)", t.FPR)
	case t.BitsPerKey != 0 && !(t.BitsPerKey > 0 && t.BitsPerKey <= MaxBitsPerKey):
		return kind.Paramf(pkg, "{bits-per-key} %v out of range (0, 2^20]", t.BitsPerKey)
	case (t.M != 0 || t.K != 0) && (t.M < 1 || t.M > hashing.MaxM || t.K < 1 || t.K > hashing.MaxK):
		return kind.Paramf(pkg, "{m} %d {k} %d out of range (1 ≤ m ≤ 2^48, 1 ≤ k ≤ %d)", t.M, t.K, hashing.MaxK)
	case !t.Explicit() && t.N == 0:
		return fmt.Errorf("%s: %w", pkg, kind.ErrNeedN)
	}
	return nil
}

// Standard returns m and k for a standard or partitioned filter with
// scheme s: theory.SizeScheme for a rate (the smallest m, with k ≤ 64,
// whose rate meets it, the pair floor of double hashing included; already
// a valid size for s); m = ⌈B·n⌉
// (rounded down to a valid partitioned size, so the budget is never
// exceeded) and the optimal k for bits per key; the given m (rounded up to
// a valid size for the scheme) and k for an explicit size. notices says
// what was rounded.
func Standard(pkg string, s hashing.Scheme, t kind.Target) (m uint64, k int, notices []string, err error) {
	if err := Check(pkg, t); err != nil {
		return 0, 0, nil, err
	}
	switch {
	case t.Explicit():
		m, k = hashing.PartitionSize(s, t.M, t.K), t.K
		if m != t.M {
			notices = append(notices, fmt.Sprintf("m rounded up from %d to %d: scheme %v needs %s", t.M, m, s, partitionRule(s, k)))
		}
		if m > hashing.MaxM {
			return 0, 0, nil, fmt.Errorf("%s: m = %d exceeds 2^48 after rounding for scheme %v: %w", pkg, m, s, kind.ErrParam)
		}
	case t.FPR > 0:
		if s == hashing.Custom {
			return 0, 0, nil, fmt.Errorf("%s: a custom index function cannot be sized for a rate; give m and k: %w", pkg, kind.ErrParam)
		}
		if m, k, err = theory.SizeScheme(s, t.N, t.FPR, hashing.MaxK); err != nil {
			return 0, 0, nil, fmt.Errorf("%s: %w", pkg, err)
		}
	default:
		mf := math.Ceil(t.BitsPerKey * float64(t.N))
		if mf > float64(hashing.MaxM) {
			return 0, 0, nil, fmt.Errorf("%s: %v bits per key for %d keys exceeds 2^48 bits: %w", pkg, t.BitsPerKey, t.N, kind.ErrParam)
		}
		m = uint64(mf)
		if s.Partitioned() {
			k = theory.OptimalKPartitioned(float64(m), float64(t.N))
		} else {
			k = theory.OptimalK(float64(m), float64(t.N))
		}
		// More than MaxK hash functions only lowers the rate further
		// below what MaxK achieves at these bits per key.
		k = min(max(k, 1), hashing.MaxK)
		if r := partitionBelow(s, m, k); r != m {
			notices = append(notices, fmt.Sprintf("m rounded down from %d to %d: scheme %v needs %s", m, r, s, partitionRule(s, k)))
			m = r
		}
	}
	return m, k, notices, nil
}

// FP returns the false-positive rate of a standard (or, for a partitioned
// scheme, partitioned) filter of m positions and k per key holding n keys
// with scheme s: theory.FPScheme, which adds the pair floor of double
// hashing to the formula. A custom index function is taken as independent
// positions (theory.FPScheme of Independent).
func FP(s hashing.Scheme, m uint64, n uint64, k int) float64 {
	if n == 0 {
		return 0
	}
	switch s {
	case hashing.Custom:
		s = hashing.Independent
	case hashing.BlobloomXXH64:
		// k probes in one 512-bit block (theory.FPBlocked; blobloom's
		// probes within the block are double hashing, which the formula
		// treats as independent).
		return theory.FPBlocked(float64(n), float64(m/hashing.BlobloomBlockBits), hashing.BlobloomBlockBits, k)
	}
	return theory.FPScheme(s, m, float64(n), k)
}

func partitionRule(s hashing.Scheme, k int) string {
	if s == hashing.PrimePartition {
		return fmt.Sprintf("k = %d subarrays of a prime size", k)
	}
	return fmt.Sprintf("a multiple of k = %d", k)
}

// partitionBelow returns the largest size ≤ m that a partitioned scheme
// accepts with k subarrays (at least one position per subarray, a prime
// per subarray for PrimePartition); other schemes take m as it is.
func partitionBelow(s hashing.Scheme, m uint64, k int) uint64 {
	kk := uint64(k)
	switch s {
	case hashing.Partition, hashing.PartitionIndependent:
		return max(m/kk, 1) * kk
	case hashing.PrimePartition:
		p := m / kk
		for p > 2 && !hashing.IsPrime(p) {
			p--
		}
		return max(p, 2) * kk
	}
	return m
}
