package cuckoo

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// checkCounted fails if f claims to be counted (Filter.counted) but a
// sub-filter's used or full bit disagrees with its bytes.
func checkCounted(t *testing.T, f *Filter, when string) {
	t.Helper()
	if !f.counted {
		return
	}
	for si := range f.subs {
		s := &f.subs[si]
		var held uint64
		for _, x := range s.bytes {
			if x != 0 {
				held++
			}
		}
		full := si>>6 < len(f.full) && f.full[si>>6]>>(si&63)&1 == 1
		if s.used != held || full != (held == s.m*uint64(f.lay.b)) {
			t.Fatalf("%s: sub-filter %d: used %d, full bit %v, but %d of %d slots held", when, si, s.used, full, held, s.m*uint64(f.lay.b))
		}
	}
	for w := range f.full {
		for x := f.full[w]; x != 0; x &= x - 1 {
			if si := w*64 + bits.TrailingZeros64(x); si >= len(f.subs) {
				t.Fatalf("%s: full bit for sub-filter %d of %d", when, si, len(f.subs))
			}
		}
	}
}

// TestSkipFullSubFilters: the insert scan that skips full sub-filters
// (Filter.full) places every fingerprint where RedisBloom's scan of every
// sub-filter does, under random adds, deletes, compactions, clears,
// merges, clones and dump round trips, on long chains (EXPANSION 1,
// BUCKETSIZE 1 and 2) and short ones. The reference filter forgets its
// counts before every insert, so each of its scans is a recount and an
// exhaustive one.
func TestSkipFullSubFilters(t *testing.T) {
	for _, c := range []struct{ capacity, b, exp int }{{2, 1, 1}, {4, 2, 1}, {8, 2, 2}, {64, 4, 1}} {
		t.Run(fmt.Sprintf("cap%d-b%d-exp%d", c.capacity, c.b, c.exp), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(c.capacity), uint64(c.b)))
			f, err := NewRedisBloom(uint64(c.capacity), c.b, 20, c.exp)
			if err != nil {
				t.Fatal(err)
			}
			f.SetMaxBits(NoMaxBits)
			ref := f.Clone()
			keys := 40 + 4*c.capacity // few distinct keys: long chains of one key's copies
			most := 0
			for op := 0; op < 20000; op++ {
				key := []byte(fmt.Sprint("k", rng.IntN(keys)))
				what := ""
				switch r := rng.IntN(100); {
				case r < 70:
					what = "add"
					ref.counted = false
					e1, e2 := f.Add(key), ref.Add(key)
					if (e1 == nil) != (e2 == nil) {
						t.Fatalf("op %d: add: %v, reference %v", op, e1, e2)
					}
				case r < 90:
					what = "delete"
					if a, b := f.Delete(key), ref.Delete(key); a != b {
						t.Fatalf("op %d: delete: %v, reference %v", op, a, b)
					}
				case r < 93:
					what = "compact"
					f.Compact()
					ref.Compact()
				case r < 95:
					what = "clone"
					f = f.Clone()
				case r < 97:
					what = "dump round trip (uncounted)"
					chunks, err := f.Dump(64)
					if err != nil {
						t.Fatal(err)
					}
					if f, err = loadChunks(chunks); err != nil {
						t.Fatal(err)
					}
					f.SetMaxBits(NoMaxBits)
				case r < 99:
					what = "merge"
					g, _ := NewRedisBloom(uint64(c.capacity), c.b, 20, c.exp)
					g.Add(key)
					e1, e2 := f.Merge(g), ref.Merge(g)
					if (e1 == nil) != (e2 == nil) {
						t.Fatalf("op %d: merge: %v, reference %v", op, e1, e2)
					}
				default:
					what = "clear"
					f.Clear()
					ref.Clear()
				}
				most = max(most, len(f.subs))
				checkCounted(t, f, fmt.Sprint("op ", op, " ", what))
				if !f.Equal(ref) {
					t.Fatalf("op %d (%s): the tables differ from the exhaustive scan's (%d and %d sub-filters)", op, what, len(f.subs), len(ref.subs))
				}
			}
			if most < 8 {
				t.Fatalf("the run grew no chain (at most %d sub-filters)", most)
			}
			t.Logf("at most %d sub-filters", most)
		})
	}
}

// TestNonzeroBytes checks the word-at-a-time count against a byte loop
// on every byte value in every position and on random buffers of every
// length up to 40.
func TestNonzeroBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	check := func(b []byte) {
		var want uint64
		for _, x := range b {
			if x != 0 {
				want++
			}
		}
		if got := nonzeroBytes(b); got != want {
			t.Fatalf("nonzeroBytes(%x) = %d, want %d", b, got, want)
		}
	}
	for v := 0; v < 256; v++ {
		for at := 0; at < 9; at++ {
			b := make([]byte, 9)
			b[at] = byte(v)
			check(b)
		}
	}
	for n := 0; n <= 40; n++ {
		for range 50 {
			b := make([]byte, n)
			for i := range b {
				if rng.IntN(3) > 0 {
					b[i] = byte(rng.IntN(256))
				}
			}
			check(b)
		}
	}
}
