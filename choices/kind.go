package choices

import (
	"fmt"
	"math"
	"strings"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/bitvec"
	"github.com/bloomlab/bloomlab/internal/format"
	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/internal/sizing"
	"github.com/bloomlab/bloomlab/theory"
)

var _ kind.Filter = (*Filter)(nil)

func init() {
	kind.Register(kind.Spec{
		Name:    "choices",
		Summary: "Bloom filter with c choices: each key sets the one of its c groups of k bits that needs the fewest new ones (000 §3)",
		Order:   50, Format: format.KindChoices, Decode: kind.Decoded(decode),
		FPRMethod: "1 − (1 − r)^c with r a group's rate: fill^k from the bits with the pair floor of double hashing (exact for a small filter)",
		Options: []kind.Option{
			{Name: "scheme", Type: kind.String, Default: hashing.DefaultScheme.String(), Usage: "index scheme inside each group: " + groupSchemeNames()},
			{Name: "c", Type: kind.Int, Default: 2, Usage: fmt.Sprintf("groups of hash functions (choices), 1 … %d", MaxC)},
			{Name: "rounds", Type: kind.Int, Default: 0, Usage: "0 adds the keys online (000 §3.1); R ≥ 1 builds offline, each key inserted R times (000 §3.2; the keys are held in memory as 16-byte digests)"},
		},
		Plan:     kindPlanner,
		Describe: describe,
		Combine:  kind.Union[*Filter](),
	})
}

// groupSchemeNames lists the schemes a group may use, as -scheme takes them.
func groupSchemeNames() string {
	var names []string
	for _, s := range hashing.Schemes() {
		if validScheme(s) {
			names = append(names, s.String())
		}
	}
	return strings.Join(names, ", ")
}

// kindPlanner plans with the options scheme, c and rounds.
func kindPlanner(v *kind.Values) kind.Planner {
	schemeName, c, rounds := v.String("scheme"), v.Int("c"), v.Int("rounds")
	return func(t kind.Target) (kind.Plan, error) {
		s, err := hashing.ParseScheme(schemeName)
		if err != nil || !validScheme(s) {
			return kind.Plan{}, kind.Paramf("choices", "{scheme} %q is not one of %s", schemeName, groupSchemeNames())
		}
		if c < 1 || c > MaxC {
			return kind.Plan{}, kind.Paramf("choices", "{c} %d out of range [1, %d]", c, MaxC)
		}
		if rounds < 0 || rounds > MaxRounds {
			return kind.Plan{}, kind.Paramf("choices", "{rounds} %d out of range [0, %d]", rounds, MaxRounds)
		}
		return plan(s, c, rounds, t)
	}
}

// plan sizes a c-choice filter by the online greedy prediction (000
// eq. 3.2) with the pair floor of its scheme: theory.SizeChoicesScheme
// for a rate; m = ⌈B·n⌉ and
// theory.OptimalKChoices for bits per key; m and k as given otherwise.
func plan(s hashing.Scheme, c, rounds int, t kind.Target) (kind.Plan, error) {
	if err := sizing.Check("choices", t); err != nil {
		return kind.Plan{}, err
	}
	var m uint64
	var k int
	nf := float64(t.N)
	switch {
	case t.Explicit():
		m, k = t.M, t.K
	case t.FPR > 0:
		var err error
		if m, k, err = theory.SizeChoicesScheme(s, t.N, t.FPR, c, hashing.MaxK); err != nil {
			return kind.Plan{}, fmt.Errorf("choices: %w: %w", err, kind.ErrParam)
		}
	default:
		mf := math.Ceil(t.BitsPerKey * nf)
		if mf > hashing.MaxM {
			return kind.Plan{}, fmt.Errorf("choices: %v bits per key for %d keys exceeds 2^48 bits: %w", t.BitsPerKey, t.N, kind.ErrParam)
		}
		m = uint64(mf)
		k, _ = theory.OptimalKChoices(mf/nf, c, hashing.MaxK)
		k = max(k, 1)
	}
	if m < 1 || m > hashing.MaxM || k < 1 || k > hashing.MaxK {
		return kind.Plan{}, fmt.Errorf("choices: m = %d, k = %d out of range (1 ≤ m ≤ 2^48, 1 ≤ k ≤ %d): %w", m, k, hashing.MaxK, kind.ErrParam)
	}
	how := "online greedy (000 §3.1); -rounds R ≥ 1 builds offline (000 §3.2), with a lower rate"
	var notices []string
	if rounds > 0 {
		how = fmt.Sprintf("built offline in %d rounds (000 §3.2): a lower rate than the online prediction shown", rounds)
		notices = append(notices, fmt.Sprintf("-rounds %d holds every key in memory until the build: 16 bytes per key, then %d bytes per key and %d bytes of counters for the build", rounds, 4*c*k, m+1))
	}
	p := kind.Plan{
		Kind: "choices", Scheme: s.String(), M: m, MUnit: "bits", K: k, Bits: m,
		Capacity: t.N, FPR: fpChoices(s, m, t.N, k, c), Hashes: 1, Accesses: c * k,
		Note: fmt.Sprintf("%d groups of k hashes, %s", c, how), Notices: notices,
		Extra: []kind.Field{{Name: "c", Value: c}, {Name: "rounds", Value: rounds}},
	}
	if t.N == 0 {
		p.FPR = math.NaN()
	}
	p.New = func() (kind.Builder, error) {
		f, err := New(Config{M: m, K: k, C: c, Scheme: s, Seed: t.Seed})
		if err != nil {
			return nil, err
		}
		f.capacity = t.N
		if rounds == 0 {
			return kind.FilterBuilder(f)
		}
		return &offlineBuilder{f: f, rounds: rounds}, nil
	}
	return p, nil
}

// fpChoices is the online prediction with the pair floor of scheme s,
// theory.FPChoicesScheme, for n keys in m bits (0 for no keys).
func fpChoices(s hashing.Scheme, m, n uint64, k, c int) float64 {
	if n == 0 {
		return 0
	}
	return theory.FPChoicesScheme(s, m, float64(n), k, c)
}

// offlineBuilder collects the keys' digests and builds the filter offline
// when finished (000 §3.2).
type offlineBuilder struct {
	f      *Filter
	rounds int
	keys   []hashing.Digest
}

// Add records key. It refuses, changing nothing, a key past the largest
// offline build (maxPositions positions).
func (b *offlineBuilder) Add(key []byte) error {
	if b.f == nil {
		return fmt.Errorf("choices: Add after Finish: %w", kind.ErrParam)
	}
	if uint64(len(b.keys)+1)*uint64(b.f.c*b.f.k) > maxPositions {
		return fmt.Errorf("choices: an offline build takes at most %d keys with c = %d, k = %d: %w", maxPositions/uint64(b.f.c*b.f.k), b.f.c, b.f.k, kind.ErrParam)
	}
	b.keys = append(b.keys, hashing.Sum(key, b.f.seed))
	return nil
}

// Finish runs the offline build over the keys and returns the filter.
func (b *offlineBuilder) Finish() (kind.Filter, error) {
	f := b.f
	if f == nil {
		return nil, fmt.Errorf("choices: Finish called twice: %w", kind.ErrParam)
	}
	var ob Builder
	if err := ob.Build(f, b.keys, b.rounds); err != nil {
		return nil, err
	}
	b.f, b.keys = nil, nil
	return f, nil
}

func describe(g kind.Filter) []kind.Field {
	f := g.(*Filter)
	dn, dnote := bitvec.DesignN(f.m, f.k, f.capacity)
	rate := func(n uint64) float64 {
		if f.ix == nil {
			return 0
		}
		return fpChoices(f.scheme, f.m, n, f.k, f.c)
	}
	built := "online (000 §3.1)"
	if f.rounds > 0 {
		built = "offline (000 §3.2); keys added since, online"
	}
	const online = "formula: the online greedy prediction (000 eq. 3.2) with the scheme's pair floor (theory.FPChoicesScheme); an offline build does better"
	return []kind.Field{
		{Name: "c", Value: f.c, Note: "groups of k hash functions"},
		{Name: "rounds", Value: f.rounds, Note: built},
		{Name: "scheme", Value: f.scheme.String()},
		{Name: "m", Value: f.m, Note: "bits"},
		{Name: "k", Value: f.k},
		{Name: "fill ratio", Value: f.FillRatio()},
		{Name: "fpr at keys added", Value: rate(f.N()), Note: online + ", n = keys added"},
		{Name: "design n", Value: dn, Note: dnote},
		{Name: "fpr at design n", Value: rate(dn), Note: online},
		{Name: "approx count", Value: f.ApproxCount(), Note: "keys added online, from the fill"},
	}
}
