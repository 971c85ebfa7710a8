package lab

import (
	"context"
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/bloomlab/bloomlab/bloom"
	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/flagx"
	"github.com/bloomlab/bloomlab/theory"
)

// maxQueries is the most queries a bloom trial makes. A rate p whose
// ⌈10/p⌉ exceeds it (p below 1e-6) is too small to observe by querying and
// is computed from the filter's state instead (methodState).
const maxQueries = 10_000_000

// Predictions a bloom point can be compared with.
const (
	predictExact      = "exact"      // theory.FPExact (FPPartitioned for partitioned schemes)
	predictAsymptotic = "asymptotic" // theory.FPAsymptotic: p = (1 − e^{−kn/m})^k
)

// bloomPoint is one configuration of a standard or partitioned Bloom
// filter trial: insert N random keys into a filter of M bits with K hash
// functions, then query Queries keys that were not inserted.
type bloomPoint struct {
	Pre      paramList // parameters shown before the filter's own
	N        int
	M        uint64 // before rounding for partitioned schemes
	K        int
	Scheme   hashing.Scheme
	Queries  int // < 0: automatic (⌈10/p⌉, or state if too many); 0: state only
	Predict  string
	Trials   int
	Paper    *float64 // the paper's FP rate, if it prints one
	PaperTol float64
}

// predictedFPR returns the rate pt is compared with.
func (pt bloomPoint) predictedFPR(m uint64) float64 {
	mf, nf := float64(m), float64(pt.N)
	switch {
	case pt.Predict == predictAsymptotic:
		return theory.FPAsymptotic(mf, nf, pt.K)
	case pt.Scheme.Partitioned():
		return theory.FPPartitioned(mf, nf, pt.K)
	}
	return theory.FPExact(mf, nf, pt.K)
}

// autoQueries is ⌈10/p⌉ (001 §6), or 0 when that exceeds maxQueries.
func autoQueries(p float64) int {
	if !(p > 0) || 10/p > maxQueries {
		return 0
	}
	return int(math.Ceil(10 / p))
}

// row builds the rowSpec of pt. Keys are keyDigest(seed, j) of the trial
// seed: j < N are inserted, N ≤ j < N+Queries are queried.
func (pt bloomPoint) row() (rowSpec, error) {
	if pt.N < 1 || pt.K < 1 || pt.K > hashing.MaxK || pt.M < 1 || pt.M > hashing.MaxM {
		return rowSpec{}, fmt.Errorf("lab: bloom: n = %d, m = %d, k = %d: want n ≥ 1, 1 ≤ m ≤ 2^48, 1 ≤ k ≤ %d: %w", pt.N, pt.M, pt.K, hashing.MaxK, ErrParam)
	}
	m := hashing.PartitionSize(pt.Scheme, pt.M, pt.K)
	pred := pt.predictedFPR(m)
	q := pt.Queries
	if q < 0 {
		q = autoQueries(pred)
	}
	fill := theory.FillExpected(float64(m), float64(pt.N), pt.K)
	if pt.Scheme.Partitioned() {
		fill = theory.FillExpectedPartitioned(float64(m), float64(pt.N), pt.K)
	}
	params := append(append(paramList{}, pt.Pre...),
		param{"n", pt.N}, param{"m", m}, param{"k", pt.K},
		param{"scheme", pt.Scheme.String()}, param{"queries", q})
	fprMethod := methodQueries
	if q == 0 {
		fprMethod = methodState
	}
	spec := rowSpec{
		Params: params,
		Trials: pt.Trials,
		Bytes:  (m + 63) / 64 * 8,
		Metrics: []metricSpec{
			{Name: "fpr", Paper: pt.Paper, PaperTol: pt.PaperTol, Predicted: fptr(pred), Method: fprMethod},
			{Name: "fpr_state", Predicted: fptr(pred), Method: methodState},
			{Name: "ones", Predicted: fptr(fill), Method: methodCount},
		},
	}
	n, k, scheme := pt.N, pt.K, pt.Scheme
	spec.Setup = func() (any, error) {
		return bloom.New(m, k, bloom.WithScheme(scheme))
	}
	spec.Trial = func(state any, seed uint64, out []float64) error {
		f := state.(*bloom.Filter)
		f.Clear()
		for j := 0; j < n; j++ {
			f.AddHash(keyDigest(seed, j))
		}
		measureFPRStatic(f, seed, n, q, out)
		out[2] = f.FillRatio()
		return nil
	}
	return spec, nil
}

// bloomSimulator is `bloomlab simulate bloom`.
type bloomSimulator struct{}

func init() { registerSimulator(bloomSimulator{}) }

func (bloomSimulator) Kind() string { return "bloom" }

func (bloomSimulator) Summary() string {
	return "standard or partitioned Bloom filter: measured vs predicted false-positive rate and fill (-n -m|-c -k -scheme, lists allowed)"
}

// Flags registers: -n, -m, -c, -k, -scheme (each a comma-separated list;
// the rows are their product), -queries and -predict.
func (bloomSimulator) Flags(fs *flag.FlagSet) func(ctx context.Context, cfg Config) (*Result, error) {
	ns := countListFlag(fs, "n", "10000", 1, hashing.MaxM, "keys inserted per trial (comma-separated `list`; 1e4 notation allowed)")
	ms := countListFlag(fs, "m", "", 1, hashing.MaxM, "bits (`list`); default c·n")
	cs := fs.String("c", "", "bits per key m/n (`list`); default 8 unless -m is given")
	ks := countListFlag(fs, "k", "", 1, hashing.MaxK, "hash functions (`list`); default the optimal k for m and n (at most 64)")
	ss := fs.String("scheme", "independent", "index schemes (`list`): "+schemeList())
	queries := CountFlag(fs, "queries", 0, 0, maxQueries, "absent keys queried per trial (a `count`); default ⌈10/p⌉ (the state's rate when p < 1e-6); 0: the state's rate only")
	predict := fs.String("predict", predictExact, "prediction: exact (FPExact / FPPartitioned) or asymptotic ((1 − e^{−kn/m})^k)")
	return func(ctx context.Context, cfg Config) (*Result, error) {
		if ms.given && *cs != "" {
			return nil, fmt.Errorf("lab: bloom: give -m or -c, not both: %w", ErrParam)
		}
		var cl []float64
		if !ms.given {
			c := *cs
			if c == "" {
				c = "8"
			}
			var err error
			if cl, err = parseFloats("c", c); err != nil {
				return nil, err
			}
		}
		sl, err := parseSchemes("bloom", *ss)
		if err != nil {
			return nil, err
		}
		if *predict != predictExact && *predict != predictAsymptotic {
			return nil, fmt.Errorf("lab: bloom: -predict %q: want exact or asymptotic: %w", *predict, ErrParam)
		}
		q := autoQueriesFlag(queries)
		trials := cfg.trials(1000, 50)
		var pts []bloomPoint
		for _, n := range ns.ints() {
			var sizes []uint64
			var pre []paramList
			if ms.given {
				for _, m := range ms.v {
					sizes = append(sizes, m)
					pre = append(pre, nil)
				}
			} else {
				for _, c := range cl {
					if !(c > 0) || c*float64(n) > float64(hashing.MaxM) {
						return nil, fmt.Errorf("lab: bloom: -c %v with n = %d: m = c·n = %.3g bits, more than 2^48: %w", c, n, c*float64(n), ErrParam)
					}
					sizes = append(sizes, uint64(math.Ceil(c*float64(n))))
					pre = append(pre, paramList{{"c", c}})
				}
			}
			for i, m := range sizes {
				kk := ks.ints()
				if !ks.given {
					// The optimum, within what a filter takes (k ≤ 64
					// reaches rates below 1e-19 anyway).
					kk = []int{min(max(1, theory.OptimalK(float64(m), float64(n))), hashing.MaxK)}
				}
				for _, k := range kk {
					for _, s := range sl {
						pts = append(pts, bloomPoint{Pre: pre[i], N: n, M: m, K: k, Scheme: s,
							Queries: q, Predict: *predict, Trials: trials})
					}
				}
			}
		}
		specs, err := specsOf(pts)
		if err != nil {
			return nil, err
		}
		return runRows(ctx, cfg, "simulate/bloom", specs)
	}
}

// autoQueriesFlag is the Queries of a point from a -queries flag whose
// default is automatic: −1 when the flag is not given.
func autoQueriesFlag(c *flagx.Count) int {
	if !c.Given {
		return -1
	}
	return int(c.V)
}

func schemeList() string {
	var names []string
	for _, s := range hashing.Schemes() {
		names = append(names, s.String())
	}
	return strings.Join(names, ", ")
}

// parseSchemes parses a comma-separated list of index schemes.
func parseSchemes(kind, list string) ([]hashing.Scheme, error) {
	var out []hashing.Scheme
	for _, s := range strings.Split(list, ",") {
		sc, err := hashing.ParseScheme(strings.TrimSpace(s))
		if err != nil {
			return nil, paramErr("lab: "+kind+": -scheme: ", err)
		}
		out = append(out, sc)
	}
	return out, nil
}

func parseFloats(name, s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(x > 0) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("lab: -%s: %q is not a positive number: %w", name, f, ErrParam)
		}
		out = append(out, x)
	}
	return out, nil
}
