package cuckoo

import (
	"fmt"
	"math"

	"github.com/bloomlab/bloomlab/internal/blrd"
	"github.com/bloomlab/bloomlab/internal/format"
	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/theory"
)

var _ kind.Filter = (*Filter)(nil)
var _ kind.Remover = (*Filter)(nil)
var _ kind.MemoryBudgeter = (*Filter)(nil)

func init() {
	kind.Register(kind.Spec{
		Name: "cuckoo",
		Summary: "cuckoo filter: f-bit fingerprints in buckets of b slots, two buckets per key, relocations on insert; " +
			"removes and counts keys; at equal memory below a Bloom filter's rate from about 13 bits per key (semi-sorted: 9) (CF, CoNEXT 2014); bit for bit RedisBloom's CF.* in the redisbloom profile",
		Order:  90,
		Format: format.KindCuckoo,
		Decode: kind.Decoded(decode),
		Options: []kind.Option{
			{Name: "profile", Type: kind.String, Default: "bloomlab", Usage: "bucket layout: bloomlab (xxh3-128, packed fingerprints, sized by -fpr or -bits-per-key) or " +
				"redisbloom (bit for bit RedisBloom's CF filter of capacity -n, 8-bit fingerprints, for CF.LOADCHUNK and CF.SCANDUMP; -seed 0 only)"},
			// No fixed default where it depends on the profile.
			{Name: "bucket-size", Type: kind.Int, Usage: "slots per bucket: bloomlab 1, 2, 4 or 8 (default 4); redisbloom 1 … 255 (default 2, RedisBloom's BUCKETSIZE)"},
			{Name: "fingerprint-bits", Type: kind.Int, Default: 0, Usage: "fingerprint bits f, 4 … 32 (bloomlab; 0: the shortest meeting -fpr at -n keys)"},
			{Name: "max-kicks", Type: kind.Int, Usage: "relocations per insert before it fails, 1 … 65535 (default 500; redisbloom 20, RedisBloom's MAXITERATIONS)"},
			{Name: "expansion", Type: kind.Int, Usage: "a full filter grows by a sub-filter of expansion^i times the first one's buckets: 0 (does not grow: a key that " +
				"finds no room is refused) or a power of two up to 32768 (default 0; redisbloom 1, RedisBloom's EXPANSION, rounded up to a power of two)"},
			{Name: "semisort", Type: kind.Bool, Default: false, Usage: "semi-sorted buckets (bloomlab, bucket size 4): one bit per entry less for the same rate (CF §5.2)"},
		},
		Plan:      planner,
		FPRMethod: "exact rate of the state: the (bucket, fingerprint) queries that match, counted over every bucket's entries",
		Describe:  describe,
		Combine:   kind.Merge[*Filter](),
		Exports: []kind.Export{blrd.Export("cuckoo", "RedisBloom cuckoo dump",
			"RedisBloom's CF.SCANDUMP chunks in a file (magic BLRD; docs/CUCKOO.md), for CF.LOADCHUNK: "+
				"a filter built with -profile redisbloom, or one dumped from Redis",
			// CF.SCANDUMP's header chunk is 38 bytes.
			readRedisBloom, func(n uint32) bool { return n == headerSize })},
	})
}

// planner plans with the kind's options; bucket-size, max-kicks and
// expansion have no fixed default: the profile's applies where they are
// not given.
func planner(v *kind.Values) kind.Planner {
	profile, fp, semi := v.String("profile"), v.Int("fingerprint-bits"), v.Bool("semisort")
	bucketSize, kicks, expansion := v.Int("bucket-size"), v.Int("max-kicks"), v.Int("expansion")
	return func(t kind.Target) (kind.Plan, error) {
		p, err := parseProfile(profile)
		if err != nil {
			return kind.Plan{}, err
		}
		c := Config{Profile: p, BucketSize: bucketSize, MaxKicks: kicks, Expansion: expansion, Semisort: semi,
			FingerprintBits: fp, Seed: t.Seed}
		for _, o := range []string{"bucket-size", "max-kicks"} {
			if v.Given(o) && v.Int(o) < 1 {
				return kind.Plan{}, kind.Paramf("cuckoo", "{%s} %d: must be at least 1", o, v.Int(o))
			}
		}
		if p == RedisBloom {
			if !v.Given("expansion") {
				c.Expansion = redisDefaultExpansion
			}
			return planRedis(c, t)
		}
		return planBloomlab(c, t)
	}
}

// checkTarget refuses explicit sizes and out-of-range targets; N = 0 is
// ErrNeedN (checked last, so that every other mistake is reported first).
func checkTarget(t kind.Target) error {
	switch {
	case t.M != 0 || t.K != 0:
		return kind.Paramf("cuckoo", "sized by {n} with {fpr} or {bits-per-key} (or {fingerprint-bits}); {m} and {k} do not apply")
	case t.FPR != 0 && t.BitsPerKey != 0:
		return kind.Paramf("cuckoo", "give {fpr} or {bits-per-key}, not both")
	case t.FPR != 0 && !(t.FPR > 0 && t.FPR < 1):
		return kind.Paramf("cuckoo", "{fpr} %v out of range (0, 1)", t.FPR)
	case t.BitsPerKey != 0 && !(t.BitsPerKey > 0 && t.BitsPerKey <= 1<<20):
		return kind.Paramf("cuckoo", "{bits-per-key} %v out of range (0, 2^20]", t.BitsPerKey)
	}
	return nil
}

func planBloomlab(c Config, t kind.Target) (kind.Plan, error) {
	if err := checkTarget(t); err != nil {
		return kind.Plan{}, err
	}
	if t.BitsPerKey != 0 && c.FingerprintBits != 0 {
		return kind.Plan{}, kind.Paramf("cuckoo", "give {bits-per-key} or {fingerprint-bits}, not both")
	}
	// Validate the options before asking for n.
	probe := c
	probe.Capacity = 1
	if _, err := plan(probe); err != nil {
		return kind.Plan{}, err
	}
	if t.N == 0 {
		return kind.Plan{}, kind.ErrNeedN
	}
	var notices []string
	var p Plan
	var err error
	switch {
	case t.BitsPerKey != 0:
		p, err = planBitsPerKey(t.N, t.BitsPerKey, c)
	default:
		c.Capacity, c.FPR = t.N, t.FPR
		if c.FPR == 0 && c.FingerprintBits == 0 {
			notices = append(notices, fmt.Sprintf("no -fpr: target rate %g", DefaultFPR))
		}
		p, err = plan(c)
		if err == nil && t.FPR != 0 && p.FPR > t.FPR {
			notices = append(notices, fmt.Sprintf("-fingerprint-bits %d gives rate %.3g at %d keys, above -fpr %g", c.FingerprintBits, p.FPR, t.N, t.FPR))
		}
	}
	if err != nil {
		return kind.Plan{}, err
	}
	note := fmt.Sprintf("cuckoo filter (CF §3): %d buckets of %d × %d-bit fingerprints, load %.3g at n", p.Buckets, p.BucketSize, p.FingerprintBits, p.Load)
	if p.Semisort {
		note += ", semi-sorted (CF §5.2)"
	}
	if p.Expansion > 0 {
		note += fmt.Sprintf("; grows by sub-filters (expansion %d) when full", p.Expansion)
	}
	kp := kind.Plan{
		Kind: "cuckoo", Scheme: "-", M: p.Buckets, MUnit: "buckets", K: 2, Bits: p.Bits(), Capacity: t.N, FPR: p.FPR,
		Hashes: 1, Accesses: 2, Removes: true, Note: note, Notices: notices,
		Extra: []kind.Field{
			{Name: "bucket size", Value: p.BucketSize},
			{Name: "fingerprint bits", Value: p.FingerprintBits},
			{Name: "semi-sorting", Value: p.Semisort},
			{Name: "load at n", Value: p.Load},
			{Name: "max kicks", Value: p.MaxKicks},
			{Name: "expansion", Value: p.Expansion},
		},
	}
	kp.New = func() (kind.Builder, error) { return kind.FilterBuilder(p.build()) }
	return kp, nil
}

func planRedis(c Config, t kind.Target) (kind.Plan, error) {
	if err := checkTarget(t); err != nil {
		return kind.Plan{}, err
	}
	switch {
	case t.BitsPerKey != 0:
		return kind.Plan{}, kind.Paramf("cuckoo", "the redisbloom profile is sized by {n} (RedisBloom's capacity) alone; {bits-per-key} does not apply")
	case c.FingerprintBits != 0 && c.FingerprintBits != 8:
		return kind.Plan{}, kind.Paramf("cuckoo", "the redisbloom profile has 8-bit fingerprints; {fingerprint-bits} %d does not apply", c.FingerprintBits)
	case c.Semisort:
		return kind.Plan{}, fmt.Errorf("cuckoo: the redisbloom profile does not semi-sort: %w", ErrParam)
	case c.Seed != 0:
		return kind.Plan{}, kind.Paramf("cuckoo", "the redisbloom profile has no seed (RedisBloom hashes with seed 0); {seed} %d", c.Seed)
	}
	bs, mi := c.BucketSize, c.MaxKicks
	if bs == 0 {
		bs = redisDefaultBucketSize
	}
	if mi == 0 {
		mi = redisDefaultMaxIterations
	}
	if _, err := NewRedisBloom(uint64(2*bs), bs, mi, c.Expansion); err != nil {
		return kind.Plan{}, err
	}
	if t.N == 0 {
		return kind.Plan{}, kind.ErrNeedN
	}
	if t.N < 2*uint64(bs) {
		return kind.Plan{}, kind.Paramf("cuckoo", "{n} %d: RedisBloom's capacity must be at least 2 × the bucket size %d", t.N, bs)
	}
	nb := redisBuckets(t.N, bs)
	if nb == 0 || nb > maxTableBits/8/uint64(bs) {
		return kind.Plan{}, kind.Paramf("cuckoo", "{n} %d needs %s buckets of %d bytes, more than 2^48 bits", t.N, bucketCount(nb), bs)
	}
	slots := nb * uint64(bs)
	load := math.Min(1, float64(t.N)/float64(slots))
	fpr := theory.FPCuckoo(8, bs, load)
	var notices []string
	if t.FPR != 0 && fpr > t.FPR {
		notices = append(notices, fmt.Sprintf("RedisBloom's 8-bit fingerprints in buckets of %d give rate %.3g at %d keys, above -fpr %g (a smaller -bucket-size, or the bloomlab profile, does better)", bs, fpr, t.N, t.FPR))
	}
	if t.N > slots {
		notices = append(notices, fmt.Sprintf("%d keys exceed the %d slots of %d buckets (RedisBloom rounds capacity/bucket-size to a power of two); the filter grows when full (expansion %d)", t.N, slots, nb, c.Expansion))
	}
	kp := kind.Plan{
		Kind: "cuckoo", Scheme: "redisbloom", M: nb, MUnit: "buckets", K: 2, Bits: slots * 8, Capacity: t.N, FPR: fpr,
		Hashes: 1, Accesses: 2, Removes: true, Notices: notices,
		Note: fmt.Sprintf("RedisBloom's CF filter: %d buckets of %d bytes (8-bit fingerprints), load %.3g at n", nb, bs, load),
		Extra: []kind.Field{
			{Name: "bucket size", Value: bs},
			{Name: "max iterations", Value: mi},
			{Name: "expansion", Value: int(nextPow2(uint64(c.Expansion)))},
		},
	}
	kp.New = func() (kind.Builder, error) {
		f, err := NewRedisBloom(t.N, bs, mi, c.Expansion)
		if err != nil {
			return nil, err
		}
		return kind.FilterBuilder(f)
	}
	return kp, nil
}

// describe lists the filter's structure for bloomlab info.
func describe(g kind.Filter) []kind.Field {
	f := g.(*Filter)
	in := f.Info()
	fields := []kind.Field{
		{Name: "profile", Value: f.profile.String()},
		{Name: "bucket size", Value: f.lay.b, Note: "slots per bucket"},
		{Name: "fingerprint bits", Value: f.lay.f},
	}
	if f.profile == Bloomlab {
		fields = append(fields, kind.Field{Name: "semi-sorting", Value: f.lay.semisort, Note: "CF §5.2: 4f − 4 bits per bucket"})
	}
	if f.capacity == 0 && f.profile == RedisBloom {
		fields = append(fields, kind.Field{Name: "capacity recorded", Value: false,
			Note: "none recorded, as for a filter from CF.SCANDUMP chunks, which carry none: the capacity shown is the slots, buckets × bucket size"})
	}
	exp := any(f.expansion)
	if f.expansion == 0 {
		exp = "none (refuses a key that finds no room)"
	}
	fields = append(fields,
		kind.Field{Name: "max kicks", Value: f.maxKicks, Note: "relocations per insert"},
		kind.Field{Name: "expansion", Value: exp},
		kind.Field{Name: "slots", Value: in.Slots},
		kind.Field{Name: "load factor", Value: in.LoadFactor, Note: "occupied slots ÷ slots"},
		kind.Field{Name: "deletes", Value: f.deletes, Note: "since the last compaction"},
		kind.Field{Name: "sub-filters", Value: len(f.subs)},
	)
	for i, s := range f.stats() {
		fields = append(fields, kind.Field{Name: fmt.Sprintf("sub-filter %d", i),
			Value: fmt.Sprintf("%d buckets, %d entries, load %.4g, rate %.4g", s.Buckets, s.Entries, s.Load, s.FPR)})
	}
	fields = append(fields, kind.Field{Name: "fpr at keys added", Value: f.formulaFPR(), Note: "formula, 1 − (1 − α/(2^f − 1))^{2b} per sub-filter at its load α"})
	if f.profile == RedisBloom {
		fields = append(fields, kind.Field{Name: "redisbloom size", Value: in.Size, Note: "bytes, as CF.INFO reports"})
	}
	if f.expansion != 0 {
		budget := any(f.MaxBits())
		if f.MaxBits() == 0 {
			budget = "none"
		}
		fields = append(fields, kind.Field{Name: "memory budget", Value: budget, Note: "bits the tables may grow to (not stored in the file: the default, or less where the process may use less memory)"})
	}
	if b, err := f.nextSubFilterBits(); err != nil {
		fields = append(fields, kind.Field{Name: "next sub-filter", Value: "cannot grow", Note: err.Error(), Warn: true})
	} else if b > 0 {
		fields = append(fields, kind.Field{Name: "next sub-filter", Value: b, Note: "bits the next growth allocates"})
	}
	if f.expansion == 0 && f.profile == Bloomlab && in.LoadFactor > designLoad(f.lay.b) {
		fields = append(fields, kind.Field{Name: "nearly full", Value: true, Warn: true,
			Note: fmt.Sprintf("load above %.2f: inserts may be refused (the filter does not grow)", designLoad(f.lay.b))})
	}
	return fields
}
