package fuse

import (
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/bloomlab/bloomlab/internal/heldhash"
	"math"
	"slices"
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

var shapes = []Config{
	{Arity: 3, FingerprintBits: 8}, {Arity: 3, FingerprintBits: 16}, {Arity: 3, FingerprintBits: 32},
	{Arity: 4, FingerprintBits: 8}, {Arity: 4, FingerprintBits: 16}, {Arity: 4, FingerprintBits: 32},
}

// TestNoFalseNegatives: for every arity and width and for sizes from 0 to
// 10^5 keys (every size below 300, where the empirical segment lengths
// are least reliable), every key is in the filter, the filter has the
// paper's size (theory.FuseBits), N counts the keys, and construction
// took few attempts.
func TestNoFalseNegatives(t *testing.T) {
	sizes := []int{}
	for n := 0; n < 300; n++ {
		sizes = append(sizes, n)
	}
	sizes = append(sizes, 1000, 4097, 10_000, 65_537, 100_000)
	most := 0
	for _, c := range shapes {
		for _, n := range sizes {
			c.Seed = uint64(n)
			keys := filtertest.Keys(n, uint64(n))
			f, err := New(keys, c)
			if err != nil {
				t.Fatalf("%+v n=%d: %v", c, n, err)
			}
			for i, k := range keys {
				if !f.Contains(k) {
					t.Fatalf("%+v n=%d: key %d missing", c, n, i)
				}
			}
			if want := theory.FuseBits(c.Arity, c.FingerprintBits, uint64(n)); f.Bits() != want || f.N() != uint64(n) {
				t.Errorf("%+v n=%d: %d bits, N %d; theory.FuseBits %d", c, n, f.Bits(), f.N(), want)
			}
			most = max(most, f.attempts)
		}
	}
	t.Logf("at most %d attempts", most)
	if most > 8 {
		t.Errorf("a construction took %d attempts", most)
	}
}

// TestTenMillionKeys: no false negative among 10^7 keys, 3-wise and
// 4-wise (8-bit), each built in one or two attempts.
func TestTenMillionKeys(t *testing.T) {
	if testing.Short() {
		t.Skip("10^7 keys: skipped with -short")
	}
	const n = 10_000_000
	hs := make([]uint64, n)
	for i := range hs {
		hs[i] = hashing.Sum64(binary.LittleEndian.AppendUint64(nil, uint64(i)), 7)
	}
	for _, arity := range []int{3, 4} {
		f, err := NewFromHashes(hs, Config{Arity: arity, Seed: 7})
		if err != nil {
			t.Fatal(err)
		}
		var buf [8]byte
		for i := range uint64(n) {
			binary.LittleEndian.PutUint64(buf[:], i)
			if !f.Contains(buf[:]) {
				t.Fatalf("arity %d: key %d missing", arity, i)
			}
		}
		t.Logf("arity %d: %d keys, %.4f bits per key, %d attempts", arity, f.N(), f.BitsPerKey(), f.attempts)
		if f.N() != n || f.attempts > 2 {
			t.Errorf("arity %d: N %d, %d attempts", arity, f.N(), f.attempts)
		}
	}
}

// TestDuplicates: keys added several times are held once; the filter
// holds every key and N counts the distinct ones. 70 copies of one key
// put 70 keys into its cells (past the 6-bit count of a cell).
func TestDuplicates(t *testing.T) {
	for _, c := range shapes {
		b := must(NewBuilder(c))
		keys := filtertest.Keys(1000, 3)
		for _, k := range keys {
			b.Add(k)
			b.Add(k)
		}
		for range 70 {
			b.Add(keys[0])
		}
		f, err := b.Finish()
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		for _, k := range keys {
			if !f.Contains(k) {
				t.Fatalf("%+v: false negative", c)
			}
		}
		if f.N() != 1000 || f.Bits() != theory.FuseBits(c.Arity, c.FingerprintBits, 1000) {
			t.Errorf("%+v: N %d, bits %d", c, f.N(), f.Bits())
		}
	}
	// One key a thousand times.
	b := must(NewBuilder(Config{}))
	for range 1000 {
		b.Add([]byte("same"))
	}
	f, err := b.Finish()
	if err != nil || !f.Contains([]byte("same")) || f.N() != 1 {
		t.Fatalf("one key 1000 times: %v", err)
	}
}

// TestConstructionBounded: a set that cannot be built (more keys than
// cells, forced through the unexported build with a layout too small)
// fails after MaxAttempts with ErrConstruction, never loops and never
// returns a filter missing a key.
func TestConstructionBounded(t *testing.T) {
	c := must(Config{}.norm())
	hs := make([]uint64, 100)
	for i := range hs {
		hs[i] = uint64(i) * 0x9E3779B97F4A7C15
	}
	// 100 keys into the layout of 10: 48 cells.
	l := newLayout(c, 10)
	n := len(hs)
	sorted, found := make([]uint64, n), make([]uint8, n)
	ok := peel(&l, [][]uint64{hs}, sorted, found, make([]uint8, l.cells), make([]uint64, l.cells), make([]uint32, l.cells), make([]uint32, 2), 1)
	if ok {
		t.Fatal("100 keys peeled in 48 cells")
	}
	old := newLayoutHook
	newLayoutHook = func(c Config, n uint64) layout { return old(c, n/10) }
	defer func() { newLayoutHook = old }()
	st := heldhash.StoreOf(hs)
	_, _, err := build(c, &st)
	if !errors.Is(err, ErrConstruction) {
		t.Fatalf("%v, want ErrConstruction", err)
	}
}

// TestFPR: the rate of keys never added is 2^-f, within binomial bounds
// (fixed seeds), for 8 and 16 bits, 3- and 4-wise.
func TestFPR(t *testing.T) {
	for _, c := range shapes {
		if c.FingerprintBits == 32 {
			continue
		}
		probes := 400_000
		if c.FingerprintBits == 16 {
			probes = 4_000_000
		}
		keys := filtertest.Keys(20_000, 9)
		filtertest.CheckRates(t, filtertest.RateCheck{
			Name: fmt.Sprintf("%d-wise %d-bit", c.Arity, c.FingerprintBits), Filters: 3, Probes: probes,
			Build: func(seed uint64) (kind.Filter, error) {
				c.Seed = seed
				return New(keys, c)
			},
			Predicted: theory.FPFuse(c.FingerprintBits), Target: theory.FPFuse(c.FingerprintBits),
		})
	}
	// 32 bits: 10^7 probes expect 0.0023 false positives.
	f := must(New(filtertest.Keys(1000, 1), Config{FingerprintBits: 32}))
	var buf [16]byte
	hits := uint64(0)
	for i := range uint64(10_000_000) {
		if f.Contains(filtertest.AbsentKey(&buf, i)) {
			hits++
		}
	}
	if _, hi := stats.BinomialQuantileBounds(10_000_000, math.Ldexp(1, -32), 1e-6); hits > hi {
		t.Errorf("32-bit: %d false positives in 10^7", hits)
	}
}

// TestContainsBatch: the batched query answers as Contains, for every
// shape, across chunk boundaries, and allocates nothing, both by chunks
// and key by key (a filter of at most batchDirect bytes).
func TestContainsBatch(t *testing.T) {
	defer func(d int) { batchDirect = d }(batchDirect)
	for _, direct := range []int{0, 4 << 20} {
		batchDirect = direct
		testContainsBatch(t)
	}
}

func testContainsBatch(t *testing.T) {
	for _, c := range shapes {
		f := must(New(filtertest.Keys(5000, 2), c))
		keys := filtertest.Keys(10_000, 2) // half present
		out := make([]bool, len(keys)+1)
		got := f.ContainsBatch(keys[:999], out)
		if len(got) != 999 {
			t.Fatalf("len %d", len(got))
		}
		for i, k := range keys[:999] {
			if got[i] != f.Contains(k) {
				t.Fatalf("%+v: key %d: batch %v", c, i, got[i])
			}
		}
		if a := testing.AllocsPerRun(20, func() { f.ContainsBatch(keys, out) }); a != 0 {
			t.Errorf("%+v: ContainsBatch allocates %v", c, a)
		}
	}
}

// TestNoAllocs: single queries allocate nothing.
func TestNoAllocs(t *testing.T) {
	for _, c := range shapes {
		f := must(New(filtertest.Keys(1000, 2), c))
		key := []byte("0123456789abcdef")
		if a := testing.AllocsPerRun(100, func() { f.Contains(key); f.ContainsString("k"); f.ContainsHash64(5) }); a != 0 {
			t.Errorf("%+v: %v allocations per query", c, a)
		}
	}
}

// TestBuilderBudget: adds past SetMaxBits fail naming the budget and
// change nothing; the filter built holds every accepted key within the
// budget.
func TestBuilderBudget(t *testing.T) {
	b := must(NewBuilder(Config{}))
	const budget = 100_000
	b.SetMaxBits(budget)
	var accepted int
	var err error
	for i := range 10_000 {
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
	for _, c := range []Config{{Arity: 2}, {Arity: 5}, {FingerprintBits: 12}, {FingerprintBits: 64}} {
		if _, err := NewBuilder(c); !errors.Is(err, ErrParam) {
			t.Errorf("%+v: %v", c, err)
		}
		if _, err := New(nil, c); !errors.Is(err, ErrParam) {
			t.Errorf("%+v: %v", c, err)
		}
	}
	f := must(New(nil, Config{}))
	if f.Arity() != 3 || f.FingerprintBits() != 8 || f.N() != 0 || f.EstimatedFPR() != 1.0/256 {
		t.Errorf("defaults: %d-wise %d bits", f.Arity(), f.FingerprintBits())
	}
}

// TestNewFromHashesKeepsHashes: NewFromHashes may reorder its argument
// but keeps every value, duplicates included (the dedup after a failed
// attempt once zeroed the copies' places with slices.Compact).
func TestNewFromHashesKeepsHashes(t *testing.T) {
	hs := make([]uint64, 1000)
	for i := range hs {
		hs[i] = uint64(i%10) + 1 // ten distinct hashes, none 0, 100 copies each
	}
	want := slices.Clone(hs)
	f, err := NewFromHashes(hs, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if f.N() != 10 {
		t.Errorf("N = %d, want 10", f.N())
	}
	slices.Sort(hs)
	slices.Sort(want)
	if !slices.Equal(hs, want) {
		t.Errorf("NewFromHashes changed its argument's values: %v … %v", hs[:3], hs[len(hs)-3:])
	}
}

// TestBudgetNearMaxKeys: the budget check vouches for twice the count only
// within MaxKeys (theory.FuseBits is 0 beyond, so twice a count above
// MaxKeys/2 once looked cheap and let every key up to MaxKeys in
// unchecked). Checked through admit, without holding the keys.
func TestBudgetNearMaxKeys(t *testing.T) {
	b, _ := NewBuilder(Config{FingerprintBits: 32})
	n := uint64(MaxKeys/2 + 1)
	limit := b.need(MaxKeys) - 1 // MaxKeys keys do not fit
	b.SetMaxBits(limit)
	if err := b.admit(n); err != nil {
		t.Fatalf("%d keys refused: %v", n, err)
	}
	if f := b.budget.Fits(); f > n && b.need(f) > limit {
		t.Errorf("admitting %d keys vouched for %d, which take %d bits > the budget %d", n, f, b.need(f), limit)
	}
	if err := b.admit(MaxKeys); err == nil {
		t.Errorf("%d keys admitted: they take %d bits > the budget %d", MaxKeys, b.need(MaxKeys), limit)
	}
}

// TestBuildBytesMonotone: BuildBytes never decreases as n grows, for
// every shape (the Builder's budget relies on it: a count that fits
// vouches for every smaller one), at every n up to 2·10^5 and on a
// geometric grid up to MaxKeys.
func TestBuildBytesMonotone(t *testing.T) {
	for _, c := range shapes {
		prev := uint64(0)
		check := func(n uint64) {
			if b := BuildBytes(c, n); b < prev {
				t.Fatalf("%+v: BuildBytes(%d) = %d < %d at a smaller n", c, n, b, prev)
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
	defer func(d int) { batchDirect = d }(batchDirect)
	for i, c := range shapes {
		batchDirect = (i % 2) << 22 // the chunked path, then key by key
		f := must(New(keys, c))
		var wg sync.WaitGroup
		errs := make(chan string, 4)
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				out := make([]bool, len(keys))
				for i, k := range keys {
					if (i+g)%2 == 0 && !f.Contains(k) {
						errs <- fmt.Sprintf("%+v: key %d absent", c, i)
						return
					}
				}
				for i, v := range f.ContainsBatch(keys, out) {
					if !v {
						errs <- fmt.Sprintf("%+v: key %d absent (batch)", c, i)
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
