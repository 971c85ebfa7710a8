package main

// build -kind dlcbf and remove on dlcbf files: the d-left counting Bloom
// filter (package dlcbf, 002 §III) does not offer the filter interface of
// filters.go (its Add can refuse a key), so it has its own paths here.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/bloomlab/bloomlab"
	"github.com/bloomlab/bloomlab/dlcbf"
	"github.com/bloomlab/bloomlab/theory"
)

// buildDlcbf builds a static dlCBF sized by dlcbf.NewWithEstimates for n
// keys (counted in a first pass when n is 0) at rate fpr, adds the keys and
// writes it. A refused key (bucket overflow) is an error; nothing is
// written.
func buildDlcbf(e *env, files []string, n uint64, fpr float64, seed uint64, out string) error {
	if fpr <= 0 {
		return usagef("-kind dlcbf is sized with -fpr (and -n, or counted keys)")
	}
	if n == 0 {
		for _, name := range files {
			if err := rereadable(name); err != nil {
				return err
			}
		}
		var err error
		if n, err = e.countKeys(files); err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("build: no keys in %v to size the filter for; give -n", files)
		}
	}
	f, err := dlcbf.NewWithEstimates(n, fpr, seed)
	if err != nil {
		return usagef("%v", err)
	}
	err = e.forEachKey(files, func(key []byte, file string, line int) error {
		if err := f.Add(key); err != nil {
			return fmt.Errorf("build: key %s (%s:%d): %w; nothing written (size for more keys with -n)", quoteKey(key), file, line, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return saveFilter(out, f)
}

// removeDlcbf removes the keys from a dlCBF and writes it back; like
// remove on a counting filter, a key the filter proves absent is an error
// (nothing written) unless ignore.
func removeDlcbf(e *env, f *dlcbf.Filter, path string, keyfiles []string, ignore bool) error {
	missing := 0
	err := e.forEachKey(keyFiles(keyfiles), func(key []byte, file string, line int) error {
		err := f.Remove(key)
		if errors.Is(err, dlcbf.ErrNotPresent) {
			if ignore {
				missing++
				return nil
			}
			return fmt.Errorf("remove: key %s (%s:%d) is not in the filter; %s is unchanged (use -ignore-missing to skip such keys)", quoteKey(key), file, line, path)
		}
		return err
	})
	if err != nil {
		return err
	}
	if missing > 0 {
		fmt.Fprintf(e.stderr, "bloomlab: remove: skipped %d keys not in the filter\n", missing)
	}
	return saveFilter(path, f)
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

// planDlcbf plans the static dlCBF of dlcbf.NewWithEstimates: d = 4
// subtables, 8 cells of r + 2 bits per bucket, 6 keys per bucket on
// average; for a bits-per-key budget the largest r that fits it. m is the
// number of cells, k the number of buckets a query reads.
func planDlcbf(t planTarget) (planRow, error) {
	var f *dlcbf.Filter
	var err error
	if t.fpr > 0 {
		f, err = dlcbf.NewWithEstimates(t.n, t.fpr, 0)
	} else {
		r := int(t.bitsPerKey*dlcbf.DesignLoad/8) - 2
		if r < 1 || r > dlcbf.MaxRemainder {
			return planRow{}, fmt.Errorf("%v bits per key gives a remainder of %d bits, want 1 … %d", t.bitsPerKey, r, dlcbf.MaxRemainder)
		}
		f, err = dlcbf.New(dlcbf.Config{Buckets: (t.n + 23) / 24, Cells: 8, RemainderBits: r, CounterBits: 2})
	}
	if err != nil {
		return planRow{}, err
	}
	cfg := f.Config()
	nf := float64(t.n)
	fpr := theory.DlcbfStaticFP(cfg.Subtables, nf/float64(uint64(cfg.Subtables)*cfg.Buckets), cfg.RemainderBits)
	r := planRow{
		Kind: "dlcbf", Scheme: "-", M: f.Capacity(), K: cfg.Subtables, CounterBits: cfg.CounterBits,
		MemoryBits: f.Bits(), FPR: fpr, Hashes: 1, Accesses: cfg.Subtables, Removes: true,
		Note: fmt.Sprintf("d-left counting (002 §III): %d buckets × %d cells of %d+%d bits", uint64(cfg.Subtables)*cfg.Buckets, cfg.Cells, cfg.RemainderBits, cfg.CounterBits),
	}
	r.BitsPerKey = float64(r.MemoryBits) / nf
	r.Overhead = theory.Overhead(float64(r.MemoryBits), nf, fpr)
	return r, nil
}
