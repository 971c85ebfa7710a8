package lab

// Which filter for a target rate: every filter of the repository sized
// as a user sizes it for ε = 2^−r, its bits per key against the lower
// bound n·log2(1/ε) of 004 §4. It began as 002's closing question (are
// cuckoo filters closer to the bound than d-left and Bloom filters?) and
// now takes in the static filters, binary fuse and ribbon, which exist to
// go further.

import (
	"context"
	"fmt"
	"math"

	"github.com/bloomlab/bloomlab/blocked"
	"github.com/bloomlab/bloomlab/bloom"
	"github.com/bloomlab/bloomlab/cuckoo"
	"github.com/bloomlab/bloomlab/dleft"
	"github.com/bloomlab/bloomlab/fuse"
	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/ribbon"
	"github.com/bloomlab/bloomlab/theory"
)

func init() {
	register(Experiment{Name: "filters/space", Paper: "004 §4; 002 §IV; CF §5",
		Summary: "which filter for a target rate ε = 2^−r (r = 4 … 20): bits per key and FP rate of standard, blocked, cuckoo (plain, semi-sorted), d-left, binary fuse (3-, 4-wise) and ribbon filters, each sized for ε as a user sizes it, against the lower bound log2(1/ε) bits per key (SVG)",
		Run:     runFiltersSpace})
}

// spaceStructures are the rows of filters/space, in the table's order.
var spaceStructures = []string{"bloom", "blocked", "cuckoo", "cuckoo-semi", "dleft", "fuse3", "fuse4", "ribbon"}

// targetPoint is one structure sized for the target rate 2^−R at N keys.
type targetPoint struct {
	structure string
	R         int // target ε = 2^−R
	N         int
	trials    int
	expected  int // false positives the queries should meet per trial: ⌈expected/p⌉ queries
	maxQ      int // at most this many queries per trial
}

// targetRow is what a targetPoint builds to: its predicted rate and bits,
// parameters, and the trial's construction from the keys.
type targetRow struct {
	pred   float64 // the rate theory predicts for the planned structure
	bits   uint64  // the planned structure's memory
	params paramList
	// build returns a structure holding the keys keyDigest(seed, 0 … n−1).
	build func(seed uint64, n int) (spaceFilter, error)
}

// spaceFilter is a built structure: its rate (queried and from its state)
// and its memory.
type spaceFilter interface {
	fprFilter
	Bits() uint64
}

// fuseLab and ribbonLab are the static filters as spaceFilters.
type fuseLab struct{ *fuse.Filter }
type ribbonLab struct{ *ribbon.Filter }

func (f fuseLab) ContainsHash(d hashing.Digest) bool   { return f.ContainsHash64(d.H1) }
func (f ribbonLab) ContainsHash(d hashing.Digest) bool { return f.ContainsHash64(d.H1) }

// fuseFingerprint is the narrowest fingerprint a fuse filter offers (8,
// 16, 32 bits) whose rate 2^−f meets ε = 2^−r.
func fuseFingerprint(r int) int {
	switch {
	case r <= 8:
		return 8
	case r <= 16:
		return 16
	}
	return 32
}

// plan sizes pt's structure for ε = 2^−R at N keys as a user would: the
// package's own planner where there is one.
func (pt targetPoint) plan() (targetRow, error) {
	eps := math.Ldexp(1, -pt.R)
	n := uint64(pt.N)
	switch pt.structure {
	case "bloom":
		m, k, err := theory.Size(n, eps)
		if err != nil {
			return targetRow{}, err
		}
		return targetRow{pred: theory.FPExact(float64(m), float64(n), k), bits: m, params: paramList{{"k", k}},
			build: func(seed uint64, n int) (spaceFilter, error) {
				g, err := bloom.New(m, k, bloom.WithScheme(hashing.Independent))
				if err != nil {
					return nil, err
				}
				for j := range n {
					g.AddHash(keyDigest(seed, j))
				}
				return g, nil
			}}, nil
	case "blocked":
		blocks, k, err := theory.SizeBlocked(n, eps)
		if err != nil {
			return targetRow{}, err
		}
		return targetRow{pred: theory.FPBlocked(float64(n), float64(blocks), blocked.BlockBits, k), bits: blocks * blocked.BlockBits,
			params: paramList{{"k", k}, {"blocks", blocks}},
			build: func(seed uint64, n int) (spaceFilter, error) {
				g, err := blocked.New(blocks*blocked.BlockBits, k)
				if err != nil {
					return nil, err
				}
				for j := range n {
					g.AddHash(keyDigest(seed, j))
				}
				return g, nil
			}}, nil
	case "cuckoo", "cuckoo-semi":
		p, err := cuckoo.PlanFPR(n, eps, cuckoo.Config{Semisort: pt.structure == "cuckoo-semi"})
		if err != nil {
			return targetRow{}, err
		}
		c := p.Config
		return targetRow{pred: p.FPR, bits: p.Bits(),
			params: paramList{{"f", c.FingerprintBits}, {"load", math.Round(p.Load*1000) / 1000}},
			build: func(seed uint64, n int) (spaceFilter, error) {
				g, err := cuckoo.New(c)
				if err != nil {
					return nil, err
				}
				for j := range n {
					if err := g.AddHash(keyDigest(seed, j)); err != nil {
						return nil, fmt.Errorf("insert %d of %d: %w", j, n, err)
					}
				}
				return g, nil
			}}, nil
	case "dleft":
		p, err := dleft.PlanFPR(n, eps)
		if err != nil {
			return targetRow{}, err
		}
		c := p.Config
		c.Seed = 0
		return targetRow{pred: p.FPR, bits: p.Bits(),
			params: paramList{{"bucket_bits", c.BucketBits}, {"load", math.Round(p.Load*1000) / 1000}},
			build: func(seed uint64, n int) (spaceFilter, error) {
				g, err := dleft.New(c)
				if err != nil {
					return nil, err
				}
				for j := range n {
					if err := g.AddHash(keyDigest(seed, j)); err != nil {
						return nil, fmt.Errorf("insert %d of %d: %w", j, n, err)
					}
				}
				return g, nil
			}}, nil
	case "fuse3", "fuse4":
		c := fuse.Config{Arity: 3, FingerprintBits: fuseFingerprint(pt.R)}
		if pt.structure == "fuse4" {
			c.Arity = 4
		}
		return targetRow{pred: theory.FPFuse(c.FingerprintBits), bits: theory.FuseBits(c.Arity, c.FingerprintBits, n),
			params: paramList{{"f", c.FingerprintBits}},
			build: func(seed uint64, n int) (spaceFilter, error) {
				b, err := fuse.NewBuilder(c)
				if err != nil {
					return nil, err
				}
				for j := range n {
					if err := b.AddHash64(keyDigest(seed, j).H1); err != nil {
						return nil, err
					}
				}
				g, err := b.Finish()
				return fuseLab{g}, err
			}}, nil
	case "ribbon":
		c := ribbon.Config{ResultBits: pt.R}
		return targetRow{pred: theory.FPRibbon(pt.R), bits: theory.RibbonBits(n, pt.R),
			build: func(seed uint64, n int) (spaceFilter, error) {
				b, err := ribbon.NewBuilder(c)
				if err != nil {
					return nil, err
				}
				for j := range n {
					if err := b.AddHash64(keyDigest(seed, j).H1); err != nil {
						return nil, err
					}
				}
				g, err := b.Finish()
				return ribbonLab{g}, err
			}}, nil
	}
	return targetRow{}, fmt.Errorf("lab: filters/space: unknown structure %q: %w", pt.structure, ErrParam)
}

// Metrics of a filters/space row, in order.
const (
	spaceFPR = iota
	spaceFPRState
	spaceBitsPerKey
	spaceOverTarget // bits per key ÷ r: 1 at the lower bound for ε = 2^−r
	spaceOverRate   // bits per key ÷ log2(1/fpr_state): 1 at the bound for the rate reached
)

// spec returns the rowSpec of pt, given what it plans to (plan).
func (pt targetPoint) spec(r targetRow) rowSpec {
	q := 0
	if r.pred >= 1e-5 {
		q = min(int(math.Ceil(float64(pt.expected)/r.pred)), pt.maxQ)
	}
	fprMethod := methodQueries
	if q == 0 {
		fprMethod = methodState
	}
	n, R := pt.N, float64(pt.R)
	bpk := float64(r.bits) / float64(n)
	params := append(paramList{{"structure", pt.structure}, {"r", pt.R}, {"n", n}}, r.params...)
	params = append(params, param{"queries", q})
	spec := rowSpec{
		Params: params, Trials: pt.trials,
		// The structure, the previous trial's until it is collected, and
		// a static filter's construction: its held hashes and the
		// builder's scratch (a few 8-byte words per key).
		Bytes: 2*r.bits/8 + 32*uint64(n) + 1<<16,
		Metrics: []metricSpec{
			spaceFPR:        {Name: "fpr", Predicted: fptr(r.pred), Method: fprMethod},
			spaceFPRState:   {Name: "fpr_state", Predicted: fptr(r.pred), Method: methodState},
			spaceBitsPerKey: {Name: "bits_per_key", Predicted: fptr(bpk), Method: methodExact},
			spaceOverTarget: {Name: "bits_over_target", Predicted: fptr(bpk / R), Method: methodExact},
			spaceOverRate:   {Name: "bits_over_rate", Predicted: fptr(bpk / math.Log2(1/r.pred)), Method: methodState},
		},
	}
	spec.Trial = func(_ any, seed uint64, out []float64) error {
		f, err := r.build(seed, n)
		if err != nil {
			return fmt.Errorf("%s at ε = 2^-%d: %w", pt.structure, pt.R, err)
		}
		measureFPRStatic(f, seed, n, q, out)
		b := float64(f.Bits()) / float64(n)
		out[spaceBitsPerKey] = b
		out[spaceOverTarget] = b / R
		out[spaceOverRate] = b / math.Log2(1/out[spaceFPRState])
		return nil
	}
	return spec
}

func runFiltersSpace(ctx context.Context, cfg Config) (*Result, error) {
	var targets []int
	for r := 4; r <= 20; r++ {
		targets = append(targets, r)
	}
	// n = ⌊0.93·2^20⌋ (quick ⌊0.93·2^17⌋) fills 2^18 (2^15) cuckoo
	// buckets of 4 at the design load 0.93: at other n the cuckoo planner
	// rounds the table up to a valid bucket count (at most 1/16 more from
	// 253,952 buckets on, up to twice below 24,576), a cost of the
	// table's shape, not of cuckoo hashing.
	n, expected, maxQ := 975_175, 200, 2_000_000
	if cfg.Quick {
		targets = []int{4, 7, 8, 12, 16, 20}
		n, expected, maxQ = 121_896, 100, 1_000_000
	}
	trials := cfg.trials(3, 2)
	var pts []targetPoint
	var specs []rowSpec
	var skipped []string
	for _, s := range spaceStructures {
		for _, R := range targets {
			pt := targetPoint{structure: s, R: R, N: n, trials: trials, expected: expected, maxQ: maxQ}
			// Planned once: a d-left plan solves the fluid limit, which
			// takes a noticeable fraction of a second.
			r, err := pt.plan()
			if err != nil {
				skipped = append(skipped, fmt.Sprintf("%s at ε = 2^-%d (%v)", s, R, err))
				continue
			}
			pts = append(pts, pt)
			specs = append(specs, pt.spec(r))
		}
	}
	res, err := runRows(ctx, cfg, "filters/space", specs)
	if err != nil {
		return nil, err
	}
	over := Plot{Name: "filters-space", title: "Memory over the lower bound at a target rate ε",
		xLabel: "target log2(1/ε)", yLabel: "bits per key ÷ log2(1/ε)"}
	rate := Plot{Name: "filters-rate", title: "Rate reached against memory",
		xLabel: "bits per key", yLabel: "log2(1/ε), ε measured (queries) or from the state"}
	lo, hi := float64(targets[0]), float64(targets[len(targets)-1])
	over.series = append(over.series,
		series{Name: "lower bound (004 §4)", Dashed: true, Points: []point{{X: lo, Y: 1}, {X: hi, Y: 1}}},
		series{Name: "optimal Bloom filter 1/ln 2", Dashed: true, Points: []point{{X: lo, Y: 1 / math.Ln2}, {X: hi, Y: 1 / math.Ln2}}})
	rate.series = append(rate.series, series{Name: "lower bound (004 §4)", Dashed: true})
	maxB := 0.0
	for _, s := range spaceStructures {
		os, rs := series{Name: s}, series{Name: s}
		for i, pt := range pts {
			if pt.structure != s {
				continue
			}
			ms := res.rows[i].Metrics
			b := ms[spaceBitsPerKey].Measured
			os.Points = append(os.Points, point{X: float64(pt.R), Y: ms[spaceOverTarget].Measured})
			m := ms[spaceFPR]
			p := point{X: b, Y: math.Log2(1 / m.Measured)}
			if m.CI95[0] > 0 && m.CI95[1] > m.CI95[0] {
				p.Lo, p.Hi = math.Log2(1/m.CI95[1]), math.Log2(1/m.CI95[0])
			}
			rs.Points = append(rs.Points, p)
			maxB = max(maxB, b)
		}
		over.series = append(over.series, os)
		rate.series = append(rate.series, rs)
	}
	top := math.Ceil(maxB)
	rate.series[0].Points = []point{{X: lo, Y: lo}, {X: top, Y: top}}
	res.Plots = append(res.Plots, over, rate)
	res.notes = append(res.notes,
		fmt.Sprintf("each row: a structure sized for n = %d keys (a cuckoo table of 4-slot buckets at its design load 0.93, no rounding) at the target ε = 2^-r, as a user sizes it; each trial builds it from n fresh keys (a static filter is rebuilt, never cleared) and measures: fpr by querying ⌈%d/p⌉ absent keys (at most %d) where the prediction p ≥ 10^-5 (method queries), else from the state; fpr_state from the structure's state (EstimatedFPR: for fuse 2^-f, for ribbon 2^-r); bits_per_key = Bits()/n; bits_over_target = bits_per_key/r, 1 at the lower bound n·log2(1/ε) (004 §4); bits_over_rate = bits_per_key/log2(1/fpr_state), the same for the rate reached; %d trials.", n, expected, maxQ, trials),
		"bloom: theory.Size (the smallest m with an integer k meeting ε; independent hashing; theory.FPExact). blocked: theory.SizeBlocked (512-bit blocks; theory.FPBlocked). cuckoo, cuckoo-semi: cuckoo.PlanFPR (buckets of 4 for n at load 0.93, rounded up to a valid bucket count; the shortest f whose theory.FPCuckoo at that load meets ε; semi-sorted stores f − 1 bits). dleft: dleft.PlanFPR (002's 64- or 128-bit buckets, d = 3; formula (1) over the fluid limit). fuse3, fuse4: binary fuse filters with the narrowest fingerprint of 8, 16, 32 bits whose 2^-f meets ε — at r = 4 … 7 they pay 8 bits, at 9 … 15 16 bits, from 17 on 32: bits_over_target counts that cost, bits_over_rate does not; bits predicted by theory.FuseBits. ribbon: r result bits, rate 2^-r (theory.FPRibbon); bits predicted by theory.RibbonBits, the size with the keys split evenly over shards of about 2^15 (a built filter's shards hold binomially scattered counts, so its size varies a little from trial to trial).",
		"-plot writes filters-space.svg (bits per key ÷ log2(1/ε) against the target log2(1/ε): the lower bound at 1, an optimal Bloom filter at 1/ln 2 ≈ 1.44) and filters-rate.svg (log2(1/ε) of the measured rate against bits per key: the bound is the diagonal).",
	)
	if len(skipped) > 0 {
		res.notes = append(res.notes, "not measured: "+fmt.Sprint(skipped))
	}
	return res, nil
}
