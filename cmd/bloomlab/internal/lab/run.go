package lab

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/sysmem"
)

// metricSpec describes one metric of a row before it is measured.
type metricSpec struct {
	Name      string
	Paper     *float64
	PaperTol  float64
	Predicted *float64
	Method    string
	// Spread adds the smallest and largest trial value (metric.Min, Max)
	// beside the mean, for metrics whose spread the paper discusses.
	Spread bool
	// Explanation is copied to metric.Explanation.
	Explanation string
}

// rowSpec is one parameter point to measure: Trials independent trials,
// each filling one value per metric.
type rowSpec struct {
	Params  paramList
	Trials  int
	Metrics []metricSpec
	// Setup, if not nil, returns per-worker state (for example a filter to
	// Clear and reuse) handed to every Trial of this row that the worker
	// runs.
	Setup func() (any, error)
	// Trial runs one trial with the given seed and stores the value of
	// metric j in out[j]. It must depend on nothing but its seed (and
	// state it resets), so that results do not depend on scheduling.
	Trial func(state any, seed uint64, out []float64) error
	// Bytes is the memory a worker needs for this row: its Setup state and
	// what one trial allocates. runRows refuses a run whose workers
	// together need more than the machine has.
	Bytes uint64
	// Split, if not empty, reports the row as several result rows that
	// share its trials, for a trial that measures one process at several
	// stages (an offline build after 10 and after 15 rounds): result row i
	// has the parameters Split[i].Params and the next Split[i].Metrics of
	// Metrics, in order. The counts must add up to len(Metrics).
	Split []rowPart
}

// rowPart is one result row of a split rowSpec.
type rowPart struct {
	Params  paramList
	Metrics int
}

// rowMaker is a parameter point that builds its rowSpec.
type rowMaker interface {
	row() (rowSpec, error)
}

// specsOf builds the rowSpecs of several points.
func specsOf[P rowMaker](pts []P) ([]rowSpec, error) {
	specs := make([]rowSpec, 0, len(pts))
	for _, pt := range pts {
		s, err := pt.row()
		if err != nil {
			return nil, err
		}
		specs = append(specs, s)
	}
	return specs, nil
}

// keyDigest returns the digest of key j of a trial with the given seed: two
// consecutive outputs of a SplitMix64 stream started at seed. Trials
// represent their random keys by these digests (the structures' pre-hashed
// entry points), which stand for xxh3-128 digests of distinct random keys
// and cost a few nanoseconds instead of a hash.
func keyDigest(seed uint64, j int) hashing.Digest {
	x := seed + uint64(2*j)*0x9E3779B97F4A7C15
	return hashing.Digest{H1: splitMix64(x), H2: splitMix64(x + 0x9E3779B97F4A7C15)}
}

// hashContainer is what a false-positive count needs of a structure.
type hashContainer interface {
	ContainsHash(hashing.Digest) bool
}

// queryFPR returns the fraction of the q keys keyDigest(seed, from) …
// keyDigest(seed, from+q−1), none of them inserted, that f answers
// present: the measured false-positive rate (q ≥ 1).
func queryFPR(f hashContainer, seed uint64, from, q int) float64 {
	fp := 0
	for j := from; j < from+q; j++ {
		if f.ContainsHash(keyDigest(seed, j)) {
			fp++
		}
	}
	return float64(fp) / float64(q)
}

// fprFilter is a structure that also computes its rate from its state.
type fprFilter interface {
	hashContainer
	EstimatedFPR() float64
}

// measureFPR stores the metrics fpr and fpr_state of a trial: out[0] is
// queryFPR over q absent keys from key from on (the state's rate when
// q = 0: methodState), out[1] the rate from f's state (EstimatedFPR).
func measureFPR(f fprFilter, seed uint64, from, q int, out []float64) {
	est := f.EstimatedFPR()
	out[0], out[1] = est, est
	if q > 0 {
		out[0] = queryFPR(f, seed, from, q)
	}
}

// trialSeed returns the seed of trial i of row r of a run seeded with seed:
// splitMix64 applied to the three in turn, so every trial gets an
// unrelated, reproducible stream whatever the worker that runs it.
func trialSeed(seed uint64, row, i int) uint64 {
	return splitMix64(splitMix64(splitMix64(seed)^uint64(row)) ^ uint64(i))
}

// splitMix64 is the SplitMix64 generator's output for state x (one Weyl
// step and the finaliser).
func splitMix64(x uint64) uint64 {
	x += 0x9E3779B97F4A7C15
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9
	x = (x ^ (x >> 27)) * 0x94D049BB133111EB
	return x ^ (x >> 31)
}

// MaxTrials is the largest number of trials a row may ask for.
const MaxTrials = 10_000_000

// maxStored bounds the trial values one run keeps (8 bytes each: 1 GiB).
const maxStored = 1 << 27

// runRows measures every row: all trials of all rows are spread over
// cfg.workers goroutines (0: GOMAXPROCS), and each metric is summarised by
// its mean over the row's trials and a 95% confidence interval. The result
// does not depend on the number of workers.
func runRows(ctx context.Context, cfg Config, name string, specs []rowSpec) (*Result, error) {
	workers := cfg.workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	// Flatten (row, trial) into one job index; values[r][i*len(metrics)+j].
	starts := make([]int, len(specs)+1)
	values := make([][]float64, len(specs))
	stored := 0 // trial values kept for the summaries
	for r, s := range specs {
		if s.Trials < 1 || s.Trials > MaxTrials {
			return nil, fmt.Errorf("lab: %s: row %d has %d trials, want 1 … %d: %w", name, r, s.Trials, MaxTrials, ErrParam)
		}
		if stored += s.Trials * len(s.Metrics); stored > maxStored {
			return nil, fmt.Errorf("lab: %s: %d trial values to keep exceed %d: %w", name, stored, maxStored, ErrParam)
		}
		starts[r+1] = starts[r] + s.Trials
		sum := 0
		for _, p := range s.Split {
			if p.Metrics < 0 {
				sum = -1
				break
			}
			sum += p.Metrics
		}
		if len(s.Split) > 0 && sum != len(s.Metrics) {
			return nil, fmt.Errorf("lab: %s: row %d splits %d metrics into parts of %v: %w", name, r, len(s.Metrics), s.Split, ErrParam)
		}
	}
	if err := checkMemory(cfg, name, workers, specs, stored); err != nil {
		return nil, err
	}
	for r, s := range specs {
		values[r] = make([]float64, s.Trials*len(s.Metrics))
	}
	total := starts[len(specs)]
	var next, done atomic.Int64
	var firstErr error
	var errOnce sync.Once
	fail := func(err error) { errOnce.Do(func() { firstErr = err }) }
	var failed atomic.Bool
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			row, state := -1, any(nil)
			for !failed.Load() {
				job := int(next.Add(1) - 1)
				if job >= total {
					return
				}
				if err := ctx.Err(); err != nil {
					fail(err)
					failed.Store(true)
					return
				}
				r := row
				if r < 0 || job < starts[r] || job >= starts[r+1] {
					r = rowOf(starts, job)
				}
				s := specs[r]
				if r != row {
					row, state = r, nil
					if s.Setup != nil {
						st, err := s.Setup()
						if err != nil {
							fail(fmt.Errorf("lab: %s: row %d: %w", name, r, err))
							failed.Store(true)
							return
						}
						state = st
					}
				}
				i := job - starts[r]
				nm := len(s.Metrics)
				if err := s.Trial(state, trialSeed(cfg.Seed, r, i), values[r][i*nm:(i+1)*nm]); err != nil {
					fail(fmt.Errorf("lab: %s: row %d trial %d: %w", name, r, i, err))
					failed.Store(true)
					return
				}
				d := done.Add(1)
				if cfg.Progress != nil && (d == int64(total) || d%progressEvery(total) == 0) {
					cfg.Progress(RunProgress{Done: int(d), Total: total, Row: r, Rows: len(specs), Params: s.Params.String()})
				}
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	res := &Result{experiment: name, seed: cfg.Seed}
	for r, s := range specs {
		parts := s.Split
		if len(parts) == 0 {
			parts = []rowPart{{s.Params, len(s.Metrics)}}
		}
		nm := len(s.Metrics)
		xs := make([]float64, s.Trials)
		j := 0
		for _, part := range parts {
			row := resultRow{Params: part.Params, Trials: s.Trials}
			for _, ms := range s.Metrics[j : j+part.Metrics] {
				for i := range xs {
					xs[i] = values[r][i*nm+j]
				}
				j++
				mean, lo, hi := meanCI(xs, ms.Method)
				m := metric{
					Name: ms.Name, Paper: ms.Paper, PaperTol: ms.PaperTol, Predicted: ms.Predicted,
					Measured: mean, CI95: [2]float64{lo, hi}, Method: ms.Method,
					Explanation: ms.Explanation,
				}
				if ms.Spread {
					m.Spread, m.Min, m.Max = true, slices.Min(xs), slices.Max(xs)
				}
				row.Metrics = append(row.Metrics, m)
			}
			res.rows = append(res.rows, row)
		}
	}
	return res, nil
}

// checkMemory refuses a run that would need more than the machine's
// memory (cfg.memory, else sysmem.Physical; no check if unknown): every
// worker may hold the state of the largest row at once (Bytes), and the
// run keeps every trial value (8 bytes each). Without the check such a run
// ends the process with Go's fatal out-of-memory error.
func checkMemory(cfg Config, name string, workers int, specs []rowSpec, stored int) error {
	have := cfg.memory
	if have == 0 {
		have = sysmem.Limit()
	}
	if have == 0 {
		return nil
	}
	big, at := uint64(0), 0
	for r, s := range specs {
		if s.Bytes > big {
			big, at = s.Bytes, r
		}
	}
	need := float64(big)*float64(workers) + float64(stored)*8
	if need <= float64(have) {
		return nil
	}
	var ps []string
	for _, p := range specs[at].Params {
		ps = append(ps, p.Name+"="+formatValue(p.Value))
	}
	return fmt.Errorf("lab: %s: the run needs %s of memory, more than the %s this process may use: %s per worker (row %s) × %d workers, and %s of trial values: %w",
		name, sysmem.FormatBytes(need), sysmem.FormatBytes(float64(have)), sysmem.FormatBytes(float64(big)),
		strings.Join(ps, " "), workers, sysmem.FormatBytes(float64(stored)*8), ErrParam)
}

// progressEvery is the number of trials between two calls of
// Config.Progress: about 200 calls per run.
func progressEvery(total int) int64 {
	return int64(max(1, total/200))
}

// rowOf returns the row whose job range holds job.
func rowOf(starts []int, job int) int {
	lo, hi := 0, len(starts)-2
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if starts[mid] <= job {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// meanCI returns the mean of xs and a 95% confidence interval for it. A
// single trial, or trials that all agree, give the degenerate interval
// [mean, mean].
//
// With fewer than two trials there is no interval: lo and hi are NaN
// (printed "-", null in JSON, never flagged) unless the metric is exact, a
// deterministic computation whose interval is the value itself.
func meanCI(xs []float64, method string) (mean, lo, hi float64) {
	s := sampleSummary(xs)
	if len(xs) < 2 || math.IsNaN(s.lo) {
		if method == methodExact {
			return s.mean, s.mean, s.mean
		}
		return s.mean, math.NaN(), math.NaN()
	}
	return s.mean, s.lo, s.hi
}
