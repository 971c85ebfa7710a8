package main

import (
	"fmt"

	"github.com/bloomlab/bloomlab"
	"github.com/bloomlab/bloomlab/internal/kind"
)

func init() {
	register(&command{
		name: "merge",
		summary: "Write to OUT the combination of the filters A B…, which must be of one kind with the same parameters and seed: " +
			"the union for set kinds (bits ORed), the merge for multiset kinds (counts added). " +
			"OUT is written atomically, under a lock if it exists, and may be one of the inputs.",
		usage: "bloomlab merge -o OUT A B…",
		run:   runMerge,
	})
}

func runMerge(e *env, args []string) error {
	fs := flagSet("merge")
	out := fs.String("o", "", "output file (\"-\": standard output)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if *out == "" {
		return usagef("-o OUT is required")
	}
	if len(pos) < 2 {
		return usagef("want at least two filters to merge")
	}
	// Take OUT's lock before reading the inputs: if OUT is one of them, no
	// other writer may change it between our read and our rename.
	var l *lockedFile
	if *out != "-" {
		if l, err = lockPath(*out, false); err != nil {
			return err
		}
		defer l.unlock()
	}
	var first bloomlab.Filter
	var spec *kind.Spec
	for i, name := range pos {
		g, err := loadFile(name)
		if err != nil {
			return err
		}
		if i == 0 {
			first = g
			if err := refuseStatic("merge", name, g, "merge"); err != nil {
				return err
			}
			s, ok := kind.Lookup(g.Kind())
			if !ok || s.Combine == nil {
				return fmt.Errorf("merge: %s holds a %s, which cannot be combined", name, g.Kind())
			}
			spec = s
			continue
		}
		if err := refuseStatic("merge", name, g, "merge"); err != nil {
			return err
		}
		if g.Kind() != first.Kind() {
			return fmt.Errorf("merge: %s is a %s filter and %s a %s filter; only filters of one kind merge", pos[0], first.Kind(), name, g.Kind())
		}
		if err := spec.Combine(first, g); err != nil {
			return fmt.Errorf("merge: %s into %s: %w", name, pos[0], err)
		}
	}
	if *out == "-" {
		err = e.writeOutput(*out, first)
	} else {
		e.warnLinks(*out)
		err = saveFilter(*out, first)
	}
	if err == nil {
		e.warnState("merge", *out, first)
	}
	return err
}
