package bitvec

import (
	"fmt"

	"github.com/bloomlab/bloomlab/internal/kind"
)

// Zero describes a type's zero value for the rule of docs/API.md: an empty
// structure with no room, whose mutators without an error result panic
// naming the constructors, and whose error-returning methods return an
// error wrapping ErrParam.
type Zero struct {
	Pkg, Type, Ctors string // "bloom", "Filter", "New or NewWithEstimates"
}

// Panic panics for method on the zero value. Callers check for the zero
// value first (one predictable branch) and call Panic, kept out of line,
// before they change anything or take any lock.
//
//go:noinline
func (z *Zero) Panic(method string) {
	panic(fmt.Sprintf("%s: %s on the zero %s, which has no room; create one with %s", z.Pkg, method, z.Type, z.Ctors))
}

// Err is the error of method on the zero value.
func (z *Zero) Err(method string) error {
	return fmt.Errorf("%s: %s on the zero %s; create one with %s: %w", z.Pkg, method, z.Type, z.Ctors, kind.ErrParam)
}
