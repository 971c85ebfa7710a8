package lab

// The cuckoo filter (Fan, Andersen, Kaminsky, Mitzenmacher, CoNEXT 2014)
// against the designs of 002 and the Bloom filters, at equal bits per key:
// 002 closes on d-left filters losing a constant factor to the lower bound
// because a query compares fingerprints in several buckets, and suggests
// cuckoo hashing might remove it.

import (
	"context"
	"fmt"
	"math"

	"github.com/bloomlab/bloomlab/blocked"
	"github.com/bloomlab/bloomlab/bloom"
	"github.com/bloomlab/bloomlab/cuckoo"
	"github.com/bloomlab/bloomlab/dleft"
	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/theory"
)

func init() {
	register(Experiment{Name: "cuckoo/space", Paper: "002 §IV; CF §5",
		Summary: "002's closing question: at equal bits per key (8 … 24), the FP rate of cuckoo filters (plain, semi-sorted), d-left, blocked and standard Bloom filters, against each one's theory and the lower bound 2^−B (SVG)",
		Run:     runCuckooSpace})
}

// cuckooMaxLoad is the load the cuckoo rows fill their tables to at most:
// below where inserts into tables of 2^11 … 2^13 buckets of 4 start to
// fail (96%).
const cuckooMaxLoad = 0.95

// budgetPoint is one structure at a budget of B bits per key.
type budgetPoint struct {
	structure string // "cuckoo", "cuckoo-semi", "dleft", "blocked", "bloom"
	B         int
	slots     int // cuckoo: table slots (4 per bucket); others: keys ≈ slots·0.93
	trials    int
	expected  int // false positives the queries should meet: ⌈expected/p⌉ queries
}

// budgetRow is what a budgetPoint builds to: its keys, predicted rate,
// parameters and per-trial structure.
type budgetRow struct {
	n      int
	pred   float64
	params paramList
	bits   uint64
	setup  func() (fprFilter, func(hashing.Digest) error, func(), error)
}

func (pt budgetPoint) build() (budgetRow, error) {
	B := float64(pt.B)
	switch pt.structure {
	case "cuckoo", "cuckoo-semi":
		// The longest fingerprint whose stored bits fit B at a load of at
		// most cuckooMaxLoad: f − s stored bits (s = 1 semi-sorted) at
		// load (f − s)/B.
		s := 0
		if pt.structure == "cuckoo-semi" {
			s = 1
		}
		stored := int(math.Floor(cuckooMaxLoad * B))
		f := stored + s
		buckets := uint64(pt.slots / 4)
		n := int(math.Round(float64(stored) / B * float64(pt.slots)))
		c := cuckoo.Config{Buckets: buckets, FingerprintBits: f, Semisort: s == 1}
		if _, err := cuckoo.New(cuckoo.Config{Buckets: 1, FingerprintBits: f, Semisort: s == 1}); err != nil {
			return budgetRow{}, err
		}
		load := float64(n) / float64(pt.slots)
		return budgetRow{n: n, pred: theory.FPCuckoo(f, 4, load), bits: buckets * uint64(4*f-4*s),
			params: paramList{{"f", f}, {"load", math.Round(load*1000) / 1000}},
			setup: func() (fprFilter, func(hashing.Digest) error, func(), error) {
				g, err := cuckoo.New(c)
				if err != nil {
					return nil, nil, nil, err
				}
				return g, g.AddHash, g.Clear, nil
			}}, nil
	case "dleft":
		n := int(0.93 * float64(pt.slots))
		p, err := dleft.PlanBitsPerKey(uint64(n), B)
		if err != nil {
			return budgetRow{}, err
		}
		c := p.Config
		c.Seed = 0
		return budgetRow{n: n, pred: p.FPR, bits: p.Bits(),
			params: paramList{{"bucket_bits", c.BucketBits}, {"load", math.Round(p.Load*1000) / 1000}},
			setup: func() (fprFilter, func(hashing.Digest) error, func(), error) {
				g, err := dleft.New(c)
				if err != nil {
					return nil, nil, nil, err
				}
				return g, g.AddHash, g.Clear, nil
			}}, nil
	case "blocked":
		n := int(0.93 * float64(pt.slots))
		blocks := uint64(math.Ceil(B * float64(n) / blocked.BlockBits))
		k := theory.OptimalKBlocked(float64(n), float64(blocks), blocked.BlockBits)
		return budgetRow{n: n, pred: theory.FPBlocked(float64(n), float64(blocks), blocked.BlockBits, k), bits: blocks * blocked.BlockBits,
			params: paramList{{"k", k}, {"blocks", blocks}},
			setup: func() (fprFilter, func(hashing.Digest) error, func(), error) {
				g, err := blocked.New(blocks*blocked.BlockBits, k)
				if err != nil {
					return nil, nil, nil, err
				}
				return g, func(d hashing.Digest) error { g.AddHash(d); return nil }, g.Clear, nil
			}}, nil
	case "bloom":
		n := int(0.93 * float64(pt.slots))
		m := uint64(math.Round(B * float64(n)))
		k := theory.OptimalK(float64(m), float64(n))
		return budgetRow{n: n, pred: theory.FPExact(float64(m), float64(n), k), bits: m,
			params: paramList{{"k", k}},
			setup: func() (fprFilter, func(hashing.Digest) error, func(), error) {
				g, err := bloom.New(m, k, bloom.WithScheme(hashing.Independent))
				if err != nil {
					return nil, nil, nil, err
				}
				return g, func(d hashing.Digest) error { g.AddHash(d); return nil }, g.Clear, nil
			}}, nil
	}
	return budgetRow{}, fmt.Errorf("lab: cuckoo/space: unknown structure %q: %w", pt.structure, ErrParam)
}

// budgetState is a worker's structure for a row.
type budgetState struct {
	f     fprFilter
	add   func(hashing.Digest) error
	clear func()
}

// spec returns the rowSpec of pt, given what pt builds to (build).
func (pt budgetPoint) spec(r budgetRow) rowSpec {
	q := 0
	if r.pred >= 1e-5 {
		q = min(int(math.Ceil(float64(pt.expected)/r.pred)), 2_000_000)
	}
	fprMethod := methodQueries
	if q == 0 {
		fprMethod = methodState
	}
	bpk := float64(r.bits) / float64(r.n)
	params := append(paramList{{"structure", pt.structure}, {"bits_per_key", pt.B}, {"n", r.n}}, r.params...)
	params = append(params, param{"queries", q})
	spec := rowSpec{
		Params: params, Trials: pt.trials, Bytes: r.bits/8 + 1<<16,
		Metrics: []metricSpec{
			{Name: "fpr", Predicted: fptr(r.pred), Method: fprMethod},
			{Name: "fpr_state", Predicted: fptr(r.pred), Method: methodState},
			{Name: "bits_per_key", Predicted: fptr(bpk), Method: methodExact},
			// log2(1/ε) over the bits per key: 1 at the lower bound.
			{Name: "bound_efficiency", Predicted: fptr(math.Log2(1/r.pred) / bpk), Method: methodState},
		},
	}
	n := r.n
	spec.Setup = func() (any, error) {
		f, add, clr, err := r.setup()
		return &budgetState{f, add, clr}, err
	}
	spec.Trial = func(state any, seed uint64, out []float64) error {
		s := state.(*budgetState)
		s.clear()
		for j := 0; j < n; j++ {
			if err := s.add(keyDigest(seed, j)); err != nil {
				return fmt.Errorf("%s at %d bits per key: insert %d of %d: %w", pt.structure, pt.B, j, n, err)
			}
		}
		measureFPRStatic(s.f, seed, n, q, out)
		out[2] = bpk
		out[3] = math.Log2(1/out[1]) / bpk
		return nil
	}
	return spec
}

func runCuckooSpace(ctx context.Context, cfg Config) (*Result, error) {
	budgets := []int{8, 10, 12, 14, 16, 18, 20, 22, 24}
	slots := 1 << 15
	if cfg.Quick {
		budgets = []int{8, 12, 16, 20, 24}
		slots = 1 << 13
	}
	trials, expected := cfg.trials(40, 3), 100
	if cfg.Quick {
		expected = 20
	}
	structures := []string{"cuckoo", "cuckoo-semi", "dleft", "blocked", "bloom"}
	var pts []budgetPoint
	var specs []rowSpec
	var skipped []string
	for _, s := range structures {
		for _, B := range budgets {
			pt := budgetPoint{structure: s, B: B, slots: slots, trials: trials, expected: expected}
			// Built once: a d-left point plans its table from the fluid
			// limit, which takes a noticeable fraction of a second.
			r, err := pt.build()
			if err != nil {
				skipped = append(skipped, fmt.Sprintf("%s at %d bits per key (%v)", s, B, err))
				continue
			}
			pts = append(pts, pt)
			specs = append(specs, pt.spec(r))
		}
	}
	res, err := runRows(ctx, cfg, "cuckoo/space", specs)
	if err != nil {
		return nil, err
	}
	plot := Plot{Name: "cuckoo-space", title: "Bits of false-positive protection, log2(1/ε), at B bits per key",
		xLabel: "bits per key B", yLabel: "log2(1/ε) (the lower bound is ε = 2^−B)"}
	bound := series{Name: "lower bound log2(1/ε) = B", Dashed: true}
	for _, B := range budgets {
		bound.Points = append(bound.Points, point{X: float64(B), Y: float64(B)})
	}
	plot.series = append(plot.series, bound)
	for _, s := range structures {
		ms := series{Name: s}
		for i, pt := range pts {
			if pt.structure != s {
				continue
			}
			m := res.rows[i].Metrics[1] // fpr_state
			p := point{X: float64(pt.B), Y: math.Log2(1 / m.Measured)}
			if m.CI95[0] > 0 && m.CI95[1] > 0 {
				p.Lo, p.Hi = math.Log2(1/m.CI95[1]), math.Log2(1/m.CI95[0])
			}
			ms.Points = append(ms.Points, p)
		}
		plot.series = append(plot.series, ms)
	}
	res.Plots = append(res.Plots, plot)
	res.notes = append(res.notes,
		fmt.Sprintf("each trial inserts n keys into a structure of B·n bits and measures its rate: fpr by querying ⌈%d/p⌉ absent keys (up to 2·10^6) where the prediction p ≥ 10^-5, else from the state; fpr_state from the structure's state (every structure's EstimatedFPR); %d trials.", expected, trials),
		fmt.Sprintf("cuckoo: %d slots in buckets of 4, the longest fingerprint f whose stored bits (f, or f − 1 semi-sorted) fill B bits per key at a load of at most %.2f, n = load·slots; predicted theory.FPCuckoo(f, 4, load). dleft: 002 §II's 64- or 128-bit buckets, d = 3, semi-sorted, chosen by dleft.PlanBitsPerKey for n = 0.93·slots; predicted formula (1) over the fluid limit. blocked: 512-bit blocks, the k minimising theory.FPBlocked. bloom: independent hashing, m = B·n, the optimal k, theory.FPExact.", slots, cuckooMaxLoad),
		"bound_efficiency = log2(1/ε)/B: the fraction of the n·log2(1/ε) lower bound (004 §4) a structure reaches; 1/ln 2 ≈ 0.69 is an optimal Bloom filter's. -plot writes cuckoo-space.svg: log2(1/ε) against B with the bound as the diagonal.",
	)
	if len(skipped) > 0 {
		res.notes = append(res.notes, "not measured: "+fmt.Sprint(skipped))
	}
	return res, nil
}
