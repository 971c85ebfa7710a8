package main

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/bloomlab/bloomlab"
	"github.com/bloomlab/bloomlab/choices"

	"github.com/bloomlab/bloomlab/counting"
	"github.com/bloomlab/bloomlab/theory"
)

func init() {
	register(&command{
		name: "info",
		summary: "Describe the filter in FILE: kind, scheme, seed, m, k, keys added, bits per key, fill ratio, " +
			"false-positive rate predicted from the current fill (fill^k) and at the design n " +
			"(the n for which k is optimal, ln2·m/k), and the approximate number of distinct keys.",
		usage: "bloomlab info [-json] FILE",
		run:   runInfo,
	})
}

// infoReport is info's output; its JSON form is documented in docs/LAB.md.
type infoReport struct {
	File         string   `json:"file"`
	Kind         string   `json:"kind"`
	Scheme       string   `json:"scheme"`
	Seed         uint64   `json:"seed"`
	M            uint64   `json:"m"`
	K            int      `json:"k"`
	CounterBits  int      `json:"counter_bits"`
	MemoryBits   uint64   `json:"memory_bits"`
	Keys         uint64   `json:"keys_added"`
	BitsPerKey   *float64 `json:"bits_per_key"`
	Fill         float64  `json:"fill_ratio"`
	FPRFill      float64  `json:"fpr_at_fill"`
	FPRKeys      *float64 `json:"fpr_at_keys_added"`
	DesignN      uint64   `json:"design_n"`
	DesignFrom   string   `json:"design_n_source"`
	FPRDesign    float64  `json:"fpr_at_design_n"`
	ApproxCount  *float64 `json:"approx_count"`
	Saturated    *uint64  `json:"saturated_counters,omitempty"`
	CounterLimit *uint64  `json:"counter_max,omitempty"`
}

func fptr(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

func runInfo(e *env, args []string) error {
	fs := flagSet("info")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want exactly one FILE")
	}
	g, err := loadAny(pos[0])
	if err != nil {
		return err
	}
	f, ok := g.(filter)
	if !ok {
		return e.genericInfo(pos[0], g, *asJSON)
	}
	r := infoReport{
		File: pos[0], Kind: f.Kind(), Scheme: f.Scheme().String(), Seed: f.Seed(),
		M: f.M(), K: f.K(), CounterBits: 1, Keys: f.N(), Fill: f.FillRatio(),
		FPRFill: f.EstimatedFPR(), ApproxCount: fptr(f.ApproxCount()),
	}
	if cf, ok := f.(*counting.Filter); ok {
		r.CounterBits = cf.CounterBits()
		sat, lim := cf.Saturated(), cf.CounterMax()
		r.Saturated, r.CounterLimit = &sat, &lim
	}
	r.MemoryBits = r.M * uint64(r.CounterBits)
	mf, kf := float64(r.M), r.K
	fp := theory.FPExact
	if f.Scheme().Partitioned() {
		fp = theory.FPPartitioned
	}
	if f.Kind() == "blocked" {
		fp = func(m, n float64, k int) float64 { return theory.FPBlocked(n, m/theory.BlockBits, theory.BlockBits, k) }
	}
	if cf, ok := f.(*choices.Filter); ok {
		c := cf.C() // online greedy prediction (000 eq. 3.2); an offline build does better
		fp = func(m, n float64, k int) float64 { return theory.FPChoices(m/n, k, c) }
	}
	if r.Keys > 0 {
		r.BitsPerKey = fptr(float64(r.MemoryBits) / float64(r.Keys))
		r.FPRKeys = fptr(fp(mf, float64(r.Keys), kf))
	}
	r.DesignN, r.DesignFrom = f.Capacity(), "recorded when built"
	if r.DesignN == 0 {
		r.DesignN = uint64(math.Max(1, math.Round(math.Ln2*mf/float64(kf))))
		r.DesignFrom = "not recorded; the n for which k is optimal, ln2·m/k"
	}
	r.FPRDesign = fp(mf, float64(r.DesignN), kf)
	if *asJSON {
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(e.stdout, "%s\n", b)
		return err
	}
	opt := func(p *float64, format string) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprintf(format, *p)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "file:\t%s\n", r.File)
	fmt.Fprintf(tw, "kind:\t%s\n", r.Kind)
	fmt.Fprintf(tw, "scheme:\t%s\n", r.Scheme)
	fmt.Fprintf(tw, "seed:\t%d\n", r.Seed)
	unit := "bits"
	if r.Kind == "counting" {
		unit = fmt.Sprintf("counters of %d bits", r.CounterBits)
	}
	fmt.Fprintf(tw, "m:\t%d %s\n", r.M, unit)
	fmt.Fprintf(tw, "k:\t%d\n", r.K)
	fmt.Fprintf(tw, "memory:\t%d bits (%s)\n", r.MemoryBits, humanBytes(float64(r.MemoryBits)/8))
	fmt.Fprintf(tw, "keys added:\t%d\n", r.Keys)
	fmt.Fprintf(tw, "bits per key:\t%s\n", opt(r.BitsPerKey, "%.4g"))
	fmt.Fprintf(tw, "fill ratio:\t%.6g\n", r.Fill)
	fmt.Fprintf(tw, "fpr at current fill:\t%.6g\t(%s)\n", r.FPRFill, fillMethod(r.Kind))
	fmt.Fprintf(tw, "fpr at keys added:\t%s\t(formula, n = keys added)\n", opt(r.FPRKeys, "%.6g"))
	fmt.Fprintf(tw, "design n:\t%d\t(%s)\n", r.DesignN, r.DesignFrom)
	fmt.Fprintf(tw, "fpr at design n:\t%.6g\t(formula)\n", r.FPRDesign)
	fmt.Fprintf(tw, "approx count:\t%s\t(distinct keys, from the fill)\n", opt(r.ApproxCount, "%.1f"))
	if r.Saturated != nil {
		fmt.Fprintf(tw, "saturated counters:\t%d\t(counter max %d)\n", *r.Saturated, *r.CounterLimit)
	}
	return tw.Flush()
}

// humanBytes renders a byte count with a binary unit.
func humanBytes(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	if i == 0 {
		return strconv.FormatFloat(b, 'f', -1, 64) + " B"
	}
	return fmt.Sprintf("%.3g %s", b, units[i])
}

// genericInfo describes a kind outside the filter interface (dleft, dlcbf,
// countmin) with what it offers: seed, size, keys, design n, the
// false-positive rate of its current state.
func (e *env) genericInfo(path string, g bloomlab.Filter, asJSON bool) error {
	type row struct {
		Name  string `json:"name"`
		Value any    `json:"value"`
	}
	rows := []row{{"file", path}, {"kind", g.Kind()}}
	if v, ok := g.(interface{ Seed() uint64 }); ok {
		rows = append(rows, row{"seed", v.Seed()})
	}
	var bitsTotal, keys uint64
	if v, ok := g.(interface{ Bits() uint64 }); ok {
		bitsTotal = v.Bits()
		rows = append(rows, row{"memory_bits", bitsTotal})
	}
	if v, ok := g.(interface{ N() uint64 }); ok {
		keys = v.N()
		rows = append(rows, row{"keys_added", keys})
	}
	if v, ok := g.(interface{ Total() uint64 }); ok {
		rows = append(rows, row{"total_count", v.Total()})
	}
	if bitsTotal > 0 && keys > 0 {
		rows = append(rows, row{"bits_per_key", float64(bitsTotal) / float64(keys)})
	}
	if v, ok := g.(interface{ Capacity() uint64 }); ok {
		rows = append(rows, row{"capacity", v.Capacity()})
	}
	if v, ok := g.(interface{ EstimatedFPR() float64 }); ok {
		rows = append(rows, row{"fpr_at_current_state", v.EstimatedFPR()})
	}
	if asJSON {
		m := make(map[string]any, len(rows))
		for _, r := range rows {
			m[r.Name] = r.Value
		}
		b, err := json.MarshalIndent(m, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(e.stdout, "%s\n", b)
		return err
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	for _, r := range rows {
		fmt.Fprintf(tw, "%s:\t%v\n", strings.ReplaceAll(r.Name, "_", " "), r.Value)
	}
	return tw.Flush()
}

// fillMethod says how each kind's EstimatedFPR reads its state.
func fillMethod(kind string) string {
	switch kind {
	case "blocked":
		return "mean over blocks of (block fill)^k, from the bits"
	case "choices":
		return "1 − (1 − fill^k)^c, from the bits"
	case "partitioned":
		return "product of the subarrays' fills, from the bits"
	}
	return "fill^k, from the bits"
}
