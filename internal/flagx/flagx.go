// Package flagx holds the flag types the command and the lab share.
package flagx

import (
	"flag"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Count is a flag.Value for a number of things (keys, trials, queries): a
// non-negative integer written plainly (1000000, 1_000_000) or in
// scientific notation that names an integer exactly (1e6, 2.5e3). Negative,
// fractional and out-of-range values are errors, never coerced.
type Count struct {
	V     uint64
	Max   uint64 // 0: no bound beyond 2^64 − 1
	Given bool   // the flag was given
}

// NewCount defines a Count flag with the given default and bound.
func NewCount(fs *flag.FlagSet, name string, def, max uint64, usage string) *Count {
	c := &Count{V: def, Max: max}
	fs.Var(c, name, usage)
	return c
}

func (c *Count) String() string {
	if c == nil {
		return "0"
	}
	return strconv.FormatUint(c.V, 10)
}

// Set parses s.
func (c *Count) Set(s string) error {
	v, err := ParseCount(s)
	if err != nil {
		return err
	}
	if c.Max > 0 && v > c.Max {
		return fmt.Errorf("%s exceeds the limit %d", s, c.Max)
	}
	c.V, c.Given = v, true
	return nil
}

// ParseCount parses a count as Count.Set does.
func ParseCount(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("empty number")
	}
	if strings.HasPrefix(t, "-") {
		return 0, fmt.Errorf("%s is negative; want a count ≥ 0", s)
	}
	if v, err := strconv.ParseUint(t, 10, 64); err == nil {
		return v, nil
	} else if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
		return 0, fmt.Errorf("%s exceeds 2^64 − 1", s)
	}
	if v, err := strconv.ParseUint(strings.ReplaceAll(t, "_", ""), 10, 64); err == nil && !strings.Contains(t, "__") && !strings.HasPrefix(t, "_") && !strings.HasSuffix(t, "_") {
		return v, nil
	}
	// Scientific notation: bound the exponent before big.ParseFloat sees
	// it (1e-1000000000 would underflow to 0 and read as a whole number;
	// a count never needs more than 19 digits).
	if i := strings.IndexAny(t, "eE"); i >= 0 {
		exp, err := strconv.Atoi(strings.TrimPrefix(t[i+1:], "+"))
		mant := strings.Trim(strings.ReplaceAll(t[:i], ".", ""), "0")
		switch {
		case err != nil && mant == "":
			return 0, fmt.Errorf("%q is not a number (want an integer such as 1000000 or 1e6)", s)
		case err != nil || exp > 400:
			if mant != "" && (err == nil || !strings.HasPrefix(t[i+1:], "-")) {
				return 0, fmt.Errorf("%s exceeds 2^64 − 1", s)
			}
			if mant != "" {
				return 0, fmt.Errorf("%s is not a whole number", s)
			}
		case exp < -400 && mant != "":
			return 0, fmt.Errorf("%s is not a whole number", s)
		}
	}
	f, _, err := big.ParseFloat(t, 10, 256, big.ToNearestEven)
	if err != nil || f.IsInf() {
		return 0, fmt.Errorf("%q is not a number (want an integer such as 1000000 or 1e6)", s)
	}
	if !f.IsInt() {
		return 0, fmt.Errorf("%s is not a whole number", s)
	}
	if f.Cmp(new(big.Float).SetUint64(math.MaxUint64)) > 0 {
		return 0, fmt.Errorf("%s exceeds 2^64 − 1", s)
	}
	v, _ := f.Uint64()
	return v, nil
}
