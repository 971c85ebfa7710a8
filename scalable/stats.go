package scalable

import (
	"math"
	"math/bits"
	"sync/atomic"

	"github.com/bloomlab/bloomlab/theory"
)

// LinkStats describes one link.
type LinkStats struct {
	Capacity uint64  // keys the link was sized for (RedisBloom's entries)
	Keys     uint64  // new keys added to it
	Bits     uint64  // its memory in bits
	M        uint64  // positions a key may take: Bits, or 2^n2 for RedisBloom's power-of-two links
	K        int     // positions per key
	Rate     float64 // the design rate ε_i it was sized for
	Fill     float64 // fraction of its M positions set
	FPR      float64 // Fill^K: its rate, from the bits
	Formula  float64 // theory.FPExact(M, Keys, K): its expected rate at Keys keys
}

// LinkStats returns the links, oldest first.
func (f *Filter) LinkStats() []LinkStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	ls := f.snapshot()
	out := make([]LinkStats, len(ls))
	for i, l := range ls {
		fill := float64(l.ones()) / float64(l.mod)
		out[i] = LinkStats{Capacity: l.entries, Keys: l.size, Bits: l.bits, M: l.mod, K: l.k, Rate: l.errRate,
			Fill: fill, FPR: math.Pow(fill, float64(l.k)), Formula: theory.FPExact(float64(l.mod), float64(l.size), l.k)}
	}
	return out
}

func (l *link) ones() uint64 {
	var c uint64
	for i := range l.words {
		c += uint64(bits.OnesCount64(atomic.LoadUint64(&l.words[i])))
	}
	return c
}

// EstimatedFPR returns the rate of the current state: 1 − Π(1 − fill_i^k_i)
// over the links, fill_i the fraction of link i's positions set. It is the
// probability that an absent key is answered present, given the bits.
func (f *Filter) EstimatedFPR() float64 {
	st := f.LinkStats()
	fps := make([]float64, len(st))
	for i, s := range st {
		fps[i] = s.FPR
	}
	return theory.FPScalable(fps)
}

// FormulaFPR returns 1 − Π(1 − FPExact(m_i, n_i, k_i)) over the links, n_i
// the keys added to link i: the expected rate of a chain with these
// counts. While every link is within its capacity it is at most FPRBound
// in the bloomlab profile, whose links are sized so that FPExact at
// capacity is at most their share.
func (f *Filter) FormulaFPR() float64 {
	st := f.LinkStats()
	fps := make([]float64, len(st))
	for i, s := range st {
		fps[i] = s.Formula
	}
	return theory.FPScalable(fps)
}

// Full reports whether a non-scaling filter holds its capacity (the next
// new key will be refused).
func (f *Filter) Full() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	ls := f.snapshot()
	return f.NonScaling() && len(ls) > 0 && ls[len(ls)-1].size >= ls[len(ls)-1].entries
}

// Info is what RedisBloom's BF.INFO reports.
type Info struct {
	Capacity  uint64 // Σ of the links' entries
	Size      uint64 // RedisBloom's memory usage in bytes: 32 + Σ (64 + link bytes)
	Filters   int    // links
	Items     uint64 // "Number of items inserted" (N)
	Expansion uint32 // 0 for a non-scaling filter (RedisBloom replies nil)
}

// RedisInfo returns the BF.INFO fields of f.
func (f *Filter) RedisInfo() Info {
	f.mu.Lock()
	defer f.mu.Unlock()
	ls := f.snapshot()
	info := Info{Filters: len(ls), Items: f.card.Load(), Expansion: f.growth}
	var bytes uint64
	for _, l := range ls {
		info.Capacity += l.entries
		bytes += l.bits / 8
	}
	info.Size = redisMemUsage(bytes, len(ls))
	if f.NonScaling() {
		info.Expansion = 0
	}
	return info
}
