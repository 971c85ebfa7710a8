package countmin

import (
	"errors"
	"fmt"
	"math"
	"math/bits"

	"github.com/bloomlab/bloomlab/hashing"
)

// The RedisBloom profile: RedisBloom's Count-Min sketch (src/cms.c and
// src/rm_cms.c, the same in 2.4.23 and 8.6.2), reproduced from its C code
// and checked against recorded transcripts and DUMP payloads.
//
// A sketch is d rows of w 32-bit counters (RedisBloom's uint32_t array,
// row i at counters i·w … i·w + w − 1) and a count N (RedisBloom's size_t
// counter, the sum of the increments). Row i of a key is column
// MurmurHash2(key, i) mod w. CMS.INCRBY adds to the key's counter in every
// row, saturating at 2^32 − 1 (cms.c, CMS_IncrBy: the uint32 sum wraps,
// and a result below the increment is set to UINT32_MAX), adds the
// increment to N (wrapping modulo 2^64) and answers the smallest of the
// key's counters after the add, or "CMS: INCRBY overflow" when that is
// 2^32 − 1 (rm_cms.c, CMSketch_IncrBy): the add is kept either way.
// CMS.QUERY answers the smallest counter. CMS.MERGE replaces the
// destination with a weighted sum of sources (cms.c, CMS_Merge), after
// checking every counter and N first (checkOverflow) and refusing the
// whole merge, changing nothing, with "CMS: MERGE overflow" if a sum
// leaves its range.
//
// Here the counters are held two to a 64-bit word, counter j in bits
// 32·(j mod 2) … of word ⌊j/2⌋: on a little-endian machine, the bytes of
// RedisBloom's array, which is also the file payload (docs/FORMAT.md).

// Profile selects how a sketch hashes keys and how wide its counters are.
type Profile uint8

// The profiles.
const (
	// Bloomlab: xxh3-128 with the sketch's seed, rows from its two halves
	// (Config.Scheme), 64-bit saturating counters, optional conservative
	// update.
	Bloomlab Profile = 1
	// RedisBloom: bit for bit RedisBloom's Count-Min sketch (CMS.*): row
	// i of a key at MurmurHash2(key, i) mod w, 32-bit counters.
	RedisBloom Profile = 2
)

func (p Profile) String() string {
	switch p {
	case Bloomlab:
		return "bloomlab"
	case RedisBloom:
		return "redisbloom"
	}
	return fmt.Sprintf("profile(%d)", uint8(p))
}

// ParseProfile returns the profile named "bloomlab" or "redisbloom".
func ParseProfile(name string) (Profile, error) {
	for _, p := range []Profile{Bloomlab, RedisBloom} {
		if p.String() == name {
			return p, nil
		}
	}
	return 0, fmt.Errorf("countmin: unknown profile %q (want bloomlab or redisbloom): %w", name, ErrParam)
}

// ErrOverflow: a counter, or the count N, cannot hold a result. IncrBy
// returns it when the key's counters are saturated (the add is kept, as in
// RedisBloom); TryAdd and MergeWeighted (and Merge and MergeScaled of
// redisbloom-profile sketches) return it having changed nothing.
var ErrOverflow = errors.New("countmin: counter overflow")

// Limits of the redisbloom profile.
const (
	// RedisMaxCounter is the largest value of a redisbloom-profile
	// counter, 2^32 − 1: counters saturate there.
	RedisMaxCounter = math.MaxUint32
	// RedisMaxDepth bounds the rows of a redisbloom-profile sketch (row i
	// hashes with seed i, a 32-bit value); w·d ≤ MaxCells bounds both.
	RedisMaxDepth = math.MaxUint32
)

// NewRedisBloom returns an empty redisbloom-profile sketch of width
// counters per row and depth rows, as CMS.INITBYDIM key width depth
// creates it: New(Config{Profile: RedisBloom, Width: width, Depth:
// depth}). width ≥ 1, 1 ≤ depth ≤ RedisMaxDepth and width·depth ≤
// MaxCells (RedisBloom's own bound is its memory); errors wrap ErrParam.
// RedisDimensions gives CMS.INITBYPROB's dimensions.
func NewRedisBloom(width uint64, depth int) (*Sketch, error) {
	return New(Config{Profile: RedisBloom, Width: width, Depth: depth})
}

// RedisDimensions returns the width and depth CMS.INITBYPROB key overEst
// prob gives a sketch, as RedisBloom's CMS_DimFromProb computes them: w =
// ⌈2/overEst⌉ in double precision, d = ⌈log10f(prob)/log10f(0.5)⌉ in single
// precision (prob rounded to a float32 first, so that 0.125 gives 3 rows
// where the exact ratio is 3, and a prob that rounds to 1 gives 0 rows).
// overEst and prob must be in (0, 1); an error wrapping ErrParam, as
// RedisBloom's "CMS: invalid init arguments", when the width would reach
// 2^63 or the depth 0 (prob below 2^−150 or rounding to 1 as a float32).
// The result may still exceed NewRedisBloom's limits.
func RedisDimensions(overEst, prob float64) (width uint64, depth int, err error) {
	if !(overEst > 0 && overEst < 1) {
		return 0, 0, fmt.Errorf("countmin: overestimation %v out of range (0, 1): %w", overEst, ErrParam)
	}
	if !(prob > 0 && prob < 1) {
		return 0, 0, fmt.Errorf("countmin: prob %v out of range (0, 1): %w", prob, ErrParam)
	}
	wf := math.Ceil(2 / overEst)
	// float32 arithmetic as C's on x86-64 (FLT_EVAL_METHOD 0): the float32
	// logarithms (correctly rounded, as glibc's log10f), their float32
	// quotient, then ceil.
	l := float32(math.Log10(float64(float32(prob))))
	h := float32(math.Log10(float64(float32(0.5))))
	df := math.Ceil(float64(l / h))
	if !(wf < 1<<63) {
		return 0, 0, fmt.Errorf("countmin: overestimation %v needs a width of %v, beyond 2^63: %w", overEst, wf, ErrParam)
	}
	if !(df >= 1 && df <= RedisMaxDepth) { // 0 for a float32 of 1, +Inf for one of 0
		return 0, 0, fmt.Errorf("countmin: prob %v gives a depth of %v (prob is rounded to a float32, %v): %w", prob, df, float32(prob), ErrParam)
	}
	return uint64(wf), int(df), nil
}

// Profile returns the sketch's profile (0 for the zero Sketch).
func (s *Sketch) Profile() Profile { return s.cfg.Profile }

// counterMax returns the largest value of s's counters: 2^32 − 1 for the
// redisbloom profile, 2^64 − 1 for bloomlab's.
func (s *Sketch) counterMax() uint64 {
	if s.cfg.Profile == RedisBloom {
		return RedisMaxCounter
	}
	return math.MaxUint64
}

// redisWords returns the 64-bit words that hold n 32-bit counters.
func redisWords(n uint64) uint64 { return (n + 1) / 2 }

// get32 returns 32-bit counter j of c.
func get32(c []uint64, j uint64) uint64 { return c[j>>1] >> (j & 1 << 5) & math.MaxUint32 }

// set32 sets 32-bit counter j of c to v (v ≤ 2^32 − 1).
func set32(c []uint64, j, v uint64) {
	sh := j & 1 << 5
	c[j>>1] = c[j>>1]&^(math.MaxUint32<<sh) | v<<sh
}

// redisAdd adds count to key's counter in each row, saturating at
// 2^32 − 1, adds count to N (wrapping, as RedisBloom's size_t), and returns
// the smallest of the key's counters after the add: CMS_IncrBy. Row i's
// column is MurmurHash2(key, i) mod w, taken without a division (Mod64
// with the sketch's reciprocal of w).
func redisAdd[K []byte | string](s *Sketch, key K, count uint64) uint64 {
	w, c, r := s.cfg.Width, s.cells, s.recip
	est := uint64(RedisMaxCounter)
	row := uint64(0)
	for i := range uint32(s.cfg.Depth) {
		j := row + hashing.Mod64(uint64(hashing.MurmurHash2(key, i)), w, r)
		row += w
		sh := j & 1 << 5
		p := &c[j>>1]
		v := *p >> sh & math.MaxUint32
		if count >= RedisMaxCounter-v {
			v = RedisMaxCounter
		} else {
			v += count
		}
		*p = *p&^(math.MaxUint32<<sh) | v<<sh
		est = min(est, v)
	}
	s.total += count
	return est
}

// redisEstimate returns the smallest of key's counters (CMS_Query), or
// with largest the largest.
func redisEstimate[K []byte | string](s *Sketch, key K, largest bool) uint64 {
	w, c, r := s.cfg.Width, s.cells, s.recip
	est, top := uint64(RedisMaxCounter), uint64(0)
	row := uint64(0)
	for i := range uint32(s.cfg.Depth) {
		j := row + hashing.Mod64(uint64(hashing.MurmurHash2(key, i)), w, r)
		row += w
		v := c[j>>1] >> (j & 1 << 5) & math.MaxUint32
		est, top = min(est, v), max(top, v)
	}
	if largest {
		return top
	}
	return est
}

// IncrBy adds count to key, as Add does, and returns key's estimate after
// the add: one item of CMS.INCRBY. When that estimate is the largest value
// a counter holds (2^32 − 1 in the redisbloom profile, 2^64 − 1 in
// bloomlab's), the key's counters are saturated and IncrBy returns the
// estimate with an error wrapping ErrOverflow; the add is kept (counters
// saturated, N increased), as RedisBloom keeps it when it answers "CMS:
// INCRBY overflow" (rm_cms.c, CMSketch_IncrBy, whose test is the
// estimate's being UINT32_MAX: a key whose counters reach exactly 2^32 − 1
// gets the error too). TryAdd refuses such an add instead. It panics on
// the zero Sketch.
func (s *Sketch) IncrBy(key []byte, count uint64) (uint64, error) {
	s.mustBeMade("IncrBy")
	var est uint64
	if s.cfg.Profile == RedisBloom {
		est = redisAdd(s, key, count)
	} else {
		s.Add(key, count)
		est = s.Estimate(key)
	}
	if est == s.counterMax() {
		return est, fmt.Errorf("countmin: key %q after adding %d: estimate %d, the largest a counter holds: its counters are saturated (the add is kept): %w",
			clip(key), count, est, ErrOverflow)
	}
	return est, nil
}

// TryAdd adds count to key and returns key's estimate after the add,
// unless the add would leave one of the key's counters at the largest
// value a counter holds (2^32 − 1 in the redisbloom profile, 2^64 − 1 in
// bloomlab's), where a counter is saturated: then it returns an error
// wrapping ErrOverflow and changes nothing. Every counter it leaves is
// exact, so that the estimate stays an upper bound of the key's count
// (a key whose counter is already saturated is refused any add, 0
// included). It panics on the zero Sketch.
func (s *Sketch) TryAdd(key []byte, count uint64) (uint64, error) {
	s.mustBeMade("TryAdd")
	mx := s.counterMax()
	var refuse bool
	var from uint64 // the counter the add takes furthest
	switch {
	case s.cfg.Profile == RedisBloom:
		from = redisEstimate(s, key, true)
		refuse = count >= mx-from
	case s.cfg.Conservative: // the counters are raised to estimate + count
		from = s.Estimate(key)
		refuse = count >= mx-from || s.largest(key) == mx
	default:
		from = s.largest(key)
		refuse = count >= mx-from
	}
	if refuse {
		return s.Estimate(key), fmt.Errorf("countmin: adding %d to key %q would leave a counter (now %d) at %d, where counters saturate: nothing changed: %w",
			count, clip(key), from, mx, ErrOverflow)
	}
	if s.cfg.Profile == RedisBloom {
		return redisAdd(s, key, count), nil
	}
	s.Add(key, count)
	return s.Estimate(key), nil
}

// largest returns the largest of key's counters in a bloomlab-profile
// sketch.
func (s *Sketch) largest(key []byte) uint64 {
	d := hashing.Sum(key, s.cfg.Seed)
	var buf [MaxDepth]uint64
	var top uint64
	for i, p := range s.ix.Positions(d, buf[:0]) {
		top = max(top, s.cells[uint64(i)*s.cfg.Width+p])
	}
	return top
}

// clip returns key for an error message, cut to 64 bytes.
func clip(key []byte) string {
	if len(key) > 64 {
		return string(key[:64]) + "…"
	}
	return string(key)
}

// MergeWeighted sets s to the weighted sum of srcs, Σ weights[k]·srcs[k],
// counter by counter and for N: RedisBloom's CMS.MERGE s len(srcs) srcs…
// WEIGHTS weights… (cms.c, CMS_Merge). s's own counts are replaced; s may
// be one of srcs, any number of times (its counts before the call are
// used). s and every source must be redisbloom-profile sketches of the
// same width and depth (ErrIncompatible; a bloomlab-profile s: ErrParam,
// as are len(weights) ≠ len(srcs), no source and a nil or zero one).
//
// Weights may be negative, as RedisBloom accepts them. As RedisBloom
// checks before it changes anything (checkOverflow), MergeWeighted
// refuses, changing nothing, with an error wrapping ErrOverflow when for
// some counter a product of a source's counter and its weight, or a
// partial sum of the products in srcs order, leaves the signed 64-bit
// range, or the sum is below 0 or above 2^32 − 1; and the same for N, whose
// sum must not be negative. With a negative weight s no longer sketches a
// stream: an estimate can fall below the count of a key added to a
// positively weighted source (a counter it shares with a key of a
// negatively weighted one is lowered by that key's count too), and a
// saturated source counter is subtracted as 2^32 − 1.
func (s *Sketch) MergeWeighted(srcs []*Sketch, weights []int64) error {
	switch {
	case s.zero():
		return errZero("MergeWeighted")
	case s.cfg.Profile != RedisBloom:
		return fmt.Errorf("countmin: MergeWeighted is RedisBloom's CMS.MERGE, for redisbloom-profile sketches; this one is %v (use Merge or MergeScaled): %w", s.cfg.Profile, ErrParam)
	case len(srcs) == 0 || len(weights) != len(srcs):
		return fmt.Errorf("countmin: MergeWeighted of %d sketches with %d weights, want as many weights as sketches, at least one: %w", len(srcs), len(weights), ErrParam)
	}
	for k, t := range srcs {
		switch {
		case t == nil:
			return fmt.Errorf("countmin: MergeWeighted: source %d is nil: %w", k, ErrParam)
		case t.zero():
			return fmt.Errorf("countmin: MergeWeighted: source %d is the zero Sketch, which has no counters; create one with New, NewWithEstimates or NewRedisBloom: %w", k, ErrParam)
		case t.cfg.Profile != RedisBloom:
			return fmt.Errorf("countmin: merge: source %d is a %v-profile sketch, want redisbloom: %w", k, t.cfg.Profile, ErrIncompatible)
		case t.cfg.Width != s.cfg.Width || t.cfg.Depth != s.cfg.Depth:
			return fmt.Errorf("countmin: merge: source %d is %d × %d, want %d × %d (width × depth): %w", k, t.cfg.Width, t.cfg.Depth, s.cfg.Width, s.cfg.Depth, ErrIncompatible)
		}
	}
	n := s.cfg.Width * uint64(s.cfg.Depth)
	for j := range n {
		var sum int64
		for k, t := range srcs {
			p, ok := mulInt64(get32(t.cells, j), weights[k])
			if ok {
				sum, ok = addInt64(sum, p)
			}
			if !ok {
				return fmt.Errorf("countmin: merge: row %d, column %d: %d·%d or the sum before it leaves the signed 64-bit range: nothing changed: %w",
					j/s.cfg.Width, j%s.cfg.Width, get32(t.cells, j), weights[k], ErrOverflow)
			}
		}
		if sum < 0 || sum > RedisMaxCounter {
			return fmt.Errorf("countmin: merge: row %d, column %d: the weighted sum %d is outside [0, 2^32 − 1]: nothing changed: %w",
				j/s.cfg.Width, j%s.cfg.Width, sum, ErrOverflow)
		}
	}
	var total int64
	for k, t := range srcs {
		p, ok := mulInt64(t.total, weights[k])
		if ok {
			total, ok = addInt64(total, p)
		}
		if !ok {
			return fmt.Errorf("countmin: merge: the count N: %d·%d or the sum before it leaves the signed 64-bit range: nothing changed: %w", t.total, weights[k], ErrOverflow)
		}
	}
	if total < 0 {
		return fmt.Errorf("countmin: merge: the weighted sum of the counts N is %d, negative: nothing changed: %w", total, ErrOverflow)
	}
	// Checked: write. Counter j of every source is read before counter j
	// of s is written, and nothing else of s after, so s may be a source.
	for j := range n {
		var sum int64
		for k, t := range srcs {
			sum += int64(get32(t.cells, j)) * weights[k]
		}
		set32(s.cells, j, uint64(sum))
	}
	s.total = uint64(total)
	return nil
}

// mulInt64 returns u·w if the exact product fits an int64 (GCC's
// __builtin_mul_overflow into an int64_t, as RedisBloom's checkOverflow
// uses it).
func mulInt64(u uint64, w int64) (int64, bool) {
	m := uint64(w)
	if w < 0 {
		m = -m // |w|, 2^63 for the smallest int64
	}
	hi, lo := bits.Mul64(u, m)
	switch {
	case hi != 0:
		return 0, false
	case w < 0:
		return int64(-lo), lo <= 1<<63
	default:
		return int64(lo), lo <= math.MaxInt64
	}
}

// addInt64 returns a + b if it fits an int64 (__builtin_add_overflow).
func addInt64(a, b int64) (int64, bool) {
	s := a + b
	return s, (a >= 0) != (b >= 0) || (s >= 0) == (a >= 0)
}

// redisMerge is Merge and MergeScaled of a redisbloom-profile s: RedisBloom's
// CMS.MERGE s 2 s t WEIGHTS 1 w.
func (s *Sketch) redisMerge(t *Sketch, w uint64) error {
	if w > math.MaxInt64 {
		return fmt.Errorf("countmin: merge: weight %d beyond 2^63 − 1, RedisBloom's largest: nothing changed: %w", w, ErrOverflow)
	}
	srcs := [2]*Sketch{s, t}
	weights := [2]int64{1, int64(w)}
	return s.MergeWeighted(srcs[:], weights[:])
}

// redisFPR is EstimatedFPR of a redisbloom-profile sketch: Π over rows of
// the fraction of nonzero counters (the rows' hashes, MurmurHash2 with
// distinct seeds, taken as independent).
func (s *Sketch) redisFPR() float64 {
	w := s.cfg.Width
	p := 1.0
	for i := range uint64(s.cfg.Depth) {
		nz := 0
		for j := i * w; j < (i+1)*w; j++ {
			if get32(s.cells, j) != 0 {
				nz++
			}
		}
		p *= float64(nz) / float64(w)
	}
	return p
}
