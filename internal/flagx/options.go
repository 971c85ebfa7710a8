package flagx

import (
	"errors"
	"flag"
	"strconv"
	"strings"

	"github.com/bloomlab/bloomlab/internal/kind"
)

// BindOptions defines a flag on fs for each of kind s's options (-Name,
// of the option's type and default) and returns the kind's planner for
// the values fs holds when it is called: called before fs is parsed, it
// plans with the defaults.
func BindOptions(fs *flag.FlagSet, s *kind.Spec) kind.Planner {
	for _, o := range s.Options {
		switch d := o.Default.(type) {
		case nil:
			fs.Var(&unset{typ: o.Type}, o.Name, o.Usage)
		case int:
			fs.Int(o.Name, d, o.Usage)
		case uint:
			fs.Uint(o.Name, d, o.Usage)
		case float64:
			fs.Float64(o.Name, d, o.Usage)
		case bool:
			fs.Bool(o.Name, d, o.Usage)
		case string:
			fs.String(o.Name, d, o.Usage)
		}
	}
	return func(t kind.Target) (kind.Plan, error) {
		v, err := OptionValues(fs, s)
		if err != nil {
			return kind.Plan{}, err
		}
		return s.Planner(v)(t)
	}
}

// OptionValues returns the values of s's options on fs (bound by
// BindOptions): the given ones, the defaults of the others; every flag
// given on fs is marked given (Values.Given), the command's sizing flags
// (-fpr, …) included.
func OptionValues(fs *flag.FlagSet, s *kind.Spec) (*kind.Values, error) {
	v := s.Defaults()
	var err error
	fs.Visit(func(f *flag.Flag) {
		for _, o := range s.Options {
			if o.Name == f.Name {
				if e := v.Set(f.Name, f.Value.String()); e != nil && err == nil {
					err = e
				}
				return
			}
		}
		v.MarkGiven(f.Name)
	})
	return v, err
}

// unset is the flag of an option without a fixed default: it prints no
// default and records the value given.
type unset struct {
	typ kind.OptionType
	s   string
}

func (u *unset) String() string {
	if u == nil {
		return ""
	}
	return u.s
}

func (u *unset) Set(s string) error {
	switch u.typ {
	case kind.Int:
		if _, err := strconv.Atoi(s); err != nil {
			return err
		}
	default:
		v := kind.NewValues([]kind.Option{{Name: "v", Type: u.typ}})
		if err := v.Set("v", s); err != nil {
			return errors.New(strings.TrimPrefix(err.Error(), "option v: "))
		}
	}
	u.s = s
	return nil
}

// IsBoolFlag lets a Bool option without a default be given alone.
func (u *unset) IsBoolFlag() bool { return u.typ == kind.Bool }

// FlagName writes parameter p of a kind's error as the command's flag.
func FlagName(p string) string { return "-" + p }
