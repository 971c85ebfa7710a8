package lab

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Formats accepted by Write.
var Formats = []string{"text", "csv", "json"}

// Write writes results in the given format ("text", "csv" or "json"). JSON
// writes one object for one result and an array for several.
func Write(w io.Writer, format string, results ...*Result) error {
	switch format {
	case "text":
		for i, r := range results {
			if i > 0 {
				if _, err := io.WriteString(w, "\n"); err != nil {
					return err
				}
			}
			if err := WriteText(w, r); err != nil {
				return err
			}
		}
		return nil
	case "csv":
		return writeCSV(w, results...)
	case "json":
		var v any = results
		if len(results) == 1 {
			v = results[0]
		}
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		b = append(b, '\n')
		_, err = w.Write(b)
		return err
	}
	return fmt.Errorf("lab: unknown format %q (want text, csv or json): %w", format, ErrParam)
}

// MarshalJSON encodes r in the schema of docs/LAB.md.
func (r *Result) MarshalJSON() ([]byte, error) {
	type row struct {
		Params  paramList  `json:"params"`
		Trials  int        `json:"trials"`
		Metrics metricList `json:"metrics"`
	}
	out := struct {
		Experiment string   `json:"experiment"`
		Seed       uint64   `json:"seed"`
		Rows       []row    `json:"rows"`
		Flagged    int      `json:"flagged"`
		Notes      []string `json:"notes,omitempty"`
	}{Experiment: r.experiment, Seed: r.seed, Rows: []row{}, Flagged: r.flagged(), Notes: r.notes}
	for _, rw := range r.rows {
		ps := rw.Params
		if ps == nil {
			ps = paramList{}
		}
		out.Rows = append(out.Rows, row{Params: ps, Trials: rw.Trials, Metrics: metricList(rw.Metrics)})
	}
	return json.Marshal(out)
}

type metricList []metric

func (ms metricList) MarshalJSON() ([]byte, error) {
	type value struct {
		Paper     any    `json:"paper"`
		Predicted any    `json:"predicted"`
		Measured  any    `json:"measured"`
		CI95      [2]any `json:"ci95"`
		Min       any    `json:"min,omitempty"`
		Max       any    `json:"max,omitempty"`
		Method    string `json:"method"`
		Flagged   bool   `json:"flagged"`
		Explain   string `json:"explanation,omitempty"`
	}
	return jsonObject(len(ms), func(i int) (string, any) {
		m := ms[i]
		v := value{Paper: ptrValue(m.Paper), Predicted: ptrValue(m.Predicted), Measured: jsonValue(m.Measured),
			CI95: [2]any{jsonValue(m.CI95[0]), jsonValue(m.CI95[1])}, Method: m.Method, Flagged: m.flagged(),
			Explain: m.Explanation}
		if m.Spread {
			v.Min, v.Max = jsonValue(m.Min), jsonValue(m.Max)
		}
		return m.Name, v
	})
}

func ptrValue(p *float64) any {
	if p == nil {
		return nil
	}
	return jsonValue(*p)
}

// formatValue renders a parameter value for text and CSV.
func formatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "-"
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	return fmt.Sprint(v)
}

// fmtNum renders a measured or predicted number with 6 significant digits.
func fmtNum(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return strconv.FormatFloat(x, 'g', 6, 64)
}

func fmtPtr(p *float64, exact bool) string {
	if p == nil {
		return "-"
	}
	if exact {
		return strconv.FormatFloat(*p, 'g', -1, 64)
	}
	return fmtNum(*p)
}

// paramNames returns the union of the rows' parameter names in order of
// first appearance.
func paramNames(rows []resultRow) []string {
	var names []string
	seen := map[string]bool{}
	for _, r := range rows {
		for _, p := range r.Params {
			if !seen[p.Name] {
				seen[p.Name] = true
				names = append(names, p.Name)
			}
		}
	}
	return names
}

// WriteText writes r as an aligned table: one line per metric, the row's
// parameters on its first line, paper / predicted / measured / CI side by
// side, and FLAG where the paper value disagrees with the measurement
// (metric.flagged). A result with a metric that reports its spread has the
// columns min and max after ci95: the smallest and largest trial value
// ("-" for the other metrics). A metric with an Explanation gets a
// footnote marker [n] in the last column ("FLAG [n]" when flagged) and the
// footnote "[n] text" after the flag count.
func WriteText(w io.Writer, r *Result) error {
	foot := footnotes(r)
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s (seed %d)\n", r.experiment, r.seed)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	names := paramNames(r.rows)
	spread := r.hasSpread()
	head := append(append([]string{}, names...), "trials", "metric", "paper", "predicted", "measured", "ci95")
	if spread {
		head = append(head, "min", "max")
	}
	head = append(head, "method", "")
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, row := range r.rows {
		for j, m := range row.Metrics {
			cells := make([]string, 0, len(head))
			for _, n := range names {
				if j == 0 {
					cells = append(cells, formatValue(row.Params.get(n)))
				} else {
					cells = append(cells, "")
				}
			}
			trials := ""
			if j == 0 {
				trials = strconv.Itoa(row.Trials)
			}
			flag := ""
			if m.flagged() {
				flag = "FLAG"
			}
			if m.Explanation != "" {
				flag = strings.TrimSpace(flag + fmt.Sprintf(" [%d]", foot.number[m.Explanation]))
			}
			ci := fmt.Sprintf("[%s, %s]", fmtNum(m.CI95[0]), fmtNum(m.CI95[1]))
			cells = append(cells, trials, m.Name, fmtPtr(m.Paper, true), fmtPtr(m.Predicted, false),
				fmtNum(m.Measured), ci)
			if spread {
				lo, hi := "-", "-"
				if m.Spread {
					lo, hi = fmtNum(m.Min), fmtNum(m.Max)
				}
				cells = append(cells, lo, hi)
			}
			cells = append(cells, m.Method, flag)
			fmt.Fprintln(tw, strings.TrimRight(strings.Join(cells, "\t"), "\t"))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// tabwriter pads cells before an empty last cell: trim line ends.
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	var out strings.Builder
	for _, l := range lines {
		out.WriteString(strings.TrimRight(l, " "))
		out.WriteByte('\n')
	}
	if pv := r.paperValues(); pv > 0 {
		fmt.Fprintf(&out, "flagged: %d of %d paper values (|paper − measured| > max(CI half-width, paper rounding))\n", r.flagged(), pv)
	}
	for i, t := range foot.texts {
		fmt.Fprintf(&out, "[%d] %s\n", i+1, t)
	}
	for _, n := range r.notes {
		fmt.Fprintf(&out, "note: %s\n", n)
	}
	_, err := io.WriteString(w, out.String())
	return err
}

// writeCSV writes the results as one CSV table with a header line: the
// experiment, the union of the parameter names, then one line per metric.
func writeCSV(w io.Writer, results ...*Result) error {
	var all []resultRow
	for _, r := range results {
		all = append(all, r.rows...)
	}
	names := paramNames(all)
	spread := false
	for _, r := range results {
		spread = spread || r.hasSpread()
	}
	cw := csv.NewWriter(w)
	head := append(append([]string{"experiment", "seed"}, names...), "trials", "metric", "paper", "predicted", "measured", "ci95_lo", "ci95_hi")
	if spread {
		head = append(head, "min", "max") // empty for metrics without spread
	}
	head = append(head, "method", "flagged")
	if err := cw.Write(head); err != nil {
		return err
	}
	full := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	ptr := func(p *float64) string {
		if p == nil {
			return ""
		}
		return full(*p)
	}
	for _, r := range results {
		for _, row := range r.rows {
			for _, m := range row.Metrics {
				rec := []string{r.experiment, strconv.FormatUint(r.seed, 10)}
				for _, n := range names {
					v := row.Params.get(n)
					if v == nil {
						rec = append(rec, "")
					} else {
						rec = append(rec, formatValue(v))
					}
				}
				rec = append(rec, strconv.Itoa(row.Trials), m.Name, ptr(m.Paper), ptr(m.Predicted),
					full(m.Measured), full(m.CI95[0]), full(m.CI95[1]))
				if spread {
					lo, hi := "", ""
					if m.Spread {
						lo, hi = full(m.Min), full(m.Max)
					}
					rec = append(rec, lo, hi)
				}
				rec = append(rec, m.Method, strconv.FormatBool(m.flagged()))
				if err := cw.Write(rec); err != nil {
					return err
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// footnoteList numbers the distinct explanations of a result in order of
// first appearance.
type footnoteList struct {
	texts  []string
	number map[string]int // text → footnote number (from 1)
}

func footnotes(r *Result) footnoteList {
	f := footnoteList{number: map[string]int{}}
	for _, row := range r.rows {
		for _, m := range row.Metrics {
			if m.Explanation != "" && f.number[m.Explanation] == 0 {
				f.texts = append(f.texts, m.Explanation)
				f.number[m.Explanation] = len(f.texts)
			}
		}
	}
	return f
}
