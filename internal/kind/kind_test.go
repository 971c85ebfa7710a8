package kind

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/bloomlab/bloomlab/internal/format"
)

// fake is a minimal kind for testing the table.
type fake struct {
	name  string
	keys  map[string]int
	err   error
	union int
}

func (f *fake) Kind() string                       { return f.name }
func (f *fake) Contains(key []byte) bool           { return f.keys[string(key)] > 0 }
func (f *fake) WriteTo(w io.Writer) (int64, error) { return 0, nil }
func (f *fake) Capacity() uint64                   { return 0 }
func (f *fake) Bits() uint64                       { return 0 }
func (f *fake) N() uint64                          { return uint64(len(f.keys)) }
func (f *fake) Seed() uint64                       { return 0 }
func (f *fake) EstimatedFPR() float64              { return 0 }
func (f *fake) Union(g *fake) error                { f.union++; return nil }

type plainAdder struct{ fake }

func (f *plainAdder) Add(key []byte) { f.keys[string(key)]++ }

type refusingAdder struct{ fake }

func (f *refusingAdder) Add(key []byte) error {
	if f.err != nil {
		return f.err
	}
	f.keys[string(key)]++
	return nil
}

type presentAdder struct{ fake }

func (f *presentAdder) Add(key []byte) (bool, error) {
	f.keys[string(key)]++
	return f.keys[string(key)] > 1, nil
}

type countAdder struct{ fake }

func (f *countAdder) Add(key []byte, n uint64) { f.keys[string(key)] += int(n) }

// tryCountAdder has Add(key, count) and TryAdd(key, count), which refuses:
// Adder must call TryAdd.
type tryCountAdder struct{ countAdder }

func (f *tryCountAdder) TryAdd(key []byte, n uint64) (uint64, error) {
	if f.err != nil {
		return 0, f.err
	}
	f.keys[string(key)] += int(n)
	return uint64(f.keys[string(key)]), nil
}

func spec(name string, order int) Spec {
	return Spec{
		Name: name, Order: order,
		Plan:     func(*Values) Planner { return func(Target) (Plan, error) { return Plan{Kind: name}, nil } },
		Describe: func(Filter) []Field { return nil },
	}
}

func TestRegistry(t *testing.T) {
	defer func(old []*Spec) { specs = old }(specs)
	specs = nil
	Register(spec("zeta", 2))
	Register(spec("alpha", 1))
	s := spec("dec", 3)
	s.Format = 200
	s.Decode = func(d *format.Decoder) (Filter, error) { return &fake{name: "dec"}, nil }
	Register(s)
	if got := Names(); len(got) != 3 || got[0] != "alpha" || got[1] != "zeta" || got[2] != "dec" {
		t.Errorf("Names = %v, want listing order", got)
	}
	if _, ok := Lookup("zeta"); !ok {
		t.Error("Lookup(zeta) failed")
	}
	if _, ok := Lookup("nope"); ok {
		t.Error("Lookup(nope) succeeded")
	}
	p, err := PlanDefault(specs[0], Target{})
	if err != nil || p.Kind != "alpha" {
		t.Errorf("PlanDefault = %+v, %v", p, err)
	}
	for name, bad := range map[string]Spec{
		"duplicate":     spec("zeta", 9),
		"no planner":    {Name: "x", Describe: s.Describe},
		"no name":       {Plan: s.Plan, Describe: s.Describe},
		"bad default":   func() Spec { d := spec("bad", 5); d.Options = []Option{{Name: "x", Type: Int, Default: "1"}}; return d }(),
		"format shared": func() Spec { d := spec("dec2", 4); d.Format, d.Decode = 200, s.Decode; return d }(),
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: Register did not panic", name)
				}
			}()
			Register(bad)
		}()
	}
}

func TestDecode(t *testing.T) {
	defer func(old []*Spec) { specs = old }(specs)
	specs = nil
	var b bytes.Buffer
	e := format.NewEncoder(&b)
	e.Begin(format.Header{Kind: 201}, nil)
	e.Close()
	if _, err := Decode(format.NewDecoder(bytes.NewReader(b.Bytes()))); !errors.Is(err, format.ErrFormat) {
		t.Errorf("unregistered kind: %v", err)
	}
	if _, err := Decode(format.NewDecoder(bytes.NewReader([]byte("not a file at all, not at all!!!")))); !errors.Is(err, format.ErrFormat) {
		t.Errorf("garbage: %v", err)
	}
	s := spec("k201", 1)
	s.Format = 201
	s.Decode = Decoded(func(d *format.Decoder) (*fake, error) {
		if _, err := d.Begin(201); err != nil {
			return nil, err
		}
		return &fake{name: "k201"}, d.End()
	})
	Register(s)
	f, err := Decode(format.NewDecoder(bytes.NewReader(b.Bytes())))
	if err != nil || f.Kind() != "k201" {
		t.Errorf("Decode = %v, %v", f, err)
	}
	// A typed decode that fails gives a nil interface, not a typed nil.
	bad := Decoded(func(d *format.Decoder) (*fake, error) { return nil, errors.New("no") })
	if f, err := bad(nil); f != nil || err == nil {
		t.Errorf("failed decode = %#v, %v", f, err)
	}
}

func TestAdder(t *testing.T) {
	keys := func() map[string]int { return map[string]int{} }
	full := errors.New("full")
	cases := []struct {
		f    Filter
		want error
	}{
		{&plainAdder{fake{keys: keys()}}, nil},
		{&refusingAdder{fake{keys: keys()}}, nil},
		{&refusingAdder{fake{keys: keys(), err: full}}, full},
		{&presentAdder{fake{keys: keys()}}, nil},
		{&countAdder{fake{keys: keys()}}, nil},
		{&tryCountAdder{countAdder{fake{keys: keys()}}}, nil},
		{&tryCountAdder{countAdder{fake{keys: keys(), err: full}}}, full},
	}
	for _, c := range cases {
		add, ok := Adder(c.f)
		if !ok {
			t.Fatalf("%T: no adder", c.f)
		}
		if err := add([]byte("k")); err != c.want {
			t.Errorf("%T: add = %v, want %v", c.f, err, c.want)
		}
		if c.want == nil && !c.f.Contains([]byte("k")) {
			t.Errorf("%T: key not added", c.f)
		}
		b, err := FilterBuilder(c.f)
		if err != nil {
			t.Fatal(err)
		}
		if g, err := b.Finish(); g != c.f || err != nil {
			t.Errorf("%T: Finish = %v, %v", c.f, g, err)
		}
	}
	if _, ok := Adder(&fake{}); ok {
		t.Error("a kind without Add has an adder")
	}
	if _, err := FilterBuilder(&fake{name: "x"}); !errors.Is(err, ErrParam) {
		t.Errorf("FilterBuilder without Add: %v", err)
	}
}

func TestCombineAdapters(t *testing.T) {
	u := Union[*fake]()
	a, b := &fake{name: "a"}, &fake{name: "b"}
	if err := u(a, b); err != nil || a.union != 1 {
		t.Errorf("union: %v, %d", err, a.union)
	}
	if err := u(a, &plainAdder{}); !errors.Is(err, ErrIncompatible) {
		t.Errorf("union of two kinds: %v", err)
	}
}

type budgeted struct {
	presentAdder
	max uint64
}

func (f *budgeted) SetMaxBits(b uint64) { f.max = b }

// FilterBuilder's builder is a MemoryBudgeter that forwards the budget to
// a filter that has one (a growing chain) and ignores it otherwise, so the
// command sets it on any builder.
func TestFilterBuilderBudget(t *testing.T) {
	g := &budgeted{presentAdder: presentAdder{fake{keys: map[string]int{}}}}
	b, err := FilterBuilder(g)
	if err != nil {
		t.Fatal(err)
	}
	mb, ok := b.(MemoryBudgeter)
	if !ok {
		t.Fatal("FilterBuilder's builder is not a MemoryBudgeter")
	}
	mb.SetMaxBits(1234)
	if g.max != 1234 {
		t.Errorf("budget not forwarded: %d", g.max)
	}
	p, _ := FilterBuilder(&plainAdder{fake{keys: map[string]int{}}})
	p.(MemoryBudgeter).SetMaxBits(5) // a fixed-size filter: nothing to do, no panic
}

func TestValues(t *testing.T) {
	opts := []Option{
		{Name: "c", Type: Int, Default: 2},
		{Name: "e", Type: Uint, Default: uint(4)},
		{Name: "r", Type: Float, Default: 0.5},
		{Name: "semi", Type: Bool, Default: false},
		{Name: "profile", Type: String, Default: "bloomlab"},
		{Name: "kicks", Type: Int},
	}
	v := NewValues(opts)
	if v.Int("c") != 2 || v.Uint("e") != 4 || v.Float("r") != 0.5 || v.Bool("semi") || v.String("profile") != "bloomlab" || v.Int("kicks") != 0 || v.Given("kicks") {
		t.Fatalf("defaults wrong")
	}
	if err := v.ParseArgs([]string{"-c", "3", "--e=8", "-semi", "-profile", "redisbloom", "-kicks", "0x10"}); err != nil {
		t.Fatal(err)
	}
	if v.Int("c") != 3 || v.Uint("e") != 8 || !v.Bool("semi") || v.String("profile") != "redisbloom" || v.Int("kicks") != 16 || !v.Given("kicks") || v.Given("r") {
		t.Errorf("parsed values wrong")
	}
	for _, bad := range [][]string{{"-nope", "1"}, {"-c", "x"}, {"-c"}, {"c"}} {
		if err := NewValues(opts).ParseArgs(bad); !errors.Is(err, ErrParam) {
			t.Errorf("ParseArgs(%q) = %v, want ErrParam", bad, err)
		}
	}
}

func TestParamError(t *testing.T) {
	e := Paramf("cuckoo", "give {fpr} or {bits-per-key}, not both (got %v)", 0.5)
	if got, want := e.Error(), "cuckoo: give fpr or bits-per-key, not both (got 0.5): invalid parameter"; got != want {
		t.Errorf("Error = %q, want %q", got, want)
	}
	if got, want := e.Message(func(p string) string { return "-" + p }), "cuckoo: give -fpr or -bits-per-key, not both (got 0.5)"; got != want {
		t.Errorf("Message = %q, want %q", got, want)
	}
	if !errors.Is(fmt.Errorf("wrapped: %w", e), ErrParam) || len(e.Params) != 2 || e.Params[1] != "bits-per-key" {
		t.Errorf("Params = %q", e.Params)
	}
}
