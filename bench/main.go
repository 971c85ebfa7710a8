// Command bench compares bloomlab's filters with other Go filter libraries in
// one process, on one pair of key sets: it prints every result as a benchstat
// line, then a table of each library's time relative to bloomlab's.
//
// Usage (from bench/):
//
//	go run . [-keys N] [-fpr 0.01,0.001] [-benchtime 1s] [-o results.txt]
//
// The same benchmarks run under go test -bench BenchmarkFilters. See
// README.md for what is measured and the caveats.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "bench:", err)
		}
		os.Exit(2)
	}
}

// runItem is one (library, target FPR) pair to measure.
type runItem struct {
	lib lib
	fpr float64
}

// runOrder lists the runs: every library with a chosen FPR at every target,
// then every fixed-FPR library once.
func runOrder(fprs []float64) []runItem {
	var out []runItem
	for _, fpr := range fprs {
		for _, l := range Libs {
			if !l.fixedFPR {
				out = append(out, runItem{l, fpr})
			}
		}
	}
	for _, l := range Libs {
		if l.fixedFPR {
			out = append(out, runItem{l, 0})
		}
	}
	return out
}

// parseFPRs parses a comma-separated list of rates in (0, 1).
func parseFPRs(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return nil, fmt.Errorf("fpr list %q: %w", s, err)
		}
		if !(v > 0 && v < 1) {
			return nil, fmt.Errorf("fpr list %q: %g is not in (0, 1)", s, v)
		}
		out = append(out, v)
	}
	return out, nil
}

// result is one benchmark's outcome.
type result struct {
	name   string
	r      testing.BenchmarkResult
	nsOp   float64 // wall clock
	cpuOp  float64 // thread CPU time, or nsOp where unavailable
	bitsPK float64
	fpr    float64
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	keys := fs.Int("keys", 1_000_000, "number of keys added to each filter, and of absent keys queried")
	fprList := fs.String("fpr", "0.01,0.001", "comma-separated target false-positive rates")
	benchtime := fs.String("benchtime", "1s", "time (or Nx iterations) per benchmark, as go test -benchtime")
	count := fs.Int("count", 1, "run the whole set this many times, in rounds; the ratio table uses each benchmark's fastest run")
	outFile := fs.String("o", "", "also write the output to this file")
	large := fs.Bool("large", false, "instead: the large-filter run (filters far larger than the cache, against random-load times)")
	largeKeys := fs.Uint64("large-keys", 1<<28, "keys in each filter of the large run")
	largeQueries := fs.Uint64("large-queries", 1<<24, "present and absent queries per filter in the large run")
	largeOnly := fs.String("large-only", "", "regular expression: run only the large-run filters whose names match")
	cuckooRun := fs.Bool("cuckoo", false, "instead: the cuckoo run (bloomlab's cuckoo filter against seiflotfy/cuckoofilter and bits-and-blooms: add, present, absent, delete, load factor at the first failed insert, keys lost), at the first -fpr")
	tdRun := fs.Bool("tdigest", false, "instead: the t-digest run (quantile error of bloomlab's tdigest against exact quantiles, -tdigest-n values of uniform, normal and log-normal distributions, compression 100 and 500)")
	tdN := fs.Int("tdigest-n", 10_000_000, "values per distribution in the t-digest run")
	growing := fs.Bool("growing", false, "instead: the growing-filter run (chains grown from -growing-init keys to each of -growing-n, against BoomFilters' scalable filter and a right-sized filter)")
	growingInit := fs.Uint64("growing-init", 1000, "initial capacity of the growing filters")
	growingN := fs.String("growing-n", "1000000,10000000", "comma-separated numbers of keys for the growing run")
	growingQueries := fs.Uint64("growing-queries", 1000000, "present and absent queries per filter in the growing run (fewer for a chain too slow to finish in -growing-max-query)")
	growingMaxQuery := fs.Duration("growing-max-query", 30*time.Second, "wall time after which the growing run stops querying a filter")
	static := fs.Bool("static", false, "instead: the static-filter run (bloomlab's fuse and ribbon filters beside xorfilter's binary fuse filters at each of -static-keys: bits per key, measured FPR, build, single and batched queries; see README)")
	staticKeys := fs.String("static-keys", "1e6,1e8", "comma-separated numbers of keys for the static run")
	staticRounds := fs.Int("static-rounds", 3, "interleaved rounds per size in the static run (each row's fastest kept)")
	staticOnly := fs.String("static-only", "", "regular expression: run only the static rows whose names match (the reference rows of their groups are always run)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *count < 1 {
		return fmt.Errorf("-count %d: must be at least 1", *count)
	}
	if *keys < 1 {
		return fmt.Errorf("-keys %d: must be at least 1", *keys)
	}
	fprs, err := parseFPRs(*fprList)
	if err != nil {
		return err
	}
	if *static {
		var ns []uint64
		for _, v := range strings.Split(*staticKeys, ",") {
			n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || n < 1 || n != math.Trunc(n) || n > 1<<31 {
				return fmt.Errorf("-static-keys: bad count %q", v)
			}
			ns = append(ns, uint64(n))
		}
		if *staticRounds < 1 {
			return fmt.Errorf("-static-rounds %d: must be at least 1", *staticRounds)
		}
		w := stdout
		if *outFile != "" {
			f, err := os.Create(*outFile)
			if err != nil {
				return err
			}
			defer f.Close()
			w = io.MultiWriter(stdout, f)
		}
		only, err := regexp.Compile(*staticOnly)
		if err != nil {
			return fmt.Errorf("-static-only: %w", err)
		}
		return runStatic(w, stderr, ns, *staticRounds, only)
	}
	if *tdRun {
		w := stdout
		if *outFile != "" {
			f, err := os.Create(*outFile)
			if err != nil {
				return err
			}
			defer f.Close()
			w = io.MultiWriter(stdout, f)
		}
		return runTDigest(w, *tdN)
	}
	if *cuckooRun {
		w := stdout
		if *outFile != "" {
			f, err := os.Create(*outFile)
			if err != nil {
				return err
			}
			defer f.Close()
			w = io.MultiWriter(stdout, f)
		}
		testing.Init()
		if err := flag.Set("test.benchtime", *benchtime); err != nil {
			return fmt.Errorf("-benchtime %q: %w", *benchtime, err)
		}
		return runCuckoo(w, stderr, *keys, fprs[0], *count)
	}
	if *growing {
		w := stdout
		if *outFile != "" {
			f, err := os.Create(*outFile)
			if err != nil {
				return err
			}
			defer f.Close()
			w = io.MultiWriter(stdout, f)
		}
		var ns []uint64
		for _, s := range strings.Split(*growingN, ",") {
			n, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil || n < 1 || n != math.Trunc(n) || n > 1e10 {
				return fmt.Errorf("-growing-n: bad count %q", s)
			}
			ns = append(ns, uint64(n))
		}
		return runGrowing(w, stderr, *growingInit, ns, *growingQueries, fprs[0], *growingMaxQuery)
	}
	if *large {
		w := stdout
		if *outFile != "" {
			f, err := os.Create(*outFile)
			if err != nil {
				return err
			}
			defer f.Close()
			w = io.MultiWriter(stdout, f)
		}
		only, err := regexp.Compile(*largeOnly)
		if err != nil {
			return fmt.Errorf("-large-only: %w", err)
		}
		return runLarge(w, stderr, *largeKeys, *largeQueries, fprs[0], only)
	}
	testing.Init()
	if err := flag.Set("test.benchtime", *benchtime); err != nil {
		return fmt.Errorf("-benchtime %q: %w", *benchtime, err)
	}

	out := stdout
	var file *os.File
	var buf *bufio.Writer
	if *outFile != "" {
		file, err = os.Create(*outFile)
		if err != nil {
			return err
		}
		defer file.Close()
		buf = bufio.NewWriter(file)
		out = io.MultiWriter(stdout, buf)
	}

	start := time.Now()
	fmt.Fprintf(out, "goos: %s\ngoarch: %s\npkg: github.com/bloomlab/bloomlab/bench\n", runtime.GOOS, runtime.GOARCH)
	if cpu := cpuName(); cpu != "" {
		fmt.Fprintf(out, "cpu: %s\n", cpu)
	}
	fmt.Fprintf(out, "go: %s\nkeys: %d\nkeylen: %d\nbenchtime: %s\ncount: %d\n", runtime.Version(), *keys, KeyLen, *benchtime, *count)

	e := newEnv(*keys)
	suffix := ""
	if p := runtime.GOMAXPROCS(0); p > 1 {
		suffix = "-" + strconv.Itoa(p)
	}
	results := make(map[string]result)
	for round := 1; round <= *count; round++ {
		for _, it := range runOrder(fprs) {
			bt, err := e.build(it.lib, it.fpr)
			if err != nil {
				return err
			}
			for _, op := range Ops {
				name := benchName(it.lib, it.fpr, op)
				fmt.Fprintf(stderr, "round %d/%d: %s ...\n", round, *count, name)
				r := testing.Benchmark(func(b *testing.B) { e.bench(b, it.lib, it.fpr, op) })
				if r.N == 0 {
					return fmt.Errorf("benchmark %s failed", name)
				}
				res := result{name: name, r: r, nsOp: float64(r.T.Nanoseconds()) / float64(r.N), bitsPK: bt.bitsKey, fpr: bt.fpr}
				res.cpuOp = res.nsOp
				if v, ok := r.Extra["cpu-ns/op"]; ok {
					res.cpuOp = v
				}
				if prev, ok := results[name]; !ok || res.cpuOp < prev.cpuOp {
					results[name] = res
				}
				fmt.Fprintln(out, benchLine("BenchmarkFilters/"+name+suffix, res))
			}
		}
	}
	fmt.Fprintln(out)
	ratioTable(out, results, fprs)
	fmt.Fprintf(out, "\ntotal time: %s\n", time.Since(start).Round(time.Second))
	if buf != nil {
		if err := buf.Flush(); err != nil {
			return err
		}
		if err := file.Close(); err != nil {
			return err
		}
	}
	return nil
}

// benchLine formats a result as a benchstat line.
func benchLine(name string, res result) string {
	r := res.r
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s\t%d\t%s ns/op\t%d B/op\t%d allocs/op", name, r.N, fmtNs(res.nsOp), r.AllocedBytesPerOp(), r.AllocsPerOp())
	fmt.Fprintf(&sb, "\t%s fpr\t%.3f bits/key", strconv.FormatFloat(res.fpr, 'g', 4, 64), res.bitsPK)
	for _, unit := range []string{"cpu-ns/op", "insfail", "fnr"} {
		if v, ok := r.Extra[unit]; ok {
			fmt.Fprintf(&sb, "\t%s %s", strconv.FormatFloat(v, 'g', 4, 64), unit)
		}
	}
	return sb.String()
}

func fmtNs(ns float64) string {
	switch {
	case ns >= 100:
		return strconv.FormatFloat(ns, 'f', 1, 64)
	case ns >= 10:
		return strconv.FormatFloat(ns, 'f', 2, 64)
	default:
		return strconv.FormatFloat(ns, 'f', 3, 64)
	}
}

// ratioTable prints, for every target FPR, each library's ns/op divided by
// bloomlab-bloom's, then the bloomlab/peer ratios that have targets.
func ratioTable(w io.Writer, results map[string]result, fprs []float64) {
	get := func(l lib, fpr float64, op string) (result, bool) {
		r, ok := results[benchName(l, fpr, op)]
		return r, ok
	}
	libByName := make(map[string]lib)
	for _, l := range Libs {
		libByName[l.name] = l
	}
	ref := libByName[libBloom]

	fmt.Fprintln(w, "Time relative to bloomlab-bloom (default scheme) at the same target FPR: library time/op ÷ bloomlab-bloom time/op.")
	fmt.Fprintln(w, "Time is cpu-ns/op, the benchmarking thread's CPU time (wall ns/op where the OS does not provide it), so")
	fmt.Fprintln(w, "preemption by other processes does not count; with -count > 1, each benchmark's fastest run.")
	fmt.Fprintln(w, "Above 1 means slower than bloomlab. Every time includes hashing the 16-byte key.")
	for _, fpr := range fprs {
		fmt.Fprintf(w, "\nfpr=%g", fpr)
		var base [3]float64
		for i, op := range Ops {
			r, _ := get(ref, fpr, op)
			base[i] = r.cpuOp
		}
		fmt.Fprintf(w, "   (bloomlab-bloom: add %s, present %s, absent %s cpu-ns/op)\n", fmtNs(base[0]), fmtNs(base[1]), fmtNs(base[2]))
		fmt.Fprintf(w, "%-24s %7s %8s %8s %9s %9s %8s\n", "lib", "add", "present", "absent", "bits/key", "fpr", "allocs")
		for _, l := range Libs {
			at := fpr
			mark := ""
			if l.fixedFPR {
				mark = " *"
			}
			var cells [3]string
			var allocs int64
			var bt result
			for i, op := range Ops {
				r, ok := get(l, at, op)
				if !ok {
					cells[i] = "-"
					continue
				}
				bt = r
				allocs = max(allocs, r.r.AllocsPerOp())
				cells[i] = fmt.Sprintf("%.2f", r.cpuOp/base[i])
			}
			fmt.Fprintf(w, "%-24s %7s %8s %8s %9.2f %9.5f %8d\n", l.name+mark, cells[0], cells[1], cells[2], bt.bitsPK, bt.fpr, allocs)
		}
	}
	fmt.Fprintln(w, "\n* fixed FPR (8-bit fingerprints), measured once under fpr=fixed and set against each target's bloomlab-bloom.")
	fmt.Fprintln(w, "  allocs = the largest allocs/op of the three ops (xorfilter's build allocations are per filter, under 1 per key).")

	type pair struct {
		ours, theirs string
		target       float64
	}
	pairs := []pair{
		{libBloom, libBnBSameMK, 0.4},
		{libBloomDouble, libBnBSameMK, 0.4},
		{libBloom, libBnB, 0},
		{libCounting, libBoomCounting, 0.7},
		{libPartitioned, libBoomPart, 0},
		{libBloom, libBoomClassic, 0},
		{libBloom, libBlobloom, 0},
		{libBlocked, libBnB, 0.25},
		{libBlockedBatch, libBnB, 0.25},
		{libBlocked, libBlobloom, 0},
		{libBloomBatch, libBnBSameMK, 0},
		{libDleft16, libBnB16, 0.5},
		{libDleft16, libBloom16, 0},
		{libCuckooF8, libCuckoo, 0.8},
		{libCuckooSemi9, libCuckoo, 0},
	}
	fmt.Fprintln(w, "\nbloomlab ÷ peer, cpu-ns/op at the same target FPR (below 1 means bloomlab is faster):")
	fmt.Fprintf(w, "%-7s %-46s %6s %8s %8s %7s  %s\n", "fpr", "bloomlab / peer", "add", "present", "absent", "target", "verdict")
	for _, fpr := range fprs {
		for _, p := range pairs {
			var cells [3]string
			verdict := ""
			var missed []string
			for i, op := range Ops {
				a, ok1 := get(libByName[p.ours], fpr, op)
				b, ok2 := get(libByName[p.theirs], fpr, op)
				if !ok1 || !ok2 {
					cells[i] = "-"
					continue
				}
				ratio := a.cpuOp / b.cpuOp
				cells[i] = fmt.Sprintf("%.2f", ratio)
				if p.target > 0 && ratio > p.target {
					missed = append(missed, op)
				}
			}
			target := ""
			if p.target > 0 {
				target = fmt.Sprintf("≤%.2f", p.target)
				verdict = "met"
				if len(missed) > 0 {
					verdict = "MISSED: " + strings.Join(missed, ", ")
				}
			}
			fmt.Fprintf(w, "%-7g %-46s %6s %8s %8s %7s  %s\n", fpr, p.ours+" / "+p.theirs, cells[0], cells[1], cells[2], target, verdict)
		}
	}
}

// cpuName returns the CPU model from /proc/cpuinfo, or "".
func cpuName() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if name, ok := strings.CutPrefix(line, "model name"); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), ":"))
		}
	}
	return ""
}
