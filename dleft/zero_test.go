package dleft

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/bloomlab/bloomlab/hashing"
)

// TestZeroValue: every exported method of the zero Filter answers as for an
// empty filter, refuses to change or write it with an error wrapping
// ErrParam, or panics naming the constructors (docs/API.md). Add used to
// put the key in the stash of the zero Filter and return nil; Clone,
// FingerprintBits and WriteTo panicked.
func TestZeroValue(t *testing.T) {
	dg := hashing.Sum([]byte("k"), 0)
	errParam := func(err error) string {
		if !errors.Is(err, ErrParam) || !strings.Contains(err.Error(), "create one with New") {
			return "want an ErrParam naming the constructors"
		}
		return ""
	}
	want := func(ok bool, msg string) string {
		if ok {
			return ""
		}
		return msg
	}
	made := func() *Filter { f := must(New(Config{Buckets: 1})); return f }
	cases := map[string]func(f *Filter) string{
		"Config":    func(f *Filter) string { return want(f.Config() == Config{}, "non-zero") },
		"D":         func(f *Filter) string { return want(f.D() == 0, "non-zero") },
		"Buckets":   func(f *Filter) string { return want(f.Buckets() == 0, "non-zero") },
		"Seed":      func(f *Filter) string { return want(f.Seed() == 0, "non-zero") },
		"MaxLoad":   func(f *Filter) string { return want(f.MaxLoad() == 0, "non-zero") },
		"Bits":      func(f *Filter) string { return want(f.Bits() == 0, "non-zero") },
		"N":         func(f *Filter) string { return want(f.N() == 0, "non-zero") },
		"Stored":    func(f *Filter) string { return want(f.Stored() == 0, "non-zero") },
		"Overflows": func(f *Filter) string { return want(f.Overflows() == 0, "non-zero") },
		"Capacity":  func(f *Filter) string { return want(f.Capacity() == 0, "non-zero") },
		"Kind":      func(f *Filter) string { return want(f.Kind() == "dleft", f.Kind()) },
		"FingerprintBits": func(f *Filter) string {
			return want(f.FingerprintBits(0) == -1 && f.FingerprintBits(1) == -1, "a bucket of the zero Filter holds something")
		},
		"FingerprintBitsGrouped": func(f *Filter) string {
			return want(f.FingerprintBitsGrouped(0, 0) == -1, "a bucket of the zero Filter holds something")
		},
		"Digest":         func(f *Filter) string { return want(f.Digest([]byte("k")) == dg, "wrong digest") },
		"Contains":       func(f *Filter) string { return want(!f.Contains([]byte("k")), "true") },
		"ContainsString": func(f *Filter) string { return want(!f.ContainsString("k"), "true") },
		"ContainsHash":   func(f *Filter) string { return want(!f.ContainsHash(dg), "true") },
		"Add":            func(f *Filter) string { return errParam(f.Add([]byte("k"))) },
		"AddString":      func(f *Filter) string { return errParam(f.AddString("k")) },
		"AddHash":        func(f *Filter) string { return errParam(f.AddHash(dg)) },
		"Loads":          func(f *Filter) string { return want(len(f.Loads()) == 0, "loads") },
		"EstimatedFPR":   func(f *Filter) string { return want(f.EstimatedFPR() == 0, "non-zero") },
		"Clear":          func(f *Filter) string { f.Clear(); return "" },
		"SetMaxBits":     func(f *Filter) string { f.SetMaxBits(1 << 20); return want(f.MaxBits() == 0, "a budget") },
		"MaxBits":        func(f *Filter) string { return want(f.MaxBits() == 0, "non-zero") },
		"Clone":          func(f *Filter) string { return want(reflect.DeepEqual(f.Clone(), &Filter{}), "not zero") },
		"Equal": func(f *Filter) string {
			g := made()
			return want(f.Equal(&Filter{}) && !f.Equal(g) && !g.Equal(f), "wrong")
		},
		"WriteTo": func(f *Filter) string {
			var buf bytes.Buffer
			n, err := f.WriteTo(&buf)
			if n != 0 || buf.Len() != 0 {
				return "wrote bytes"
			}
			return errParam(err)
		},
		"MarshalBinary": func(f *Filter) string {
			b, err := f.MarshalBinary()
			if b != nil {
				return "returned bytes"
			}
			return errParam(err)
		},
		"SetCapacity": func(f *Filter) string { return mustPanic(func() { f.SetCapacity(5) }) },
		// The loaders replace the receiver: the zero Filter is a fine one.
		"UnmarshalBinary": func(f *Filter) string {
			g := made()
			b, _ := g.MarshalBinary()
			return want(f.UnmarshalBinary(b) == nil && f.Equal(g), "failed")
		},
		"ReadFrom": func(f *Filter) string {
			g := made()
			b, _ := g.MarshalBinary()
			_, err := f.ReadFrom(bytes.NewReader(b))
			return want(err == nil && f.Equal(g), "failed")
		},
	}
	typ := reflect.TypeOf(&Filter{})
	for i := 0; i < typ.NumMethod(); i++ {
		if _, ok := cases[typ.Method(i).Name]; !ok {
			t.Errorf("no zero-value case for method %s", typ.Method(i).Name)
		}
	}
	for name, c := range cases {
		var f Filter
		msg := func() (msg string) {
			defer func() {
				if r := recover(); r != nil {
					msg = "panicked"
				}
			}()
			return c(&f)
		}()
		if msg != "" {
			t.Errorf("zero Filter: %s: %s", name, msg)
		}
		if name != "UnmarshalBinary" && name != "ReadFrom" && !reflect.DeepEqual(f, Filter{}) {
			t.Errorf("zero Filter: %s changed it", name)
		}
	}
}

// mustPanic returns "" if fn panics with a message naming a constructor.
func mustPanic(fn func()) (msg string) {
	defer func() {
		s, _ := recover().(string)
		if !strings.Contains(s, "create one with New") {
			msg = "did not panic naming the constructors"
		}
	}()
	fn()
	return ""
}

// TestNoExportedFields: the Filter's state is reachable only through its
// methods.
func TestNoExportedFields(t *testing.T) {
	typ := reflect.TypeOf(Filter{})
	for i := 0; i < typ.NumField(); i++ {
		if typ.Field(i).IsExported() {
			t.Errorf("Filter has an exported field %s", typ.Field(i).Name)
		}
	}
}
