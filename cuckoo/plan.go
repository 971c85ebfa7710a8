package cuckoo

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/bloomlab/bloomlab/theory"
)

// Sizing (bloomlab profile). A table of m buckets holds at most b·m keys;
// inserts start to fail near the load theory.LoadCuckoo(b) (95% for
// b = 4), so the sizing plans for DesignLoad(b), a little below it, and
// rounds m up to the next bucket count the index rule allows
// (RoundBuckets). The fingerprint is the shortest whose rate at the load
// reached at n keys, theory.FPCuckoo(f, b, n/(b·m)), meets the target.

// minBlock is the smallest block of a table whose bucket count is not a
// power of two: m = c·2^j with c odd in 3 … 31 needs 2^j ≥ minBlock.
// A key's two buckets share the block i ≫ j, so a table is c cuckoo
// tables of 2^j buckets whose loads vary by about 1/√(b·2^j); with blocks
// of 8192 buckets (b = 4) the first insert fails at a mean load of 95.4%
// or more (smallest of 6 runs 94.9%, for c = 31), against 96% for a power
// of two, and DesignLoad(4) = 93% keeps a margin below both.
const minBlock = 1 << 13

// DesignLoad returns the load factor the sizing plans for with buckets of
// b slots: 0.45, 0.80, 0.93, 0.96 for b = 1, 2, 4, 8, two to five points
// below the load at which the first insert fails (theory.LoadCuckoo), so
// that a filter sized for n keys takes them all.
func designLoad(b int) float64 {
	switch b {
	case 1:
		return 0.45
	case 2:
		return 0.80
	case 4:
		return 0.93
	case 8:
		return 0.96
	}
	return math.NaN()
}

// ValidBuckets reports whether m is a bucket count of the bloomlab
// profile: a power of two, or c·2^j with c odd in 3 … 31 and 2^j ≥ 8192.
func validBuckets(m uint64) bool {
	if m == 0 {
		return false
	}
	j := bits.TrailingZeros64(m)
	c := m >> j
	return c == 1 || c <= 31 && uint64(1)<<j >= minBlock
}

// RoundBuckets returns the smallest valid bucket count (ValidBuckets) of
// at least x: x rounded up to at most 5 significant bits for large
// tables (at most 1/16 more from 253,952 buckets on), to a power of two
// below 24,576 buckets.
func roundBuckets(x uint64) uint64 {
	if x <= 1 {
		return 1
	}
	if x > 1<<62 {
		return 1 << 63
	}
	best := uint64(1) << bits.Len64(x-1)
	for c := uint64(3); c <= 31; c += 2 {
		j := max(bits.Len64((x+c-1)/c-1), bits.TrailingZeros64(minBlock))
		if m := c << j; m >= x && m < best {
			best = m
		}
	}
	return best
}

// Plan is a bloomlab-profile configuration chosen for a number of keys,
// with the rate theory predicts for it. Computing one allocates nothing.
type Plan struct {
	// Config has every field set: Buckets, FingerprintBits, BucketSize,
	// MaxKicks.
	Config
	// Load is the load factor at Capacity keys: Capacity/(b·Buckets).
	Load float64
	// BitsPerKey is the table's bits per key at Capacity keys.
	BitsPerKey float64
	// FPR is theory.FPCuckoo(f, b, Load): the expected rate at Capacity
	// keys.
	FPR float64
}

// Bits returns the memory of the planned table (first sub-filter).
func (p Plan) Bits() uint64 {
	l, _ := newLayout(p.BucketSize, p.FingerprintBits, p.Semisort)
	return p.Buckets * l.bucketBits
}

// build allocates the planned filter.
func (p Plan) build() *Filter {
	l, _ := newLayout(p.BucketSize, p.FingerprintBits, p.Semisort)
	f := &Filter{profile: Bloomlab, lay: l, maxKicks: p.MaxKicks, expansion: uint64(p.Expansion),
		seed: p.Seed, capacity: p.Capacity, m0: p.Buckets, maxBits: p.MaxBits}
	f.subs = []sub{f.newSub(p.Buckets)}
	return f
}

// common validates and defaults the fields every plan shares.
func (c Config) common() (Config, error) {
	if c.Profile == 0 {
		c.Profile = Bloomlab
	}
	if c.BucketSize == 0 {
		c.BucketSize = defaultBucketSize
	}
	if c.MaxKicks == 0 {
		c.MaxKicks = defaultMaxKicks
	}
	switch {
	case c.Profile != Bloomlab:
		return c, fmt.Errorf("cuckoo: profile %v: sizing is for the bloomlab profile (RedisBloom filters are sized by NewRedisBloom): %w", c.Profile, ErrParam)
	case c.BucketSize != 1 && c.BucketSize != 2 && c.BucketSize != 4 && c.BucketSize != 8:
		return c, fmt.Errorf("cuckoo: BucketSize = %d, want 1, 2, 4 or 8: %w", c.BucketSize, ErrParam)
	case c.Semisort && c.BucketSize != 4:
		return c, fmt.Errorf("cuckoo: Semisort needs BucketSize 4, not %d: %w", c.BucketSize, ErrParam)
	case c.MaxKicks < 1 || c.MaxKicks > maxKicksLimit:
		return c, fmt.Errorf("cuckoo: MaxKicks = %d out of range [1, %d]: %w", c.MaxKicks, maxKicksLimit, ErrParam)
	case c.Expansion < 0 || c.Expansion > maxExpansion || c.Expansion&(c.Expansion-1) != 0:
		return c, fmt.Errorf("cuckoo: Expansion = %d, want 0 (no growth) or a power of two up to %d: %w", c.Expansion, maxExpansion, ErrParam)
	case c.FPR != 0 && !(c.FPR > 0 && c.FPR < 1):
		return c, fmt.Errorf("cuckoo: FPR = %v out of range (0, 1): %w", c.FPR, ErrParam)
	case c.FingerprintBits != 0 && (c.FingerprintBits < minFingerprintBits || c.FingerprintBits > maxFingerprintBits):
		return c, fmt.Errorf("cuckoo: FingerprintBits = %d out of range [%d, %d]: %w", c.FingerprintBits, minFingerprintBits, maxFingerprintBits, ErrParam)
	}
	return c, nil
}

// bucketsFor returns the buckets that hold n keys at DesignLoad(b).
func bucketsFor(n uint64, b int) (uint64, error) {
	x := math.Ceil(float64(n) / (float64(b) * designLoad(b)))
	if !(x <= maxTableBits/8) {
		return 0, fmt.Errorf("cuckoo: %d keys need %.3g buckets, more than 2^48 bits: %w", n, x, ErrParam)
	}
	return roundBuckets(uint64(x)), nil
}

// finish checks the size and fills in the plan's numbers.
func (c Config) finish() (Plan, error) {
	l, err := newLayout(c.BucketSize, c.FingerprintBits, c.Semisort)
	if err != nil {
		return Plan{}, err
	}
	if c.Buckets > maxTableBits/l.bucketBits {
		return Plan{}, fmt.Errorf("cuckoo: %d buckets of %d bits exceed 2^48 bits: %w", c.Buckets, l.bucketBits, ErrParam)
	}
	p := Plan{Config: c, Load: float64(c.Capacity) / (float64(c.BucketSize) * float64(c.Buckets))}
	p.FPR = theory.FPCuckoo(c.FingerprintBits, c.BucketSize, p.Load)
	if c.Capacity > 0 {
		p.BitsPerKey = float64(c.Buckets*l.bucketBits) / float64(c.Capacity)
	}
	return p, nil
}

// smallestF returns the shortest fingerprint (4 … the layout's maximum)
// whose rate at load meets fpr.
func smallestF(b int, load, fpr float64) (int, error) {
	top := maxFingerprintBits
	for f := minFingerprintBits; f <= top; f++ {
		if theory.FPCuckoo(f, b, load) <= fpr {
			return f, nil
		}
	}
	return 0, fmt.Errorf("cuckoo: rate %v at load %.3g needs fingerprints longer than %d bits (buckets of %d): %w", fpr, load, top, b, ErrParam)
}

// plan is New's sizing: explicit Buckets, or Buckets for Capacity at
// DesignLoad; FingerprintBits as given or the shortest meeting FPR.
func plan(c Config) (Plan, error) {
	c, err := c.common()
	if err != nil {
		return Plan{}, err
	}
	if c.Buckets != 0 {
		if !validBuckets(c.Buckets) {
			return Plan{}, fmt.Errorf("cuckoo: Buckets = %d is not a power of two or c·2^j with c odd ≤ 31 and 2^j ≥ %d (RoundBuckets gives %d): %w", c.Buckets, minBlock, roundBuckets(c.Buckets), ErrParam)
		}
		if c.Capacity == 0 {
			c.Capacity = uint64(float64(c.Buckets) * float64(c.BucketSize) * designLoad(c.BucketSize))
		}
	} else {
		if c.Capacity == 0 {
			return Plan{}, fmt.Errorf("cuckoo: Capacity (the number of keys to size for) or Buckets is required: %w", ErrParam)
		}
		if c.Buckets, err = bucketsFor(c.Capacity, c.BucketSize); err != nil {
			return Plan{}, err
		}
	}
	if c.Capacity > c.Buckets*uint64(c.BucketSize) {
		return Plan{}, fmt.Errorf("cuckoo: Capacity = %d exceeds the %d slots of %d buckets of %d: %w", c.Capacity, c.Buckets*uint64(c.BucketSize), c.Buckets, c.BucketSize, ErrParam)
	}
	if c.FingerprintBits == 0 {
		if c.FPR == 0 {
			c.FPR = DefaultFPR
		}
		load := float64(c.Capacity) / (float64(c.BucketSize) * float64(c.Buckets))
		if c.FingerprintBits, err = smallestF(c.BucketSize, load, c.FPR); err != nil {
			return Plan{}, err
		}
	}
	return c.finish()
}

// PlanFPR returns the plan of NewWithEstimates: for n keys with the
// options of c (BucketSize, Semisort, MaxKicks, Expansion, Seed; its
// Capacity, FPR, Buckets and FingerprintBits are ignored), buckets for n
// keys at the design load (45%, 80%, 93%, 96% for buckets of 1, 2, 4, 8
// slots, rounded up to a valid bucket count), and the shortest fingerprint
// whose rate at n keys is at most fpr.
func PlanFPR(n uint64, fpr float64, c Config) (Plan, error) {
	if n == 0 || !(fpr > 0 && fpr < 1) {
		return Plan{}, fmt.Errorf("cuckoo: n = %d, fpr = %v: want n ≥ 1 and fpr in (0, 1): %w", n, fpr, ErrParam)
	}
	c.Capacity, c.FPR, c.Buckets, c.FingerprintBits = n, fpr, 0, 0
	return plan(c)
}

// PlanBitsPerKey returns the plan of NewWithBitsPerKey: buckets for n keys
// at DesignLoad (options from c as for PlanFPR) and the longest
// fingerprint the budget of bitsPerKey·n bits affords (semi-sorting stores
// f − 1 bits per slot), at most 32. It fails if that is under 4 bits.
func planBitsPerKey(n uint64, bitsPerKey float64, c Config) (Plan, error) {
	if n == 0 || !(bitsPerKey > 0 && bitsPerKey <= 1<<20) {
		return Plan{}, fmt.Errorf("cuckoo: n = %d, bits per key = %v: want n ≥ 1 and bits per key in (0, 2^20]: %w", n, bitsPerKey, ErrParam)
	}
	c.Capacity, c.FPR, c.FingerprintBits = n, 0, 0
	c, err := c.common()
	if err != nil {
		return Plan{}, err
	}
	if c.Buckets, err = bucketsFor(n, c.BucketSize); err != nil {
		return Plan{}, err
	}
	slots := float64(c.Buckets) * float64(c.BucketSize)
	f := int(math.Floor(bitsPerKey * float64(n) / slots))
	if c.Semisort {
		f++
	}
	f = min(f, maxFingerprintBits)
	if f < minFingerprintBits {
		need := minFingerprintBits
		if c.Semisort {
			need--
		}
		return Plan{}, fmt.Errorf("cuckoo: %v bits per key is too few: %d keys take %d buckets of %d slots, whose %d-bit fingerprints need %.3g bits per key: %w",
			bitsPerKey, n, c.Buckets, c.BucketSize, minFingerprintBits, float64(need)*slots/float64(n), ErrParam)
	}
	c.FingerprintBits = f
	return c.finish()
}
