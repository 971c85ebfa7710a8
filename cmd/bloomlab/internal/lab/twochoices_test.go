package lab

import (
	"bytes"
	"context"
	"flag"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/theory"
)

var updateChoices = flag.Bool("update-choices", false, "rewrite lab/testdata/two-choices-*.golden")

// checkAgainstPaper fails when a paper value or a prediction is further
// than 3 CI half-widths (a 99.7% interval; these runs compare dozens of
// values, so the 95% flag rule would fire by chance) and the paper's
// rounding from the measurement.
func checkAgainstPaper(t *testing.T, r *Result) {
	t.Helper()
	for _, row := range r.rows {
		for _, m := range row.Metrics {
			half := (m.CI95[1] - m.CI95[0]) / 2
			if m.Paper != nil && math.Abs(*m.Paper-m.Measured) > max(3*half, m.PaperTol) {
				t.Errorf("%v: %s: paper %v, measured %v, CI %v", row.Params, m.Name, *m.Paper, m.Measured, m.CI95)
			}
			if m.Predicted != nil && m.Method != methodExact && math.Abs(*m.Predicted-m.Measured) > 3*half+1e-12 {
				t.Errorf("%v: %s predicted %v, measured %v ± %v", row.Params, m.Name, *m.Predicted, m.Measured, half)
			}
		}
	}
}

// Tables 1 and 2 and the k remark agree with 000 at reduced trials; the
// ODE column of Table 2 agrees exactly (to its four decimals).
func TestChoicesOnlineTables(t *testing.T) {
	trials := 16
	if testing.Short() {
		trials = 6
	}
	for _, name := range []string{"two-choices/table1", "two-choices/table2", "two-choices/k-robustness", "two-choices/double-hashing"} {
		r := runNamed(t, name, Config{Seed: 1, Trials: trials})
		checkAgainstPaper(t, r)
		if name == "two-choices/table2" {
			for _, row := range r.rows {
				ode := row.Metrics[1]
				if ode.Name != "ones_ode" || ode.Method != methodExact || math.Abs(ode.Measured-*ode.Paper) > ode.PaperTol {
					t.Errorf("%v: ODE %v, paper %v", row.Params, ode.Measured, *ode.Paper)
				}
			}
		}
	}
}

// Table 3 (offline, in rounds) agrees with 000 at reduced trials.
func TestChoicesTable3(t *testing.T) {
	trials := 4
	if testing.Short() {
		trials = 2
	}
	r := runNamed(t, "two-choices/table3", Config{Seed: 1, Trials: trials})
	if len(r.rows) != 15 {
		t.Fatalf("%d rows, want 15", len(r.rows))
	}
	checkAgainstPaper(t, r)
	// More rounds never hurt on average here: the rows come in pairs.
	for i := 1; i+1 < len(r.rows); i += 5 {
		for _, j := range []int{i, i + 2} {
			a, b := r.rows[j].Metrics[1].Measured, r.rows[j+1].Metrics[1].Measured
			if b > a*1.01 {
				t.Errorf("%v: %v with more rounds vs %v", r.rows[j+1].Params, b, a)
			}
		}
	}
}

// A small deterministic run of Table 2, pinned as text (regenerate on
// purpose with go test ./lab -update-choices).
func TestChoicesTable2Golden(t *testing.T) {
	r := runNamed(t, "two-choices/table2", Config{Seed: 1, Trials: 3, workers: 2})
	var b bytes.Buffer
	if err := Write(&b, "text", r); err != nil {
		t.Fatal(err)
	}
	const name = "testdata/two-choices-table2.golden"
	if *updateChoices {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(name)
	if err != nil {
		t.Fatalf("%v (run go test ./lab -update-choices to create)", err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("output changed:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestChoicesDeterministic(t *testing.T) {
	var outs []string
	for _, w := range []int{1, 3} {
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		run := choicesSimulator{}.Flags(fs)
		if err := fs.Parse([]string{"-n", "2000", "-c", "2,3", "-k", "9", "-rounds", "0,5"}); err != nil {
			t.Fatal(err)
		}
		r, err := run(context.Background(), Config{Seed: 5, Trials: 4, workers: w})
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, jsonOf(t, r))
	}
	if outs[0] != outs[1] {
		t.Fatal("the number of workers changed the result")
	}
}

func TestChoicesSimulator(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	run := choicesSimulator{}.Flags(fs)
	if err := fs.Parse([]string{"-n", "2000", "-bits-per-key", "12", "-c", "1,2", "-rounds", "0,5", "-scheme", "independent,double"}); err != nil {
		t.Fatal(err)
	}
	r, err := run(context.Background(), Config{Seed: 1, Trials: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.rows) != 8 {
		t.Fatalf("%d rows, want 8", len(r.rows))
	}
	for _, row := range r.rows {
		if k := row.Params.get("k").(int); k < 1 {
			t.Errorf("%v: default k %d", row.Params, k)
		}
		if row.Metrics[0].Method != methodQueries {
			t.Errorf("%v: fpr by %s", row.Params, row.Metrics[0].Method)
		}
	}
}

// two-choices/table3-double has no paper values; with double-hashed groups
// the offline rates stay within 5% of 000's Table 3 (independent hashing)
// plus double hashing's floor in every row (4 trials: CIs of about 2%), the c = 1 rows on the formula.
func TestChoicesTable3Double(t *testing.T) {
	trials := 4
	if testing.Short() {
		trials = 2
	}
	res, err := runChoicesTable3Double(context.Background(), Config{Seed: 1, Quick: true, Trials: trials})
	if err != nil {
		t.Fatal(err)
	}
	if res.paperValues() != 0 || len(res.rows) != len(table3Rows) {
		t.Fatalf("%d paper values, %d rows", res.paperValues(), len(res.rows))
	}
	for i, r := range table3Rows {
		p, _ := paperSci(r.mant, r.exp)
		row := res.rows[i]
		var fill float64
		for _, m := range row.Metrics {
			if m.Name == "ones" {
				fill = m.Measured
			}
		}
		// Double hashing adds its floor (keys whose progression a query's
		// repeats or shifts, theory.FPPairs) to each of the c groups:
		// negligible at m/n = 8, the larger part at m/n = 32.
		n, mm, k := row.Params.get("n").(int), row.Params.get("m"), row.Params.get("k").(int)
		floor := theory.FPPairs(hashing.Double, toU64(mm), float64(n), k, fill, 0)
		want := *p + 1 - math.Pow(1-floor, float64(r.c))
		for _, m := range row.Metrics {
			if m.Name != "fpr_state" {
				continue
			}
			if math.Abs(m.Measured-want) > 0.05*want {
				t.Errorf("m/n %d c %d rounds %d: double-hashed %.4g, independent (000) %.4g + double hashing's floor %.3g", r.bpk, r.c, r.rounds, m.Measured, *p, want-*p)
			}
			if (r.c == 1) != (m.Predicted != nil) {
				t.Errorf("row %d: predicted %v", i, m.Predicted)
			}
		}
	}
}

// The written explanation of two-choices/double-hashing's m/n = 16, c = 3
// row reaches its paper value and no other.
func TestChoicesDoubleExplained(t *testing.T) {
	res, err := runChoicesDouble(context.Background(), Config{Seed: 1, Quick: true, Trials: 2})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, row := range res.rows {
		for _, m := range row.Metrics {
			if strings.HasPrefix(m.Explanation, "a real, small effect") {
				n++
				if !matchParams(row.Params, paramList{{"m/n", 16}, {"c", 3}}) || m.Name != "ones" {
					t.Errorf("explanation on %v %s", row.Params, m.Name)
				}
			}
		}
	}
	if n != 1 {
		t.Errorf("%d metrics carry the double-hashing explanation, want 1", n)
	}
}

// toU64 converts a row's integer parameter (int or uint64) to uint64.
func toU64(v any) uint64 {
	switch x := v.(type) {
	case int:
		return uint64(x)
	case uint64:
		return x
	}
	return 0
}

// Offline rows merged into stages share their trials and give each stage
// exactly what its own build gives: a point with stages 3 and 5 rounds,
// run as row 0, reports for 5 rounds the very values of a 5-round point
// run as row 0 (same trial seeds), and for 3 rounds those of a 3-round
// point.
func TestChoicesStages(t *testing.T) {
	base := tablePoint(16, 2, 8, hashing.Independent, 6)
	base.N, base.M, base.FP = 500, 8000, true
	pts := make([]choicesPoint, 3)
	for i, r := range []int{3, 5, 9} {
		pts[i] = base
		pts[i].Rounds = r
	}
	merged := mergeStages(pts)
	if len(merged) != 1 || len(merged[0].Stages) != 2 {
		t.Fatalf("mergeStages: %d points", len(merged))
	}
	run := func(pt choicesPoint) *Result {
		specs, err := specsOf([]choicesPoint{pt})
		if err != nil {
			t.Fatal(err)
		}
		r, err := runRows(context.Background(), Config{Seed: 7}, "t", specs)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	got := run(merged[0])
	if len(got.rows) != 3 {
		t.Fatalf("%d rows, want 3", len(got.rows))
	}
	for i, pt := range pts {
		want := run(pt).rows[0]
		if g := got.rows[i]; g.Params.String() != want.Params.String() || g.Trials != want.Trials {
			t.Errorf("stage %d: params %v, want %v", i, g.Params, want.Params)
		}
		for j, m := range want.Metrics {
			g := got.rows[i].Metrics[j]
			if g.Name != m.Name || g.Measured != m.Measured || g.CI95 != m.CI95 {
				t.Errorf("stage %d %s: %v %v, want %v %v", i, m.Name, g.Measured, g.CI95, m.Measured, m.CI95)
			}
		}
	}
	// Points that differ in more than rounds, or go backwards, stay apart.
	other := pts[1]
	other.K = 9
	for _, ps := range [][]choicesPoint{{pts[1], pts[0]}, {pts[0], other}, {base, pts[0]}} {
		if got := mergeStages(ps); len(got) != 2 {
			t.Errorf("mergeStages merged %v/%v", ps[0].Rounds, ps[1].Rounds)
		}
	}
	// A stage that does not continue the build is refused.
	bad := merged[0]
	bad.Stages = []choicesPoint{other}
	if _, err := bad.row(); err == nil {
		t.Error("row of a stage with another k: no error")
	}
}
