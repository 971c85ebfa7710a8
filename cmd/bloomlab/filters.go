package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/bloomlab/bloomlab"
	"github.com/bloomlab/bloomlab/hashing"
)

// filter is the API the commands need; *bloom.Filter and *counting.Filter
// provide it.
type filter interface {
	bloomlab.Filter
	M() uint64
	K() int
	Seed() uint64
	Scheme() hashing.Scheme
	N() uint64
	FillRatio() float64
	EstimatedFPR() float64
	ApproxCount() float64
	Capacity() uint64
	SetCapacity(n uint64)
	Add(key []byte)
}

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

// loadFilter reads the bloomlab file at path, which must hold a kind that
// offers the filter interface.
func loadFilter(path string) (filter, error) {
	g, err := loadAny(path)
	if err != nil {
		return nil, err
	}
	ff, ok := g.(filter)
	if !ok {
		return nil, &fileError{path, fmt.Errorf("kind %s is not supported by this command", g.Kind())}
	}
	return ff, nil
}

// loadAny reads the bloomlab file at path, of any kind the root loader
// reads, which must hold exactly one structure.
func loadAny(path string) (bloomlab.Filter, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, &fileError{path, errors.New("is a directory")}
	}
	br := bufio.NewReaderSize(f, 1<<20)
	g, err := bloomlab.ReadFrom(br)
	if err != nil {
		return nil, &fileError{path, err}
	}
	if _, err := br.ReadByte(); err != io.EOF {
		if err == nil {
			return nil, &fileError{path, fmt.Errorf("trailing bytes after the filter: %w", bloomlab.ErrFormat)}
		}
		return nil, &fileError{path, err}
	}
	return g, nil
}

// saveFilter writes f to path atomically.
func saveFilter(path string, f bloomlab.Filter) error {
	return writeFileAtomic(path, func(w io.Writer) error {
		_, err := f.WriteTo(w)
		return err
	})
}
