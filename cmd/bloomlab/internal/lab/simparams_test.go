package lab

import (
	"context"
	"errors"
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/bloomlab/bloomlab/hashing"
)

// Regression tests for the simulate parameter defects a hostile review
// found (h18). Each failed before its fix.

// The default k of simulate bloom is the optimal k capped at the largest
// k a filter takes: at m/n = 1000 the optimum 693 was refused with an
// error about a k the user never gave.
func TestBloomDefaultKCapped(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	run := bloomSimulator{}.Flags(fs)
	if err := fs.Parse([]string{"-n", "10", "-c", "1000", "-queries", "0"}); err != nil {
		t.Fatal(err)
	}
	r, err := run(context.Background(), Config{Seed: 1, Trials: 1})
	if err != nil {
		t.Fatalf("-n 10 -c 1000: %v", err)
	}
	if k := r.rows[0].Params.get("k"); k != hashing.MaxK {
		t.Errorf("k = %v, want %d (the optimum capped)", k, hashing.MaxK)
	}
}

// Parameter errors read once: no doubled "invalid parameter" or package
// prefix, no number produced by an overflowing conversion, and a range
// where a value is out of one.
func TestSimulateErrorMessages(t *testing.T) {
	for _, c := range []struct {
		sim        Simulator
		args       []string
		want, nope string
	}{
		{choicesSimulator{}, []string{"-scheme", "partition"}, "not allowed", ""},
		{dleftSimulator{}, []string{"-group", "3"}, "Group = 3", ""},
		{dlcbfSimulator{}, []string{"-variant", "dynamic", "-bucket-bits", "1"}, "BucketBits = 1", "dlcbf: dlcbf:"},
		{dlcbfSimulator{}, []string{"-variant", "foo"}, "unknown variant", ""},
		{dleftSimulator{}, []string{"-load", "1e-300"}, "-load", "9223372036854775808"},
		{dleftSimulator{}, []string{"-load", "1e-9"}, "-load", ""},
		{bloomSimulator{}, []string{"-n", "281474976710656"}, "2^48", ""},
		{choicesSimulator{}, []string{"-n", "1e9", "-bits-per-key", "1e6"}, "2^48", ""},
	} {
		ok, err := refused(c.sim, c.args...)
		if !ok || err == nil {
			t.Errorf("%s %v: not refused (%v)", c.sim.Kind(), c.args, err)
			continue
		}
		msg := err.Error()
		if n := strings.Count(msg, ErrParam.Error()); n != 1 {
			t.Errorf("%s %v: %q says %q %d times", c.sim.Kind(), c.args, msg, ErrParam.Error(), n)
		}
		if !strings.Contains(msg, c.want) || c.nope != "" && strings.Contains(msg, c.nope) {
			t.Errorf("%s %v: %q, want it to contain %q and not %q", c.sim.Kind(), c.args, msg, c.want, c.nope)
		}
	}
}

// simulate dlcbf refuses -bucket-bits for the static variant, whose
// buckets are cells·(r+c) bits: it used to ignore it in silence.
func TestDlcbfStaticBucketBitsRefused(t *testing.T) {
	fs := flag.NewFlagSet("dlcbf", flag.ContinueOnError)
	run := dlcbfSimulator{}.Flags(fs)
	if err := fs.Parse([]string{"-variant", "static", "-bucket-bits", "100", "-n", "100", "-churn", "0", "-queries", "0"}); err != nil {
		t.Fatal(err)
	}
	_, err := run(context.Background(), Config{Seed: 1, Trials: 1})
	if !errors.Is(err, ErrParam) || !strings.Contains(err.Error(), "-bucket-bits") {
		t.Fatalf("static with -bucket-bits: %v; want ErrParam naming -bucket-bits", err)
	}
}
