// Package filtertest holds test machinery shared by the filter packages'
// tests: concurrent AddAtomic beside every read method (run under -race),
// and the checks of the zero-value rule of docs/API.md. It is imported by
// _test files only.
package filtertest

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/bloomlab/bloomlab/internal/kind"
)

// AtomicFilter is a filter whose AddAtomic may run beside its read methods
// (bloom.Filter, blocked.Filter).
type AtomicFilter[F any] interface {
	AddAtomic(key []byte)
	Contains(key []byte) bool
	EstimatedFPR() float64
	ApproxCount() float64
	FillRatio() float64
	Ones() uint64
	Clone() F
	Equal(F) bool
	WriteTo(w io.Writer) (int64, error)
	MarshalBinary() ([]byte, error)
}

// AtomicAddsBesideReads runs, for every read method, two goroutines adding
// keys with AddAtomic while the test goroutine calls the method in a loop.
// Under -race it fails if a read is not atomic. It also checks, after every
// read, that every key whose AddAtomic had returned before the read began is
// present: in f (Contains), in the copy a read made (Clone, the bytes of
// WriteTo and MarshalBinary decoded with decode), and that the statistics
// that only grow as bits are set (Ones, FillRatio, EstimatedFPR,
// ApproxCount) never decrease.
func AtomicAddsBesideReads[F AtomicFilter[F]](t *testing.T, newF func() F, decode func([]byte) (F, error), keys [][]byte) {
	t.Helper()
	half := len(keys) / 2
	sets := [2][][]byte{keys[:half], keys[half:]}
	// A read returns the copy it made (if any) and the statistic it
	// computed (0 if none).
	type result struct {
		copy    F
		hasCopy bool
		stat    float64
	}
	decoded := func(b []byte, err error) (result, error) {
		if err != nil {
			return result{}, err
		}
		g, err := decode(b)
		return result{copy: g, hasCopy: true}, err
	}
	reads := map[string]func(f F) (result, error){
		"Contains":     func(f F) (result, error) { f.Contains(keys[len(keys)-1]); return result{}, nil },
		"EstimatedFPR": func(f F) (result, error) { return result{stat: f.EstimatedFPR()}, nil },
		"ApproxCount":  func(f F) (result, error) { return result{stat: f.ApproxCount()}, nil },
		"FillRatio":    func(f F) (result, error) { return result{stat: f.FillRatio()}, nil },
		"Ones":         func(f F) (result, error) { return result{stat: float64(f.Ones())}, nil },
		"Clone":        func(f F) (result, error) { return result{copy: f.Clone(), hasCopy: true}, nil },
		"Equal":        func(f F) (result, error) { f.Equal(f); return result{}, nil },
		"WriteTo": func(f F) (result, error) {
			var b bytes.Buffer
			_, err := f.WriteTo(&b)
			return decoded(b.Bytes(), err)
		},
		"MarshalBinary": func(f F) (result, error) { return decoded(f.MarshalBinary()) },
	}
	for name, rd := range reads {
		t.Run(name, func(t *testing.T) {
			f := newF()
			var done [2]atomic.Int64 // sets[i][:done[i]] have been added
			var wg sync.WaitGroup
			var running atomic.Int32
			running.Store(2)
			for i := range sets {
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer running.Add(-1)
					for j, key := range sets[i] {
						f.AddAtomic(key)
						done[i].Store(int64(j + 1))
					}
				}()
			}
			last, iter := -1.0, 0
			for running.Load() > 0 || iter < 3 {
				n0, n1 := done[0].Load(), done[1].Load()
				r, err := rd(f)
				if err != nil {
					t.Fatal(err)
				}
				if r.stat < last {
					t.Fatalf("%s decreased from %v to %v while keys were only added", name, last, r.stat)
				}
				last = r.stat
				// Every key added before the read began: in f, and in
				// the copy the read made. All of them every 8th read,
				// the newest ones otherwise.
				for i, n := range []int64{n0, n1} {
					from := max(0, n-4)
					if iter%8 == 0 {
						from = 0
					}
					for _, key := range sets[i][from:n] {
						if !f.Contains(key) {
							t.Fatalf("%s: false negative in the filter for a key added before the read", name)
						}
						if r.hasCopy && !r.copy.Contains(key) {
							t.Fatalf("%s: false negative in the copy for a key added before the read", name)
						}
					}
				}
				iter++
			}
			wg.Wait()
			for _, key := range keys {
				if !f.Contains(key) {
					t.Fatal("false negative after the concurrent adds")
				}
			}
		})
	}
}

// Panics checks that fn panics with a message containing want (the
// constructor the message must name).
func Panics(t *testing.T, name, want string, fn func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		if r == nil {
			t.Errorf("%s on the zero value did not panic", name)
			return
		}
		if msg := stringOf(r); !strings.Contains(msg, want) {
			t.Errorf("%s on the zero value panicked with %q, want a message naming %q", name, msg, want)
		}
	}()
	fn()
}

func stringOf(r any) string {
	switch v := r.(type) {
	case string:
		return v
	case error:
		return v.Error()
	}
	return ""
}

// IsParam checks that err wraps kind.ErrParam.
func IsParam(t *testing.T, name string, err error) {
	t.Helper()
	if !errors.Is(err, kind.ErrParam) {
		t.Errorf("%s on the zero value: error %v, want one wrapping ErrParam", name, err)
	}
}

// Equal checks a read method's answer on the zero value.
func Equal[T comparable](t *testing.T, name string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s on the zero value = %v, want %v", name, got, want)
	}
}

// Inlinable checks, in the style of net/netip's and cespare/xxhash's
// TestInlining, that the compiler still inlines every function in funcs
// (names as `go build -gcflags=-m` prints them: "NewProbe", "Probe.At",
// "(*Indexer).Offsets") in package pkg: the hot loops are written on the
// assumption that these cost no call. It is skipped under -short and where
// the go command is not available.
func Inlinable(t *testing.T, pkg string, funcs ...string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the package with -gcflags=-m")
	}
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(gobin); err != nil {
		t.Skipf("no go command: %v", err)
	}
	out, err := exec.Command(gobin, "build", "-gcflags=-m", pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go build -gcflags=-m %s: %v\n%s", pkg, err, out)
	}
	can := map[string]bool{}
	for _, m := range regexp.MustCompile(`: can inline (\S+)`).FindAllSubmatch(out, -1) {
		can[string(m[1])] = true
	}
	for _, f := range funcs {
		if !can[f] {
			t.Errorf("%s: %s is no longer inlined; the hot loops assume it is", pkg, f)
		}
	}
}

// Reader is the read side every filter type shares.
type Reader interface {
	Contains(key []byte) bool
	ContainsString(key string) bool
	N() uint64
	Bits() uint64
	Seed() uint64
	Capacity() uint64
	FillRatio() float64
	EstimatedFPR() float64
	ApproxCount() float64
	WriteTo(w io.Writer) (int64, error)
	MarshalBinary() ([]byte, error)
}

// ZeroReads checks the zero-value rule's read side on zero, a zero value:
// it answers as an empty filter, and WriteTo and MarshalBinary return an
// error wrapping ErrParam. Then it checks that UnmarshalBinary fills
// another zero value, fill, from data, a filter holding key.
func ZeroReads(t *testing.T, zero Reader, fill interface {
	Reader
	UnmarshalBinary([]byte) error
}, data, key []byte) {
	t.Helper()
	Equal(t, "Contains", zero.Contains(key), false)
	Equal(t, "ContainsString", zero.ContainsString(string(key)), false)
	Equal(t, "N", zero.N(), 0)
	Equal(t, "Bits", zero.Bits(), 0)
	Equal(t, "Seed", zero.Seed(), 0)
	Equal(t, "Capacity", zero.Capacity(), 0)
	Equal(t, "FillRatio", zero.FillRatio(), 0)
	Equal(t, "EstimatedFPR", zero.EstimatedFPR(), 0)
	Equal(t, "ApproxCount", zero.ApproxCount(), 0)
	_, err := zero.WriteTo(&bytes.Buffer{})
	IsParam(t, "WriteTo", err)
	_, err = zero.MarshalBinary()
	IsParam(t, "MarshalBinary", err)
	if err := fill.UnmarshalBinary(data); err != nil || !fill.Contains(key) {
		t.Errorf("UnmarshalBinary into the zero value: %v", err)
	}
}

// PanicsUnchanged checks that every mutator in fns panics on the zero
// value with a message naming ctor, and that zero still reads as empty
// afterwards.
func PanicsUnchanged(t *testing.T, zero Reader, ctor string, fns map[string]func()) {
	t.Helper()
	for name, fn := range fns {
		Panics(t, name, ctor, fn)
	}
	if zero.N() != 0 || zero.Capacity() != 0 || zero.Bits() != 0 {
		t.Error("a panicking mutator changed the zero value")
	}
}
