package main

import (
	"errors"
	"fmt"

	"github.com/bloomlab/bloomlab"
	"github.com/bloomlab/bloomlab/internal/kind"
)

func init() {
	register(&command{
		name: "add",
		summary: "Add keys (one per line) to the filter in FILE, which is rewritten atomically under a lock (concurrent adds to one " +
			"file run one after the other; none loses keys). A key the filter cannot take (a full d-left bucket) is an error and " +
			"FILE is unchanged. Warns when the filter holds more keys than it was sized for. FILE may be a URL target " +
			"(redis://…?key=NAME, see build): the keys are then added in pipelined batches of 1000 as they are read; on an error the " +
			"keys of the batches before were added (adding again is harmless). " + keyRules,
		usage: "bloomlab add FILE|TARGET [KEYFILE…]",
		run:   runAdd,
	})
	register(&command{
		name: "remove",
		summary: "Remove keys from FILE (for the kinds that support it: the remove column of 'bloomlab plan'), rewritten atomically under a lock. " +
			"Give only keys that were added: a key that was never added but is a false positive cannot be told apart from an " +
			"added one, and removing it takes away counts that belong to other keys, which can make them false negatives. " +
			"A key the filter proves absent is therefore an error and nothing is written, unless -ignore-missing: then such keys " +
			"are skipped and a warning says how many, because a key list holding keys that were never added is exactly the " +
			"mistake that causes false negatives. " + keyRules,
		usage: "bloomlab remove [-ignore-missing] FILE [KEYFILE…]",
		run:   runRemove,
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
	path, files := pos[0], keyFiles(pos[1:])
	if err := checkKeyFiles(files); err != nil {
		return err
	}
	t, err := openTarget(path)
	if err != nil {
		return err
	}
	return t.add(e, files)
}

func runRemove(e *env, args []string) error {
	fs := flagSet("remove")
	ignore := fs.Bool("ignore-missing", false, "skip (and count, with a warning) keys the filter proves absent instead of failing")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 1 {
		return usagef("missing FILE")
	}
	path, files := pos[0], keyFiles(pos[1:])
	if err := checkKeyFiles(files); err != nil {
		return err
	}
	if err := notTarget("remove", path); err != nil {
		return err
	}
	_, err = e.modifyFile(path, func(f bloomlab.Filter) error {
		if err := refuseStatic("remove", path, f, "remove keys from"); err != nil {
			return err
		}
		r, ok := f.(kind.Remover)
		if !ok {
			return fmt.Errorf("remove: %s holds a %s filter, which cannot remove keys", path, f.Kind())
		}
		missing := 0
		err := e.forEachKey(files, func(key []byte, file string, line int) error {
			err := r.Remove(key)
			if errors.Is(err, kind.ErrNotPresent) {
				if *ignore {
					missing++
					return nil
				}
				return fmt.Errorf("remove: key %s (%s:%d) is not in the filter; %s is unchanged (a key that was never added must not be removed)", quoteKey(key), sourceName(file), line, path)
			}
			if err != nil {
				return fmt.Errorf("remove: key %s (%s:%d): %w; %s is unchanged", quoteKey(key), sourceName(file), line, err, path)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if missing > 0 {
			fmt.Fprintf(e.stderr, "bloomlab: remove: WARNING: skipped %d keys that %s proves were never added. The key list holds keys that were not added; "+
				"any such key the filter could not tell from an added one (a false positive) WAS removed, and that can make added keys answer "+
				"absent (false negatives). Remove only keys you added.\n", missing, path)
		}
		return nil
	})
	return err
}
