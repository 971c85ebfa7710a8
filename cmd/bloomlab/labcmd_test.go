package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bloomlab/bloomlab/internal/sysmem"
)

// labGoldenCases are the lab commands' cases beyond goldenCases: count
// flags refuse what they used to coerce, naming the flag and its range.
var labGoldenCases = []struct {
	name string
	args []string
	code int
}{
	{"usage_simulate_queries", []string{"simulate", "bloom", "-queries", "-5"}, 2},
	{"usage_simulate_fraction", []string{"simulate", "dleft", "-n", "2.5"}, 2},
	{"usage_reproduce_trials", []string{"reproduce", "notes/example", "-trials", "0"}, 2},
}

func TestLabGolden(t *testing.T) {
	for _, tc := range labGoldenCases {
		t.Run(tc.name, func(t *testing.T) {
			o, e, code := invoke(tc.args, "")
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstderr: %s", code, tc.code, e)
			}
			got := fmt.Sprintf("$ bloomlab %s\n-- stdout --\n%s-- stderr --\n%s-- exit %d --\n", strings.Join(tc.args, " "), o, e, code)
			checkGolden(t, tc.name, got)
		})
	}
}

// TestLabCountNotation: counts take scientific notation.
func TestLabCountNotation(t *testing.T) {
	o, e, code := invoke([]string{"simulate", "bloom", "-n", "2e3", "-m", "2e4", "-trials", "3e0", "-seed", "5"}, "")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	if !strings.Contains(o, "2000  20000  7  independent  1221     3") {
		t.Errorf("-n 2e3 -m 2e4 -trials 3e0 is not -n 2000 -m 20000 -trials 3:\n%s", o)
	}
}

// TestLabMemoryRefused: a simulation larger than the machine is a usage
// error saying what it would need, not a fatal out-of-memory error (which
// `simulate bloom -n 1e12 -trials 1` used to be).
func TestLabMemoryRefused(t *testing.T) {
	// -n 3e13 -c 8: a filter of 2.4e14 bits, 30 TB per worker.
	if have := sysmem.Physical(); have == 0 || have >= 30e12 {
		t.Skipf("machine memory %d unknown or above 30 TB", have)
	}
	_, e, code := invoke([]string{"simulate", "bloom", "-n", "3e13", "-k", "1", "-trials", "1"}, "")
	if code != 2 || !strings.HasPrefix(e, "bloomlab simulate: simulate/bloom: the run needs ") || !strings.Contains(e, "more than this machine's") {
		t.Errorf("exit %d, stderr %q", code, e)
	}
}
