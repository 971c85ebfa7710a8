package lab

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
)

// How a metric's measured value was obtained (metric.Method).
const (
	// methodQueries: the fraction of queries for absent keys answered
	// "present", averaged over trials.
	methodQueries = "queries"
	// methodState: computed from the structure's exact state after the
	// inserts (for a Bloom filter, the product of the probed fractions of
	// ones, fill^k), averaged over trials. Used where rates are too small to
	// observe by querying.
	methodState = "state"
	// methodCount: a count of the structure's state (e.g. the fraction of
	// bits set), averaged over trials.
	methodCount = "count"
	// methodExact: a deterministic computation on one structure (one
	// trial); its confidence interval is the value itself.
	methodExact = "exact"
)

// Result is the outcome of one experiment run. Write renders it; the
// command reads only its Plots.
type Result struct {
	// Plots are figures; `bloomlab reproduce -plot DIR` writes each as SVG.
	Plots []Plot

	experiment string      // the experiment's name (or "simulate/KIND")
	seed       uint64      // the seed the run used
	rows       []resultRow // the table's rows, in order
	notes      []string    // remarks printed after the table (deviations, conventions)
}

// resultRow is one parameter point.
type resultRow struct {
	Params  paramList
	Trials  int
	Metrics []metric
}

// param is one named parameter of a row; Value is a string, an integer or
// a float64.
type param struct {
	Name  string
	Value any
}

// paramList is an ordered list of parameters; it encodes as a JSON object with
// the keys in order.
type paramList []param

// get returns the value of the named parameter, or nil.
func (ps paramList) get(name string) any {
	for _, p := range ps {
		if p.Name == name {
			return p.Value
		}
	}
	return nil
}

// String renders ps as "name=value name=value …".
func (ps paramList) String() string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.Name + "=" + formatValue(p.Value)
	}
	return strings.Join(s, " ")
}

// MarshalJSON encodes ps as an object whose keys keep their order.
func (ps paramList) MarshalJSON() ([]byte, error) {
	return jsonObject(len(ps), func(i int) (string, any) { return ps[i].Name, jsonValue(ps[i].Value) })
}

// jsonObject encodes n entries as a JSON object whose keys keep the order
// of kv(0), kv(1), ….
func jsonObject(n int, kv func(i int) (key string, value any)) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		key, value := kv(i)
		k, err := json.Marshal(key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// jsonValue maps non-finite floats (which JSON cannot hold) to null.
func jsonValue(v any) any {
	if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
		return nil
	}
	return v
}

// metric is one measured quantity of a row.
type metric struct {
	// Name: "fpr" (false-positive rate), "ones" (fraction of bits set),
	// "fpr_state" (false-positive rate computed from the state), …
	Name string
	// Paper is the value the paper prints, nil if it prints none.
	Paper *float64
	// PaperTol is the paper's rounding: half a unit of its last printed
	// digit (0.00005 for 4 decimals). A row is flagged only when the paper
	// value is further than both PaperTol and the CI half-width from the
	// measured mean.
	PaperTol float64
	// Predicted is the theory's value, nil if there is none.
	Predicted *float64
	// Measured is the mean over the trials.
	Measured float64
	// CI95 is the 95% confidence interval of the mean.
	CI95 [2]float64
	// Method says how Measured was obtained (methodQueries, …).
	Method string
	// Spread: Min and Max, the smallest and largest value over the trials,
	// are reported (metricSpec.Spread).
	Spread   bool
	Min, Max float64
	// Explanation, if not empty, says why the paper value and the
	// measurement differ, or which reading of the paper the metric follows
	// (a typo, the rounding of the paper's own mean, an unstated procedure).
	// The text output prints it as a numbered footnote after the table and
	// marks the metric's line with the footnote number; JSON carries it as
	// "explanation". Every metric flagged in a full run carries one.
	Explanation string
}

// hasSpread reports whether some metric of r reports its trials' minimum
// and maximum: its text table then has the columns min and max.
func (r *Result) hasSpread() bool {
	for _, row := range r.rows {
		for _, m := range row.Metrics {
			if m.Spread {
				return true
			}
		}
	}
	return false
}

// flagged reports whether the paper value disagrees with the measurement:
// |paper − measured| exceeds both the CI half-width and PaperTol.
func (m metric) flagged() bool {
	if m.Paper == nil {
		return false
	}
	d := math.Abs(*m.Paper - m.Measured)
	half := (m.CI95[1] - m.CI95[0]) / 2
	return d > half && d > m.PaperTol
}

// flagged returns the number of flagged metrics in r.
func (r *Result) flagged() int {
	c := 0
	for _, row := range r.rows {
		for _, m := range row.Metrics {
			if m.flagged() {
				c++
			}
		}
	}
	return c
}

// paperValues returns the number of metrics in r with a paper value.
func (r *Result) paperValues() int {
	c := 0
	for _, row := range r.rows {
		for _, m := range row.Metrics {
			if m.Paper != nil {
				c++
			}
		}
	}
	return c
}

// fptr returns a pointer to x, for metric.Paper and metric.Predicted.
func fptr(x float64) *float64 { return &x }
