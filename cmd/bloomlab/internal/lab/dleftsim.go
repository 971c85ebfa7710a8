package lab

import (
	"context"
	"flag"
	"fmt"
	"math"

	"github.com/bloomlab/bloomlab/dleft"
	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/theory"
)

// dleftPoint is one configuration of a d-left Bloom filter trial (002 §II):
// N keys into D subtables of N/(D·Load) buckets, then Queries absent keys.
type dleftPoint struct {
	Pre      paramList
	N        int
	Cfg      dleft.Config // Buckets filled in by row
	Load     float64
	Rounds   int // > 0: offline Build with that many re-placement rounds
	Queries  int // 0: state only
	Trials   int
	Paper    *float64
	PaperTol float64
	// NoPredict: the fluid limit does not describe this point (offline
	// balancing), so predicted is null.
	NoPredict bool
	// LoadMetrics adds frac_load=a metrics for a ≤ LoadMetrics (with
	// TablePaper values): the fraction of buckets holding a keys.
	LoadMetrics int
	TablePaper  []float64
	// Spread reports fpr's smallest and largest trial value (002 §II-B
	// gives its trials' range).
	Spread bool
}

func (pt dleftPoint) buckets() uint64 {
	g := uint64(max(1, pt.Cfg.Group))
	b := uint64(math.Round(float64(pt.N) / (float64(max(1, pt.Cfg.D)) * pt.Load)))
	return max(g, (b+g-1)/g*g)
}

func (pt dleftPoint) row() (rowSpec, error) {
	if pt.N < 1 || !(pt.Load > 0) || pt.Load > theory.MaxLoadDleft/2 {
		return rowSpec{}, fmt.Errorf("lab: dleft: n = %d, load = %v: want n ≥ 1, 0 < load ≤ %d: %w", pt.N, pt.Load, theory.MaxLoadDleft/2, ErrParam)
	}
	cfg := pt.Cfg
	// n/(d·load) buckets per subtable, checked as a float: a tiny load
	// would overflow the conversion to an integer.
	if d := float64(max(1, cfg.D)); float64(pt.N)/(d*pt.Load) > float64(dleft.MaxBuckets)/d {
		return rowSpec{}, fmt.Errorf("lab: dleft: -load %v with n = %d needs %.3g buckets per subtable, more than 2^40/d = %d: %w",
			pt.Load, pt.N, float64(pt.N)/(d*pt.Load), dleft.MaxBuckets/uint64(d), ErrParam)
	}
	cfg.Buckets = pt.buckets()
	if err := cfg.Validate(); err != nil {
		return rowSpec{}, paramErr("lab: ", err)
	}
	if pt.Rounds > 0 && max(1, cfg.Group) != 1 {
		return rowSpec{}, fmt.Errorf("lab: dleft: -rounds needs -group 1: %w", ErrParam)
	}
	// The defaults filled in, from a table of one group: a full-size one
	// would be allocated before runRows checks the memory.
	small := cfg
	small.Buckets = uint64(max(1, cfg.Group))
	probe, err := dleft.New(small)
	if err != nil {
		return rowSpec{}, paramErr("lab: ", err)
	}
	buckets := cfg.Buckets
	cfg = probe.Config()
	cfg.Buckets = buckets
	table := uint64(cfg.D) * cfg.Buckets * uint64(cfg.BucketBits) / 8
	bytes := table
	if pt.Rounds > 0 {
		// dleft.Build: a second table, the keys and its per-key and
		// per-bucket arrays.
		n, nb := uint64(pt.N), uint64(cfg.D)*cfg.Buckets
		bytes += table + n*(16+8*uint64(cfg.D)+1+8) + 17*nb
	}
	// The load the fluid limit sees is the actual n / buckets.
	realLoad := float64(pt.N) / (float64(cfg.D) * float64(cfg.Buckets))
	pred, over, err := dleft.PredictFPR(cfg, realLoad)
	if err != nil {
		return rowSpec{}, paramErr("lab: ", err)
	}
	var predP *float64
	if !pt.NoPredict {
		predP = fptr(pred)
	}
	params := append(append(paramList{}, pt.Pre...),
		param{"n", pt.N}, param{"d", cfg.D}, param{"buckets", cfg.Buckets}, param{"bucket_bits", cfg.BucketBits},
		param{"load", math.Round(realLoad*1000) / 1000}, param{"semisort", cfg.Semisort.PrefixBits()},
		param{"group", cfg.Group}, param{"rounds", pt.Rounds}, param{"queries", pt.Queries})
	fprMethod := methodQueries
	if pt.Queries == 0 {
		fprMethod = methodState
	}
	spec := rowSpec{Params: params, Trials: pt.Trials, Bytes: bytes}
	if pt.LoadMetrics == 0 {
		spec.Metrics = []metricSpec{
			{Name: "fpr", Paper: pt.Paper, PaperTol: pt.PaperTol, Predicted: predP, Method: fprMethod, Spread: pt.Spread},
			{Name: "fpr_state", Predicted: predP, Method: methodState},
			{Name: "overflow", Predicted: fptr(over), Method: methodCount},
		}
	}
	var tl []float64
	if pt.LoadMetrics > 0 {
		q, err := theory.LoadsDleft(cfg.D, realLoad)
		if err != nil {
			return rowSpec{}, err
		}
		tl = theory.TableLoadsDleft(q)
		for a := 0; a <= pt.LoadMetrics; a++ {
			ms := metricSpec{Name: fmt.Sprintf("frac_load=%d", a), Predicted: fptr(tl[a]), Method: methodCount}
			if a < len(pt.TablePaper) {
				ms.Paper = fptr(pt.TablePaper[a])
				ms.PaperTol = halfDigit2(pt.TablePaper[a])
			}
			spec.Metrics = append(spec.Metrics, ms)
		}
	}
	n, q, rounds, nl := pt.N, pt.Queries, pt.Rounds, pt.LoadMetrics
	spec.Setup = func() (any, error) { return dleft.New(cfg) }
	spec.Trial = func(state any, seed uint64, out []float64) error {
		f := state.(*dleft.Filter)
		if rounds > 0 {
			ds := make([]hashing.Digest, n)
			for j := range ds {
				ds[j] = keyDigest(seed, j)
			}
			g, err := dleft.Build(cfg, ds, rounds)
			if err != nil {
				return err
			}
			f = g
		} else {
			f.Clear()
			for j := 0; j < n; j++ {
				if err := f.AddHash(keyDigest(seed, j)); err != nil {
					return err
				}
			}
		}
		if nl > 0 {
			loads := f.Loads()
			total := float64(cfg.D) * float64(cfg.Buckets)
			for a := 0; a <= nl; a++ {
				c := 0.0
				for _, li := range loads {
					if a < len(li) {
						c += float64(li[a])
					}
				}
				out[a] = c / total
			}
			return nil
		}
		measureFPRStatic(f, seed, n, q, out)
		out[2] = float64(f.Overflows()) / (float64(cfg.D) * float64(cfg.Buckets))
		return nil
	}
	return spec, nil
}

// halfDigit2 is half a unit in the second significant digit of x (Tables
// I and II print two).
func halfDigit2(x float64) float64 {
	if x <= 0 {
		return 0
	}
	e := math.Floor(math.Log10(x))
	return 0.5 * math.Pow(10, e-1)
}

// halfLast returns half a unit of the last digit of a value printed with
// the given number of significant digits.
func halfLast(x float64, digits int) float64 {
	e := math.Floor(math.Log10(x))
	return 0.5 * math.Pow(10, e-float64(digits-1))
}

// dleftSimulator is `bloomlab simulate dleft`.
type dleftSimulator struct{}

func init() { registerSimulator(dleftSimulator{}) }

func (dleftSimulator) Kind() string { return "dleft" }

func (dleftSimulator) Summary() string {
	return "d-left Bloom filter (002 §II): measured vs formula (1) false-positive rate (-n -d -bucket-bits -load -semisort -group -rounds)"
}

func (dleftSimulator) Flags(fs *flag.FlagSet) func(ctx context.Context, cfg Config) (*Result, error) {
	n := CountFlag(fs, "n", 49152, 1, dleft.MaxBuckets, "keys inserted per trial (a `count`; 1e4 notation allowed)")
	d := CountFlag(fs, "d", 3, 1, 8, "`number` of subtables")
	bb := CountFlag(fs, "bucket-bits", 64, 64, 128, "bucket size in `bits`: 64 or 128")
	load := fs.Float64("load", 4, "average keys per bucket (buckets = n/load)")
	ss := CountFlag(fs, "semisort", 0, 0, 2, "semi-sorting prefix `bits` 0, 1 or 2; default 1 for 64-bit, 2 for 128-bit buckets")
	group := CountFlag(fs, "group", 1, 1, 8, "buckets per group sharing their bits (a `count`): 1, 2, 4, 8")
	rounds := CountFlag(fs, "rounds", 0, 0, 1000, "offline balancing `rounds` (002 §II-D; 0: online inserts)")
	queries := CountFlag(fs, "queries", 100000, 0, maxQueries, "absent keys queried per trial (a `count`; 0: rate from the state only)")
	return func(ctx context.Context, cfg Config) (*Result, error) {
		sem := dleft.SemisortAuto
		if ss.Given {
			var err error
			if sem, err = dleft.SemisortFromBits(int(ss.V)); err != nil {
				return nil, paramErr("lab: -semisort: ", err)
			}
		}
		pt := dleftPoint{N: int(n.V), Load: *load, Rounds: int(rounds.V), Queries: int(queries.V), Trials: cfg.trials(200, 10),
			Cfg: dleft.Config{D: int(d.V), BucketBits: int(bb.V), Semisort: sem, Group: int(group.V)}, NoPredict: rounds.V > 0}
		specs, err := specsOf([]dleftPoint{pt})
		if err != nil {
			return nil, err
		}
		return runRows(ctx, cfg, "simulate/dleft", specs)
	}
}
