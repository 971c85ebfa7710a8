package choices

import (
	"testing"

	"github.com/bloomlab/bloomlab/hashing"
)

// refAdd is the greedy insert as first written: every group's k positions
// into a buffer (hashing.Indexer.Positions), the distinct zero positions
// counted per group, ties drawn from f's generator, the chosen group's
// positions set. Filter.add must set the same bits and make the same
// draws.
func refAdd(f *Filter, d hashing.Digest) {
	var buf [MaxC * hashing.MaxK]uint64
	k := f.k
	best, bestNew, ties := 0, k+1, uint64(0)
	for g := 0; g < f.c; g++ {
		pos := f.ix.Positions(GroupDigest(d, g), buf[g*k:])
		nw := 0
		var zs []uint64
		for _, p := range pos {
			if !f.bits.Has(p) && !containsPos(zs, p) {
				zs = append(zs, p)
				nw++
			}
		}
		if nw < bestNew {
			best, bestNew, ties = g, nw, 1
			if nw == 0 {
				break
			}
		} else if nw == bestNew {
			ties++
			if f.randBelow(ties) == 0 {
				best = g
			}
		}
	}
	for _, p := range buf[best*k : best*k+k] {
		f.bits.Set(p)
	}
	f.n++
}

// TestAddMatchesReference pins Filter.add to refAdd bit for bit and draw
// for draw, over every group scheme, c from 1 to MaxC, k from 1 to 64 and
// filters small enough that positions of a group coincide and ties are
// common, in both the plain and the atomic (KeyedFilter) form.
func TestAddMatchesReference(t *testing.T) {
	for _, s := range groupSchemes {
		for _, c := range []int{1, 2, 3, MaxC} {
			for _, k := range []int{1, 2, 7, 13, 25, 64} {
				for _, m := range []uint64{1, 2, 61, 64, 1000, 20000} {
					cfg := Config{M: m, K: k, C: c, Scheme: s, TieSeed: m ^ uint64(k)}
					f, ref := must(New(cfg)), must(New(cfg))
					n := min(int(m/4)+20, 2000)
					for i, d := range digests(n, uint64(c*1000+k)) {
						f.add(d, i%3 == 0)
						refAdd(ref, d)
						if !f.Equal(ref) || f.rng != ref.rng || f.N() != ref.N() {
							t.Fatalf("%v c=%d k=%d m=%d: key %d: bits, generator or count differ from the reference", s, c, k, m, i)
						}
					}
				}
			}
		}
	}
}

// The insert KeyedFilter uses (atomic bit updates, bits left alone while
// counting) allocates nothing either; TestNoAllocs covers the plain one.
func TestAddSharedNoAllocs(t *testing.T) {
	for _, s := range groupSchemes {
		f := must(New(Config{M: 1 << 16, K: 13, C: 3, Scheme: s}))
		ds := digests(64, 9)
		i := 0
		if a := testing.AllocsPerRun(50, func() { f.add(ds[i&63], true); i++ }); a != 0 {
			t.Errorf("%v: add(d, true): %v allocs", s, a)
		}
	}
}
