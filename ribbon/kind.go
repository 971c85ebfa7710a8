package ribbon

import (
	"fmt"
	"math"

	"github.com/bloomlab/bloomlab/internal/format"
	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/internal/sizing"
	"github.com/bloomlab/bloomlab/theory"
)

var _ kind.Filter = (*Filter)(nil)

func init() {
	kind.Register(kind.Spec{
		Name:    "ribbon",
		Summary: "Standard Ribbon filter, static: r result bits for any r from 1 to 32, 128-bit rows (Dillinger and Walzer 2021)",
		Order:   71, Format: format.KindRibbon, Decode: kind.Decoded(decode),
		FPRMethod: "2^-r",
		Static:    true,
		Options:   []kind.Option{{Name: "r", Type: kind.Int, Default: 0, Usage: "result bits, 1 … 32 (the rate is 2^-r); 0: from -fpr or -bits-per-key"}},
		Plan: func(v *kind.Values) kind.Planner {
			r := v.Int("r")
			return func(t kind.Target) (kind.Plan, error) { return plan(t, r) }
		},
		Describe: describe,
	})
}

// resultBitsFor returns r = ⌈log2(1/fpr)⌉, at least 1 (0 if above 32).
func resultBitsFor(fpr float64) int {
	r := max(1, int(math.Ceil(-math.Log2(fpr))))
	for r > 1 && theory.FPRibbon(r-1) <= fpr { // rounding of log2
		r--
	}
	if r > 32 {
		return 0
	}
	return r
}

// plan sizes a Ribbon filter for t.N keys: r is -r, or the smallest whose
// rate 2^-r meets -fpr, or the largest whose filter fits -bits-per-key (1
// bit, with a notice, when even that one does not fit); the slots are
// theory.RibbonSlots. An explicit -m and -k is refused: the size follows
// from the keys.
func plan(t kind.Target, r int) (kind.Plan, error) {
	if t.Explicit() || t.K != 0 {
		return kind.Plan{}, kind.Paramf("ribbon", "{m} and {k} do not apply: a Ribbon filter's size follows from its keys (give {n} with {fpr} or {bits-per-key}, or {r})")
	}
	// A rate sizes a static filter without n: its array follows the
	// keys Finish is given (a pipe of unknown length); Bits, M and
	// BuildBytes are then 0 (unknown) and the capacity is the keys'.
	tn := t
	if t.N == 0 && t.FPR > 0 {
		tn.N = 1
	}
	if err := sizing.Check("ribbon", tn); err != nil {
		return kind.Plan{}, err
	}
	if r < 0 || r > 32 {
		return kind.Plan{}, kind.Paramf("ribbon", "{r} %d: want 1 … 32", r)
	}
	if t.N > MaxKeys {
		return kind.Plan{}, fmt.Errorf("ribbon: %d keys: a Ribbon filter holds at most %d: %w", t.N, uint64(MaxKeys), kind.ErrParam)
	}
	var notices []string
	switch {
	case r > 0:
		if t.FPR > 0 && theory.FPRibbon(r) > t.FPR {
			return kind.Plan{}, kind.Paramf("ribbon", "{r} %d gives 2^-%d = %.3g, above {fpr} %g", r, r, theory.FPRibbon(r), t.FPR)
		}
		if t.BitsPerKey > 0 && float64(theory.RibbonBits(t.N, r)) > math.Ceil(t.BitsPerKey*float64(t.N)) {
			notices = append(notices, fmt.Sprintf("-r %d takes %.3g bits per key for %d keys, above -bits-per-key %g", r, theory.RibbonBitsPerKey(t.N, r), t.N, t.BitsPerKey))
		}
	case t.FPR > 0:
		if r = resultBitsFor(t.FPR); r == 0 {
			return kind.Plan{}, kind.Paramf("ribbon", "{fpr} %g: the most result bits (32) give 2^-32 ≈ 2.3e-10", t.FPR)
		}
	default:
		budget := math.Ceil(t.BitsPerKey * float64(t.N))
		for c := 32; c >= 1; c-- {
			if float64(theory.RibbonBits(t.N, c)) <= budget {
				r = c
				break
			}
		}
		if r == 0 {
			r = 1
			notices = append(notices, fmt.Sprintf("-bits-per-key %g is below the smallest Ribbon filter (1 result bit: %.3g bits per key for %d keys): planned that one",
				t.BitsPerKey, theory.RibbonBitsPerKey(t.N, 1), t.N))
		}
	}
	c := Config{ResultBits: r, Seed: t.Seed}
	n := t.N
	slots, bits, build := theory.RibbonSlots(n), theory.RibbonBits(n, r), BuildBytes(c, n)
	if n == 0 {
		slots, bits, build = 0, 0, 0
	}
	return kind.Plan{
		Kind: "ribbon", Scheme: "-", M: slots, MUnit: "slots", K: r, Bits: bits, Capacity: n, BuildBytes: build,
		FPR: theory.FPRibbon(r), Hashes: 1, Accesses: 2, Notices: notices,
		Note: fmt.Sprintf("Standard Ribbon filter (static: built once from all its keys; holds 8 bytes per key while building): %d result bits, 128-bit rows", r),
		Extra: []kind.Field{
			{Name: "result bits", Value: r},
			{Name: "shards", Value: theory.RibbonShards(n), Note: fmt.Sprintf("of about %d keys", theory.RibbonShardKeys)},
			buildMemory(BuildBytes(c, n), n),
		},
		New: func() (kind.Builder, error) {
			b, err := NewBuilder(c)
			if err != nil {
				return nil, err
			}
			b.capacity = n
			return builder{b}, nil
		},
	}, nil
}

// builder is a Builder as a kind.Builder (and kind.MemoryBudgeter).
type builder struct{ *Builder }

func (b builder) Finish() (kind.Filter, error) {
	f, err := b.Builder.Finish()
	if err != nil {
		return nil, err
	}
	return f, nil
}

func describe(g kind.Filter) []kind.Field {
	f := g.(*Filter)
	bpk := f.BitsPerKey()
	fields := []kind.Field{
		{Name: "result bits", Value: f.ResultBits(), Note: "r: the rate is 2^-r"},
		{Name: "slots", Value: f.Slots(), Note: "r bits each, in blocks of 128"},
		{Name: "shards", Value: f.Shards(), Note: "independent systems of about 2^15 keys"},
		{Name: "fpr", Value: f.EstimatedFPR(), Note: "2^-r for every key not in the set"},
		{Name: "static", Value: true, Note: "no add or remove: rebuild from the keys"},
	}
	if !math.IsNaN(bpk) && f.ResultBits() > 0 {
		fields = append(fields,
			kind.Field{Name: "bits per key", Value: bpk},
			kind.Field{Name: "bits per key / log2(1/fpr)", Value: bpk / float64(f.ResultBits()), Note: "1 is the lower bound"})
	}
	return fields
}

// buildMemory is the plan's field for the memory a build of n keys takes
// (BuildBytes; n = 0: unknown, bounded as the keys come).
func buildMemory(bytes, n uint64) kind.Field {
	const note = "at the peak of the build: the keys' 64-bit hashes held until Finish, one shard's banding arrays and the filter"
	if n == 0 {
		return kind.Field{Name: "build memory", Value: "about 18 bytes per key and the filter", Note: note}
	}
	return kind.Field{Name: "build memory", Value: fmt.Sprintf("%d bytes", bytes), Note: note}
}
