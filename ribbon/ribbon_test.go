package ribbon

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/filtertest"
	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/internal/stats"
	"github.com/bloomlab/bloomlab/theory"
)

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestNoFalseNegatives: for r from 1 to 32 and sizes from 0 to 10^5 keys
// (every size below 300, where a single shard's 128-slot window is most
// of its slots, and sizes across shard boundaries), every key is in the
// filter, N counts the keys, the filter is theory.RibbonBits's size when
// it has one shard, within theory.RibbonMaxBits always, and banding took
// few attempts.
func TestNoFalseNegatives(t *testing.T) {
	sizes := []int{}
	for n := 0; n < 300; n += 1 + n/50 {
		sizes = append(sizes, n)
	}
	sizes = append(sizes, 1000, 4097, theory.RibbonShardKeys, theory.RibbonShardKeys+1, 100_000)
	most := 0
	for _, r := range []int{1, 2, 7, 8, 13, 16, 31, 32} {
		for _, n := range sizes {
			c := Config{ResultBits: r, Seed: uint64(n)}
			keys := filtertest.Keys(n, uint64(n))
			f, err := New(keys, c)
			if err != nil {
				t.Fatalf("r=%d n=%d: %v", r, n, err)
			}
			for i, k := range keys {
				if !f.Contains(k) {
					t.Fatalf("r=%d n=%d: key %d missing", r, n, i)
				}
			}
			if f.N() != uint64(n) || f.Bits() > theory.RibbonMaxBits(uint64(n), r) {
				t.Errorf("r=%d n=%d: N %d, %d bits, bound %d", r, n, f.N(), f.Bits(), theory.RibbonMaxBits(uint64(n), r))
			}
			if f.Shards() == 1 && f.attempts <= theory.RibbonGrowAfter && f.Bits() != theory.RibbonBits(uint64(n), r) {
				t.Errorf("r=%d n=%d: %d bits, theory.RibbonBits %d", r, n, f.Bits(), theory.RibbonBits(uint64(n), r))
			}
			most = max(most, f.attempts)
		}
	}
	t.Logf("at most %d attempts on a shard", most)
	if most > 8 {
		t.Errorf("a shard took %d attempts", most)
	}
}

// TestTenMillionKeys: no false negative among 10^7 keys (r = 7), the
// size is theory.RibbonBits's within 0.1% (306 shards of binomially
// scattered counts), and bits per key ÷ r ≤ 1.06 (the goal).
func TestTenMillionKeys(t *testing.T) {
	if testing.Short() {
		t.Skip("10^7 keys: skipped with -short")
	}
	const n, r = 10_000_000, 7
	hs := make([]uint64, n)
	var buf [8]byte
	for i := range hs {
		binary.LittleEndian.PutUint64(buf[:], uint64(i))
		hs[i] = hashing.Sum64(buf[:], 7)
	}
	f, err := NewFromHashes(hs, Config{ResultBits: r, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	for i := range uint64(n) {
		binary.LittleEndian.PutUint64(buf[:], i)
		if !f.Contains(buf[:]) {
			t.Fatalf("key %d missing", i)
		}
	}
	ratio := f.BitsPerKey() / r
	want := float64(theory.RibbonBits(n, r))
	t.Logf("%d keys, %.4f bits per key (÷ r %.4f), %d attempts at most", f.N(), f.BitsPerKey(), ratio, f.attempts)
	if f.N() != n || ratio > 1.06 || math.Abs(float64(f.Bits())-want) > 0.001*want {
		t.Errorf("N %d, %d bits (theory %v), ÷ r %.4f", f.N(), f.Bits(), want, ratio)
	}
}

// TestDuplicates: keys added several times are held once; the filter
// holds every key and N counts the distinct ones; the filter is within
// the bound of the keys held (copies included: the Builder's budget).
func TestDuplicates(t *testing.T) {
	for _, r := range []int{1, 8, 32} {
		b := must(NewBuilder(Config{ResultBits: r}))
		keys := filtertest.Keys(50_000, 3)
		for _, k := range keys {
			b.Add(k)
			b.Add(k)
		}
		for range 70 {
			b.Add(keys[0])
		}
		f, err := b.Finish()
		if err != nil {
			t.Fatalf("r=%d: %v", r, err)
		}
		for _, k := range keys {
			if !f.Contains(k) {
				t.Fatalf("r=%d: false negative", r)
			}
		}
		if f.N() != 50_000 || f.Bits() > theory.RibbonMaxBits(uint64(b.Len()), r) { // shards count the copies
			t.Errorf("r=%d: N %d, bits %d", r, f.N(), f.Bits())
		}
	}
	b := must(NewBuilder(Config{}))
	for range 1000 {
		b.Add([]byte("same"))
	}
	f, err := b.Finish()
	if err != nil || !f.Contains([]byte("same")) || f.N() != 1 {
		t.Fatalf("one key 1000 times: %v", err)
	}
	// Finish keeps the Builder's keys, copies included: a second Finish
	// builds the same filter.
	if g, err := b.Finish(); err != nil || !g.Equal(f) || b.Len() != 1000 {
		t.Fatalf("second Finish: %v", err)
	}
}

// TestConstructionBounded: a shard too small for its keys (forced through
// the sizing hook: 1000 keys in one 128-slot block, grown by at most
// theory.RibbonMaxGrowth blocks) fails after MaxAttempts attempts with
// ErrConstruction, never loops and never returns a filter missing a key;
// a shard a little too small grows and then succeeds.
func TestConstructionBounded(t *testing.T) {
	defer func(old func(uint64) uint64) { shardBlocksHook = old }(shardBlocksHook)
	shardBlocksHook = func(uint64) uint64 { return 1 }
	keys := filtertest.Keys(1000, 1)
	if _, err := New(keys, Config{}); !errors.Is(err, ErrConstruction) {
		t.Fatalf("%v, want ErrConstruction", err)
	}
	// 380 keys in 384 slots: tight; a fourth block makes it easy.
	shardBlocksHook = func(uint64) uint64 { return 3 }
	f, err := New(keys[:380], Config{ResultBits: 4})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys[:380] {
		if !f.Contains(k) {
			t.Fatal("false negative")
		}
	}
	t.Logf("380 keys in 3 blocks: %d attempts, %d slots", f.attempts, f.Slots())
}

// TestFPR: the rate of keys never added is 2^-r, within binomial bounds
// (fixed seeds), at several r, with several shards.
func TestFPR(t *testing.T) {
	for _, r := range []int{1, 4, 7, 8, 12, 16} {
		probes := min(4_000_000, max(200_000, int(200*math.Ldexp(1, r))))
		keys := filtertest.Keys(70_000, 9)
		filtertest.CheckRates(t, filtertest.RateCheck{
			Name: fmt.Sprintf("r=%d", r), Filters: 3, Probes: probes,
			Build: func(seed uint64) (kind.Filter, error) {
				return New(keys, Config{ResultBits: r, Seed: seed})
			},
			Predicted: theory.FPRibbon(r), Target: theory.FPRibbon(r),
		})
	}
	f := must(New(filtertest.Keys(1000, 1), Config{ResultBits: 32}))
	var buf [16]byte
	hits := uint64(0)
	for i := range uint64(4_000_000) {
		if f.Contains(filtertest.AbsentKey(&buf, i)) {
			hits++
		}
	}
	if _, hi := stats.BinomialQuantileBounds(4_000_000, math.Ldexp(1, -32), 1e-6); hits > hi {
		t.Errorf("r=32: %d false positives in 4·10^6", hits)
	}
}

// TestContainsBatch: the batched query answers as Contains across chunk
// boundaries and allocates nothing.
func TestContainsBatch(t *testing.T) {
	for _, r := range []int{1, 8, 16, 32} {
		f := must(New(filtertest.Keys(50_000, 2), Config{ResultBits: r}))
		keys := filtertest.Keys(100_000, 2) // half present
		out := make([]bool, len(keys)+1)
		got := f.ContainsBatch(keys[:999], out)
		if len(got) != 999 {
			t.Fatalf("len %d", len(got))
		}
		for i, k := range keys[:999] {
			if got[i] != f.Contains(k) {
				t.Fatalf("r=%d: key %d: batch %v", r, i, got[i])
			}
		}
		if a := testing.AllocsPerRun(5, func() { f.ContainsBatch(keys, out) }); a != 0 {
			t.Errorf("r=%d: ContainsBatch allocates %v", r, a)
		}
	}
}

// TestNoAllocs: single queries allocate nothing.
func TestNoAllocs(t *testing.T) {
	for _, r := range []int{1, 8, 16, 32} {
		f := must(New(filtertest.Keys(1000, 2), Config{ResultBits: r, Seed: 4}))
		key := []byte("0123456789abcdef")
		if a := testing.AllocsPerRun(100, func() { f.Contains(key); f.ContainsString("k"); f.ContainsHash64(5) }); a != 0 {
			t.Errorf("r=%d: %v allocations per query", r, a)
		}
	}
}

// TestBuilderBudget: adds past SetMaxBits fail naming the budget and
// change nothing; the filter built holds every accepted key within the
// budget.
func TestBuilderBudget(t *testing.T) {
	b := must(NewBuilder(Config{}))
	const budget = 400_000
	b.SetMaxBits(budget)
	var accepted int
	var err error
	for i := range 100_000 {
		if err = b.Add(fmt.Appendf(nil, "k%d", i)); err != nil {
			break
		}
		accepted++
	}
	if err == nil || b.Len() != accepted {
		t.Fatalf("no refusal: %v", err)
	}
	f := must(b.Finish())
	if 64*uint64(accepted)+f.Bits() > budget || b.need(uint64(accepted+1)) <= budget {
		t.Errorf("%d keys accepted: %d bits of filter", accepted, f.Bits())
	}
	for i := range accepted {
		if !f.Contains(fmt.Appendf(nil, "k%d", i)) {
			t.Fatal("false negative")
		}
	}
}

func TestConfig(t *testing.T) {
	for _, c := range []Config{{ResultBits: -1}, {ResultBits: 33}} {
		if _, err := NewBuilder(c); !errors.Is(err, ErrParam) {
			t.Errorf("%+v: %v", c, err)
		}
		if _, err := New(nil, c); !errors.Is(err, ErrParam) {
			t.Errorf("%+v: %v", c, err)
		}
	}
	f := must(New(nil, Config{}))
	if f.ResultBits() != 8 || f.N() != 0 || f.EstimatedFPR() != 1.0/256 || f.Shards() != 1 {
		t.Errorf("defaults: r=%d", f.ResultBits())
	}
}

// TestInlining: the hash helpers cost no call.
func TestInlining(t *testing.T) {
	filtertest.Inlinable(t, "github.com/bloomlab/bloomlab/ribbon", "mix", "remix", "row", "attemptSeed")
}

// TestBuildBytesMonotone: BuildBytes never decreases as n grows (the
// Builder's budget relies on it), at every n up to 2·10^5 and on a
// geometric grid up to MaxKeys, for r = 1, 8, 32.
func TestBuildBytesMonotone(t *testing.T) {
	for _, r := range []int{1, 8, 32} {
		c := Config{ResultBits: r}
		prev := uint64(0)
		check := func(n uint64) {
			if b := BuildBytes(c, n); b < prev {
				t.Fatalf("r=%d: BuildBytes(%d) = %d < %d at a smaller n", r, n, b, prev)
			} else {
				prev = b
			}
		}
		for n := uint64(0); n <= 200_000; n++ {
			check(n)
		}
		for n := uint64(200_001); n <= MaxKeys; n += n/64 + 1 {
			check(n)
		}
		check(MaxKeys)
	}
}

// TestConcurrentQueries: a Filter is immutable, so goroutines query one
// filter at once (single and batched) and every key added answers
// present; .ci/run runs it under the race detector.
func TestConcurrentQueries(t *testing.T) {
	keys := filtertest.Keys(20_000, 7)
	for _, r := range []int{1, 8, 16} {
		f, err := New(keys, Config{ResultBits: r})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make(chan string, 4)
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				out := make([]bool, len(keys))
				for i, k := range keys {
					if (i+g)%2 == 0 && !f.Contains(k) {
						errs <- fmt.Sprintf("r=%d: key %d absent", r, i)
						return
					}
				}
				for i, v := range f.ContainsBatch(keys, out) {
					if !v {
						errs <- fmt.Sprintf("r=%d: key %d absent (batch)", r, i)
						return
					}
				}
			}(g)
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Error(e)
		}
	}
}
