package main

import (
	"fmt"

	"github.com/bloomlab/bloomlab/bloom"
	"github.com/bloomlab/bloomlab/counting"
)

func init() {
	register(&command{
		name: "merge",
		summary: "Write to OUT the union of the filters A B…, which must be of the same kind with the same m, k, scheme and seed " +
			"(and counter width). Counting filters add their counters (the multiset union). OUT is written atomically and may be one of the inputs.",
		usage: "bloomlab merge -o OUT A B…",
		run:   runMerge,
	})
}

func runMerge(e *env, args []string) error {
	fs := flagSet("merge")
	out := fs.String("o", "", "output file")
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
	first, err := loadFilter(pos[0])
	if err != nil {
		return err
	}
	for _, name := range pos[1:] {
		g, err := loadFilter(name)
		if err != nil {
			return err
		}
		if g.Kind() != first.Kind() {
			return fmt.Errorf("merge: %s is a %s filter and %s a %s filter; only filters of one kind merge", pos[0], first.Kind(), name, g.Kind())
		}
		switch a := first.(type) {
		case *bloom.Filter:
			err = a.Union(g.(*bloom.Filter))
		case *counting.Filter:
			err = a.Merge(g.(*counting.Filter))
		default:
			err = fmt.Errorf("kind %s cannot be merged", first.Kind())
		}
		if err != nil {
			return fmt.Errorf("merge: %s into %s: %w", name, pos[0], err)
		}
	}
	return saveFilter(*out, first)
}
