package main

// The growing-filter run (-growing): a filter created for a small initial
// capacity that receives n keys, against BoomFilters' ScalableBloomFilter
// at the same target and against a standard filter sized for n from the
// start (issue 11's comparison), and the memory overhead of growing as a
// curve over n beside the chain's theory.

import (
	"fmt"
	"io"
	"math"
	"runtime"
	"time"

	"github.com/bloomlab/bloomlab/bloom"
	"github.com/bloomlab/bloomlab/scalable"
	"github.com/bloomlab/bloomlab/theory"
	boom "github.com/tylertreat/BoomFilters"
)

// grown is a growing filter under test: its operations, its size in bits
// and, where the library computes one, the false-positive rate of its
// state (nil otherwise).
type grown struct {
	add      func([]byte)
	contains func([]byte) bool
	bits     func() uint64
	state    func() float64
}

// growingFilter is one filter of the growing run.
type growingFilter struct {
	name  string
	build func(n0, n uint64, fpr float64) grown
}

func growingFilters() []growingFilter {
	chain := func(p scalable.Profile) func(n0, n uint64, fpr float64) grown {
		return func(n0, _ uint64, fpr float64) grown {
			f, err := scalable.New(scalable.Config{Capacity: n0, FPR: fpr, Profile: p})
			if err != nil {
				panic(err)
			}
			add := func(k []byte) {
				if _, err := f.Add(k); err != nil {
					panic(err)
				}
			}
			return grown{add, f.Contains, f.Bits, f.EstimatedFPR}
		}
	}
	return []growingFilter{
		{"bloomlab-scalable", chain(scalable.Bloomlab)},
		{"bloomlab-scalable-redisbloom", chain(scalable.RedisBloom)},
		{"boom-scalable", func(n0, _ uint64, fpr float64) grown {
			// BoomFilters' chain: every link sized for the hint, link i at
			// fpr·r^i with r = 0.5 (the ratio of bloomlab's chain).
			const r = 0.5
			f := boom.NewScalableBloomFilter(uint(n0), fpr, r)
			// Capacity is the sum of the links' m (bits).
			return grown{func(k []byte) { f.Add(k) }, f.Test, func() uint64 { return uint64(f.Capacity()) }, nil}
		}},
		{"bloomlab-bloom-right-sized", func(_, n uint64, fpr float64) grown {
			f, err := bloom.NewWithEstimates(n, fpr)
			if err != nil {
				panic(err)
			}
			return grown{f.Add, f.Contains, f.Bits, f.EstimatedFPR}
		}},
	}
}

// runGrowing builds each growing filter from n0 to each n in ns at rate
// fpr, timing adds and present and absent queries (at most q of each, and
// at most maxQuery of wall time per kind of query, for the slow chains),
// then prints the overhead curve.
func runGrowing(out, log io.Writer, n0 uint64, ns []uint64, q uint64, fpr float64, maxQuery time.Duration) error {
	fmt.Fprintf(out, "growing filters: initial capacity %d, target FPR %g; 16-byte keys; time per op (wall), bits per key, measured FPR over absent keys\n\n", n0, fpr)
	fmt.Fprintf(out, "%-10s %-30s %9s %11s %10s %9s %12s %10s %10s %9s\n", "n", "filter", "add ns", "present ns", "absent ns", "bits/key", "measured fpr", "queries", "state fpr", "allocs/add")
	buf := make([]byte, 16*largeChunk)
	keys := make([][]byte, largeChunk)
	for _, n := range ns {
		for _, gf := range growingFilters() {
			fmt.Fprintf(log, "growing: n = %d, %s ...\n", n, gf.name)
			g := gf.build(n0, n, fpr)
			add, contains := g.add, g.contains
			var ms0, ms1 runtime.MemStats
			runtime.ReadMemStats(&ms0)
			t0 := time.Now()
			// A peer may panic while growing (BoomFilters' scalable filter
			// does, allocating its next link): the row says after how many
			// keys, and the run goes on with the next filter.
			if at, msg := addAll(add, buf, keys, n); msg != "" {
				fmt.Fprintf(out, "%-10d %-30s panicked after %d of %d adds: %s\n", n, gf.name, at, n, msg)
				g, add, contains = grown{}, nil, nil
				runtime.GC()
				continue
			}
			addNs := float64(time.Since(t0).Nanoseconds()) / float64(n)
			runtime.ReadMemStats(&ms1)
			// Key generation allocates nothing: buf and keys are reused.
			allocs := float64(ms1.Mallocs-ms0.Mallocs) / float64(n)
			timeQueries := func(salt, total uint64) (ns float64, done, hits uint64) {
				t := time.Now()
				for done < total && (done == 0 || time.Since(t) < maxQuery) {
					c := min(largeChunk, total-done)
					keyChunk(buf, keys[:c], done, salt)
					for _, k := range keys[:c] {
						if contains(k) {
							hits++
						}
					}
					done += c
				}
				return float64(time.Since(t).Nanoseconds()) / float64(done), done, hits
			}
			presentNs, qp, found := timeQueries(PresentSeed, min(q, n))
			if found != qp {
				return fmt.Errorf("%s: %d of %d present keys found: false negatives", gf.name, found, qp)
			}
			absentNs, qa, fp := timeQueries(AbsentSeed, q)
			state := "-"
			if g.state != nil {
				state = fmt.Sprintf("%.5f", g.state())
			}
			fmt.Fprintf(out, "%-10d %-30s %9.1f %11.1f %10.1f %9.2f %12.5f %10d %10s %9.4f\n", n, gf.name, addNs, presentNs, absentNs,
				float64(g.bits())/float64(n), float64(fp)/float64(qa), qa, state, allocs)
			g, add, contains = grown{}, nil, nil
			runtime.GC()
		}
		fmt.Fprintln(out)
	}
	return growingCurve(out, n0, ns[len(ns)-1], fpr)
}

// addAll adds the n present keys with add, in chunks; a panic in add ends
// it and returns the number of keys added before it and the panic's value.
func addAll(add func([]byte), buf []byte, keys [][]byte, n uint64) (at uint64, msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
		}
	}()
	for i := uint64(0); i < n; i += largeChunk {
		c := min(largeChunk, n-i)
		keyChunk(buf, keys[:c], i, PresentSeed)
		for _, k := range keys[:c] {
			add(k)
			at++
		}
	}
	return at, ""
}

// growingCurve adds keys to a chain of each profile up to nmax and prints,
// at points along the way, the chain's memory over the memory of a
// standard filter at its continuous optimum for that many keys
// (n·ln(1/ε)/ln²2), measured and as theory.OverheadScalable predicts, and
// over the filter bloom.NewWithEstimates would build.
func growingCurve(out io.Writer, n0, nmax uint64, fpr float64) error {
	fmt.Fprintf(out, "overhead of growing (expansion 2, ratio 0.5), from %d keys at %g: chain memory ÷ memory of a filter sized for n\n", n0, fpr)
	fmt.Fprintf(out, "%-10s %-12s %8s %14s %14s %10s %18s\n", "n", "profile", "links", "÷ optimum", "theory", "theory Δ", "÷ right-sized m")
	var points []uint64
	for p := n0 * 10; p <= nmax; p *= 10 {
		points = append(points, p/2, p)
	}
	buf := make([]byte, 16*largeChunk)
	keys := make([][]byte, largeChunk)
	for _, prof := range []scalable.Profile{scalable.Bloomlab, scalable.RedisBloom} {
		f, err := scalable.New(scalable.Config{Capacity: n0, FPR: fpr, Profile: prof})
		if err != nil {
			return err
		}
		var added uint64
		for _, p := range points {
			for added < p {
				c := min(largeChunk, p-added)
				keyChunk(buf, keys[:c], added, PresentSeed)
				for _, k := range keys[:c] {
					if _, err := f.Add(k); err != nil {
						return err
					}
				}
				added += c
			}
			// The chain's memory for p offered keys (a few were false
			// positives and not stored: the links are what they are).
			nf := float64(p)
			opt := nf * -math.Log(fpr) / (math.Ln2 * math.Ln2)
			measured := float64(f.Bits()) / opt
			th := theory.OverheadScalable(nf, float64(n0), fpr, 2, 0.5)
			m, _, err := theory.Size(p, fpr)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "%-10d %-12s %8d %14.3f %14.3f %9.2f%% %18.3f\n", p, prof, f.Links(), measured, th, 100*(measured/th-1), float64(f.Bits())/float64(m))
		}
	}
	return nil
}
