package main

import (
	"errors"
	"fmt"

	"github.com/bloomlab/bloomlab/counting"
	"github.com/bloomlab/bloomlab/dlcbf"
)

func init() {
	register(&command{
		name:    "add",
		summary: "Add keys (one per line) to the filter in FILE, which is rewritten atomically.",
		usage:   "bloomlab add FILE [KEYFILE…]",
		run:     runAdd,
	})
	register(&command{
		name:    "remove",
		summary: "Remove keys from the counting or dlcbf filter in FILE, rewritten atomically. A key the filter proves absent is an error and nothing is written, unless -ignore-missing (then such keys are skipped and counted on stderr).",
		usage:   "bloomlab remove [-ignore-missing] FILE [KEYFILE…]",
		run:     runRemove,
	})
}

func runAdd(e *env, args []string) error {
	fs := flagSet("add")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 1 {
		return usagef("missing FILE")
	}
	g, err := loadAny(pos[0])
	if err != nil {
		return err
	}
	var add func(key []byte) error
	switch f := g.(type) {
	case filter:
		add = func(key []byte) error { f.Add(key); return nil }
	case interface{ Add([]byte) error }: // dleft, dlcbf: an insert can be refused
		add = f.Add
	default:
		return fmt.Errorf("add: %s holds a %s, which does not take keys one by one", pos[0], g.Kind())
	}
	err = e.forEachKey(keyFiles(pos[1:]), func(key []byte, file string, line int) error {
		if err := add(key); err != nil {
			return fmt.Errorf("add: key %s (%s:%d): %w; %s is unchanged", quoteKey(key), file, line, err, pos[0])
		}
		return nil
	})
	if err != nil {
		return err
	}
	return saveFilter(pos[0], g)
}

func runRemove(e *env, args []string) error {
	fs := flagSet("remove")
	ignore := fs.Bool("ignore-missing", false, "skip keys the filter proves absent")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 1 {
		return usagef("missing FILE")
	}
	f, err := loadAny(pos[0])
	if err != nil {
		return err
	}
	if df, ok := f.(*dlcbf.Filter); ok {
		return removeDlcbf(e, df, pos[0], pos[1:], *ignore)
	}
	cf, ok := f.(*counting.Filter)
	if !ok {
		return fmt.Errorf("remove: %s holds a %s filter; only counting and dlcbf filters support remove", pos[0], f.Kind())
	}
	missing := 0
	err = e.forEachKey(keyFiles(pos[1:]), func(key []byte, file string, line int) error {
		err := cf.Remove(key)
		if errors.Is(err, counting.ErrNotPresent) {
			if *ignore {
				missing++
				return nil
			}
			return fmt.Errorf("remove: key %s (%s:%d) is not in the filter; %s is unchanged (use -ignore-missing to skip such keys)", quoteKey(key), file, line, pos[0])
		}
		return err
	})
	if err != nil {
		return err
	}
	if missing > 0 {
		fmt.Fprintf(e.stderr, "bloomlab: remove: skipped %d keys not in the filter\n", missing)
	}
	return saveFilter(pos[0], cf)
}
