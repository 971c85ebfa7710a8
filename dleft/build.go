package dleft

import (
	"fmt"
	"math"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/theory"
)

// Build returns a filter for cfg holding the keys with digests ds, placed
// offline (002 §II-D): every key first goes to the least loaded of its d
// buckets (leftmost on ties), as Add would put it; then, rounds times,
// every key in turn is taken out and re-placed in the least loaded of its
// buckets, which evens the loads. 002 uses 10 rounds. Fingerprints are
// written once, at the end, each truncated only to its final length.
//
// Unlike Add, Build does not skip keys whose fingerprint is already
// present: a repeated digest takes a slot per copy. A key none of whose
// buckets has room goes to the stash (an error wrapping ErrFull if that
// exceeds cfg.StashLimit). Build needs Group = 1. The filter accepts
// further keys with Add.
func Build(cfg Config, ds []hashing.Digest, rounds int) (*Filter, error) {
	f, err := New(cfg)
	if err != nil {
		return nil, err
	}
	if f.cfg.Group != 1 {
		return nil, fmt.Errorf("dleft: Build: Group = %d, offline balancing supports Group = 1 only: %w", f.cfg.Group, ErrParam)
	}
	if rounds < 0 || rounds > 1000 {
		return nil, fmt.Errorf("dleft: Build: rounds = %d out of range [0, 1000]: %w", rounds, ErrParam)
	}
	capLoad := 0
	for a := 1; a <= f.maxLoad && f.fb[a][a] >= 0; a++ {
		capLoad = a
	}
	D, B := f.cfg.D, f.cfg.Buckets
	n := len(ds)
	cand := make([]uint64, n*D) // global bucket numbers i·B + b
	for j, d := range ds {
		for i := 0; i < D; i++ {
			cand[j*D+i] = uint64(i)*B + hashing.Reduce(mix(d, i), B)
		}
	}
	loads := make([]uint8, uint64(D)*B)
	where := make([]int8, n) // subtable of key j, -1 in the stash
	place := func(j int) int8 {
		best, bl := int8(-1), capLoad
		for i := 0; i < D; i++ {
			if l := int(loads[cand[j*D+i]]); l < bl {
				best, bl = int8(i), l
			}
		}
		if best >= 0 {
			loads[cand[j*D+int(best)]]++
		}
		return best
	}
	for j := range ds {
		where[j] = place(j)
	}
	for r := 0; r < rounds; r++ {
		for j := range ds {
			if w := where[j]; w >= 0 {
				loads[cand[j*D+int(w)]]--
			}
			where[j] = place(j)
		}
	}
	stashed := 0
	for _, w := range where {
		if w < 0 {
			stashed++
		}
	}
	if f.cfg.StashLimit > 0 && stashed > f.cfg.StashLimit {
		return nil, fmt.Errorf("dleft: Build: %d keys overflow their buckets, more than the StashLimit of %d: %w", stashed, f.cfg.StashLimit, ErrFull)
	}
	// Counting sort of the keys by bucket, then one encode per bucket.
	start := make([]uint64, len(loads)+1)
	for i, l := range loads {
		start[i+1] = start[i] + uint64(l)
	}
	fill := make([]uint64, len(loads))
	copy(fill, start[:len(loads)])
	byBucket := make([]uint64, start[len(loads)])
	for j, d := range ds {
		h := mix(d, fpIndex)
		if w := where[j]; w >= 0 {
			g := cand[j*D+int(w)]
			byBucket[fill[g]] = h
			fill[g]++
		} else {
			if f.stash == nil {
				f.stash = map[uint64]struct{}{}
			}
			f.stash[h] = struct{}{}
		}
	}
	for g := range loads {
		if loads[g] == 0 {
			continue
		}
		f.scratch[0] = append(f.scratch[0][:0], byBucket[start[g]:start[g+1]]...)
		f.encodeGroup(f.words[g*f.wpg:(g+1)*f.wpg], int(loads[g]))
	}
	f.n = uint64(n)
	f.stored = uint64(n - stashed)
	return f, nil
}

// Sizing.

// Plan is a configuration chosen for n keys, with the rate theory
// predicts for it.
type Plan struct {
	Config
	// Load is the average number of keys per bucket at n keys.
	Load float64
	// BitsPerKey is D·Buckets·BucketBits / n.
	BitsPerKey float64
	// FPR is formula (1) over the fluid-limit loads (theory.FPDleft) at n
	// keys.
	FPR float64
}

// maxOverflowMass bounds the fluid-limit fraction of buckets beyond the
// largest load a bucket holds for a plan to be accepted.
const maxOverflowMass = 1e-12

// PredictFPR returns formula (1) of 002 for cfg (defaults filled in,
// Group 1 or more) at average load per bucket load, over the fluid-limit
// load distribution of theory.LoadsDleft, with the filter's own
// fingerprint lengths; and the fraction of buckets the fluid limit puts
// beyond the largest load a bucket can hold (the overflow mass).
func PredictFPR(cfg Config, load float64) (fpr, overflow float64, err error) {
	q, err := theory.LoadsDleft(cfg.withDefaults().D, load)
	if err != nil {
		return 0, 0, fmt.Errorf("dleft: %w", err)
	}
	return predict(cfg, q)
}

// predict is PredictFPR for the fluid-limit loads q.
func predict(cfg Config, q [][]float64) (fpr, overflow float64, err error) {
	cfg.Buckets = uint64(max(1, cfg.Group))
	if err := cfg.Validate(); err != nil {
		return 0, 0, err
	}
	cfg = cfg.withDefaults()
	f := &Filter{cfg: cfg}
	f.init()
	for _, qi := range q {
		for a := f.maxLoad + 1; a < len(qi); a++ {
			overflow += qi[a] / float64(cfg.D)
		}
	}
	bits := func(a, A int) int {
		if a > f.maxLoad || A >= len(f.fb[a]) {
			return -1
		}
		return f.fb[a][A]
	}
	if cfg.Group == 1 {
		fpr = theory.FPDleft(q, func(a int) int { return bits(a, a) })
	} else {
		fpr = theory.FPDleftGrouped(q, cfg.Group, bits)
	}
	return fpr, overflow, nil
}

// configs sizing chooses between: 002's 64-bit buckets with 1-bit
// semi-sorting and 128-bit buckets with 2-bit semi-sorting, both with d = 3.
var sizingConfigs = []Config{
	{D: 3, BucketBits: 64, Semisort: Semisort1},
	{D: 3, BucketBits: 128, Semisort: Semisort2},
}

// Bits returns the memory of the planned table: D · Buckets · BucketBits.
func (p Plan) Bits() uint64 { return uint64(p.D) * p.Buckets * uint64(p.BucketBits) }

// new allocates the planned filter with the given seed and records n as
// its capacity.
func (p Plan) new(n, seed uint64) (*Filter, error) {
	p.Seed = seed
	f, err := New(p.Config)
	if err != nil {
		return nil, err
	}
	f.capacity = n
	return f, nil
}

// NewWithBitsPerKey returns an empty filter of about bitsPerKey bits per
// key for n keys: 64-bit or 128-bit buckets (whichever formula (1) rates
// lower) with d = 3 at average load BucketBits/bitsPerKey. It fails if no
// configuration stays clear of overflow (fluid-limit mass beyond the
// largest bucket load ≤ 1e-12): d-left filters need about 14 or more bits
// per key. seed is the base hash seed; n is recorded as the Capacity.
func NewWithBitsPerKey(n uint64, bitsPerKey float64, seed uint64) (*Filter, error) {
	p, err := PlanBitsPerKey(n, bitsPerKey)
	if err != nil {
		return nil, err
	}
	return p.new(n, seed)
}

// NewWithEstimates returns an empty filter for n keys at false-positive
// rate at most fpr as formula (1) predicts (PlanFPR). seed is the base
// hash seed; n is recorded as the Capacity.
func NewWithEstimates(n uint64, fpr float64, seed uint64) (*Filter, error) {
	p, err := PlanFPR(n, fpr)
	if err != nil {
		return nil, err
	}
	return p.new(n, seed)
}

// PlanBitsPerKey is the plan NewWithBitsPerKey uses.
func PlanBitsPerKey(n uint64, bitsPerKey float64) (Plan, error) {
	return planBitsPerKey(sizingConfigs, n, bitsPerKey)
}

// PlanFPR returns the plan NewWithEstimates uses: for each bucket size,
// the largest average load (to 1/64) whose predicted rate is at most fpr
// and which stays clear of overflow; the one with fewer bits per key wins.
func PlanFPR(n uint64, fpr float64) (Plan, error) {
	return planFPR(sizingConfigs, n, fpr)
}

func checkN(n uint64) error {
	if n < 1 || n > MaxBuckets {
		return fmt.Errorf("dleft: n = %d out of range [1, 2^40]: %w", n, ErrParam)
	}
	return nil
}

// planBitsPerKey is PlanBitsPerKey choosing among configs.
func planBitsPerKey(configs []Config, n uint64, bitsPerKey float64) (Plan, error) {
	if err := checkN(n); err != nil {
		return Plan{}, err
	}
	if !(bitsPerKey >= 1 && bitsPerKey <= 1024) {
		return Plan{}, fmt.Errorf("dleft: bits per key = %v out of range [1, 1024]: %w", bitsPerKey, ErrParam)
	}
	var best Plan
	found := false
	for _, c := range configs {
		load := float64(c.BucketBits) / bitsPerKey
		p, ok := planAt(c, n, load, nil)
		if ok && (!found || p.FPR < best.FPR) {
			best, found = p, true
		}
	}
	if !found {
		return Plan{}, fmt.Errorf("dleft: %v bits per key overflows d-left buckets (the average load would exceed what a bucket holds); use more bits per key: %w", bitsPerKey, ErrParam)
	}
	return best, nil
}

// planAt sizes c for n keys at average load, if that load is safe; q are
// the fluid-limit loads at that load (nil: computed here).
func planAt(c Config, n uint64, load float64, q [][]float64) (Plan, bool) {
	if load > float64(theory.MaxLoadDleft/2) {
		return Plan{}, false
	}
	var fpr, over float64
	var err error
	if q == nil {
		fpr, over, err = PredictFPR(c, load)
	} else {
		fpr, over, err = predict(c, q)
	}
	if err != nil || over > maxOverflowMass {
		return Plan{}, false
	}
	c.Buckets = max(1, uint64(math.Ceil(float64(n)/(float64(c.D)*load))))
	if c.Buckets > MaxBuckets/uint64(c.D) {
		return Plan{}, false
	}
	p := Plan{Config: c, Load: load, FPR: fpr}
	p.BitsPerKey = float64(p.Bits()) / float64(n)
	return p, true
}

// planFPR is PlanFPR choosing among configs.
func planFPR(configs []Config, n uint64, fpr float64) (Plan, error) {
	if err := checkN(n); err != nil {
		return Plan{}, err
	}
	if !(fpr > 0 && fpr < 1) {
		return Plan{}, fmt.Errorf("dleft: fpr = %v out of range (0, 1): %w", fpr, ErrParam)
	}
	var best Plan
	found, bucketLimited := false, false
	const top = 64 * 12              // loads are searched in (0, top/64]
	grids := map[int][][][]float64{} // the fluid-limit loads on the search grid, per d
	for _, c := range configs {
		d := c.withDefaults().D
		if grids[d] == nil {
			g, err := theory.LoadsDleftGrid(d, top)
			if err != nil {
				return Plan{}, fmt.Errorf("dleft: %w", err)
			}
			grids[d] = g
		}
		at := func(i int) (Plan, bool) { kind.PlanStep(); return planAt(c, n, float64(i)/64, grids[d][i-1]) }
		// Bisection on the load in 1/64 steps: the rate grows with it. The
		// smallest load is the one at which the buckets fit MaxBuckets.
		first := max(1, int(math.Ceil(64*float64(n)/float64(MaxBuckets/uint64(d)*uint64(d)))))
		if first > 1 {
			bucketLimited = true
		}
		if first >= top {
			continue
		}
		lo, hi := first, top // loads lo/64 (acceptable) … hi/64 (not)
		if p, ok := at(lo); !ok || p.FPR > fpr {
			continue
		}
		for hi-lo > 1 {
			mid := (lo + hi) / 2
			if p, ok := at(mid); ok && p.FPR <= fpr {
				lo = mid
			} else {
				hi = mid
			}
		}
		p, _ := at(lo)
		if !found || p.BitsPerKey < best.BitsPerKey {
			best, found = p, true
		}
	}
	if !found && bucketLimited {
		return Plan{}, fmt.Errorf("dleft: n = %d keys at fpr = %v need more than 2^40 buckets: %w", n, fpr, ErrParam)
	}
	if !found {
		return Plan{}, fmt.Errorf("dleft: fpr = %v is below what a d-left filter reaches with 64-bit fingerprints: %w", fpr, ErrParam)
	}
	return best, nil
}
