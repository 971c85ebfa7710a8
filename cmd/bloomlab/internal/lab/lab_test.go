package lab

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/theory"
)

func runNamed(t *testing.T, name string, cfg Config) *Result {
	t.Helper()
	e, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func jsonOf(t *testing.T, r *Result) string {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, "json", r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// The same seed gives the same result whatever the number of workers.
func TestDeterministicAcrossWorkers(t *testing.T) {
	var outs []string
	for _, w := range []int{1, 2, 3, 8} {
		r := runNamed(t, "notes/k-table", Config{Seed: 7, Trials: 5, workers: w})
		outs = append(outs, jsonOf(t, r))
	}
	for i := 1; i < len(outs); i++ {
		if outs[i] != outs[0] {
			t.Fatalf("workers changed the result:\n%s\nvs\n%s", outs[0], outs[i])
		}
	}
	other := jsonOf(t, runNamed(t, "notes/k-table", Config{Seed: 8, Trials: 5}))
	if other == outs[0] {
		t.Fatal("a different seed gave the same result")
	}
}

func TestTrialSeedsDistinct(t *testing.T) {
	seen := map[uint64]bool{}
	for r := 0; r < 50; r++ {
		for i := 0; i < 200; i++ {
			s := trialSeed(1, r, i)
			if seen[s] {
				t.Fatalf("seed collision at row %d trial %d", r, i)
			}
			seen[s] = true
		}
	}
}

func TestFlagRule(t *testing.T) {
	m := metric{Paper: fptr(0.0306), PaperTol: 0.00005, Measured: 0.03064, CI95: [2]float64{0.03062, 0.03066}}
	if m.flagged() {
		t.Error("difference within the paper's rounding flagged")
	}
	m.Measured, m.CI95 = 0.0308, [2]float64{0.0307, 0.0309}
	if !m.flagged() {
		t.Error("difference beyond CI and rounding not flagged")
	}
	m.CI95 = [2]float64{0.0300, 0.0316}
	if m.flagged() {
		t.Error("paper inside a wide CI flagged")
	}
	m.Paper = nil
	if m.flagged() {
		t.Error("metric without paper value flagged")
	}
}

func TestNotesExample(t *testing.T) {
	r := runNamed(t, "notes/example", Config{})
	var bits []string
	answers := map[float64]float64{}
	for _, row := range r.rows {
		bits = append(bits, row.Params.get("B").(string))
		if row.Params.get("op") == "query" {
			answers[float64(row.Params.get("x").(uint64))] = row.Metrics[0].Measured
		}
	}
	want := []string{"00000", "01001", "11001", "11001", "11001", "11001", "11001"}
	if strings.Join(bits, " ") != strings.Join(want, " ") {
		t.Errorf("bit vectors %v, want %v (003 §2)", bits, want)
	}
	for x, a := range map[float64]float64{9: 1, 11: 1, 15: 0, 16: 1} {
		if answers[x] != a {
			t.Errorf("query %v answered %v, want %v", x, answers[x], a)
		}
	}
	if r.flagged() != 0 {
		t.Errorf("%d flagged metrics", r.flagged())
	}
}

// The k-table run agrees with 003 §3 within the CI or the rounding, and the
// simulated fill matches its prediction.
func TestKTableAgreesWithPaper(t *testing.T) {
	trials := 60
	if testing.Short() {
		trials = 15
	}
	r := runNamed(t, "notes/k-table", Config{Seed: 1, Trials: trials})
	if len(r.rows) != 6 {
		t.Fatalf("%d rows, want 6", len(r.rows))
	}
	for _, row := range r.rows {
		for _, m := range row.Metrics {
			if m.flagged() {
				t.Errorf("%v: %s flagged: paper %v, measured %v, CI %v", row.Params, m.Name, *m.Paper, m.Measured, m.CI95)
			}
			// 18 metrics at 95%: allow 3 half-widths (a 99.7% interval).
			if half := (m.CI95[1] - m.CI95[0]) / 2; m.Predicted != nil && math.Abs(*m.Predicted-m.Measured) > 3*half {
				t.Errorf("%v: %s predicted %v, measured %v ± %v", row.Params, m.Name, *m.Predicted, m.Measured, half)
			}
		}
	}
}

func TestFigure1Structure(t *testing.T) {
	r := runNamed(t, "less-hashing/figure1", Config{Seed: 1, Quick: true, Trials: 2})
	if len(r.rows) != 4*5*3 {
		t.Fatalf("%d rows, want 60", len(r.rows))
	}
	if len(r.Plots) != 4 {
		t.Fatalf("%d plots, want 4", len(r.Plots))
	}
	wantK := map[int]int{4: 3, 8: 6, 12: 8, 16: 11} // Figure 1's panels
	for c, k := range wantK {
		if got := figure1K(float64(c)); got != k {
			t.Errorf("c = %d: k = %d, want %d", c, got, k)
		}
	}
	for _, row := range r.rows {
		c := row.Params.get("c").(int)
		p := theory.FPAsymptotic(float64(c), 1, wantK[c])
		if q := row.Params.get("queries").(int); q != int(math.Ceil(10/p)) {
			t.Errorf("%v: %d queries, want ⌈10/p⌉ = %v", row.Params, q, math.Ceil(10/p))
		}
		if row.Metrics[0].Paper != nil {
			t.Error("figure 1 has no paper numbers")
		}
	}
	for _, p := range r.Plots {
		var b bytes.Buffer
		if err := WriteSVG(&b, p); err != nil {
			t.Fatal(err)
		}
		checkXML(t, b.Bytes())
		if len(p.series) != 6 {
			t.Errorf("%s: %d series, want p and 5 schemes", p.Name, len(p.series))
		}
	}
}

func checkXML(t *testing.T, b []byte) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(b))
	for {
		_, err := d.Token()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
	}
}

// The JSON form follows docs/LAB.md.
func TestJSONSchema(t *testing.T) {
	r := runNamed(t, "notes/k-table", Config{Seed: 1, Trials: 3})
	var v struct {
		Experiment string `json:"experiment"`
		Rows       []struct {
			Params  map[string]any `json:"params"`
			Trials  int            `json:"trials"`
			Metrics map[string]struct {
				Paper     *float64   `json:"paper"`
				Predicted *float64   `json:"predicted"`
				Measured  float64    `json:"measured"`
				CI95      [2]float64 `json:"ci95"`
				Method    string     `json:"method"`
			} `json:"metrics"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(jsonOf(t, r)), &v); err != nil {
		t.Fatal(err)
	}
	if v.Experiment != "notes/k-table" || len(v.Rows) != 6 || v.Rows[0].Trials != 3 {
		t.Fatalf("unexpected JSON: %+v", v)
	}
	fpr := v.Rows[0].Metrics["fpr"]
	if fpr.Paper == nil || *fpr.Paper != 0.0306 || fpr.Predicted == nil || fpr.Method != methodQueries {
		t.Errorf("fpr metric %+v", fpr)
	}
	if m := v.Rows[0].Metrics["fpr_state"]; m.Paper != nil || m.Method != methodState {
		t.Errorf("fpr_state metric %+v", m)
	}
	if v.Rows[0].Params["k"] != 3.0 || v.Rows[0].Params["scheme"] != "independent" {
		t.Errorf("params %v", v.Rows[0].Params)
	}
}

func TestWriteCSVAndText(t *testing.T) {
	r := runNamed(t, "notes/k-table", Config{Seed: 1, Trials: 3})
	var b bytes.Buffer
	if err := Write(&b, "csv", r); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 1+6*3 || !strings.HasPrefix(lines[0], "experiment,seed,m/n,n,m,k,scheme,queries,trials,metric,paper") {
		t.Errorf("CSV:\n%s", b.String())
	}
	b.Reset()
	if err := Write(&b, "text", r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "flagged: ") {
		t.Errorf("text output lacks the flag summary:\n%s", b.String())
	}
	if err := Write(&b, "yaml", r); !errors.Is(err, ErrParam) {
		t.Errorf("unknown format: %v", err)
	}
}

// A too-small rate is computed from the state, and the output says so.
func TestStateMethodForTinyRates(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	run := bloomSimulator{}.Flags(fs)
	if err := fs.Parse([]string{"-n", "1000", "-c", "40", "-scheme", "enhanced"}); err != nil {
		t.Fatal(err)
	}
	r, err := run(context.Background(), Config{Seed: 1, Trials: 4})
	if err != nil {
		t.Fatal(err)
	}
	m := r.rows[0].Metrics[0]
	if m.Method != methodState || r.rows[0].Params.get("queries") != 0 {
		t.Errorf("fpr at c = 40 measured by %s with %v queries, want state", m.Method, r.rows[0].Params.get("queries"))
	}
	// The state's rate is mostly the pair floor of enhanced double hashing
	// (about n/(m·m/2) = 1.25e-6 here), which fill^k alone (6e-9) missed.
	ps := r.rows[0].Params
	mm, k := ps.get("m").(uint64), ps.get("k").(int)
	want := theory.FPScheme(hashing.Enhanced, mm, 1000, k)
	if !(m.Measured > 0 && math.Abs(m.Measured-want) < 0.05*want) {
		t.Errorf("state-based fpr %v, want about %v (theory.FPScheme)", m.Measured, want)
	}
}

func TestRunErrors(t *testing.T) {
	boom := errors.New("boom")
	_, err := runRows(context.Background(), Config{}, "x", []rowSpec{{
		Trials: 3, Metrics: []metricSpec{{Name: "a"}},
		Trial: func(any, uint64, []float64) error { return boom },
	}})
	if !errors.Is(err, boom) {
		t.Errorf("trial error lost: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = runRows(ctx, Config{}, "x", []rowSpec{{Trials: 3, Metrics: []metricSpec{{Name: "a"}},
		Trial: func(any, uint64, []float64) error { return nil }}})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled run: %v", err)
	}
	if _, err := runRows(context.Background(), Config{}, "x", []rowSpec{{Trials: 0}}); !errors.Is(err, ErrParam) {
		t.Errorf("zero trials: %v", err)
	}
}

func TestSampleSummary(t *testing.T) {
	s := sampleSummary([]float64{1, 2, 3, 4, 5})
	if s.mean != 3 || math.Abs(s.sd-math.Sqrt(2.5)) > 1e-12 {
		t.Fatalf("%+v", s)
	}
	h := 2.7764 * math.Sqrt(2.5) / math.Sqrt(5)
	if math.Abs(s.lo-(3-h)) > 1e-4 || math.Abs(s.hi-(3+h)) > 1e-4 {
		t.Errorf("CI [%v, %v], want 3 ± %v", s.lo, s.hi, h)
	}
}

func TestRegistry(t *testing.T) {
	names := map[string]bool{}
	for _, e := range Experiments() {
		names[e.Name] = true
		if e.Summary == "" || e.Paper == "" {
			t.Errorf("%s lacks a summary or paper", e.Name)
		}
	}
	for _, n := range []string{"notes/example", "notes/k-table", "less-hashing/figure1"} {
		if !names[n] {
			t.Errorf("%s not registered", n)
		}
	}
	if _, err := Lookup("nope"); !errors.Is(err, errUnknown) {
		t.Errorf("Lookup(nope) = %v", err)
	}
	if _, err := LookupSimulator("bloom"); err != nil {
		t.Error(err)
	}
	defer func() {
		if recover() == nil {
			t.Error("duplicate registration did not panic")
		}
	}()
	register(Experiment{Name: "notes/example", Run: runNotesExample})
}
