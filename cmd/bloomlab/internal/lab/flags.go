package lab

import (
	"flag"
	"fmt"
	"math/bits"
	"strconv"
	"strings"

	"github.com/bloomlab/bloomlab/internal/flagx"
)

// Count-like flags (keys, trials, queries, bits, rounds …) parse with
// flagx.ParseCount: plain or scientific notation naming an integer (1e6),
// never negative or fractional. A value outside the flag's range is
// refused at parse time with the range, so the command reports a usage
// error naming the flag ("invalid value "-5" for flag -queries: want an
// integer in [0, 10000000]"), never a silent coercion.

// countFlag is a flagx.Count with a lower bound.
type countFlag struct {
	flagx.Count
	min uint64
}

// CountFlag defines a count flag on fs with default def and allowed range
// [lo, hi]. Its Given field tells whether the flag was set.
func CountFlag(fs *flag.FlagSet, name string, def, lo, hi uint64, usage string) *flagx.Count {
	c := &countFlag{Count: flagx.Count{V: def, Max: hi}, min: lo}
	fs.Var(c, name, usage)
	return &c.Count
}

// Set parses s, refusing values outside [min, Max].
func (c *countFlag) Set(s string) error {
	v, err := parseCountIn(s, c.min, c.Max)
	if err != nil {
		return err
	}
	c.V, c.Given = v, true
	return nil
}

// parseCountIn parses a count in [lo, hi]; its errors name the range.
func parseCountIn(s string, lo, hi uint64) (uint64, error) {
	t := strings.TrimSpace(s)
	v, err := flagx.ParseCount(t)
	switch {
	case strings.HasPrefix(t, "-") || err == nil && (v < lo || v > hi):
		return 0, fmt.Errorf("want an integer in %s", countRange(lo, hi))
	case err != nil:
		return 0, fmt.Errorf("%v; want an integer in %s", err, countRange(lo, hi))
	}
	return v, nil
}

// countRange renders [lo, hi], powers of two from 2^20 up as 2^k.
func countRange(lo, hi uint64) string {
	f := func(x uint64) string {
		if x >= 1<<20 && x&(x-1) == 0 {
			return fmt.Sprintf("2^%d", bits.TrailingZeros64(x))
		}
		return strconv.FormatUint(x, 10)
	}
	return "[" + f(lo) + ", " + f(hi) + "]"
}

// countList is a flag holding a comma-separated list of counts, each in
// [lo, hi].
type countList struct {
	v      []uint64
	lo, hi uint64
	given  bool
}

// countListFlag defines a count list flag; def is the default list ("" for
// none).
func countListFlag(fs *flag.FlagSet, name, def string, lo, hi uint64, usage string) *countList {
	l := &countList{lo: lo, hi: hi}
	if def != "" {
		if err := l.parse(def); err != nil {
			panic(fmt.Sprintf("lab: flag -%s: default %q: %v", name, def, err)) // a literal in the code
		}
	}
	fs.Var(l, name, usage)
	return l
}

func (l *countList) String() string {
	if l == nil {
		return ""
	}
	s := make([]string, len(l.v))
	for i, x := range l.v {
		s[i] = strconv.FormatUint(x, 10)
	}
	return strings.Join(s, ",")
}

// Set parses a comma-separated list, replacing the default.
func (l *countList) Set(s string) error {
	if err := l.parse(s); err != nil {
		return err
	}
	l.given = true
	return nil
}

func (l *countList) parse(s string) error {
	var out []uint64
	for _, f := range strings.Split(s, ",") {
		x, err := parseCountIn(f, l.lo, l.hi)
		if err != nil && strings.Contains(s, ",") {
			err = fmt.Errorf("%q: %w", strings.TrimSpace(f), err)
		}
		if err != nil {
			return err
		}
		out = append(out, x)
	}
	l.v = out
	return nil
}

// ints returns the list as ints (the ranges keep them within int).
func (l *countList) ints() []int {
	out := make([]int, len(l.v))
	for i, x := range l.v {
		out[i] = int(x)
	}
	return out
}
