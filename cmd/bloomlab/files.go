package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/bloomlab/bloomlab"
)

// fileError is an error about one file; it drops the inner "bloomlab: "
// prefix so messages read "bloomlab: FILE: …".
type fileError struct {
	file string
	err  error
}

func (e *fileError) Error() string {
	return e.file + ": " + strings.TrimPrefix(e.err.Error(), "bloomlab: ")
}

func (e *fileError) Unwrap() error { return e.err }

// loadFile reads the bloomlab file at path, of any kind, which must hold
// exactly one structure. The structure is allocated once at its final
// size: loading a file of S bytes takes about S bytes of memory.
func loadFile(path string) (bloomlab.Filter, error) {
	if err := notTarget("this command", path); err != nil {
		return nil, err
	}
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() && !st.IsDir() {
		return nil, &fileError{path, errors.New("not a regular file")}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readFilter(f, path)
}

// readFilter reads the structure in the open file f (named path).
func readFilter(f *os.File, path string) (bloomlab.Filter, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, &fileError{path, errors.New("is a directory")}
	}
	r := io.NewSectionReader(f, 0, st.Size())
	g, err := bloomlab.ReadFrom(r)
	if err != nil {
		return nil, &fileError{path, err}
	}
	var b [1]byte
	if n, _ := r.Read(b[:]); n != 0 {
		return nil, &fileError{path, fmt.Errorf("trailing bytes after the filter: %w", bloomlab.ErrFormat)}
	}
	return g, nil
}

// lockedFile is a file held under the writers' lock from the read to the
// rename of its replacement.
type lockedFile struct {
	path string
	f    *os.File // nil: the file did not exist when locked
}

// lockPath takes the writers' lock on the file path names. The lock is on
// the file itself (flock), and a writer replaces the file by renaming a new
// one over it while holding the lock; so after waiting, lockPath checks
// that path still names the file it locked and otherwise tries again on the
// new one. If path does not exist, it returns an unlocked lockedFile unless
// mustExist.
func lockPath(path string, mustExist bool) (*lockedFile, error) {
	if err := notTarget("this command", path); err != nil {
		return nil, err
	}
	for {
		// Opening a FIFO would wait for a writer: refuse anything that is
		// not a regular file before opening it.
		if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
			return nil, fmt.Errorf("%s: not a regular file", path)
		}
		f, err := os.Open(path)
		if err != nil {
			if !mustExist && errors.Is(err, fs.ErrNotExist) {
				return &lockedFile{path: path}, nil
			}
			return nil, err
		}
		if err := lock(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		held, err1 := f.Stat()
		now, err2 := os.Stat(path)
		if err1 == nil && err2 == nil && os.SameFile(held, now) {
			return &lockedFile{path: path, f: f}, nil
		}
		f.Close() // replaced (or removed) while we waited: try again
	}
}

// read loads the structure the locked file holds.
func (l *lockedFile) read() (bloomlab.Filter, error) {
	if l.f == nil {
		return nil, &fileError{l.path, fs.ErrNotExist}
	}
	return readFilter(l.f, l.path)
}

// unlock releases the lock (closing the file).
func (l *lockedFile) unlock() {
	if l.f != nil {
		l.f.Close()
	}
}

// saveFilter writes f to path atomically. The caller holds path's lock
// when path exists.
func saveFilter(path string, f bloomlab.Filter) error {
	return writeFileAtomic(path, func(w io.Writer) error {
		_, err := f.WriteTo(w)
		return err
	})
}

// modifyFile runs fn on the structure in path under the writers' lock and
// writes the result back atomically before the lock is released: concurrent
// modifications of one file run one after the other. If fn returns an
// error, path is unchanged. It returns the structure written.
func (e *env) modifyFile(path string, fn func(f bloomlab.Filter) error) (bloomlab.Filter, error) {
	l, err := lockPath(path, true)
	if err != nil {
		return nil, err
	}
	defer l.unlock()
	f, err := l.read()
	if err != nil {
		return nil, err
	}
	if err := fn(f); err != nil {
		return nil, err
	}
	e.warnLinks(path)
	return f, saveFilter(path, f)
}

// warnLinks says when path has other hard links: a rewrite renames a new
// file over this name only, and the other names keep the old content.
func (e *env) warnLinks(path string) {
	if st, err := os.Stat(path); err == nil {
		if n := linkCount(st); n > 1 {
			fmt.Fprintf(e.stderr, "bloomlab: warning: %s has %d hard links; the rewrite replaces this name only, the other links keep the old filter\n", path, n)
		}
	}
}

// writeOutput writes f to out: atomically and under the writers' lock if
// out is a file, to standard output if out is "-" (refused on a terminal:
// a filter is binary).
func (e *env) writeOutput(out string, f bloomlab.Filter) error {
	if out == "-" {
		if isTerminal(e.stdout) {
			return usagef("-o - writes a binary filter to standard output, which is a terminal; redirect it or give a file")
		}
		_, err := f.WriteTo(e.stdout)
		return err
	}
	l, err := lockPath(out, false)
	if err != nil {
		return err
	}
	defer l.unlock()
	e.warnLinks(out)
	return saveFilter(out, f)
}

// checkNotInput refuses an output file that is also one of the inputs
// (key files, standard input when "-" is one of them): writing the output
// would destroy the input.
func (e *env) checkNotInput(out string, inputs []string) error {
	if out == "-" {
		return nil
	}
	ost, err := os.Stat(out)
	for _, in := range inputs {
		if in == "-" {
			if f, ok := e.stdin.(*os.File); ok && err == nil {
				if ist, err := f.Stat(); err == nil && os.SameFile(ost, ist) {
					return usagef("-o %s is the file standard input reads; refusing to overwrite the input", out)
				}
			}
			continue
		}
		if in == out {
			return usagef("-o %s is also a key file; refusing to overwrite the input", out)
		}
		if err == nil {
			if ist, err := os.Stat(in); err == nil && os.SameFile(ost, ist) {
				return usagef("-o %s is the same file as the key file %s; refusing to overwrite the input", out, in)
			}
		}
	}
	return nil
}
