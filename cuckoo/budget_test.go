package cuckoo

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// Copies of one key take a slot each (CF.ADD), so every 2b copies force a
// growth: NewRedisBloom(1000, 2, 20, 2) doubled its table every 4 copies
// of one key (4 GiB at 88 adds), and a bloomlab-profile filter of
// expansion 32768 asked for a second growth of 2^38 buckets at its 17th
// copy; both ended the process out of memory. With no budget set, a
// growing filter's tables stay within the default budget, here half of a
// process allowed 64 MiB (2^28 bits; TestDefaultMaxBits checks the rest of
// the default): the add that would go past it fails with ErrCannotGrow,
// which wraps ErrFull, and changes nothing. (A 64 MiB process keeps the
// race detector's runs small; server's TestCFCopiesOfOneKey meets the
// default of a real process.)
func TestDuplicatesBounded(t *testing.T) {
	defer func(f func() uint64) { processMemory = f }(processMemory)
	processMemory = func() uint64 { return 64 << 20 }
	const bound = 1 << 28
	for name, mk := range map[string]func() *Filter{
		"redisbloom expansion 2":   func() *Filter { return must(NewRedisBloom(1000, 2, 20, 2)) },
		"bloomlab expansion 32768": func() *Filter { return must(New(Config{Capacity: 1000, Expansion: 32768})) },
	} {
		f := mk()
		added := uint64(0)
		var refused error
		for i := 0; i < 200 && refused == nil; i++ {
			d := f.hashString("same")
			if err := tryAddHash(f, d); err == nil {
				added++
				continue
			} else if !errors.Is(err, errWouldGrow) && !errors.Is(err, ErrCannotGrow) {
				t.Fatalf("%s: AddHashReserve: %v", name, err)
			}
			if next, err := f.nextSubFilterBits(); err == nil && f.Bits()+next > bound {
				t.Fatalf("%s: after %d copies of one key the next add grows the tables from %d to %d bits, past 2^28, with no budget set",
					name, added, f.Bits(), f.Bits()+next)
			}
			before := f.Clone()
			if refused = f.AddHash(d); refused == nil {
				added++
				continue
			}
			if !errors.Is(refused, ErrCannotGrow) || !errors.Is(refused, ErrFull) || !strings.Contains(refused.Error(), "memory budget") {
				t.Errorf("%s: refusal %v", name, refused)
			}
			if !f.Equal(before) {
				t.Errorf("%s: a refused add changed the filter", name)
			}
		}
		if refused == nil {
			t.Fatalf("%s: 200 copies of one key all added (%d bits)", name, f.Bits())
		}
		if f.Bits() > bound || f.N() != added || f.Count([]byte("same")) < added {
			t.Errorf("%s: %d bits, N %d, count %d, %d added", name, f.Bits(), f.N(), f.Count([]byte("same")), added)
		}
		t.Logf("%s: %d copies added in %d sub-filters (%d bits), then: %v", name, added, f.Info().SubFilters, f.Bits(), refused)
	}
}

// TestMemoryBudget: Config.MaxBits and SetMaxBits bound the tables of a
// growing filter in both profiles. The add that would grow them past the
// budget fails with ErrCannotGrow (ErrFull), changing nothing, and so does
// AddHashReserve, without asking for the growth the budget refuses;
// nextSubFilterBits answers the budget's error;
// every key added before is still there; a larger budget lets the filter
// grow again, SetMaxBits(0) removes the budget, Clone keeps it, and a
// budget below the first sub-filter is refused.
func TestMemoryBudget(t *testing.T) {
	for name, c := range map[string]Config{
		"bloomlab":   {Capacity: 1000, Expansion: 2, Seed: 3},
		"redisbloom": {Capacity: 1000, Expansion: 2, Profile: RedisBloom},
	} {
		first := must(New(c)).Bits()
		c.MaxBits = 3*first + first/2 // the first two sub-filters, not the third
		f := must(New(c))
		if f.MaxBits() != c.MaxBits || f.Clone().MaxBits() != c.MaxBits {
			t.Fatalf("%s: MaxBits %d, clone %d, want %d", name, f.MaxBits(), f.Clone().MaxBits(), c.MaxBits)
		}
		var err error
		i := 0
		for ; i < 100000 && err == nil; i++ {
			before := f.Clone()
			if err = f.Add(key(i)); err != nil {
				if !errors.Is(err, ErrCannotGrow) || !errors.Is(err, ErrFull) || !strings.Contains(err.Error(), "memory budget of") {
					t.Fatalf("%s: refusal: %v", name, err)
				}
				if !f.Equal(before) {
					t.Fatalf("%s: a refused add changed the filter", name)
				}
			}
			if f.Bits() > c.MaxBits {
				t.Fatalf("%s: %d bits, budget %d", name, f.Bits(), c.MaxBits)
			}
		}
		if err == nil || f.Info().SubFilters != 2 {
			t.Fatalf("%s: %d keys, %d sub-filters, %v", name, i, f.Info().SubFilters, err)
		}
		for j := 0; j < i-1; j++ {
			if !f.Contains(key(j)) {
				t.Fatalf("%s: key %d lost", name, j)
			}
		}
		if err := tryAddHash(f, f.Hash(key(i-1))); !errors.Is(err, ErrCannotGrow) || !strings.Contains(err.Error(), "memory budget") {
			t.Errorf("%s: AddHashReserve: %v", name, err)
		}
		if _, err := f.nextSubFilterBits(); !errors.Is(err, ErrCannotGrow) || !strings.Contains(err.Error(), "memory budget") {
			t.Errorf("%s: nextSubFilterBits: %v", name, err)
		}
		if d := describeText(f); !strings.Contains(d, "next sub-filter cannot grow") || !strings.Contains(d, "beyond the memory budget of") {
			t.Errorf("%s: the description does not show the budget's refusal:\n%s", name, d)
		}
		f.SetMaxBits(8 * c.MaxBits)
		if err := f.Add(key(i - 1)); err != nil || f.Info().SubFilters != 3 || f.MaxBits() != 8*c.MaxBits {
			t.Errorf("%s: after raising the budget: %v, %d sub-filters", name, err, f.Info().SubFilters)
		}
		f.SetMaxBits(0)
		if f.MaxBits() != 0 {
			t.Errorf("%s: SetMaxBits(0): MaxBits %d", name, f.MaxBits())
		}
		c.MaxBits = NoMaxBits
		if g := must(New(c)); g.MaxBits() != 0 {
			t.Errorf("%s: NoMaxBits: MaxBits %d", name, g.MaxBits())
		}
		c.MaxBits = first - 1
		if _, err := New(c); !errors.Is(err, ErrParam) {
			t.Errorf("%s: MaxBits below the first sub-filter: %v", name, err)
		}
		c.MaxBits = first
		if _, err := New(c); err != nil {
			t.Errorf("%s: MaxBits of the first sub-filter: %v", name, err)
		}
	}
}

func describeText(f *Filter) string {
	var b strings.Builder
	for _, fd := range describe(f) {
		fmt.Fprintln(&b, fd.Name, fd.Value, fd.Note)
	}
	return b.String()
}

// TestDefaultMaxBits: with no budget set, a filter's tables may take
// 1024 times its first sub-filter or 2^30 bits, whichever is larger, but
// at most half the memory the process may use.
func TestDefaultMaxBits(t *testing.T) {
	defer func(f func() uint64) { processMemory = f }(processMemory)
	small := must(NewRedisBloom(1000, 2, 20, 2)) // 8,192 bits
	big := must(NewRedisBloom(1<<22, 2, 20, 2))  // 2^25 bits
	for _, tc := range []struct {
		mem       uint64
		f         *Filter
		want      uint64
		situation string
	}{
		{0, small, 1 << 30, "unknown memory, small filter: 2^30"},
		{1 << 40, small, 1 << 30, "1 TiB, small filter: 2^30"},
		{1 << 40, big, 1 << 35, "1 TiB, 2^25-bit filter: 1024 times it"},
		{64 << 20, small, 1 << 28, "64 MiB: half of it, 2^28 bits"},
		{64 << 20, big, 1 << 28, "64 MiB: half of it"},
		{1 << 63, big, 1 << 35, "no overflow"},
	} {
		processMemory = func() uint64 { return tc.mem }
		if got := tc.f.MaxBits(); got != tc.want || tc.f.Info().DefaultMaxBits != tc.want {
			t.Errorf("%s: MaxBits %d, want %d", tc.situation, got, tc.want)
		}
	}
	var zero Filter
	if zero.MaxBits() != 0 {
		t.Errorf("zero Filter: MaxBits %d", zero.MaxBits())
	}
}

// Sizes computed from extreme parameters are refused, never wrapped: a
// capacity whose buckets are past 2^63 (RedisBloom's getNextN2 returns 0
// there, which became one bucket), an expansion past 32768, a growth
// whose buckets overflow 64 bits.
func TestExtremeSizes(t *testing.T) {
	for _, c := range []struct {
		capacity uint64
		bs, exp  int
	}{
		{1<<63 + 1, 1, 1}, {1<<64 - 1, 1, 1}, {1<<64 - 1, 2, 1}, {1 << 50, 1, 1},
		{1000, 2, maxExpansion + 1}, {1000, 2, 1 << 31}, {1000, 2, -1}, {1000, 2, 1<<63 - 1},
	} {
		if _, err := NewRedisBloom(c.capacity, c.bs, 20, c.exp); !errors.Is(err, ErrParam) {
			t.Errorf("NewRedisBloom(%d, %d, 20, %d): %v", c.capacity, c.bs, c.exp, err)
		}
		if _, err := New(Config{Profile: RedisBloom, Capacity: c.capacity, BucketSize: c.bs, Expansion: c.exp}); !errors.Is(err, ErrParam) {
			t.Errorf("New(RedisBloom %d, %d, %d): %v", c.capacity, c.bs, c.exp, err)
		}
	}
	for _, exp := range []int{maxExpansion + 1, 1 << 31, 3, -2} {
		if _, err := New(Config{Capacity: 1000, Expansion: exp}); !errors.Is(err, ErrParam) {
			t.Errorf("New(Expansion %d): %v", exp, err)
		}
	}
	// Growth at the largest expansion, with no budget: refused at 2^48
	// bits, nothing allocated.
	f := must(NewRedisBloom(1<<20, 1, 1, maxExpansion))
	f.SetMaxBits(0)
	f.subs = append(f.subs, sub{m: f.m0 * maxExpansion}) // pretend: no bytes
	if _, err := f.nextSubFilterBits(); !errors.Is(err, ErrCannotGrow) {
		t.Errorf("a sub-filter of 2^50 buckets: %v", err)
	}
}
