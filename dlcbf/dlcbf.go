// Package dlcbf implements the d-left counting Bloom filter (dlCBF) of
// Bonomi, Mitzenmacher, Panigrahy, Singh and Varghese ("An Improved
// Construction for Counting Bloom Filters", ESA 2006, summarised in
// docs/DLCBF.md) and its dynamic variants from paper 002 §III:
// the ddlCBF, whose remainder length in a bucket is set by the largest load
// the bucket has had, with semi-sorting (002 §III-A, §II-B), and the
// variant with two remainder sizes per bucket (002 §III-B).
//
// # Structure
//
// d subtables of B buckets each. A bucket holds up to h cells; a cell holds
// a remainder (a fingerprint) and a small counter. A key's digest gives its
// true fingerprint (b, r) ∈ [B]×[2^r] and extra bits z; d fixed
// pseudorandom permutations P_1 … P_d of [B]×[2^r] give its bucket b_i and
// minimal remainder r_i in subtable i (docs/FORMAT.md, "Kind 6", specifies
// them). A cell of subtable i stores a prefix of the key's remainder
// r_i ∥ z: exactly the r bits of r_i in the Static variant, at least r bits
// in the dynamic ones.
//
// Add increments a cell that already matches the key (if its counter has
// room), otherwise puts a new cell into the bucket that already holds the
// key's minimal remainder, otherwise into the least loaded of the key's d
// buckets, ties to the leftmost subtable (d-left hashing, always go left;
// Config.Ties = TieHash breaks them by the key's hash instead).
// Contains reports whether any of the key's d buckets holds a cell matching
// it. Remove decrements (or frees) the longest matching cell.
//
// # Guarantees
//
// No false negatives, for any sequence of Add and Remove calls in which
// every removed key is currently in the filter. Because the P_i are
// permutations, a cell matching key x in bucket b_i of subtable i can only
// belong to a key with x's true fingerprint, whose d buckets are x's; and
// removing the longest matching cell leaves, for every other key with that
// fingerprint, a cell whose (shorter or equal) prefix still matches it.
// Counter overflow never loses a key: a full counter is not incremented, a
// new copy of the remainder takes a new cell instead (counts are exact).
// Bucket overflow never loses a key either: when all d buckets are full Add
// returns an error wrapping ErrFull and changes nothing. Remove of a key
// the filter proves absent (no matching cell) returns an error wrapping
// ErrNotPresent and changes nothing; like any counting filter it cannot
// detect a false positive, and removing one takes a cell from another key.
//
// # False positives
//
// A query for an absent key compares its remainder with the cells of its d
// buckets; a cell with an effective remainder of ℓ bits matches with
// probability 2^−ℓ. The rate is therefore about Σ over the key's buckets of
// Σ_cells 2^−ℓ: d·(n/(dB))·2^−r for the Static variant (4·6·2^−14 = 1.46e-3
// at the 002 §III-C design point) and less for the dynamic ones, whose cells
// are longer while their buckets have had few keys. EstimatedFPR computes it
// from the state; Predict from the fluid limit of the d-left loads
// (theory.LoadsDleft) with each variant's cell lengths, for no removals
// and as a bound after any removals (every cell at its shortest length).
//
// # Variants and space
//
// Static (ESA 2006): h cells of r + c bits, counter 0 marking an empty cell;
// a bucket is h·(r+c) bits. Dynamic (002 §III-A): a 12-bit header (load,
// largest load so far M, number of cells whose remainder starts with 0)
// and R bits shared by the cells: each is ⌊R/M⌋ bits, c of them counter
// (count − 1), the rest the remainder without its first bit, which
// semi-sorting (002 §II-B) makes implicit, so the effective remainder is
// ⌊R/M⌋ − c + 1 bits. The length only shrinks (M never falls), so
// deletions stay consistent. TwoSizes (002 §III-B): a 22-bit header (the
// number and width of the short and of the long cells) and R bits; a new
// cell takes as many bits as are free (old cells never grow; they shrink
// only when the new one would otherwise be shorter than them), so space
// freed by deletions goes to new keys. No semi-sorting (002 §III-C).
//
// # Sizing
//
// NewWithEstimates and NewWithBitsPerKey size a Static filter for n keys
// at the design point (d = 4, h = 8 cells, 6 keys per bucket on average);
// PlanFPR and PlanBitsPerKey size any variant without allocating and
// predict its rates; the kind "dlcbf" (bloomlab plan, build -variant)
// uses them. Capacity is the n a filter was sized for (0: unknown; stored
// in files), Cells the number of cells d·B·h, which bounds how many
// distinct keys fit. The zero Filter is an empty filter with no room
// (docs/API.md): reads answer as for an empty filter, Add, Remove and
// WriteTo return an error wrapping ErrParam, SetCapacity panics.
//
// # Cost
//
// Add, Remove, Contains and Count hash the key once (xxh3-128), compute d
// permutations (a few multiplications each) and scan d buckets of at most
// 15 cells where they lie (a static bucket several cells per word
// operation); Add and Remove change one bucket. They allocate nothing and
// divide only when a two-size insert shares a bucket's bits among its
// cells. Memory is
// ⌈d·B·bucketBits/64⌉ + 1 words (Bits reports d·B·bucketBits).
//
// Concurrency: the read methods (Contains*, Count*, EstimatedFPR, the
// histograms, WriteTo, …) may run concurrently; Add*, Remove*, Clear,
// SetCapacity and ReadFrom (and UnmarshalBinary) must not run concurrently
// with anything else.
package dlcbf

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/kind"
)

// Errors returned by this package wrap these values.
var (
	// ErrParam: a configuration field is out of range.
	ErrParam = kind.ErrParam
	// ErrNotPresent: Remove was asked to remove a key the filter proves
	// absent.
	ErrNotPresent = fmt.Errorf("dlcbf: %w", kind.ErrNotPresent)
	// ErrFull: all of a key's d buckets are full (bucket overflow); the key
	// was not added and nothing changed.
	ErrFull = errors.New("dlcbf: bucket overflow")
)

// Variant selects the construction.
type Variant uint8

// The variants. Their values are recorded in files.
const (
	// Static is the dlCBF of ESA 2006: fixed r-bit remainders, c-bit
	// counters, counter 0 = empty cell.
	Static Variant = 1
	// Dynamic is the ddlCBF of 002 §III-A: one remainder length per bucket,
	// set by the largest load the bucket has had, with semi-sorting.
	Dynamic Variant = 2
	// TwoSizes is the ddlCBF of 002 §III-B with two remainder lengths per
	// bucket: new cells take the bits freed by deletions.
	TwoSizes Variant = 3
)

var variantNames = map[Variant]string{Static: "static", Dynamic: "dynamic", TwoSizes: "two-sizes"}

// String returns "static", "dynamic" or "two-sizes".
func (v Variant) String() string {
	if s, ok := variantNames[v]; ok {
		return s
	}
	return fmt.Sprintf("variant(%d)", uint8(v))
}

// ParseVariant returns the variant with the given name.
func ParseVariant(name string) (Variant, error) {
	for v, s := range variantNames {
		if s == name {
			return v, nil
		}
	}
	return 0, fmt.Errorf("dlcbf: unknown variant %q (want static, dynamic or two-sizes): %w", name, ErrParam)
}

// Limits on the configuration.
const (
	MaxSubtables  = 16
	MaxCells      = 15      // cells per bucket (4-bit load fields)
	MaxBuckets    = 1 << 40 // per subtable
	MaxRemainder  = 32      // minimal remainder bits r
	MaxCounter    = 8       // counter bits c
	MaxBucketBits = 4096    // R, the cell area of a dynamic bucket
	MaxBits       = 1 << 48 // d·B·bucket bits: 32 TiB of buckets
	maxWidth      = 64      // widest cell field
)

// Header bits of a dynamic bucket: load, M, zero-count (4 bits each); of a
// two-size bucket: short count, long count (4 bits each), short width, long
// width (7 bits each).
const (
	dynHeader = 12
	twoHeader = 22
)

// Config describes a filter. Zero fields take the defaults shown.
type Config struct {
	// Variant: Static (default), Dynamic or TwoSizes.
	Variant Variant
	// Subtables d: 1 … 16 (default 4).
	Subtables int
	// Buckets per subtable B: 1 … 2^40. Required.
	Buckets uint64
	// Cells per bucket h: 1 … 15 (default 8). A bucket holding h cells is
	// full.
	Cells int
	// RemainderBits r, the (minimal) remainder length: 1 … 32 (default 14).
	RemainderBits int
	// CounterBits c per cell: 1 … 8 for Static (default 2, as in ESA 2006;
	// a counter of c bits counts to 2^c − 1), 0 … 8 for the dynamic
	// variants (default 1, as in 002 §III-C; it stores count − 1), or
	// NoCounter for dynamic cells without a counter (every copy of a key
	// takes a cell). A key added more often than a counter holds takes
	// further cells.
	CounterBits int
	// BucketBits R, the bits shared by the cells of a dynamic bucket
	// (ignored for Static, whose cells are fixed): default Cells ·
	// (RemainderBits + CounterBits), at least what h cells of a minimal
	// remainder need, at most 4096.
	BucketBits int
	// Ties selects how Add breaks a tie between equally loaded buckets:
	// TieLeft (default: the leftmost subtable, always-go-left d-left
	// hashing, docs/DLCBF.md) or TieHash (a tied bucket chosen
	// uniformly by the key's hash). Placement never affects lookups or
	// deletions, only the load balance (002 does not say which it used).
	Ties Tie
	// Seed of the base hash (xxh3-128).
	Seed uint64
}

// Tie is a tie-breaking rule for Add (Config.Ties). Its value is recorded
// in files.
type Tie uint8

// The tie-breaking rules.
const (
	TieLeft Tie = 0
	TieHash Tie = 1
)

// NoCounter as Config.CounterBits gives the dynamic variants cells without
// a counter.
const NoCounter = -1

// Filter is a d-left counting Bloom filter. Create one with New,
// NewWithEstimates or NewWithBitsPerKey. The zero value is an empty filter
// with no room (docs/API.md): its read methods answer as for an empty
// filter, Add, Remove and WriteTo return an error wrapping ErrParam.
type Filter struct {
	cfg Config
	// capacity is the number of keys the filter was sized for (0:
	// unknown); informational, stored in files.
	capacity uint64
	d        int
	nb       uint64 // buckets per subtable
	h        int
	r        uint // minimal remainder bits
	c        uint // counter bits
	area     uint // R, the cell area bits (dynamic variants)
	bbits    uint64
	words    []uint64 // packed buckets + 1 padding word
	n        uint64   // Add calls minus successful Remove calls
	cmax     uint64   // largest count a cell holds
	cmask    uint64   // 2^c − 1
	rmask    uint64   // 2^r − 1
	// width[M] is the cell width of a Dynamic bucket whose largest load
	// so far is M (1 ≤ M ≤ h).
	width [MaxCells + 1]uint8
	keys  [MaxSubtables][3]uint64 // permutation keys
	// sw cuts a Static bucket into windows of cells for a word-parallel
	// comparison (probe.go).
	sw staticLanes
}

// Capacity limits of the default static design point.
const (
	// DesignLoad is the average number of keys per bucket NewWithEstimates
	// sizes for: the ESA 2006 and 002 §III-C design point (6 per bucket of
	// 8 cells, d = 4), at which bucket overflow is negligible.
	DesignLoad = 6
)

// normalize fills defaults and validates cfg.
func normalize(cfg Config) (Config, error) {
	if cfg.Variant == 0 {
		cfg.Variant = Static
	}
	if _, ok := variantNames[cfg.Variant]; !ok {
		return cfg, fmt.Errorf("dlcbf: Variant = %d, want 1 (static), 2 (dynamic) or 3 (two-sizes): %w", cfg.Variant, ErrParam)
	}
	if cfg.Subtables == 0 {
		cfg.Subtables = 4
	}
	if cfg.Ties > TieHash {
		return cfg, fmt.Errorf("dlcbf: Ties = %d, want 0 (TieLeft) or 1 (TieHash): %w", cfg.Ties, ErrParam)
	}
	if cfg.Cells == 0 {
		cfg.Cells = 8
	}
	if cfg.RemainderBits == 0 {
		cfg.RemainderBits = 14
	}
	if cfg.CounterBits == 0 && cfg.Variant == Static {
		cfg.CounterBits = 2
	} else if cfg.CounterBits == 0 {
		cfg.CounterBits = 1
	}
	switch {
	case cfg.Subtables < 1 || cfg.Subtables > MaxSubtables:
		return cfg, fmt.Errorf("dlcbf: Subtables = %d out of range [1, %d]: %w", cfg.Subtables, MaxSubtables, ErrParam)
	case cfg.Buckets < 1 || cfg.Buckets > MaxBuckets:
		return cfg, fmt.Errorf("dlcbf: Buckets = %d out of range [1, 2^40]: %w", cfg.Buckets, ErrParam)
	case cfg.Cells < 1 || cfg.Cells > MaxCells:
		return cfg, fmt.Errorf("dlcbf: Cells = %d out of range [1, %d]: %w", cfg.Cells, MaxCells, ErrParam)
	case cfg.RemainderBits < 1 || cfg.RemainderBits > MaxRemainder:
		return cfg, fmt.Errorf("dlcbf: RemainderBits = %d out of range [1, %d]: %w", cfg.RemainderBits, MaxRemainder, ErrParam)
	case cfg.Variant == Static && (cfg.CounterBits < 1 || cfg.CounterBits > MaxCounter):
		return cfg, fmt.Errorf("dlcbf: CounterBits = %d out of range [1, %d] for the static variant: %w", cfg.CounterBits, MaxCounter, ErrParam)
	case cfg.CounterBits < NoCounter || cfg.CounterBits > MaxCounter:
		return cfg, fmt.Errorf("dlcbf: CounterBits = %d out of range [1, %d] or NoCounter (−1): %w", cfg.CounterBits, MaxCounter, ErrParam)
	}
	if cfg.Variant == Static {
		cfg.BucketBits = cfg.Cells * (cfg.RemainderBits + cfg.CounterBits)
		return cfg, checkSize(cfg)
	}
	// Minimal cell: the minimal remainder (less the implicit first bit
	// under semi-sorting) and the counter.
	minCell := cfg.RemainderBits + max(cfg.CounterBits, 0)
	if cfg.Variant == Dynamic {
		minCell--
	}
	if cfg.BucketBits == 0 {
		cfg.BucketBits = cfg.Cells * (cfg.RemainderBits + max(cfg.CounterBits, 0))
	}
	if lo := cfg.Cells * max(minCell, 1); cfg.BucketBits < lo || cfg.BucketBits > MaxBucketBits {
		return cfg, fmt.Errorf("dlcbf: BucketBits = %d out of range [%d, %d] (Cells·%d bits of minimal cells): %w", cfg.BucketBits, lo, MaxBucketBits, minCell, ErrParam)
	}
	return cfg, checkSize(cfg)
}

// bucketBits returns the bits of one bucket of a normalized cfg: its cell
// area and, for the dynamic variants, its header.
func bucketBits(cfg Config) uint64 {
	switch cfg.Variant {
	case Dynamic:
		return uint64(cfg.BucketBits) + dynHeader
	case TwoSizes:
		return uint64(cfg.BucketBits) + twoHeader
	}
	return uint64(cfg.BucketBits)
}

// checkSize bounds the memory of a normalized cfg by MaxBits, so that no
// configuration asks make for more than the runtime can give (which would
// panic rather than return an error).
func checkSize(cfg Config) error {
	// ≤ 16 · 2^40 · 4118: no overflow.
	if total := uint64(cfg.Subtables) * cfg.Buckets * bucketBits(cfg); total > MaxBits {
		return fmt.Errorf("dlcbf: Subtables·Buckets·bucket bits = %d exceeds 2^48 (Buckets = %d): %w", total, cfg.Buckets, ErrParam)
	}
	return nil
}

// New returns an empty filter with the given configuration. Invalid fields
// give an error wrapping ErrParam that names the field and its range.
func New(cfg Config) (*Filter, error) {
	cfg, err := normalize(cfg)
	if err != nil {
		return nil, err
	}
	return build(cfg, nil), nil
}

// build returns a filter for a normalized cfg over words (the packed
// buckets without the padding word), or over zeroed words if nil.
func build(cfg Config, words []uint64) *Filter {
	f := shell(cfg)
	if words != nil {
		f.words = append(words, 0)
	} else {
		total := uint64(f.d) * f.nb * f.bbits
		f.words = make([]uint64, (total+63)/64+1)
	}
	for i := range f.d {
		for j := range 3 {
			f.keys[i][j] = permKey(i, j)
		}
	}
	return f
}

// shell returns a filter for a normalized cfg with every derived field set
// but no buckets: what the planner needs to know the cell lengths without
// allocating.
func shell(cfg Config) *Filter {
	f := &Filter{
		cfg: cfg, d: cfg.Subtables, nb: cfg.Buckets, h: cfg.Cells, bbits: bucketBits(cfg),
		r: uint(cfg.RemainderBits), c: uint(max(cfg.CounterBits, 0)), area: uint(cfg.BucketBits),
	}
	f.cmask, f.rmask = lowMask(f.c), lowMask(f.r)
	switch cfg.Variant {
	case Static:
		f.cmax = 1<<f.c - 1
		f.sw = newStaticLanes(f.h, f.r, f.c)
	case Dynamic:
		f.cmax = 1 << f.c
		for m := 1; m <= f.h; m++ {
			// Effective remainder w − c + 1 ≤ 64.
			f.width[m] = uint8(min(int(f.area)/m, maxWidth, maxWidth+int(f.c)-1))
		}
	case TwoSizes:
		f.cmax = 1 << f.c
	}
	return f
}

// NewWithEstimates returns a Static filter for n keys at false-positive
// rate about fpr (PlanFPR): the ESA 2006 design point (d = 4, h = 8 cells,
// 2-bit counters, DesignLoad = 6 keys per bucket on average, B = ⌈n/24⌉)
// with the smallest r for which the rate d·6·2^−r is at most fpr. It
// records n as the filter's Capacity. The seed is the base hash's.
func NewWithEstimates(n uint64, fpr float64, seed uint64) (*Filter, error) {
	p, err := PlanFPR(Static, n, fpr)
	if err != nil {
		return nil, err
	}
	return p.new(seed)
}

// NewWithBitsPerKey returns a Static filter for n keys of about bitsPerKey
// bits per key (PlanBitsPerKey): the design point of NewWithEstimates with
// the largest r that fits the budget. It records n as the filter's
// Capacity.
func NewWithBitsPerKey(n uint64, bitsPerKey float64, seed uint64) (*Filter, error) {
	p, err := PlanBitsPerKey(Static, n, bitsPerKey)
	if err != nil {
		return nil, err
	}
	return p.new(seed)
}

// Config returns the filter's configuration with defaults filled in.
func (f *Filter) Config() Config { return f.cfg }

// Variant returns the construction.
func (f *Filter) Variant() Variant { return f.cfg.Variant }

// N returns the number of Add calls that succeeded minus the number of
// successful Remove calls: the number of keys in the filter.
func (f *Filter) N() uint64 { return f.n }

// Seed returns the base hash seed.
func (f *Filter) Seed() uint64 { return f.cfg.Seed }

// Kind returns "dlcbf".
func (f *Filter) Kind() string { return "dlcbf" }

// Bits returns the size of the structure in bits: d·B buckets of
// BucketBits() bits.
func (f *Filter) Bits() uint64 { return uint64(f.d) * f.nb * f.bbits }

// BucketBits returns the bits of one bucket, header included.
func (f *Filter) BucketBits() uint64 { return f.bbits }

// Cells returns the number of cells, d·B·h: no more distinct keys fit.
func (f *Filter) Cells() uint64 { return uint64(f.d) * f.nb * uint64(f.h) }

// Capacity returns the number of keys the filter was sized for
// (NewWithEstimates, NewWithBitsPerKey, SetCapacity; 0: unknown). It is
// informational and stored in files; Cells bounds what fits.
func (f *Filter) Capacity() uint64 { return f.capacity }

// SetCapacity records the number of keys the filter was designed for. It
// panics on the zero Filter.
func (f *Filter) SetCapacity(n uint64) {
	f.mustBeMade("SetCapacity")
	f.capacity = n
}

// errZero is the error of a mutator called on the zero Filter.
func errZero(method string) error {
	return fmt.Errorf("dlcbf: %s on the zero Filter, which has no room; create one with New, NewWithEstimates or NewWithBitsPerKey: %w", method, ErrParam)
}

// mustBeMade panics, naming the constructors, if f is the zero Filter.
func (f *Filter) mustBeMade(method string) {
	if f.words == nil {
		panic(errZero(method).Error())
	}
}

// Digest hashes key with the filter's seed: the pre-hashed form taken by
// AddHash, RemoveHash, ContainsHash and CountHash.
func (f *Filter) Digest(key []byte) hashing.Digest { return hashing.Sum(key, f.cfg.Seed) }

// Add inserts key. It returns an error wrapping ErrFull, changing nothing,
// if the key needs a new cell and all its d buckets are full.
func (f *Filter) Add(key []byte) error { return f.AddHash(hashing.Sum(key, f.cfg.Seed)) }

// AddString is Add for a string key.
func (f *Filter) AddString(key string) error {
	return f.AddHash(hashing.SumString(key, f.cfg.Seed))
}

// AddHash inserts the key whose digest (under this filter's seed) is dg.
func (f *Filter) AddHash(dg hashing.Digest) error {
	if f.words == nil {
		return errZero("Add")
	}
	var pl placement
	f.places(dg, &pl)
	best, bestFree := 0, 0
	bestLoad, ties := f.h, 0
	for i := 0; i < f.d && i < MaxSubtables; i++ {
		var pr probe
		switch f.cfg.Variant {
		case Static:
			pr = f.probeStatic(pl.pos[i], pl.rho[i])
		case Dynamic:
			pr = f.probeDynamic(pl.pos[i], pl.rho[i])
		default:
			pr = f.probeTwo(pl.pos[i], pl.rho[i])
		}
		// A cell matching the key with room in its counter takes it.
		if pr.hitW > 0 {
			setBits(f.words, pr.hit, pr.hitW, cell(f.words, pr.hit, pr.hitW, lowMask(pr.hitW))+1)
			f.n++
			return nil
		}
		// A bucket already holding the key's minimal remainder takes it
		// (002 §III-A); otherwise the least loaded, leftmost on ties
		// (TieHash: the t-th tied bucket replaces the choice with
		// probability 1/t, drawn from the digest).
		if !pr.same && f.cfg.Ties == TieLeft {
			// The usual case: take the bucket if it is less loaded. The
			// comparison is a coin flip, so it is made with a mask (all
			// ones if pr.load < bestLoad) rather than a branch.
			lt := (pr.load - bestLoad) >> (bits.UintSize - 1)
			best ^= (best ^ i) & lt
			bestFree ^= (bestFree ^ pr.free) & lt
			bestLoad ^= (bestLoad ^ pr.load) & lt
			continue
		}
		take := pr.load < f.h && (pr.same && bestLoad >= 0 || pr.load < bestLoad)
		if pr.load < bestLoad {
			ties = 1
		} else if pr.load == bestLoad && pr.load < f.h && f.cfg.Ties == TieHash && !take {
			ties++
			take = hashing.Reduce(mix(dg.H1^dg.H2, uint64(ties)), uint64(ties)) == 0
		}
		if take {
			best, bestFree, bestLoad = i, pr.free, pr.load
			if pr.same {
				bestLoad = -1 // keep it
			}
		}
	}
	if bestLoad == f.h {
		return fmt.Errorf("dlcbf: all %d buckets of the key hold %d cells: %w", f.d, f.h, ErrFull)
	}
	if f.cfg.Variant == Static {
		cw := f.r + f.c
		setBits(f.words, pl.pos[best]+uint64(bestFree)*uint64(cw), cw, (pl.rho[best]&lowMask(f.r))<<f.c|1)
	} else {
		f.addCell(pl.pos[best], pl.rho[best])
	}
	f.n++
	return nil
}

// Remove deletes one occurrence of key: it decrements the longest cell
// matching the key among its d buckets, freeing it at zero. If no cell
// matches (the filter proves the key absent) Remove changes nothing and
// returns an error wrapping ErrNotPresent. Remove must only be given keys
// that were added: removing a false positive takes another key's cell.
func (f *Filter) Remove(key []byte) error { return f.RemoveHash(hashing.Sum(key, f.cfg.Seed)) }

// RemoveString is Remove for a string key.
func (f *Filter) RemoveString(key string) error {
	return f.RemoveHash(hashing.SumString(key, f.cfg.Seed))
}

// RemoveHash is Remove for a pre-hashed key.
func (f *Filter) RemoveHash(dg hashing.Digest) error {
	if f.words == nil {
		return errZero("Remove")
	}
	var pl placement
	f.places(dg, &pl)
	// The longest matching cell, the first of its length.
	best, bestJ, bestLn := -1, 0, -1
	var bestP uint64
	var bestW uint
subtables:
	for i := 0; i < f.d && i < MaxSubtables; i++ {
		switch f.cfg.Variant {
		case Static: // every cell has r bits: the first match is the one
			if p, ok := f.findStatic(pl.pos[i], pl.rho[i]); ok {
				best, bestP, bestW = i, p, f.r+f.c
				break subtables
			}
		case Dynamic:
			if j, p, cw, ln := f.findDynamic(pl.pos[i], pl.rho[i], bestLn); j >= 0 {
				best, bestJ, bestP, bestW, bestLn = i, j, p, cw, ln
			}
		default:
			if j, p, cw, ln := f.findTwo(pl.pos[i], pl.rho[i], bestLn); j >= 0 {
				best, bestJ, bestP, bestW, bestLn = i, j, p, cw, ln
			}
		}
	}
	if best < 0 {
		return ErrNotPresent
	}
	w := f.words
	v := cell(w, bestP, bestW, lowMask(bestW))
	cm := lowMask(f.c)
	switch {
	case f.cfg.Variant == Static && v&cm == 1: // counter 0 frees the cell
		setBits(w, bestP, bestW, 0)
	case f.cfg.Variant == Static || v&cm != 0: // count − 1 > 0
		setBits(w, bestP, bestW, v-1)
	default: // the dynamic cell's last copy
		f.freeCell(pl.pos[best], bestJ, bestP, bestW)
	}
	f.n--
	return nil
}

// Contains reports whether key may be in the filter: false means certainly
// not.
func (f *Filter) Contains(key []byte) bool { return f.ContainsHash(hashing.Sum(key, f.cfg.Seed)) }

// ContainsString is Contains for a string key.
func (f *Filter) ContainsString(key string) bool {
	return f.ContainsHash(hashing.SumString(key, f.cfg.Seed))
}

// ContainsHash is Contains for a pre-hashed key.
func (f *Filter) ContainsHash(dg hashing.Digest) bool {
	var pl placement
	f.places(dg, &pl)
	switch f.cfg.Variant {
	case Static:
		return f.containsStatic(&pl)
	case Dynamic:
		return f.containsDynamic(&pl)
	}
	return f.containsTwo(&pl) // false for the zero Filter: d = 0
}

// scan looks for cells of the bucket at pos matching remainder x. With
// sum == nil it stops at the first; otherwise it adds every match's count
// to *sum.
func (f *Filter) scan(pos, x uint64, sum *uint64) bool {
	w, c := f.words, f.c
	found := false
	switch f.cfg.Variant {
	case Static:
		cw := f.r + c
		want := (x & lowMask(f.r)) << c
		cm := lowMask(c)
		for j := 0; j < f.h; j++ {
			v := getBits(w, pos, cw)
			if v&^cm == want && v&cm != 0 {
				if sum == nil {
					return true
				}
				*sum += v & cm
				found = true
			}
			pos += uint64(cw)
		}
	case Dynamic:
		hd := getBits(w, pos, dynHeader)
		load, m, z := int(hd&15), int(hd>>4&15), int(hd>>8&15)
		if load == 0 {
			return false
		}
		cw := uint(f.width[m])
		lo, hi := 0, z
		if x&1 != 0 {
			lo, hi = z, load
		}
		want := ((x >> 1) & lowMask(cw-c)) << c
		cm := lowMask(c)
		p := pos + dynHeader + uint64(lo)*uint64(cw)
		for j := lo; j < hi; j++ {
			v := getBits(w, p, cw)
			if v&^cm == want {
				if sum == nil {
					return true
				}
				*sum += v&cm + 1
				found = true
			}
			p += uint64(cw)
		}
	case TwoSizes:
		hd := getBits(w, pos, twoHeader)
		a, b, s, t := int(hd&15), int(hd>>4&15), uint(hd>>8&127), uint(hd>>15&127)
		cm := lowMask(c)
		p := pos + twoHeader
		cw := s
		for j := 0; j < a+b; j++ {
			if j == a {
				cw = t
			}
			v := getBits(w, p, cw)
			if v&^cm == (x&lowMask(cw-c))<<c {
				if sum == nil {
					return true
				}
				*sum += v&cm + 1
				found = true
			}
			p += uint64(cw)
		}
	}
	return found
}

// Count returns the sum of the counts of the cells matching key in its d
// buckets: 0 if key is certainly absent, otherwise an upper bound on the
// number of times it is in the filter (exact unless another key's cell
// matches it, a false positive).
func (f *Filter) Count(key []byte) uint64 { return f.CountHash(hashing.Sum(key, f.cfg.Seed)) }

// CountString is Count for a string key.
func (f *Filter) CountString(key string) uint64 {
	return f.CountHash(hashing.SumString(key, f.cfg.Seed))
}

// CountHash is Count for a pre-hashed key.
func (f *Filter) CountHash(dg hashing.Digest) uint64 {
	b, rr, z := f.fingerprint(dg)
	var sum uint64
	for i := 0; i < f.d; i++ {
		pos, rho := f.locate(i, b, rr, z)
		f.scan(pos, rho, &sum)
	}
	return sum
}

// Clear removes every key.
func (f *Filter) Clear() {
	clear(f.words)
	f.n = 0
}

// Clone returns an independent copy of f.
func (f *Filter) Clone() *Filter {
	g := *f
	g.words = slices.Clone(f.words)
	return &g
}

// Equal reports whether f and g have the same configuration and contents
// (their capacities, informational, may differ).
func (f *Filter) Equal(g *Filter) bool {
	return f.cfg == g.cfg && f.n == g.n && slices.Equal(f.words, g.words)
}

// EstimatedFPR returns the false-positive rate implied by the state: with
// p_i = (1/B)·Σ_buckets Σ_cells 2^−ℓ the expected number of cells of
// subtable i matching a random absent key (ℓ a cell's effective remainder
// length), 1 − Π_i (1 − p_i).
func (f *Filter) EstimatedFPR() float64 {
	var bk bucket
	q := 1.0
	for i := 0; i < f.d; i++ {
		s := 0.0
		for j := uint64(0); j < f.nb; j++ {
			f.decode((uint64(i)*f.nb+j)*f.bbits, &bk)
			for k := 0; k < bk.n; k++ {
				s += math.Ldexp(1, -int(bk.ln[k]))
			}
		}
		q *= 1 - s/float64(f.nb)
	}
	return 1 - q
}

// LoadHistogram returns, for load j = 0 … h, the number of buckets holding
// j cells now.
func (f *Filter) LoadHistogram() []uint64 {
	out := make([]uint64, f.h+1)
	var bk bucket
	for p := uint64(0); p < uint64(f.d)*f.nb; p++ {
		f.decode(p*f.bbits, &bk)
		out[bk.n]++
	}
	return out
}

// MaxLoadHistogram returns, for j = 0 … h, the number of buckets whose
// largest load so far is j: the quantity that sets a Dynamic bucket's
// remainder length (002 §III-C). It returns nil for the other variants,
// which do not record it.
func (f *Filter) MaxLoadHistogram() []uint64 {
	if f.cfg.Variant != Dynamic {
		return nil
	}
	out := make([]uint64, f.h+1)
	for p := uint64(0); p < uint64(f.d)*f.nb; p++ {
		out[getBits(f.words, p*f.bbits, dynHeader)>>4&15]++
	}
	return out
}

// RemainderHistogram returns, for ℓ = 0 … 64, the number of cells whose
// effective remainder is ℓ bits.
func (f *Filter) RemainderHistogram() []uint64 {
	out := make([]uint64, 65)
	var bk bucket
	for p := uint64(0); p < uint64(f.d)*f.nb; p++ {
		f.decode(p*f.bbits, &bk)
		for k := 0; k < bk.n; k++ {
			out[bk.ln[k]]++
		}
	}
	return out
}
