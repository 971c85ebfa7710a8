package lab

import (
	"context"
	"testing"
)

// TestDleftExperiments: every dleft experiment runs in quick mode with a
// couple of trials; the rate rows agree with formula (1) within their
// 10% at rates above 1e-6 (a few trials) and no trial fails.
func TestDleftExperiments(t *testing.T) {
	for _, name := range []string{"dleft/fp", "dleft/grouping", "dleft/offline", "dleft/simulation", "dleft/underloaded", "dleft/table1"} {
		e, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.Run(context.Background(), Config{Seed: 1, Quick: true, Trials: 3})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(res.rows) == 0 || len(res.notes) == 0 {
			t.Fatalf("%s: empty result", name)
		}
		for _, row := range res.rows {
			for _, m := range row.Metrics {
				if m.Name == "fpr_state" && m.Predicted != nil && *m.Predicted > 1e-6 { // tinier rates hinge on a few buckets
					if r := m.Measured / *m.Predicted; r < 0.9 || r > 1.1 {
						t.Errorf("%s %v: state rate %.4g vs predicted %.4g", name, row.Params, m.Measured, *m.Predicted)
					}
				}
			}
		}
	}
	e, _ := Lookup("dleft/grouping")
	res, err := e.Run(context.Background(), Config{Seed: 1, Quick: true, Trials: 2})
	if err != nil {
		t.Fatal(err)
	}
	if p := *res.rows[0].Metrics[0].Predicted; p < 0.000352 || p > 0.0003522 {
		t.Errorf("grouping prediction %.7g, want 0.0003521", p)
	}
}
