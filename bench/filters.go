package main

// The filters under test and the timed loops shared by bench_test.go (go test
// -bench) and main.go (go run .).
//
// Every library is wrapped in a filter value whose functions take a whole
// slice of keys: the loop over the keys is inside the closure, where each
// call is a direct (usually inlined) method call on the concrete type, so the
// harness adds one indirect call per chunk of keys, not per key.
//
// Libraries that take uint64 keys (xorfilter, blobloom) hash the 16-byte key
// with xxh3 inside that loop, so their ns/op includes the hashing, as it does
// for every library that hashes []byte keys itself.

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"testing"

	xorfilter "github.com/FastFilter/xorfilter"
	bnb "github.com/bits-and-blooms/bloom/v3"
	"github.com/bloomlab/bloomlab/blocked"
	"github.com/bloomlab/bloomlab/bloom"
	"github.com/bloomlab/bloomlab/choices"
	"github.com/bloomlab/bloomlab/counting"
	bcuckoo "github.com/bloomlab/bloomlab/cuckoo"
	"github.com/bloomlab/bloomlab/dlcbf"
	"github.com/bloomlab/bloomlab/dleft"
	"github.com/bloomlab/bloomlab/hashing"
	"github.com/greatroar/blobloom"
	cuckoo "github.com/seiflotfy/cuckoofilter"
	boom "github.com/tylertreat/BoomFilters"
	"github.com/zeebo/xxh3"
)

// Sink and SinkFilter are exported so that the compiler cannot prove the
// benchmarked work unused and delete it.
var (
	Sink       int
	SinkFilter any
)

// KeyLen is the length of every key in bytes.
const KeyLen = 16

// Seeds of the two key sets: the keys that are added (and queried as
// present) and the keys that are only queried (absent).
const (
	PresentSeed = 1
	AbsentSeed  = 2
)

// Ops are the measured operations, in output order.
var Ops = []string{"add", "present", "absent"}

// DefaultFPRs are the target false-positive rates measured by default.
var DefaultFPRs = []float64{0.01, 0.001}

// makeKeys returns n random KeyLen-byte keys drawn from a PCG generator
// seeded with seed, backed by one contiguous array.
func makeKeys(n int, seed uint64) [][]byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	buf := make([]byte, n*KeyLen)
	for i := 0; i+8 <= len(buf); i += 8 {
		v := r.Uint64()
		for j := range 8 {
			buf[i+j] = byte(v >> (8 * j))
		}
	}
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = buf[i*KeyLen : (i+1)*KeyLen : (i+1)*KeyLen]
	}
	return keys
}

// filter is one instance of a library's filter.
type filter struct {
	// addAll inserts every key. For a static filter it builds a new filter
	// from exactly these keys.
	addAll func(keys [][]byte)
	// countAll returns how many of keys are reported present.
	countAll func(keys [][]byte) int
	// reset empties the filter, touching all of its memory; nil for a
	// static filter.
	reset func()
	// bits returns the size of the filter in bits (after addAll, for a
	// static filter).
	bits func() uint64
	// failures returns how many inserts were refused since the last reset
	// (nil: inserts cannot fail).
	failures func() int
	// del deletes every key and returns how many deletes found one (nil:
	// the library does not delete).
	del func(keys [][]byte) int
}

// lib is a filter library, or one configuration of it.
type lib struct {
	name string
	// fixedFPR: the false-positive rate is fixed by construction (8-bit
	// fingerprints), not chosen, so the library is measured once, under
	// fpr=fixed.
	fixedFPR bool
	newF     func(n uint64, fpr float64) (*filter, error)
}

// Library names used by the ratio table.
const (
	libBloom        = "bloomlab-bloom"
	libBloomDouble  = "bloomlab-bloom-double"
	libPartitioned  = "bloomlab-partitioned"
	libCounting     = "bloomlab-counting"
	libDlcbf        = "bloomlab-dlcbf"
	libChoices      = "bloomlab-choices"
	libDleft        = "bloomlab-dleft"
	libDleft16      = "bloomlab-dleft-16bpk"
	libBloom16      = "bloomlab-bloom-16bpk"
	libBnB16        = "bitsandblooms-16bpk"
	libBlocked      = "bloomlab-blocked"
	libBlockedBatch = "bloomlab-blocked-batch"
	libBloomBatch   = "bloomlab-bloom-batch"
	libBnBSameMK    = "bitsandblooms-samemk"
	libBnB          = "bitsandblooms"
	libBoomClassic  = "boom-classic"
	libBoomPart     = "boom-partitioned"
	libBoomCounting = "boom-counting"
	libBlobloom     = "blobloom"
	libXor          = "xorfilter-bfuse8"
	libCuckoo       = "seiflotfy-cuckoo"
	libCuckooF8     = "bloomlab-cuckoo-f8"
	libCuckooSemi9  = "bloomlab-cuckoo-semi-f9"
	libCuckooFPR    = "bloomlab-cuckoo"
	libCuckooSemi   = "bloomlab-cuckoo-semi"
)

// Libs lists every library in output order.
var Libs = []lib{
	{name: libBloom, newF: func(n uint64, fpr float64) (*filter, error) {
		return newBloomlab(n, fpr)
	}},
	{name: libBloomDouble, newF: func(n uint64, fpr float64) (*filter, error) {
		return newBloomlab(n, fpr, bloom.WithScheme(hashing.Double))
	}},
	{name: libPartitioned, newF: func(n uint64, fpr float64) (*filter, error) {
		return newBloomlab(n, fpr, bloom.WithScheme(hashing.Partition))
	}},
	{name: libCounting, newF: newBloomlabCounting},
	{name: libDlcbf, newF: newBloomlabDlcbf},
	{name: libChoices, newF: newBloomlabChoices},
	{name: libDleft, newF: func(n uint64, fpr float64) (*filter, error) {
		f, err := dleft.NewWithEstimates(n, fpr, 0)
		return wrapDleft(f), err
	}},
	// At 16 bits per key (002 §II's comparison): d-left against a standard
	// filter with the same bits and k = 11, ours and bits-and-blooms'.
	{name: libDleft16, fixedFPR: true, newF: func(n uint64, _ float64) (*filter, error) {
		f, err := dleft.NewWithBitsPerKey(n, 16, 0)
		return wrapDleft(f), err
	}},
	{name: libBloom16, fixedFPR: true, newF: func(n uint64, _ float64) (*filter, error) {
		f, err := bloom.New(16*n, 11)
		if err != nil {
			return nil, err
		}
		return &filter{
			addAll: func(keys [][]byte) {
				for _, k := range keys {
					f.Add(k)
				}
			},
			countAll: func(keys [][]byte) int {
				c := 0
				for _, k := range keys {
					if f.Contains(k) {
						c++
					}
				}
				return c
			},
			reset: f.Clear,
			bits:  f.M,
		}, nil
	}},
	{name: libBnB16, fixedFPR: true, newF: func(n uint64, _ float64) (*filter, error) {
		return wrapBnB(bnb.New(uint(16*n), 11)), nil
	}},
	{name: libBlocked, newF: func(n uint64, fpr float64) (*filter, error) { return newBlocked(n, fpr, false) }},
	{name: libBlockedBatch, newF: func(n uint64, fpr float64) (*filter, error) { return newBlocked(n, fpr, true) }},
	{name: libBloomBatch, newF: newBloomlabBatch},
	{name: libBnBSameMK, newF: func(n uint64, fpr float64) (*filter, error) {
		// The same m and k as bloomlab-bloom, so the two do equal work.
		ref, err := bloom.NewWithEstimates(n, fpr)
		if err != nil {
			return nil, err
		}
		return wrapBnB(bnb.New(uint(ref.M()), uint(ref.K()))), nil
	}},
	{name: libBnB, newF: func(n uint64, fpr float64) (*filter, error) {
		return wrapBnB(bnb.NewWithEstimates(uint(n), fpr)), nil
	}},
	{name: libBoomClassic, newF: newBoomClassic},
	{name: libBoomPart, newF: newBoomPartitioned},
	{name: libBoomCounting, newF: newBoomCounting},
	{name: libBlobloom, newF: newBlobloom},
	{name: libXor, fixedFPR: true, newF: newXor},
	{name: libCuckoo, fixedFPR: true, newF: newCuckoo},
	// bloomlab's cuckoo filter with seiflotfy's geometry (the same buckets
	// of 4 × 8 bits: equal memory and fingerprints), semi-sorted with
	// 9-bit fingerprints in the same 32 bits per bucket, and sized for
	// each target (plain and semi-sorted).
	{name: libCuckooF8, fixedFPR: true, newF: func(n uint64, _ float64) (*filter, error) {
		return newBloomlabCuckoo(bcuckoo.Config{Buckets: seiflotfyBuckets(n), FingerprintBits: 8})
	}},
	{name: libCuckooSemi9, fixedFPR: true, newF: func(n uint64, _ float64) (*filter, error) {
		return newBloomlabCuckoo(bcuckoo.Config{Buckets: seiflotfyBuckets(n), FingerprintBits: 9, Semisort: true})
	}},
	{name: libCuckooFPR, newF: func(n uint64, fpr float64) (*filter, error) {
		return newBloomlabCuckoo(bcuckoo.Config{Capacity: n, FPR: fpr})
	}},
	{name: libCuckooSemi, newF: func(n uint64, fpr float64) (*filter, error) {
		return newBloomlabCuckoo(bcuckoo.Config{Capacity: n, FPR: fpr, Semisort: true})
	}},
}

// seiflotfyBuckets is the number of buckets seiflotfy/cuckoofilter's
// NewFilter(n) makes: n rounded up to a power of two, over 4.
func seiflotfyBuckets(n uint64) uint64 { return max(1, (uint64(1)<<bits.Len64(max(n, 4)-1))/4) }

// newBloomlabCuckoo wraps a bloomlab cuckoo filter; a refused insert (the
// filter is full: nothing changed, no key lost) counts as a failure.
func newBloomlabCuckoo(c bcuckoo.Config) (*filter, error) {
	f, err := bcuckoo.New(c)
	if err != nil {
		return nil, err
	}
	failed := 0
	return &filter{
		addAll: func(keys [][]byte) {
			for _, k := range keys {
				if f.Add(k) != nil {
					failed++
				}
			}
		},
		countAll: func(keys [][]byte) int {
			c := 0
			for _, k := range keys {
				if f.Contains(k) {
					c++
				}
			}
			return c
		},
		reset:    func() { f.Clear(); failed = 0 },
		bits:     f.Bits,
		failures: func() int { return failed },
		del: func(keys [][]byte) int {
			c := 0
			for _, k := range keys {
				if f.Delete(k) {
					c++
				}
			}
			return c
		},
	}, nil
}

func newBloomlab(n uint64, fpr float64, opts ...bloom.Option) (*filter, error) {
	f, err := bloom.NewWithEstimates(n, fpr, opts...)
	if err != nil {
		return nil, err
	}
	return &filter{
		addAll: func(keys [][]byte) {
			for _, k := range keys {
				f.Add(k)
			}
		},
		countAll: func(keys [][]byte) int {
			c := 0
			for _, k := range keys {
				if f.Contains(k) {
					c++
				}
			}
			return c
		},
		reset: f.Clear,
		bits:  f.M,
	}, nil
}

// wrapDleft wraps a d-left filter; a refused insert (only with a bounded
// stash, which these filters do not set) is counted as a failure.
func wrapDleft(f *dleft.Filter) *filter {
	if f == nil {
		return nil
	}
	fails := 0
	return &filter{
		addAll: func(keys [][]byte) {
			for _, k := range keys {
				if f.Add(k) != nil {
					fails++
				}
			}
		},
		countAll: func(keys [][]byte) int {
			c := 0
			for _, k := range keys {
				if f.Contains(k) {
					c++
				}
			}
			return c
		},
		reset:    func() { f.Clear(); fails = 0 },
		bits:     f.Bits,
		failures: func() int { return fails },
	}
}

// newBlocked wraps the cache-line-blocked filter; with batch, queries go
// through ContainsBatch (groups hashed before memory is touched).
func newBlocked(n uint64, fpr float64, batch bool) (*filter, error) {
	f, err := blocked.NewWithEstimates(n, fpr)
	if err != nil {
		return nil, err
	}
	out := make([]bool, 0, 4096)
	count := func(keys [][]byte) int {
		c := 0
		for _, k := range keys {
			if f.Contains(k) {
				c++
			}
		}
		return c
	}
	if batch {
		count = func(keys [][]byte) int { return countBatch(keys, out, f.ContainsBatch) }
	}
	return &filter{
		addAll: func(keys [][]byte) {
			for _, k := range keys {
				f.Add(k)
			}
		},
		countAll: count,
		reset:    f.Clear,
		bits:     f.M,
	}, nil
}

// newBloomlabBatch is bloomlab-bloom queried through ContainsBatch.
func newBloomlabBatch(n uint64, fpr float64) (*filter, error) {
	f, err := bloom.NewWithEstimates(n, fpr)
	if err != nil {
		return nil, err
	}
	out := make([]bool, 0, 4096)
	return &filter{
		addAll: func(keys [][]byte) {
			for _, k := range keys {
				f.Add(k)
			}
		},
		countAll: func(keys [][]byte) int { return countBatch(keys, out, f.ContainsBatch) },
		reset:    f.Clear,
		bits:     f.M,
	}, nil
}

// countBatch counts the keys a batch query reports present, 4096 at a time
// into a reused buffer.
func countBatch(keys [][]byte, out []bool, query func([][]byte, []bool) []bool) int {
	c := 0
	for len(keys) > 0 {
		chunk := keys[:min(len(keys), cap(out))]
		for _, ok := range query(chunk, out) {
			if ok {
				c++
			}
		}
		keys = keys[len(chunk):]
	}
	return c
}

// newBloomlabChoices is the c = 2 choice filter of 000 §3, filled online,
// sized by the ODE for the target rate (choices.NewWithEstimates).
func newBloomlabChoices(n uint64, fpr float64) (*filter, error) {
	f, err := choices.NewWithEstimates(n, fpr, 2, choices.Config{})
	if err != nil {
		return nil, err
	}
	return &filter{
		addAll: func(keys [][]byte) {
			for _, k := range keys {
				f.Add(k)
			}
		},
		countAll: func(keys [][]byte) int {
			c := 0
			for _, k := range keys {
				if f.Contains(k) {
					c++
				}
			}
			return c
		},
		reset: f.Clear,
		bits:  f.M,
	}, nil
}

// newBloomlabDlcbf is the static d-left counting Bloom filter of
// dlcbf.NewWithEstimates (d = 4, 8 cells of r + 2 bits, 6 keys per bucket).
// A refused insert (bucket overflow) is counted as a failure.
func newBloomlabDlcbf(n uint64, fpr float64) (*filter, error) {
	f, err := dlcbf.NewWithEstimates(n, fpr, 0)
	if err != nil {
		return nil, err
	}
	failed := 0
	return &filter{
		addAll: func(keys [][]byte) {
			for _, k := range keys {
				if f.Add(k) != nil {
					failed++
				}
			}
		},
		countAll: func(keys [][]byte) int {
			c := 0
			for _, k := range keys {
				if f.Contains(k) {
					c++
				}
			}
			return c
		},
		reset:    func() { f.Clear(); failed = 0 },
		bits:     f.Bits,
		failures: func() int { return failed },
	}, nil
}

func newBloomlabCounting(n uint64, fpr float64) (*filter, error) {
	f, err := counting.NewWithEstimates(n, fpr)
	if err != nil {
		return nil, err
	}
	if f.CounterBits() != 4 {
		return nil, fmt.Errorf("bloomlab counting: default counter width is %d bits, want 4", f.CounterBits())
	}
	return &filter{
		addAll: func(keys [][]byte) {
			for _, k := range keys {
				f.Add(k)
			}
		},
		countAll: func(keys [][]byte) int {
			c := 0
			for _, k := range keys {
				if f.Contains(k) {
					c++
				}
			}
			return c
		},
		reset: f.Clear,
		bits:  func() uint64 { return f.M() * uint64(f.CounterBits()) },
	}, nil
}

func wrapBnB(f *bnb.BloomFilter) *filter {
	return &filter{
		addAll: func(keys [][]byte) {
			for _, k := range keys {
				f.Add(k)
			}
		},
		countAll: func(keys [][]byte) int {
			c := 0
			for _, k := range keys {
				if f.Test(k) {
					c++
				}
			}
			return c
		},
		reset: func() { f.ClearAll() },
		bits:  func() uint64 { return uint64(f.Cap()) },
	}
}

func newBoomClassic(n uint64, fpr float64) (*filter, error) {
	f := boom.NewBloomFilter(uint(n), fpr)
	return &filter{
		addAll: func(keys [][]byte) {
			for _, k := range keys {
				f.Add(k)
			}
		},
		countAll: func(keys [][]byte) int {
			c := 0
			for _, k := range keys {
				if f.Test(k) {
					c++
				}
			}
			return c
		},
		reset: func() { f.Reset() },
		bits:  func() uint64 { return uint64(f.Capacity()) },
	}, nil
}

func newBoomPartitioned(n uint64, fpr float64) (*filter, error) {
	f := boom.NewPartitionedBloomFilter(uint(n), fpr)
	return &filter{
		addAll: func(keys [][]byte) {
			for _, k := range keys {
				f.Add(k)
			}
		},
		countAll: func(keys [][]byte) int {
			c := 0
			for _, k := range keys {
				if f.Test(k) {
					c++
				}
			}
			return c
		},
		reset: func() { f.Reset() },
		// k partitions of ⌈m/k⌉ bits each.
		bits: func() uint64 {
			m, k := uint64(f.Capacity()), uint64(f.K())
			return k * ((m + k - 1) / k)
		},
	}, nil
}

func newBoomCounting(n uint64, fpr float64) (*filter, error) {
	const counterBits = 4
	f := boom.NewCountingBloomFilter(uint(n), counterBits, fpr)
	return &filter{
		addAll: func(keys [][]byte) {
			for _, k := range keys {
				f.Add(k)
			}
		},
		countAll: func(keys [][]byte) int {
			c := 0
			for _, k := range keys {
				if f.Test(k) {
					c++
				}
			}
			return c
		},
		reset: func() { f.Reset() },
		bits:  func() uint64 { return uint64(f.Capacity()) * counterBits },
	}, nil
}

func newBlobloom(n uint64, fpr float64) (*filter, error) {
	f := blobloom.NewOptimized(blobloom.Config{Capacity: n, FPRate: fpr})
	return &filter{
		addAll: func(keys [][]byte) {
			for _, k := range keys {
				f.Add(xxh3.Hash(k))
			}
		},
		countAll: func(keys [][]byte) int {
			c := 0
			for _, k := range keys {
				if f.Has(xxh3.Hash(k)) {
					c++
				}
			}
			return c
		},
		reset: f.Clear,
		bits:  f.NumBits,
	}, nil
}

// newXor returns a binary fuse 8 filter. It is static: addAll hashes the keys
// into a reused buffer and builds a new filter from them, so its "add" time
// is the build time per key, hashing included.
func newXor(n uint64, _ float64) (*filter, error) {
	hashes := make([]uint64, n)
	var f *xorfilter.BinaryFuse8
	return &filter{
		addAll: func(keys [][]byte) {
			h := hashes[:len(keys)]
			for i, k := range keys {
				h[i] = xxh3.Hash(k)
			}
			g, err := xorfilter.PopulateBinaryFuse8(h)
			if err != nil {
				panic(fmt.Sprintf("xorfilter: build of %d keys: %v", len(keys), err))
			}
			f = g
			SinkFilter = g
		},
		countAll: func(keys [][]byte) int {
			c := 0
			for _, k := range keys {
				if f.Contains(xxh3.Hash(k)) {
					c++
				}
			}
			return c
		},
		bits: func() uint64 {
			if f == nil {
				return 0
			}
			return uint64(len(f.Fingerprints)) * 8
		},
	}, nil
}

// newCuckoo returns a cuckoo filter of capacity n: 8-bit fingerprints in
// buckets of 4, the number of buckets rounded up to a power of two.
func newCuckoo(n uint64, _ float64) (*filter, error) {
	f := cuckoo.NewFilter(uint(n))
	failed := 0
	return &filter{
		addAll: func(keys [][]byte) {
			for _, k := range keys {
				if !f.Insert(k) {
					failed++
				}
			}
		},
		countAll: func(keys [][]byte) int {
			c := 0
			for _, k := range keys {
				if f.Lookup(k) {
					c++
				}
			}
			return c
		},
		reset:    func() { f.Reset(); failed = 0 },
		bits:     func() uint64 { return uint64(len(f.Encode())) * 8 },
		failures: func() int { return failed },
		del: func(keys [][]byte) int {
			c := 0
			for _, k := range keys {
				if f.Delete(k) {
					c++
				}
			}
			return c
		},
	}, nil
}

// built is a library's filter holding all the present keys, with what was
// measured on it.
type built struct {
	f         *filter
	fpr       float64 // measured on the absent keys
	fnr       float64 // present keys reported absent (cuckoo insert failures)
	bitsKey   float64 // bits per added key
	insFailed float64 // fraction of inserts refused
}

// env holds the key sets and the filters built from them.
type env struct {
	present, absent [][]byte

	mu    sync.Mutex
	cache map[string]*built
}

func newEnv(n int) *env {
	return &env{
		present: makeKeys(n, PresentSeed),
		absent:  makeKeys(n, AbsentSeed),
		cache:   make(map[string]*built),
	}
}

// fprName renders a target FPR as it appears in benchmark names.
func fprName(l lib, fpr float64) string {
	if l.fixedFPR {
		return "fixed"
	}
	return strconv.FormatFloat(fpr, 'g', -1, 64)
}

// benchName is the sub-benchmark path below BenchmarkFilters.
func benchName(l lib, fpr float64, op string) string {
	return "fpr=" + fprName(l, fpr) + "/lib=" + l.name + "/op=" + op
}

// build returns l's filter holding every present key, built once per (lib,
// fpr) and cached.
func (e *env) build(l lib, fpr float64) (*built, error) {
	key := l.name + "@" + fprName(l, fpr)
	e.mu.Lock()
	defer e.mu.Unlock()
	if b, ok := e.cache[key]; ok {
		return b, nil
	}
	f, err := l.newF(uint64(len(e.present)), fpr)
	if err != nil {
		return nil, fmt.Errorf("%s at fpr %g: %w", l.name, fpr, err)
	}
	if f.reset != nil {
		f.reset()
	}
	f.addAll(e.present)
	n := float64(len(e.present))
	b := &built{
		f:       f,
		fpr:     float64(f.countAll(e.absent)) / float64(len(e.absent)),
		fnr:     1 - float64(f.countAll(e.present))/n,
		bitsKey: float64(f.bits()) / n,
	}
	if f.failures != nil {
		b.insFailed = float64(f.failures()) / n
	}
	if b.fnr != 0 && f.failures == nil {
		return nil, fmt.Errorf("%s at fpr %g: %.3g of the added keys are reported absent", l.name, fpr, b.fnr)
	}
	e.cache[key] = b
	return b, nil
}

// cpuTimer accumulates the CPU time of the calling thread over the timed
// stretches of a benchmark. On a machine shared with other busy processes the
// wall-clock ns/op includes the time the benchmark was preempted; the thread
// CPU time does not.
type cpuTimer struct {
	t0, total int64
	ok        bool
}

func (c *cpuTimer) start() { c.t0, c.ok = threadCPUNanos() }

func (c *cpuTimer) stop() {
	if t, ok := threadCPUNanos(); ok && c.ok {
		c.total += t - c.t0
	} else {
		c.ok = false
	}
}

// bench runs one operation of one library at one target FPR.
//
//   - add: inserts the present keys in order into an empty filter, b.N in
//     all; after every len(present) inserts the filter is emptied with the
//     timer stopped. A static filter is built from chunks of at most
//     len(present) keys (the last one shorter), hashing included.
//   - present, absent: queries the filter holding all present keys with the
//     present or the absent keys in order, cycling.
//
// Each run reports the measured FPR and bits per key of the filter holding
// every present key, and, where the OS provides it, cpu-ns/op: the CPU time
// of the benchmarking thread per op.
func (e *env) bench(b *testing.B, l lib, fpr float64, op string) {
	bt, err := e.build(l, fpr)
	if err != nil {
		b.Fatal(err)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var ct cpuTimer
	b.ReportAllocs()
	switch op {
	case "add":
		f, err := l.newF(uint64(len(e.present)), fpr)
		if err != nil {
			b.Fatal(err)
		}
		if f.reset != nil {
			f.reset() // touch the memory before timing
		}
		b.ResetTimer()
		ct.start()
		for done := 0; done < b.N; {
			c := min(len(e.present), b.N-done)
			if done > 0 && f.reset != nil {
				ct.stop()
				b.StopTimer()
				f.reset()
				b.StartTimer()
				ct.start()
			}
			f.addAll(e.present[:c])
			done += c
		}
		ct.stop()
		b.StopTimer()
		SinkFilter = f
	case "delete":
		// Delete present keys from the filter holding them all, c at a
		// time, timed; put them back with the timer stopped.
		f := bt.f
		if f.del == nil {
			b.Skip("no delete")
		}
		b.ResetTimer()
		ct.start()
		for done := 0; done < b.N; {
			c := min(len(e.present), b.N-done, 4096)
			keys := e.present[done%len(e.present):]
			keys = keys[:min(c, len(keys))]
			f.del(keys) // keys whose insert was refused are not there
			ct.stop()
			b.StopTimer()
			f.addAll(keys)
			b.StartTimer()
			ct.start()
			done += len(keys)
		}
		ct.stop()
		b.StopTimer()
	case "present", "absent":
		keys := e.present
		if op == "absent" {
			keys = e.absent
		}
		f := bt.f
		hits := 0
		b.ResetTimer()
		ct.start()
		for done := 0; done < b.N; {
			c := min(len(keys), b.N-done)
			hits += f.countAll(keys[:c])
			done += c
		}
		ct.stop()
		b.StopTimer()
		Sink = hits
	default:
		b.Fatalf("unknown op %q", op)
	}
	if ct.ok {
		b.ReportMetric(float64(ct.total)/float64(b.N), "cpu-ns/op")
	}
	b.ReportMetric(bt.fpr, "fpr")
	b.ReportMetric(bt.bitsKey, "bits/key")
	if bt.f.failures != nil {
		b.ReportMetric(bt.insFailed, "insfail")
		b.ReportMetric(bt.fnr, "fnr")
	}
}
