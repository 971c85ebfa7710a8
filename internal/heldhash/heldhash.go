// Package heldhash is the admission rule the static filters' builders
// (fuse, ribbon) share. Such a builder holds its keys' 64-bit hashes until
// Finish builds the filter from them; Budget decides whether it may hold
// one more: at most a kind's maximum number of keys, and, under a memory
// budget (kind.MemoryBudgeter's SetMaxBits), no more keys than a build
// of them fits: need(n), the kind's bound on the memory of building from
// n keys, in bits.
package heldhash

import (
	"fmt"

	"github.com/bloomlab/bloomlab/internal/base"
)

// Budget is a builder's memory budget. The zero Budget has none.
type Budget struct {
	maxBits uint64 // 0: no budget
	fits    uint64 // a number of keys known to fit maxBits
}

// Set sets the budget to bits (0: none).
func (b *Budget) Set(bits uint64) { b.maxBits, b.fits = bits, 0 }

// Fits is the number of keys the budget is known to fit (for tests).
func (b *Budget) Fits() uint64 { return b.fits }

// Admit reports whether a builder may hold n keys: n ≤ max, and
// need(n) ≤ the budget. need must not decrease as n grows, so that a
// count that fits vouches for every smaller one: Admit checks twice the
// count (at most max) and remembers it when it fits, or else the most
// keys that fit (by bisection), so that need runs O(log n) times over n
// admissions. An error names pkg and, for the
// budget, what need counts.
func (b *Budget) Admit(n, max uint64, need func(uint64) uint64, pkg, counts string) error {
	if n > max {
		return fmt.Errorf("%s: more than %d keys: %w", pkg, max, base.ErrParam)
	}
	if b.maxBits == 0 || n <= b.fits {
		return nil
	}
	switch twice := min(2*n, max); {
	case need(twice) <= b.maxBits:
		b.fits = twice
	case need(n) <= b.maxBits:
		// The most keys that fit, between n and twice: bisection.
		lo, hi := n, twice
		for hi-lo > 1 {
			if mid := lo + (hi-lo)/2; need(mid) <= b.maxBits {
				lo = mid
			} else {
				hi = mid
			}
		}
		b.fits = lo
	default:
		return fmt.Errorf("%s: memory budget of %d bits reached: building from %d keys takes %d bits (%s)", pkg, b.maxBits, n, need(n), counts)
	}
	return nil
}
