package lab

// Experiments of paper 002 §II, Bonomi et al., "Bloom Filters via d-Left
// Hashing and Dynamic Bit Reassignment".

import (
	"context"
	"fmt"
	"math"

	"github.com/bloomlab/bloomlab/dleft"
	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/stats"
	"github.com/bloomlab/bloomlab/theory"
)

func init() {
	for _, e := range []Experiment{
		{Name: "dleft/table1", Paper: "002 §II-A", Summary: "Table I: load distribution of 3-left hashing at average load 4 (fluid limit and structure)", Run: runDleftTable1},
		{Name: "dleft/table2", Paper: "002 §II-B", Summary: "Table II: load distribution of 3-left hashing at average load 6.4 (n/6.4 buckets; the caption's n/4 is a typo)", Run: runDleftTable2},
		{Name: "dleft/fp", Paper: "002 §II-A,B", Summary: "false-positive rates of 64- and 128-bit buckets with and without semi-sorting, against standard filters at 16 and 20 bits per key", Run: runDleftFP},
		{Name: "dleft/grouping", Paper: "002 §II-C", Summary: "grouping four buckets: 0.0003520 (64-bit) and 0.00002042 (128-bit)", Run: runDleftGrouping},
		{Name: "dleft/offline", Paper: "002 §II-D", Summary: "offline balancing, 10 re-placement rounds, 2 subtables of 4096 buckets: 0.00023894 (64-bit), 0.000004605 (128-bit)", Run: runDleftOffline},
		{Name: "dleft/underloaded", Paper: "002 §II-E", Summary: "false-positive rate as the filter fills, d-left (64-bit, 16 bits per key at full load) against the standard filter (SVG)", Run: runDleftUnderloaded},
		{Name: "dleft/simulation", Paper: "002 §II-B", Summary: "1000 trials × 100,000 queries, 49152 keys in 3 × 4096 64-bit buckets: 0.00044988", Run: runDleftSimulation},
	} {
		register(e)
	}
}

// dleftN64 and dleftN128: 3 × 4096 buckets at loads 4 and 6.4.
const (
	dleftN64  = 49152
	dleftN128 = 78643
)

func semi(bits int) dleft.Semisort { s, _ := dleft.SemisortFromBits(bits); return s }

func runDleftTable(ctx context.Context, cfg Config, name string, load float64, paper []float64, n int) (*Result, error) {
	pt := dleftPoint{N: n, Load: load, Cfg: dleft.Config{D: 3, BucketBits: 128, Semisort: dleft.SemisortNone, MinFingerprintBits: 4},
		Trials: cfg.trials(100, 4), LoadMetrics: len(paper) - 1, TablePaper: paper, NoPredict: true}
	if cfg.Quick {
		pt.N /= 4
	}
	specs, err := specsOf([]dleftPoint{pt})
	if err != nil {
		return nil, err
	}
	res, err := runRows(ctx, cfg, name, specs)
	if err != nil {
		return nil, err
	}
	// A fraction whose expected count over all trials is below one bucket
	// cannot be observed: explain it rather than leave it flagged.
	observed := float64(pt.Trials) * float64(pt.Cfg.D) * float64(pt.buckets())
	for _, m := range res.rows[0].Metrics {
		if m.Paper != nil && *m.Paper*observed < 1 {
			explain(res, explanation{Metric: m.Name, Text: fmt.Sprintf(
				"resolution: a fraction of %.2g of the buckets is expected %.2g times in %d trials of %d buckets, so the structure measures 0; the fluid limit (predicted) gives the paper's value.",
				*m.Paper, *m.Paper*observed, pt.Trials, pt.Cfg.D*int(pt.buckets()))})
		}
	}
	res.notes = append(res.notes,
		"frac_load=a: the fraction of all buckets holding a keys; predicted: the fluid limit of 3-left hashing with ties to the left (theory.LoadsDleft, RK4), measured: a dleft.Filter (128-bit buckets without semi-sorting, so no bucket overflows) after n online inserts.",
		"paper: the table's two significant digits (rounding tolerance half a unit of the second digit). Fractions below ~1/buckets cannot be observed by a finite table: their measured value is 0, and a flag there is about resolution, not a disagreement.",
	)
	return res, nil
}

func runDleftTable1(ctx context.Context, cfg Config) (*Result, error) {
	res, err := runDleftTable(ctx, cfg, "dleft/table1", 4, []float64{2.3e-05, 6.0e-04, 1.1e-02, 1.5e-01, 6.6e-01, 1.8e-01, 2.3e-05, 5.6e-31}, 4*3*65536)
	if err == nil {
		res.notes = append(res.notes, "n = 786,432 keys in 3 × 65,536 buckets (quick: a quarter); 100 trials (quick: 4).")
	}
	return res, err
}

func runDleftTable2(ctx context.Context, cfg Config) (*Result, error) {
	res, err := runDleftTable(ctx, cfg, "dleft/table2", 6.4, []float64{1.7e-08, 5.6e-07, 1.2e-05, 2.1e-04, 3.5e-03, 5.6e-02, 4.8e-01, 4.5e-01, 6.2e-03, 4.8e-15}, 1258291)
	if err == nil {
		res.notes = append(res.notes, "the caption's \"n/4 total buckets\" cannot give an average load of 6.4; the table is reproduced with n/6.4 buckets (n = 1,258,291 keys, 3 × 65,536 buckets; quick: a quarter), docs/ERRATA.md.")
	}
	return res, err
}

func runDleftFP(ctx context.Context, cfg Config) (*Result, error) {
	trials := cfg.trials(200, 10)
	q := 100000
	pts := []dleftPoint{
		{Pre: paramList{{"config", "64-bit, f = ⌊60/a⌋"}}, N: dleftN64, Load: 4, Cfg: dleft.Config{D: 3, BucketBits: 64, Semisort: dleft.SemisortNone}, Queries: q, Trials: trials, Paper: fptr(0.0008937), PaperTol: halfLast(0.0008937, 4)},
		{Pre: paramList{{"config", "64-bit, 1-bit semi-sort at loads 4, 5"}}, N: dleftN64, Load: 4, Cfg: dleft.Config{D: 3, BucketBits: 64, Semisort: semi(1)}, Queries: q, Trials: trials, Paper: fptr(0.0004477), PaperTol: halfLast(0.0004477, 4)},
		{Pre: paramList{{"config", "128-bit, 1-bit semi-sort"}}, N: dleftN128, Load: 6.4, Cfg: dleft.Config{D: 3, BucketBits: 128, Semisort: semi(1)}, Queries: q, Trials: trials, Paper: fptr(0.00004259), PaperTol: halfLast(0.00004259, 4)},
		{Pre: paramList{{"config", "128-bit, 2-bit semi-sort at loads 6, 7"}}, N: dleftN128, Load: 6.4, Cfg: dleft.Config{D: 3, BucketBits: 128, Semisort: semi(2)}, Queries: q, Trials: trials, Paper: fptr(0.00002245), PaperTol: halfLast(0.00002245, 4)},
	}
	specs, err := specsOf(pts)
	if err != nil {
		return nil, err
	}
	bl, err := specsOf([]bloomPoint{
		{Pre: paramList{{"config", "standard filter, 16 bits per key, k = 11"}}, N: dleftN64, M: 16 * dleftN64, K: 11, Scheme: hashing.Independent, Queries: q, Predict: predictAsymptotic, Trials: trials, Paper: fptr(0.0004587), PaperTol: halfLast(0.0004587, 4)},
		{Pre: paramList{{"config", "standard filter, 20 bits per key, k = 14"}}, N: dleftN128, M: 20 * dleftN128, K: 14, Scheme: hashing.Independent, Queries: q, Predict: predictAsymptotic, Trials: trials, Paper: fptr(0.00006713), PaperTol: halfLast(0.00006713, 4)},
	})
	if err != nil {
		return nil, err
	}
	res, err := runRows(ctx, cfg, "dleft/fp", append(specs, bl...))
	if err != nil {
		return nil, err
	}
	q3, _ := theory.LoadsDleft(3, 6.4)
	paperF1 := theory.FPDleft(q3, func(a int) int { return 120/a + 1 })
	paperF2 := theory.FPDleft(q3, func(a int) int {
		switch a {
		case 6:
			return 22
		case 7:
			return 19
		}
		return 120/a + 1
	})
	res.notes = append(res.notes,
		fmt.Sprintf("each trial inserts n keys online into 3 subtables of 4096 buckets (load 4 for 64-bit, 6.4 for 128-bit buckets) and queries %d absent keys; %d trials.", q, trials),
		"predicted: formula (1) over the fluid-limit loads with the filter's own f(a) (dleft.PredictFPR); fpr_state: formula (1) on each trial's buckets. The standard-filter rows are bloom.Filter (scheme independent) with predicted (1 − e^{−kn/m})^k, as 002 computes them.",
		fmt.Sprintf("128-bit values: formula (1) with 002's f(a) gives %.7g (1-bit) and %.7g (2-bit), 0.04%% and 0.09%% below the printed 0.00004259 and 0.00002245; the other two match to all printed digits (docs/ERRATA.md, verified). We report our values; the gap is below any simulation's resolution. Our f(a) caps fingerprints at 64 bits (f(1) = 64, not 121), which changes nothing visible.", paperF1, paperF2),
		"the 128-bit 2-bit encoding holds loads up to 10 (255 counter values), not 11 as 002's a ∈ [1, 11] implies (267 values needed); Table II puts 1.8e-92 of the buckets at load 10.",
		"the structure skips a key already reported present (002 §II-A), so it holds slightly fewer fingerprints than keys; formula (1) ignores equal fingerprints. Both effects are far below the CIs.",
	)
	return res, nil
}

func runDleftGrouping(ctx context.Context, cfg Config) (*Result, error) {
	trials := cfg.trials(200, 10)
	q := 100000
	pts := []dleftPoint{
		{Pre: paramList{{"config", "64-bit, groups of 4, 1-bit semi-sort at loads 4, 5"}}, N: dleftN64, Load: 4, Cfg: dleft.Config{D: 3, BucketBits: 64, Semisort: semi(1), Group: 4}, Queries: q, Trials: trials, Paper: fptr(0.0003520), PaperTol: halfLast(0.0003520, 4)},
		{Pre: paramList{{"config", "128-bit, groups of 4, 2-bit semi-sort at loads 6, 7"}}, N: dleftN128, Load: 6.4, Cfg: dleft.Config{D: 3, BucketBits: 128, Semisort: semi(2), Group: 4}, Queries: q, Trials: trials, Paper: fptr(0.00002042), PaperTol: halfLast(0.00002042, 4)},
	}
	specs, err := specsOf(pts)
	if err != nil {
		return nil, err
	}
	res, err := runRows(ctx, cfg, "dleft/grouping", specs)
	if err != nil {
		return nil, err
	}
	q4, _ := theory.LoadsDleft(3, 4)
	q6, _ := theory.LoadsDleft(3, 6.4)
	p64 := theory.FPDleftGrouped(q4, 4, func(a, A int) int {
		if a > 6 {
			return -1
		}
		w := 240 / A
		if a == 4 || a == 5 {
			w++
		}
		return w
	})
	p128 := theory.FPDleftGrouped(q6, 4, func(a, A int) int {
		w := 480 / A
		if a == 6 || a == 7 {
			return w + 2
		}
		return w + 1
	})
	res.notes = append(res.notes,
		"a group's 4 buckets share their fingerprint bits: with A fingerprints in the group each stores ⌊4·F/A⌋ bits, plus its own bucket's semi-sorting bits (the reading of 002 §II-C that reproduces 0.0003520).",
		fmt.Sprintf("formula (1) with 002's lengths w(A) + p(a): %.7g (64-bit; printed 0.0003520) and %.7g (128-bit). 002 prints 0.0002042 for the latter and calls it a reduction from 0.00002245: a dropped zero; the paper column holds 0.00002042 (docs/ERRATA.md, verified to 0.05%%).", p64, p128),
		"the structure cannot give every bucket w(A) + p(a) bits: when an insert raises a bucket's semi-sorting bits (128-bit: load 5 → 6) while w(A) stays the same, its fingerprints would need a bit they never stored. dleft uses f(a, A) = min(w(A) + p(a), f(a−1, A−1)), non-increasing along every insertion, so no fingerprint ever grows; predicted is formula (1) with those lengths. For 64-bit buckets the two agree to 4 digits; for 128-bit buckets the sound lengths cost about 3% (predicted above the paper value: a real gap, not noise).",
	)
	return res, nil
}

func runDleftOffline(ctx context.Context, cfg Config) (*Result, error) {
	trials := cfg.trials(100, 4)
	pts := []dleftPoint{
		{Pre: paramList{{"config", "64-bit, 1-bit semi-sort at loads 4, 5 (002's)"}}, N: 32768, Load: 4, Cfg: dleft.Config{D: 2, BucketBits: 64, Semisort: semi(1)}, Rounds: 10, Trials: trials, Paper: fptr(0.00023894), PaperTol: halfLast(0.00023894, 5), NoPredict: true},
		{Pre: paramList{{"config", "128-bit, 1-bit semi-sort (not 002's: comparison)"}}, N: 49152, Load: 6, Cfg: dleft.Config{D: 2, BucketBits: 128, Semisort: semi(1)}, Rounds: 10, Trials: trials, NoPredict: true},
		{Pre: paramList{{"config", "128-bit, 2-bit semi-sort at loads 6, 7 (002's)"}}, N: 49152, Load: 6, Cfg: dleft.Config{D: 2, BucketBits: 128, Semisort: semi(2)}, Rounds: 10, Trials: trials, Paper: fptr(0.000004605), PaperTol: halfLast(0.000004605, 4), NoPredict: true},
	}
	specs, err := specsOf(pts)
	if err != nil {
		return nil, err
	}
	res, err := runRows(ctx, cfg, "dleft/offline", specs)
	if err != nil {
		return nil, err
	}
	for r := range res.rows {
		m := &res.rows[r].Metrics[0]
		if m.Paper == nil {
			continue
		}
		m.Explanation = offlineExplanation(*m, res.rows[r].Trials)
	}
	online := func(c dleft.Config, load float64) float64 { p, _, _ := dleft.PredictFPR(c, load); return p }
	res.notes = append(res.notes,
		"dleft.Build: all keys placed as online inserts would place them, then each key in order re-placed in the least loaded of its 2 buckets (leftmost on ties), 10 rounds (002 §II-D); fpr is formula (1) on the final buckets (method state: the rates are too small to query).",
		fmt.Sprintf("no closed form exists for balanced loads (predicted null); the online fluid limit for the same tables is %.5g (64-bit), %.5g (128-bit, 1-bit) and %.5g (128-bit, 2-bit).",
			online(dleft.Config{D: 2, BucketBits: 64, Semisort: semi(1)}, 4), online(dleft.Config{D: 2, BucketBits: 128, Semisort: semi(1)}, 6), online(dleft.Config{D: 2, BucketBits: 128, Semisort: semi(2)}, 6)),
		"002 §II-D says only \"we use semi-sorting\" for its 128-bit buckets; its 0.000004605 is the 2-bit encoding of §II-B (the last one 002 describes for 128-bit buckets, f(6) = 22, f(7) = 19): the 1-bit encoding gives about twice the rate, so that row carries no paper value. Its experiments report one average over an unstated number of trials.",
	)
	return res, nil
}

// offlineExplanation explains the gap between a dleft/offline paper value
// and our mean: 002 does not state its number of trials, and a mean over
// few trials of our procedure covers the paper's value. It quotes the
// per-trial spread and the largest number of trials whose mean still
// covers the paper value at 95% (a normal approximation).
func offlineExplanation(m metric, trials int) string {
	half := (m.CI95[1] - m.CI95[0]) / 2
	if m.Paper == nil || trials < 2 || !(half > 0) {
		return ""
	}
	sd := half * math.Sqrt(float64(trials)) / stats.StudentTQuantile(0.975, float64(trials-1))
	d := math.Abs(*m.Paper - m.Measured)
	nmax := math.Floor(math.Pow(1.96*sd/d, 2))
	return fmt.Sprintf("unstated procedure: 002 gives neither its number of trials nor its tie rule when re-placing a key. Our mean is %.2g%% %s the paper's; one trial of our procedure varies by %.2g%% (standard deviation), so the paper's value is what an average of up to %.0f of our trials gives at 95%%. The tie rule matters far more: re-placing into the least loaded bucket with ties kept in place or broken at random moves the rate by about 15%% either way (docs/ERRATA.md).",
		100*d / *m.Paper, map[bool]string{true: "below", false: "above"}[m.Measured < *m.Paper], 100*sd/m.Measured, nmax)
}

func runDleftSimulation(ctx context.Context, cfg Config) (*Result, error) {
	pts := []dleftPoint{{N: dleftN64, Load: 4, Cfg: dleft.Config{D: 3, BucketBits: 64, Semisort: semi(1)}, Queries: 100000, Trials: cfg.trials(1000, 50), Paper: fptr(0.00044988), PaperTol: halfLast(0.00044988, 5), Spread: true}}
	specs, err := specsOf(pts)
	if err != nil {
		return nil, err
	}
	res, err := runRows(ctx, cfg, "dleft/simulation", specs)
	if err != nil {
		return nil, err
	}
	// 002 §II-B: 1000 trials of 100,000 queries, as here.
	explainSampling(res, 1000)
	q6, _ := theory.LoadsDleft(3, 6)
	res.notes = append(res.notes,
		"002 §II-B: \"1000 trials ... 49152 balls and 8192 bins\", 100,000 queries per trial. 49152/8192 is an average load of 6, at which 64-bit buckets overflow massively (formula (1) at load 6: "+fmt.Sprintf("%.3g", theory.FPDleft(q6, func(a int) int {
			if a > 6 {
				return -1
			}
			if a == 4 || a == 5 {
				return 60/a + 1
			}
			return 60 / a
		}))+", counting overflowing buckets as always matching). 3 × 4096 = 12288 buckets (load 4) is the configuration of the text and reproduces 0.00044988 (docs/ERRATA.md, verified); that is what runs here.",
		"measured: real dleft.Filter structures with real fingerprints, not balls and bins; the paper's trials ranged from 23 to 75 false positives per 100,000 queries.",
	)
	return res, nil
}

func runDleftUnderloaded(ctx context.Context, cfg Config) (*Result, error) {
	trials := cfg.trials(50, 4)
	fills := []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0}
	if cfg.Quick {
		fills = []float64{0.25, 0.5, 0.75, 1.0}
	}
	var dl []dleftPoint
	var bl []bloomPoint
	for _, x := range fills {
		n := int(x * dleftN64)
		dl = append(dl, dleftPoint{Pre: paramList{{"structure", "dleft 64-bit"}, {"fill", x}}, N: n, Load: 4 * float64(n) / dleftN64,
			Cfg: dleft.Config{D: 3, BucketBits: 64, Semisort: semi(1)}, Trials: trials})
		bl = append(bl, bloomPoint{Pre: paramList{{"structure", "standard 16 bits/key, k = 11"}, {"fill", x}}, N: n, M: 16 * dleftN64, K: 11,
			Scheme: hashing.Independent, Queries: 0, Predict: predictExact, Trials: trials})
	}
	// Fix the table at 3 × 4096 buckets whatever the fill.
	for i := range dl {
		dl[i].Load = float64(dl[i].N) / (3 * 4096)
	}
	specs, err := specsOf(dl)
	if err != nil {
		return nil, err
	}
	bs, err := specsOf(bl)
	if err != nil {
		return nil, err
	}
	res, err := runRows(ctx, cfg, "dleft/underloaded", append(specs, bs...))
	if err != nil {
		return nil, err
	}
	plot := Plot{Name: "underloaded", title: "False positives as the filter fills (16 bits per key at full load)", xLabel: "fraction of the design n inserted", yLabel: "false-positive rate"}
	dt, ds := series{Name: "d-left formula (1)", Dashed: true}, series{Name: "d-left measured"}
	bt, bm := series{Name: "standard formula", Dashed: true}, series{Name: "standard measured"}
	for i, x := range fills {
		m := res.rows[i].Metrics[0]
		dt.Points = append(dt.Points, point{X: x, Y: *m.Predicted})
		ds.Points = append(ds.Points, point{X: x, Y: m.Measured, Lo: m.CI95[0], Hi: m.CI95[1]})
		b := res.rows[len(fills)+i].Metrics[0]
		bt.Points = append(bt.Points, point{X: x, Y: *b.Predicted})
		bm.Points = append(bm.Points, point{X: x, Y: b.Measured, Lo: b.CI95[0], Hi: b.CI95[1]})
	}
	plot.series = []series{dt, ds, bt, bm}
	res.Plots = append(res.Plots, plot)
	res.notes = append(res.notes,
		"both structures are sized for 49,152 keys at 16 bits per key (d-left: 3 × 4096 64-bit buckets; standard: m = 786,432, k = 11) and hold the first fill·49,152 keys; fpr is computed from each trial's state (rates down to 1e-12 cannot be queried).",
		"002 §II-E: the 64-bit encoding semi-sorts only at loads 4 and 5, so an underloaded d-left filter gets no semi-sorting gain; it still beats the standard filter at every fill below 1 by a wide margin because each fingerprint takes all of its bucket's bits.",
	)
	return res, nil
}
