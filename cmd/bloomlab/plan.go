package main

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/bloomlab/bloomlab/internal/flagx"
	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/theory"
)

func init() {
	register(&command{
		name: "plan",
		summary: "For every kind bloomlab offers, the parameters it would choose for N keys at rate P (or B bits per key), " +
			"its memory, predicted false-positive rate, hash computations and memory accesses per query (worst case), " +
			"its overhead over the n·log2(1/ε) lower bound (004 §4), and a recommendation. Nothing is allocated: " +
			"plan answers for any n, and says which kinds cannot meet the target and why. The static column marks the kinds built once " +
			"from their whole key set (fuse, ribbon: no add, remove or merge; docs/STATIC.md); a static kind's rates come in steps " +
			"(its fpr column is the rate it gives, at most P).",
		usage: "bloomlab plan -n N (-fpr P | -bits-per-key B) [-json]",
		run:   runPlan,
	})
}

// planRow is one kind's plan as plan prints it.
type planRow struct {
	Kind       string   `json:"kind"`
	Scheme     string   `json:"scheme"`
	M          uint64   `json:"m"`
	MUnit      string   `json:"m_unit"`
	K          int      `json:"k"`
	MemoryBits uint64   `json:"memory_bits"`
	BitsPerKey float64  `json:"bits_per_key"`
	FPR        *float64 `json:"fpr"`
	Hashes     int      `json:"hashes_per_query"`
	Accesses   int      `json:"memory_accesses_per_query"`
	Overhead   *float64 `json:"overhead_vs_lower_bound"`
	Removes    bool     `json:"supports_remove"`
	// Static: built once from the whole key set; no add, remove or merge
	// (docs/STATIC.md).
	Static bool         `json:"static"`
	Note   string       `json:"note"`
	Extra  []kind.Field `json:"extra,omitempty"`
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
	n := flagx.NewCount(fs, "n", 0, 0, "number of keys (1e9 notation accepted)")
	fpr := fs.Float64("fpr", 0, "target false-positive rate, in (0, 1)")
	bpk := fs.Float64("bits-per-key", 0, "bits per key (m/n)")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	if n.V == 0 {
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
	t := kind.Target{N: n.V, FPR: *fpr, BitsPerKey: *bpk}
	rep := planReport{N: t.N}
	if t.FPR > 0 {
		rep.FPR = &t.FPR
		lb := theory.LowerBoundBits(1, t.FPR)
		rep.LowerBound = &lb
	} else {
		rep.BitsPerKey = &t.BitsPerKey
	}
	var plans []kind.Plan
	for _, s := range kind.All() {
		p, err := kind.PlanDefault(s, t)
		if err != nil {
			// One kind that cannot meet the target (a d-left filter below
			// its smallest bucket budget, say) does not void the others.
			msg := strings.TrimSuffix(flagText(err), ": "+kind.ErrParam.Error())
			rep.Unavailable = append(rep.Unavailable, s.Name+": "+strings.TrimPrefix(msg, s.Name+": "))
			continue
		}
		plans = append(plans, p)
		rep.Kinds = append(rep.Kinds, rowOf(p, t))
		for _, args := range s.PlanVariants {
			p, err := kind.PlanVariant(s, t, args)
			if err != nil {
				msg := strings.TrimSuffix(flagText(err), ": "+kind.ErrParam.Error())
				rep.Unavailable = append(rep.Unavailable, s.Name+" "+strings.Join(args, " ")+": "+strings.TrimPrefix(msg, s.Name+": "))
				continue
			}
			plans = append(plans, p)
			rep.Kinds = append(rep.Kinds, rowOf(p, t))
		}
	}
	rep.Recommendation = recommend(plans, t)
	if *asJSON {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(e.stdout, "%s\n", b)
		return err
	}
	if t.FPR > 0 {
		fmt.Fprintf(e.stdout, "plan for n = %d keys at false-positive rate ≤ %g (lower bound %.4g bits per key, 004 §4)\n\n", t.N, t.FPR, *rep.LowerBound)
	} else {
		fmt.Fprintf(e.stdout, "plan for n = %d keys at %g bits per key\n\n", t.N, t.BitsPerKey)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	if len(rep.Kinds) > 0 {
		fmt.Fprintln(tw, "kind\tscheme\tm\tk\tmemory\tbits/key\tfpr\thashes/query\taccesses/query\tvs bound\tremove\tstatic\tnote")
	}
	for _, r := range rep.Kinds {
		rm := "no"
		if r.Removes {
			rm = "yes"
		}
		static := "no"
		if r.Static {
			static = "yes"
		}
		note := r.Note
		for _, x := range r.Extra {
			note += fmt.Sprintf("; %s: %s", x.Name, formatValue(x.Value))
		}
		fmt.Fprintf(tw, "%s\t%s\t%d %s\t%d\t%s\t%.4g\t%s\t%d\t%d\t%s\t%s\t%s\t%s\n", r.Kind, r.Scheme, r.M, r.MUnit, r.K,
			humanBytes(math.Ceil(float64(r.MemoryBits)/8)), r.BitsPerKey, formatPtr(r.FPR), r.Hashes, r.Accesses,
			formatPtr(r.Overhead), rm, static, note)
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

func rowOf(p kind.Plan, t kind.Target) planRow {
	nf := float64(t.N)
	r := planRow{
		Kind: p.Kind, Scheme: p.Scheme, M: p.M, MUnit: p.MUnit, K: p.K, MemoryBits: p.Bits,
		BitsPerKey: float64(p.Bits) / nf, FPR: fptr(p.FPR), Hashes: p.Hashes, Accesses: p.Accesses,
		Removes: p.Removes, Note: p.Note, Extra: p.Extra,
	}
	if s, ok := kind.Lookup(p.Kind); ok {
		r.Static = s.Static
	}
	r.Overhead = fptr(theory.Overhead(float64(p.Bits), nf, p.FPR))
	return r
}

// recommend picks, among the kinds without remove that take adds, the one
// with the least memory (at a target rate) or the lowest rate (at a target
// size), and names the fastest, the cheapest kind that supports remove,
// and the cheapest static kind (for a set that never changes).
func recommend(plans []kind.Plan, t kind.Target) string {
	better := func(a, b kind.Plan) bool {
		if t.FPR > 0 {
			return a.Bits < b.Bits || a.Bits == b.Bits && a.FPR < b.FPR
		}
		return a.FPR < b.FPR || a.FPR == b.FPR && a.Bits < b.Bits
	}
	// For a size target, a kind whose smallest layout exceeds the budget
	// (a whole 512-bit block for a handful of keys, say) does not compete
	// for "lowest rate for this size".
	budget := math.Ceil(t.BitsPerKey * float64(t.N))
	var best, bestRm, fast, bestStatic *kind.Plan
	for i := range plans {
		p := &plans[i]
		if math.IsNaN(p.FPR) || t.FPR == 0 && !p.Removes && float64(p.Bits) > budget {
			continue
		}
		if s, ok := kind.Lookup(p.Kind); ok && s.Static {
			if bestStatic == nil || better(*p, *bestStatic) {
				bestStatic = p
			}
			continue
		}
		if p.Accesses == 1 && !p.Removes && (fast == nil || better(*p, *fast)) {
			fast = p
		}
		if p.Removes {
			if bestRm == nil || better(*p, *bestRm) {
				bestRm = p
			}
		} else if best == nil || better(*p, *best) {
			best = p
		}
	}
	var parts []string
	if best != nil {
		why := "the least memory for this rate"
		if t.FPR == 0 {
			why = "the lowest false-positive rate for this size"
		}
		parts = append(parts, fmt.Sprintf("%s (m = %d, k = %d): %s", best.Kind, best.M, best.K, why))
	}
	if fast != nil && best != nil && fast != best && best.Bits > 0 {
		parts = append(parts, fmt.Sprintf("%s for the fastest queries (one cache line instead of up to %d accesses; %.3g× the memory)",
			fast.Kind, best.Accesses, float64(fast.Bits)/float64(best.Bits)))
	}
	if bestRm != nil {
		s := fmt.Sprintf("%s if keys must be removed", bestRm.Kind)
		if best != nil && best.Bits > 0 {
			s += fmt.Sprintf(" (%.3g× the memory)", float64(bestRm.Bits)/float64(best.Bits))
		}
		parts = append(parts, s)
	}
	if bestStatic != nil {
		s := fmt.Sprintf("%s if the set never changes (static: built once from all the keys, no add; docs/STATIC.md)", bestStatic.Kind)
		if best != nil && best.Bits > 0 {
			s = fmt.Sprintf("%s if the set never changes (static: built once from all the keys, no add; %.3g× the memory; docs/STATIC.md)",
				bestStatic.Kind, float64(bestStatic.Bits)/float64(best.Bits))
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return "none: no kind meets this target (see above why)"
	}
	return strings.Join(parts, "; ")
}
