package sbbf

import (
	"fmt"
	"io"
	"math"

	"github.com/bloomlab/bloomlab/internal/format"
	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/internal/sizing"
	"github.com/bloomlab/bloomlab/theory"
)

var _ kind.Filter = (*Filter)(nil)

func init() {
	kind.Register(kind.Spec{
		Name:    "sbbf",
		Summary: "Parquet's split-block Bloom filter, byte for byte: 256-bit blocks of eight 32-bit words, one bit per word, XXH64 seed 0 (parquet-format BloomFilter.md; Putze, Sanders and Singler 2007)",
		Order:   45, Format: format.KindSBBF, Decode: kind.Decoded(decode),
		FPRMethod: "mean over blocks of the product of the eight words' fills, from the bits",
		Options:   []kind.Option{{Name: "parquet-sizing", Type: kind.Bool, Default: false, Usage: "size -bits-per-key as parquet-go does (⌈⌈n·bits/8⌉ bytes / 32⌉ blocks, up to one block over the budget) rather than in the whole blocks within it"}},
		Plan:      planner,
		Describe:  describe,
		Combine:   kind.Union[*Filter](),
		Exports: []kind.Export{{
			Name:    "parquet",
			Summary: "the filter as a Parquet file stores it at a column chunk's bloom_filter_offset: the Thrift BloomFilterHeader and the bitset (sbbf.WriteParquet, sbbf.ReadParquet)",
			Write:   func(f kind.Filter, w io.Writer) error { return f.(*Filter).WriteParquet(w) },
			Read: func(r io.Reader) (kind.Filter, error) {
				f, err := ReadParquet(r)
				if err != nil {
					return nil, err
				}
				return f, nil
			},
			Detect: func(p []byte) bool { return len(p) > 0 && p[0] == 0x15 },
		}},
	})
}

// planner plans with the option parquet-sizing.
func planner(v *kind.Values) kind.Planner {
	pq := v.Bool("parquet-sizing")
	return func(t kind.Target) (kind.Plan, error) { return plan(t, pq) }
}

// plan sizes a split-block filter: theory.SizeSplitBlock for a rate; for
// bits per key the whole blocks within the budget (at least one), or with
// parquetSizing parquet-go's sizing (BlocksFor); an explicit m rounded up
// to whole 256-bit blocks (k must be 8: the layout sets one bit per word).
// A seed is ignored with a notice: the format hashes with seed 0; so is
// parquetSizing beside a rate or an explicit m.
func plan(t kind.Target, parquetSizing bool) (kind.Plan, error) {
	if err := sizing.Check("sbbf", t); err != nil {
		return kind.Plan{}, err
	}
	var blocks uint64
	var notices []string
	switch {
	case t.Explicit():
		if t.K != theory.SplitBlockWords {
			return kind.Plan{}, kind.Paramf("sbbf", "{k} %d: the split-block layout sets k = 8 bits per key (one per word)", t.K)
		}
		blocks = (t.M + theory.SplitBlockBits - 1) / theory.SplitBlockBits
		if m := blocks * theory.SplitBlockBits; m != t.M {
			notices = append(notices, fmt.Sprintf("m rounded up from %d to %d: whole 256-bit blocks", t.M, m))
		}
	case t.FPR > 0:
		var err error
		if blocks, err = theory.SizeSplitBlock(t.N, t.FPR); err != nil {
			return kind.Plan{}, fmt.Errorf("sbbf: %w: %w", err, kind.ErrParam)
		}
	case parquetSizing:
		blocks = BlocksFor(t.N, t.BitsPerKey)
	default:
		budget := math.Ceil(t.BitsPerKey * float64(t.N))
		blocks = max(1, uint64(min(budget/theory.SplitBlockBits, MaxBlocks+1)))
	}
	if blocks < 1 || blocks > MaxBlocks {
		return kind.Plan{}, fmt.Errorf("sbbf: the target needs more than 2^31 − 1 blocks of 256 bits (the format's limit): %w", kind.ErrParam)
	}
	if parquetSizing && (t.Explicit() || t.FPR > 0) {
		notices = append(notices, "-parquet-sizing ignored: it sizes -bits-per-key as parquet-go does, and the size here comes from -fpr or -m")
	}
	if t.Seed != 0 {
		notices = append(notices, fmt.Sprintf("seed %d ignored: the Parquet format hashes with XXH64 seed 0", t.Seed))
	}
	m := blocks * theory.SplitBlockBits
	p := kind.Plan{
		Kind: "sbbf", Scheme: "-", M: m, MUnit: "bits", K: theory.SplitBlockWords, Bits: m,
		Capacity: t.N, FPR: theory.FPSplitBlock(float64(t.N), float64(blocks)), Hashes: 1, Accesses: 1,
		Note: "Parquet's split-block filter: 256-bit blocks, one bit per 32-bit word", Notices: notices,
		Extra: []kind.Field{{Name: "blocks", Value: blocks}},
	}
	if t.N == 0 {
		p.FPR = math.NaN()
	}
	p.New = func() (kind.Builder, error) {
		f, err := New(blocks)
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
	rate := func(n uint64) float64 {
		if f.blocks == 0 {
			return 0
		}
		return theory.FPSplitBlock(float64(n), float64(f.blocks))
	}
	fields := []kind.Field{
		{Name: "blocks", Value: f.blocks, Note: "of 256 bits: eight 32-bit words"},
		{Name: "k", Value: theory.SplitBlockWords, Note: "one bit per word"},
		{Name: "hash", Value: "xxh64", Note: "seed 0, as Parquet"},
		{Name: "fill ratio", Value: f.FillRatio()},
	}
	if f.N() > 0 || f.Ones() == 0 {
		fields = append(fields, kind.Field{Name: "fpr at keys added", Value: rate(f.N()), Note: "formula (theory.FPSplitBlock), n = keys added"})
	} else {
		fields = append(fields, kind.Field{Name: "keys added", Value: "unknown", Note: "an imported bitset: its rate is the state's"})
	}
	if f.capacity > 0 {
		fields = append(fields, kind.Field{Name: "fpr at capacity", Value: rate(f.capacity), Note: "formula (theory.FPSplitBlock)"})
	}
	return fields
}
