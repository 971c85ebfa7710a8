package lab

// Experiments of paper 003, "Notes 14 for CS 170: Bloom Filters".

import (
	"context"
	"fmt"
	"strings"

	"github.com/bloomlab/bloomlab/bloom"
	"github.com/bloomlab/bloomlab/hashing"
)

func init() {
	register(Experiment{
		Name:    "notes/example",
		Paper:   "003 §2",
		Summary: "the m = 5, k = 2 worked example step by step: bit vector after each insert, four queries, the false positive for 16",
		Run:     runNotesExample,
	})
	register(Experiment{
		Name:    "notes/k-table",
		Paper:   "003 §3",
		Summary: "false-positive rate for m = 8n with k = 3..7 and m = 10n with k = 7: formula and simulation (n = 10,000)",
		Run:     runNotesKTable,
	})
}

// exampleProbe marks a digest that reads one bit: both positions are H1.
const exampleProbe = ^uint64(0)

// exampleIndex is 003 §2's pair of hash functions on the integer key x,
// carried in Digest.H1: h1(x) = x mod 5, h2(x) = (2x + 3) mod 5.
func exampleIndex(d hashing.Digest, i int) uint64 {
	x := d.H1
	switch {
	case d.H2 == exampleProbe:
		return x
	case i == 0:
		return x % 5
	}
	return (2*x + 3) % 5
}

func runNotesExample(ctx context.Context, cfg Config) (*Result, error) {
	f, err := bloom.New(5, 2, bloom.WithIndexFunc(exampleIndex))
	if err != nil {
		return nil, err
	}
	// bits reads B[0..4] through the filter itself: a probe digest whose
	// two positions are both j answers whether bit j is set.
	bits := func() string {
		var b strings.Builder
		for j := uint64(0); j < 5; j++ {
			if f.ContainsHash(hashing.Digest{H1: j, H2: exampleProbe}) {
				b.WriteByte('1')
			} else {
				b.WriteByte('0')
			}
		}
		return b.String()
	}
	exact := func(name string, paper *float64, v float64) metric {
		return metric{Name: name, Paper: paper, Measured: v, CI95: [2]float64{v, v}, Method: methodExact}
	}
	res := &Result{experiment: "notes/example", seed: cfg.Seed}
	add := func(op string, x any, h1, h2 any, truth, answer string, ms ...metric) {
		res.rows = append(res.rows, resultRow{
			Params: paramList{{"op", op}, {"x", x}, {"h1", h1}, {"h2", h2}, {"B", bits()},
				{"in S", truth}, {"answer", answer}},
			Trials:  1,
			Metrics: ms,
		})
	}
	add("init", nil, nil, nil, "", "", exact("ones", fptr(0), f.FillRatio()))
	inS := map[uint64]bool{}
	// The paper's bit vectors after each insert: 01001, then 11001.
	for _, ins := range []struct {
		x    uint64
		ones float64
	}{{9, 2.0 / 5}, {11, 3.0 / 5}} {
		d := hashing.Digest{H1: ins.x}
		f.AddHash(d)
		inS[ins.x] = true
		add("insert", ins.x, exampleIndex(d, 0), exampleIndex(d, 1), "", "", exact("ones", fptr(ins.ones), f.FillRatio()))
	}
	// 003 prints the answers for 15 (no) and 16 (yes, a false positive);
	// 9 and 11 were inserted, so a Bloom filter must answer yes.
	for _, q := range []struct {
		x     uint64
		paper *float64
	}{{9, nil}, {11, nil}, {15, fptr(0)}, {16, fptr(1)}} {
		d := hashing.Digest{H1: q.x}
		got := f.ContainsHash(d)
		truth, answer := "no", "no"
		if inS[q.x] {
			truth = "yes"
		}
		switch {
		case got && !inS[q.x]:
			answer = "yes (false positive)"
		case got:
			answer = "yes"
		case inS[q.x]:
			answer = "no (FALSE NEGATIVE)"
		}
		v := 0.0
		if got {
			v = 1
		}
		add("query", q.x, exampleIndex(d, 0), exampleIndex(d, 1), truth, answer, exact("present", q.paper, v))
	}
	res.notes = []string{
		"h1(x) = x mod 5, h2(x) = (2x + 3) mod 5 on the integer key itself, through bloom.WithIndexFunc.",
		"B is printed B[0] … B[4]: 003 writes B[1..5] but its hash values index the bits from 0 (docs/ERRATA.md).",
		"ones is the fraction of bits set; present is 1 when the filter answers yes.",
	}
	return res, ctx.Err()
}

// kTablePaper is 003 §3's table: m/n, k and the printed rate.
var kTablePaper = []struct {
	c     int
	k     int
	paper float64
}{{8, 3, 0.0306}, {8, 4, 0.0240}, {8, 5, 0.0217}, {8, 6, 0.0216}, {8, 7, 0.0229}, {10, 7, 0.0082}}

// kTableN and kTableQueries size a k-table trial: n keys, then that many
// absent-key queries.
const (
	kTableN       = 10_000
	kTableQueries = 100_000
)

func runNotesKTable(ctx context.Context, cfg Config) (*Result, error) {
	trials := cfg.trials(2000, 40)
	var pts []bloomPoint
	for _, r := range kTablePaper {
		pts = append(pts, bloomPoint{
			Pre: paramList{{"m/n", r.c}},
			N:   kTableN, M: uint64(r.c * kTableN), K: r.k, Scheme: hashing.Independent,
			Queries: kTableQueries, Predict: predictExact, Trials: trials,
			Paper: fptr(r.paper), PaperTol: 0.00005,
		})
	}
	specs, err := specsOf(pts)
	if err != nil {
		return nil, err
	}
	res, err := runRows(ctx, cfg, "notes/k-table", specs)
	if err != nil {
		return nil, err
	}
	res.notes = []string{
		fmt.Sprintf("each trial inserts n = %d random keys into m = (m/n)·n bits with k independent hash functions (scheme independent) and queries %d keys not inserted.", kTableN, kTableQueries),
		"paper: 003 §3's printed rates, rounded to 4 decimals; predicted: (1 − (1 − 1/m)^{kn})^k (theory.FPExact).",
		"fpr_state is fill^k of each trial's filter; ones is its fraction of bits set, predicted 1 − (1 − 1/m)^{kn}.",
		"a row is flagged when |paper − measured| exceeds both the CI half-width and the paper's rounding (0.00005).",
	}
	return res, nil
}
