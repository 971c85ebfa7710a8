package dlcbf

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
// return ErrFull, Remove ErrNotPresent, and WriteTo panicked (slice bounds).
func TestZeroValue(t *testing.T) {
	dg := hashing.Sum([]byte("k"), 0)
	errParam := func(err error) string {
		if !errors.Is(err, ErrParam) || !strings.Contains(err.Error(), "New") {
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
	cases := map[string]func(f *Filter) string{
		"Config":  func(f *Filter) string { return want(f.Config() == Config{}, "non-zero") },
		"Variant": func(f *Filter) string { return want(f.Variant() == 0, "non-zero") },
		"N":       func(f *Filter) string { return want(f.N() == 0, "non-zero") },
		"Seed":    func(f *Filter) string { return want(f.Seed() == 0, "non-zero") },
		"Kind":    func(f *Filter) string { return want(f.Kind() == "dlcbf", f.Kind()) },
		"Bits":    func(f *Filter) string { return want(f.Bits() == 0, "non-zero") },
		"BucketBits": func(f *Filter) string {
			return want(f.BucketBits() == 0, "non-zero")
		},
		"Cells":     func(f *Filter) string { return want(f.Cells() == 0, "non-zero") },
		"Capacity":  func(f *Filter) string { return want(f.Capacity() == 0, "non-zero") },
		"Digest":    func(f *Filter) string { return want(f.Digest([]byte("k")) == dg, "wrong digest") },
		"Add":       func(f *Filter) string { return errParam(f.Add([]byte("k"))) },
		"AddString": func(f *Filter) string { return errParam(f.AddString("k")) },
		"AddHash":   func(f *Filter) string { return errParam(f.AddHash(dg)) },
		"Remove":    func(f *Filter) string { return errParam(f.Remove([]byte("k"))) },
		"RemoveString": func(f *Filter) string {
			return errParam(f.RemoveString("k"))
		},
		"RemoveHash": func(f *Filter) string { return errParam(f.RemoveHash(dg)) },
		"Contains":   func(f *Filter) string { return want(!f.Contains([]byte("k")), "true") },
		"ContainsString": func(f *Filter) string {
			return want(!f.ContainsString("k"), "true")
		},
		"ContainsHash": func(f *Filter) string { return want(!f.ContainsHash(dg), "true") },
		"Count":        func(f *Filter) string { return want(f.Count([]byte("k")) == 0, "non-zero") },
		"CountString":  func(f *Filter) string { return want(f.CountString("k") == 0, "non-zero") },
		"CountHash":    func(f *Filter) string { return want(f.CountHash(dg) == 0, "non-zero") },
		"Clear":        func(f *Filter) string { f.Clear(); return "" },
		"Clone":        func(f *Filter) string { return want(reflect.DeepEqual(f.Clone(), &Filter{}), "not zero") },
		"Equal": func(f *Filter) string {
			g, _ := New(Config{Buckets: 1})
			return want(f.Equal(&Filter{}) && !f.Equal(g) && !g.Equal(f), "wrong")
		},
		"EstimatedFPR": func(f *Filter) string { return want(f.EstimatedFPR() == 0, "non-zero") },
		"LoadHistogram": func(f *Filter) string {
			return want(reflect.DeepEqual(f.LoadHistogram(), []uint64{0}), "wrong")
		},
		"MaxLoadHistogram": func(f *Filter) string { return want(f.MaxLoadHistogram() == nil, "non-nil") },
		"RemainderHistogram": func(f *Filter) string {
			for _, c := range f.RemainderHistogram() {
				if c != 0 {
					return "non-zero"
				}
			}
			return ""
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
			g, _ := New(Config{Buckets: 1})
			b, _ := g.MarshalBinary()
			return want(f.UnmarshalBinary(b) == nil && f.Equal(g), "failed")
		},
		"ReadFrom": func(f *Filter) string {
			g, _ := New(Config{Buckets: 1})
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
// methods. An exported field (R, the cell area, was one) let a caller set
// f.R = 60 and make Add panic and WriteTo write unreadable files.
func TestNoExportedFields(t *testing.T) {
	typ := reflect.TypeOf(Filter{})
	for i := 0; i < typ.NumField(); i++ {
		if typ.Field(i).IsExported() {
			t.Errorf("Filter has an exported field %s", typ.Field(i).Name)
		}
	}
}
