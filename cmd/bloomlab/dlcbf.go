package main

// build -kind dlcbf and remove on dlcbf files: the d-left counting Bloom
// filter (package dlcbf, 002 §III) does not offer the filter interface of
// filters.go (its Add can refuse a key), so it has its own paths here.

import (
	"errors"
	"fmt"

	"github.com/bloomlab/bloomlab"
	"github.com/bloomlab/bloomlab/dlcbf"
	"github.com/bloomlab/bloomlab/dleft"
	"github.com/bloomlab/bloomlab/theory"
)

// refusable is a structure whose Add can refuse a key (dleft with a
// bounded stash, dlcbf on bucket overflow).
type refusable interface {
	bloomlab.Filter
	Add(key []byte) error
}

// buildRefusable builds the structure newF sizes for n keys (counted in a
// first pass when n is 0), adds the keys and writes it. A refused key is an
// error and nothing is written.
func buildRefusable(e *env, files []string, n uint64, out string, newF func(n uint64) (refusable, error)) error {
	counted := n == 0
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
	f, err := newF(n)
	if err != nil {
		return usagef("%v", err)
	}
	var added uint64
	err = e.forEachKey(files, func(key []byte, file string, line int) error {
		if err := f.Add(key); err != nil {
			return fmt.Errorf("build: key %s (%s:%d): %w; nothing written (size for more keys with -n)", quoteKey(key), file, line, err)
		}
		added++
		return nil
	})
	if err != nil {
		return err
	}
	if counted && added != n {
		return fmt.Errorf("build: the key files held %d keys when counted and %d when read again; nothing written", n, added)
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
	fpr := theory.FPDlcbfStatic(cfg.Subtables, nf/float64(uint64(cfg.Subtables)*cfg.Buckets), cfg.RemainderBits)
	r := planRow{
		Kind: "dlcbf", Scheme: "-", M: f.Capacity(), K: cfg.Subtables, CounterBits: cfg.CounterBits,
		MemoryBits: f.Bits(), FPR: fpr, Hashes: 1, Accesses: cfg.Subtables, Removes: true,
		Note: fmt.Sprintf("d-left counting (002 §III): %d buckets × %d cells of %d+%d bits", uint64(cfg.Subtables)*cfg.Buckets, cfg.Cells, cfg.RemainderBits, cfg.CounterBits),
	}
	r.BitsPerKey = float64(r.MemoryBits) / nf
	r.Overhead = theory.Overhead(float64(r.MemoryBits), nf, fpr)
	return r, nil
}

// planDleft plans the d-left Bloom filter of dleft.PlanFPR /
// PlanBitsPerKey: d buckets per query, the rate of formula (1) of 002 over
// the fluid-limit loads. M is the total number of buckets.
func planDleft(t planTarget) (planRow, error) {
	var p dleft.Plan
	var err error
	if t.fpr > 0 {
		p, err = dleft.PlanFPR(t.n, t.fpr)
	} else {
		p, err = dleft.PlanBitsPerKey(t.n, t.bitsPerKey)
	}
	if err != nil {
		return planRow{}, err
	}
	nf := float64(t.n)
	mem := uint64(p.BitsPerKey*nf + 0.5)
	r := planRow{
		Kind: "dleft", Scheme: "-", M: uint64(p.D) * p.Buckets, K: p.D, CounterBits: 1,
		MemoryBits: mem, FPR: p.FPR, Hashes: 1, Accesses: p.D, BitsPerKey: p.BitsPerKey,
		Note: fmt.Sprintf("d-left (002 §II): %d × %d buckets of %d bits, %.3g keys per bucket", p.D, p.Buckets, p.BucketBits, p.Load),
	}
	r.Overhead = theory.Overhead(float64(mem), nf, p.FPR)
	return r, nil
}
