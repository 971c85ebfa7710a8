package ribbon

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
		Name:    "ribbon",
		Summary: "Standard Ribbon filter, static: r result bits for any r from 1 to 32, 128-bit rows (Dillinger and Walzer 2021)",
		Order:   71, Format: format.KindRibbon, Decode: kind.Decoded(decode),
		FPRMethod: "2^-r",
		Static:    true,
		Options:   options,
		Describe:  func(kind.Filter) []kind.Field { return []kind.Field{{Name: "stub", Value: true}} },
	})
}

func options(fs *flag.FlagSet) kind.Planner {
	return func(t kind.Target) (kind.Plan, error) {
		if err := sizing.Check("ribbon", t); err != nil {
			return kind.Plan{}, err
		}
		c, err := Config{Seed: t.Seed}.norm()
		if err != nil {
			return kind.Plan{}, err
		}
		return kind.Plan{Kind: "ribbon", Scheme: "-", M: t.N, MUnit: "slots", K: c.ResultBits, Bits: t.N * 9, Capacity: t.N, FPR: 1.0 / 256,
			Hashes: 1, Accesses: 1, Note: "Standard Ribbon filter (static)",
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
