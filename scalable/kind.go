package scalable

import (
	"fmt"
	"math"

	"github.com/bloomlab/bloomlab/blocked"
	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/blrd"
	"github.com/bloomlab/bloomlab/internal/format"
	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/theory"
)

var _ kind.Filter = (*Filter)(nil)

func init() {
	kind.Register(kind.Spec{
		Name: "scalable",
		Summary: "growing (scalable) Bloom filter: a chain of standard filters of growing capacity and tightening rate " +
			"that never exceeds its target rate (Almeida et al. 2007); byte-compatible with RedisBloom in the redisbloom profile",
		Order:  80,
		Format: format.KindScalable,
		Decode: kind.Decoded(decode),
		Options: []kind.Option{
			{Name: "profile", Type: kind.String, Default: "bloomlab", Usage: "link layout: bloomlab (xxh3-128, enhanced double hashing, exact sizing), " +
				"redisbloom (bit for bit RedisBloom, for BF.LOADCHUNK and BF.SCANDUMP; -seed 0 only) or " +
				"blocked (cache-line-blocked links: one 512-bit block per key, one cache line per link a query tests; sized by the blocked filter's rate)"},
			{Name: "expansion", Type: kind.Uint, Default: uint(defaultExpansion), Usage: fmt.Sprintf("each link's capacity is this many times the previous one's (1 … %d, as RedisBloom 8)", MaxExpansion)},
			{Name: "ratio", Type: kind.Float, Default: defaultRatio, Usage: "each link's rate is this times the previous one's, in (0, 1) (redisbloom: 0.5 only)"},
			{Name: "nonscaling", Type: kind.Bool, Default: false, Usage: "one link at the target rate that refuses new keys past -n (RedisBloom's NONSCALING)"},
		},
		Plan:      planner,
		FPRMethod: "1 − Π(1 − r_i) over the links, r_i from the bits: fill^k with the pair floor of the link's keys (exact for a small link; RedisBloom links: with its steps of short order, an upper bound; blocked links: the mean over blocks of (ones/512)^k)",
		Growing:   true,
		Describe:  describe,
		Combine:   kind.Union[*Filter](),
		// The blocked layout: one cache line per link per query.
		PlanVariants: [][]string{{"-profile", "blocked"}},
		Exports: []kind.Export{blrd.Export("scalable", "RedisBloom dump",
			"RedisBloom's BF.SCANDUMP chunks in a file (magic BLRD; docs/SCALABLE.md), for BF.LOADCHUNK: "+
				"a filter built with -profile redisbloom, or one dumped from Redis",
			// BF.SCANDUMP's header chunk is 20 + 53·L bytes.
			ReadRedisBloom, func(n uint32) bool { return n > headerFixed && (n-headerFixed)%headerLink == 0 })},
	})
}

// planner plans with the options profile, expansion, ratio and
// nonscaling.
func planner(v *kind.Values) kind.Planner {
	profile, expansion, ratio, nonScaling := v.String("profile"), v.Uint("expansion"), v.Float("ratio"), v.Bool("nonscaling")
	return func(t kind.Target) (kind.Plan, error) {
		p, err := ParseProfile(profile)
		if err != nil {
			return kind.Plan{}, err
		}
		// A flag given out of range is a usage error, even where its zero
		// value would otherwise mean "the default" (Config's convention).
		// fpr is the target's: a caller that marks it given (the command
		// does) has fpr 0 refused here as every other kind refuses it
		// (Target cannot tell it from an absent fpr).
		given := v.Given
		switch {
		case expansion < 1 || expansion > MaxExpansion:
			return kind.Plan{}, kind.Paramf("scalable", "{expansion} %d out of range [1, %d]", expansion, MaxExpansion)
		case given("ratio") && !(ratio > 0 && ratio < 1):
			return kind.Plan{}, kind.Paramf("scalable", "{ratio} %v out of range (0, 1)", ratio)
		case given("ratio") && p == RedisBloom && ratio != redisTighten:
			return kind.Plan{}, kind.Paramf("scalable", "{ratio} %v: the redisbloom profile tightens by exactly 0.5", ratio)
		case given("fpr") && !(t.FPR > 0 && t.FPR < 1):
			return kind.Plan{}, kind.Paramf("scalable", "{fpr} %v out of range (0, 1)", t.FPR)
		}
		return plan(Config{Capacity: t.N, FPR: t.FPR, Expansion: uint32(expansion), Ratio: ratio,
			NonScaling: nonScaling, Profile: p, Seed: t.Seed}, t)
	}
}

// linkShape is a link's geometry, computed without allocating it.
type linkShape struct {
	entries, bits, m uint64
	k                int
	rate             float64
}

// shapes returns the links of a chain for c (defaults applied) until their
// capacities reach n, stopping early (with the error) where the chain
// cannot grow.
func shapes(c Config, n uint64) ([]linkShape, error) {
	f := &Filter{profile: c.Profile, growth: c.Expansion, ratio: c.Ratio}
	f.maxBits.Store(c.MaxBits)
	if c.Profile == RedisBloom {
		f.options = redisOptions
	}
	if c.NonScaling {
		f.options |= optNoScaling
	}
	of := func(s shape) linkShape {
		ls := linkShape{s.entries, s.bits, s.bits, s.k, s.rate}
		if s.redis.n2 > 0 {
			ls.m = 1 << s.redis.n2
		}
		return ls
	}
	rate := c.FPR
	if !c.NonScaling {
		rate *= 1 - c.Ratio
	}
	s, err := f.linkShape(c.Capacity, rate)
	if err != nil {
		return nil, err
	}
	out := []linkShape{of(s)}
	chain := []*link{{entries: s.entries, errRate: s.rate, bits: s.bits}}
	for total := s.entries; total < n && !c.NonScaling; {
		kind.PlanStep()
		if s, err = f.nextLink(chain); err != nil {
			return out, err
		}
		out = append(out, of(s))
		chain = append(chain, &link{entries: s.entries, errRate: s.rate, bits: s.bits})
		var over bool
		if total, over = addOverflow(total, s.entries); over {
			break
		}
	}
	return out, nil
}

// plan sizes the kind for a target: -fpr is the compound rate, -n the
// first link's capacity.
func plan(c Config, t kind.Target) (kind.Plan, error) {
	if t.BitsPerKey != 0 || t.M != 0 || t.K != 0 {
		return kind.Plan{}, kind.Paramf("scalable", "a growing chain is sized by {fpr} (the compound rate it never exceeds) and {n} "+
			"(its first link's capacity); {bits-per-key}, {m} and {k} do not apply")
	}
	var notices []string
	if c.FPR == 0 {
		notices = append(notices, fmt.Sprintf("no -fpr: target rate %g (RedisBloom's default)", defaultFPR))
	}
	if c.Capacity == 0 {
		notices = append(notices, fmt.Sprintf("no -n: first link of %d keys (RedisBloom's default); the chain grows as keys come", defaultCapacity))
	}
	c, err := c.withDefaults()
	if err != nil {
		return kind.Plan{}, err
	}
	first, err := shapes(c, 0)
	if err != nil {
		return kind.Plan{}, fmt.Errorf("scalable: %v: %w", err, ErrParam)
	}
	l0 := first[0]
	p := kind.Plan{
		Kind: "scalable", Scheme: "enhanced", M: l0.bits, MUnit: "bits (first link)", K: l0.k, Bits: l0.bits,
		Capacity: c.Capacity, FPR: l0.link(c.Profile).formulaRate(l0.entries), Hashes: 1, Accesses: l0.k,
		Notices: notices,
		Note: fmt.Sprintf("growing chain (expansion %d, ratio %g); rate ≤ %g however far it grows (Σ ε(1−r)r^i); memory at 10× and 1000× n below",
			c.Expansion, c.Ratio, c.FPR),
	}
	if c.Profile == Blocked {
		p.Scheme, p.Accesses = "blocked", 1
		p.Note = fmt.Sprintf("growing chain of blocked links (expansion %d, ratio %g; one cache line per link a query tests, each link sized by the blocked filter's rate, theory.FPBlocked); rate ≤ %g however far it grows; memory at 10× and 1000× n below",
			c.Expansion, c.Ratio, c.FPR)
	}
	if c.Profile == RedisBloom {
		p.Scheme, p.Hashes = "redisbloom", 2
		// RedisBloom's k = ⌈ln2·bpe⌉ puts even its large links a little
		// above their rates (0.4% at ε = 0.5%); the notice is for the
		// chains whose small links take them more than 5% above.
		g := p.FPR // a non-scaling chain is its first link
		if !c.NonScaling {
			g = growthRate(c)
		}
		if g > 1.05*c.FPR {
			p.Note = fmt.Sprintf("growing chain in RedisBloom's layout (expansion %d): about %.3g as it fills, above the target %g (docs/SCALABLE.md); memory at 10× and 1000× n below",
				c.Expansion, g, c.FPR)
			notices = append(notices, fmt.Sprintf("the redisbloom profile lays links out as RedisBloom does, and RedisBloom's links of few keys exceed their rates "+
				"(steps of short order, hash pairs shared by keys): a chain started at -n %d at -fpr %g is expected to reach about %.3g, not %g, as its links fill "+
				"(docs/SCALABLE.md). -profile bloomlab stays within the target for any -n; with this profile a larger -n comes closer to it",
				c.Capacity, c.FPR, g, c.FPR))
			p.Notices = notices
		}
	}
	if c.NonScaling {
		p.Note = fmt.Sprintf("non-scaling: one link at rate %g that refuses new keys past n = %d", c.FPR, c.Capacity)
	} else {
		for _, times := range []uint64{10, 1000} {
			p.Extra = append(p.Extra, growthField(c, times))
		}
	}
	p.New = func() (kind.Builder, error) {
		f, err := New(c)
		if err != nil {
			return nil, err
		}
		return kind.FilterBuilder(f)
	}
	return p, nil
}

// link returns a link of shape l in profile p, without bits: enough for
// its formula rates.
func (l linkShape) link(p Profile) *link {
	lk := &link{mod: l.m, k: l.k, redis: p == RedisBloom, bits: l.bits, entries: l.entries, errRate: l.rate}
	if p == Blocked {
		lk.blocks = l.bits / blocked.BlockBits
	}
	return lk
}

// growthRate is Stats.Growth for a new chain of c (defaults applied).
func growthRate(c Config) float64 {
	ls, err := shapes(c, 0)
	if err != nil {
		return math.NaN()
	}
	f := &Filter{profile: c.Profile, growth: c.Expansion, ratio: c.Ratio}
	if c.Profile == RedisBloom {
		f.options = redisOptions
	}
	return f.projectGrowth([]*link{ls[0].link(c.Profile)})
}

// growthField says what the chain takes if it receives times × its first
// capacity, against a standard filter sized for that many keys.
func growthField(c Config, times uint64) kind.Field {
	name := fmt.Sprintf("at %d× n", times)
	n := c.Capacity * times
	if n/times != c.Capacity {
		return kind.Field{Name: name, Value: "beyond 2^64 keys"}
	}
	ls, err := shapes(c, n)
	if err != nil {
		return kind.Field{Name: name, Value: "cannot grow that far", Note: err.Error(), Warn: true}
	}
	var bits uint64
	for _, l := range ls {
		bits += l.bits
	}
	right := -float64(n) * math.Log(c.FPR) / (math.Ln2 * math.Ln2)
	if m, _, err := theory.SizeScheme(hashing.DefaultScheme, n, c.FPR, hashing.MaxK); err == nil {
		right = float64(m) // kind bloom's sizing
	}
	return kind.Field{Name: name, Value: fmt.Sprintf("%d links, %s, %.2f× a bloom filter sized for %d keys", len(ls), byteSize(bits), float64(bits)/right, n)}
}

func byteSize(bits uint64) string {
	b := float64(bits) / 8
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f B", b)
	}
	return fmt.Sprintf("%.3g %s", b, units[i])
}

// describe lists the chain's structure for bloomlab info.
func describe(g kind.Filter) []kind.Field {
	f := g.(*Filter)
	stats := f.Stats()
	st := stats.Links
	exp := any(f.growth)
	if f.nonScaling() {
		exp = "none (non-scaling)"
	}
	target := f.Config().FPR
	targetNote := "the compound rate the chain never exceeds while every link is within its capacity"
	if f.profile == RedisBloom {
		targetNote = "the compound rate the chain was created for; RedisBloom's links of few keys exceed their shares (fpr as it grows)"
	}
	fields := []kind.Field{
		{Name: "profile", Value: f.profile.String()},
		{Name: "target rate", Value: target, Note: targetNote},
		{Name: "expansion", Value: exp},
		{Name: "ratio", Value: f.ratio, Note: "each link's rate over the previous one's"},
		{Name: "links", Value: len(st)},
	}
	over := 0
	for i, l := range st {
		fields = append(fields, kind.Field{Name: fmt.Sprintf("link %d", i),
			Value: fmt.Sprintf("capacity %d, keys %d, m %d, k %d, fill %.4g, rate %.4g (at capacity %.4g, design %.4g)",
				l.Capacity, l.Keys, l.Bits, l.K, l.Fill, l.FPR, l.AtCapacity, l.Rate)})
		if l.Keys > l.Capacity {
			over++
		}
	}
	formulaNote := "formula, 1 − Π(1 − r_i(keys_i)) with the pair floor of double hashing (theory.FPScheme)"
	if f.profile == Blocked {
		formulaNote = "formula, 1 − Π(1 − r_i(keys_i)) with the blocked filter's rate (theory.FPBlocked: the blocks' loads binomial)"
	}
	if f.profile == RedisBloom {
		formulaNote = "formula, 1 − Π(1 − r_i(keys_i)) with RedisBloom's steps of short order and pair floor (theory.FPAnyStep; an upper bound for links not a power of two)"
	}
	growth := stats.Growth
	fields = append(fields,
		kind.Field{Name: "fpr at keys added", Value: stats.Formula, Note: formulaNote},
		kind.Field{Name: "fpr bound", Value: stats.Bound, Note: "Σ of the links' design rates (union bound)"},
		kind.Field{Name: "fpr as it grows", Value: growth, Warn: target > 0 && growth > 1.05*target,
			Note: "expected once every link, and those it would add, hold their capacity (formula; links past 2^24 bits at their design rates)"},
	)
	if b, err := f.NextLinkBits(); err != nil {
		fields = append(fields, kind.Field{Name: "next link", Value: "cannot grow", Note: err.Error(), Warn: true})
	} else if b > 0 {
		fields = append(fields, kind.Field{Name: "next link", Value: b, Note: "bits the next growth allocates"})
	}
	if f.profile == RedisBloom {
		info := f.RedisInfo()
		fields = append(fields, kind.Field{Name: "redisbloom size", Value: info.Size, Note: "bytes, as BF.INFO reports"})
	}
	if f.full() {
		fields = append(fields, kind.Field{Name: "full", Value: true, Warn: true,
			Note: "a non-scaling filter at its capacity refuses new keys (RedisBloom: non scaling filter is full)"})
	}
	if over > 0 {
		fields = append(fields, kind.Field{Name: "links over capacity", Value: over, Warn: true,
			Note: "a union put more keys in them than they were sized for: the rate bound does not hold; the rate of the state does"})
	}
	return fields
}
