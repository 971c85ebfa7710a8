package fuse

import (
	"flag"
	"io"

	"github.com/bloomlab/bloomlab/internal/format"
	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/internal/sizing"
)

var _ kind.Filter = (*Filter)(nil)

func init() {
	kind.Register(kind.Spec{
		Name:    "fuse",
		Summary: "binary fuse filter, static: 3- or 4-wise, 8-, 16- or 32-bit fingerprints (Graf and Lemire 2022)",
		Order:   70, Format: format.KindFuse, Decode: kind.Decoded(decode),
		FPRMethod: "2^-f, the fingerprint's",
		Static:    true,
		Options:   options,
		Describe:  func(kind.Filter) []kind.Field { return []kind.Field{{Name: "stub", Value: true}} },
	})
}

func options(fs *flag.FlagSet) kind.Planner {
	arity := fs.Int("arity", 3, "cells per key: 3 or 4")
	return func(t kind.Target) (kind.Plan, error) {
		if err := sizing.Check("fuse", t); err != nil {
			return kind.Plan{}, err
		}
		c, err := Config{Arity: *arity, Seed: t.Seed}.norm()
		if err != nil {
			return kind.Plan{}, err
		}
		return kind.Plan{Kind: "fuse", Scheme: "-", M: t.N, MUnit: "cells", K: c.Arity, Bits: t.N * 9, Capacity: t.N, FPR: 1.0 / 256,
			Hashes: 1, Accesses: c.Arity, Note: "binary fuse filter (static)",
			New: func() (kind.Builder, error) {
				b, err := NewBuilder(c)
				if err != nil {
					return nil, err
				}
				return builder{b}, nil
			}}, nil
	}
}

type builder struct{ *Builder }

func (b builder) Finish() (kind.Filter, error) {
	f, err := b.Builder.Finish()
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (f *Filter) WriteTo(w io.Writer) (int64, error) { return 0, errStub }

func decode(d *format.Decoder) (*Filter, error) { return nil, errStub }
