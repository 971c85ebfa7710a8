package main

import (
	"encoding/json"
	"fmt"
	"github.com/bloomlab/bloomlab/internal/sysmem"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/bloomlab/bloomlab"
	"github.com/bloomlab/bloomlab/internal/kind"
)

func init() {
	register(&command{
		name: "info",
		summary: "Describe the filter in FILE: its kind, seed, memory, the keys added and the number it was sized for (capacity), " +
			"the false-positive rate of its current state and how it is computed, then the kind's own structure " +
			"(scheme, m, k, counters, buckets, stash, …) and its rate by formula at the keys added and at the design n. " +
			"Warnings (more keys than the capacity, keys in a stash) are marked. -json prints the same as JSON. FILE may be a URL target " +
			"(redis://…?key=NAME, see build): its metadata, shards and generation, and its fill counted by the servers (BITCOUNT), without downloading the bits.",
		usage: "bloomlab info [-json] FILE|TARGET",
		run:   runInfo,
	})
}

// infoReport is info's output; its JSON form is documented in docs/LAB.md.
type infoReport struct {
	File     string `json:"file"`
	Kind     string `json:"kind"`
	Seed     uint64 `json:"seed"`
	Bits     uint64 `json:"bits"`
	Keys     uint64 `json:"keys_added"`
	Capacity uint64 `json:"capacity"`
	// Static: the kind is static (fuse, ribbon): no add, remove or merge.
	Static     bool         `json:"static,omitempty"`
	BitsPerKey *float64     `json:"bits_per_key"`
	FPR        *float64     `json:"fpr"`
	FPRMethod  string       `json:"fpr_method"`
	Fields     []kind.Field `json:"fields"`
	Warnings   []string     `json:"warnings,omitempty"`
}

// fptr returns &x, or nil for NaN and infinities (which JSON cannot hold).
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
	t, err := openTarget(pos[0])
	if err != nil {
		return err
	}
	r, err := t.info(e)
	if err != nil {
		return err
	}
	if *asJSON {
		for i, fd := range r.Fields {
			if x, ok := fd.Value.(float64); ok {
				if p := fptr(x); p != nil {
					r.Fields[i].Value = *p
				} else {
					r.Fields[i].Value = nil
				}
			}
		}
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(e.stdout, "%s\n", b)
		return err
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	capacity := "unknown (not recorded)"
	if r.Capacity > 0 {
		capacity = fmt.Sprintf("%d\t(keys it was sized for)", r.Capacity)
		if r.Static {
			capacity = fmt.Sprintf("%d\t(keys it was planned for: a static filter is built for exactly the keys it holds)", r.Capacity)
		}
	}
	fmt.Fprintf(tw, "file:\t%s\n", r.File)
	fmt.Fprintf(tw, "kind:\t%s\n", r.Kind)
	fmt.Fprintf(tw, "seed:\t%d\n", r.Seed)
	fmt.Fprintf(tw, "memory:\t%d bits (%s)\n", r.Bits, humanBytes(math.Ceil(float64(r.Bits)/8)))
	fmt.Fprintf(tw, "keys added:\t%d\n", r.Keys)
	fmt.Fprintf(tw, "capacity:\t%s\n", capacity)
	fmt.Fprintf(tw, "bits per key:\t%s\n", formatPtr(r.BitsPerKey))
	fmt.Fprintf(tw, "fpr of the state:\t%s\t(%s)\n", formatPtr(r.FPR), r.FPRMethod)
	for _, fd := range r.Fields {
		mark := ""
		if fd.Warn {
			mark = "warning: "
		}
		fmt.Fprintf(tw, "%s:\t%s%s", fd.Name, mark, formatValue(fd.Value))
		if fd.Note != "" {
			fmt.Fprintf(tw, "\t(%s)", fd.Note)
		}
		fmt.Fprintln(tw)
	}
	for _, w := range r.Warnings {
		fmt.Fprintf(tw, "warning:\t%s\n", w)
	}
	return tw.Flush()
}

// describeFilter collects what info shows: the contract's numbers and the
// kind's own description.
func describeFilter(path string, f bloomlab.Filter) infoReport {
	r := infoReport{
		File: path, Kind: f.Kind(), Seed: f.Seed(), Bits: f.Bits(), Keys: f.N(),
		Capacity: f.Capacity(), FPR: fptr(f.EstimatedFPR()), FPRMethod: "from the state",
	}
	if r.Keys > 0 {
		r.BitsPerKey = fptr(float64(r.Bits) / float64(r.Keys))
	}
	static := false
	if s, ok := kind.Lookup(f.Kind()); ok {
		if s.FPRMethod != "" {
			r.FPRMethod = s.FPRMethod
		}
		r.Fields = s.Describe(f)
		static = s.Static
	}
	// A static filter (fuse, ribbon) is built for exactly the keys it
	// holds: its rate does not depend on the -n it was planned for.
	r.Static = static
	if r.Capacity > 0 && r.Keys > r.Capacity && !static {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d keys added, more than the %d the filter was sized for: its rate is above the target it was built for", r.Keys, r.Capacity))
	}
	return r
}

// formatValue renders a description value: floats with 4 significant
// digits, everything else as Go prints it.
func formatValue(v any) string {
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return "-"
		}
		return strconv.FormatFloat(x, 'g', 4, 64)
	case float32:
		return formatValue(float64(x))
	case []float64:
		parts := make([]string, len(x))
		for i, f := range x {
			parts[i] = formatValue(f)
		}
		return "[" + strings.Join(parts, " ") + "]"
	case nil:
		return "-"
	}
	return fmt.Sprint(v)
}

func formatPtr(p *float64) string {
	if p == nil {
		return "-"
	}
	return formatValue(*p)
}

// humanBytes renders a byte count with a binary unit.
func humanBytes(b float64) string { return sysmem.FormatBytes(b) }
