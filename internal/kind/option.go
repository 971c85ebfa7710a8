package kind

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// OptionType is the type of a kind's build option's value.
type OptionType int

// The option types: Int (Go int), Uint (uint), Float (float64), Bool and
// String.
const (
	Int OptionType = iota
	Uint
	Float
	Bool
	String
)

func (t OptionType) String() string {
	switch t {
	case Int:
		return "int"
	case Uint:
		return "uint"
	case Float:
		return "float"
	case Bool:
		return "bool"
	case String:
		return "string"
	}
	return fmt.Sprintf("OptionType(%d)", int(t))
}

// Option declares one build option of a kind, as data: a front end (the
// command binds each to a flag of the same name, -Name) or a Go caller
// sets it in Values. Names are lower case with dashes ("bucket-size").
type Option struct {
	Name string
	Type OptionType
	// Default is the value when the option is not given, of the Go type
	// of Type (int, uint, float64, bool, string), or nil: no fixed
	// default, the kind chooses one from its other options (Values.Given
	// then tells whether it was set; the typed getters read the zero
	// value).
	Default any
	// Usage says what the option does, in a sentence. Other parameters
	// are named as they are (fpr, bits-per-key, n, or another option's
	// name).
	Usage string
}

// check reports whether o's default has the Go type of o.Type.
func (o Option) check() error {
	if o.Name == "" {
		return errors.New("option without a name")
	}
	if o.Default == nil {
		return nil
	}
	ok := false
	switch o.Type {
	case Int:
		_, ok = o.Default.(int)
	case Uint:
		_, ok = o.Default.(uint)
	case Float:
		_, ok = o.Default.(float64)
	case Bool:
		_, ok = o.Default.(bool)
	case String:
		_, ok = o.Default.(string)
	}
	if !ok {
		return fmt.Errorf("option %s: default %#v is not of type %v", o.Name, o.Default, o.Type)
	}
	return nil
}

// parse reads s as a value of o's type, as Go's flag package reads its
// flags of the same type.
func (o Option) parse(s string) (any, error) {
	switch o.Type {
	case Int:
		v, err := strconv.ParseInt(s, 0, strconv.IntSize)
		return int(v), err
	case Uint:
		v, err := strconv.ParseUint(s, 0, strconv.IntSize)
		return uint(v), err
	case Float:
		return strconv.ParseFloat(s, 64)
	case Bool:
		return strconv.ParseBool(s)
	case String:
		return s, nil
	}
	return nil, fmt.Errorf("option %s: unknown type %v", o.Name, o.Type)
}

// Values are the options a kind is planned with: each option's value,
// its default where it was not given, and which parameters were given.
// The zero Values holds every option at its default.
type Values struct {
	opts  []Option
	v     map[string]any
	given map[string]bool
}

// NewValues returns the values of opts at their defaults.
func NewValues(opts []Option) *Values {
	return &Values{opts: opts}
}

// Defaults returns the values of s's options at their defaults.
func (s *Spec) Defaults() *Values { return NewValues(s.Options) }

func (v *Values) option(name string) (Option, bool) {
	if v == nil {
		return Option{}, false
	}
	for _, o := range v.opts {
		if o.Name == name {
			return o, true
		}
	}
	return Option{}, false
}

// Set gives option name the value s, written as Go's flag package takes
// it (strconv syntax: 12, 0x10, 0.01, true). An unknown name or a value
// that does not parse is an error wrapping ErrParam.
func (v *Values) Set(name, s string) error {
	o, ok := v.option(name)
	if !ok {
		return fmt.Errorf("unknown option %q: %w", name, ErrParam)
	}
	x, err := o.parse(s)
	if err != nil {
		return fmt.Errorf("option %s: invalid value %q: %w", name, s, ErrParam)
	}
	if v.v == nil {
		v.v = map[string]any{}
	}
	v.v[name] = x
	v.MarkGiven(name)
	return nil
}

// MarkGiven records that parameter name was given, without a value: a
// front end marks the target's parameters it was given (fpr given as 0
// is not fpr absent, which Target cannot tell).
func (v *Values) MarkGiven(name string) {
	if v.given == nil {
		v.given = map[string]bool{}
	}
	v.given[name] = true
}

// Given reports whether parameter name (an option, or a target parameter
// marked with MarkGiven) was given.
func (v *Values) Given(name string) bool { return v != nil && v.given[name] }

func (v *Values) get(name string, t OptionType) any {
	o, ok := v.option(name)
	if !ok || o.Type != t {
		panic(fmt.Sprintf("kind: no %v option %q", t, name))
	}
	if x, ok := v.v[name]; ok {
		return x
	}
	return o.Default
}

// Int returns the value of Int option name (0 if it has no default and
// was not given). It panics if the kind has no such option.
func (v *Values) Int(name string) int { x, _ := v.get(name, Int).(int); return x }

// Uint returns the value of Uint option name.
func (v *Values) Uint(name string) uint { x, _ := v.get(name, Uint).(uint); return x }

// Float returns the value of Float option name.
func (v *Values) Float(name string) float64 { x, _ := v.get(name, Float).(float64); return x }

// Bool returns the value of Bool option name.
func (v *Values) Bool(name string) bool { x, _ := v.get(name, Bool).(bool); return x }

// String returns the value of String option name.
func (v *Values) String(name string) string { x, _ := v.get(name, String).(string); return x }

// Planner returns s's planner for the options v (nil: the defaults).
func (s *Spec) Planner(v *Values) Planner {
	if v == nil {
		v = s.Defaults()
	}
	return s.Plan(v)
}

// ParseArgs sets the options args gives, written as a command line gives
// them: -name value, -name=value, or -name alone for a Bool option (as
// Spec.PlanVariants lists them).
func (v *Values) ParseArgs(args []string) error {
	for i := 0; i < len(args); i++ {
		a := strings.TrimPrefix(strings.TrimPrefix(args[i], "-"), "-")
		if a == args[i] || a == "" {
			return fmt.Errorf("%q is not an option: %w", args[i], ErrParam)
		}
		name, val, hasVal := strings.Cut(a, "=")
		o, ok := v.option(name)
		if !ok {
			return fmt.Errorf("unknown option %q: %w", name, ErrParam)
		}
		if !hasVal {
			if o.Type == Bool {
				val = "true"
			} else if i+1 < len(args) {
				i++
				val = args[i]
			} else {
				return fmt.Errorf("option %s needs a value: %w", name, ErrParam)
			}
		}
		if err := v.Set(name, val); err != nil {
			return err
		}
	}
	return nil
}

// ParamError is a parameter error that names the parameters it is about
// (a Target's: n, fpr, bits-per-key, m, k, seed; or a kind's Option.Name),
// so that a front end can word them its own way: Error writes them as
// they are ("fpr 2 out of range (0, 1)"), the command as its flags
// ("-fpr 2 …", Text). It wraps ErrParam.
type ParamError struct {
	// Pkg is the package or kind reporting ("cuckoo"), "" for none.
	Pkg string
	// Params are the parameters the message names, in order.
	Params []string
	// msg is the message with {name} where parameter name is named.
	msg string
}

// Paramf returns a ParamError of package pkg: format and args as
// fmt.Sprintf's, where {name} (after formatting) marks the parameter
// name ("{fpr} %v out of range (0, 1)").
func Paramf(pkg, format string, args ...any) *ParamError {
	msg := fmt.Sprintf(format, args...)
	e := &ParamError{Pkg: pkg, msg: msg}
	for rest := msg; ; {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			break
		}
		e.Params = append(e.Params, rest[i+1:i+j])
		rest = rest[i+j+1:]
	}
	return e
}

// Text returns the message (without Pkg and ErrParam) with each
// parameter written as name(param).
func (e *ParamError) Text(name func(param string) string) string {
	var b strings.Builder
	rest := e.msg
	for _, p := range e.Params {
		i := strings.Index(rest, "{"+p+"}")
		if i < 0 {
			break
		}
		b.WriteString(rest[:i])
		b.WriteString(name(p))
		rest = rest[i+len(p)+2:]
	}
	b.WriteString(rest)
	return b.String()
}

// Message returns the error's text with the parameters written as name
// would (see Text), prefixed by Pkg, without ErrParam's.
func (e *ParamError) Message(name func(param string) string) string {
	if e.Pkg == "" {
		return e.Text(name)
	}
	return e.Pkg + ": " + e.Text(name)
}

func (e *ParamError) Error() string {
	return e.Message(func(p string) string { return p }) + ": " + ErrParam.Error()
}

// Unwrap returns ErrParam.
func (e *ParamError) Unwrap() error { return ErrParam }
