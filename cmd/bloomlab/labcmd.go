package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/bloomlab/bloomlab/cmd/bloomlab/internal/lab"
	"github.com/bloomlab/bloomlab/internal/flagx"
)

func init() {
	register(&command{
		name:    "experiments",
		summary: "List the named experiments that reproduce the papers' results, one per line, and the simulate kinds.",
		usage:   "bloomlab experiments",
		run:     runExperiments,
	})
	register(&command{
		name: "reproduce",
		summary: "Run a named experiment (or all) and print paper / predicted / measured / 95% CI side by side, flagging rows " +
			"whose paper value disagrees with the measurement; all ends with a summary (experiments, paper values compared, " +
			"flagged, time). -quick runs a reduced version, whose flags are hints, not verdicts; -plot DIR writes the figures as SVG.",
		usage: "bloomlab reproduce NAME|all [-trials T] [-quick] [-seed S] [-format text|csv|json] [-plot DIR] [-markdown FILE]",
		run:   runReproduce,
	})
	register(&command{
		name: "simulate",
		summary: "Run any configuration of the experiment machinery. Kinds and their parameters: " +
			"'bloomlab simulate KIND -h'. The papers' tables are named configurations of simulate.",
		usage: "bloomlab simulate KIND [parameters] [-trials T] [-seed S] [-quick] [-format text|csv|json]",
		run:   runSimulate,
	})
}

func runExperiments(e *env, args []string) error {
	fs := flagSet("experiments")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	for _, x := range lab.Experiments() {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", x.Name, x.Paper, x.Summary)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var kinds []string
	for _, s := range lab.Simulators() {
		kinds = append(kinds, s.Kind())
	}
	_, err = fmt.Fprintf(e.stdout, "\nsimulate kinds: %s\n", strings.Join(kinds, ", "))
	return err
}

// commonLabFlags are the flags reproduce and simulate share.
type commonLabFlags struct {
	trials *flagx.Count
	quick  *bool
	seed   *seedFlag
	format *string
}

// seedFlag is -seed: any 64-bit value, written in decimal, in the 1e6
// notation of the count flags, or in hexadecimal with 0x; its error names
// the range.
type seedFlag struct{ v uint64 }

func (s *seedFlag) String() string { return strconv.FormatUint(s.v, 10) }

func (s *seedFlag) Set(x string) error {
	t := strings.TrimSpace(x)
	if h, ok := strings.CutPrefix(strings.ToLower(t), "0x"); ok {
		v, err := strconv.ParseUint(h, 16, 64)
		if err != nil {
			return fmt.Errorf("want an integer in [0, 2^64 − 1] (decimal, 1e6 notation or 0x hex)")
		}
		s.v = v
		return nil
	}
	v, err := flagx.ParseCount(t)
	if err != nil {
		return fmt.Errorf("want an integer in [0, 2^64 − 1] (decimal, 1e6 notation or 0x hex): %v", err)
	}
	s.v = v
	return nil
}

func newSeedFlag(fs *flag.FlagSet) *seedFlag {
	s := &seedFlag{v: 1}
	fs.Var(s, "seed", "seed (a `number`: decimal, 1e6 notation or 0x hex); the same seed gives the same output on any number of cores")
	return s
}

func addLabFlags(fs *flag.FlagSet) commonLabFlags {
	return commonLabFlags{
		trials: lab.CountFlag(fs, "trials", 0, 1, lab.MaxTrials, "trials per row (a `count`; default: the experiment's)"),
		quick:  fs.Bool("quick", false, "reduced run: fewer trials and points"),
		seed:   newSeedFlag(fs),
		format: fs.String("format", "text", "output format: text, csv or json"),
	}
}

// config returns the lab configuration of the flags and, when standard
// error is a terminal, the progress line its runs draw there (nil
// otherwise: pipes and files stay quiet).
func (c commonLabFlags) config(e *env, label string) (lab.Config, *progressLine, error) {
	if !slices.Contains(lab.Formats, *c.format) {
		return lab.Config{}, nil, usagef("unknown -format %q (want text, csv or json)", *c.format)
	}
	cfg := lab.Config{Seed: c.seed.v, Trials: int(c.trials.V), Quick: *c.quick}
	var pl *progressLine
	if isTerminal(e.stderr) {
		pl = newProgressLine(e.stderr, label, time.Now)
		cfg.Progress = pl.update
	}
	return cfg, pl, nil
}

func runReproduce(e *env, args []string) error {
	fs := flagSet("reproduce")
	cf := addLabFlags(fs)
	plotDir := fs.String("plot", "", "directory to write the figures to (SVG)")
	mdPath := fs.String("markdown", "", "also write the text tables as a Markdown `file` headed by this command, the machine and the run times, linking the -plot figures (docs/RESULTS.md)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want one experiment NAME or all (see 'bloomlab experiments')")
	}
	var exps []lab.Experiment
	if pos[0] == "all" {
		exps = lab.Experiments()
	} else {
		x, err := lab.Lookup(pos[0])
		if err != nil {
			return usagef("unknown experiment %q (see 'bloomlab experiments')", pos[0])
		}
		exps = []lab.Experiment{x}
	}
	// Refuse unusable destinations now, not after a run of minutes.
	if *mdPath != "" {
		if err := checkWritable(*mdPath); err != nil {
			return err
		}
	}
	if *plotDir != "" {
		if err := checkDirWritable(*plotDir); err != nil {
			return fmt.Errorf("-plot %w", err)
		}
	}
	start := time.Now()
	var results []*lab.Result
	var timed []timedResult
	for i, x := range exps {
		label := x.Name
		if len(exps) > 1 {
			label = fmt.Sprintf("%s [%d/%d]", x.Name, i+1, len(exps))
		}
		cfg, pl, err := cf.config(e, label)
		if err != nil {
			return err
		}
		t0 := time.Now()
		res, err := x.Run(context.Background(), cfg)
		if pl != nil {
			pl.clear()
		}
		if err != nil {
			return err
		}
		timed = append(timed, timedResult{name: x.Name, paper: x.Paper, res: res, elapsed: time.Since(t0)})
		if *cf.format == "text" {
			// Print as we go: long runs show each table when it is done.
			if len(results) > 0 {
				fmt.Fprintln(e.stdout)
			}
			if err := lab.WriteText(e.stdout, res); err != nil {
				return err
			}
		}
		results = append(results, res)
	}
	sum := lab.Summarize(results, *cf.quick, time.Since(start))
	if err := writeReproduced(e.stdout, *cf.format, pos[0] == "all", results, sum); err != nil {
		return err
	}
	if *plotDir != "" {
		if err := writePlots(*plotDir, results); err != nil {
			return err
		}
	}
	if *mdPath != "" {
		command := "go run ./cmd/bloomlab reproduce " + shellJoin(args)
		return writeFileAtomic(*mdPath, func(w io.Writer) error {
			return writeMarkdown(w, *mdPath, command, timed, sum, *plotDir)
		})
	}
	return nil
}

// writeReproduced ends the output of reproduce (text results are printed
// as they come): for all, the summary line in text (after the tables) and
// {"results", "summary"} in JSON; otherwise the results in csv or json. A
// CSV is one table, without the summary.
func writeReproduced(w io.Writer, format string, all bool, results []*lab.Result, s lab.Summary) error {
	switch {
	case format == "text" && all:
		_, err := fmt.Fprintf(w, "\n%s\n", s)
		return err
	case format == "text":
		return nil
	case format == "json" && all:
		return lab.WriteReport(w, results, s)
	}
	return lab.Write(w, format, results...)
}

// writePlots writes every plot of the results to dir/NAME.svg.
func writePlots(dir string, results []*lab.Result) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, r := range results {
		for _, p := range r.Plots {
			path := filepath.Join(dir, p.Name+".svg")
			if err := writeFileAtomic(path, func(w io.Writer) error { return lab.WriteSVG(w, p) }); err != nil {
				return err
			}
		}
	}
	return nil
}

func runSimulate(e *env, args []string) error {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		return &helpRequest{fs: flagSet("simulate"), extra: func(w io.Writer) {
			fmt.Fprintf(w, "\nkinds: %s\n'bloomlab simulate KIND -h' lists a kind's parameters.\n", simKinds())
		}}
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return usagef("want a KIND first (one of %s)", simKinds())
	}
	sim, err := lab.LookupSimulator(args[0])
	if err != nil {
		return usagef("unknown kind %q (want one of %s)", args[0], simKinds())
	}
	fs := flagSet("simulate " + args[0])
	runSim := sim.Flags(fs)
	cf := addLabFlags(fs)
	if slices.Contains(args[1:], "-h") || slices.Contains(args[1:], "-help") || slices.Contains(args[1:], "--help") {
		fmt.Fprintf(e.stdout, "bloomlab simulate %s: %s\n\n", sim.Kind(), sim.Summary())
		fs.SetOutput(e.stdout)
		fs.PrintDefaults()
		return nil
	}
	pos, err := parseFlags(fs, args[1:])
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	cfg, pl, err := cf.config(e, "simulate "+sim.Kind())
	if err != nil {
		return err
	}
	res, err := runSim(context.Background(), cfg)
	if pl != nil {
		pl.clear()
	}
	if errors.Is(err, lab.ErrParam) {
		return usagef("%s", strings.TrimPrefix(err.Error(), "lab: "))
	}
	if err != nil {
		return err
	}
	return lab.Write(e.stdout, *cf.format, res)
}

func simKinds() string {
	var kinds []string
	for _, s := range lab.Simulators() {
		kinds = append(kinds, s.Kind())
	}
	return strings.Join(kinds, ", ")
}

// shellJoin joins args as a POSIX shell would read them back: an argument
// with a character outside [A-Za-z0-9_./:=,+@%-] (or an empty one) is
// single-quoted, so that the command a -markdown document quotes runs as
// written.
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		plain := a != ""
		for _, r := range a {
			if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune("_./:=,+@%-", r)) {
				plain = false
				break
			}
		}
		if plain {
			out[i] = a
		} else {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}
