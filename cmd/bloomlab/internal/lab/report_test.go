package lab

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestSummarizeResults: the summary counts every paper value and flag of the
// results it is given, and names the experiments with flags.
func TestSummarizeResults(t *testing.T) {
	ex := runNamed(t, "notes/example", Config{})
	kt := runNamed(t, "notes/k-table", Config{Seed: 1, Trials: 3})
	kt.rows[0].Metrics[0].Measured = 0.5 // far from the paper's 0.0306: flagged
	s := Summarize([]*Result{ex, kt}, true, 1234*time.Millisecond)
	if s.Experiments != 2 || s.PaperValues != 5+6 || s.Flagged != kt.flagged() || s.Flagged < 1 {
		t.Errorf("%+v: want 2 experiments, 11 paper values, %d flagged", s, kt.flagged())
	}
	if len(s.FlaggedIn) != 1 || s.FlaggedIn[0] != (ExperimentFlags{"notes/k-table", kt.flagged()}) {
		t.Errorf("FlaggedIn = %v", s.FlaggedIn)
	}
}

func TestSummaryText(t *testing.T) {
	s := Summary{Experiments: 18, PaperValues: 142, Flagged: 5, Elapsed: 331234 * time.Millisecond,
		FlaggedIn: []ExperimentFlags{{"two-choices/table3", 4}, {"dlcbf/churn", 1}}}
	want := "summary: 18 experiments, 142 paper values compared, 5 flagged (two-choices/table3: 4, dlcbf/churn: 1), 5m31.2s"
	if got := s.String(); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	s = Summary{Experiments: 2, PaperValues: 11, Quick: true, Elapsed: 2 * time.Second}
	want = "summary: 2 experiments, 11 paper values compared, 0 flagged, 2s; -quick runs fewer trials, so its confidence intervals are wider: a flag there is a hint to rerun at full size, not a verdict"
	if got := s.String(); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// TestWriteReport: the JSON of a run of several experiments is
// {"results": [...], "summary": {...}} with the summary's counts.
func TestWriteReport(t *testing.T) {
	ex := runNamed(t, "notes/example", Config{})
	s := Summary{Experiments: 1, PaperValues: 5, Flagged: 1, FlaggedIn: []ExperimentFlags{{"notes/example", 1}},
		Quick: true, Elapsed: 1500 * time.Millisecond}
	var b bytes.Buffer
	if err := WriteReport(&b, []*Result{ex}, s); err != nil {
		t.Fatal(err)
	}
	var v struct {
		Results []struct {
			Experiment string `json:"experiment"`
		} `json:"results"`
		Summary map[string]any `json:"summary"`
	}
	if err := json.Unmarshal(b.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Results) != 1 || v.Results[0].Experiment != "notes/example" {
		t.Errorf("results %+v", v.Results)
	}
	want := `"summary": {"experiments":1,"paper_values":5,"flagged":1,"flagged_in":{"notes/example":1},"quick":true,"quick_note":"` + quickNote + `","elapsed_seconds":1.5}`
	got := strings.Join(strings.Fields(b.String()[strings.Index(b.String(), `"summary"`):]), "")
	if want = strings.Join(strings.Fields(want), ""); got != want+"}" {
		t.Errorf("summary JSON\n got %s\nwant %s}", got, want)
	}
}

// TestSpreadColumns: a metric with Spread reports its trials' minimum and
// maximum, which bracket the mean; the text table gains min and max
// columns ("-" for the other metrics), CSV and JSON the same fields.
func TestSpreadColumns(t *testing.T) {
	vals := []float64{3, 1, 4, 1, 5}
	spec := rowSpec{
		Params: paramList{{"n", 1}},
		Trials: len(vals),
		Metrics: []metricSpec{
			{Name: "a", Method: methodCount, Spread: true},
			{Name: "b", Method: methodCount},
		},
		Trial: func(_ any, seed uint64, out []float64) error {
			// Recover the trial index from the seed.
			for i := range vals {
				if trialSeed(7, 0, i) == seed {
					out[0], out[1] = vals[i], 0
				}
			}
			return nil
		},
	}
	res, err := runRows(context.Background(), Config{Seed: 7}, "x/spread", []rowSpec{spec})
	if err != nil {
		t.Fatal(err)
	}
	m := res.rows[0].Metrics[0]
	if !m.Spread || m.Min != 1 || m.Max != 5 || m.Measured != 2.8 {
		t.Fatalf("metric a: spread %v min %v max %v mean %v, want true 1 5 2.8", m.Spread, m.Min, m.Max, m.Measured)
	}
	if res.rows[0].Metrics[1].Spread {
		t.Fatal("metric b reports a spread it was not asked for")
	}
	var b strings.Builder
	if err := WriteText(&b, res); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if !strings.Contains(lines[1], "ci95") || !strings.Contains(lines[1], " min ") || !strings.Contains(lines[1], " max ") {
		t.Fatalf("header %q lacks min and max", lines[1])
	}
	if f := strings.Fields(lines[2]); len(f) < 10 || f[len(f)-3] != "1" || f[len(f)-2] != "5" {
		t.Fatalf("row a %q: min and max not 1 and 5", lines[2])
	}
	if f := strings.Fields(lines[3]); f[len(f)-3] != "-" || f[len(f)-2] != "-" {
		t.Fatalf("row b %q: min and max not -", lines[3])
	}
	b.Reset()
	if err := Write(&b, "csv", res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "ci95_hi,min,max,method") || !strings.Contains(b.String(), ",1,5,count,") {
		t.Fatalf("csv lacks min and max:\n%s", b.String())
	}
	b.Reset()
	if err := Write(&b, "json", res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"min": 1`) || strings.Count(b.String(), `"min"`) != 1 {
		t.Fatalf("json: want one min field (metric a):\n%s", b.String())
	}
}
