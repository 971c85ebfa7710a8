package cuckoo

import (
	"errors"
	"fmt"
	"github.com/bloomlab/bloomlab/internal/redisbloom"
	"math"
	"math/bits"
	"sync"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/internal/sysmem"
)

// Errors returned by this package wrap these values.
var (
	// ErrParam: a parameter is out of range, or the zero Filter was used.
	ErrParam = kind.ErrParam
	// ErrIncompatible: two filters cannot be merged.
	ErrIncompatible = kind.ErrIncompatible
	// ErrFull: the filter cannot take the key (no free slot within the
	// relocation budget, and it may not grow); nothing was changed.
	ErrFull = errors.New("cuckoo: filter is full")
	// ErrCannotGrow wraps ErrFull: the filter was allowed to grow but its
	// next sub-filter cannot be created (too large, or too many); nothing
	// was changed. RedisBloom reports this case as an allocation failure.
	ErrCannotGrow = fmt.Errorf("cannot grow: %w", ErrFull)
	// ErrNotPresent: Remove was given a key the filter proves absent;
	// nothing was changed. It wraps kind.ErrNotPresent.
	ErrNotPresent = fmt.Errorf("cuckoo: %w", kind.ErrNotPresent)
)

// Profile selects how a filter hashes keys and lays out its buckets.
type Profile uint8

// The profiles (package documentation, "Profiles").
const (
	// Bloomlab: xxh3-128 with the filter's seed, f-bit fingerprints packed
	// in buckets of 1, 2, 4 or 8 slots, optional semi-sorting.
	Bloomlab Profile = 1
	// RedisBloom: bit for bit RedisBloom 2.4's cuckoo filter (CF.*).
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

// parseProfile returns the profile named "bloomlab" or "redisbloom".
func parseProfile(name string) (Profile, error) {
	for _, p := range []Profile{Bloomlab, RedisBloom} {
		if p.String() == name {
			return p, nil
		}
	}
	return 0, fmt.Errorf("cuckoo: unknown profile %q (want bloomlab or redisbloom): %w", name, ErrParam)
}

// DefaultFPR is the target rate when none is given.
const DefaultFPR = 0.01

// NoMaxBits as Config.MaxBits removes the memory budget, the default
// included (as SetMaxBits(0) does): growth is then bounded only by 2^48
// bits per sub-filter and 65535 sub-filters.
const NoMaxBits = math.MaxUint64

// Defaults and limits.
const (
	// defaultBucketSize is the bloomlab profile's slots per bucket (CF §5.1:
	// 95% load, the best bits per key for rates above 0.00001).
	defaultBucketSize = 4
	// defaultMaxKicks is the bloomlab profile's relocation budget (CF §5.1).
	defaultMaxKicks = 500
	// maxKicksLimit bounds the relocation budget of both profiles
	// (RedisBloom's CF_MAX_ITERATIONS).
	maxKicksLimit = redisbloom.CFMaxIterations
	// minFingerprintBits and maxFingerprintBits bound f (bloomlab).
	minFingerprintBits = 4
	maxFingerprintBits = 32
	// maxTableBits bounds one sub-filter's table: 2^48 bits.
	maxTableBits = 1 << 48
	// maxSubFilters bounds the sub-filters of a growing filter
	// (RedisBloom's CF_MAX_NUM_FILTERS). RedisBloom's CF.ADD and
	// CF.INSERT refuse to add to a filter of redisMaxFilters or more.
	maxSubFilters = redisbloom.CFMaxNumFilters
	// redisMaxFilters is RedisBloom's CFMaxExpansions.
	redisMaxFilters = redisbloom.CFMaxExpansions
	// maxExpansion bounds the expansion (RedisBloom's CF_MAX_EXPANSION).
	maxExpansion = redisbloom.CFMaxExpansion
	// CF.RESERVE's and CF.ADD's defaults, which a RedisBloom-profile
	// Config's zero fields take.
	redisDefaultBucketSize    = redisbloom.CFDefaultBucketSize
	redisDefaultMaxIterations = redisbloom.CFDefaultMaxIterations
	redisDefaultExpansion     = redisbloom.CFDefaultExpansion
	redisDefaultCapacity      = redisbloom.CFDefaultCapacity
	// redisMaxBucketSize is RedisBloom's CF_MAX_BUCKET_SIZE.
	redisMaxBucketSize = redisbloom.CFMaxBucketSize
	// defaultMaxGrowth and defaultMinMaxBits make the default memory
	// budget of a filter given none (Config.MaxBits 0, defaultMaxBits):
	// its tables may take defaultMaxGrowth times its first sub-filter's
	// bits or defaultMinMaxBits (2^30 bits, 128 MiB), whichever is
	// larger, but at most half the memory the process may use.
	defaultMaxGrowth  = 1024
	defaultMinMaxBits = 1 << 30
)

// Config describes a filter. Zero fields take the documented defaults,
// except Expansion, whose zero means "does not grow".
type Config struct {
	// Capacity is the number of keys the filter is sized for (the design
	// n). Bloomlab: with FPR it chooses the buckets and, unless
	// FingerprintBits is set, the fingerprint length; required unless
	// Buckets is given. RedisBloom: CF.RESERVE's capacity, ≥ 2·BucketSize;
	// the buckets are the next power of two of Capacity/BucketSize.
	Capacity uint64
	// FPR is the target false-positive rate at Capacity keys (bloomlab;
	// default 0.01). It chooses FingerprintBits when that is 0.
	FPR float64
	// BucketSize is the number of slots per bucket, b: bloomlab 1, 2, 4
	// (default) or 8; RedisBloom 1 … 255 (default 2).
	BucketSize int
	// FingerprintBits is f: bloomlab 4 … 32 (0: the
	// smallest that meets FPR at Capacity keys); RedisBloom 8 (0 means 8).
	FingerprintBits int
	// Buckets is the number of buckets of the first sub-filter (0: from
	// Capacity). Bloomlab: a power of two, or c·2^j with c odd, c ≤ 31,
	// and 2^j ≥ 8192. RedisBloom: 0 or the buckets Capacity gives (as
	// Info reports them).
	Buckets uint64
	// MaxKicks is the relocation budget of an insert: 1 … 65535; default
	// 500 (bloomlab), 20 (RedisBloom's MAXITERATIONS).
	MaxKicks int
	// Expansion makes the filter grow when full: a new sub-filter with
	// Expansion^i times the first one's buckets. 0 (the zero value): the
	// filter does not grow and refuses a key it cannot place with
	// ErrFull. Otherwise a power of two up to 32768 (RedisBloom rounds
	// CF.RESERVE's value up to one: NewRedisBloom does too).
	Expansion int
	// Semisort stores each bucket's four fingerprints sorted, their 4-bit
	// prefixes as one 12-bit code (CF §5.2): one bit per entry less for the
	// same rate. Bloomlab only, BucketSize 4.
	Semisort bool
	// Profile is Bloomlab (the default) or RedisBloom.
	Profile Profile
	// Seed is the seed of the base hash (bloomlab only; RedisBloom hashes
	// with its fixed seed 0).
	Seed uint64
	// MaxBits is the memory budget of a growing filter's tables, in bits
	// (Bits): an add that would grow them past it fails with an error
	// wrapping ErrCannotGrow and changes nothing (SetMaxBits). 0: the
	// default, Info.DefaultMaxBits; NoMaxBits: none. A budget below the first
	// sub-filter's bits is refused (ErrParam). It is not stored in files:
	// a filter read from one has the default until SetMaxBits.
	MaxBits uint64
}

// Filter is a cuckoo filter (package documentation). Create one with New,
// NewWithEstimates, NewWithBitsPerKey or NewRedisBloom; the zero Filter is
// an empty filter with no room (docs/API.md).
type Filter struct {
	profile   Profile
	lay       layout
	maxKicks  int
	expansion uint64 // 0: no growth; else a power of two
	seed      uint64
	capacity  uint64 // design n of the first sub-filter (bloomlab)
	m0        uint64 // buckets of the first sub-filter
	subs      []sub
	n         uint64 // entries held: adds − deletes (RedisBloom's numItems)
	deletes   uint64 // successful deletes (RedisBloom's numDeletes)
	maxBits   uint64 // memory budget: 0 the default, NoMaxBits none
	scratch   []uint64
	// RedisBloom profile: counted says every sub-filter's used is its
	// number of occupied slots and bit i of full is set iff sub-filter i
	// has no free slot (a missing word: none set). An insert's scan for a
	// free slot skips full sub-filters 64 at a time, so a long chain of
	// full sub-filters (EXPANSION 1) costs a word per 64 of them. A
	// filter read from a file or loaded from chunks starts uncounted and
	// is counted by its first insert that scans past the newest
	// sub-filter. Only the writer reads or writes these.
	counted bool
	full    []uint64
}

// sub is one sub-filter: a table of m buckets.
type sub struct {
	m     uint64
	amul  uint64   // bloomlab: altMul, or 0 if tz(m) = 0 (a key's two buckets are one)
	shift uint     // bloomlab: 64 − tz(m) (63 if tz(m) = 0); the alternate bucket flips the low tz(m) bits
	words []uint64 // bloomlab: packed buckets, 2 guard words at the end
	bytes []byte   // RedisBloom: m·b fingerprint bytes
	used  uint64   // RedisBloom: occupied slots, if the filter is counted
}

// Hashing constants (docs/FORMAT.md, kind 9).
const (
	altMul      = 0x9E3779B97F4A7C15 // bloomlab: alternate bucket i ⊕ (fp·altMul ≫ (64 − j))
	redisAltMul = 0x5bd1e995         // RedisBloom: getAltHash
	rngMul      = 6364136223846793005
	rngAdd      = 1442695040888963407
)

var errZero = fmt.Errorf("cuckoo: the zero Filter has no room; create one with New, NewWithEstimates, NewWithBitsPerKey or NewRedisBloom: %w", ErrParam)

// New returns an empty filter for c (Config documents the fields and their
// defaults). Invalid fields give an error wrapping ErrParam that names the
// field.
func New(c Config) (*Filter, error) {
	if c.Profile == RedisBloom {
		if c.FPR != 0 || c.Semisort || c.Seed != 0 || c.FingerprintBits != 0 && c.FingerprintBits != 8 {
			return nil, fmt.Errorf("cuckoo: the RedisBloom profile has 8-bit fingerprints, no semi-sorting and no seed (FPR, Semisort and Seed must be zero, FingerprintBits 0 or 8): %w", ErrParam)
		}
		bs, mi := c.BucketSize, c.MaxKicks
		if bs == 0 {
			bs = redisDefaultBucketSize
		}
		if mi == 0 {
			mi = redisDefaultMaxIterations
		}
		if bs >= 1 && bs <= redisMaxBucketSize {
			nb := redisBuckets(c.Capacity, bs)
			if c.Buckets != 0 && c.Buckets != nb {
				return nil, fmt.Errorf("cuckoo: Buckets = %d, but the RedisBloom profile's buckets follow from Capacity %d and BucketSize %d (%s; Buckets must be 0 or that): %w", c.Buckets, c.Capacity, bs, bucketCount(nb), ErrParam)
			}
			if nb != 0 && nb <= maxTableBits/8/uint64(bs) {
				if err := checkMaxBits(c.MaxBits, nb*8*uint64(bs)); err != nil {
					return nil, err
				}
			}
		}
		f, err := NewRedisBloom(c.Capacity, bs, mi, c.Expansion)
		if err != nil {
			return nil, err
		}
		f.maxBits = c.MaxBits
		return f, nil
	}
	p, err := plan(c)
	if err != nil {
		return nil, err
	}
	if err := checkMaxBits(c.MaxBits, p.Bits()); err != nil {
		return nil, err
	}
	return p.build(), nil
}

// checkMaxBits refuses a budget (Config.MaxBits) below the first
// sub-filter's bits.
func checkMaxBits(budget, first uint64) error {
	if budget != 0 && budget < first {
		return fmt.Errorf("cuckoo: MaxBits = %d, below the %d bits of the first sub-filter: %w", budget, first, ErrParam)
	}
	return nil
}

// NewWithEstimates returns a bloomlab-profile filter for n keys at rate at
// most fpr (PlanFPR: buckets of 4, the smallest fingerprint that meets the
// rate at the design load). seed is the base hash seed; n is the Capacity.
func NewWithEstimates(n uint64, fpr float64, seed uint64) (*Filter, error) {
	return New(Config{Capacity: n, FPR: fpr, Seed: seed})
}

// NewWithBitsPerKey returns a bloomlab-profile filter for n keys using at
// most bitsPerKey·n bits: buckets of 4 for n keys at the design load and
// the longest fingerprint the bits afford (at least 4 bits, else an error
// wrapping ErrParam). seed is the base hash seed.
func NewWithBitsPerKey(n uint64, bitsPerKey float64, seed uint64) (*Filter, error) {
	p, err := planBitsPerKey(n, bitsPerKey, Config{Seed: seed})
	if err != nil {
		return nil, err
	}
	return p.build(), nil
}

// Kind returns "cuckoo".
func (f *Filter) Kind() string { return "cuckoo" }

// Seed returns the seed of the base hash (0 for the RedisBloom profile).
func (f *Filter) Seed() uint64 { return f.seed }

// Info is a filter's parameters and counts (Filter.Info): what CF.INFO
// reports, and more.
type Info struct {
	// Config holds the parameters as New takes them: New(info.Config)
	// returns an empty filter with the same profile, layout, seed,
	// relocation budget and growth, which Merge does not refuse as
	// incompatible with this one.
	// Capacity is the design n of the first sub-filter (CF.RESERVE's
	// capacity; for a RedisBloom filter loaded from CF.SCANDUMP's chunks,
	// which do not record it, its first sub-filter's slots); Buckets is
	// the first sub-filter's buckets (RedisBloom's "Number of buckets");
	// MaxKicks is RedisBloom's "Max iterations", Expansion its "Expansion
	// rate" (0: the filter does not grow). FPR and MaxBits are 0: the
	// rate of the state is EstimatedFPR, the budget MaxBits.
	Config
	// SubFilters is the number of sub-filters (RedisBloom's "Number of
	// filters").
	SubFilters int
	// Slots counts the slots of all sub-filters: the most keys the filter
	// holds without growing.
	Slots uint64
	// N is the number of keys held, N() (RedisBloom's "Number of items
	// inserted").
	N uint64
	// Deletes is the number of successful deletes since the last
	// compaction (RedisBloom's "Number of items deleted").
	Deletes uint64
	// LoadFactor is N/Slots, the fraction of slots holding a fingerprint.
	LoadFactor float64
	// Size is CF.INFO's "Size", RedisBloom's CFSize: the filter struct (40
	// bytes), a sub-filter struct per sub-filter (16 bytes) and the
	// tables' bytes (for the bloomlab profile ⌈buckets·bucket bits/8⌉ per
	// sub-filter).
	Size uint64
	// DefaultMaxBits is the memory budget of the tables when none was set
	// (Config.MaxBits 0): 1024 times the first sub-filter's bits or 2^30
	// bits (128 MiB), whichever is larger, but at most half the memory
	// the process may use (RAM, ulimit -v, the cgroup's limit), so that
	// copies of one key, each of which takes a slot and 2b of which force
	// a growth, cannot grow a filter until the process dies out of
	// memory. SetMaxBits(info.DefaultMaxBits) restores it.
	DefaultMaxBits uint64
}

// Info returns f's parameters and counts; the zero Filter reports zeros.
// It takes constant time for a filter whose sub-filters are equal
// (Expansion ≤ 1), however many, and a step per sub-filter otherwise.
func (f *Filter) Info() Info {
	if len(f.subs) == 0 {
		return Info{}
	}
	in := Info{
		Config: Config{Profile: f.profile, Capacity: f.capacity, BucketSize: f.lay.b, FingerprintBits: f.lay.f,
			Buckets: f.m0, MaxKicks: f.maxKicks, Expansion: int(f.expansion), Semisort: f.lay.semisort, Seed: f.seed},
		SubFilters: len(f.subs), Slots: f.slots(), N: f.n, Deletes: f.deletes,
		Size: uint64(40 + 16*len(f.subs)), DefaultMaxBits: f.defaultMaxBits(),
	}
	if in.Capacity == 0 {
		in.Capacity = f.m0 * uint64(f.lay.b)
	}
	in.LoadFactor = float64(f.n) / float64(in.Slots)
	if f.expansion <= 1 {
		in.Size += uint64(len(f.subs)) * ((f.m0*f.lay.bucketBits + 7) / 8)
	} else {
		for i := range f.subs {
			in.Size += (f.subs[i].m*f.lay.bucketBits + 7) / 8
		}
	}
	return in
}

// N returns the number of keys held: adds minus deletes (RedisBloom's
// "Number of items inserted"). A key added twice is held twice.
func (f *Filter) N() uint64 { return f.n }

// slots returns the slots of every sub-filter: the most keys the filter
// could hold without growing.
func (f *Filter) slots() uint64 {
	return f.buckets() * uint64(f.lay.b)
}

// buckets returns the buckets of every sub-filter, without a loop for a
// chain whose sub-filters are equal (Bits).
func (f *Filter) buckets() uint64 {
	if len(f.subs) > 0 && f.expansion <= 1 {
		// Every sub-filter has the first's buckets: a chain of thousands
		// (EXPANSION 1) costs no loop. (Sub-filter i has m0·expansion^i
		// buckets, which every constructor and decoder checks.)
		return f.subs[0].m * uint64(len(f.subs))
	}
	var m uint64
	for i := range f.subs {
		m += f.subs[i].m
	}
	return m
}

// Capacity returns the number of keys the filter was sized for: the
// design n of the first sub-filter (Config.Capacity, CF.RESERVE's
// capacity) times Σ Expansion^i over the sub-filters. CF.SCANDUMP's
// chunks do not record it: a RedisBloom filter loaded from them (Loader,
// a version-1 BLRD file) reports its slots, buckets × bucket size over
// the sub-filters, as the capacity. WriteRedisBloom's files
// carry it (BLRD version 2).
func (f *Filter) Capacity() uint64 {
	if f.capacity == 0 {
		return f.slots()
	}
	var c, g uint64 = 0, 1
	for range f.subs {
		hi, lo := bits.Mul64(f.capacity, g)
		if hi != 0 || c+lo < c {
			return 1<<64 - 1
		}
		c += lo
		if hi, g = bits.Mul64(g, max(f.expansion, 1)); hi != 0 {
			g = 1<<64 - 1 // only a sum that has saturated can follow
		}
	}
	return c
}

// processMemory is the memory, in bytes, this process may use
// (sysmem.Limit, read once; 0 if unknown).
var processMemory = sync.OnceValue(sysmem.Limit)

// defaultMaxBits returns the memory budget of f's tables when none was
// set (Config.MaxBits 0): defaultMaxGrowth (1024) times its first
// sub-filter's bits or defaultMinMaxBits (2^30 bits, 128 MiB), whichever
// is larger, but at most half the memory the process may use (RAM,
// ulimit -v, the cgroup's limit: internal/sysmem.Limit, read once), so
// that copies of one key, each of which takes a slot and 2b of which
// force a growth, cannot grow a filter until the process dies out of
// memory. It is 0 for the zero Filter.
func (f *Filter) defaultMaxBits() uint64 {
	if len(f.subs) == 0 {
		return 0
	}
	d := uint64(defaultMinMaxBits)
	if hi, g := bits.Mul64(f.m0*f.lay.bucketBits, defaultMaxGrowth); hi != 0 {
		d = math.MaxUint64
	} else {
		d = max(d, g)
	}
	if mem := processMemory(); mem > 0 {
		half := uint64(math.MaxUint64)
		if mem < 1<<62 {
			half = mem * 4 // bits in half of mem bytes
		}
		d = min(d, half)
	}
	return d
}

// SetMaxBits sets the memory budget of f's tables in bits
// (kind.MemoryBudgeter, Config.MaxBits): from then on an add that would
// grow them past it fails with an error wrapping ErrCannotGrow (and
// ErrFull) and changes nothing. 0 removes the budget, the default
// included; the sub-filters f has are kept whatever the budget. On the
// zero Filter, which has no room, it does nothing. bloomlab build and add
// lower it to the memory the process may use where that is less.
func (f *Filter) SetMaxBits(bits uint64) {
	if len(f.subs) == 0 {
		return
	}
	if bits == 0 {
		bits = NoMaxBits
	}
	f.maxBits = bits
}

// MaxBits returns the memory budget of f's tables in bits: the one set
// by Config.MaxBits or SetMaxBits, else the default (Info.DefaultMaxBits);
// 0 if there is none (SetMaxBits(0), NoMaxBits).
func (f *Filter) MaxBits() uint64 {
	if len(f.subs) == 0 {
		return 0
	}
	switch f.maxBits {
	case 0:
		return f.defaultMaxBits()
	case NoMaxBits:
		return 0
	}
	return f.maxBits
}

// Bits returns the memory of the tables in bits: Σ buckets · bucket bits.
func (f *Filter) Bits() uint64 { return f.buckets() * f.lay.bucketBits }

// Hash returns the hash of key the filter's operations use: the xxh3-128
// digest with the filter's seed (bloomlab), or H1 = MurmurHash64A(key, 0)
// and H2 = 0 (RedisBloom). The …Hash methods take it, so that a key
// hashed once can be queried in several filters of one profile and seed.
func (f *Filter) Hash(key []byte) hashing.Digest {
	if f.profile == RedisBloom {
		return hashing.Digest{H1: hashing.MurmurHash64A(key, 0)}
	}
	return hashing.Sum(key, f.seed)
}

// HashString is Hash of a string key.
func (f *Filter) hashString(key string) hashing.Digest {
	if f.profile == RedisBloom {
		return hashing.Digest{H1: hashing.MurmurHash64A([]byte(key), 0)}
	}
	return hashing.SumString(key, f.seed)
}

// Contains reports whether key may have been added: false means certainly
// not (or added and deleted as often).
func (f *Filter) Contains(key []byte) bool {
	if f.lay.mode == modePlain {
		return f.containsPlain(hashing.Sum(key, f.seed))
	}
	return f.ContainsHash(f.Hash(key))
}

// ContainsString is Contains of a string key.
func (f *Filter) ContainsString(key string) bool { return f.ContainsHash(f.hashString(key)) }

// ContainsHash is Contains of a key hashed by Hash.
func (f *Filter) ContainsHash(d hashing.Digest) bool {
	switch f.lay.mode {
	case modePlain:
		return f.containsPlain(d)
	case modeWide, modeSemi:
		return f.containsGeneric(d)
	case modeRedis:
		return f.redisContains(d.H1)
	}
	return false
}

// Add inserts key, another copy if it is already there (CF.ADD). It
// fails with an error wrapping ErrFull, changing nothing, when the key
// finds no free slot within the relocation budget and the filter may not
// grow (or cannot: ErrCannotGrow); it never drops a key.
func (f *Filter) Add(key []byte) error { return f.AddHash(f.Hash(key)) }

// AddString is Add of a string key.
func (f *Filter) AddString(key string) error { return f.AddHash(f.hashString(key)) }

// AddHash is Add of a key hashed by Hash.
func (f *Filter) AddHash(d hashing.Digest) error { return f.addHash(d, nil) }

// AddHashReserve is AddHash for a caller that accounts for memory itself
// (a server bounding its memory): when the key finds no room and the
// filter would add a sub-filter for it, reserve is called first with the
// bits that sub-filter allocates, and an error from reserve is returned
// as it is, with nothing changed. reserve is not called for a key that
// takes a free slot or a relocation, nor by a filter that does not grow
// (ErrFull) or cannot (ErrCannotGrow: the sub-filter would be too large,
// too many, or past the budget MaxBits); once reserve accepts, the
// sub-filter is added and takes the key. Other errors are Add's; a nil
// reserve makes it AddHash.
func (f *Filter) AddHashReserve(d hashing.Digest, reserve func(bits uint64) error) error {
	return f.addHash(d, reserve)
}

func (f *Filter) addHash(d hashing.Digest, reserve func(bits uint64) error) error {
	switch f.lay.mode {
	case modePlain, modeWide, modeSemi:
		return f.insert(d, reserve)
	case modeRedis:
		return f.redisInsert(d.H1, reserve)
	}
	return errZero
}

// AddUnique inserts key unless the filter already reports it present
// (CF.ADDNX, CF.INSERTNX): added is false, and nothing changes, for a key
// that may be present. Errors as for Add.
func (f *Filter) AddUnique(key []byte) (added bool, err error) {
	return f.addUniqueHash(f.Hash(key))
}

// AddUniqueHash is AddUnique of a key hashed by Hash.
func (f *Filter) addUniqueHash(d hashing.Digest) (added bool, err error) {
	if f.lay.mode == 0 {
		return false, errZero
	}
	if f.ContainsHash(d) {
		return false, nil
	}
	if err := f.AddHash(d); err != nil {
		return false, err
	}
	return true, nil
}

// Count returns how many copies of key's fingerprint the filter holds in
// key's buckets (CF.COUNT): at least the number of times key was added and
// not deleted, more when other keys share its fingerprint and buckets.
// The RedisBloom profile counts, as RedisBloom does, a bucket twice when a
// key's two buckets are one.
func (f *Filter) Count(key []byte) uint64 { return f.countHash(f.Hash(key)) }

// CountHash is Count of a key hashed by Hash.
func (f *Filter) countHash(d hashing.Digest) uint64 {
	switch f.lay.mode {
	case modePlain, modeWide, modeSemi:
		return f.count(d)
	case modeRedis:
		return f.redisCount(d.H1)
	}
	return 0
}

// Delete removes one copy of key's fingerprint from key's buckets, newest
// sub-filter first, and reports whether it found one (CF.DEL). Only keys
// that were added may be deleted: deleting a key that was never added but
// is a false positive removes another key's fingerprint, which can make
// that key a false negative.
func (f *Filter) Delete(key []byte) bool { return f.DeleteHash(f.Hash(key)) }

// DeleteHash is Delete of a key hashed by Hash.
func (f *Filter) DeleteHash(d hashing.Digest) bool {
	switch f.lay.mode {
	case modePlain, modeWide, modeSemi:
		return f.delete(d)
	case modeRedis:
		return f.redisDelete(d.H1)
	}
	return false
}

// Remove is Delete with the error of kind.Remover: it wraps ErrNotPresent
// (and changes nothing) when the filter proves key absent.
func (f *Filter) Remove(key []byte) error {
	if f.lay.mode == 0 {
		return errZero
	}
	if !f.Delete(key) {
		return fmt.Errorf("cuckoo: key %q: %w", truncKey(key), ErrNotPresent)
	}
	return nil
}

func truncKey(k []byte) string {
	if len(k) > 40 {
		return string(k[:40]) + "…"
	}
	return string(k)
}

// fingerprint maps h2 to [1, 2^f − 1] (bloomlab): the high word of
// h2·(2^f − 1), plus one.
func (f *Filter) fingerprint(h2 uint64) uint64 {
	hi, _ := bits.Mul64(h2, f.lay.fpMask)
	return hi + 1
}

// index is a key's first bucket in s: the high word of h1·m.
func (s *sub) index(h1 uint64) uint64 {
	hi, _ := bits.Mul64(h1, s.m)
	return hi
}

// alt is the other bucket of fingerprint fp in bucket i of s: i with its
// low tz(m) bits flipped by the top tz(m) bits of fp·altMul.
func (s *sub) alt(i, fp uint64) uint64 { return i ^ (fp*s.amul)>>(s.shift&63) }
