package countmin

import (
	"fmt"
	"math"
	"slices"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/format"
	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/internal/sizing"
)

var _ kind.Filter = (*Sketch)(nil)

func init() {
	kind.Register(kind.Spec{
		Name:    "countmin",
		Summary: "Count-Min sketch: d rows of w counters, estimates within εN with probability 1 − δ; rows g_i = h1 + i·h2 (001 §7); bit for bit RedisBloom's CMS.* in the redisbloom profile",
		Order:   80,
		Format:  format.KindCountMin,
		Decode:  kind.Decoded(decode),
		Options: []kind.Option{
			{Name: "profile", Type: kind.String, Default: "bloomlab", Usage: "bloomlab (xxh3-128 rows, 64-bit counters) or redisbloom (bit for bit RedisBloom's CMS.*: " +
				"MurmurHash2 rows, 32-bit counters; -m and -k as CMS.INITBYDIM's width and depth, -eps and -delta as CMS.INITBYPROB's; -seed 0 only)"},
			{Name: "eps", Type: kind.Float, Default: 0.0, Usage: "size by the error bound: estimates within eps·N (w = ⌈e/eps⌉); with -delta, instead of -fpr, -bits-per-key or -m/-k"},
			{Name: "delta", Type: kind.Float, Default: 0.0, Usage: "size by the error bound: with probability 1 − delta (d = ⌈ln(1/delta)⌉); with -eps"},
			{Name: "scheme", Type: kind.String, Default: hashing.Double.String(), Usage: "row hashes: double (g_i = h1 + i·h2, 001), enhanced or independent"},
			{Name: "conservative", Type: kind.Bool, Default: false, Usage: "conservative update (Estan and Varghese): additions only, estimates never larger"},
		},
		Plan:      rowPlanner,
		FPRMethod: "Π over rows of the fraction of nonzero counters, from the counters; two-hash rows add their pair floor (exact for a small sketch)",
		Describe:  describe,
		Combine:   kind.Merge[*Sketch](),
	})
}

// rowSchemes are the schemes a sketch's rows may use.
var rowSchemes = []hashing.Scheme{hashing.Double, hashing.Enhanced, hashing.Independent}

// options declares -profile, -eps, -delta, -scheme and -conservative and
// plans with them.
func rowPlanner(v *kind.Values) kind.Planner {
	profile, schemeName, conservative := v.String("profile"), v.String("scheme"), v.Bool("conservative")
	eps, delta := v.Float("eps"), v.Float("delta")
	return func(t kind.Target) (kind.Plan, error) {
		p, err := ParseProfile(profile)
		if err != nil {
			return kind.Plan{}, err
		}
		if p == RedisBloom {
			switch {
			case schemeName != hashing.Double.String():
				return kind.Plan{}, kind.Paramf("countmin", "the redisbloom profile's rows are MurmurHash2 with seeds 0, 1, …; {scheme} %s does not apply", schemeName)
			case conservative:
				return kind.Plan{}, kind.Paramf("countmin", "the redisbloom profile updates every row (RedisBloom has no conservative update); {conservative} does not apply")
			case t.Seed != 0:
				return kind.Plan{}, kind.Paramf("countmin", "the redisbloom profile has no seed (RedisBloom's rows have seeds 0 … d − 1); {seed} %d", t.Seed)
			}
			return planRedis(eps, delta, t)
		}
		s, err := hashing.ParseScheme(schemeName)
		if err != nil || !slices.Contains(rowSchemes, s) {
			return kind.Plan{}, kind.Paramf("countmin", "unknown {scheme} %q (want double, enhanced or independent)", schemeName)
		}
		return plan(Config{Scheme: s, Conservative: conservative, Seed: t.Seed}, eps, delta, t)
	}
}

// plan sizes a sketch for t, or by (eps, delta) when they are given; cfg
// supplies the scheme, update rule and seed.
func plan(cfg Config, eps, delta float64, t kind.Target) (kind.Plan, error) {
	var err error
	switch {
	case eps != 0 || delta != 0:
		if t.FPR != 0 || t.BitsPerKey != 0 || t.M != 0 || t.K != 0 {
			return kind.Plan{}, kind.Paramf("countmin", "give {eps} and {delta}, or one of {fpr}, {bits-per-key} or {m} with {k}, not both")
		}
		cfg.Width, cfg.Depth, err = Dimensions(eps, delta)
	case t.FPR == 0 && t.BitsPerKey == 0 && t.M == 0 && t.K == 0:
		return kind.Plan{}, kind.Paramf("countmin", "give {eps} with {delta}, {fpr} or {bits-per-key} with {n}, or {m} (width) with {k} (depth)")
	case t.Explicit() || t.K != 0:
		if err = sizing.Check("countmin", t); err == nil {
			cfg.Width, cfg.Depth = t.M, t.K
		}
	case t.FPR != 0 && t.BitsPerKey == 0:
		if err = sizing.Check("countmin", t); err == nil {
			cfg.Width, cfg.Depth, err = DimensionsFPRScheme(cfg.Scheme, t.N, t.FPR)
		}
	default:
		if err = sizing.Check("countmin", t); err == nil {
			cfg.Width, cfg.Depth, err = dimensionsBitsPerKey(cfg.Scheme, t.N, t.BitsPerKey)
		}
	}
	if err != nil {
		return kind.Plan{}, err
	}
	if cfg, err = normalize(cfg); err != nil {
		return kind.Plan{}, err
	}
	w, d := cfg.Width, cfg.Depth
	p := kind.Plan{
		Kind: "countmin", Scheme: cfg.Scheme.String(), M: w, MUnit: "counters per row", K: d, Bits: 64 * w * uint64(d),
		Capacity: t.N, FPR: math.NaN(), Hashes: 1, Accesses: d,
		Note: fmt.Sprintf("Count-Min (001 §7): %d rows of %d 64-bit counters; estimates within %.3g·N with probability %.3g", d, w, math.E/float64(w), 1-math.Exp(-float64(d))),
		Extra: []kind.Field{
			{Name: "eps", Value: math.E / float64(w), Note: "e/w: estimates within eps·N"},
			{Name: "delta", Value: math.Exp(-float64(d)), Note: "e^−d: the probability they are not"},
			{Name: "conservative update", Value: cfg.Conservative},
		},
	}
	if t.N > 0 {
		p.FPR = FPRScheme(cfg.Scheme, w, d, t.N)
	}
	p.New = func() (kind.Builder, error) {
		s, err := New(cfg)
		if err != nil {
			return nil, err
		}
		s.capacity = t.N
		return kind.FilterBuilder(s)
	}
	return p, nil
}

// planRedis sizes a redisbloom-profile sketch for t: by -m (width) and -k
// (depth) as CMS.INITBYDIM, by -eps and -delta as CMS.INITBYPROB
// (RedisDimensions), or for membership by -fpr or -bits-per-key with -n
// (its rows are independent hashes: DimensionsFPRScheme's and
// dimensionsBitsPerKey's independent rows, with 32-bit counters).
func planRedis(eps, delta float64, t kind.Target) (kind.Plan, error) {
	var (
		w   uint64
		d   int
		err error
	)
	switch {
	case eps != 0 || delta != 0:
		if t.FPR != 0 || t.BitsPerKey != 0 || t.M != 0 || t.K != 0 {
			return kind.Plan{}, kind.Paramf("countmin", "give {eps} and {delta}, or one of {fpr}, {bits-per-key} or {m} with {k}, not both")
		}
		w, d, err = RedisDimensions(eps, delta)
	case t.M != 0 || t.K != 0:
		if t.FPR != 0 || t.BitsPerKey != 0 || t.M == 0 || t.K == 0 {
			return kind.Plan{}, kind.Paramf("countmin", "give {m} (width) with {k} (depth), or one of {eps} with {delta}, {fpr} or {bits-per-key}")
		}
		w, d = t.M, t.K
	case t.FPR == 0 && t.BitsPerKey == 0:
		return kind.Plan{}, kind.Paramf("countmin", "give {m} (width) with {k} (depth), {eps} with {delta}, or {fpr} or {bits-per-key} with {n}")
	case t.FPR != 0:
		if err = sizing.Check("countmin", t); err == nil {
			w, d, err = DimensionsFPRScheme(hashing.Independent, t.N, t.FPR)
		}
	default:
		if err = sizing.Check("countmin", t); err == nil {
			w, d, err = counterDimensions(hashing.Independent, t.N, t.BitsPerKey, 32)
		}
	}
	if err != nil {
		return kind.Plan{}, err
	}
	cfg, err := normalize(Config{Profile: RedisBloom, Width: w, Depth: d})
	if err != nil {
		return kind.Plan{}, err
	}
	p := kind.Plan{
		Kind: "countmin", Scheme: hashing.RedisBloom.String(), M: w, MUnit: "counters per row", K: d, Bits: 64 * redisWords(w*uint64(d)),
		Capacity: t.N, FPR: math.NaN(), Hashes: d, Accesses: d,
		Note: fmt.Sprintf("RedisBloom's Count-Min sketch (CMS.INITBYDIM k %d %d): %d rows of %d 32-bit counters, row i at MurmurHash2(key, i) mod %d", w, d, d, w, w),
		Extra: []kind.Field{
			{Name: "profile", Value: RedisBloom.String()},
			{Name: "overestimation", Value: 2 / float64(w), Note: "2/w, CMS.INITBYPROB's error: estimates within it·N"},
			{Name: "prob", Value: math.Pow(0.5, float64(d)), Note: "2^−d, CMS.INITBYPROB's probability that they are not"},
		},
	}
	if t.N > 0 {
		p.FPR = FPR(w, d, t.N)
	}
	p.New = func() (kind.Builder, error) {
		s, err := New(cfg)
		if err != nil {
			return nil, err
		}
		s.capacity = t.N
		return kind.FilterBuilder(s) // by TryAdd: a count that would saturate a counter is refused
	}
	return p, nil
}

// describe lists the dimensions of s, its error bound and its fill.
func describe(g kind.Filter) []kind.Field {
	s := g.(*Sketch)
	if s.cfg.Profile == RedisBloom {
		return describeRedis(s)
	}
	w, d := s.cfg.Width, s.cfg.Depth
	eps := math.E / float64(w)
	fill := make([]float64, 0, d)
	var top uint64
	for row := range slices.Chunk(s.cells, int(max(w, 1))) {
		nz := 0
		for _, x := range row {
			if x != 0 {
				nz++
			}
			top = max(top, x)
		}
		fill = append(fill, float64(nz)/float64(w))
	}
	out := []kind.Field{
		{Name: "profile", Value: s.cfg.Profile.String()},
		{Name: "width", Value: w, Note: "w, counters per row"},
		{Name: "depth", Value: d, Note: "d, rows"},
		{Name: "scheme", Value: s.cfg.Scheme.String(), Note: "row hashes"},
		{Name: "conservative update", Value: s.cfg.Conservative},
		{Name: "eps", Value: eps, Note: "e/w"},
		{Name: "delta", Value: math.Exp(-float64(d)), Note: "e^−d"},
		{Name: "error bound", Value: eps * float64(s.total), Note: "eps·N: an estimate exceeds the true count by more with probability at most delta"},
		{Name: "row fill", Value: fill, Note: "fraction of nonzero counters per row"},
		{Name: "largest counter", Value: top},
	}
	if s.capacity > 0 {
		out = append(out, kind.Field{Name: "fpr at design n", Value: FPRScheme(s.cfg.Scheme, w, d, s.capacity),
			Note: "(1 − (1 − 1/w)^n)^d with the pair floor of two-hash rows (theory.FPRows), n distinct keys"})
	}
	return out
}

// describeRedis lists a redisbloom-profile sketch: what CMS.INFO reports,
// its error bound as CMS.INITBYPROB counts it, its fill and its saturated
// counters.
func describeRedis(s *Sketch) []kind.Field {
	w, d := s.cfg.Width, uint64(s.cfg.Depth)
	eps := 2 / float64(w)
	var top, saturated, nz uint64
	fill := make([]float64, 0, min(d, MaxDepth))
	for i := range d {
		rowNZ := uint64(0)
		for j := i * w; j < (i+1)*w; j++ {
			x := get32(s.cells, j)
			if x != 0 {
				rowNZ++
			}
			if x == RedisMaxCounter {
				saturated++
			}
			top = max(top, x)
		}
		nz += rowNZ
		if i < MaxDepth {
			fill = append(fill, float64(rowNZ)/float64(w))
		}
	}
	out := []kind.Field{
		{Name: "profile", Value: RedisBloom.String(), Note: "RedisBloom's CMS: row i at MurmurHash2(key, i) mod w"},
		{Name: "width", Value: w, Note: "w, counters per row (CMS.INFO width)"},
		{Name: "depth", Value: s.cfg.Depth, Note: "d, rows (CMS.INFO depth)"},
		{Name: "counter bits", Value: 32, Note: "saturating at 2^32 − 1"},
		{Name: "count", Value: int64(s.total), Note: "N, the sum of the increments, as CMS.INFO reports it"},
		{Name: "overestimation", Value: eps, Note: "2/w, CMS.INITBYPROB's error"},
		{Name: "prob", Value: math.Pow(0.5, float64(d)), Note: "2^−d, CMS.INITBYPROB's probability of an estimate above N·overestimation"},
		{Name: "error bound", Value: eps * float64(s.total), Note: "overestimation·N"},
	}
	if d <= MaxDepth {
		out = append(out, kind.Field{Name: "row fill", Value: fill, Note: "fraction of nonzero counters per row"})
	} else {
		out = append(out, kind.Field{Name: "fill", Value: float64(nz) / float64(w*d), Note: "fraction of nonzero counters"})
	}
	out = append(out, kind.Field{Name: "largest counter", Value: top})
	if saturated > 0 {
		out = append(out, kind.Field{Name: "saturated counters", Value: saturated, Warn: true,
			Note: "at 2^32 − 1: estimates there may be below true counts, and CMS.INCRBY answers overflow for keys whose counters all are"})
	}
	if s.capacity > 0 {
		out = append(out, kind.Field{Name: "fpr at design n", Value: FPR(w, int(d), s.capacity), Note: "(1 − (1 − 1/w)^n)^d, n distinct keys"})
	}
	return out
}
