// Package kind is the contract every bloomlab structure satisfies and the
// table of kinds that the root loader (bloomlab.ReadFrom), the command
// (cmd/bloomlab) and the server iterate. A kind brings everything the tools
// need to know about it: how it is sized from a target without allocating
// (Planner), which build options it takes (Options), how it describes
// itself (Describe), how it loads (Decode), how two filters combine
// (Combine) and which foreign formats it exports (Exports). Optional
// capabilities of a loaded structure (remove, count) are discovered by
// interface, never by the kind's name.
//
// Adding a kind costs its package, a Spec registered from that package's
// init function, and one import line in the root package (kinds.go).
//
// Vocabulary (docs/API.md): Capacity is the number of keys a filter was
// sized for (0: unknown or not applicable); Bits is the memory the
// structure's state takes, in bits; N is the number of keys added; Union
// combines sets (bits are ORed), Merge combines multisets (counts add).
package kind

import (
	"errors"
	"fmt"
	"github.com/bloomlab/bloomlab/internal/base"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/bloomlab/bloomlab/internal/format"
)

// Filter is what every structure offers. Each kind checks it at compile
// time: var _ kind.Filter = (*Filter)(nil).
type Filter interface {
	// Kind names the structure ("bloom", "partitioned", "counting", …).
	Kind() string
	// Contains reports whether key may have been added: false means
	// certainly not.
	Contains(key []byte) bool
	// WriteTo writes the structure in the bloomlab file format.
	WriteTo(w io.Writer) (int64, error)
	// Capacity is the number of keys the structure was sized for (0:
	// unknown, or not sized by a number of keys).
	Capacity() uint64
	// Bits is the memory of the structure's state in bits.
	Bits() uint64
	// N is the number of keys added (for counting kinds: added minus
	// removed; for a Count-Min sketch: the sum of the counts).
	N() uint64
	// Seed is the seed of the base hash.
	Seed() uint64
	// EstimatedFPR is the false-positive rate of the current state: the
	// probability that Contains answers true for a key never added.
	EstimatedFPR() float64
}

// Remover is a filter from which added keys can be removed. Remove must
// only be given keys that were added: removing a key that was never added
// (a false positive) can turn other keys into false negatives.
type Remover interface {
	Remove(key []byte) error
}

// MemoryBudgeter is a structure (or a Builder) whose memory grows as keys
// come: SetMaxBits(b) makes every later insert that would bring its Bits()
// above b fail with an error, changing nothing, where it would otherwise
// allocate (a scalable chain's next link, a cuckoo filter's next
// sub-filter, a d-left filter's stash). 0 removes the budget. The command
// sets it to the memory the process may use (internal/sysmem.Limit)
// before it adds keys (build, add), so that a growth the process cannot
// hold is an error, not a fatal out-of-memory. Every kind whose memory
// grows implements it (the root package's TestMemoryBudgetEveryKind);
// structures of fixed size need not. FilterBuilder's builder implements
// it for every filter, forwarding to the filter when it has the method.
type MemoryBudgeter interface {
	SetMaxBits(bits uint64)
}

// Errors. Every parameter error of every bloomlab package wraps ErrParam,
// every attempt to combine mismatched structures ErrIncompatible.
var (
	ErrParam        = base.ErrParam
	ErrIncompatible = errors.New("incompatible filters")
	// ErrNotPresent: Remove was given a key the structure proves absent;
	// nothing was changed. Each kind's ErrNotPresent wraps it.
	ErrNotPresent = errors.New("key not present")
	// ErrStatic: an add, remove or merge on a static filter (Spec.Static).
	ErrStatic = errors.New("the filter is static")
	// ErrNeedN: the kind must be sized for a number of keys and none was
	// given.
	ErrNeedN = fmt.Errorf("a number of keys (n) is needed to size this kind: %w", ErrParam)
)

// Target is what a user asks for. Exactly one sizing is set: FPR (with N),
// BitsPerKey (with N), or M and K (explicit size; N is then informational).
// A growing kind may be sized with N = 0.
type Target struct {
	N          uint64
	FPR        float64
	BitsPerKey float64
	M          uint64
	K          int
	Seed       uint64
}

// Explicit reports whether t gives the size directly (M and K).
func (t Target) Explicit() bool { return t.M > 0 }

// Plan is a kind's answer to a Target: its parameters, its memory and the
// rate theory predicts at Capacity keys, computed without allocating the
// structure.
type Plan struct {
	Kind   string
	Scheme string // index scheme, "-" where the kind has none to choose
	// M is the number of the kind's units (MUnit: bits, counters, buckets,
	// cells), K the number of probes per key as the kind counts them.
	M     uint64
	MUnit string
	K     int
	// Bits is the memory the structure will take.
	Bits uint64
	// Capacity is the number of keys the plan is sized for (0 if unknown).
	Capacity uint64
	// FPR is the rate theory predicts at Capacity keys (NaN if unknown).
	FPR float64
	// Hashes and Accesses per query, worst case (a present key).
	Hashes, Accesses int
	// BuildBytes, where set (static kinds), bounds the memory the build
	// takes at its peak, in bytes: the keys' hashes held until Finish,
	// Finish's working arrays and the structure (0: Bits/8). It is 0 too
	// when the plan has no N (the budget, kind.MemoryBudgeter, then
	// stops a build that outgrows the memory as the keys come).
	BuildBytes uint64
	// Removes reports whether the kind supports removing keys.
	Removes bool
	// Note says what the kind is, in a few words, with its paper section.
	Note string
	// Notices are things the user should know about the plan (a size
	// rounded, an option ignored), printed on stderr by the command.
	Notices []string
	// Extra holds kind-specific columns for plan output (name → value).
	Extra []Field
	// New allocates the planned structure and returns its builder.
	New func() (Builder, error) `json:"-"`
}

// Builder receives the keys of a new structure. Add returns an error, and
// changes nothing, when the structure cannot take the key; it never drops
// one.
type Builder interface {
	Add(key []byte) error
	// Finish returns the structure. Add must not be called after it.
	Finish() (Filter, error)
}

// Planner sizes a kind for a target with the options it was made with.
type Planner func(t Target) (Plan, error)

// Field is one line of a description: a name, a value, and a note saying
// how the value was obtained. Warn marks a value the user should act on
// (a filter past its capacity, a non-empty stash).
type Field struct {
	Name  string `json:"name"`
	Value any    `json:"value"`
	Note  string `json:"note,omitempty"`
	Warn  bool   `json:"warn,omitempty"`
}

// Export is a foreign format a kind can be written to and read from.
type Export struct {
	Name    string // "redisbloom"
	Summary string
	// Write writes f (a structure of this kind) in the format.
	Write func(f Filter, w io.Writer) error
	// Read reads a structure in the format; it validates before it
	// allocates.
	Read func(r io.Reader) (Filter, error)
	// Detect, if not nil, reports whether a stream whose first bytes are
	// prefix (DetectLen of them, fewer if the stream is shorter) holds
	// this kind's form of the format. import uses it when several kinds
	// offer a format of the same name and no -kind is given.
	Detect func(prefix []byte) bool
}

// DetectLen is the length of the prefix Export.Detect is given.
const DetectLen = 64

// Spec describes a kind.
type Spec struct {
	// Name is the kind's name, as Filter.Kind returns it and as -kind
	// takes it.
	Name string
	// Summary says what the kind is in one sentence, with its paper.
	Summary string
	// Order places the kind in listings (plan, help).
	Order int
	// Format is the kind's code in the bloomlab file format; several kinds
	// may share one (bloom and partitioned).
	Format format.Kind
	// Decode reads one structure of this Format. Kinds sharing a Format
	// share a Decode; set it on one of them.
	Decode func(d *format.Decoder) (Filter, error)
	// Options declares the kind's own build options, as data (beyond the
	// Target's parameters: scheme, counter-bits, …); the command binds
	// each to a flag of its name.
	Options []Option
	// Plan returns the planner for the options' values v (Spec.Planner
	// passes the defaults for nil).
	Plan func(v *Values) Planner
	// FPRMethod says how the kind's EstimatedFPR reads the state.
	FPRMethod string
	// Growing reports that the kind can be built without knowing N.
	Growing bool
	// Static reports a kind built once from its whole key set (fuse,
	// ribbon): its Builder holds the keys' hashes and constructs the
	// filter in Finish; the filter takes no adds, removes or merges
	// (StaticError says so and how to rebuild).
	Static bool
	// Describe lists the kind-specific facts of f for info: its
	// structure, its rate by formula, its warnings. The command adds the
	// common ones (kind, seed, memory, keys, capacity, rate of the state).
	Describe func(f Filter) []Field
	// Combine sets dst to the combination of dst and src (both of this
	// kind): their union for set kinds, their merge for multiset kinds. It
	// fails, changing nothing, wrapping ErrIncompatible. nil: the kind
	// does not combine.
	Combine func(dst, src Filter) error
	// Exports lists foreign formats.
	Exports []Export
	// PlanVariants are option sets (the kind's options, written as the
	// command's flags: Values.ParseArgs) that plan lists as rows of their own beside the
	// default's: a layout worth comparing (scalable's -profile blocked).
	PlanVariants [][]string
}

var (
	mu    sync.RWMutex
	specs []*Spec
)

// Register adds a kind to the table. It panics on a duplicate name or an
// incomplete Spec: registration happens in init functions, so a mistake
// fails every test at once.
func Register(s Spec) {
	mu.Lock()
	defer mu.Unlock()
	if s.Name == "" || s.Plan == nil || s.Describe == nil {
		panic(fmt.Sprintf("kind: incomplete spec %q", s.Name))
	}
	for _, o := range s.Options {
		if err := o.check(); err != nil {
			panic(fmt.Sprintf("kind %s: %v", s.Name, err))
		}
	}
	for _, o := range specs {
		if o.Name == s.Name {
			panic("kind: duplicate kind " + s.Name)
		}
		if s.Decode != nil && o.Decode != nil && o.Format == s.Format {
			panic(fmt.Sprintf("kind: format %v decoded by both %s and %s", s.Format, o.Name, s.Name))
		}
	}
	specs = append(specs, &s)
	sort.SliceStable(specs, func(i, j int) bool { return specs[i].Order < specs[j].Order })
}

// All returns the registered kinds in listing order.
func All() []*Spec {
	mu.RLock()
	defer mu.RUnlock()
	return append([]*Spec(nil), specs...)
}

// Lookup returns the kind with the given name.
func Lookup(name string) (*Spec, bool) {
	mu.RLock()
	defer mu.RUnlock()
	for _, s := range specs {
		if s.Name == name {
			return s, true
		}
	}
	return nil, false
}

// Names returns the registered kinds' names in listing order.
func Names() []string {
	var names []string
	for _, s := range All() {
		names = append(names, s.Name)
	}
	return names
}

// decoder returns the Decode function for a file's kind code.
func decoder(k format.Kind) func(*format.Decoder) (Filter, error) {
	mu.RLock()
	defer mu.RUnlock()
	for _, s := range specs {
		if s.Format == k && s.Decode != nil {
			return s.Decode
		}
	}
	return nil
}

// Decode reads one structure of any registered kind from d.
func Decode(d *format.Decoder) (Filter, error) {
	k, err := d.PeekKind()
	if err != nil {
		return nil, err
	}
	dec := decoder(k)
	if dec == nil {
		return nil, fmt.Errorf("file holds kind %v, which this build cannot read: %w", k, format.ErrFormat)
	}
	return dec(d)
}

// StaticError is the error of op ("add keys to", "remove keys from",
// "merge") on a filter of static kind name: it says why and how to
// rebuild, and wraps ErrStatic.
func StaticError(name, op string) error {
	return fmt.Errorf("cannot %s a %s filter: %w: it is built once from its whole key set and answers for exactly those keys; rebuild it from all the keys (bloomlab build -kind %s -o FILE KEYFILE…)", op, name, ErrStatic, name)
}

// PlanStep records one evaluation of a planner's search. Every search a
// Planner runs calls it once per candidate, so that tests bound a
// planner's work for any target by counting, not by timing (the counter
// lives in internal/base, which the lowest layers use).
func PlanStep() { base.PlanStep() }

// PlanSteps returns the number of PlanStep calls so far in the process.
func PlanSteps() uint64 { return base.PlanSteps() }

// PlanDefault sizes kind s for t with its default options.
func PlanDefault(s *Spec, t Target) (Plan, error) {
	return s.Planner(nil)(t)
}

// PlanVariant sizes kind s for t with the options args (one of
// s.PlanVariants).
func PlanVariant(s *Spec, t Target, args []string) (Plan, error) {
	v := s.Defaults()
	if err := v.ParseArgs(args); err != nil {
		return Plan{}, fmt.Errorf("%s %s: %w", s.Name, strings.Join(args, " "), err)
	}
	return s.Planner(v)(t)
}

// Decoded adapts a kind's typed decode function to Spec.Decode, without
// turning a nil pointer into a non-nil interface.
func Decoded[T Filter](decode func(*format.Decoder) (T, error)) func(*format.Decoder) (Filter, error) {
	return func(d *format.Decoder) (Filter, error) {
		f, err := decode(d)
		if err != nil {
			return nil, err
		}
		return f, nil
	}
}

// Union adapts a kind's Union method to Spec.Combine.
func Union[T interface {
	Filter
	Union(T) error
}]() func(dst, src Filter) error {
	return func(dst, src Filter) error {
		a, ok1 := dst.(T)
		b, ok2 := src.(T)
		if !ok1 || !ok2 {
			return fmt.Errorf("cannot combine a %s with a %s: %w", dst.Kind(), src.Kind(), ErrIncompatible)
		}
		return a.Union(b)
	}
}

// Merge adapts a kind's Merge method to Spec.Combine.
func Merge[T interface {
	Filter
	Merge(T) error
}]() func(dst, src Filter) error {
	return func(dst, src Filter) error {
		a, ok1 := dst.(T)
		b, ok2 := src.(T)
		if !ok1 || !ok2 {
			return fmt.Errorf("cannot combine a %s with a %s: %w", dst.Kind(), src.Kind(), ErrIncompatible)
		}
		return a.Merge(b)
	}
}

// Adder returns a function adding one key to f, if f takes keys one at a
// time: Add(key) (bloom, counting, …), Add(key) error (kinds whose insert
// can be refused), Add(key) (present bool, err error) (a growing filter,
// which reports whether the key may already be present), or TryAdd(key,
// count) (estimate, error) or Add(key, count) (a Count-Min sketch: count 1;
// TryAdd, preferred, refuses a count its counters cannot hold).
func Adder(f Filter) (func(key []byte) error, bool) {
	switch a := f.(type) {
	case interface{ Add([]byte) error }:
		return a.Add, true
	case interface{ Add([]byte) (bool, error) }:
		return func(key []byte) error { _, err := a.Add(key); return err }, true
	case interface{ Add([]byte) }:
		return func(key []byte) error { a.Add(key); return nil }, true
	case interface {
		TryAdd([]byte, uint64) (uint64, error)
	}:
		return func(key []byte) error { _, err := a.TryAdd(key, 1); return err }, true
	case interface{ Add([]byte, uint64) }:
		return func(key []byte) error { a.Add(key, 1); return nil }, true
	}
	return nil, false
}

// FilterBuilder is the Builder of a structure that is its own builder: it
// takes keys with Add and is finished as it stands.
func FilterBuilder(f Filter) (Builder, error) {
	add, ok := Adder(f)
	if !ok {
		return nil, fmt.Errorf("kind %s does not take keys one at a time: %w", f.Kind(), ErrParam)
	}
	return &filterBuilder{f: f, add: add}, nil
}

type filterBuilder struct {
	f   Filter
	add func([]byte) error
}

func (b *filterBuilder) Add(key []byte) error    { return b.add(key) }
func (b *filterBuilder) Finish() (Filter, error) { return b.f, nil }

// SetMaxBits sets the filter's memory budget if it has one
// (MemoryBudgeter); a filter of fixed size ignores it.
func (b *filterBuilder) SetMaxBits(bits uint64) {
	if mb, ok := b.f.(MemoryBudgeter); ok {
		mb.SetMaxBits(bits)
	}
}

// MaxBits returns the filter's memory budget (0: none, or a filter of
// fixed size), where the filter says it.
func (b *filterBuilder) MaxBits() uint64 {
	if mb, ok := b.f.(interface{ MaxBits() uint64 }); ok {
		return mb.MaxBits()
	}
	return 0
}
