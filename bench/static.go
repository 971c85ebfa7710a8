package main

// The static-filter run (go run . -static): bloomlab's fuse and ribbon
// filters beside FastFilter/xorfilter's binary fuse filters, at 10^6 and
// 10^8 keys, in one process with the sides interleaved (issue 27).
//
// Every library registers its rows in staticLibs from an init function
// (static_fuse.go, static_ribbon.go, static_xor.go). A row is built from
// the 16-byte keys (hashing included: the libraries taking uint64 keys get
// xxh3.Hash of each key inside the timed build and query loops), then
// queried one key at a time and, where the library has one, in batches.

import (
	"fmt"
	"io"
	"math"
	"regexp"
	"runtime"
	"time"
)

// staticLib is one static filter of the -static table.
type staticLib struct {
	// name is the row's name: "bloomlab-fuse3-8", "xorfilter-bfuse8",
	// "bloomlab-ribbon-r8", …
	name string
	// group names the rows compared with each other (equal ε): "8-bit",
	// "16-bit", "r=7", …; ratios are taken within a group against its
	// reference row (ref).
	group string
	ref   bool
	// bound is log2(1/ε) for the row's nominal rate ε (8 for 8-bit
	// fingerprints, r for a ribbon filter of r result bits): the table
	// divides bits per key by it. 0: from the measured rate.
	bound float64
	// build builds the filter of keys (timed: hashing included).
	build func(keys [][]byte) (staticFilter, error)
}

// staticFilter is a built filter. The harness calls each method once per
// chunk of keys, never per key: the loops over keys live in the library's
// own file and call its methods directly.
type staticFilter interface {
	// contains queries keys one at a time and returns how many answered
	// true.
	contains(keys [][]byte) int
	// containsBatch queries keys with the library's batched query and
	// returns how many answered true; ok is false if it has none.
	containsBatch(keys [][]byte, out []bool) (hits int, ok bool)
	// bits is the filter's size in bits (its whole state).
	bits() uint64
}

// staticLibs is every row of the -static table, in registration order.
var staticLibs []staticLib

// staticRow is one row's measurements, the fastest over the rounds.
type staticRow struct {
	lib                  staticLib
	bits                 uint64
	fp                   int // false positives on the absent keys
	build, single, batch float64
	hasBatch             bool
	allocs               float64
	rounds               int
}

// staticChunk is the number of keys each contains / containsBatch call
// queries.
const staticChunk = 4096

// staticBound returns log2(1/ε) for a row: its nominal rate's (lib.bound),
// or from the measured rate where the row gives none.
func staticBound(r *staticRow, absent int) float64 {
	if r.lib.bound > 0 {
		return r.lib.bound
	}
	if r.fp == 0 {
		return math.NaN()
	}
	return -math.Log2(float64(r.fp) / float64(absent))
}

// cpuClock times a section by the thread's CPU time (wall time where the
// OS does not give it); the caller holds runtime.LockOSThread.
func cpuClock() func() float64 {
	t0, ok := threadCPUNanos()
	w0 := time.Now()
	return func() float64 {
		if t1, ok1 := threadCPUNanos(); ok && ok1 {
			return float64(t1 - t0)
		}
		return float64(time.Since(w0).Nanoseconds())
	}
}

// runStatic is the -static run: for each n, rounds over every row of
// staticLibs (interleaved: round 1 of every row, then round 2 …), each
// building the filter of n present keys and querying min(n, 10^7)
// present and as many absent keys, single and batched; then the table.
// Only the rows whose names match only run, and the reference rows of
// their groups.
func runStatic(w, progress io.Writer, ns []uint64, rounds int, only *regexp.Regexp) error {
	libs := staticLibs
	if only != nil && only.String() != "" {
		groups := map[string]bool{}
		for _, l := range staticLibs {
			if only.MatchString(l.name) {
				groups[l.group] = true
			}
		}
		libs = nil
		for _, l := range staticLibs {
			if only.MatchString(l.name) || (l.ref && groups[l.group]) {
				libs = append(libs, l)
			}
		}
		if len(libs) == 0 {
			return fmt.Errorf("-static-only %q matches no row", only)
		}
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	fmt.Fprintf(w, "goos: %s\ngoarch: %s\n", runtime.GOOS, runtime.GOARCH)
	if cpu := cpuName(); cpu != "" {
		fmt.Fprintf(w, "cpu: %s\n", cpu)
	}
	fmt.Fprintf(w, "go: %s\nrun: -static, keylen %d, %d rounds per size (each row's fastest kept)\n", runtime.Version(), KeyLen, rounds)
	if only != nil && only.String() != "" {
		fmt.Fprintf(w, "rows: -static-only %q and the reference rows of their groups\n", only)
	}
	start := time.Now()
	for _, n := range ns {
		if n < 1 || n > 1<<31 {
			return fmt.Errorf("-static-keys: %d keys out of range [1, 2^31]", n)
		}
		present := makeKeys(int(n), 1)
		q := int(min(n, 10_000_000))
		absent := makeKeys(q, 2)
		out := make([]bool, staticChunk)
		rows := make([]staticRow, len(libs))
		for i := range rows {
			rows[i].lib = libs[i]
		}
		for round := 1; round <= rounds; round++ {
			for i := range rows {
				r := &rows[i]
				fmt.Fprintf(progress, "n=%d round %d/%d: %s ...\n", n, round, rounds, r.lib.name)
				runtime.GC()
				clock := cpuClock()
				f, err := r.lib.build(present)
				build := clock() / float64(n)
				if err != nil {
					return fmt.Errorf("%s: build of %d keys: %w", r.lib.name, n, err)
				}
				// Single queries: present then absent, by chunks.
				var ms0, ms1 runtime.MemStats
				runtime.ReadMemStats(&ms0)
				clock = cpuClock()
				hits, fp := 0, 0
				for j := 0; j < q; j += staticChunk {
					hits += f.contains(present[j:min(j+staticChunk, q)])
				}
				for j := 0; j < q; j += staticChunk {
					fp += f.contains(absent[j:min(j+staticChunk, q)])
				}
				single := clock() / float64(2*q)
				runtime.ReadMemStats(&ms1)
				if hits != q {
					return fmt.Errorf("%s: %d of %d present keys found: false negatives", r.lib.name, hits, q)
				}
				batch, hasBatch := 0.0, true
				clock = cpuClock()
				bhits, bfp := 0, 0
				for j := 0; j < q && hasBatch; j += staticChunk {
					var h int
					h, hasBatch = f.containsBatch(present[j:min(j+staticChunk, q)], out)
					bhits += h
				}
				for j := 0; j < q && hasBatch; j += staticChunk {
					h, _ := f.containsBatch(absent[j:min(j+staticChunk, q)], out)
					bfp += h
				}
				batch = clock() / float64(2*q)
				if hasBatch && (bhits != q || bfp != fp) {
					return fmt.Errorf("%s: batched queries found %d present (of %d) and %d absent keys, single queries %d and %d", r.lib.name, bhits, q, bfp, hits, fp)
				}
				r.bits, r.fp, r.hasBatch = f.bits(), fp, hasBatch
				r.allocs = max(r.allocs, float64(ms1.Mallocs-ms0.Mallocs)/float64(2*q))
				if r.rounds == 0 || build < r.build {
					r.build = build
				}
				if r.rounds == 0 || single < r.single {
					r.single = single
				}
				if r.rounds == 0 || batch < r.batch {
					r.batch = batch
				}
				r.rounds++
				f = nil
			}
		}
		staticTable(w, n, q, rows)
		present, absent = nil, nil
		runtime.GC()
	}
	fmt.Fprintf(w, "\ntotal time: %s\n", time.Since(start).Round(time.Second))
	return nil
}

// staticTable prints the rows of one size, grouped, with each group's
// reference row first.
func staticTable(w io.Writer, n uint64, q int, rows []staticRow) {
	fmt.Fprintf(w, "\nn = %d keys; queries: %d present + %d absent, single and batched (chunks of %d keys)\n", n, q, q, staticChunk)
	fmt.Fprintf(w, "%-8s %-22s %8s %8s %10s %8s %8s %8s %7s %6s %6s %6s %6s\n",
		"group", "row", "bits/key", "÷bound", "fpr", "build", "query", "batch", "allocs", "bits×", "build×", "query×", "batch×")
	var groups []string
	seen := map[string]bool{}
	for _, r := range rows {
		if !seen[r.lib.group] {
			seen[r.lib.group] = true
			groups = append(groups, r.lib.group)
		}
	}
	for _, g := range groups {
		var ref *staticRow
		for i := range rows {
			if rows[i].lib.group == g && rows[i].lib.ref {
				ref = &rows[i]
			}
		}
		order := []*staticRow{}
		if ref != nil {
			order = append(order, ref)
		}
		for i := range rows {
			if rows[i].lib.group == g && &rows[i] != ref {
				order = append(order, &rows[i])
			}
		}
		for _, r := range order {
			bpk := float64(r.bits) / float64(n)
			name := r.lib.name
			if r == ref {
				name += " *"
			}
			batch := "-"
			if r.hasBatch {
				batch = fmtNs(r.batch)
			}
			ratio := func(v, base float64, ok bool) string {
				if ref == nil || !ok || base == 0 {
					return "-"
				}
				return fmt.Sprintf("%.3f", v/base)
			}
			fmt.Fprintf(w, "%-8s %-22s %8.3f %8.4f %10.3g %8s %8s %8s %7.3g %6s %6s %6s %6s\n",
				g, name, bpk, bpk/staticBound(r, q), float64(r.fp)/float64(q), fmtNs(r.build), fmtNs(r.single), batch, r.allocs,
				ratio(bpk, float64(ref.bitsOr0())/float64(n), true), ratio(r.build, ref.buildOr0(), true),
				ratio(r.single, ref.singleOr0(), true), ratio(r.batch, ref.singleOr0(), r.hasBatch))
		}
	}
	fmt.Fprintln(w, "bits/key: the filter's size ÷ n; ÷bound: bits/key ÷ log2(1/ε) for the row's nominal ε (the lower bound is 1);")
	fmt.Fprintln(w, "fpr: measured on the absent keys; build ns/key, query and batch ns/op: the thread's CPU time, hashing the 16-byte key")
	fmt.Fprintln(w, "included, each row's fastest round; allocs: per single query; ×: ratio to the group's reference row (*);")
	fmt.Fprintln(w, "batch× divides by the reference's single-query time (xorfilter has no batched query).")
}

func (r *staticRow) bitsOr0() uint64 {
	if r == nil {
		return 0
	}
	return r.bits
}

func (r *staticRow) buildOr0() float64 {
	if r == nil {
		return 0
	}
	return r.build
}

func (r *staticRow) singleOr0() float64 {
	if r == nil {
		return 0
	}
	return r.single
}
