package scalable

import (
	"math/bits"
	"sync/atomic"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/bitvec"
	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/theory"
)

// Stats is a chain's state and its rates, from Filter.Stats.
type Stats struct {
	// Links describes the links, oldest first.
	Links []LinkStats
	// FPR is the rate of the current state, from the bits: EstimatedFPR.
	FPR float64
	// Formula is 1 − Π(1 − r_i(n_i)) over the links, n_i the keys added to
	// link i and r_i its expected rate (LinkStats.Formula: the closed form
	// with the pair floor, theory.FPScheme, theory.FPBlocked for blocked
	// links or theory.FPAnyStep for RedisBloom links): the expected rate
	// of a chain with these counts. While every link is within its
	// capacity it is at most Bound in the bloomlab and blocked profiles,
	// whose links are sized so that their rate at capacity, floor
	// included, is at most their share; a RedisBloom chain with small
	// links can exceed it.
	Formula float64
	// Growth is the rate the chain is expected to reach as its links
	// fill: 1 − Π(1 − r_i) over its links at capacity
	// (LinkStats.AtCapacity) and the links it would add, up to links of
	// 2^24 bits, plus the design rates of the larger links after them
	// (Σ ε_i: their structure no longer shows). In the bloomlab and
	// blocked profiles it is at most Config().FPR; a RedisBloom chain
	// whose first links are small exceeds it (the package
	// documentation). It ignores the memory budget and stops where the
	// chain cannot grow.
	Growth float64
	// Bound is Σ ε_i over the links, the union bound on the chain's rate
	// while every link is within its capacity; it is below Config().FPR
	// (theory.FPScalableBound).
	Bound float64
}

// Stats returns the chain's links and rates, in one consistent state (it
// takes the mutex adds take). It reads every bit of every link, and
// sizes the links the chain would add (Stats.Growth). The zero Filter
// gives no links and zero rates.
func (f *Filter) Stats() Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	ls := f.snapshot()
	st := Stats{Links: linkStats(ls), Bound: fprBound(ls)}
	fps, formula := make([]float64, len(st.Links)), make([]float64, len(st.Links))
	for i, s := range st.Links {
		fps[i], formula[i] = s.FPR, s.Formula
	}
	st.FPR, st.Formula = theory.FPScalable(fps), theory.FPScalable(formula)
	if len(ls) > 0 {
		st.Growth = f.projectGrowth(ls)
	}
	return st
}

// LinkStats describes one link (Stats.Links).
type LinkStats struct {
	Capacity uint64  // keys the link was sized for (RedisBloom's entries)
	Keys     uint64  // new keys added to it
	Bits     uint64  // its memory in bits
	M        uint64  // positions a key may take: Bits, or 2^n2 for RedisBloom's power-of-two links
	K        int     // positions per key
	Rate     float64 // the design rate ε_i it was sized for
	Fill     float64 // fraction of its M positions set
	FPR      float64 // its rate, from the bits (Link.stateRate)
	Formula  float64 // its expected rate at Keys keys (Link.formulaRate)
	// AtCapacity is its expected rate once it holds Capacity keys: at
	// most Rate in the bloomlab profile; a RedisBloom link of few keys
	// exceeds it (see the package documentation).
	AtCapacity float64
}

// linkStats returns the links ls, oldest first (their chain's mutex
// held).
func linkStats(ls []*link) []LinkStats {
	out := make([]LinkStats, len(ls))
	for i, l := range ls {
		fill := float64(l.ones()) / float64(l.mod)
		out[i] = LinkStats{Capacity: l.entries, Keys: l.size, Bits: l.bits, M: l.mod, K: l.k, Rate: l.errRate,
			Fill: fill, FPR: l.stateRate(fill), Formula: l.formulaRate(l.size), AtCapacity: l.formulaRate(l.entries)}
	}
	return out
}

// formulaRate is the link's expected rate holding n keys: bloomlab,
// theory.FPScheme of enhanced double hashing (the pair floor included);
// RedisBloom, theory.FPAnyStep at the expected fill (its steps of short
// order and its pair floor included: a model, within 25% of the mean
// exact rate for power-of-two positions from 10 keys on and within a
// factor 2 below that; an upper bound for other sizes).
func (l *link) formulaRate(n uint64) float64 {
	if n == 0 {
		return 0
	}
	nf := float64(n)
	if l.blocks != 0 {
		return l.blockedRate(nf)
	}
	if l.redis {
		return theory.FPAnyStep(l.mod, nf, l.k, theory.FillAnyStep(l.mod, nf, l.k))
	}
	return theory.FPScheme(hashing.Enhanced, l.mod, nf, l.k)
}

// stateRate is the rate of the link's bits at fill: bloomlab, that of a
// standard filter's state (bitvec.StateFPR: fill^k with the pair floor
// of its keys, exact for a small link); RedisBloom, theory.FPAnyStep at
// fill, or exactly, for a small link of power-of-two positions, the
// fraction of the m² (a mod m, b mod m) pairs whose probes are all set.
// The caller holds f.mu (no add runs).
func (l *link) stateRate(fill float64) float64 {
	if l.blocks != 0 {
		return l.blockedStateRate()
	}
	if !l.redis {
		v := bitvec.Vec(l.words)
		return bitvec.StateFPR(l.ix, v.OnesIn, v.Has, l.size)
	}
	if r, ok := l.exactRedis(); ok {
		return r
	}
	return theory.FPAnyStep(l.mod, float64(l.size), l.k, fill)
}

// maxExactRedis bounds the candidate pairs exactRedis tries.
const maxExactRedis = 1 << 22

// exactRedis returns the exact rate of a RedisBloom link of 2^t positions
// whose set positions S are few (|S|² ≤ maxExactRedis): positions are
// (α + i·β) mod m with α = a mod m and β = b mod m uniform over all m²
// pairs (2^64 ≡ 0 mod m), a pair is fixed by its probes 0 and 1, so it
// counts the pairs of S × S whose other probes are set.
func (l *link) exactRedis() (float64, bool) {
	m := l.mod
	if m&(m-1) != 0 {
		return 0, false // the wraps of a + i·b mod 2^64 matter
	}
	v := bitvec.Vec(l.words)
	if o := v.OnesIn(0, m); o*o > maxExactRedis {
		return 0, false
	}
	var set []uint64
	for p := range m {
		if v.Has(p) {
			set = append(set, p)
		}
	}
	if l.k == 1 {
		return float64(len(set)) / float64(m), true
	}
	mask := m - 1
	var hits uint64
	for _, a := range set {
		for _, y := range set {
			b, all := (y-a)&mask, true
			for i, t := 2, (y+(y-a))&mask; i < l.k && all; i, t = i+1, (t+b)&mask {
				all = v.Has(t)
			}
			if all {
				hits++
			}
		}
	}
	return float64(hits) / (float64(m) * float64(m)), true
}

func (l *link) ones() uint64 {
	var c uint64
	for i := range l.words {
		c += uint64(bits.OnesCount64(atomic.LoadUint64(&l.words[i])))
	}
	return c
}

// EstimatedFPR returns the rate of the current state: 1 − Π(1 − r_i) over
// the links, r_i link i's rate given its bits (LinkStats.FPR): fill^k with
// the pair floor of the keys in it (a query whose hashes are a key's), and
// for RedisBloom links the steps of short order (theory.FPAnyStep); exact
// for small links. It is the probability that an absent key is answered
// present, given the bits (Stats.FPR).
func (f *Filter) EstimatedFPR() float64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := linkStats(f.snapshot())
	fps := make([]float64, len(st))
	for i, s := range st {
		fps[i] = s.FPR
	}
	return theory.FPScalable(fps)
}

// projectGrowth is Stats.Growth for the links ls (only their shapes are
// read).
func (f *Filter) projectGrowth(ls []*link) float64 {
	const small = 1 << 24
	var fps []float64
	for _, l := range ls {
		fps = append(fps, l.formulaRate(l.entries))
	}
	if f.options&optNoScaling != 0 {
		return theory.FPScalable(fps)
	}
	chain := append([]*link(nil), ls...)
	tail := 0.0
	for {
		kind.PlanStep()
		last := chain[len(chain)-1]
		tail = last.errRate * f.ratio / (1 - f.ratio) // the design rates past it
		if last.bits > small {
			break
		}
		s, err := f.nextShape(chain)
		if err != nil {
			tail = 0 // the chain stops here
			break
		}
		l := s.describe(f.profile)
		fps = append(fps, l.formulaRate(l.entries))
		chain = append(chain, l)
	}
	return theory.FPScalable(fps) + tail
}

// full reports whether a non-scaling filter holds its capacity (the next
// new key will be refused).
func (f *Filter) full() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	ls := f.snapshot()
	return f.nonScaling() && len(ls) > 0 && ls[len(ls)-1].size >= ls[len(ls)-1].entries
}
