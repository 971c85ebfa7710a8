package lab

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// An explanation reaches the metric it matches, the text output marks the
// metric's line with a footnote number and prints the footnote once, and
// JSON carries it.
func TestExplainFootnotes(t *testing.T) {
	res := &Result{experiment: "test", rows: []resultRow{
		{Params: paramList{{"c", 2}, {"k", 7}}, Trials: 10, Metrics: []metric{
			{Name: "fpr", Paper: fptr(0.5), Measured: 0.4, CI95: [2]float64{0.39, 0.41}, Method: methodQueries},
			{Name: "ones", Measured: 0.5, CI95: [2]float64{0.5, 0.5}, Method: methodCount}}},
		{Params: paramList{{"c", 3}, {"k", 7}}, Trials: 10, Metrics: []metric{
			{Name: "fpr", Paper: fptr(0.5), Measured: 0.45, CI95: [2]float64{0.44, 0.46}, Method: methodQueries}}},
	}}
	explain(res, explanation{Match: paramList{{"k", 7}}, Metric: "fpr", Text: "a typo in the paper."},
		explanation{Match: paramList{{"c", 3}}, Metric: "ones", Text: "never attached"})
	if res.rows[0].Metrics[0].Explanation != "a typo in the paper." || res.rows[1].Metrics[0].Explanation != "a typo in the paper." || res.rows[0].Metrics[1].Explanation != "" {
		t.Fatalf("explanations not attached as matched: %+v", res.rows)
	}
	var b bytes.Buffer
	if err := WriteText(&b, res); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Count(out, "FLAG [1]") != 2 || strings.Count(out, "[1] a typo in the paper.") != 1 {
		t.Errorf("text output lacks the markers or the footnote:\n%s", out)
	}
	js, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(js), `"explanation":"a typo in the paper."`) || strings.Count(string(js), `"explanation"`) != 2 {
		t.Errorf("JSON lacks the explanation: %s", js)
	}
}

// explainSampling explains a flag that the paper's own sampling error
// covers and leaves one it does not.
func TestExplainSampling(t *testing.T) {
	res := &Result{experiment: "test", rows: []resultRow{
		// Our CI half-width 1 (1000 trials), the paper's mean over 1000
		// trials: the difference's half-width is about √2.
		{Trials: 1000, Metrics: []metric{{Name: "a", Paper: fptr(11.3), Measured: 10, CI95: [2]float64{9, 11}, Method: methodState}}},
		{Trials: 1000, Metrics: []metric{{Name: "a", Paper: fptr(11.5), Measured: 10, CI95: [2]float64{9, 11}, Method: methodState}}},
		// 5 units away: outside with 1000 paper trials, inside with 10.
		{Trials: 1000, Metrics: []metric{{Name: "a", Paper: fptr(15), Measured: 10, CI95: [2]float64{9, 11}, Method: methodState}}},
	}}
	// Three paper values: the family-wise z is 2.39, a half-width of
	// about 1.72: row 1 (1.5 away) is explained as such, row 2 not.
	if n := explainSampling(res, 1000); n != 2 || !strings.HasPrefix(res.rows[0].Metrics[0].Explanation, "within sampling error:") ||
		!strings.HasPrefix(res.rows[1].Metrics[0].Explanation, "within sampling error of the whole table") || res.rows[2].Metrics[0].Explanation != "" {
		t.Fatalf("explained %d, want rows 0 and 1: %+v", n, res.rows)
	}
	if explainSampling(&Result{rows: res.rows[2:]}, 10) != 1 {
		t.Error("a paper mean over 10 trials 5 units away from ours (half-width 1 over 1000 trials) is within sampling error")
	}
}
