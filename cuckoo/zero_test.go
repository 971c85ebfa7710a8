package cuckoo

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/rdb"
)

// TestZeroValue: every exported method of the zero Filter answers as for an
// empty filter, or refuses to change or write it with an error wrapping
// ErrParam that names the constructors (docs/API.md); none panics.
func TestZeroValue(t *testing.T) {
	dg := hashing.Sum([]byte("k"), 0)
	errParam := func(err error) string {
		if !errors.Is(err, ErrParam) || !strings.Contains(err.Error(), "create one with New") {
			return "want an ErrParam naming the constructors, got " + err.Error()
		}
		return ""
	}
	want := func(ok bool, msg string) string {
		if ok {
			return ""
		}
		return msg
	}
	made := func() *Filter { return must(NewWithEstimates(10, 0.01, 0)) }
	cases := map[string]func(f *Filter) string{
		"Kind":              func(f *Filter) string { return want(f.Kind() == "cuckoo", f.Kind()) },
		"Info":              func(f *Filter) string { return want(f.Info() == Info{}, "non-zero") },
		"Seed":              func(f *Filter) string { return want(f.Seed() == 0, "non-zero") },
		"N":                 func(f *Filter) string { return want(f.N() == 0, "non-zero") },
		"Capacity":          func(f *Filter) string { return want(f.Capacity() == 0, "non-zero") },
		"Bits":              func(f *Filter) string { return want(f.Bits() == 0, "non-zero") },
		"Hash":              func(f *Filter) string { return want(f.Hash([]byte("k")) == dg, "wrong hash") },
		"HashString":        func(f *Filter) string { return want(f.hashString("k") == dg, "wrong hash") },
		"Contains":          func(f *Filter) string { return want(!f.Contains([]byte("k")), "true") },
		"ContainsString":    func(f *Filter) string { return want(!f.ContainsString("k"), "true") },
		"ContainsHash":      func(f *Filter) string { return want(!f.ContainsHash(dg), "true") },
		"Count":             func(f *Filter) string { return want(f.Count([]byte("k")) == 0, "non-zero") },
		"CountHash":         func(f *Filter) string { return want(f.countHash(dg) == 0, "non-zero") },
		"Delete":            func(f *Filter) string { return want(!f.Delete([]byte("k")), "true") },
		"DeleteHash":        func(f *Filter) string { return want(!f.DeleteHash(dg), "true") },
		"Add":               func(f *Filter) string { return errParam(f.Add([]byte("k"))) },
		"AddString":         func(f *Filter) string { return errParam(f.AddString("k")) },
		"AddHash":           func(f *Filter) string { return errParam(f.AddHash(dg)) },
		"AddHashReserve":    func(f *Filter) string { return errParam(f.AddHashReserve(dg, nil)) },
		"AddUnique":         func(f *Filter) string { _, err := f.AddUnique([]byte("k")); return errParam(err) },
		"AddUniqueHash":     func(f *Filter) string { _, err := f.addUniqueHash(dg); return errParam(err) },
		"Remove":            func(f *Filter) string { return errParam(f.Remove([]byte("k"))) },
		"EstimatedFPR":      func(f *Filter) string { return want(f.EstimatedFPR() == 0, "non-zero") },
		"FormulaFPR":        func(f *Filter) string { return want(f.formulaFPR() == 0, "non-zero") },
		"Stats":             func(f *Filter) string { return want(len(f.stats()) == 0, "stats") },
		"nextSubFilterBits": func(f *Filter) string { _, err := f.nextSubFilterBits(); return errParam(err) },
		"Compact":           func(f *Filter) string { f.Compact(); return "" },
		"SetMaxBits":        func(f *Filter) string { f.SetMaxBits(1 << 20); return want(f.MaxBits() == 0, "a budget") },
		"MaxBits":           func(f *Filter) string { return want(f.MaxBits() == 0, "non-zero") },
		"Clear":             func(f *Filter) string { f.Clear(); return "" },
		"Clone":             func(f *Filter) string { return want(reflect.DeepEqual(f.Clone(), &Filter{}), "not zero") },
		"Equal": func(f *Filter) string {
			g := made()
			return want(f.Equal(&Filter{}) && !f.Equal(g) && !g.Equal(f), "wrong")
		},
		"Merge": func(f *Filter) string {
			return want(errors.Is(f.Merge(made()), ErrIncompatible) && errors.Is(made().Merge(f), ErrIncompatible), "merged")
		},
		"ScanDump":        func(f *Filter) string { _, _, err := f.ScanDump(nil, 0, 0); return errParam(err) },
		"Dump":            func(f *Filter) string { _, err := f.Dump(0); return errParam(err) },
		"WriteRedisBloom": func(f *Filter) string { _, err := f.WriteRedisBloom(io.Discard, 0); return errParam(err) },
		"WriteRedisBloomRDB": func(f *Filter) string {
			d := rdb.NewDumpWriter(false)
			m, _ := d.Module(rdbTypeName, rdbEncVer)
			return errParam(f.WriteRedisBloomRDB(m))
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
