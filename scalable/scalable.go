package scalable

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/kind"
)

// Errors returned by this package wrap these values.
var (
	// ErrParam: a parameter is out of range, or the zero Filter was used.
	ErrParam = kind.ErrParam
	// ErrIncompatible: two chains cannot be combined.
	ErrIncompatible = kind.ErrIncompatible
	// ErrFull: the filter cannot take a new key (a non-scaling filter at
	// its capacity, or a chain that cannot add a link); nothing changed.
	ErrFull = errors.New("filter is full")
)

// Profile selects how a chain hashes keys and lays out its links.
type Profile uint8

// The profiles (package documentation, "Profiles").
const (
	// Bloomlab: xxh3-128 with the filter's seed, enhanced double hashing,
	// links sized by theory.Size.
	Bloomlab Profile = 1
	// RedisBloom: bit for bit RedisBloom 2.x.
	RedisBloom Profile = 2
	// Blocked: xxh3-128 with the filter's seed, each link a
	// cache-line-blocked filter (package blocked's layout: one 512-bit
	// block per key), sized by the blocked filter's rate
	// (theory.SizeBlocked).
	Blocked Profile = 3
)

func (p Profile) String() string {
	switch p {
	case Bloomlab:
		return "bloomlab"
	case RedisBloom:
		return "redisbloom"
	case Blocked:
		return "blocked"
	}
	return fmt.Sprintf("profile(%d)", uint8(p))
}

// ParseProfile returns the profile named "bloomlab", "redisbloom" or
// "blocked".
func ParseProfile(name string) (Profile, error) {
	for _, p := range []Profile{Bloomlab, RedisBloom, Blocked} {
		if p.String() == name {
			return p, nil
		}
	}
	return 0, fmt.Errorf("scalable: unknown profile %q (want bloomlab, redisbloom or blocked): %w", name, ErrParam)
}

// scheme is the hash scheme byte of the profile's files.
func (p Profile) scheme() hashing.Scheme {
	switch p {
	case RedisBloom:
		return hashing.RedisBloom
	case Blocked:
		return hashing.Independent
	}
	return hashing.Enhanced
}

// The defaults of a zero Config field, as RedisBloom's BF.ADD uses them
// (DefaultConfig).
const (
	defaultCapacity  = 100
	defaultFPR       = 0.01
	defaultExpansion = 2
	defaultRatio     = 0.5
)

// maxLinks bounds the links of a chain (and of a file or dump): 4096. A
// RedisBloom chain cannot reach it: its rates halve per link and
// underflow after about 1,075 links.
const maxLinks = 4096

// MaxExpansion bounds Config.Expansion, as RedisBloom 8 bounds EXPANSION
// (1 … 32768). A bloomlab-profile chain read from a file with a larger
// expansion loads but does not grow (ErrFull); a RedisBloom dump keeps
// the expansion it records, and its growth is bounded by the 2^48-bit
// link and the memory budget (SetMaxBits).
const MaxExpansion = 32768

// DefaultConfig returns what the zero fields of a Config stand for, the
// defaults of RedisBloom's BF.ADD: Capacity 100, FPR 0.01, Expansion 2,
// Ratio 1/2, the Bloomlab profile, seed 0, no memory budget.
func DefaultConfig() Config {
	return Config{Capacity: defaultCapacity, FPR: defaultFPR, Expansion: defaultExpansion, Ratio: defaultRatio, Profile: Bloomlab}
}

// Config describes a new chain (New), or an existing one (Filter.Config).
// Zero fields take the defaults of DefaultConfig; a negative zero FPR or
// Ratio is refused (ErrParam).
type Config struct {
	// Capacity is the number of keys of the first link (default 100, as
	// RedisBloom): the n0 of the package documentation.
	Capacity uint64
	// FPR is the compound false-positive rate ε the chain never exceeds
	// (at its links' capacities), in (0, 1) (default 0.01).
	FPR float64
	// Expansion is the factor by which each link's capacity exceeds the
	// previous one's (default 2; 1 keeps links equal).
	Expansion uint32
	// Ratio is the factor by which each link's rate is below the previous
	// one's, in (0, 1) (default 1/2; the RedisBloom profile takes only
	// 1/2).
	Ratio float64
	// NonScaling makes a one-link filter at rate FPR that refuses new keys
	// past Capacity (RedisBloom's NONSCALING).
	NonScaling bool
	// Profile is Bloomlab (the default), RedisBloom or Blocked.
	Profile Profile
	// Seed is the seed of the base hash (Bloomlab and Blocked profiles; the
	// RedisBloom profile hashes with RedisBloom's fixed seeds and takes
	// only 0).
	Seed uint64
	// MaxBits is the memory budget of the chain in bits (0: none but the
	// 2^48 bits of a link): an Add that would open a link bringing Bits()
	// above it fails with ErrFull and changes nothing (SetMaxBits). It is
	// not stored in files.
	MaxBits uint64
}

// withDefaults returns c with the zero fields set, or an error naming the
// first invalid field.
func (c Config) withDefaults() (Config, error) {
	// A zero field means its default; a negative zero is a value given,
	// and out of range (a rate of "-0" used to become the default).
	if math.Signbit(c.FPR) || math.Signbit(c.Ratio) {
		return c, fmt.Errorf("scalable: FPR = %v, Ratio = %v: a rate or ratio must be positive: %w", c.FPR, c.Ratio, ErrParam)
	}
	if c.Capacity == 0 {
		c.Capacity = defaultCapacity
	}
	if c.FPR == 0 {
		c.FPR = defaultFPR
	}
	if c.Expansion == 0 {
		c.Expansion = defaultExpansion
	}
	if c.Expansion > MaxExpansion {
		return c, fmt.Errorf("scalable: Expansion = %d out of range [1, %d]: %w", c.Expansion, MaxExpansion, ErrParam)
	}
	if c.Ratio == 0 {
		c.Ratio = defaultRatio
	}
	if c.Profile == 0 {
		c.Profile = Bloomlab
	}
	switch {
	case !(c.FPR > 0 && c.FPR < 1):
		return c, fmt.Errorf("scalable: FPR = %v out of range (0, 1): %w", c.FPR, ErrParam)
	case !(c.Ratio > 0 && c.Ratio < 1):
		return c, fmt.Errorf("scalable: Ratio = %v out of range (0, 1): %w", c.Ratio, ErrParam)
	case c.Profile != Bloomlab && c.Profile != RedisBloom && c.Profile != Blocked:
		return c, fmt.Errorf("scalable: Profile = %d, want Bloomlab (1), RedisBloom (2) or Blocked (3): %w", c.Profile, ErrParam)
	case c.Profile == RedisBloom && c.Ratio != redisTighten:
		return c, fmt.Errorf("scalable: Ratio = %v: the redisbloom profile tightens by exactly 0.5: %w", c.Ratio, ErrParam)
	case c.Profile == RedisBloom && c.Seed != 0:
		return c, fmt.Errorf("scalable: Seed = %d: the redisbloom profile hashes with RedisBloom's fixed seeds (want 0): %w", c.Seed, ErrParam)
	}
	return c, nil
}

// Filter is a growing chain of Bloom filters. The zero value is an empty
// filter with no room in it: Contains answers false, Add and the
// encoders return errors wrapping ErrParam. Create filters with New or
// NewRedisBloom; a Filter must not be copied.
type Filter struct {
	mu    sync.Mutex              // serialises adds, unions and snapshots
	links atomic.Pointer[[]*link] // replaced, never modified, when a link is added
	card  atomic.Uint64           // adds that answered "new" (Σ link sizes)

	id      atomic.Uint64 // lock order for Union and Equal; assigned on first use
	profile Profile
	seed    uint64
	growth  uint32
	ratio   float64
	options uint32        // RedisBloom's option bits; the bloomlab profile uses only optNoScaling
	maxBits atomic.Uint64 // memory budget (0: none); set under mu
	// next is the shape of the link after link `after`, the newest of a
	// chain of `links` links (nextShape's cache); under mu.
	next struct {
		after *link
		links int
		s     shape
		err   error
	}
}

var lastID atomic.Uint64

// New returns an empty chain for c.
func New(c Config) (*Filter, error) {
	c, err := c.withDefaults()
	if err != nil {
		return nil, err
	}
	f := &Filter{profile: c.Profile, seed: c.Seed, growth: c.Expansion, ratio: c.Ratio}
	f.maxBits.Store(c.MaxBits)
	if c.Profile == RedisBloom {
		f.options = redisOptions
	}
	if c.NonScaling {
		f.options |= optNoScaling
	}
	l, err := f.firstLink(c.Capacity, c.FPR)
	if err != nil {
		return nil, fmt.Errorf("scalable: %v: %w", err, ErrParam)
	}
	ls := []*link{l}
	f.links.Store(&ls)
	return f, nil
}

// FirstLinkBits returns the bits of the first link New(c) allocates,
// without allocating anything: what a caller bounding memory reserves
// before New. Errors are New's (wrapping ErrParam).
func FirstLinkBits(c Config) (uint64, error) {
	c, err := c.withDefaults()
	if err != nil {
		return 0, err
	}
	f := &Filter{profile: c.Profile, growth: c.Expansion, ratio: c.Ratio}
	eps := c.FPR
	if c.Profile == RedisBloom {
		f.options = redisOptions
	}
	if c.NonScaling {
		f.options |= optNoScaling
	} else {
		eps *= 1 - c.Ratio
	}
	s, err := f.linkShape(c.Capacity, eps)
	if err != nil {
		return 0, fmt.Errorf("scalable: %v: %w", err, ErrParam)
	}
	return s.bits, nil
}

// firstLink returns link 0 for a chain of initial capacity n0 and target
// eps: at eps for a non-scaling chain, else at eps·(1 − r) (RedisBloom:
// eps·0.5).
func (f *Filter) firstLink(n0 uint64, eps float64) (*link, error) {
	if f.options&optNoScaling == 0 {
		eps *= 1 - f.ratio
	}
	return f.newLink(n0, eps)
}

func (f *Filter) snapshot() []*link {
	if p := f.links.Load(); p != nil {
		return *p
	}
	return nil
}

// Digest returns the profile's hash of key: the seeded xxh3-128 digest
// (Bloomlab), or RedisBloom's two MurmurHash64A values as H1 and H2. It
// is the pre-hashed form ContainsHash and AddHash take.
func (f *Filter) Digest(key []byte) hashing.Digest {
	if f.profile == RedisBloom {
		a, b := hashing.RedisBloomHash(key)
		return hashing.Digest{H1: a, H2: b}
	}
	return hashing.Sum(key, f.seed)
}

// Prefetch brings into the cache the words that ContainsHash (probes
// false) or AddHash (probes true) of the digests ds (from Digest) will
// read first: each link's first probe, or every probe of the newest link
// (where a new key's bits go). It changes nothing and answers nothing; it
// only makes the calls after it cheaper: a command with many keys
// (BF.MEXISTS, BF.MADD) hashes a group of them, calls it, then answers
// them one by one, so that their cache misses overlap instead of
// following one another. It allocates nothing. Keep a group small enough
// that its words stay in the cache (a few dozen keys).
func (f *Filter) Prefetch(ds []hashing.Digest, probes bool) {
	ls := f.snapshot()
	if len(ls) == 0 {
		return
	}
	newest := ls[len(ls)-1]
	for _, d := range ds {
		if probes {
			newest.touch(d, newest.k)
			continue
		}
		for _, l := range ls {
			l.touch(d, 1)
		}
	}
}

// Contains reports whether key may have been added: false means certainly
// not.
func (f *Filter) Contains(key []byte) bool { return f.ContainsHash(f.Digest(key)) }

// ContainsHash is Contains for a digest from f.Digest.
func (f *Filter) ContainsHash(d hashing.Digest) bool {
	ls := f.snapshot()
	for i := len(ls) - 1; i >= 0; i-- {
		if ls[i].has(d) {
			return true
		}
	}
	return false
}

// Add adds key and reports whether it may already have been
// present (BF.ADD's 0): then nothing changed and N did not grow. Otherwise
// the key went into the newest link, opening a new link if that one was
// full, and N grew by one (BF.ADD's 1). A non-scaling filter at capacity,
// or a chain that cannot grow, refuses a new key with an error wrapping
// ErrFull (RedisBloom: "non scaling filter is full") and changes nothing.
func (f *Filter) Add(key []byte) (present bool, err error) {
	return f.AddHash(f.Digest(key))
}

// AddHash is Add for a digest from f.Digest.
func (f *Filter) AddHash(d hashing.Digest) (present bool, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ls := f.snapshot()
	if len(ls) == 0 {
		return false, errZero
	}
	for i := len(ls) - 1; i >= 0; i-- {
		if ls[i].has(d) {
			return true, nil
		}
	}
	cur := ls[len(ls)-1]
	if cur.size >= cur.entries {
		if f.options&optNoScaling != 0 {
			return false, fmt.Errorf("scalable: non scaling %w (capacity %d)", ErrFull, cur.entries)
		}
		s, err := f.nextLink(ls)
		if err != nil {
			return false, fmt.Errorf("scalable: %w: %v", ErrFull, err)
		}
		next, err := f.alloc(s)
		if err != nil {
			return false, fmt.Errorf("scalable: %w: %v", ErrFull, err)
		}
		grown := append(ls[:len(ls):len(ls)], next)
		f.links.Store(&grown)
		cur = next
	}
	if cur.blocks != 0 {
		cur.setBlocked(d)
	} else {
		cur.set(d)
	}
	cur.size++
	f.card.Add(1)
	return false, nil
}

var errZero = fmt.Errorf("scalable: the zero Filter has no room; create one with New or NewRedisBloom: %w", ErrParam)

// Kind returns "scalable".
func (f *Filter) Kind() string { return "scalable" }

// N returns the number of adds that answered "new" (RedisBloom's "Number
// of items inserted", BF.CARD): repeats and false positives are not
// counted.
func (f *Filter) N() uint64 { return f.card.Load() }

// Capacity returns the sum of the links' capacities (RedisBloom's
// "Capacity"). It grows with the chain. A sum beyond 2^64 − 1 (a crafted
// file or dump) saturates at 2^64 − 1, where RedisBloom's BF.INFO (and
// RedisInfo) wraps around.
func (f *Filter) Capacity() uint64 {
	var c uint64
	for _, l := range f.snapshot() {
		var over bool
		if c, over = addOverflow(c, l.entries); over {
			return math.MaxUint64
		}
	}
	return c
}

// SetMaxBits sets the chain's memory budget in bits (0: none but the
// 2^48 bits of a link; Config.MaxBits): from then on an Add that would
// open a link bringing Bits() above it fails with an error wrapping
// ErrFull and changes nothing. The links the chain has are kept whatever
// the budget. Safe for concurrent use.
func (f *Filter) SetMaxBits(bits uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.maxBits.Store(bits)
}

// MaxBits returns the memory budget set by Config.MaxBits or SetMaxBits
// (0: none). It never blocks.
func (f *Filter) MaxBits() uint64 { return f.maxBits.Load() }

// Bits returns the memory of the links' bits.
func (f *Filter) Bits() uint64 {
	var b uint64
	for _, l := range f.snapshot() {
		b += l.bits
	}
	return b
}

// Room returns how many more new keys the newest link takes before the
// next new key opens a link (a non-scaling chain: before it refuses new
// keys). A caller bounding memory checks NextLinkBits only when Room is
// 0. It is 0 for the zero Filter.
func (f *Filter) Room() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	ls := f.snapshot()
	if len(ls) == 0 {
		return 0
	}
	cur := ls[len(ls)-1]
	if cur.size >= cur.entries {
		return 0
	}
	return cur.entries - cur.size
}

// Links returns the number of links.
func (f *Filter) Links() int { return len(f.snapshot()) }

// Seed returns the seed of the base hash (0 for the RedisBloom profile).
func (f *Filter) Seed() uint64 { return f.seed }

// Config returns the chain's parameters, for a chain made by New,
// NewRedisBloom or read from a file or dump alike: Capacity is its first
// link's capacity (Filter.Capacity is the sum over the links); FPR the
// compound rate ε it was created for, as its first link records it (that
// link's rate divided by 1 − Ratio, by 1 for a non-scaling chain);
// Expansion as recorded (a RedisBloom NONSCALING chain may record 0);
// Ratio, NonScaling, Profile and Seed; MaxBits the memory budget
// (SetMaxBits), which files do not store. The zero Filter gives the zero
// Config. It never blocks.
func (f *Filter) Config() Config {
	c := Config{Expansion: f.growth, Ratio: f.ratio, NonScaling: f.nonScaling(), Profile: f.profile, Seed: f.seed, MaxBits: f.MaxBits()}
	if ls := f.snapshot(); len(ls) > 0 {
		c.Capacity, c.FPR = ls[0].entries, f.targetFPR()
	}
	return c
}

// nonScaling reports whether the chain refuses to grow.
func (f *Filter) nonScaling() bool { return f.options&optNoScaling != 0 }

// targetFPR is Config().FPR: the first link's rate divided by 1 − r (by
// 1 for a non-scaling chain); 0 for the zero Filter.
func (f *Filter) targetFPR() float64 {
	ls := f.snapshot()
	if len(ls) == 0 {
		return 0
	}
	if f.nonScaling() {
		return ls[0].errRate
	}
	return ls[0].errRate / (1 - f.ratio)
}

// fprBound is Σ ε_i over the links ls (Stats.Bound).
func fprBound(ls []*link) float64 {
	s := 0.0
	for _, l := range ls {
		s += l.errRate
	}
	return s
}
