// Package base holds what every layer of bloomlab shares and nothing
// else: the parameter error every package wraps and the counter of the
// planners' search steps. It imports nothing of bloomlab, so that the
// lowest layers (hashing, theory) can use them without importing the
// kind registry above them (internal/kind re-exports both).
package base

import (
	"errors"
	"sync/atomic"
)

// ErrParam is wrapped by every parameter error of every bloomlab package.
var ErrParam = errors.New("invalid parameter")

// planSteps counts the evaluations the planners' searches make (package
// theory's sizing searches, a growing kind's links, d-left's loads).
var planSteps atomic.Uint64

// PlanStep records one evaluation of a planner's search. Every search a
// planner runs calls it once per candidate, so that tests bound a
// planner's work for any target by counting, not by timing.
func PlanStep() { planSteps.Add(1) }

// PlanSteps returns the number of PlanStep calls so far in the process.
func PlanSteps() uint64 { return planSteps.Load() }
