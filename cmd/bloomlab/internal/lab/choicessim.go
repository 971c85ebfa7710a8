package lab

import (
	"context"
	"flag"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/bloomlab/bloomlab/choices"
	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/theory"
)

// maxChoicesQueries is the most queries a choices trial makes (each costs up
// to c·k probes): a rate below 1e-5 is computed from the state.
const maxChoicesQueries = 1_000_000

// choicesPoint is one configuration of a c-choice filter trial (000 §3):
// insert N random keys into M bits with C groups of K hash functions,
// online (Rounds = 0) or offline in Rounds rounds, then measure.
type choicesPoint struct {
	Pre     paramList // parameters shown before the filter's own
	N       int
	M       uint64
	C, K    int
	Rounds  int // 0: online greedy (Add); ≥ 1: offline Build
	Scheme  hashing.Scheme
	Queries int // < 0: automatic (⌈10/p⌉, state when above maxChoicesQueries); 0: state only
	Trials  int
	// FP adds the metrics fpr and fpr_state; ODE adds ones_ode, the
	// fill predicted by eq. (3.2), as an exact metric beside the paper's.
	FP, ODE bool
	// Paper values and their roundings (nil: the paper prints none).
	PaperFP, PaperOnes, PaperODE          *float64
	PaperFPTol, PaperOnesTol, PaperODETol float64
	// Stages are further offline points that differ from this one only in
	// Rounds (increasing) and paper values. A trial builds once and
	// measures after each round count (choices.Builder.BuildEach: a build
	// in 10 rounds is the start of one in 15), so the rows share their
	// trials and the shorter builds cost nothing extra. Set by
	// mergeStages.
	Stages []choicesPoint
}

// mergeStages merges each run of consecutive offline points that differ
// only in their (increasing) Rounds and paper values into the first one's
// Stages.
func mergeStages(pts []choicesPoint) []choicesPoint {
	var out []choicesPoint
	for _, pt := range pts {
		if i := len(out) - 1; i >= 0 && sameBuild(out[i], pt) {
			out[i].Stages = append(out[i].Stages, pt)
			continue
		}
		out = append(out, pt)
	}
	return out
}

// sameBuild reports whether the offline build of b continues that of a
// (and of a's stages).
func sameBuild(a, b choicesPoint) bool {
	last := a.Rounds
	if len(a.Stages) > 0 {
		last = a.Stages[len(a.Stages)-1].Rounds
	}
	return a.Rounds > 0 && b.Rounds > last && len(b.Stages) == 0 &&
		slices.Equal(a.Pre, b.Pre) && a.N == b.N && a.M == b.M && a.C == b.C && a.K == b.K &&
		a.Scheme == b.Scheme && a.Queries == b.Queries && a.Trials == b.Trials && a.FP == b.FP && a.ODE == b.ODE
}

// paperSci returns a value the paper prints with four significant digits,
// mant×10^exp, and its rounding (half a unit of the last digit).
func paperSci(mant float64, exp int) (*float64, float64) {
	v, err := strconv.ParseFloat(fmt.Sprintf("%.3fe%d", mant, exp), 64)
	if err != nil {
		panic(err) // the tables are literals
	}
	return fptr(v), 0.0005 * math.Pow10(exp)
}

func (pt choicesPoint) row() (rowSpec, error) {
	switch {
	case pt.N < 1 || pt.M < 1 || pt.M > hashing.MaxM:
		return rowSpec{}, fmt.Errorf("lab: choices: n = %d, m = %d: want n ≥ 1, 1 ≤ m ≤ 2^48: %w", pt.N, pt.M, ErrParam)
	case pt.K < 1 || pt.K > hashing.MaxK:
		return rowSpec{}, fmt.Errorf("lab: choices: k = %d out of range [1, %d]: %w", pt.K, hashing.MaxK, ErrParam)
	case pt.C < 1 || pt.C > choices.MaxC:
		return rowSpec{}, fmt.Errorf("lab: choices: c = %d out of range [1, %d]: %w", pt.C, choices.MaxC, ErrParam)
	case pt.Rounds < 0 || pt.Rounds > choices.MaxRounds:
		return rowSpec{}, fmt.Errorf("lab: choices: rounds = %d out of range [0, %d]: %w", pt.Rounds, choices.MaxRounds, ErrParam)
	case uint64(pt.N)*uint64(pt.C*pt.K) > 1<<31:
		return rowSpec{}, fmt.Errorf("lab: choices: n·c·k = %d exceeds 2^31 positions per trial: %w", uint64(pt.N)*uint64(pt.C*pt.K), ErrParam)
	}
	for i, st := range pt.Stages {
		prev := pt.Rounds
		if i > 0 {
			prev = pt.Stages[i-1].Rounds
		}
		base := pt
		base.Stages, base.Rounds = nil, prev
		if !sameBuild(base, st) || st.Rounds > choices.MaxRounds {
			return rowSpec{}, fmt.Errorf("lab: choices: stage %d (rounds %d) does not continue the build of rounds %d: %w", i, st.Rounds, prev, ErrParam)
		}
	}
	cfg := choices.Config{M: pt.M, K: pt.K, C: pt.C, Scheme: pt.Scheme}
	// Validate the rest of cfg on a filter of at most 64 bits: a full-size
	// one would be allocated before runRows checks the memory.
	small := cfg
	small.M = min(cfg.M, 64)
	if _, err := choices.New(small); err != nil {
		return rowSpec{}, paramErr("lab: ", err)
	}
	bytes := (pt.M + 63) / 64 * 8 // the filter
	if pt.Rounds > 0 {
		// The keys, and choices.Builder's counters, groups and positions.
		n := uint64(pt.N)
		bytes += 16*n + pt.M + 1 + n + 8*n*uint64(pt.C*pt.K)
	}
	z := theory.FillChoices(float64(pt.M)/float64(pt.N), pt.K, pt.C)
	q := pt.Queries
	if q < 0 {
		// ⌈10/p⌉ at the online rate, an upper bound on the offline one.
		p := theory.FPFromFillChoices(z, pt.K, pt.C)
		q = 0
		if p > 0 && 10/p <= maxChoicesQueries {
			q = int(math.Ceil(10 / p))
		}
	}
	params, ms := pt.measures(z, q)
	spec := rowSpec{Params: params, Trials: pt.Trials, Metrics: ms, Bytes: bytes}
	rounds := []int{pt.Rounds}
	if len(pt.Stages) > 0 {
		spec.Split = []rowPart{{params, len(ms)}}
		for _, st := range pt.Stages {
			p, m := st.measures(z, q)
			spec.Metrics = append(spec.Metrics, m...)
			spec.Split = append(spec.Split, rowPart{p, len(m)})
			rounds = append(rounds, st.Rounds)
		}
	}
	type state struct {
		f    *choices.Filter
		b    choices.Builder
		keys []hashing.Digest
	}
	spec.Setup = func() (any, error) {
		f, err := choices.New(cfg)
		if err != nil {
			return nil, err
		}
		return &state{f: f}, nil
	}
	n, fp, ode, per := pt.N, pt.FP, pt.ODE, len(ms)
	// measure fills one stage's metrics from f.
	measure := func(f *choices.Filter, seed uint64, out []float64) {
		i := 0
		if fp {
			measureFPR(f, seed, n, q, out)
			i = 2
		}
		out[i] = f.FillRatio()
		if ode {
			out[i+1] = z
		}
	}
	spec.Trial = func(st any, seed uint64, out []float64) error {
		s := st.(*state)
		f := s.f
		f.Clear()
		f.SetTieSeed(splitMix64(seed ^ 0x7469652d62726b73))
		if rounds[0] == 0 {
			for j := 0; j < n; j++ {
				f.AddHash(keyDigest(seed, j))
			}
			measure(f, seed, out)
			return nil
		}
		if cap(s.keys) < n {
			s.keys = make([]hashing.Digest, n)
		}
		keys := s.keys[:n]
		for j := range keys {
			keys[j] = keyDigest(seed, j)
		}
		stage := 0
		return s.b.BuildEach(f, keys, rounds, func(int) error {
			measure(f, seed, out[stage*per:(stage+1)*per])
			stage++
			return nil
		})
	}
	return spec, nil
}

// measures returns the parameters and metrics of pt's row, given the
// ODE's fill z for its m/n, c and k and the queries per trial.
func (pt choicesPoint) measures(z float64, q int) (paramList, []metricSpec) {
	// The ODE predicts the online algorithm only (000 §3.2: "the
	// differential equations approach does not apply" offline).
	var predFill, predFP *float64
	if pt.Rounds <= 1 || pt.C == 1 {
		// With double hashing in the groups, each group's rate z^k with
		// the pair floor of the n keys (theory.FPPairs, as
		// theory.FPChoicesScheme); for independent groups the ODE's own
		// 1 − (1 − z^k)^c.
		r := theory.FPPairs(pt.Scheme, pt.M, float64(pt.N), pt.K, z, math.Pow(z, float64(pt.K)))
		predFill, predFP = fptr(z), fptr(-math.Expm1(float64(pt.C)*math.Log1p(-r)))
	}
	params := append(append(paramList{}, pt.Pre...),
		param{"n", pt.N}, param{"m", pt.M}, param{"c", pt.C}, param{"k", pt.K})
	rounds := any(pt.Rounds)
	if pt.Rounds == 0 {
		rounds = "online"
	}
	params = append(params, param{"rounds", rounds}, param{"scheme", pt.Scheme.String()})
	if pt.FP {
		params = append(params, param{"queries", q})
	}
	var ms []metricSpec
	if pt.FP {
		method := methodQueries
		if q == 0 {
			method = methodState
		}
		ms = append(ms,
			metricSpec{Name: "fpr", Predicted: predFP, Method: method},
			// 000 §3.1-3.2 discuss the spread of this rate over the trials.
			metricSpec{Name: "fpr_state", Paper: pt.PaperFP, PaperTol: pt.PaperFPTol, Predicted: predFP, Method: methodState, Spread: true})
	}
	ms = append(ms, metricSpec{Name: "ones", Paper: pt.PaperOnes, PaperTol: pt.PaperOnesTol, Predicted: predFill, Method: methodCount})
	if pt.ODE {
		ms = append(ms, metricSpec{Name: "ones_ode", Paper: pt.PaperODE, PaperTol: pt.PaperODETol, Method: methodExact})
	}
	return params, ms
}

// choicesSimulator is `bloomlab simulate choices`.
type choicesSimulator struct{}

func init() { registerSimulator(choicesSimulator{}) }

func (choicesSimulator) Kind() string { return "choices" }

func (choicesSimulator) Summary() string {
	return "Bloom filter with c choices (000 §3), online greedy or offline in rounds: measured vs ODE fill and false-positive rate (-n -m|-bits-per-key -c -k -rounds -scheme, lists allowed)"
}

// Flags registers -n, -m, -bits-per-key, -c, -k, -rounds, -scheme (each a
// comma-separated list; the rows are their product) and -queries.
func (choicesSimulator) Flags(fs *flag.FlagSet) func(ctx context.Context, cfg Config) (*Result, error) {
	ns := countListFlag(fs, "n", "10000", 1, 1<<31, "keys inserted per trial (`list`; 1e4 notation allowed)")
	ms := countListFlag(fs, "m", "", 1, hashing.MaxM, "bits (`list`); default 16·n")
	bs := fs.String("bits-per-key", "", "bits per key m/n (`list`), instead of -m")
	cs := countListFlag(fs, "c", "2", 1, choices.MaxC, fmt.Sprintf("groups of hash functions (choices), 1 … %d (`list`)", choices.MaxC))
	ks := countListFlag(fs, "k", "", 1, hashing.MaxK, "hash functions per group (`list`); default the k minimising the ODE's rate for m/n and c")
	rs := countListFlag(fs, "rounds", "0", 0, choices.MaxRounds, "0: online greedy (000 §3.1); R ≥ 1: offline greedy, each key inserted R times (000 §3.2) (`list`)")
	ss := fs.String("scheme", "independent", "index scheme inside each group (`list`): independent, double, enhanced, extended-square, extended-cube")
	queries := CountFlag(fs, "queries", 0, 0, maxChoicesQueries, "absent keys queried per trial (a `count`); default ⌈10/p⌉ (the state's rate when p < 1e-5); 0: the state's rate only")
	return func(ctx context.Context, cfg Config) (*Result, error) {
		if ms.given && *bs != "" {
			return nil, fmt.Errorf("lab: choices: give -m or -bits-per-key, not both: %w", ErrParam)
		}
		var bl []float64
		switch {
		case ms.given:
		case *bs != "":
			var err error
			if bl, err = parseFloats("bits-per-key", *bs); err != nil {
				return nil, err
			}
		default:
			bl = []float64{16}
		}
		sl, err := parseSchemes("choices", *ss)
		if err != nil {
			return nil, err
		}
		q := autoQueriesFlag(queries)
		trials := cfg.trials(1000, 20)
		var pts []choicesPoint
		for _, n := range ns.ints() {
			var sizes []uint64
			if ms.given {
				sizes = append(sizes, ms.v...)
			}
			for _, b := range bl {
				if b*float64(n) > float64(hashing.MaxM) {
					return nil, fmt.Errorf("lab: choices: -bits-per-key %v with n = %d: m = %.3g bits, more than 2^48: %w", b, n, b*float64(n), ErrParam)
				}
				sizes = append(sizes, uint64(math.Ceil(b*float64(n))))
			}
			for _, m := range sizes {
				for _, c := range cs.ints() {
					kk := ks.ints()
					if !ks.given {
						k, _ := theory.OptimalKChoices(float64(m)/float64(n), c, hashing.MaxK)
						kk = []int{max(k, 1)}
					}
					for _, k := range kk {
						for _, s := range sl {
							for _, r := range rs.ints() {
								pts = append(pts, choicesPoint{Pre: paramList{{"m/n", float64(m) / float64(n)}},
									N: n, M: m, C: c, K: k, Rounds: r, Scheme: s,
									Queries: q, Trials: trials, FP: true})
							}
						}
					}
				}
			}
		}
		// Increasing offline round counts of one configuration share
		// their trials: one build, measured after each count.
		specs, err := specsOf(mergeStages(pts))
		if err != nil {
			return nil, err
		}
		return runRows(ctx, cfg, "simulate/choices", specs)
	}
}

// paperSpread are the ranges of the per-trial rate (fpr_state) that 000
// quotes over 1000 trials (§3.1 and §3.2), by m/n, c, k and rounds (0:
// online).
var paperSpread = []struct {
	bpk, c, k, rounds int
	lo, hi            string
}{
	{32, 1, 22, 0, "1.955e-7", "2.270e-7"},
	{32, 2, 24, 0, "1.206e-7", "1.378e-7"},
	{32, 2, 26, 15, "5.706e-8", "6.486e-8"},
}

// spreadNotes returns a note for every point whose spread 000 quotes,
// beside which the text table's min and max columns of fpr_state stand.
func spreadNotes(pts []choicesPoint) []string {
	var notes []string
	var all []choicesPoint
	for _, pt := range pts {
		all = append(append(all, pt), pt.Stages...)
	}
	for _, pt := range all {
		for _, s := range paperSpread {
			if pt.M == uint64(s.bpk)*uint64(pt.N) && pt.C == s.c && pt.K == s.k && pt.Rounds == s.rounds && pt.FP {
				rounds := "online"
				if s.rounds > 0 {
					rounds = fmt.Sprintf("%d rounds", s.rounds)
				}
				notes = append(notes, fmt.Sprintf("000 quotes the spread over its 1000 trials for m/n = %d, c = %d, k = %d, %s: fpr_state from %s to %s (compare min and max).",
					s.bpk, s.c, s.k, rounds, s.lo, s.hi))
			}
		}
	}
	return notes
}
