package dlcbf

// Sizing: a configuration chosen for n keys, and the rates theory predicts
// for it, computed without allocating the filter.

import (
	"fmt"
	"math"

	"github.com/bloomlab/bloomlab/theory"
)

// The design point every plan uses: the ESA 2006 and 002 §III-C structure.
const (
	designSubtables = 4
	designCells     = 8
)

// Plan is a configuration chosen for N keys, with the rates theory
// predicts for it. PlanFPR and PlanBitsPerKey compute it without
// allocating anything proportional to N; New(p.Config) allocates.
type Plan struct {
	Config
	// N is the number of keys the plan is sized for.
	N uint64
	// Load is the average number of keys per bucket at N keys.
	Load float64
	// BitsPerKey is Bits() / N.
	BitsPerKey float64
	// FPR is the rate at N keys added without removals: over the
	// fluid-limit loads Q_ij of d-left hashing (theory.LoadsDleft),
	// 1 − Π_i Σ_j Q_ij · Π_cells (1 − 2^−ℓ), ℓ the effective remainder
	// length of each cell of a bucket that received j keys (Predict).
	FPR float64
	// WorstFPR bounds the rate at N keys after any sequence of additions
	// and removals: every cell at the shortest effective remainder the
	// variant ever gives (r for Static; a full bucket's for the dynamic
	// variants, whose cells never get shorter than that).
	WorstFPR float64
	// Overflow is the fluid-limit fraction of buckets that would receive
	// more than Cells keys: about the fraction of inserts that find all
	// their buckets full and are refused (ErrFull).
	Overflow float64
}

// Bits returns the memory the planned filter takes: d·B buckets of
// BucketBits (header included) bits.
func (p Plan) Bits() uint64 { return uint64(p.Subtables) * p.Buckets * bucketBits(p.Config) }

// new allocates the planned filter with the given seed and records N as
// its capacity.
func (p Plan) new(seed uint64) (*Filter, error) {
	p.Seed = seed
	f, err := New(p.Config)
	if err != nil {
		return nil, err
	}
	f.capacity = p.N
	return f, nil
}

// PlanFPR returns the configuration of variant v for n keys at rate at
// most fpr after any sequence of additions and removals (WorstFPR ≤ fpr):
// d = 4 subtables, h = 8 cells per bucket, B = ⌈n/24⌉ buckets per subtable
// (DesignLoad = 6 keys per bucket), r the smallest minimal remainder with
// d·6·2^−r ≤ fpr, and
//
//   - Static: 2-bit counters (ESA 2006), buckets of h·(r+2) bits;
//   - Dynamic: 1-bit counters (002 §III-C), R = h·r bits of cells, so that
//     a full bucket's cells keep an effective remainder of r bits
//     (semi-sorting makes one bit implicit), plus a 12-bit header;
//   - TwoSizes: 1-bit counters, R = h·(r+1) bits, plus a 22-bit header.
//
// The dynamic variants' FPR (no removals) is well below fpr: their cells
// are longer while their buckets have held few keys.
func PlanFPR(v Variant, n uint64, fpr float64) (Plan, error) {
	if err := checkN(n); err != nil {
		return Plan{}, err
	}
	if !(fpr > 0 && fpr < 1) {
		return Plan{}, fmt.Errorf("dlcbf: fpr = %v out of range (0, 1): %w", fpr, ErrParam)
	}
	// log2(24/fpr) as a difference: 24/fpr overflows to +Inf below about
	// 1.3e-307, and int(+Inf) is not a number of bits (it gave r = 1, a
	// filter at rate ≈ 1).
	rf := math.Ceil(math.Log2(designSubtables*DesignLoad) - math.Log2(fpr))
	if !(rf <= MaxRemainder) {
		return Plan{}, fmt.Errorf("dlcbf: fpr = %v needs %.0f remainder bits, more than %d: %w", fpr, rf, MaxRemainder, ErrParam)
	}
	r := max(1, int(rf))
	cfg := designConfig(v, n)
	cfg.RemainderBits = r
	switch v {
	case Dynamic:
		cfg.BucketBits = designCells * r
	case TwoSizes:
		cfg.BucketBits = designCells * (r + 1)
	}
	return finish(cfg, n)
}

// PlanBitsPerKey returns the configuration of variant v for n keys of
// about bitsPerKey bits per key: the design point of PlanFPR with buckets
// of ⌊6·bitsPerKey⌋ bits at most. Static takes the largest r that fits
// (r = ⌊6·bitsPerKey/8⌋ − 2, at most 32); the dynamic variants give every
// bit left after their header to the cells (R = ⌊6·bitsPerKey⌋ − header,
// at most 4096) and take r = the effective remainder of a full bucket.
func PlanBitsPerKey(v Variant, n uint64, bitsPerKey float64) (Plan, error) {
	if err := checkN(n); err != nil {
		return Plan{}, err
	}
	if !(bitsPerKey > 0 && bitsPerKey <= MaxBucketBits) {
		return Plan{}, fmt.Errorf("dlcbf: bits per key = %v out of range (0, %d]: %w", bitsPerKey, MaxBucketBits, ErrParam)
	}
	budget := int(bitsPerKey * DesignLoad) // bits per bucket
	cfg := designConfig(v, n)
	var r int
	switch v {
	case Static:
		r = budget/designCells - cfg.CounterBits
	case Dynamic:
		cfg.BucketBits = min(budget-dynHeader, MaxBucketBits)
		r = cfg.BucketBits / designCells // a full bucket's effective remainder
	case TwoSizes:
		cfg.BucketBits = min(budget-twoHeader, MaxBucketBits)
		r = cfg.BucketBits/designCells - cfg.CounterBits
	}
	switch {
	case r < 1:
		return Plan{}, fmt.Errorf("dlcbf: %v bits per key leave the %v variant a remainder of %d bits, want ≥ 1 (give more bits per key): %w", bitsPerKey, v, r, ErrParam)
	case v == Static && r > MaxRemainder:
		return Plan{}, fmt.Errorf("dlcbf: %v bits per key would give the static variant a remainder of %d bits, more than %d (the dynamic variants use more bits): %w", bitsPerKey, r, MaxRemainder, ErrParam)
	}
	cfg.RemainderBits = min(r, MaxRemainder)
	return finish(cfg, n)
}

func checkN(n uint64) error {
	if n < 1 || n > MaxBuckets {
		return fmt.Errorf("dlcbf: n = %d out of range [1, 2^40]: %w", n, ErrParam)
	}
	return nil
}

// designConfig returns the design point for n keys of variant v, without
// its remainder and bucket bits.
func designConfig(v Variant, n uint64) Config {
	const perSubtable = designSubtables * DesignLoad
	c := Config{Variant: v, Subtables: designSubtables, Buckets: (n + perSubtable - 1) / perSubtable, Cells: designCells, CounterBits: 1}
	if v == Static {
		c.CounterBits = 2
	}
	return c
}

// finish validates cfg and predicts its rates at n keys.
func finish(cfg Config, n uint64) (Plan, error) {
	cfg, err := normalize(cfg)
	if err != nil {
		return Plan{}, err
	}
	p := Plan{Config: cfg, N: n, Load: float64(n) / float64(uint64(cfg.Subtables)*cfg.Buckets)}
	p.BitsPerKey = float64(p.Bits()) / float64(n)
	p.FPR, p.WorstFPR, p.Overflow = Predict(cfg, p.Load)
	return p, nil
}

// Predict returns, for a filter of configuration cfg (defaults filled in;
// its Buckets do not matter) at average load keys per bucket, the rates of
// Plan: fpr with no removals, worst after any removals; and the
// fluid-limit fraction of buckets beyond Cells keys. It returns NaNs for a
// configuration New rejects or a load outside [0, 32].
func Predict(cfg Config, load float64) (fpr, worst, overflow float64) {
	nan := math.NaN()
	cfg.Buckets = 1
	cfg, err := normalize(cfg)
	if err != nil {
		return nan, nan, nan
	}
	q, err := theory.LoadsDleft(cfg.Subtables, load)
	if err != nil {
		return nan, nan, nan
	}
	f := shell(cfg)
	// keep[j]: probability that none of the cells of a bucket that
	// received j keys (no removals) matches an absent key.
	var keep [MaxCells + 1]float64
	keep[0] = 1
	var bk bucket
	for j := 1; j <= f.h; j++ {
		f.insert(&bk, 0)
		miss := 0.0
		for k := 0; k < bk.n; k++ {
			miss += math.Log1p(-math.Ldexp(1, -int(bk.ln[k])))
		}
		keep[j] = math.Exp(miss)
	}
	shortest := f.shortest()
	missWorst := math.Log1p(-math.Ldexp(1, -shortest))
	keepAll, keepWorst := 1.0, 1.0
	for _, row := range q {
		s, w := 0.0, 0.0
		for j, x := range row {
			if j > f.h {
				overflow += x / float64(len(q))
			}
			w += x * math.Exp(float64(j)*missWorst)
			if j <= f.h {
				s += x * keep[j]
			} else {
				// Beyond h (refused inserts): as many cells as keys, each
				// at the shortest length; negligible at the design load.
				s += x * math.Exp(float64(j)*missWorst)
			}
		}
		keepAll *= s
		keepWorst *= w
	}
	return 1 - keepAll, 1 - keepWorst, overflow
}

// shortest returns the shortest effective remainder a cell of f can have:
// r for Static; for Dynamic a full bucket's, ⌊R/h⌋ − c + 1 (a bucket's
// length only shrinks, to that at its largest load); for TwoSizes
// ⌊R/h⌋ − c (a cell is never cut below ⌊R/load⌋, 002 §III-B).
func (f *Filter) shortest() int {
	switch f.cfg.Variant {
	case Dynamic:
		return int(f.width[f.h]) - int(f.c) + 1
	case TwoSizes:
		return min(int(f.area)/f.h, maxWidth) - int(f.c)
	}
	return int(f.r)
}
