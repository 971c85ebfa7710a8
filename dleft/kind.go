package dleft

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/format"
	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/internal/sizing"
)

var _ kind.Filter = (*Filter)(nil)

func init() {
	kind.Register(kind.Spec{
		Name:    "dleft",
		Summary: "d-left Bloom filter: fingerprints in d subtables of 64- or 128-bit buckets whose bits they share (002 §II)",
		Order:   60,
		Format:  format.KindDleft,
		Decode:  kind.Decoded(decode),
		Options: []kind.Option{
			{Name: "bucket-bits", Type: kind.Int, Default: 0, Usage: "bucket size: 64 or 128 bits (0: whichever formula (1) rates better for the target)"},
			{Name: "stash-limit", Type: kind.Int, Default: 0, Usage: "most keys the stash may hold before an insert is refused (0: no limit)"},
			{Name: "rounds", Type: kind.Int, Default: 0, Usage: "0 adds the keys online (002 §II-A); R ≥ 1 places them offline and re-places every key R times (002 §II-D uses 10; keys held in memory)"},
		},
		Plan:      planner,
		FPRMethod: "formula (1) of 002 on the buckets: Σ over subtables of the mean over buckets of a·2^−f(a), plus 2^−64 per stashed key",
		Describe:  describe,
	})
}

// Limits of the build options.
const maxRounds = 1000

// planner plans with the options bucket-bits, stash-limit and rounds.
func planner(v *kind.Values) kind.Planner {
	bucketBits, stashLimit, rounds := v.Int("bucket-bits"), v.Int("stash-limit"), v.Int("rounds")
	return func(t kind.Target) (kind.Plan, error) {
		var configs []Config
		for _, c := range sizingConfigs {
			if bucketBits == 0 || c.BucketBits == bucketBits {
				configs = append(configs, c)
			}
		}
		switch {
		case len(configs) == 0:
			return kind.Plan{}, kind.Paramf("dleft", "{bucket-bits} %d, want 64 or 128 (or 0: either)", bucketBits)
		case stashLimit < 0 || stashLimit > math.MaxInt32:
			return kind.Plan{}, kind.Paramf("dleft", "{stash-limit} %d out of range [0, 2^31)", stashLimit)
		case rounds < 0 || rounds > maxRounds:
			return kind.Plan{}, kind.Paramf("dleft", "{rounds} %d out of range [0, %d]", rounds, maxRounds)
		}
		return planKind(configs, stashLimit, rounds, t)
	}
}

// planKind sizes a filter for t among configs (PlanFPR, PlanBitsPerKey).
func planKind(configs []Config, stashLimit, rounds int, t kind.Target) (kind.Plan, error) {
	p, err := sizeFor(configs, t)
	if err != nil {
		return kind.Plan{}, err
	}
	p.StashLimit = stashLimit
	p.Seed = t.Seed
	how := "online inserts"
	if rounds > 0 {
		how = fmt.Sprintf("offline placement, %d rounds", rounds)
	}
	kp := kind.Plan{
		Kind: "dleft", Scheme: "-", M: uint64(p.D) * p.Buckets, MUnit: "buckets", K: p.D, Bits: p.Bits(),
		Capacity: t.N, FPR: p.FPR, Hashes: 1, Accesses: p.D,
		Note: fmt.Sprintf("d-left (002 §II): %d × %d buckets of %d bits, %.3g keys per bucket", p.D, p.Buckets, p.BucketBits, p.Load),
		Extra: []kind.Field{
			{Name: "bucket bits", Value: p.BucketBits},
			{Name: "semi-sorting", Value: p.Semisort.String()},
			{Name: "keys per bucket", Value: p.Load},
			{Name: "stash limit", Value: stashLimit, Note: "0: none"},
			{Name: "placement", Value: how},
		},
	}
	if rounds > 0 {
		kp.Notices = append(kp.Notices, fmt.Sprintf("fpr %.3g is for online inserts; offline placement (-rounds %d) evens the loads and lowers it (002 §II-D); the build holds every key's 16-byte digest, and about 40 bytes per key more while placing", p.FPR, rounds))
	}
	kp.New = func() (kind.Builder, error) {
		if rounds > 0 {
			if err := p.Validate(); err != nil {
				return nil, err
			}
			return &offline{cfg: p.Config, rounds: rounds, capacity: t.N}, nil
		}
		f, err := p.new(t.N, t.Seed)
		if err != nil {
			return nil, err
		}
		return kind.FilterBuilder(f)
	}
	return kp, nil
}

// sizeFor returns PlanFPR or PlanBitsPerKey for t among configs; an
// explicit size is an error.
func sizeFor(configs []Config, t kind.Target) (Plan, error) {
	switch err := sizing.Check("dleft", t); {
	case t.M != 0 || t.K != 0:
		return Plan{}, fmt.Errorf("dleft: sized by a false-positive rate or by bits per key, with n (formula (1) of 002 chooses the buckets and their load); m and k do not apply: %w", kind.ErrParam)
	case err != nil:
		return Plan{}, err
	case t.FPR > 0:
		return planFPR(configs, t.N, t.FPR)
	}
	return planBitsPerKey(configs, t.N, t.BitsPerKey)
}

// offline is the builder of -rounds R: it holds the keys' digests and
// places them all at Finish (Build).
type offline struct {
	cfg      Config
	rounds   int
	capacity uint64
	ds       []hashing.Digest
	maxBits  uint64 // memory budget (SetMaxBits; 0: none)
}

// offlineKeyBits is the memory the offline build takes per key: its
// 16-byte digest, and about 40 bytes more while placing (Build).
const offlineKeyBits = 8 * (16 + 40)

func (b *offline) Add(key []byte) error {
	if b.maxBits > 0 {
		table := uint64(b.cfg.D) * b.cfg.Buckets * uint64(b.cfg.BucketBits)
		if need := table + uint64(len(b.ds)+1)*offlineKeyBits; need > b.maxBits || need < table {
			return fmt.Errorf("dleft: the offline build of %d keys would take %d bits (the table and %d bytes per key while placing), beyond its memory budget of %d bits: %w",
				len(b.ds)+1, need, offlineKeyBits/8, b.maxBits, ErrFull)
		}
	}
	b.ds = append(b.ds, hashing.Sum(key, b.cfg.Seed))
	return nil
}

// SetMaxBits bounds the memory of the offline build (kind.MemoryBudgeter):
// an Add that would bring the table and the keys held for placing past
// bits fails with an error wrapping ErrFull; the filter Finish returns
// keeps the budget for its stash (Filter.SetMaxBits). 0: none.
func (b *offline) SetMaxBits(bits uint64) { b.maxBits = bits }

// Finish places the distinct keys (a repeated key takes one slot, as Add
// would give it) and counts every Add in N.
func (b *offline) Finish() (kind.Filter, error) {
	added := uint64(len(b.ds))
	ds := b.ds
	slices.SortFunc(ds, func(x, y hashing.Digest) int {
		return cmp.Or(cmp.Compare(x.H1, y.H1), cmp.Compare(x.H2, y.H2))
	})
	ds = slices.Compact(ds)
	f, err := Build(b.cfg, ds, b.rounds)
	if err != nil {
		return nil, err
	}
	b.ds = nil
	f.n, f.capacity, f.maxBits = added, b.capacity, b.maxBits
	return f, nil
}

// describe lists the structure of f, its loads, its stash and formula (1).
func describe(g kind.Filter) []kind.Field {
	f := g.(*Filter)
	c := f.cfg
	loads := make([]uint64, f.maxLoad+1)
	for _, row := range f.Loads() {
		for a, x := range row {
			loads[a] += x
		}
	}
	var fbits []int
	for a := 1; a <= f.maxLoad; a++ {
		fbits = append(fbits, f.FingerprintBits(a))
	}
	stashNote := "keys none of whose buckets had room, held as 64-bit fingerprints"
	if f.Overflows() > 0 {
		stashNote += " and checked on every lookup: size for more keys or more bits per key"
	}
	out := []kind.Field{
		{Name: "d", Value: c.D, Note: "subtables"},
		{Name: "buckets per subtable", Value: c.Buckets},
		{Name: "bucket bits", Value: c.BucketBits},
		{Name: "semi-sorting", Value: c.Semisort.String(), Note: "002 §II-B"},
		{Name: "group", Value: c.Group, Note: "buckets sharing their bits (002 §II-C)"},
		{Name: "min fingerprint bits", Value: c.MinFingerprintBits},
		{Name: "keys stored", Value: f.Stored(), Note: "fingerprints in buckets; keys already reported present are not stored again"},
		{Name: "stash", Value: f.Overflows(), Note: stashNote, Warn: f.Overflows() > 0},
		{Name: "stash limit", Value: c.StashLimit, Note: "0: none"},
		{Name: "loads", Value: loads, Note: "buckets holding 0 … max load fingerprints"},
		{Name: "max load", Value: f.maxLoad, Note: "fingerprints a bucket can hold"},
	}
	if c.Group == 1 {
		out = append(out, kind.Field{Name: "fingerprint bits", Value: fbits, Note: "f(a) for loads a = 1 … max load"})
	}
	buckets := float64(uint64(c.D) * c.Buckets)
	out = append(out, predicted("fpr at keys added", c, float64(f.Stored()+uint64(f.Overflows()))/buckets, "formula (1) over the fluid-limit loads, n = keys held"))
	if f.capacity > 0 {
		out = append(out, predicted("fpr at design n", c, float64(f.capacity)/buckets, "formula (1) over the fluid-limit loads"))
	}
	return out
}

func predicted(name string, c Config, load float64, note string) kind.Field {
	fpr, _, err := PredictFPR(c, load)
	if err != nil {
		return kind.Field{Name: name, Value: "unknown", Note: fmt.Sprintf("load %.3g is beyond what the formula covers", load)}
	}
	return kind.Field{Name: name, Value: fpr, Note: note}
}
