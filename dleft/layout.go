package dleft

// The bucket encoding: the counter field's states and the fingerprint
// lengths they imply. Everything here is computed once, at construction,
// into tables the hot paths index.

import (
	"fmt"
	"math/bits"
)

// state is what one value of a bucket's counter field means.
type state struct {
	valid bool
	load  uint8    // a: fingerprints in the bucket
	pre   uint8    // p: implicit prefix bits (0 none, 1 or 2 semi-sorted)
	cnt   [4]uint8 // fingerprints per prefix value (cnt[0] = a when p = 0)
	start [5]uint8 // start[v] = Σ_{u<v} cnt[u]: slot range of prefix v
}

type stateKey struct {
	load uint8
	cnt  [4]uint8
}

// modeFor returns the number of implicit prefix bits a bucket of load a
// has under the encoding (bucketBits, semisort): 002 §II-B's choices.
//
//   - 64-bit buckets, 4-bit counter: no semi-sorting, or the 1-bit form for
//     loads 4 and 5 only (16 states: loads 0-3 and 6 plain, 5 values of the
//     0-count at load 4, 6 at load 5), loads up to 6.
//   - 128-bit buckets, 8-bit counter: no semi-sorting; the 1-bit form at
//     every load up to 21 (Σ_{a≤21} (a+1) = 253 states); or the 2-bit form
//     (counts of the prefixes 00, 01, 10, 11) at loads 6 and 7 (84 + 120
//     states) and the 1-bit form at loads 0-5 and 8-10 (51 states), 255
//     states in all. 002 writes a ∈ [1, 11], but load 11 would need 267
//     states, more than 8 bits hold; Table II's mass at load 10 is 1.8e-92.
//
// It returns -1 for a load the encoding cannot express.
func modeFor(bucketBits int, ss Semisort, a int) int {
	type encoding struct {
		bits int
		ss   Semisort
	}
	switch (encoding{bucketBits, ss}) {
	case encoding{64, SemisortNone}:
		return upTo(a, 15, 0)
	case encoding{64, Semisort1}:
		if a == 4 || a == 5 {
			return 1
		}
		return upTo(a, 6, 0)
	case encoding{128, SemisortNone}:
		return upTo(a, 255, 0)
	case encoding{128, Semisort1}:
		return upTo(a, 21, 1)
	case encoding{128, Semisort2}:
		if a == 6 || a == 7 {
			return 2
		}
		return upTo(a, 10, 1)
	}
	return -1
}

// upTo returns p for loads a ≤ most, -1 beyond.
func upTo(a, most, p int) int {
	if a <= most {
		return p
	}
	return -1
}

// buildStates enumerates the counter values in order: load 0, 1, 2, …;
// within a load, the prefix counts in lexicographic order (the 0-count
// from 0 to a for the 1-bit form; (n00, n01, n10) lexicographically, n11 =
// a − n00 − n01 − n10, for the 2-bit form). Counter values past the last
// state are invalid.
func buildStates(bucketBits int, ss Semisort) (states []state, index map[stateKey]uint16, maxLoad int) {
	limit := 1 << (bucketBits / 16)
	index = map[stateKey]uint16{}
	add := func(a, p int, cnt [4]uint8) bool {
		if len(states) >= limit {
			return false
		}
		s := state{valid: true, load: uint8(a), pre: uint8(p), cnt: cnt}
		for v := 0; v < 4; v++ {
			s.start[v+1] = s.start[v] + cnt[v]
		}
		index[stateKey{uint8(a), cnt}] = uint16(len(states))
		states = append(states, s)
		return true
	}
	maxLoad = -1
outer:
	for a := 0; ; a++ {
		p := modeFor(bucketBits, ss, a)
		if p < 0 {
			break
		}
		switch p {
		case 0:
			if !add(a, 0, [4]uint8{uint8(a)}) {
				break outer
			}
		case 1:
			if len(states)+a+1 > limit {
				break outer
			}
			for c0 := 0; c0 <= a; c0++ {
				add(a, 1, [4]uint8{uint8(c0), uint8(a - c0)})
			}
		case 2:
			if len(states)+(a+1)*(a+2)*(a+3)/6 > limit {
				break outer
			}
			for n0 := 0; n0 <= a; n0++ {
				for n1 := 0; n0+n1 <= a; n1++ {
					for n2 := 0; n0+n1+n2 <= a; n2++ {
						add(a, 2, [4]uint8{uint8(n0), uint8(n1), uint8(n2), uint8(a - n0 - n1 - n2)})
					}
				}
			}
		}
		maxLoad = a
	}
	for len(states) < limit {
		states = append(states, state{})
	}
	return states, index, maxLoad
}

// firstStates returns, for every load a ≤ maxLoad, the counter value of
// the first state of load a in the order of buildStates.
func firstStates(states []state, maxLoad int) []uint16 {
	first := make([]uint16, maxLoad+1)
	for i := len(states) - 1; i >= 0; i-- {
		if s := states[i]; s.valid && int(s.load) <= maxLoad {
			first[s.load] = uint16(i)
		}
	}
	return first
}

// fpTable returns bits[a][A]: the length f of every fingerprint in a
// bucket of load a whose group holds A fingerprints in all (A = a without
// grouping), or -1 if the bucket cannot be in that state (over the
// encoding's maximum load, or f below minBits).
//
// 002 gives a fingerprint w(A) + p(a) bits, w(A) = ⌊g·F/A⌋ stored and p(a)
// implicit (semi-sorting), F = bucketBits − counter bits. Fingerprints can
// only be truncated, never lengthened, so the lengths must not grow along
// any insertion: adding to another bucket of the group (A → A+1) only
// lowers w, but adding to this bucket can raise p(a) by one while w(A+1) =
// w(A) (with grouping; e.g. A = 19 → 20 with g·F = 240), and the bucket's
// fingerprints lack the bit that would need. The table therefore uses
//
//	f(a, A) = min(w(A) + p(a), f(a−1, A−1), 64),
//
// which is non-increasing along every insertion and equals 002's value
// whenever that is (always without grouping). 64 is the fingerprint hash's
// width.
func fpTable(bucketBits, group, minBits int, states []state, maxLoad int) [][]int {
	fbits := (bucketBits - bucketBits/16) * group
	pOf := make([]int, maxLoad+1)
	for a := range pOf {
		pOf[a] = -1
	}
	for _, s := range states {
		if s.valid {
			pOf[s.load] = int(s.pre)
		}
	}
	maxA := group * maxLoad
	t := make([][]int, maxLoad+1)
	for a := range t {
		t[a] = make([]int, maxA+1)
		for A := range t[a] {
			t[a][A] = -1
			if A < a || A > maxA {
				continue
			}
			if a == 0 {
				t[a][A] = 64 // no fingerprints: any length
				continue
			}
			f := min(fbits/A+pOf[a], 64)
			if a > 1 || A > 1 {
				prev := 64
				if a-1 >= 1 {
					prev = t[a-1][A-1]
				}
				if prev < 0 {
					continue
				}
				f = min(f, prev)
			}
			if f < minBits || f < pOf[a]+1 {
				continue
			}
			t[a][A] = f
		}
	}
	// A state unreachable because its predecessor was cut stays -1; every
	// later state of that bucket is cut too (monotone), which is what
	// makes "full" well defined.
	return t
}

// fast64 is the per-state record of the single-word lookup (64-bit
// buckets, no grouping): fingerprints of w bits at bits 4 + k·w.
type fast64 struct {
	pre   uint8     // implicit prefix bits p
	shift uint8     // 64 − w: the query's stored part is (h << p) >> shift
	ones  uint64    // bit k·w set for k < a (broadcast multiplier)
	hi    uint64    // bit k·w + w − 1 set for k < a
	low   uint64    // the w − 1 low bits of every field k < a
	rng   [4]uint64 // hi restricted to the slots of prefix v
}

func buildFast64(states []state, fb [][]int) [16]fast64 {
	var out [16]fast64
	for i, s := range states[:16] {
		if !s.valid || s.load == 0 {
			continue // all masks zero: never matches
		}
		a := int(s.load)
		f := fb[a][a]
		if f < 0 {
			continue
		}
		w := f - int(s.pre)
		e := fast64{pre: s.pre, shift: uint8(64 - w)}
		fieldLow := uint64(1)<<(w-1) - 1
		for k := 0; k < a; k++ {
			e.ones |= 1 << (k * w)
			e.hi |= 1 << (k*w + w - 1)
			e.low |= fieldLow << (k * w)
		}
		for v := 0; v < 1<<s.pre; v++ {
			for k := int(s.start[v]); k < int(s.start[v+1]); k++ {
				e.rng[v] |= 1 << (k*w + w - 1)
			}
		}
		if s.pre == 0 {
			e.rng[0] = e.hi
		}
		out[i] = e
	}
	return out
}

// fast128 is the per-load record of the 128-bit lookup without grouping
// (contains128): the a fingerprints of a bucket of load a are w-bit slots
// of its 120-bit fingerprint field, slot k at bit k·w. Masks are 128 bits,
// low word first.
type fast128 struct {
	pre   uint8     // implicit prefix bits p
	w     uint8     // stored bits per fingerprint
	shift uint8     // 64 − w: the query's stored part is (h << p) >> shift
	ones  [2]uint64 // bit k·w set for k < a (broadcast multiplier)
	hi    [2]uint64 // bit k·w + w − 1 set for k < a
	low   [2]uint64 // the w − 1 low bits of every slot k < a
}

// buildFast128 returns the fast128 record of every load up to maxLoad (a
// load whose length is -1 gets zero masks: it never matches, and no
// bucket can hold it).
func buildFast128(states []state, fb [][]int, maxLoad int) []fast128 {
	out := make([]fast128, maxLoad+1)
	for _, s := range states {
		a := int(s.load)
		if !s.valid || a == 0 || a > maxLoad || fb[a][a] < 0 {
			continue
		}
		w := fb[a][a] - int(s.pre)
		e := fast128{pre: s.pre, w: uint8(w), shift: uint8(64 - w)}
		set := func(m *[2]uint64, bit int) { m[bit>>6] |= 1 << (bit & 63) }
		for k := 0; k < a; k++ {
			set(&e.ones, k*w)
			set(&e.hi, k*w+w-1)
			for b := 0; b < w-1; b++ {
				set(&e.low, k*w+b)
			}
		}
		out[a] = e
	}
	return out
}

// getBits returns the w ≤ 64 bits at bit offset off of ws.
func getBits(ws []uint64, off uint, w uint) uint64 {
	i, sh := off>>6, off&63
	v := ws[i] >> sh
	if sh+w > 64 {
		v |= ws[i+1] << (64 - sh)
	}
	if w < 64 {
		v &= 1<<w - 1
	}
	return v
}

// putBits stores the low w ≤ 64 bits of v at bit offset off of ws, whose
// bits there are zero.
func putBits(ws []uint64, off uint, w uint, v uint64) {
	if w < 64 {
		v &= 1<<w - 1
	}
	i, sh := off>>6, off&63
	ws[i] |= v << sh
	if sh+w > 64 {
		ws[i+1] |= v >> (64 - sh)
	}
}

func log2(x int) uint { return uint(bits.TrailingZeros(uint(x))) }

func (s Semisort) String() string {
	switch s {
	case SemisortNone:
		return "none"
	case Semisort1:
		return "1-bit"
	case Semisort2:
		return "2-bit"
	case SemisortAuto:
		return "auto"
	}
	return fmt.Sprintf("semisort(%d)", int(s))
}
