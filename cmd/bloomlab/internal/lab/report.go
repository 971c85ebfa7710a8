package lab

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// Summary is the verdict of a run of several experiments (`bloomlab
// reproduce all`): how many ran, how many paper values they compared with
// a measurement, how many of those are flagged and where, and how long it
// took.
type Summary struct {
	Experiments int
	PaperValues int
	Flagged     int
	// FlaggedIn lists the experiments with flags, in run order.
	FlaggedIn []ExperimentFlags
	// Quick: the run was reduced (-quick), so its CIs are wider and a flag
	// is a hint, not a verdict.
	Quick   bool
	Elapsed time.Duration
}

// ExperimentFlags is an experiment's number of flagged paper values.
type ExperimentFlags struct {
	Experiment string
	Flagged    int
}

// Summarize counts the paper values and flags of results.
func Summarize(results []*Result, quick bool, elapsed time.Duration) Summary {
	s := Summary{Experiments: len(results), Quick: quick, Elapsed: elapsed}
	for _, r := range results {
		s.PaperValues += r.paperValues()
		if f := r.flagged(); f > 0 {
			s.Flagged += f
			s.FlaggedIn = append(s.FlaggedIn, ExperimentFlags{r.experiment, f})
		}
	}
	return s
}

// quickNote is what a flag means under -quick (docs/LAB.md).
const quickNote = "-quick runs fewer trials, so its confidence intervals are wider: a flag there is a hint to rerun at full size, not a verdict"

// String is the summary line the command prints last:
//
//	summary: 18 experiments, 142 paper values compared, 5 flagged (two-choices/table3: 4, dlcbf/churn: 1), 5m31s
func (s Summary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "summary: %d experiments, %d paper values compared, %d flagged", s.Experiments, s.PaperValues, s.Flagged)
	if len(s.FlaggedIn) > 0 {
		var in []string
		for _, f := range s.FlaggedIn {
			in = append(in, fmt.Sprintf("%s: %d", f.Experiment, f.Flagged))
		}
		fmt.Fprintf(&b, " (%s)", strings.Join(in, ", "))
	}
	fmt.Fprintf(&b, ", %v", s.Elapsed.Round(100*time.Millisecond))
	if s.Quick {
		b.WriteString("; " + quickNote)
	}
	return b.String()
}

// MarshalJSON encodes s as {"experiments", "paper_values", "flagged",
// "flagged_in": {name: count, …}, "quick", "quick_note" (under quick),
// "elapsed_seconds"}.
func (s Summary) MarshalJSON() ([]byte, error) {
	in, err := jsonObject(len(s.FlaggedIn), func(i int) (string, any) {
		return s.FlaggedIn[i].Experiment, s.FlaggedIn[i].Flagged
	})
	if err != nil {
		return nil, err
	}
	note := ""
	if s.Quick {
		note = quickNote
	}
	return json.Marshal(struct {
		Experiments int             `json:"experiments"`
		PaperValues int             `json:"paper_values"`
		Flagged     int             `json:"flagged"`
		FlaggedIn   json.RawMessage `json:"flagged_in"`
		Quick       bool            `json:"quick"`
		QuickNote   string          `json:"quick_note,omitempty"`
		Elapsed     float64         `json:"elapsed_seconds"`
	}{s.Experiments, s.PaperValues, s.Flagged, in, s.Quick, note, s.Elapsed.Seconds()})
}

// WriteReport writes the JSON form of a run of several experiments: an
// object {"results": [the results], "summary": s}.
func WriteReport(w io.Writer, results []*Result, s Summary) error {
	if results == nil {
		results = []*Result{}
	}
	b, err := json.MarshalIndent(struct {
		Results []*Result `json:"results"`
		Summary Summary   `json:"summary"`
	}{results, s}, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
