package filtertest

import (
	"encoding/binary"
	"errors"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/bloomlab/bloomlab/internal/kind"
)

// Plan plans the registered kind name for t with the options args (as
// they would follow the command's own flags).
func Plan(t *testing.T, name string, args []string, target kind.Target) (kind.Plan, error) {
	t.Helper()
	s, ok := kind.Lookup(name)
	if !ok {
		t.Fatalf("kind %q is not registered", name)
	}
	v := s.Defaults()
	if err := v.ParseArgs(args); err != nil {
		t.Fatalf("%s: options %q: %v", name, args, err)
	}
	return s.Planner(v)(target)
}

// Explicit is a plan from an explicit m and k, and what it must give.
type Explicit struct {
	Args   []string
	M      uint64
	K      int
	WantM  uint64
	Notice bool // a Plan.Notices entry must say the size was rounded
}

// PlannerChecks is what CheckPlanner needs to know about a kind.
type PlannerChecks struct {
	// Options lists option sets to plan with (nil: the defaults only).
	Options [][]string
	// Rate is the kind's formula for the false-positive rate of plan p
	// holding n keys, from p's M and K (and the options).
	Rate func(p kind.Plan, args []string, n uint64) float64
	// MinM is the smallest M the kind can have (a bits-per-key plan may
	// exceed a budget smaller than that).
	MinM uint64
	// Explicit lists explicit sizes and their rounding.
	Explicit []Explicit
	// BadOptions lists option sets the planner must refuse with ErrParam.
	BadOptions [][]string
	// Unit is the plan's MUnit.
	Unit string
	// Ns lists the numbers of keys to plan for (nil: 1, 7, 1000, 10^5),
	// FPRs the rates (nil: 0.3, 0.01, 0.0001).
	Ns   []uint64
	FPRs []float64
	// BigN is the number of keys of the check that planning a large
	// filter allocates nothing (0: 10^12, 1.2 TB at 1 %); a kind whose
	// format caps its size lower gives a number within the cap.
	BigN uint64
}

// CheckPlanner checks a kind's planner against the contract of
// internal/kind: rate plans meet the rate by the kind's formula and record
// it; bits-per-key plans never exceed the budget; explicit sizes round up
// with a notice; N = 0 is ErrNeedN (a static kind plans a rate without
// N); bad options and out-of-range targets
// are ErrParam; and planning, even for 10^15 keys, allocates nothing of
// the structure's size.
func CheckPlanner(t *testing.T, name string, c PlannerChecks) {
	t.Helper()
	opts := c.Options
	if opts == nil {
		opts = [][]string{nil}
	}
	for _, args := range opts {
		ns := c.Ns
		if ns == nil {
			ns = []uint64{1, 7, 1000, 100_000}
		}
		for _, n := range ns {
			fprs := c.FPRs
			if fprs == nil {
				fprs = []float64{0.3, 0.01, 0.0001}
			}
			for _, fpr := range fprs {
				p, err := Plan(t, name, args, kind.Target{N: n, FPR: fpr, Seed: 3})
				if err != nil {
					t.Fatalf("%s %q n=%d fpr=%v: %v", name, args, n, fpr, err)
				}
				if r := c.Rate(p, args, n); !(r <= fpr) || !(p.FPR <= fpr) || math.Abs(p.FPR-r) > 1e-9*r {
					t.Errorf("%s %q n=%d fpr=%v: plan m=%d k=%d has rate %v by the formula, plan says %v", name, args, n, fpr, p.M, p.K, r, p.FPR)
				}
				if p.Capacity != n || p.Kind != name || p.MUnit != c.Unit || p.New == nil || p.K < 1 || p.Bits < p.M {
					t.Errorf("%s %q: plan %+v", name, args, p)
				}
			}
			for _, bpk := range []float64{0.5, 4, 10, 33.3} {
				p, err := Plan(t, name, args, kind.Target{N: n, BitsPerKey: bpk})
				if err != nil {
					t.Fatalf("%s %q n=%d bpk=%v: %v", name, args, n, bpk, err)
				}
				budget := uint64(math.Ceil(bpk * float64(n)))
				if p.M > max(budget, c.MinM) || p.K < 1 {
					t.Errorf("%s %q n=%d bpk=%v: m = %d, k = %d over a budget of %d", name, args, n, bpk, p.M, p.K, budget)
				}
				if r := c.Rate(p, args, n); math.Abs(p.FPR-r) > 1e-9*r {
					t.Errorf("%s %q n=%d bpk=%v: plan says rate %v, formula %v", name, args, n, bpk, p.FPR, r)
				}
			}
		}
		for _, target := range []kind.Target{{FPR: 0.01}, {BitsPerKey: 10}} {
			p, err := Plan(t, name, args, target)
			if spec, ok := kind.Lookup(name); ok && spec.Static && target.FPR > 0 {
				// A static kind's rate needs no n: the array follows the
				// keys Finish is given; size and build memory unknown.
				if err != nil || p.Capacity != 0 || p.Bits != 0 || p.BuildBytes != 0 || p.New == nil {
					t.Errorf("%s %q %+v: %+v, %v; want a plan of unknown size", name, args, target, p, err)
				}
				continue
			}
			if !errors.Is(err, kind.ErrNeedN) {
				t.Errorf("%s %q %+v: %v, want ErrNeedN", name, args, target, err)
			}
		}
		for _, target := range []kind.Target{
			{N: 10, FPR: 1}, {N: 10, FPR: -0.1}, {N: 10, BitsPerKey: -1}, {N: 10, FPR: 0.01, BitsPerKey: 3},
			{M: 1 << 49, K: 3}, {M: 100, K: 65}, {M: 100}, {N: 1e15, FPR: 0.01}, {N: 1e15, BitsPerKey: 10},
		} {
			if _, err := Plan(t, name, args, target); !errors.Is(err, kind.ErrParam) {
				t.Errorf("%s %q %+v: %v, want ErrParam", name, args, target, err)
			}
		}
	}
	for _, e := range c.Explicit {
		p, err := Plan(t, name, e.Args, kind.Target{M: e.M, K: e.K})
		if err != nil {
			t.Fatalf("%s %q m=%d k=%d: %v", name, e.Args, e.M, e.K, err)
		}
		if p.M != e.WantM || p.K != e.K || (len(p.Notices) > 0) != e.Notice || p.Capacity != 0 || !math.IsNaN(p.FPR) {
			t.Errorf("%s %q m=%d k=%d: plan m=%d k=%d notices %q FPR %v, want m=%d, notice %v, FPR NaN", name, e.Args, e.M, e.K, p.M, p.K, p.Notices, p.FPR, e.WantM, e.Notice)
		}
	}
	for _, args := range c.BadOptions {
		// The error names the option as a parameter (kind.ParamError),
		// which the command words as its flag.
		opt := strings.TrimLeft(args[0], "-")
		var pe *kind.ParamError
		if _, err := Plan(t, name, args, kind.Target{N: 100, FPR: 0.01}); !errors.Is(err, kind.ErrParam) || !errors.As(err, &pe) || !slices.Contains(pe.Params, opt) {
			t.Errorf("%s %q: %v, want a kind.ParamError naming %s", name, args, err, opt)
		}
	}
	// kind.PlanDefault of a filter of 1.2 TB allocates nothing of that
	// size, and of 10^15 keys (past 2^48 bits) fails with ErrParam.
	spec, _ := kind.Lookup(name)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	bigN := c.BigN
	if bigN == 0 {
		bigN = 1e12
	}
	p, err := kind.PlanDefault(spec, kind.Target{N: bigN, FPR: 0.01})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatalf("%s: plan for %d keys: %v", name, bigN, err)
	}
	if d := after.TotalAlloc - before.TotalAlloc; d > 1<<20 {
		t.Errorf("%s: planning %d bits allocated %d bytes", name, p.Bits, d)
	}
	if _, err := kind.PlanDefault(spec, kind.Target{N: 1e15, FPR: 0.01}); !errors.Is(err, kind.ErrParam) {
		t.Errorf("%s: PlanDefault for 10^15 keys: %v, want ErrParam", name, err)
	}
}

// Keys returns n distinct 16-byte keys.
func Keys(n int, salt uint64) [][]byte {
	keys := make([][]byte, n)
	for i := range keys {
		k := make([]byte, 16)
		binary.LittleEndian.PutUint64(k, uint64(i)*0x9E3779B97F4A7C15^salt)
		binary.LittleEndian.PutUint64(k[8:], uint64(i))
		keys[i] = k
	}
	return keys
}

// CheckBuild plans kind name for n keys with each option set, builds it
// through Plan.New, Builder.Add and Finish, and checks that the filter
// reports every key (no false negatives), has the planned size, kind,
// capacity and seed, and that N counts the keys.
func CheckBuild(t *testing.T, name string, options [][]string, targets []kind.Target) {
	t.Helper()
	if options == nil {
		options = [][]string{nil}
	}
	for _, args := range options {
		for _, target := range targets {
			p, err := Plan(t, name, args, target)
			if err != nil {
				t.Fatalf("%s %q %+v: %v", name, args, target, err)
			}
			b, err := p.New()
			if err != nil {
				t.Fatalf("%s %q %+v: New: %v", name, args, target, err)
			}
			keys := Keys(int(max(target.N, 500)), target.Seed)
			for _, k := range keys {
				if err := b.Add(k); err != nil {
					t.Fatalf("%s %q: Add: %v", name, args, err)
				}
			}
			f, err := b.Finish()
			if err != nil {
				t.Fatalf("%s %q: Finish: %v", name, args, err)
			}
			for _, k := range keys {
				if !f.Contains(k) {
					t.Fatalf("%s %q %+v: false negative after Plan.New, Add, Finish", name, args, target)
				}
			}
			if f.Kind() != name || f.Bits() != p.Bits || f.Capacity() != p.Capacity || f.Seed() != target.Seed || f.N() != uint64(len(keys)) {
				t.Errorf("%s %q: built kind %s, %d bits, capacity %d, seed %d, N %d; plan %+v", name, args, f.Kind(), f.Bits(), f.Capacity(), f.Seed(), f.N(), p)
			}
		}
	}
}
