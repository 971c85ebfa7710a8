package choices

import (
	"fmt"
	"math"

	"github.com/bloomlab/bloomlab/hashing"
)

// MaxRounds is the largest number of rounds an offline build accepts.
const MaxRounds = 100_000

// maxPositions bounds n·c·k for one offline build (2^34 positions: 64 GiB
// of position tables), so a mistaken call fails with an error instead of
// exhausting memory slowly.
const maxPositions = 1 << 34

// pos32Limit: builds with m below it store positions in 32 bits (the
// sentinel m included). A variable so that tests can exercise the 64-bit
// path without a 2^32-bit filter.
var pos32Limit uint64 = 1<<32 - 1

// saturated is the sticky value of an offline counter: a counter that
// reaches it is never incremented or decremented again, so it stays
// nonzero and its bit stays set (never a false negative).
const saturated = 255

// Build returns the c-choice filter for cfg built offline from keys with
// the given number of rounds (000 §3.2): see Builder.Build. keys are hashed
// with cfg.Seed.
func Build(cfg Config, keys [][]byte, rounds int) (*Filter, error) {
	f, err := New(cfg)
	if err != nil {
		return nil, err
	}
	ds := make([]hashing.Digest, len(keys))
	for i, key := range keys {
		ds[i] = hashing.Sum(key, f.seed)
	}
	var b Builder
	if err := b.Build(f, ds, rounds); err != nil {
		return nil, err
	}
	return f, nil
}

// BuildHash is Build for pre-hashed keys (digests under cfg.Seed).
func BuildHash(cfg Config, keys []hashing.Digest, rounds int) (*Filter, error) {
	f, err := New(cfg)
	if err != nil {
		return nil, err
	}
	var b Builder
	if err := b.Build(f, keys, rounds); err != nil {
		return nil, err
	}
	return f, nil
}

// Builder runs the offline greedy algorithm of 000 §3.2. It keeps its
// scratch memory (counters, position tables, each key's group) between
// builds, so building repeatedly with one Builder allocates only when a
// build needs more memory than the previous ones. The zero value is ready
// to use. A Builder is not safe for concurrent use.
type Builder struct {
	cnt   []uint8
	pos32 []uint32
	pos64 []uint64
	grp   []uint8
}

// Build replaces the contents of f with the filter of exactly keys (digests
// under f's seed), built offline in the given number of rounds, 1 …
// MaxRounds. Rounds counts, as in 000 Table 3, how many times each key is
// inserted:
//
//   - round 1 inserts the keys in order into a counting filter (8-bit
//     counters, nonzero meaning one) by the online greedy rule, exactly as
//     Add would (a Build with one round sets the same bits as Add on the
//     same keys with the same generator state);
//   - each further round takes the keys in the same order, removes each from
//     its current group (decrementing its counters) and re-inserts it into
//     the group needing the fewest new ones given every other key's current
//     group, ties broken uniformly at random by f's generator.
//
// The result is the set of nonzero counters, f's N becomes len(keys) and
// Rounds the rounds. Every key is covered by its final group: no false
// negatives (a counter reaching 255 sticks there). On error f is
// unchanged; a nil or zero f is an error wrapping ErrParam.
func (b *Builder) Build(f *Filter, keys []hashing.Digest, rounds int) error {
	one := [1]int{rounds}
	return b.build(f, keys, one[:], nil, nil)
}

// BuildEach builds offline as Build does, stopping at several round counts
// on the way: rounds must increase strictly, each in 1 … MaxRounds. After
// round rounds[i] it publishes to f exactly the filter Build(f, keys,
// rounds[i]) would leave (bits, N, Rounds and the tie-breaking generator's
// state) and calls each(rounds[i]), which may read f but must not change
// it. A build in 10 rounds is the first 10 rounds of a build in 15, so
// BuildEach(f, keys, []int{10, 15}, each) costs what Build(f, keys, 15)
// costs, where two Builds cost 25 rounds.
//
// An error from each stops the build and is returned; f then holds the
// filter of the round count each was called with. A parameter error
// leaves f unchanged.
func (b *Builder) BuildEach(f *Filter, keys []hashing.Digest, rounds []int, each func(rounds int) error) error {
	if len(rounds) == 0 {
		return fmt.Errorf("choices: BuildEach without round counts: %w", ErrParam)
	}
	return b.build(f, keys, rounds, each, nil)
}

// build is BuildEach with an optional cancel function, polled once per
// round; when it returns an error the build stops with it and f is
// unchanged since the last round count published.
func (b *Builder) build(f *Filter, keys []hashing.Digest, rounds []int, each func(int) error, cancel func() error) error {
	if f == nil || f.ix == nil {
		return zeroFilter.Err("Builder.Build")
	}
	for i, r := range rounds {
		if r < 1 || r > MaxRounds {
			return fmt.Errorf("choices: rounds = %d out of range [1, %d]: %w", r, MaxRounds, ErrParam)
		}
		if i > 0 && r <= rounds[i-1] {
			return fmt.Errorf("choices: round counts %d, %d do not increase: %w", rounds[i-1], r, ErrParam)
		}
	}
	n, c, k := len(keys), f.c, f.k
	if uint64(n)*uint64(c*k) > maxPositions {
		return fmt.Errorf("choices: %d keys × %d groups × %d hashes exceeds %d positions: %w", n, c, k, uint64(maxPositions), ErrParam)
	}
	m := f.m
	if m >= math.MaxInt || uint64(n)*uint64(c*k) > math.MaxInt {
		return fmt.Errorf("choices: m = %d counters and %d positions exceed this platform's memory: %w", m+1, uint64(n)*uint64(c*k), ErrParam)
	}
	// Counters 0 … m−1, and a sentinel m fixed at saturated that stands in
	// for a duplicate position within a group (so it counts once).
	if uint64(cap(b.cnt)) < m+1 {
		b.cnt = make([]uint8, m+1)
	}
	cnt := b.cnt[:m+1]
	clear(cnt)
	cnt[m] = saturated
	if cap(b.grp) < n {
		b.grp = make([]uint8, n)
	}
	grp := b.grp[:n]
	rng := f.rng
	// run continues the build from round from to round to.
	var run func(from, to int) error
	if m < pos32Limit {
		if cap(b.pos32) < n*c*k {
			b.pos32 = make([]uint32, n*c*k)
		}
		pos := b.pos32[:n*c*k]
		fillPositions(f, keys, pos)
		run = func(from, to int) error { return offline(cnt, pos, grp, c, k, from, to, &rng, cancel) }
	} else {
		if cap(b.pos64) < n*c*k {
			b.pos64 = make([]uint64, n*c*k)
		}
		pos := b.pos64[:n*c*k]
		fillPositions(f, keys, pos)
		run = func(from, to int) error { return offline(cnt, pos, grp, c, k, from, to, &rng, cancel) }
	}
	done := 0
	for _, r := range rounds {
		if err := run(done, r); err != nil {
			return err
		}
		done = r
		publish(f, cnt, n, r, rng)
		if each != nil {
			if err := each(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// publish makes f the filter of the nonzero counters cnt[:f.m] after the
// given rounds over n keys, with tie-breaking generator state rng.
func publish(f *Filter, cnt []uint8, n, rounds int, rng uint64) {
	m := f.m
	w := f.bits
	for i := range w {
		var x uint64
		lo := uint64(i) * 64
		hi := min(lo+64, m)
		for j, v := range cnt[lo:hi] {
			if v != 0 {
				x |= 1 << uint(j)
			}
		}
		w[i] = x
	}
	f.rng = rng
	f.n = uint64(n)
	f.rounds = uint32(rounds)
}

// fillPositions writes the c·k positions of every key to pos (key i, group
// g at pos[(i·c+g)·k:]), replacing a position that repeats an earlier one of
// the same group with the sentinel m.
func fillPositions[P uint32 | uint64](f *Filter, keys []hashing.Digest, pos []P) {
	var buf [hashing.MaxK]uint64
	c, k, m := f.c, f.k, f.m
	for i, d := range keys {
		for g := 0; g < c; g++ {
			out := pos[(i*c+g)*k : (i*c+g+1)*k]
			var sig uint64
			for j, p := range f.ix.Positions(GroupDigest(d, g), buf[:]) {
				h := uint64(1) << ((p ^ p>>6) & 63)
				if sig&h != 0 && containsPos(buf[:j], p) {
					p = m
				}
				sig |= h
				out[j] = P(p)
			}
		}
	}
}

// zeros returns the number of zero counters at ps (branch-free).
func zeros[P uint32 | uint64](cnt []uint8, ps []P) int {
	z := uint32(0)
	for _, p := range ps {
		z += (uint32(cnt[p]) - 1) >> 31
	}
	return int(z)
}

// inc increments the counters at ps, sticking at saturated.
func inc[P uint32 | uint64](cnt []uint8, ps []P) {
	for _, p := range ps {
		v := cnt[p]
		cnt[p] = v + 1 - uint8((uint32(v)+1)>>8)
	}
}

// decZeros decrements the counters at ps (a saturated counter stays) and
// returns how many are zero afterwards.
func decZeros[P uint32 | uint64](cnt []uint8, ps []P) int {
	z := uint32(0)
	for _, p := range ps {
		v := cnt[p]
		v = v - 1 + uint8((uint32(v)+1)>>8)
		cnt[p] = v
		z += (uint32(v) - 1) >> 31
	}
	return int(z)
}

// splitmixNext advances a SplitMix64 state and returns a uniform integer in
// [0, t): the same sequence Filter.randBelow draws.
func splitmixNext(state *uint64, t uint64) uint64 {
	*state += 0x9E3779B97F4A7C15
	x := *state
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9
	x = (x ^ (x >> 27)) * 0x94D049BB133111EB
	return hashing.Reduce(x^(x>>31), t)
}

// offline runs rounds from+1 … to over the position table (from = 0: the
// build's start); grp holds each key's group, and receives its group after
// round to.
func offline[P uint32 | uint64](cnt []uint8, pos []P, grp []uint8, c, k, from, to int, rng *uint64, cancel func() error) error {
	ck := c * k
	n := len(grp)
	// Round 1: online greedy, exactly as Filter.add.
	for i := 0; from == 0 && i < n; i++ {
		ps := pos[i*ck : (i+1)*ck]
		best, bestZ, ties := 0, k+1, uint64(0)
		for g := 0; g < c; g++ {
			z := zeros(cnt, ps[g*k:(g+1)*k])
			if z < bestZ {
				best, bestZ, ties = g, z, 1
				if z == 0 {
					break
				}
			} else if z == bestZ {
				ties++
				if splitmixNext(rng, ties) == 0 {
					best = g
				}
			}
		}
		inc(cnt, ps[best*k:(best+1)*k])
		grp[i] = uint8(best)
	}
	// Rounds 2…: remove each key, re-insert it greedily.
	for r := max(from, 1); r < to; r++ {
		if cancel != nil {
			if err := cancel(); err != nil {
				return err
			}
		}
		for i := 0; i < n; i++ {
			ps := pos[i*ck : (i+1)*ck]
			cur := int(grp[i])
			zc := decZeros(cnt, ps[cur*k:(cur+1)*k])
			best, bestZ, ties := 0, k+1, uint64(0)
			for g := 0; g < c; g++ {
				z := zc
				if g != cur {
					z = zeros(cnt, ps[g*k:(g+1)*k])
				}
				if z < bestZ {
					best, bestZ, ties = g, z, 1
				} else if z == bestZ {
					ties++
					if splitmixNext(rng, ties) == 0 {
						best = g
					}
				}
			}
			inc(cnt, ps[best*k:(best+1)*k])
			grp[i] = uint8(best)
		}
	}
	return nil
}
