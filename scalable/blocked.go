package scalable

import (
	"errors"
	"fmt"
	"math"

	"github.com/bloomlab/bloomlab/blocked"
	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/bitvec"
	"github.com/bloomlab/bloomlab/theory"
)

// The blocked profile: each link is a cache-line-blocked Bloom filter in
// package blocked's layout. A key's digest (the seeded xxh3-128 of the
// bloomlab profile, computed once) picks one 512-bit block of the link,
// hashing.Reduce(H1, blocks), and k positions inside it
// (blocked.AppendPositions: 9-bit fields of H2 and of its remixes), so a
// query costs one cache line per link it tests. A link of n keys at rate
// ε has the fewest blocks for which some k gives theory.FPBlocked ≤ ε
// (theory.SizeBlocked): a blocked filter needs more bits than a standard
// one at the same rate (its blocks' loads vary), and sizing by its own
// model keeps each link at its share, so the chain at its target.

// blockBits and blockWords are a block's bits and words.
const (
	blockBits  = blocked.BlockBits
	blockWords = blockBits / 64
)

// blockedGeometry sizes a blocked link of entries keys at rate errRate:
// its bits (a multiple of 512) and k ≤ 64 (theory.SizeBlocked).
func blockedGeometry(entries uint64, errRate float64) (m uint64, k int, err error) {
	if entries < 1 || !(errRate > 0 && errRate < 1) {
		return 0, 0, fmt.Errorf("link of %d entries at rate %v: %w", entries, errRate, errCannotGrow)
	}
	b, k, err := theory.SizeBlocked(entries, errRate)
	if errors.Is(err, theory.ErrTooLarge) || err == nil && b > hashing.MaxM/blocked.BlockBits {
		return 0, 0, fmt.Errorf("blocked link of %d entries at rate %v needs more than 2^48 bits: %w", entries, errRate, errCannotGrow)
	} else if err != nil {
		return 0, 0, fmt.Errorf("blocked link of %d entries at rate %v: %v: %w", entries, errRate, err, errCannotGrow)
	}
	if k < 1 || k > hashing.MaxK {
		return 0, 0, fmt.Errorf("blocked link of %d entries at rate %v: k = %d: %w", entries, errRate, k, errCannotGrow)
	}
	return b * blocked.BlockBits, k, nil
}

// makeBlockedLink returns a blocked link of m bits (a multiple of 512,
// checked by the caller) and k positions per key.
func makeBlockedLink(m uint64, k int, entries uint64, errRate float64, words []uint64, size uint64) *link {
	return &link{words: words, mod: m, k: k, blocks: m / blocked.BlockBits,
		bits: m, entries: entries, errRate: errRate, size: size}
}

// blockOf returns the words of d's block.
func (l *link) blockOf(d hashing.Digest) []uint64 {
	i := hashing.Reduce(d.H1, l.blocks) * blockWords
	return l.words[i : i+blockWords : i+blockWords]
}

// hasBlocked is has for a blocked link: one block, its bits loaded
// atomically.
func (l *link) hasBlocked(d hashing.Digest) bool {
	return blocked.BlockContains(l.blockOf(d), d, l.k)
}

// setBlocked sets d's positions in its block of a blocked link; readers
// may be loading the block concurrently.
func (l *link) setBlocked(d hashing.Digest) { blocked.BlockAddAtomic(l.blockOf(d), d, l.k) }

// blockedRate is theory.FPBlocked for a blocked link holding n keys: its
// expected rate, exact under the model of package blocked.
func (l *link) blockedRate(n float64) float64 {
	return theory.FPBlocked(n, float64(l.blocks), blocked.BlockBits, l.k)
}

// blockedStateRate is the rate of a blocked link's bits: the mean over
// its blocks of (ones in the block / 512)^k, exact for a random query
// (blocked.Filter.EstimatedFPR). The caller holds f.mu.
func (l *link) blockedStateRate() float64 {
	v := bitvec.Vec(l.words)
	var sum float64
	for b := range l.blocks {
		sum += math.Pow(float64(v.OnesIn(b*blocked.BlockBits, (b+1)*blocked.BlockBits))/blocked.BlockBits, float64(l.k))
	}
	return sum / float64(l.blocks)
}
