package lab

import (
	"bytes"
	"context"
	"math"
	"regexp"
	"strconv"
	"testing"

	"github.com/bloomlab/bloomlab/internal/stats"
	"github.com/bloomlab/bloomlab/theory"
)

// TestFiltersSpace runs filters/space quick and checks what a user reads
// from it:
//   - every queried rate (fpr, method queries) is within binomial bounds
//     (α = 10^-6 over all trials' queries) of the row's predicted rate, and
//     every rate from the state within 10% of the prediction (5% for
//     cuckoo, exact for fuse) or twice its CI;
//   - every structure meets its target ε = 2^-r (prediction ≤ ε, state
//     ≤ 1.1ε) and none passes the lower bound: bits per key ≥ r and
//     ≥ log2(1/state rate);
//   - the bits per key: Bloom's overhead (bits per key ÷ r) is 1/ln 2 within
//     1%, blocked above it; semi-sorting saves exactly 1/load bits per key
//     at the same f; fuse's bits are theory.FuseBits, 3-wise ≤ 1.35 and
//     4-wise ≤ 1.25 of the bound at r = 8 and 16 (n = 7782: the paper's
//     size factor of small n), twice that at r = 4 (8-bit fingerprints
//     for a 4-bit target); ribbon's within 1% of theory.RibbonBits (its
//     expected size) and below RibbonMaxBits, ≤ 1.1 of the bound at every
//     r;
//   - the rankings a user chooses by: at r = 4 bloom < cuckoo-semi <
//     cuckoo; at r = 8 fuse4 < fuse3 < bloom < blocked and fuse4 <
//     cuckoo-semi < bloom; at
//     r = 16 cuckoo-semi < cuckoo < bloom < blocked and fuse4 < fuse3 <
//     bloom (fuse's size factor at n = 7782 keeps it above the semi-sorted
//     cuckoo filter there); ribbon below every other structure at every r.
func TestFiltersSpace(t *testing.T) {
	e, err := Lookup("filters/space")
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Run(context.Background(), Config{Seed: 1, Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Plots) != 1 || len(res.Plots[0].series) != 2+len(spaceStructures) {
		t.Fatalf("plots: %+v", res.Plots)
	}
	checkLegend(t, res.Plots[0])
	type key struct {
		s string
		r int
	}
	bpk := map[key]float64{}
	f := map[key]int{}
	for _, row := range res.rows {
		s, r := row.Params.get("structure").(string), row.Params.get("r").(int)
		n := row.Params.get("n").(int)
		q := row.Params.get("queries").(int)
		k := key{s, r}
		if v, ok := row.Params.get("f").(int); ok {
			f[k] = v
		}
		eps := math.Ldexp(1, -r)
		var state float64
		for _, m := range row.Metrics {
			if m.Name == "fpr_state" {
				state = m.Measured
			}
		}
		for _, m := range row.Metrics {
			switch m.Name {
			case "fpr":
				if m.Method != methodQueries {
					continue
				}
				trials := uint64(q * row.Trials)
				fp := uint64(math.Round(m.Measured * float64(trials)))
				lo, hi := stats.BinomialQuantileBounds(trials, *m.Predicted, 1e-6)
				if fp < lo || fp > hi {
					t.Errorf("%s at r = %d: %d false positives in %d queries, predicted %.4g: want [%d, %d]", s, r, fp, trials, *m.Predicted, lo, hi)
				}
			case "fpr_state":
				tol := 0.10
				switch s {
				case "cuckoo", "cuckoo-semi":
					tol = 0.05
				case "fuse3", "fuse4":
					tol = 1e-12
				}
				w := m.CI95[1] - m.CI95[0]
				if d := math.Abs(m.Measured / *m.Predicted - 1); d > tol && math.Abs(m.Measured-*m.Predicted) > 2*w {
					t.Errorf("%s at r = %d: state %.4g, theory %.4g", s, r, m.Measured, *m.Predicted)
				}
				if *m.Predicted > eps || m.Measured > 1.1*eps {
					t.Errorf("%s at r = %d: predicted %.4g, state %.4g: target 2^-%d missed", s, r, *m.Predicted, m.Measured, r)
				}
			case "bits_per_key":
				bpk[k] = m.Measured
				if m.Measured < float64(r) || m.Measured < math.Log2(1/state) {
					t.Errorf("%s at r = %d: %.3f bits per key at a state rate %.4g passes the lower bound", s, r, m.Measured, state)
				}
				if s == "ribbon" {
					if exp, hi := *m.Predicted, float64(theory.RibbonMaxBits(uint64(n), r))/float64(n); math.Abs(m.Measured/exp-1) > 0.01 || m.Measured > hi {
						t.Errorf("ribbon at r = %d: %.4f bits per key, theory.RibbonBits %.4f, RibbonMaxBits %.4f", r, m.Measured, exp, hi)
					}
				} else if math.Abs(m.Measured-*m.Predicted) > 1e-9 {
					t.Errorf("%s at r = %d: %.4f bits per key, predicted %.4f", s, r, m.Measured, *m.Predicted)
				}
				if s == "fuse3" || s == "fuse4" {
					if want := float64(theory.FuseBits(int(s[4]-'0'), f[k], uint64(n))) / float64(n); m.Measured != want {
						t.Errorf("%s at r = %d: %.4f bits per key, theory.FuseBits %.4f", s, r, m.Measured, want)
					}
				}
			case "overhead":
				if want := bpk[k] / float64(r); math.Abs(m.Measured-want) > 1e-9 {
					t.Errorf("%s at r = %d: overhead %v, want %v", s, r, m.Measured, want)
				}
			}
		}
	}
	over := func(s string, r int) float64 {
		v, ok := bpk[key{s, r}]
		if !ok {
			t.Fatalf("no row %s at r = %d", s, r)
		}
		return v / float64(r)
	}
	rs := []int{4, 8, 12, 16, 20}
	for _, r := range rs {
		if o := over("bloom", r); math.Abs(o*math.Ln2-1) > 0.01 {
			t.Errorf("bloom at r = %d: overhead %.4f, want 1/ln 2", r, o)
		}
		if !(over("blocked", r) > over("bloom", r)) {
			t.Errorf("r = %d: blocked %.4f ≤ bloom %.4f", r, over("blocked", r), over("bloom", r))
		}
		c, cs := key{"cuckoo", r}, key{"cuckoo-semi", r}
		if f[c] != f[cs] || math.Abs(bpk[c]-bpk[cs]-1/spaceLoad) > 0.01 {
			t.Errorf("r = %d: cuckoo f = %d %.3f bits per key, semi-sorted f = %d %.3f", r, f[c], bpk[c], f[cs], bpk[cs])
		}
	}
	for _, r := range []int{8, 16} {
		if o := over("fuse3", r); !(o >= 1 && o <= 1.35) {
			t.Errorf("fuse3 at r = %d: overhead %.4f", r, o)
		}
		if o := over("fuse4", r); !(o >= 1 && o <= 1.25) {
			t.Errorf("fuse4 at r = %d: overhead %.4f", r, o)
		}
	}
	for _, s := range []string{"fuse3", "fuse4"} {
		if a, b := over(s, 4), over(s, 8); math.Abs(a-2*b) > 1e-9 {
			t.Errorf("%s: overhead %.4f at r = 4, %.4f at r = 8: want twice (8-bit fingerprints)", s, a, b)
		}
	}
	for _, r := range rs {
		if o := over("ribbon", r); !(o >= 1 && o <= 1.1) {
			t.Errorf("ribbon at r = %d: overhead %.4f", r, o)
		}
	}
	for _, o := range []struct {
		r     int
		order []string
	}{
		{4, []string{"bloom", "cuckoo-semi", "cuckoo"}},
		{8, []string{"fuse4", "fuse3", "bloom", "blocked"}},
		{8, []string{"fuse4", "cuckoo-semi", "bloom"}},
		{16, []string{"cuckoo-semi", "cuckoo", "bloom", "blocked"}},
		{16, []string{"fuse4", "fuse3", "bloom"}},
	} {
		for i := 1; i < len(o.order); i++ {
			if a, b := over(o.order[i-1], o.r), over(o.order[i], o.r); !(a < b) {
				t.Errorf("r = %d: %s %.4f ≥ %s %.4f", o.r, o.order[i-1], a, o.order[i], b)
			}
		}
	}
	for _, r := range rs {
		for _, s := range spaceStructures {
			if a, b := over("ribbon", r), over(s, r); s != "ribbon" && !(a < b) {
				t.Errorf("r = %d: ribbon %.4f ≥ %s %.4f", r, a, s, b)
			}
		}
	}
}

// checkLegend: p's SVG is well-formed, gives each series its own colour
// and keeps every text (the legend's rows of three included) on the
// canvas.
func checkLegend(t *testing.T, p Plot) {
	t.Helper()
	if len(p.series) > len(palette) {
		t.Errorf("%s: %d series, %d colours", p.Name, len(p.series), len(palette))
	}
	var b bytes.Buffer
	if err := WriteSVG(&b, p); err != nil {
		t.Fatal(err)
	}
	checkXML(t, b.Bytes())
	m := regexp.MustCompile(`^<svg[^>]* height="([0-9.]+)"`).FindSubmatch(b.Bytes())
	if m == nil {
		t.Fatalf("%s: no height", p.Name)
	}
	h, _ := strconv.ParseFloat(string(m[1]), 64)
	texts := regexp.MustCompile(`<text x="[0-9.]+" y="([0-9.]+)"`).FindAllSubmatch(b.Bytes(), -1)
	if len(texts) < len(p.series) {
		t.Fatalf("%s: %d texts", p.Name, len(texts))
	}
	for _, y := range texts {
		if v, _ := strconv.ParseFloat(string(y[1]), 64); v > h-6 {
			t.Errorf("%s: text at y = %v on a canvas %v high", p.Name, v, h)
		}
	}
}
