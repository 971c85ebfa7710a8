package fuse

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
		Name:    "fuse",
		Summary: "binary fuse filter, static: 3- or 4-wise, 8-, 16- or 32-bit fingerprints (Graf and Lemire 2022)",
		Order:   70, Format: format.KindFuse, Decode: kind.Decoded(decode),
		FPRMethod: "2^-f, the fingerprint's",
		Static:    true,
		Options:   []kind.Option{{Name: "arity", Type: kind.Int, Default: 3, Usage: "cells per key: 3 or 4 (4: about 4.5% smaller, one more memory access per query)"}},
		Plan: func(v *kind.Values) kind.Planner {
			arity := v.Int("arity")
			return func(t kind.Target) (kind.Plan, error) { return plan(t, arity) }
		},
		Describe: describe,
	})
}

// fingerprintFor returns the fingerprint width for a rate: the narrowest
// of 8, 16 and 32 bits whose rate 2^-f meets it (0 if none does: below
// 2^-32).
func fingerprintFor(fpr float64) int {
	for _, f := range []int{8, 16, 32} {
		if theory.FPFuse(f) <= fpr {
			return f
		}
	}
	return 0
}

// plan sizes a binary fuse filter for t.N keys: the fingerprint width is
// the narrowest meeting -fpr, or the widest whose filter fits
// -bits-per-key (8 bits, with a notice, when even that one does not
// fit); the array is the paper's (theory.FuseLayout). An explicit -m and
// -k is refused: the size follows from the keys.
func plan(t kind.Target, arity int) (kind.Plan, error) {
	if t.Explicit() || t.K != 0 {
		return kind.Plan{}, kind.Paramf("fuse", "{m} and {k} do not apply: a binary fuse filter's size follows from its keys (give {n} with {fpr} or {bits-per-key}, and {arity} 3 or 4)")
	}
	// A rate sizes a static filter without n: its array follows the
	// keys Finish is given (a pipe of unknown length); Bits, M and
	// BuildBytes are then 0 (unknown) and the capacity is the keys'.
	tn := t
	if t.N == 0 && t.FPR > 0 {
		tn.N = 1
	}
	if err := sizing.Check("fuse", tn); err != nil {
		return kind.Plan{}, err
	}
	if arity != 3 && arity != 4 {
		return kind.Plan{}, kind.Paramf("fuse", "{arity} %d: want 3 or 4", arity)
	}
	if t.N > MaxKeys {
		return kind.Plan{}, fmt.Errorf("fuse: %d keys: a binary fuse filter holds at most %d (32-bit cell indexes): %w", t.N, uint64(MaxKeys), kind.ErrParam)
	}
	var notices []string
	fbits := 0
	if t.FPR > 0 {
		if fbits = fingerprintFor(t.FPR); fbits == 0 {
			return kind.Plan{}, kind.Paramf("fuse", "{fpr} %g: the widest fingerprints (32 bits) give 2^-32 ≈ 2.3e-10", t.FPR)
		}
	} else {
		budget := math.Ceil(t.BitsPerKey * float64(t.N))
		for _, f := range []int{32, 16, 8} {
			if float64(theory.FuseBits(arity, f, t.N)) <= budget {
				fbits = f
				break
			}
		}
		if fbits == 0 {
			fbits = 8
			notices = append(notices, fmt.Sprintf("-bits-per-key %g is below the smallest binary fuse filter (8-bit fingerprints: %.3g bits per key for %d keys): planned that one",
				t.BitsPerKey, theory.FuseBitsPerKey(arity, 8, t.N), t.N))
		}
	}
	c := Config{Arity: arity, FingerprintBits: fbits, Seed: t.Seed}
	cells, segLen, _ := theory.FuseLayout(arity, t.N)
	bits := theory.FuseBits(arity, fbits, t.N)
	n := t.N
	build := BuildBytes(c, n)
	if n == 0 {
		cells, segLen, bits, build = 0, 0, 0, 0
	}
	return kind.Plan{
		Kind: "fuse", Scheme: "-", M: cells, MUnit: "cells", K: arity, Bits: bits, Capacity: t.N, BuildBytes: build,
		FPR: theory.FPFuse(fbits), Hashes: 1, Accesses: arity, Notices: notices,
		Note: fmt.Sprintf("binary fuse filter (static: built once from all its keys; holds 8 bytes per key while building): %d-wise, %d-bit fingerprints", arity, fbits),
		Extra: []kind.Field{
			{Name: "fingerprint bits", Value: fbits},
			{Name: "segment length", Value: segLen, Note: "cells"},
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
		{Name: "arity", Value: f.Arity(), Note: "cells read per query"},
		{Name: "fingerprint bits", Value: f.FingerprintBits()},
		{Name: "cells", Value: f.Cells()},
		{Name: "segment length", Value: f.SegmentLength(), Note: "cells"},
		{Name: "attempt seed", Value: f.AttemptSeed(), Note: "the construction attempt's re-mix of the key hash"},
		{Name: "fpr", Value: f.EstimatedFPR(), Note: "2^-f for every key not in the set"},
		{Name: "static", Value: true, Note: "no add or remove: rebuild from the keys"},
	}
	if !math.IsNaN(bpk) && f.FingerprintBits() > 0 {
		fields = append(fields,
			kind.Field{Name: "bits per key", Value: bpk},
			kind.Field{Name: "bits per key / log2(1/fpr)", Value: bpk / float64(f.FingerprintBits()), Note: "1 is the lower bound"})
	}
	return fields
}

// buildMemory is the plan's field for the memory a build of n keys takes
// (BuildBytes; n = 0: unknown, bounded as the keys come).
func buildMemory(bytes, n uint64) kind.Field {
	const note = "at the peak of the build: the keys' 64-bit hashes held until Finish, its working arrays and the filter"
	if n == 0 {
		return kind.Field{Name: "build memory", Value: "about 36 bytes per key", Note: note}
	}
	return kind.Field{Name: "build memory", Value: fmt.Sprintf("%d bytes", bytes), Note: note}
}
