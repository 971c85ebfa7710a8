package lab

import (
	"context"
	"math"
	"testing"
)

// A reduced churn (4 × 256 buckets at load 6, 2^16 pairs) keeps the
// structure of dlcbf/churn: no insert is refused, the static rate from the
// state is d·6·2^−14 within 2%, the dynamic variants are at least twice
// better, and the queried rate agrees with the state's within the CI.
func TestDlcbfChurnSmall(t *testing.T) {
	var specs []rowSpec
	for _, p := range churnPaper {
		c := churnConfig(p.v)
		c.Buckets = 256
		s, err := churnPoint{Cfg: c, N: 6 * 4 * 256, Churn: 1 << 16, Queries: 200_000, Trials: 4}.row()
		if err != nil {
			t.Fatal(err)
		}
		specs = append(specs, s)
	}
	res, err := runRows(context.Background(), Config{Seed: 3}, "test", specs)
	if err != nil {
		t.Fatal(err)
	}
	get := func(r int, name string) metric {
		for _, m := range res.rows[r].Metrics {
			if m.Name == name {
				return m
			}
		}
		t.Fatalf("row %d has no metric %s", r, name)
		return metric{}
	}
	static := get(0, "fpr_state").Measured
	if want := 24 * math.Exp2(-14); math.Abs(static-want)/want > 0.02 {
		t.Errorf("static state rate %g, want %g ± 2%%", static, want)
	}
	for r := range res.rows {
		if get(r, "refused").Measured != 0 {
			t.Errorf("row %d refused inserts", r)
		}
		f, s := get(r, "fpr"), get(r, "fpr_state")
		// 4 × 200,000 queries: the queried mean is within 5 binomial
		// standard deviations of the state's rate.
		if sd := math.Sqrt(s.Measured / 800_000); math.Abs(f.Measured-s.Measured) > 5*sd {
			t.Errorf("row %d: queried %g, state %g", r, f.Measured, s.Measured)
		}
		if r > 0 && s.Measured > static/2 {
			t.Errorf("row %d: dynamic rate %g not below half the static %g", r, s.Measured, static)
		}
	}
	ml := 0.0
	for _, m := range dlcbfMaxLoads {
		ml += get(1, "maxload_"+itoa(m)).Measured
	}
	if ml < 0.999 {
		t.Errorf("max-load fractions 6..9 sum to %g", ml)
	}
}

func itoa(i int) string {
	return string(rune('0' + i))
}

func TestCountMinTwoHashesQuick(t *testing.T) {
	sp, err := cmPoint{N: 50_000, U: 10_000, S: 1.2, Eps: 0.01, Delta: 0.01, Trials: 4}.row()
	if err != nil {
		t.Fatal(err)
	}
	res, err := runRows(context.Background(), Config{Seed: 1}, "test", []rowSpec{sp})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range res.rows[0].Metrics {
		if math.IsNaN(m.Measured) || m.Measured < -1 || m.Measured > 1 {
			t.Errorf("%s = %g", m.Name, m.Measured)
		}
		if m.Name == "diff_mean_over_N" && (m.CI95[0] > 0 || m.CI95[1] < 0) && math.Abs(m.Measured) > 1e-4 {
			t.Errorf("two-hash and independent rows differ: %g %v", m.Measured, m.CI95)
		}
	}
}
