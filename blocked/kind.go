package blocked

import (
	"fmt"
	"math"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/bitvec"
	"github.com/bloomlab/bloomlab/internal/format"
	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/internal/sizing"
	"github.com/bloomlab/bloomlab/theory"
)

var _ kind.Filter = (*Filter)(nil)

func init() {
	kind.Register(kind.Spec{
		Name:    "blocked",
		Summary: "cache-line-blocked Bloom filter: a key's k bits in one 512-bit block, one cache line per query (004 §8; Putze, Sanders and Singler 2007)",
		Order:   40, Format: format.KindBlocked, Decode: kind.Decoded(decode),
		FPRMethod: "mean over blocks of (block fill)^k, from the bits",
		Plan:      func(*kind.Values) kind.Planner { return plan }, // one layout: no options
		Describe:  describe,
		Combine:   kind.Union[*Filter](),
	})
}

// plan sizes a blocked filter: theory.SizeBlocked for a rate; for bits per
// key the whole blocks within the budget (at least one) and
// theory.OptimalKBlocked; an explicit m rounded up to whole blocks.
func plan(t kind.Target) (kind.Plan, error) {
	if err := sizing.Check("blocked", t); err != nil {
		return kind.Plan{}, err
	}
	var blocks uint64
	var k int
	var notices []string
	nf := float64(t.N)
	switch {
	case t.Explicit():
		blocks, k = (t.M+BlockBits-1)/BlockBits, t.K
		if m := blocks * BlockBits; m != t.M {
			notices = append(notices, fmt.Sprintf("m rounded up from %d to %d: whole 512-bit blocks", t.M, m))
		}
	case t.FPR > 0:
		// A blocked filter needs more bits than a standard one at the same
		// rate (its blocks' loads vary): when the standard filter is
		// already too large, so is this one, and the search is skipped.
		if _, _, err := theory.Size(t.N, t.FPR); err != nil {
			return kind.Plan{}, fmt.Errorf("blocked: %w: %w", err, kind.ErrParam)
		}
		var err error
		if blocks, k, err = theory.SizeBlocked(t.N, t.FPR); err != nil {
			return kind.Plan{}, fmt.Errorf("blocked: %w: %w", err, kind.ErrParam)
		}
	default:
		budget := math.Ceil(t.BitsPerKey * nf)
		if budget > hashing.MaxM {
			return kind.Plan{}, fmt.Errorf("blocked: %v bits per key for %d keys exceeds 2^48 bits: %w", t.BitsPerKey, t.N, kind.ErrParam)
		}
		blocks = max(1, uint64(budget)/BlockBits)
		k = min(max(1, theory.OptimalKBlocked(nf, float64(blocks), BlockBits)), hashing.MaxK)
	}
	if blocks > MaxBlocks || k > hashing.MaxK {
		return kind.Plan{}, fmt.Errorf("blocked: %d blocks with k = %d out of range (at most 2^39 blocks, k ≤ %d): %w", blocks, k, hashing.MaxK, kind.ErrParam)
	}
	m := blocks * BlockBits
	p := kind.Plan{
		Kind: "blocked", Scheme: "-", M: m, MUnit: "bits", K: k, Bits: m,
		Capacity: t.N, FPR: theory.FPBlocked(nf, float64(blocks), BlockBits, k), Hashes: 1, Accesses: 1,
		Note: "512-bit blocks: one cache line per query (004 §8)", Notices: notices,
		Extra: []kind.Field{{Name: "blocks", Value: blocks}},
	}
	if t.N == 0 {
		p.FPR = math.NaN()
	}
	p.New = func() (kind.Builder, error) {
		f, err := New(m, k, WithSeed(t.Seed))
		if err != nil {
			return nil, err
		}
		f.capacity = t.N
		return kind.FilterBuilder(f)
	}
	return p, nil
}

func describe(g kind.Filter) []kind.Field {
	f := g.(*Filter)
	dn, dnote := bitvec.DesignN(f.M(), f.k, f.capacity)
	rate := func(n uint64) float64 {
		if f.blocks == 0 {
			return 0
		}
		return theory.FPBlocked(float64(n), float64(f.blocks), BlockBits, f.k)
	}
	return []kind.Field{
		{Name: "blocks", Value: f.blocks, Note: "of 512 bits"},
		{Name: "k", Value: f.k},
		{Name: "fill ratio", Value: f.FillRatio()},
		{Name: "fpr at keys added", Value: rate(f.N()), Note: "formula (theory.FPBlocked), n = keys added"},
		{Name: "design n", Value: dn, Note: dnote},
		{Name: "fpr at design n", Value: rate(dn), Note: "formula (theory.FPBlocked)"},
		{Name: "approx count", Value: f.ApproxCount(), Note: "distinct keys, from each block's fill"},
	}
}
