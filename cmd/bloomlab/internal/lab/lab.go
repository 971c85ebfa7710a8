// Package lab is the machinery behind `bloomlab reproduce` and
// `bloomlab simulate`: it reproduces the papers' tables and figures with
// bloomlab's real structures, and runs any other configuration of the same
// machinery. It is the command's internals, not a library: researchers use
// the command and its JSON output (docs/LAB.md).
//
// An Experiment is a named, registered procedure that returns a Result: a
// list of rows, each with its parameters and its metrics. Every metric is
// the mean over independent trials with a 95% confidence interval, beside
// the value the paper prints (if any) and the value the theory predicts (if
// any), and says how it was obtained (Method). The command
// `bloomlab reproduce` runs experiments by name; `bloomlab simulate` runs a
// Simulator, which builds an experiment from command-line parameters. The
// papers' tables are named configurations of the simulators.
//
// Trials run in parallel on all cores (Config.workers) and are
// deterministic for a seed whatever the number of workers: trial i of row r
// draws its keys from trialSeed(seed, r, i), and results are combined in
// trial order.
//
// # Adding an experiment
//
// Write a function func(ctx context.Context, cfg Config) (*Result, error)
// that builds rowSpecs (parameters, metric definitions and a trial
// function) and hands them to runRows, then register it from an init
// function:
//
//	func init() {
//		register(Experiment{Name: "paper/table", Paper: "002 §3", Summary: "…", Run: runTable})
//	}
//
// Write the experiments of one paper in a file named after the paper
// (notes.go, lesshashing.go) and document them in docs/LAB.md.
//
// # Adding a simulate kind
//
// Implement Simulator (a kind name, a one-line summary and a function that
// registers the kind's flags and returns the experiment they configure) and
// call registerSimulator from an init function; see bloomSimulator.
package lab

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"sort"
	"sync"

	"github.com/bloomlab/bloomlab/internal/kind"
)

// Config controls one run of an experiment.
type Config struct {
	// Seed makes the run reproducible: the same seed gives the same output
	// whatever the number of workers.
	Seed uint64
	// Trials overrides the experiment's number of trials per row (0: the
	// experiment's default, reduced under Quick).
	Trials int
	// Quick asks for a reduced run: fewer trials and parameter points, for
	// smoke tests and CI. Every experiment's quick run takes seconds.
	Quick bool
	// workers is the number of goroutines running trials (0: GOMAXPROCS).
	workers int
	// memory is the machine's memory for the check of runRows (0:
	// sysmem.Limit()); tests set it.
	memory uint64
	// Progress, if not nil, is called from time to time (about 200 times
	// per run, and once when the last trial is done) with the state of the
	// run. It must be safe for concurrent use.
	Progress func(RunProgress)
}

// RunProgress is the state of a run that Config.Progress receives.
type RunProgress struct {
	// Done and Total are the trials done and the trials of the run.
	Done, Total int
	// Row is the row of the trial just done (0-based), Rows the run's
	// number of rows.
	Row, Rows int
	// Params are that row's parameters, "c=16 n=50000 scheme=double".
	Params string
}

// trials returns cfg.Trials if set, else quick under Quick and full
// otherwise.
func (cfg Config) trials(full, quick int) int {
	switch {
	case cfg.Trials > 0:
		return cfg.Trials
	case cfg.Quick:
		return quick
	}
	return full
}

// Experiment is a named reproduction.
type Experiment struct {
	// Name is "paper/item", for example "notes/k-table".
	Name string
	// Paper names the source: paper number and section, e.g. "003 §3".
	Paper string
	// Summary is one line for `bloomlab experiments`.
	Summary string
	// Run performs the experiment.
	Run func(ctx context.Context, cfg Config) (*Result, error)
}

var (
	regMu       sync.Mutex
	experiments = map[string]Experiment{}
	simulators  = map[string]Simulator{}
)

// register adds e to the registry. It panics if the name is empty, taken or
// e.Run is nil: registration happens in init functions, where that is a
// programming error.
func register(e Experiment) {
	regMu.Lock()
	defer regMu.Unlock()
	if e.Name == "" || e.Run == nil {
		panic("lab: register: experiment needs a Name and a Run function")
	}
	if _, dup := experiments[e.Name]; dup {
		panic("lab: register: duplicate experiment " + e.Name)
	}
	experiments[e.Name] = e
}

// Experiments returns the registered experiments sorted by name.
func Experiments() []Experiment { return sorted(experiments) }

// sorted returns the values of a registry in the order of their names.
func sorted[T any](m map[string]T) []T {
	regMu.Lock()
	defer regMu.Unlock()
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Strings(names)
	out := make([]T, len(names))
	for i, name := range names {
		out[i] = m[name]
	}
	return out
}

// lookup returns the value registered under name, wrapping errUnknown in
// an error naming what if there is none.
func lookup[T any](m map[string]T, what, name string) (T, error) {
	regMu.Lock()
	v, ok := m[name]
	regMu.Unlock()
	if !ok {
		return v, fmt.Errorf("lab: %s %q: %w", what, name, errUnknown)
	}
	return v, nil
}

// errUnknown is wrapped by the error for an unknown experiment or simulate
// kind.
var errUnknown = errors.New("unknown")

// Lookup returns the experiment with the given name.
func Lookup(name string) (Experiment, error) { return lookup(experiments, "experiment", name) }

// Simulator is a simulate kind: a family of experiments configured by
// command-line parameters.
type Simulator interface {
	// Kind is the name given to `bloomlab simulate`, e.g. "bloom".
	Kind() string
	// Summary is one line for help output.
	Summary() string
	// Flags registers the kind's parameters on fs and returns the function
	// that runs the experiment they describe, to be called after fs.Parse.
	// It returns an error wrapping ErrParam for invalid parameters.
	Flags(fs *flag.FlagSet) func(ctx context.Context, cfg Config) (*Result, error)
}

// paramErr makes err, a structure package's error about a parameter, a
// lab parameter error: prefix, then err, wrapping ErrParam once (the
// packages' errors already wrap the same kind.ErrParam).
func paramErr(prefix string, err error) error {
	if errors.Is(err, ErrParam) {
		return fmt.Errorf("%s%w", prefix, err)
	}
	return fmt.Errorf("%s%w: %w", prefix, err, ErrParam)
}

// ErrParam is wrapped by errors about invalid experiment parameters.
var ErrParam = kind.ErrParam

// registerSimulator adds s to the simulate kinds; it panics on a duplicate.
func registerSimulator(s Simulator) {
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := simulators[s.Kind()]; dup {
		panic("lab: registerSimulator: duplicate kind " + s.Kind())
	}
	simulators[s.Kind()] = s
}

// Simulators returns the simulate kinds sorted by name.
func Simulators() []Simulator { return sorted(simulators) }

// LookupSimulator returns the simulate kind with the given name.
func LookupSimulator(kind string) (Simulator, error) {
	return lookup(simulators, "simulate kind", kind)
}
