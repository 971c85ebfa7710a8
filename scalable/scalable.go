package scalable

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/theory"
)

// Errors returned by this package wrap these values.
var (
	// ErrParam: a parameter is out of range, or the zero Filter was used.
	ErrParam = kind.ErrParam
	// ErrIncompatible: two chains cannot be combined.
	ErrIncompatible = kind.ErrIncompatible
	// ErrFull: the filter cannot take a new key (a non-scaling filter at
	// its capacity, or a chain that cannot add a link); nothing changed.
	ErrFull = errors.New("scalable: filter is full")
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
	return 0, fmt.Errorf("scalable: unknown profile %q (want bloomlab or redisbloom): %w", name, ErrParam)
}

// scheme is the hash scheme byte of the profile's files.
func (p Profile) scheme() hashing.Scheme {
	if p == RedisBloom {
		return hashing.RedisBloom
	}
	return hashing.Enhanced
}

// Defaults, as RedisBloom's BF.ADD uses them.
const (
	DefaultCapacity  = 100
	DefaultFPR       = 0.01
	DefaultExpansion = 2
	DefaultRatio     = 0.5
	// MaxLinks bounds the links of a chain (and of a file or dump). A
	// RedisBloom chain cannot reach it: its rates halve per link and
	// underflow after about 1,075 links.
	MaxLinks = 4096
)

// Config describes a new chain. Zero fields take the documented defaults.
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
	// Profile is Bloomlab (the default) or RedisBloom.
	Profile Profile
	// Seed is the seed of the base hash (Bloomlab profile only; the
	// RedisBloom profile hashes with RedisBloom's fixed seeds and takes
	// only 0).
	Seed uint64
}

// withDefaults returns c with the zero fields set, or an error naming the
// first invalid field.
func (c Config) withDefaults() (Config, error) {
	if c.Capacity == 0 {
		c.Capacity = DefaultCapacity
	}
	if c.FPR == 0 {
		c.FPR = DefaultFPR
	}
	if c.Expansion == 0 {
		c.Expansion = DefaultExpansion
	}
	if c.Ratio == 0 {
		c.Ratio = DefaultRatio
	}
	if c.Profile == 0 {
		c.Profile = Bloomlab
	}
	switch {
	case !(c.FPR > 0 && c.FPR < 1):
		return c, fmt.Errorf("scalable: FPR = %v out of range (0, 1): %w", c.FPR, ErrParam)
	case !(c.Ratio > 0 && c.Ratio < 1):
		return c, fmt.Errorf("scalable: Ratio = %v out of range (0, 1): %w", c.Ratio, ErrParam)
	case c.Profile != Bloomlab && c.Profile != RedisBloom:
		return c, fmt.Errorf("scalable: Profile = %d, want Bloomlab (1) or RedisBloom (2): %w", c.Profile, ErrParam)
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
	options uint32 // RedisBloom's option bits; the bloomlab profile uses only OptNoScaling
}

// link is one Bloom filter of the chain. Everything but the bits and size
// is immutable.
type link struct {
	words []uint64 // bit j is bit j mod 64 of word j/64 (byte j/8, bit j mod 8)
	mod   uint64   // positions lie in [0, mod): bits, or 2^n2
	recip uint64   // ⌊(2^64 − 1)/mod⌋
	k     int
	ix    *hashing.Indexer // bloomlab profile; nil for RedisBloom
	redis bool

	bits    uint64  // 64·len(words)
	entries uint64  // capacity
	errRate float64 // design rate
	bpe     float64 // RedisBloom's bits per entry; 0 for bloomlab
	n2      uint8   // RedisBloom's power-of-two exponent; 0 = none
	size    uint64  // keys added to this link; written under Filter.mu
}

var lastID atomic.Uint64

// New returns an empty chain for c.
func New(c Config) (*Filter, error) {
	c, err := c.withDefaults()
	if err != nil {
		return nil, err
	}
	f := &Filter{profile: c.Profile, seed: c.Seed, growth: c.Expansion, ratio: c.Ratio}
	if c.Profile == RedisBloom {
		f.options = redisOptions
	}
	if c.NonScaling {
		f.options |= OptNoScaling
	}
	l, err := f.firstLink(c.Capacity, c.FPR)
	if err != nil {
		return nil, fmt.Errorf("scalable: %v: %w", err, ErrParam)
	}
	ls := []*link{l}
	f.links.Store(&ls)
	return f, nil
}

// NewRedisBloom returns the chain BF.RESERVE key errorRate capacity
// [EXPANSION expansion] [NONSCALING] creates (expansion 0: the default 2).
func NewRedisBloom(errorRate float64, capacity uint64, expansion uint32, nonScaling bool) (*Filter, error) {
	if capacity == 0 {
		return nil, fmt.Errorf("scalable: capacity 0, want at least 1: %w", ErrParam)
	}
	return New(Config{Capacity: capacity, FPR: errorRate, Expansion: expansion, NonScaling: nonScaling, Profile: RedisBloom})
}

// firstLink returns link 0 for a chain of initial capacity n0 and target
// eps: at eps for a non-scaling chain, else at eps·(1 − r) (RedisBloom:
// eps·0.5).
func (f *Filter) firstLink(n0 uint64, eps float64) (*link, error) {
	if f.options&OptNoScaling == 0 {
		eps *= 1 - f.ratio
	}
	return f.newLink(n0, eps)
}

// newLink allocates a link of entries keys at rate errRate in the chain's
// profile.
func (f *Filter) newLink(entries uint64, errRate float64) (*link, error) {
	if f.profile == RedisBloom {
		g, err := redisInit(entries, errRate, f.options)
		if err != nil {
			return nil, err
		}
		return makeRedisLink(g, errRate, make([]uint64, g.bits/64), 0), nil
	}
	m, k, err := bloomlabGeometry(entries, errRate)
	if err != nil {
		return nil, err
	}
	return makeBloomlabLink(m, k, entries, errRate, make([]uint64, m/64), 0)
}

// bloomlabGeometry sizes a bloomlab link: theory.Size's m rounded up to a
// multiple of 64, and its k.
func bloomlabGeometry(entries uint64, errRate float64) (m uint64, k int, err error) {
	if entries < 1 || !(errRate > 0 && errRate < 1) {
		return 0, 0, fmt.Errorf("link of %d entries at rate %v: %w", entries, errRate, errCannotGrow)
	}
	m, k, err = theory.Size(entries, errRate)
	if err != nil {
		return 0, 0, fmt.Errorf("link of %d entries at rate %v: %v: %w", entries, errRate, err, errCannotGrow)
	}
	m = (m + 63) / 64 * 64
	if m > hashing.MaxM || k > hashing.MaxK {
		return 0, 0, fmt.Errorf("link of %d entries at rate %v needs m = %d bits, k = %d (limits 2^48, %d): %w", entries, errRate, m, k, hashing.MaxK, errCannotGrow)
	}
	return m, k, nil
}

func makeRedisLink(g redisGeometry, errRate float64, words []uint64, size uint64) *link {
	mod := g.bits
	if g.n2 > 0 {
		mod = 1 << g.n2
	}
	return &link{words: words, mod: mod, recip: ^uint64(0) / mod, k: g.k, redis: true,
		bits: g.bits, entries: g.entries, errRate: errRate, bpe: g.bpe, n2: g.n2, size: size}
}

func makeBloomlabLink(m uint64, k int, entries uint64, errRate float64, words []uint64, size uint64) (*link, error) {
	ix, err := hashing.NewIndexer(hashing.Enhanced, m, k)
	if err != nil {
		return nil, err
	}
	return &link{words: words, mod: m, recip: ix.Recip(), k: k, ix: ix,
		bits: m, entries: entries, errRate: errRate, size: size}, nil
}

// nextLink allocates the link after cur, the n-th: entries times the
// expansion, the rate times the ratio.
func (f *Filter) nextLink(cur *link, n int) (*link, error) {
	entries, errRate, err := f.nextShape(cur, n)
	if err != nil {
		return nil, err
	}
	return f.newLink(entries, errRate)
}

func (f *Filter) nextShape(cur *link, n int) (entries uint64, errRate float64, err error) {
	if n >= MaxLinks {
		return 0, 0, fmt.Errorf("the chain has %d links, the most it may have: %w", n, errCannotGrow)
	}
	hi, entries := bits.Mul64(cur.entries, uint64(f.growth))
	if hi != 0 || entries == 0 {
		return 0, 0, fmt.Errorf("link of %d × %d entries: %w", cur.entries, f.growth, errCannotGrow)
	}
	return entries, cur.errRate * f.ratio, nil
}

// NextLinkBits returns the bits the next link would take, without
// allocating it: the memory the add that fills the newest link will
// allocate. It returns 0 for a non-scaling chain, and an error wrapping
// ErrFull when the chain cannot grow. A chain read from an untrusted
// source may have a large expansion: check this before adding to it if
// memory matters.
func (f *Filter) NextLinkBits() (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ls := f.snapshot()
	if len(ls) == 0 {
		return 0, errZero
	}
	if f.NonScaling() {
		return 0, nil
	}
	entries, errRate, err := f.nextShape(ls[len(ls)-1], len(ls))
	if err == nil {
		if f.profile == RedisBloom {
			var g redisGeometry
			if g, err = redisInit(entries, errRate, f.options); err == nil {
				return g.bits, nil
			}
		} else {
			var m uint64
			if m, _, err = bloomlabGeometry(entries, errRate); err == nil {
				return m, nil
			}
		}
	}
	return 0, fmt.Errorf("scalable: %v: %w", err, ErrFull)
}

func (f *Filter) snapshot() []*link {
	if p := f.links.Load(); p != nil {
		return *p
	}
	return nil
}

// has reports whether all k positions of d are set. The bits are ANDed
// and tested every fourth probe, as in package bloom: an absent key costs
// one rarely mispredicted branch instead of a coin flip per probe.
func (l *link) has(d hashing.Digest) bool {
	w := l.words
	acc := uint64(1)
	if l.redis {
		t, b, m, r := d.H1, d.H2, l.mod, l.recip
		for i := 0; i < l.k; i++ {
			x := hashing.Mod64(t, m, r)
			acc &= atomic.LoadUint64(&w[x>>6]) >> (x & 63)
			if i&3 == 3 && acc&1 == 0 {
				return false
			}
			t += b
		}
		return acc&1 != 0
	}
	t, b := l.ix.DoubleStart(d)
	m, r := l.mod, l.recip
	for i, o := range l.ix.Offsets() {
		x := hashing.ModSmall(t+o, m, r)
		acc &= atomic.LoadUint64(&w[x>>6]) >> (x & 63)
		if i&3 == 3 && acc&1 == 0 {
			return false
		}
		t += b
	}
	return acc&1 != 0
}

// setBit sets bit x; readers may be loading the word concurrently.
func (l *link) setBit(x uint64) {
	p := &l.words[x>>6]
	if bit := uint64(1) << (x & 63); atomic.LoadUint64(p)&bit == 0 {
		atomic.OrUint64(p, bit)
	}
}

// set sets the k positions of d.
func (l *link) set(d hashing.Digest) {
	if l.redis {
		t, b, m, r := d.H1, d.H2, l.mod, l.recip
		for i := 0; i < l.k; i++ {
			l.setBit(hashing.Mod64(t, m, r))
			t += b
		}
		return
	}
	t, b := l.ix.DoubleStart(d)
	m, r := l.mod, l.recip
	for _, o := range l.ix.Offsets() {
		l.setBit(hashing.ModSmall(t+o, m, r))
		t += b
	}
}

// Digest returns the profile's hash of key: the seeded xxh3-128 digest
// (Bloomlab), or RedisBloom's two MurmurHash64A values as H1 and H2. It
// is the pre-hashed form ContainsHash and TestAndAddHash take.
func (f *Filter) Digest(key []byte) hashing.Digest {
	if f.profile == RedisBloom {
		a, b := hashing.RedisBloomHash(key)
		return hashing.Digest{H1: a, H2: b}
	}
	return hashing.Sum(key, f.seed)
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

// Add adds key. It returns an error wrapping ErrFull, and changes nothing,
// when the filter cannot take a new key; a key already present (or a false
// positive) is never refused and changes nothing.
func (f *Filter) Add(key []byte) error {
	_, err := f.TestAndAddHash(f.Digest(key))
	return err
}

// TestAndAdd adds key and reports whether it may already have been
// present (BF.ADD's 0): then nothing changed and N did not grow. Otherwise
// the key went into the newest link, opening a new link if that one was
// full, and N grew by one (BF.ADD's 1). A non-scaling filter at capacity,
// or a chain that cannot grow, refuses a new key with an error wrapping
// ErrFull (RedisBloom: "non scaling filter is full") and changes nothing.
func (f *Filter) TestAndAdd(key []byte) (present bool, err error) {
	return f.TestAndAddHash(f.Digest(key))
}

// TestAndAddHash is TestAndAdd for a digest from f.Digest.
func (f *Filter) TestAndAddHash(d hashing.Digest) (present bool, err error) {
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
		if f.options&OptNoScaling != 0 {
			return false, fmt.Errorf("scalable: non scaling filter is full (capacity %d): %w", cur.entries, ErrFull)
		}
		next, err := f.nextLink(cur, len(ls))
		if err != nil {
			return false, fmt.Errorf("scalable: %v: %w", err, ErrFull)
		}
		grown := append(ls[:len(ls):len(ls)], next)
		f.links.Store(&grown)
		cur = next
	}
	cur.set(d)
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

// Card is N, under RedisBloom's name.
func (f *Filter) Card() uint64 { return f.N() }

// Capacity returns the sum of the links' capacities (RedisBloom's
// "Capacity"). It grows with the chain.
func (f *Filter) Capacity() uint64 {
	var c uint64
	for _, l := range f.snapshot() {
		c += l.entries
	}
	return c
}

// Bits returns the memory of the links' bits.
func (f *Filter) Bits() uint64 {
	var b uint64
	for _, l := range f.snapshot() {
		b += l.bits
	}
	return b
}

// Links returns the number of links.
func (f *Filter) Links() int { return len(f.snapshot()) }

// Seed returns the seed of the base hash (0 for the RedisBloom profile).
func (f *Filter) Seed() uint64 { return f.seed }

// Profile returns the chain's profile (0 for the zero Filter).
func (f *Filter) Profile() Profile { return f.profile }

// Expansion returns the growth factor of the links' capacities.
func (f *Filter) Expansion() uint32 { return f.growth }

// Ratio returns the tightening ratio of the links' rates.
func (f *Filter) Ratio() float64 { return f.ratio }

// NonScaling reports whether the chain refuses to grow.
func (f *Filter) NonScaling() bool { return f.options&OptNoScaling != 0 }

// Options returns RedisBloom's option bits for the chain (OptNoRound,
// OptForce64, OptNoScaling); a bloomlab chain has at most OptNoScaling.
func (f *Filter) Options() uint32 { return f.options }

// TargetFPR returns the compound rate ε the chain was created for, as its
// first link records it: that link's rate divided by 1 − r (by 1 for a
// non-scaling chain). 0 for the zero Filter.
func (f *Filter) TargetFPR() float64 {
	ls := f.snapshot()
	if len(ls) == 0 {
		return 0
	}
	if f.NonScaling() {
		return ls[0].errRate
	}
	return ls[0].errRate / (1 - f.ratio)
}

// FPRBound returns Σ ε_i over the links, the union bound on the chain's
// rate while every link is within its capacity; it is below TargetFPR
// (theory.FPScalableBound).
func (f *Filter) FPRBound() float64 {
	s := 0.0
	for _, l := range f.snapshot() {
		s += l.errRate
	}
	return s
}

// LinkStats describes one link.
type LinkStats struct {
	Capacity uint64  // keys the link was sized for (RedisBloom's entries)
	Keys     uint64  // new keys added to it
	Bits     uint64  // its memory in bits
	M        uint64  // positions a key may take: Bits, or 2^n2 for RedisBloom's power-of-two links
	K        int     // positions per key
	Rate     float64 // the design rate ε_i it was sized for
	Fill     float64 // fraction of its M positions set
	FPR      float64 // Fill^K: its rate, from the bits
	Formula  float64 // theory.FPExact(M, Keys, K): its expected rate at Keys keys
}

// LinkStats returns the links, oldest first.
func (f *Filter) LinkStats() []LinkStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	ls := f.snapshot()
	out := make([]LinkStats, len(ls))
	for i, l := range ls {
		fill := float64(l.ones()) / float64(l.mod)
		out[i] = LinkStats{Capacity: l.entries, Keys: l.size, Bits: l.bits, M: l.mod, K: l.k, Rate: l.errRate,
			Fill: fill, FPR: math.Pow(fill, float64(l.k)), Formula: theory.FPExact(float64(l.mod), float64(l.size), l.k)}
	}
	return out
}

func (l *link) ones() uint64 {
	var c uint64
	for i := range l.words {
		c += uint64(bits.OnesCount64(atomic.LoadUint64(&l.words[i])))
	}
	return c
}

// EstimatedFPR returns the rate of the current state: 1 − Π(1 − fill_i^k_i)
// over the links, fill_i the fraction of link i's positions set. It is the
// probability that an absent key is answered present, given the bits.
func (f *Filter) EstimatedFPR() float64 {
	st := f.LinkStats()
	fps := make([]float64, len(st))
	for i, s := range st {
		fps[i] = s.FPR
	}
	return theory.FPScalable(fps)
}

// FormulaFPR returns 1 − Π(1 − FPExact(m_i, n_i, k_i)) over the links, n_i
// the keys added to link i: the expected rate of a chain with these
// counts. While every link is within its capacity it is at most FPRBound
// in the bloomlab profile, whose links are sized so that FPExact at
// capacity is at most their share.
func (f *Filter) FormulaFPR() float64 {
	st := f.LinkStats()
	fps := make([]float64, len(st))
	for i, s := range st {
		fps[i] = s.Formula
	}
	return theory.FPScalable(fps)
}

// Full reports whether a non-scaling filter holds its capacity (the next
// new key will be refused).
func (f *Filter) Full() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	ls := f.snapshot()
	return f.NonScaling() && len(ls) > 0 && ls[len(ls)-1].size >= ls[len(ls)-1].entries
}

// Info is what RedisBloom's BF.INFO reports.
type Info struct {
	Capacity  uint64 // Σ of the links' entries
	Size      uint64 // RedisBloom's memory usage in bytes: 32 + Σ (64 + link bytes)
	Filters   int    // links
	Items     uint64 // "Number of items inserted" (N)
	Expansion uint32 // 0 for a non-scaling filter (RedisBloom replies nil)
}

// RedisInfo returns the BF.INFO fields of f.
func (f *Filter) RedisInfo() Info {
	f.mu.Lock()
	defer f.mu.Unlock()
	ls := f.snapshot()
	info := Info{Filters: len(ls), Items: f.card.Load(), Expansion: f.growth}
	var bytes uint64
	for _, l := range ls {
		info.Capacity += l.entries
		bytes += l.bits / 8
	}
	info.Size = redisMemUsage(bytes, len(ls))
	if f.NonScaling() {
		info.Expansion = 0
	}
	return info
}

// sameGeometry reports whether links a and b have the same shape.
func sameGeometry(a, b *link) bool {
	return a.bits == b.bits && a.mod == b.mod && a.k == b.k && a.entries == b.entries &&
		math.Float64bits(a.errRate) == math.Float64bits(b.errRate) &&
		math.Float64bits(a.bpe) == math.Float64bits(b.bpe) && a.n2 == b.n2
}

// compatible reports why f and g cannot be combined, or nil.
func (f *Filter) compatible(g *Filter) error {
	fl, gl := f.snapshot(), g.snapshot()
	switch {
	case len(fl) == 0 || len(gl) == 0:
		return fmt.Errorf("scalable: union with the zero Filter: %w", ErrParam)
	case f.profile != g.profile:
		return fmt.Errorf("scalable: profiles %v and %v differ: %w", f.profile, g.profile, ErrIncompatible)
	case f.seed != g.seed:
		return fmt.Errorf("scalable: seeds %d and %d differ: %w", f.seed, g.seed, ErrIncompatible)
	case f.growth != g.growth || f.ratio != g.ratio || f.options != g.options:
		return fmt.Errorf("scalable: expansion, ratio or options differ (%d, %v, %d and %d, %v, %d): %w",
			f.growth, f.ratio, f.options, g.growth, g.ratio, g.options, ErrIncompatible)
	case len(gl) > MaxLinks:
		return fmt.Errorf("scalable: %d links: %w", len(gl), ErrIncompatible)
	}
	for i := 0; i < min(len(fl), len(gl)); i++ {
		if !sameGeometry(fl[i], gl[i]) {
			return fmt.Errorf("scalable: link %d differs in size, capacity or rate: %w", i, ErrIncompatible)
		}
	}
	return nil
}

// order returns f's place in the global lock order, assigning one on
// first use.
func (f *Filter) order() uint64 {
	if id := f.id.Load(); id != 0 {
		return id
	}
	f.id.CompareAndSwap(0, lastID.Add(1))
	return f.id.Load()
}

// lockPair locks f and g (f ≠ g) in a global order, so that f.Union(g)
// and g.Union(f) cannot deadlock.
func lockPair(f, g *Filter) (unlock func()) {
	a, b := f, g
	if b.order() < a.order() {
		a, b = b, a
	}
	a.mu.Lock()
	b.mu.Lock()
	return func() { b.mu.Unlock(); a.mu.Unlock() }
}

// Union makes f hold every key of f and g. The chains must have the same
// profile, seed, expansion, ratio and options, and agree link for link on
// the links both have (chains from one Config always do): shared links'
// bits are ORed and their counts added; g's links beyond f's are copied.
// Otherwise it returns an error wrapping ErrIncompatible and changes
// nothing.
//
// The union of two full links can hold up to twice a link's capacity of
// distinct keys: the counts are added so that they bound it from above
// (and the chain opens a new link for the next key), but such a link's
// rate exceeds its design rate, so the compound bound no longer holds;
// EstimatedFPR measures the real rate from the bits, and Describe warns.
func (f *Filter) Union(g *Filter) error {
	if f == g {
		if len(f.snapshot()) == 0 {
			return errZero
		}
		return nil
	}
	unlock := lockPair(f, g)
	defer unlock()
	if err := f.compatible(g); err != nil {
		return err
	}
	fl, gl := f.snapshot(), g.snapshot()
	sizes := make([]uint64, max(len(fl), len(gl)))
	var card, overflow uint64
	for i := range sizes {
		var a, b, c uint64
		if i < len(fl) {
			a = fl[i].size
		}
		if i < len(gl) {
			b = gl[i].size
		}
		sizes[i], c = bits.Add64(a, b, 0)
		overflow |= c
		card, c = bits.Add64(card, sizes[i], 0)
		overflow |= c
	}
	if overflow != 0 {
		return fmt.Errorf("scalable: the union's key count overflows 64 bits: %w", ErrIncompatible)
	}
	var extra []*link
	for i := len(fl); i < len(gl); i++ {
		extra = append(extra, gl[i].clone())
	}
	for i, l := range fl {
		if i < len(gl) {
			l.size = sizes[i]
			for j, w := range gl[i].words {
				if w != 0 {
					atomic.OrUint64(&l.words[j], w)
				}
			}
		}
	}
	if len(extra) > 0 {
		grown := append(fl[:len(fl):len(fl)], extra...)
		f.links.Store(&grown)
	}
	f.card.Store(card)
	return nil
}

// clone returns a copy of l (its owner's mutex held).
func (l *link) clone() *link {
	c := *l
	c.words = make([]uint64, len(l.words))
	for i := range l.words {
		c.words[i] = atomic.LoadUint64(&l.words[i])
	}
	return &c
}

// Clone returns a copy of f.
func (f *Filter) Clone() *Filter {
	f.mu.Lock()
	defer f.mu.Unlock()
	g := &Filter{profile: f.profile, seed: f.seed, growth: f.growth, ratio: f.ratio, options: f.options}
	ls := f.snapshot()
	if ls == nil {
		return g
	}
	cl := make([]*link, len(ls))
	for i, l := range ls {
		cl[i] = l.clone()
	}
	g.links.Store(&cl)
	g.card.Store(f.card.Load())
	return g
}

// Equal reports whether f and g have the same configuration, links, counts
// and bits.
func (f *Filter) Equal(g *Filter) bool {
	if f == g {
		return true
	}
	unlock := lockPair(f, g)
	defer unlock()
	fl, gl := f.snapshot(), g.snapshot()
	if f.profile != g.profile || f.seed != g.seed || f.growth != g.growth || f.ratio != g.ratio ||
		f.options != g.options || f.card.Load() != g.card.Load() || len(fl) != len(gl) {
		return false
	}
	for i := range fl {
		if !sameGeometry(fl[i], gl[i]) || fl[i].size != gl[i].size {
			return false
		}
		for j := range fl[i].words {
			if atomic.LoadUint64(&fl[i].words[j]) != atomic.LoadUint64(&gl[i].words[j]) {
				return false
			}
		}
	}
	return true
}
