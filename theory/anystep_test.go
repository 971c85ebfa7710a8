package theory

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/bloomlab/bloomlab/hashing"
)

// anyStepState sets the bits of n keys with positions pos(a, b, i) for
// (a, b) drawn by draw, and returns them with their fill.
func anyStepState(r *rand.Rand, m uint64, n, k int, draw func(*rand.Rand) (uint64, uint64), pos func(a, b, i uint64) uint64) ([]uint64, float64) {
	v := make([]uint64, (m+63)/64)
	for range n {
		a, b := draw(r)
		for i := range uint64(k) {
			p := pos(a, b, i)
			v[p/64] |= 1 << (p % 64)
		}
	}
	ones := 0
	for _, w := range v {
		ones += bits.OnesCount64(w)
	}
	return v, float64(ones) / float64(m)
}

func allSet(v []uint64, k int, a, b uint64, pos func(a, b, i uint64) uint64) bool {
	for i := range uint64(k) {
		if p := pos(a, b, i); v[p/64]&(1<<(p%64)) == 0 {
			return false
		}
	}
	return true
}

// FPAnyStep on power-of-two m (RedisBloom's positions (a + i·b) mod m,
// with a mod m and b mod m uniform) against the exact rate of random
// states, every one of the m² query pairs counted: a model, within 25%
// from 10 keys on and within a factor 2 for fewer (its floor and shifted
// pairs overcount one key of k = 2 twofold; k ≥ 8 probes of 1–3 keys in
// 64–256 bits share more positions than it counts: 0.78× at worst). The
// RedisBloom profile counts such links exactly when they are small
// (scalable's exactRedis). FillAnyStep is the mean fill within 10%: it
// draws a key's positions with replacement where they are distinct, 8%
// below for 1–3 keys with k ≥ 8 in 64 bits.
func TestFPAnyStepPowerOfTwo(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const trials = 200 // 1–2 s
	for _, m := range []uint64{64, 128, 256} {
		pos := func(a, b, i uint64) uint64 { return (a + i*b) & (m - 1) }
		draw := func(r *rand.Rand) (uint64, uint64) { return r.Uint64N(m), r.Uint64N(m) }
		for _, k := range []int{2, 4, 8, 12} {
			for _, n := range []int{1, 3, 10, 30} {
				var fills, exact, model float64
				for range trials {
					v, fill := anyStepState(r, m, n, k, draw, pos)
					hits := 0
					for a := range m {
						for b := range m {
							if allSet(v, k, a, b, pos) {
								hits++
							}
						}
					}
					fills += fill
					exact += float64(hits) / float64(m*m)
					model += FPAnyStep(m, float64(n), k, fill)
				}
				ratio := model / exact
				lo, hi := 0.75, 2.05
				if n >= 10 {
					lo, hi = 0.8, 1.25
				}
				if !(ratio >= lo && ratio <= hi) {
					t.Errorf("m=%d k=%d n=%d: exact %.4g, FPAnyStep %.4g (×%.3f, want [%g, %g])", m, k, n, exact/trials, model/trials, ratio, lo, hi)
				}
				if f := FillAnyStep(m, float64(n), k); math.Abs(f-fills/trials) > 0.1*f {
					t.Errorf("m=%d k=%d n=%d: mean fill %.4f, FillAnyStep %.4f", m, k, n, fills/trials, f)
				}
			}
		}
	}
}

// On links whose size is not a power of two, RedisBloom reduces
// a + i·b modulo 2^64 before m, and the wraps make keys' position sets
// coincide far less often than m²/2 pairs: FPAnyStep is an upper bound
// there (by Monte Carlo over random states and query pairs, at least 0.95
// times the estimate, which is within its noise; 1.5 to 20 times above it
// for few keys in links of 10^3 bits).
func TestFPAnyStepWrapBound(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	trials, queries := 60, 100000
	if testing.Short() {
		trials, queries = 20, 50000
	}
	draw := func(r *rand.Rand) (uint64, uint64) { return r.Uint64(), r.Uint64() }
	for _, m := range []uint64{640, 1152} {
		pos := func(a, b, i uint64) uint64 { return (a + i*b) % m }
		for _, k := range []int{4, 8, 13, 20} {
			for _, n := range []int{1, 10, 60} {
				var hits uint64
				var model float64
				for range trials {
					v, fill := anyStepState(r, m, n, k, draw, pos)
					for range queries {
						if allSet(v, k, r.Uint64(), r.Uint64(), pos) {
							hits++
						}
					}
					model += FPAnyStep(m, float64(n), k, fill)
				}
				mc := float64(hits) / float64(trials*queries)
				model /= float64(trials)
				if model < 0.95*mc {
					t.Errorf("m=%d k=%d n=%d: Monte Carlo %.4g (%d hits), FPAnyStep %.4g", m, k, n, mc, hits, model)
				}
			}
		}
	}
}

// FPAnyStep's limits: NaN outside its domain; without keys or with one
// probe, the short-order term alone (f for k = 1).
func TestFPAnyStepEdges(t *testing.T) {
	for _, c := range []struct {
		m    uint64
		n    float64
		k    int
		fill float64
	}{{0, 1, 2, 0.5}, {MaxBits + 1, 1, 2, 0.5}, {64, -1, 2, 0.5}, {64, math.Inf(1), 2, 0.5}, {64, 1, 0, 0.5}, {64, 1, 65, 0.5},
		{64, 1, 2, -0.1}, {64, 1, 2, 1.1}, {64, 1, 2, math.NaN()}} {
		if v := FPAnyStep(c.m, c.n, c.k, c.fill); !math.IsNaN(v) {
			t.Errorf("FPAnyStep%+v = %v, want NaN", c, v)
		}
		if c.fill == 0.5 && c.k >= 1 && c.k <= hashing.MaxK {
			if v := FillAnyStep(c.m, c.n, c.k); !math.IsNaN(v) {
				t.Errorf("FillAnyStep%+v = %v, want NaN", c, v)
			}
		}
	}
	if v := FPAnyStep(128, 5, 1, 0.25); v != 0.25 {
		t.Errorf("k = 1: %v", v)
	}
	// No keys, k = 3 on 64 positions: step 0 (order 1) probes one
	// position, step 32 (order 2) two, the other 62 steps three.
	f := 0.5
	want := (f + f*f + 62*f*f*f) / 64
	if v := FPAnyStep(64, 0, 3, f); math.Abs(v-want) > 1e-15 {
		t.Errorf("n = 0: %v, want %v", v, want)
	}
	if v := FPAnyStep(64, 0, 3, 0); v != 0 {
		t.Errorf("empty: %v", v)
	}
}

// kCap keeps the k of a double-hashing filter of few keys at most m/5,
// where FPScheme counts the coincidences of the probe sequences: the
// exact rate of one key, every key pair and query pair of the enhanced
// scheme counted, meets the target SizeSchemeUnit sized for (64 and 128
// bits: a link of a growing chain; with k up to 64 one key in 64 bits at
// 5e-4 got k = 43, whose exact rate is 1.5 times FPScheme's).
func TestSizeSchemeFewKeysExact(t *testing.T) {
	seen := map[uint64]bool{}
	for _, eps := range []float64{0.05, 0.01, 1e-3, 5e-4, 3e-4, 2.5e-4, 1.3e-4} {
		m, k, err := SizeSchemeUnit(hashing.Enhanced, 1, eps, hashing.MaxK, 64)
		if err != nil {
			t.Fatal(err)
		}
		if k > max(2, int(m/5)) {
			t.Errorf("eps %g: m = %d, k = %d above m/5", eps, m, k)
		}
		if m > 128 {
			continue
		}
		seen[m] = true
		sets := probeSets(t, hashing.Enhanced, m, k)
		masks := make([][2]uint64, len(sets))
		for i, ps := range sets {
			for _, p := range ps {
				masks[i][p/64] |= 1 << (p % 64)
			}
		}
		var hits uint64
		for _, key := range masks {
			for _, q := range masks {
				if q[0]&^key[0] == 0 && q[1]&^key[1] == 0 {
					hits++
				}
			}
		}
		exact := float64(hits) / (float64(len(masks)) * float64(len(masks)))
		if exact > eps {
			t.Errorf("eps %g: m = %d, k = %d: exact rate %.4g (FPScheme %.4g)", eps, m, k, exact, FPScheme(hashing.Enhanced, m, 1, k))
		}
	}
	if !seen[64] || !seen[128] {
		t.Errorf("sizes checked: %v", seen)
	}
}
