package lab

import (
	"fmt"
	"math"

	"github.com/bloomlab/bloomlab/internal/stats"
)

// explanation is a written reason attached to one metric of the rows
// whose parameters include every name and value of Match (values compared
// as printed, formatValue): why the paper's value and ours differ, or which
// reading of the paper the row follows. It ends up in metric.Explanation.
type explanation struct {
	Match  paramList
	Metric string
	Text   string
}

// explain attaches each explanation to the matching metrics of res. A
// metric that already has an explanation keeps it and gets the new text
// appended.
func explain(res *Result, exps ...explanation) {
	for _, e := range exps {
		for r := range res.rows {
			row := &res.rows[r]
			if !matchParams(row.Params, e.Match) {
				continue
			}
			for j := range row.Metrics {
				m := &row.Metrics[j]
				if m.Name != e.Metric {
					continue
				}
				if m.Explanation == "" {
					m.Explanation = e.Text
				} else {
					m.Explanation += " " + e.Text
				}
			}
		}
	}
}

// matchParams reports whether ps holds every parameter of want with the
// same printed value.
func matchParams(ps, want paramList) bool {
	for _, w := range want {
		v := ps.get(w.Name)
		if v == nil || formatValue(v) != formatValue(w.Value) {
			return false
		}
	}
	return true
}

// explainSampling explains the flagged metrics of res whose paper value is
// itself a mean over paperTrials trials of the procedure we run, when the
// difference is within the sampling error of the two means: our standard
// error is the CI half-width / t(0.975, trials − 1), the paper's is taken as ours ·
// √(trials/paperTrials) (same procedure, same per-trial spread), and the
// difference of two independent means has a 95% half-width of 1.96 ·
// √(se_ours² + se_paper²). A flag only says the paper's value is outside
// our interval, which ignores the paper's own sampling error; metrics
// outside the wider interval are checked against the family-wise
// interval of all P paper values of res (normal quantile 1 − 0.025/P
// instead of 1.96: among P comparisons a few fall outside 95% intervals by
// chance); those outside that too are left alone (they need a written
// reason). It returns the number of metrics it explained.
func explainSampling(res *Result, paperTrials int) int {
	c := 0
	pv := res.paperValues()
	zfw := stats.StudentTQuantile(1-0.025/float64(max(pv, 1)), 1e9)
	for r := range res.rows {
		row := &res.rows[r]
		for j := range row.Metrics {
			m := &row.Metrics[j]
			if !m.flagged() || m.Method == methodExact {
				continue
			}
			d, half, ok := samplingHalfWidth(*m, row.Trials, paperTrials)
			if !ok || d > half*zfw/1.96 {
				continue
			}
			text := fmt.Sprintf("within sampling error: the paper's value is a mean over %d trials of the same procedure; |paper − measured| = %.3g is below %.3g, the 95%% half-width of the difference of two such means (the paper's standard error taken as ours·√(%d/%d)).",
				paperTrials, d, half, row.Trials, paperTrials)
			if d > half {
				text = fmt.Sprintf("within sampling error of the whole table: the paper's value is a mean over %d trials of the same procedure; |paper − measured| = %.3g exceeds the 95%% half-width %.3g of the difference of two such means (the paper's standard error taken as ours·√(%d/%d)) but not the family-wise half-width %.3g for the %d paper values compared here (z = %.2f): among %d comparisons about %.1f fall outside 95%% intervals by chance.",
					paperTrials, d, half, row.Trials, paperTrials, half*zfw/1.96, pv, zfw, pv, 0.05*float64(pv))
			}
			if m.Explanation == "" {
				m.Explanation = text
			} else {
				m.Explanation += " " + text
			}
			c++
		}
	}
	return c
}

// samplingHalfWidth returns |paper − measured| and the 95% half-width of
// the difference between our mean (over trials) and the paper's mean over
// paperTrials trials, assuming equal per-trial spread; ok is false when m
// has no paper value or no interval.
func samplingHalfWidth(m metric, trials, paperTrials int) (d, half float64, ok bool) {
	if m.Paper == nil || paperTrials < 1 || trials < 2 || math.IsNaN(m.CI95[0]) {
		return 0, 0, false
	}
	se := (m.CI95[1] - m.CI95[0]) / 2 / stats.StudentTQuantile(0.975, float64(trials-1))
	sp := se * math.Sqrt(float64(trials)/float64(paperTrials))
	return math.Abs(*m.Paper - m.Measured), 1.96 * math.Hypot(se, sp), true
}
