package lab

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
)

func TestCountFlag(t *testing.T) {
	for _, c := range []struct {
		in   string
		want uint64
		err  string // "" if accepted
	}{
		{"1e6", 1_000_000, ""}, {"10000000", 10_000_000, ""}, {"2.5e3", 2500, ""}, {"1", 1, ""},
		{"-5", 0, "want an integer in [1, 10000000]"},
		{"0", 0, "want an integer in [1, 10000000]"},
		{"1e8", 0, "want an integer in [1, 10000000]"},
		{"1.5", 0, "1.5 is not a whole number; want an integer in [1, 10000000]"},
		{"x", 0, "want an integer in [1, 10000000]"},
	} {
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		v := CountFlag(fs, "trials", 7, 1, MaxTrials, "")
		err := fs.Parse([]string{"-trials", c.in})
		switch {
		case c.err == "" && (err != nil || v.V != c.want || !v.Given):
			t.Errorf("-trials %s: %v, V = %d, Given = %v", c.in, err, v.V, v.Given)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), "flag -trials: ") || !strings.Contains(err.Error(), c.err)):
			t.Errorf("-trials %s: error %v, want one naming -trials and %q", c.in, err, c.err)
		case c.err != "" && (v.V != 7 || v.Given):
			t.Errorf("-trials %s refused but changed the flag to %d", c.in, v.V)
		}
	}
}

func TestCountList(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	l := countListFlag(fs, "n", "10000", 1, 1<<48, "")
	if l.given || fmt.Sprint(l.ints()) != "[10000]" {
		t.Fatalf("default: %v given %v", l.ints(), l.given)
	}
	if err := fs.Parse([]string{"-n", "1e3, 2.5e3,7"}); err != nil || !l.given || fmt.Sprint(l.ints()) != "[1000 2500 7]" {
		t.Errorf("-n 1e3, 2.5e3,7: %v %v", l.ints(), err)
	}
	for in, want := range map[string]string{
		"5,-1":  `"-1": want an integer in [1, 2^48]`,
		"0":     `want an integer in [1, 2^48]`,
		"1,1.5": `"1.5": 1.5 is not a whole number; want an integer in [1, 2^48]`,
		"1,,2":  `"": empty number; want an integer in [1, 2^48]`,
	} {
		if err := fs.Parse([]string{"-n", in}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("-n %s: %v, want %q", in, err, want)
		}
	}
}

// TestSimulatorCountFlags: every numeric flag of every simulate kind but
// -seed and the real-valued ones is a count flag, which refuses negative
// and fractional values and values outside its range at parse time, and
// accepts scientific notation. Before, -queries -5 and -trials 0 were
// accepted and coerced.
func TestSimulatorCountFlags(t *testing.T) {
	for _, sim := range Simulators() {
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		sim.Flags(fs)
		fs.VisitAll(func(f *flag.Flag) {
			var lo, hi uint64
			switch v := f.Value.(type) {
			case *countFlag:
				lo, hi = v.min, v.Max
			case *countList:
				lo, hi = v.lo, v.hi
			default:
				if name := reflect.TypeOf(f.Value).String(); strings.Contains(name, "int") {
					t.Errorf("simulate %s -%s is a %s, not a count flag", sim.Kind(), f.Name, name)
				}
				return
			}
			parse := func(s string) error {
				fs := flag.NewFlagSet("x", flag.ContinueOnError)
				fs.SetOutput(io.Discard)
				sim.Flags(fs)
				return fs.Parse([]string{"-" + f.Name, s})
			}
			rng := countRange(lo, hi)
			for _, bad := range []string{"-5", "1.5", fmt.Sprint(hi) + "0"} {
				if err := parse(bad); err == nil || !strings.Contains(err.Error(), rng) {
					t.Errorf("simulate %s -%s %s: %v, want a refusal naming %s", sim.Kind(), f.Name, bad, err, rng)
				}
			}
			if lo > 0 {
				if err := parse(fmt.Sprint(lo - 1)); err == nil {
					t.Errorf("simulate %s -%s %d accepted below %s", sim.Kind(), f.Name, lo-1, rng)
				}
			}
			if err := parse(fmt.Sprintf("%de0", lo)); err != nil {
				t.Errorf("simulate %s -%s %de0: %v", sim.Kind(), f.Name, lo, err)
			}
		})
	}
}

// refused reports whether args are refused by sim, at parse time or by
// the run with an error wrapping ErrParam (both usage errors for the
// command).
func refused(sim Simulator, args ...string) (bool, error) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	run := sim.Flags(fs)
	if err := fs.Parse(args); err != nil {
		return true, err
	}
	_, err := run(context.Background(), Config{Trials: 1})
	return errors.Is(err, ErrParam), err
}

func TestSimulatorParamErrors(t *testing.T) {
	for _, c := range []struct {
		sim  Simulator
		args []string
	}{
		{bloomSimulator{}, []string{"-n", "0"}}, {bloomSimulator{}, []string{"-n", "x"}},
		{bloomSimulator{}, []string{"-m", "100", "-c", "8"}}, {bloomSimulator{}, []string{"-scheme", "nope"}},
		{bloomSimulator{}, []string{"-k", "65"}}, {bloomSimulator{}, []string{"-predict", "magic"}},
		{bloomSimulator{}, []string{"-c", "-1"}}, {bloomSimulator{}, []string{"-queries", "100000000"}},
		{bloomSimulator{}, []string{"-queries", "-5"}}, {bloomSimulator{}, []string{"-queries", "-1"}},
		{choicesSimulator{}, []string{"-n", "0"}}, {choicesSimulator{}, []string{"-m", "100", "-bits-per-key", "8"}},
		{choicesSimulator{}, []string{"-c", "9"}}, {choicesSimulator{}, []string{"-c", "0"}},
		{choicesSimulator{}, []string{"-k", "65"}}, {choicesSimulator{}, []string{"-rounds", "-1"}},
		{choicesSimulator{}, []string{"-rounds", "x"}}, {choicesSimulator{}, []string{"-scheme", "partition"}},
		{choicesSimulator{}, []string{"-scheme", "nope"}}, {choicesSimulator{}, []string{"-queries", "2000000"}},
		{choicesSimulator{}, []string{"-m", "0"}},
		{dleftSimulator{}, []string{"-bucket-bits", "96"}}, {dleftSimulator{}, []string{"-semisort", "2"}},
		{dleftSimulator{}, []string{"-load", "0"}}, {dleftSimulator{}, []string{"-group", "3"}},
		{dleftSimulator{}, []string{"-rounds", "2", "-group", "2"}},
		{dlcbfSimulator{}, []string{"-variant", "nope"}}, {dlcbfSimulator{}, []string{"-cells", "99"}},
		{dlcbfSimulator{}, []string{"-n", "0"}}, {dlcbfSimulator{}, []string{"-variant", "static", "-c", "0"}},
		{dlcbfSimulator{}, []string{"-ties", "right"}},
	} {
		if ok, err := refused(c.sim, c.args...); !ok {
			t.Errorf("simulate %s %v: err = %v, want a parse error or ErrParam", c.sim.Kind(), c.args, err)
		}
	}
}
