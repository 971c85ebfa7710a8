package lab

import (
	"context"
	"errors"
	"flag"
	"io"
	"runtime"
	"strings"
	"testing"
)

// TestMemoryRefused: a configuration whose trials need more than the
// machine's memory (here set to 1 GiB) is refused with an error wrapping
// ErrParam that says what the run would need, before anything of that size
// is allocated. Before, `simulate bloom -n 1e12` ended the process with a
// fatal out-of-memory error.
func TestMemoryRefused(t *testing.T) {
	const gib = 1 << 30
	for _, c := range []struct {
		sim  Simulator
		args []string
		need uint64 // bytes per worker, at least
	}{
		{bloomSimulator{}, []string{"-n", "1e9", "-c", "32", "-k", "1"}, 4 * gib},
		{choicesSimulator{}, []string{"-n", "1e6", "-m", "34359738368", "-k", "1"}, 4 * gib},
		{choicesSimulator{}, []string{"-n", "1e8", "-m", "1e6", "-k", "4", "-rounds", "2"}, 4 * gib},
		{dleftSimulator{}, []string{"-n", "2e9", "-load", "4", "-queries", "0"}, 4 * gib},
		{dleftSimulator{}, []string{"-n", "2e8", "-load", "4", "-rounds", "1"}, 4 * gib},
		{dlcbfSimulator{}, []string{"-variant", "static", "-buckets", "1073741824", "-n", "1000"}, 4 * gib},
	} {
		args := c.args
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		run := c.sim.Flags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatalf("%s %v: %v", c.sim.Kind(), args, err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := run(context.Background(), Config{Trials: 1, workers: 2, memory: gib})
		runtime.ReadMemStats(&after)
		if !errors.Is(err, ErrParam) || !strings.Contains(err.Error(), "the run needs") || !strings.Contains(err.Error(), "× 2 workers") {
			t.Errorf("simulate %s %v: %v, want a refusal saying what it needs", c.sim.Kind(), args, err)
			continue
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > c.need/16 {
			t.Errorf("simulate %s %v: allocated %d bytes before refusing", c.sim.Kind(), args, grew)
		}
	}
}

// TestCheckMemory: the workers' states add up, with the trial values.
func TestCheckMemory(t *testing.T) {
	specs := []rowSpec{{Bytes: 1 << 20, Params: paramList{{"n", 1}}}, {Bytes: 1 << 30, Params: paramList{{"n", 2}}}}
	cfg := Config{memory: 3 << 30}
	if err := checkMemory(cfg, "x", 2, specs, 0); err != nil {
		t.Errorf("2 workers × 1 GiB in 3 GiB: %v", err)
	}
	err := checkMemory(cfg, "x", 4, specs, 0)
	want := "lab: x: the run needs 4 GiB of memory, more than the 3 GiB this process may use: 1 GiB per worker (row n=2) × 4 workers, and 0 B of trial values"
	if !errors.Is(err, ErrParam) || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("4 workers × 1 GiB in 3 GiB: %v, want %q", err, want)
	}
	if err := checkMemory(cfg, "x", 2, specs, 1<<27); err != nil {
		t.Errorf("2 GiB of states and 1 GiB of trial values in 3 GiB: %v", err)
	}
	if err := checkMemory(cfg, "x", 2, specs, 1<<27+1); err == nil {
		t.Error("2 GiB of states and 1 GiB + 8 B of trial values fit in 3 GiB")
	}
}
