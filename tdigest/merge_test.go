package tdigest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// BenchmarkMergeMany: TDIGEST.MERGE of many small sources into a
// destination of COMPRESSION 100000 (capacity 600,010 centroids), the
// case of issue 34 (20,000 sources: RedisBloom 44.5 s). One op merges
// every source; the sources are rebuilt outside the timer. Values are
// random doubles (ties: none) or small integers (ties: many).
func BenchmarkMergeMany(b *testing.B) {
	for _, ties := range []bool{false, true} {
		b.Run(fmt.Sprintf("sources=2000/ties=%v", ties), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			src := make([]*Digest, 2000)
			for i := range src {
				d, _ := New(100)
				for range 100 {
					v := rng.Float64() * 1000
					if ties {
						v = float64(rng.IntN(1000))
					}
					d.Add(v)
				}
				d.Compress()
				src[i] = d
			}
			for b.Loop() {
				to, _ := New(100000)
				for _, s := range src {
					if err := to.Merge(s); err != nil {
						b.Fatal(err)
					}
				}
				to.Compress()
			}
		})
	}
}

// TestSortNodesIsQsort: sortNodes leaves every array as td_qsort does,
// bit for bit: two sorted runs with and without ties between or within
// them, runs out of order, NaN and infinities, signed zeros, and short
// arrays.
func TestSortNodesIsQsort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	merges := 0
	for trial := 0; trial < 3000; trial++ {
		n := 1 + rng.IntN(400)
		k := rng.IntN(n + 1)
		means := make([]float64, n)
		weights := make([]int64, n)
		span := []float64{3, 50, 1e6}[rng.IntN(3)] // 3: ties everywhere
		for i := range means {
			means[i] = math.Floor(rng.Float64()*span) - span/2
			if span == 1e6 {
				means[i] = rng.NormFloat64()
			}
			weights[i] = 1 + rng.Int64N(9)
		}
		switch rng.IntN(8) {
		case 0:
			means[rng.IntN(n)] = math.NaN()
		case 1:
			means[rng.IntN(n)] = math.Inf(-1 + 2*rng.IntN(2))
		case 2:
			means[rng.IntN(n)] = math.Copysign(0, -1)
		}
		if rng.IntN(4) > 0 { // usually two sorted runs, as TDIGEST.MERGE makes
			slices.Sort(means[:k])
			slices.Sort(means[k:])
		}
		m1, w1 := slices.Clone(means), slices.Clone(weights)
		m2, w2 := slices.Clone(means), slices.Clone(weights)
		if n > 0 {
			qsort(m1, w1, 0, n-1)
		}
		if mergeRuns(slices.Clone(m2), slices.Clone(w2), k) {
			merges++
		}
		sortNodes(m2, w2, k)
		for i := range m1 {
			if math.Float64bits(m1[i]) != math.Float64bits(m2[i]) || w1[i] != w2[i] {
				t.Fatalf("trial %d (n %d, k %d): node %d: sortNodes (%v, %d), td_qsort (%v, %d)", trial, n, k, i, m2[i], w2[i], m1[i], w1[i])
			}
		}
	}
	if merges < 300 {
		t.Fatalf("only %d of the trials took the merge", merges)
	}
	t.Logf("%d of 3000 trials merged the runs", merges)
}
