package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bloomlab/bloomlab/cmd/bloomlab/internal/lab"
	"github.com/bloomlab/bloomlab/internal/sysmem"
)

// labGoldenCases are the lab commands' cases beyond goldenCases: count
// flags refuse what they used to coerce, naming the flag and its range.
var labGoldenCases = []struct {
	name string
	args []string
	code int
}{
	{"usage_simulate_queries", []string{"simulate", "bloom", "-queries", "-5"}, 2},
	{"usage_simulate_fraction", []string{"simulate", "dleft", "-n", "2.5"}, 2},
	{"usage_reproduce_trials", []string{"reproduce", "notes/example", "-trials", "0"}, 2},
}

func TestLabGolden(t *testing.T) {
	for _, tc := range labGoldenCases {
		t.Run(tc.name, func(t *testing.T) {
			o, e, code := invoke(tc.args, "")
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstderr: %s", code, tc.code, e)
			}
			got := fmt.Sprintf("$ bloomlab %s\n-- stdout --\n%s-- stderr --\n%s-- exit %d --\n", strings.Join(tc.args, " "), o, e, code)
			checkGolden(t, tc.name, got)
		})
	}
}

// TestLabCountNotation: counts take scientific notation.
func TestLabCountNotation(t *testing.T) {
	o, e, code := invoke([]string{"simulate", "bloom", "-n", "2e3", "-m", "2e4", "-trials", "3e0", "-seed", "5"}, "")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	if !strings.Contains(o, "2000  20000  7  independent  1221     3") {
		t.Errorf("-n 2e3 -m 2e4 -trials 3e0 is not -n 2000 -m 20000 -trials 3:\n%s", o)
	}
}

// TestLabMemoryRefused: a simulation larger than the machine is a usage
// error saying what it would need, not a fatal out-of-memory error (which
// `simulate bloom -n 1e12 -trials 1` used to be).
func TestLabMemoryRefused(t *testing.T) {
	// -n 3e13 -c 8: a filter of 2.4e14 bits, 30 TB per worker.
	if have := sysmem.Physical(); have == 0 || have >= 30e12 {
		t.Skipf("machine memory %d unknown or above 30 TB", have)
	}
	_, e, code := invoke([]string{"simulate", "bloom", "-n", "3e13", "-k", "1", "-trials", "1"}, "")
	if code != 2 || !strings.HasPrefix(e, "bloomlab simulate: simulate/bloom: the run needs ") || !strings.Contains(e, "this process may use") {
		t.Errorf("exit %d, stderr %q", code, e)
	}
}

// TestReproducedSummary: reproduce all ends with the summary line in text
// and {"results", "summary"} in JSON; one experiment keeps its table's own
// "flagged: N of M" line and the JSON of one result.
func TestReproducedSummary(t *testing.T) {
	s := lab.Summary{Experiments: 18, PaperValues: 142, Flagged: 0, Elapsed: 90 * time.Second}
	var b bytes.Buffer
	if err := writeReproduced(&b, "text", true, nil, s); err != nil || b.String() != "\nsummary: 18 experiments, 142 paper values compared, 0 flagged, 1m30s\n" {
		t.Errorf("text, all: %q, %v", b.String(), err)
	}
	b.Reset()
	if err := writeReproduced(&b, "text", false, nil, s); err != nil || b.Len() != 0 {
		t.Errorf("text, one experiment: %q, %v", b.String(), err)
	}
	b.Reset()
	if err := writeReproduced(&b, "json", true, nil, s); err != nil || !strings.Contains(b.String(), `"summary": {`) || !strings.Contains(b.String(), `"results": []`) {
		t.Errorf("json, all: %s, %v", b.String(), err)
	}
}

// TestReproduceAllQuick runs every experiment reduced (8 s on two cores)
// and checks that the summary adds up the results.
func TestReproduceAllQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every experiment")
	}
	o, e, code := invoke([]string{"reproduce", "all", "-quick", "-trials", "2", "-format", "json"}, "")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	var v struct {
		Results []struct {
			Experiment string `json:"experiment"`
			Flagged    int    `json:"flagged"`
			Rows       []struct {
				Metrics map[string]struct {
					Paper *float64 `json:"paper"`
				} `json:"metrics"`
			} `json:"rows"`
		} `json:"results"`
		Summary struct {
			Experiments int            `json:"experiments"`
			PaperValues int            `json:"paper_values"`
			Flagged     int            `json:"flagged"`
			FlaggedIn   map[string]int `json:"flagged_in"`
			Quick       bool           `json:"quick"`
			QuickNote   string         `json:"quick_note"`
			Elapsed     float64        `json:"elapsed_seconds"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(o), &v); err != nil {
		t.Fatal(err)
	}
	paper, flagged := 0, 0
	for _, r := range v.Results {
		flagged += r.Flagged
		if r.Flagged > 0 && v.Summary.FlaggedIn[r.Experiment] != r.Flagged {
			t.Errorf("%s: %d flagged, summary says %d", r.Experiment, r.Flagged, v.Summary.FlaggedIn[r.Experiment])
		}
		for _, row := range r.Rows {
			for _, m := range row.Metrics {
				if m.Paper != nil {
					paper++
				}
			}
		}
	}
	s := v.Summary
	if s.Experiments != len(lab.Experiments()) || s.Experiments != len(v.Results) || s.PaperValues != paper ||
		s.Flagged != flagged || !s.Quick || s.QuickNote == "" || !(s.Elapsed > 0) {
		t.Errorf("summary %+v; results: %d experiments, %d paper values, %d flagged", s, len(v.Results), paper, flagged)
	}
}
