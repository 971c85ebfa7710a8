package main

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/theory"
)

func init() {
	register(&command{
		name: "plan",
		summary: "For every kind bloomlab offers, the parameters it would choose for N keys at rate P (or B bits per key), " +
			"its memory, predicted false-positive rate, hash computations and memory accesses per query (worst case), " +
			"its overhead over the n·log2(1/ε) lower bound (004 §4), and a recommendation.",
		usage: "bloomlab plan -n N (-fpr P | -bits-per-key B) [-json]",
		run:   runPlan,
	})
}

// planTarget is what the user asked for: n keys and either a rate or a
// number of bits per key.
type planTarget struct {
	n          uint64
	fpr        float64 // > 0 when planning for a rate
	bitsPerKey float64 // > 0 when planning for a size
}

// planRow is one kind's plan.
type planRow struct {
	Kind        string  `json:"kind"`
	Scheme      string  `json:"scheme"`
	M           uint64  `json:"m"`
	K           int     `json:"k"`
	CounterBits int     `json:"counter_bits"`
	MemoryBits  uint64  `json:"memory_bits"`
	BitsPerKey  float64 `json:"bits_per_key"`
	FPR         float64 `json:"fpr"`
	Hashes      int     `json:"hashes_per_query"`
	Accesses    int     `json:"memory_accesses_per_query"`
	Overhead    float64 `json:"overhead_vs_lower_bound"`
	Removes     bool    `json:"supports_remove"`
	Note        string  `json:"note"`
}

// planner plans one kind. Later kinds register theirs in planners.
type planner struct {
	kind string
	plan func(t planTarget) (planRow, error)
}

var planners = []planner{
	{"bloom", func(t planTarget) (planRow, error) {
		return planStandard(t, "bloom", hashing.DefaultScheme, 1)
	}},
	{"partitioned", func(t planTarget) (planRow, error) {
		return planStandard(t, "partitioned", hashing.Partition, 1)
	}},
	{"counting", func(t planTarget) (planRow, error) {
		return planStandard(t, "counting", hashing.DefaultScheme, 4)
	}},
	{"blocked", planBlocked},
	{"choices", planChoices},
	{"dlcbf", planDlcbf},
	{"dleft", planDleft},
}

// planChoices plans a Bloom filter with two choices (000 §3) filled online:
// m and k from theory.SizeChoices (or m = ⌈B·n⌉ and the k minimising
// theory.FPChoices), its rate the ODE's prediction; one hash per query,
// c·k bit reads in the worst case.
func planChoices(t planTarget) (planRow, error) {
	const c = 2
	m, k, err := sizeChoices(c, t.n, t.fpr, t.bitsPerKey)
	if err != nil {
		return planRow{}, err
	}
	nf := float64(t.n)
	fpr := theory.FPChoices(float64(m)/nf, k, c)
	r := planRow{
		Kind: "choices", Scheme: hashing.DefaultScheme.String(), M: m, K: k, CounterBits: 1,
		MemoryBits: m, FPR: fpr, Hashes: 1, Accesses: c * k,
		Note: "2 groups of k hashes, online greedy (000 §3.1); build -rounds R does better",
	}
	r.BitsPerKey = float64(m) / nf
	r.Overhead = theory.Overhead(float64(m), nf, fpr)
	return r, nil
}

// planBlocked plans a cache-line-blocked filter: sized by theory.SizeBlocked
// (its rate, theory.FPBlocked, is worse than a standard filter's for the
// same bits), one hash and one cache line per query.
func planBlocked(t planTarget) (planRow, error) {
	m, k, err := sizeBlocked(hashing.Independent, t.n, t.fpr, t.bitsPerKey)
	if err != nil {
		return planRow{}, err
	}
	nf := float64(t.n)
	fpr := theory.FPBlocked(nf, float64(m/theory.BlockBits), theory.BlockBits, k)
	r := planRow{
		Kind: "blocked", Scheme: "independent", M: m, K: k, CounterBits: 1,
		MemoryBits: m, FPR: fpr, Hashes: 1, Accesses: 1,
		Note: "512-bit blocks: one cache line per query (004 §8)",
	}
	r.BitsPerKey = float64(m) / nf
	r.Overhead = theory.Overhead(float64(m), nf, fpr)
	return r, nil
}

// planStandard plans a standard, partitioned or counting filter: m and k
// from theory.Size / SizePartitioned (or m = ⌈B·n⌉ and the optimal k);
// one xxh3-128 hash per query, from which the scheme derives all k
// positions; k memory accesses in the worst case (a query for a present key).
func planStandard(t planTarget, kind string, scheme hashing.Scheme, w int) (planRow, error) {
	m, k, err := sizeFor(scheme, t.n, t.fpr, t.bitsPerKey)
	if err != nil {
		return planRow{}, err
	}
	m = hashing.PartitionSize(scheme, m, k)
	mf, nf := float64(m), float64(t.n)
	fpr := theory.FPExact(mf, nf, k)
	if scheme.Partitioned() {
		fpr = theory.FPPartitioned(mf, nf, k)
	}
	r := planRow{
		Kind: kind, Scheme: scheme.String(), M: m, K: k, CounterBits: w,
		MemoryBits: m * uint64(w), FPR: fpr, Hashes: 1, Accesses: k,
		Removes: kind == "counting",
	}
	r.BitsPerKey = float64(r.MemoryBits) / nf
	r.Overhead = theory.Overhead(float64(r.MemoryBits), nf, fpr)
	switch kind {
	case "bloom":
		r.Note = "standard filter (003, 004 §3)"
	case "partitioned":
		r.Note = "k subarrays of m/k bits (004 §5); never a lower rate than bloom"
	case "counting":
		r.Note = fmt.Sprintf("%d-bit counters: supports remove (004 §9)", w)
	}
	return r, nil
}

type planReport struct {
	N          uint64    `json:"n"`
	FPR        *float64  `json:"target_fpr"`
	BitsPerKey *float64  `json:"target_bits_per_key"`
	LowerBound *float64  `json:"lower_bound_bits_per_key"`
	Kinds      []planRow `json:"kinds"`
	// Unavailable lists the kinds that cannot meet the target, and why.
	Unavailable    []string `json:"unavailable,omitempty"`
	Recommendation string   `json:"recommendation"`
}

func runPlan(e *env, args []string) error {
	fs := flagSet("plan")
	n := fs.Uint64("n", 0, "number of keys")
	fpr := fs.Float64("fpr", 0, "target false-positive rate")
	bpk := fs.Float64("bits-per-key", 0, "bits per key (m/n)")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	if *n == 0 {
		return usagef("-n N (at least 1) is required")
	}
	if isSet(fs, "fpr") == isSet(fs, "bits-per-key") {
		return usagef("give exactly one of -fpr and -bits-per-key")
	}
	if isSet(fs, "fpr") && !(*fpr > 0 && *fpr < 1) {
		return usagef("-fpr %v out of range (0, 1)", *fpr)
	}
	if isSet(fs, "bits-per-key") && !(*bpk > 0 && *bpk <= 1<<20) {
		return usagef("-bits-per-key %v out of range (0, 2^20]", *bpk)
	}
	t := planTarget{n: *n, fpr: *fpr, bitsPerKey: *bpk}
	rep := planReport{N: *n}
	if t.fpr > 0 {
		rep.FPR = &t.fpr
		lb := theory.LowerBoundBits(1, t.fpr)
		rep.LowerBound = &lb
	} else {
		rep.BitsPerKey = &t.bitsPerKey
	}
	for _, p := range planners {
		r, err := p.plan(t)
		if err != nil {
			// One kind that cannot meet the target (a d-left filter below
			// its smallest bucket budget, say) does not void the others.
			rep.Unavailable = append(rep.Unavailable, p.kind+": "+strings.TrimPrefix(err.Error(), p.kind+": "))
			continue
		}
		rep.Kinds = append(rep.Kinds, r)
	}
	rep.Recommendation = recommend(rep.Kinds, t)
	if *asJSON {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(e.stdout, "%s\n", b)
		return err
	}
	if t.fpr > 0 {
		fmt.Fprintf(e.stdout, "plan for n = %d keys at false-positive rate ≤ %g (lower bound %.4g bits per key, 004 §4)\n\n", t.n, t.fpr, *rep.LowerBound)
	} else {
		fmt.Fprintf(e.stdout, "plan for n = %d keys at %g bits per key (m/n)\n\n", t.n, t.bitsPerKey)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "kind\tscheme\tm\tk\tmemory\tbits/key\tfpr\thashes/query\taccesses/query\tvs bound\tremove\tnote")
	for _, r := range rep.Kinds {
		rm := "no"
		if r.Removes {
			rm = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%.4g\t%.4g\t%d\t%d\t%.3f\t%s\t%s\n", r.Kind, r.Scheme, r.M, r.K,
			humanBytes(math.Ceil(float64(r.MemoryBits)/8)), r.BitsPerKey, r.FPR, r.Hashes, r.Accesses, r.Overhead, rm, r.Note)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, u := range rep.Unavailable {
		fmt.Fprintf(e.stdout, "\nnot available: %s", u)
	}
	if len(rep.Unavailable) > 0 {
		fmt.Fprintln(e.stdout)
	}
	_, err = fmt.Fprintf(e.stdout, "\nrecommendation: %s\n", rep.Recommendation)
	return err
}

// recommend picks, among the kinds without remove, the one with the least
// memory (at a target rate) or the lowest rate (at a target size), and
// names the cheapest kind that supports remove.
func recommend(rows []planRow, t planTarget) string {
	better := func(a, b planRow) bool {
		if t.fpr > 0 {
			return a.MemoryBits < b.MemoryBits || a.MemoryBits == b.MemoryBits && a.FPR < b.FPR
		}
		return a.FPR < b.FPR || a.FPR == b.FPR && a.MemoryBits < b.MemoryBits
	}
	// For a size target, a kind whose smallest layout exceeds the budget
	// (a whole 512-bit block for a handful of keys, say) does not compete
	// for "lowest rate for this size".
	budget := math.Ceil(t.bitsPerKey * float64(t.n))
	var best, bestRm, fast *planRow
	for i := range rows {
		r := &rows[i]
		if t.fpr == 0 && !r.Removes && float64(r.MemoryBits) > budget {
			continue
		}
		if r.Accesses == 1 && !r.Removes && (fast == nil || better(*r, *fast)) {
			fast = r
		}
		if r.Removes {
			if bestRm == nil || better(*r, *bestRm) {
				bestRm = r
			}
		} else if best == nil || better(*r, *best) {
			best = r
		}
	}
	var parts []string
	if best != nil {
		why := "the least memory for this rate"
		if t.fpr == 0 {
			why = "the lowest false-positive rate for this size"
		}
		parts = append(parts, fmt.Sprintf("%s (m = %d, k = %d): %s", best.Kind, best.M, best.K, why))
	}
	if fast != nil && best != nil && fast != best && best.MemoryBits > 0 {
		parts = append(parts, fmt.Sprintf("%s for the fastest queries (one cache line instead of up to %d accesses; %.3g× the memory)",
			fast.Kind, best.Accesses, float64(fast.MemoryBits)/float64(best.MemoryBits)))
	}
	if bestRm != nil {
		s := fmt.Sprintf("%s if keys must be removed", bestRm.Kind)
		if best != nil && best.MemoryBits > 0 {
			s += fmt.Sprintf(" (%.3g× the memory)", float64(bestRm.MemoryBits)/float64(best.MemoryBits))
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}
