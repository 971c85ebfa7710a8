package lab

import (
	"bytes"
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
