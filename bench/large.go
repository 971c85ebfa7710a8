package main

// The large-filter run (-large): filters far bigger than the last-level
// cache, where a query's cost is its cache misses, set against this
// machine's own random-load times.

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"regexp"
	"runtime"
	"time"

	bnb "github.com/bits-and-blooms/bloom/v3"
	"github.com/bloomlab/bloomlab/blocked"
	"github.com/bloomlab/bloomlab/bloom"
	"github.com/greatroar/blobloom"
	"github.com/zeebo/xxh3"
)

// largeChunk is the number of keys generated into a buffer at a time; every
// filter, batch or not, queries the same chunks, so key generation costs
// all of them the same.
const largeChunk = 4096

// keyChunk fills buf with the 16-byte keys first … first+len(keys)-1 of the
// set with the given salt and points keys at them.
func keyChunk(buf []byte, keys [][]byte, first uint64, salt uint64) {
	for j := range keys {
		i := first + uint64(j)
		k := buf[16*j : 16*j+16 : 16*j+16]
		binary.LittleEndian.PutUint64(k, i*0x9E3779B97F4A7C15^salt)
		binary.LittleEndian.PutUint64(k[8:], i^salt<<1)
		keys[j] = k
	}
}

// largeFilter is one filter of the large run.
type largeFilter struct {
	name  string
	build func(n uint64) (add func([]byte), query func(keys [][]byte, out []bool) []bool, bits uint64)
}

func largeFilters(fpr float64) []largeFilter {
	single := func(contains func([]byte) bool) func([][]byte, []bool) []bool {
		return func(keys [][]byte, out []bool) []bool {
			out = out[:len(keys)]
			for j, k := range keys {
				out[j] = contains(k)
			}
			return out
		}
	}
	return []largeFilter{
		{"bloomlab-bloom", func(n uint64) (func([]byte), func([][]byte, []bool) []bool, uint64) {
			f, _ := bloom.NewWithEstimates(n, fpr)
			return f.Add, single(f.Contains), f.M()
		}},
		{"bloomlab-bloom-batch", func(n uint64) (func([]byte), func([][]byte, []bool) []bool, uint64) {
			f, _ := bloom.NewWithEstimates(n, fpr)
			return f.Add, f.ContainsBatch, f.M()
		}},
		{"bloomlab-blocked", func(n uint64) (func([]byte), func([][]byte, []bool) []bool, uint64) {
			f, _ := blocked.NewWithEstimates(n, fpr)
			return f.Add, single(f.Contains), f.M()
		}},
		{"bloomlab-blocked-batch", func(n uint64) (func([]byte), func([][]byte, []bool) []bool, uint64) {
			f, _ := blocked.NewWithEstimates(n, fpr)
			return f.Add, f.ContainsBatch, f.M()
		}},
		{"bitsandblooms", func(n uint64) (func([]byte), func([][]byte, []bool) []bool, uint64) {
			f := bnb.NewWithEstimates(uint(n), fpr)
			return func(k []byte) { f.Add(k) }, single(f.Test), uint64(f.Cap())
		}},
		{"blobloom", func(n uint64) (func([]byte), func([][]byte, []bool) []bool, uint64) {
			f := blobloom.NewOptimized(blobloom.Config{Capacity: n, FPRate: fpr})
			return func(k []byte) { f.Add(xxh3.Hash(k)) }, single(func(k []byte) bool { return f.Has(xxh3.Hash(k)) }), f.NumBits()
		}},
	}
}

// runLarge builds each filter with n keys at rate fpr and times add,
// present and absent queries (q of each), after measuring random loads.
func runLarge(out, log io.Writer, n, q uint64, fpr float64, only *regexp.Regexp) error {
	fmt.Fprintf(out, "large filters: %d keys of 16 bytes at target FPR %g, %d present and %d absent queries each\n\n", n, fpr, q, q)
	indep, dep := randomLoads(512<<20, 1<<24)
	fmt.Fprintf(out, "random 8-byte loads from a 512 MiB array (this machine): independent %.2f ns/load, dependent (pointer chase) %.1f ns/load\n\n", indep, dep)
	fmt.Fprintf(out, "%-24s %10s %10s %10s %8s %12s %16s\n", "filter", "add ns", "present ns", "absent ns", "MiB", "measured fpr", "present/absent ÷ one load")
	buf := make([]byte, 16*largeChunk)
	keys := make([][]byte, largeChunk)
	res := make([]bool, largeChunk)
	for _, lf := range largeFilters(fpr) {
		if !only.MatchString(lf.name) {
			continue
		}
		fmt.Fprintf(log, "large: %s ...\n", lf.name)
		add, query, m := lf.build(n)
		t0 := time.Now()
		for i := uint64(0); i < n; i += largeChunk {
			c := min(largeChunk, n-i)
			keyChunk(buf, keys[:c], i, PresentSeed)
			for _, k := range keys[:c] {
				add(k)
			}
		}
		addNs := float64(time.Since(t0).Nanoseconds()) / float64(n)
		timeQueries := func(salt, first, q uint64) (ns float64, hits uint64) {
			t := time.Now()
			for i := uint64(0); i < q; i += largeChunk {
				c := min(largeChunk, q-i)
				keyChunk(buf, keys[:c], first+i, salt)
				for _, ok := range query(keys[:c], res) {
					if ok {
						hits++
					}
				}
			}
			return float64(time.Since(t).Nanoseconds()) / float64(q), hits
		}
		// Present keys: the first q added (their positions are random, so
		// insertion order does not help the cache).
		qp := min(q, n) // present queries: keys that were added
		presentNs, found := timeQueries(PresentSeed, 0, qp)
		absentNs, fp := timeQueries(AbsentSeed, 0, q)
		if found != qp {
			return fmt.Errorf("%s: %d of %d present keys found: false negatives", lf.name, found, qp)
		}
		fmt.Fprintf(out, "%-24s %10.1f %10.1f %10.1f %8.0f %12.5f %8.2f / %.2f\n", lf.name, addNs, presentNs, absentNs,
			float64(m)/8/(1<<20), float64(fp)/float64(q), presentNs/indep, absentNs/indep)
		add, query = nil, nil
		runtime.GC()
	}
	return nil
}

// randomLoads measures, over an array of size bytes, the time per 8-byte
// load at random positions: independent loads (addresses known in
// advance, so misses overlap as the core allows) and dependent loads (each
// address read from the previous load: full latency).
func randomLoads(size, loads int) (indep, dep float64) {
	a := make([]uint64, size/8)
	n := uint64(len(a))
	// A random cyclic permutation for the pointer chase (Sattolo).
	for i := range a {
		a[i] = uint64(i)
	}
	x := uint64(88172645463325252)
	next := func() uint64 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		return x
	}
	for i := n - 1; i > 0; i-- {
		j, _ := bits.Mul64(next(), i)
		a[i], a[j] = a[j], a[i]
	}
	var sum uint64
	t := time.Now()
	for i := 0; i < loads; i++ {
		j, _ := bits.Mul64(next(), n)
		sum += a[j]
	}
	indep = float64(time.Since(t).Nanoseconds()) / float64(loads)
	p := uint64(0)
	t = time.Now()
	for i := 0; i < loads/4; i++ {
		p = a[p]
	}
	dep = float64(time.Since(t).Nanoseconds()) / float64(loads/4)
	Sink += int(sum + p)
	return indep, dep
}
