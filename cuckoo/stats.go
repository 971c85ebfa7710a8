package cuckoo

import (
	"slices"

	"github.com/bloomlab/bloomlab/theory"
)

// SubFilterStats describes one sub-filter.
type subFilterStats struct {
	Buckets uint64
	// Entries is the number of occupied slots.
	Entries uint64
	// Load is Entries / (Buckets · b).
	Load float64
	// FPR is the sub-filter's exact false-positive rate for a random
	// absent key (see EstimatedFPR).
	FPR float64
}

// Stats returns every sub-filter's statistics, oldest first. It reads the
// whole table.
func (f *Filter) stats() []subFilterStats {
	out := make([]subFilterStats, len(f.subs))
	for i := range f.subs {
		e, fpr := f.subStats(&f.subs[i])
		out[i] = subFilterStats{Buckets: f.subs[i].m, Entries: e, Load: float64(e) / float64(f.subs[i].m*uint64(f.lay.b)), FPR: fpr}
	}
	return out
}

// EstimatedFPR returns the false-positive rate of the filter's state: the
// probability that Contains answers true for a random key never added. A
// query with first bucket i and fingerprint v (uniform over the buckets
// and the 2^f − 1 nonzero values) matches if v is in bucket i or in
// bucket alt(i, v); counting, for every bucket, its distinct entries, and
// for every distinct entry e of bucket j, the query (alt(j, e), e) when
// its first bucket lacks e, gives the exact number of matching queries of
// each sub-filter; the sub-filters combine as independent, 1 − Π(1 − p_s).
// For the RedisBloom profile, whose fingerprint (h mod 255) and bucket (h
// modulo a power of two) come from one hash, the result treats them as
// independent. It reads the whole table; 0 for the zero Filter.
func (f *Filter) EstimatedFPR() float64 {
	q := 1.0
	for i := range f.subs {
		_, p := f.subStats(&f.subs[i])
		q *= 1 - p
	}
	return 1 - q
}

// FormulaFPR returns theory.FPCuckoo at each sub-filter's load, combined
// as EstimatedFPR combines them: the rate the formula predicts for the
// number of keys held.
func (f *Filter) formulaFPR() float64 {
	q := 1.0
	for i := range f.subs {
		e, _ := f.subEntries(&f.subs[i])
		q *= 1 - theory.FPCuckoo(f.lay.f, f.lay.b, float64(e)/float64(f.subs[i].m*uint64(f.lay.b)))
	}
	return 1 - q
}

// subEntries counts the occupied slots of s.
func (f *Filter) subEntries(s *sub) (uint64, error) {
	var n uint64
	if f.profile == RedisBloom {
		for _, x := range s.bytes {
			if x != 0 {
				n++
			}
		}
		return n, nil
	}
	for j := uint64(0); j < s.m; j++ {
		n += uint64(f.occupied(s, j))
	}
	return n, nil
}

// subStats returns the occupied slots and the exact rate of s.
func (f *Filter) subStats(s *sub) (entries uint64, fpr float64) {
	var hits uint64
	var e [8]uint64
	var vs []uint64
	b := uint64(f.lay.b)
	for j := uint64(0); j < s.m; j++ {
		if f.profile == RedisBloom {
			vs = vs[:0]
			for _, x := range s.bytes[j*b : (j+1)*b] {
				vs = append(vs, uint64(x))
			}
		} else {
			vs = f.entries(s, j, &e)
		}
		for k, v := range vs {
			if v == 0 {
				continue
			}
			entries++
			if slices.Contains(vs[:k], v) {
				continue // counted once per bucket
			}
			hits++
			if a := f.altOf(s, j, v); a != j && !f.holds(s, a, v) {
				hits++
			}
		}
	}
	return entries, float64(hits) / (float64(s.m) * float64(f.lay.fpMask))
}

// altOf is the other bucket of entry v in bucket j of s.
func (f *Filter) altOf(s *sub, j, v uint64) uint64 {
	if f.profile == RedisBloom {
		return (j ^ v*redisAltMul) & (s.m - 1)
	}
	return s.alt(j, v)
}

// holds reports whether bucket j of s holds v.
func (f *Filter) holds(s *sub, j, v uint64) bool {
	if f.profile == RedisBloom {
		b := uint64(f.lay.b)
		return findByte(s.bytes[j*b:(j+1)*b], byte(v)) >= 0
	}
	return f.match(s, j, v)
}
