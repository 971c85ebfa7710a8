package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/bloomlab/bloomlab"
	"github.com/bloomlab/bloomlab/internal/kind"
)

// A target is where a filter lives, as build -o, add, query and info name
// it: a local file (the default), or a store named by a URL scheme
// registered in the table below. Remote operations can fail where a loaded
// file cannot (a node down, a timeout), so a target answers for a whole
// command rather than handing out a bloomlab.Filter: each method is one
// command's work, with the target's own semantics (atomic rewrite for a
// file, pipelined batches for Redis).
type target interface {
	// String names the target in messages (a URL without its password).
	String() string
	// checkBuild refuses, before any key is read, a build the target
	// cannot take: a kind it does not hold, an existing filter without
	// force, an output that is also an input.
	checkBuild(e *env, kind string, force bool, keyFiles []string) error
	// write stores f, a newly built filter (build -o): it replaces an
	// existing filter when force is set (files are always replaced).
	write(e *env, f bloomlab.Filter, force bool) error
	// add adds the keys of files to the filter (add).
	add(e *env, files []string) error
	// query calls fn, in order, with every key of files and whether the
	// filter may hold it; an error of the target is returned, never
	// reported as an absent key.
	query(e *env, files []string, fn func(key []byte, present bool) error) error
	// info describes the filter (info).
	info(e *env) (infoReport, error)
}

// targetOpener opens the target a command-line name designates.
type targetOpener func(name string) (target, error)

// targetSchemes is the table of URL schemes, filled by registerTarget from
// the stores' init functions.
var targetSchemes = map[string]targetOpener{}

// registerTarget makes the names "SCHEME://…" of every scheme given open
// with open.
func registerTarget(open targetOpener, schemes ...string) {
	for _, s := range schemes {
		if _, dup := targetSchemes[s]; dup {
			panic("bloomlab: target scheme registered twice: " + s)
		}
		targetSchemes[s] = open
	}
}

// targetScheme returns the URL scheme of name ("redis" for
// "redis://…"), or "" when name is not a URL (a file).
func targetScheme(name string) string {
	s, _, ok := strings.Cut(name, "://")
	if !ok || s == "" {
		return ""
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.') {
			return ""
		}
	}
	return strings.ToLower(s)
}

// schemeNames lists the registered schemes for messages.
func schemeNames() string {
	var s []string
	for k := range targetSchemes {
		s = append(s, k+"://")
	}
	sort.Strings(s)
	return strings.Join(s, ", ")
}

// openTarget returns the target name designates: a URL of a registered
// scheme, or a file. A name with an unknown scheme is a usage error (a
// file so named can be given as ./NAME).
func openTarget(name string) (target, error) {
	s := targetScheme(name)
	if s == "" {
		return fileTarget(name), nil
	}
	open, ok := targetSchemes[s]
	if !ok {
		return nil, usagef("%s: unknown scheme %q (targets: a file, %s; a file named so: ./%s)", name, s, schemeNames(), name)
	}
	return open(name)
}

// notTarget refuses a URL target where only a file is accepted.
func notTarget(cmd, name string) error {
	if targetScheme(name) != "" {
		return usagef("%s takes files; URL targets (%s) are taken by build -o, add, query, info and redis push/pull", cmd, schemeNames())
	}
	return nil
}

// fileTarget is a bloomlab file: the behaviour every command had before
// targets (atomic rewrites under the writers' lock, warnings).
type fileTarget string

func (p fileTarget) String() string { return string(p) }

func (p fileTarget) checkBuild(e *env, _ string, _ bool, keyFiles []string) error {
	return e.checkNotInput(string(p), keyFiles)
}

func (p fileTarget) write(e *env, f bloomlab.Filter, _ bool) error {
	if err := e.writeOutput(string(p), f); err != nil {
		return err
	}
	e.warnState("build", string(p), f)
	return nil
}

func (p fileTarget) add(e *env, files []string) error {
	path := string(p)
	f, err := e.modifyFile(path, func(f bloomlab.Filter) error {
		if err := refuseStatic("add", path, f, "add keys to"); err != nil {
			return err
		}
		add, ok := kind.Adder(f)
		if !ok {
			return fmt.Errorf("add: %s holds a %s, which does not take keys one at a time", path, f.Kind())
		}
		setMemoryBudget(f)
		return e.forEachKey(files, func(key []byte, file string, line int) error {
			if err := add(key); err != nil {
				return fmt.Errorf("add: key %s (%s:%d): %w; %s is unchanged", quoteKey(key), sourceName(file), line, err, path)
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	e.warnState("add", path, f)
	return nil
}

func (p fileTarget) query(e *env, files []string, fn func(key []byte, present bool) error) error {
	f, err := loadFile(string(p)) // every kind answers Contains
	if err != nil {
		return err
	}
	return e.forEachKey(files, func(key []byte, _ string, _ int) error { return fn(key, f.Contains(key)) })
}

func (p fileTarget) info(e *env) (infoReport, error) {
	f, err := loadFile(string(p))
	if err != nil {
		return infoReport{}, err
	}
	return describeFilter(string(p), f), nil
}

// refuseStatic is the error of cmd (op: StaticError's words) on the
// filter f of path when its kind is static (fuse, ribbon): such a filter
// takes no keys and no merge, and is rebuilt from all its keys instead.
// It is checked before any key is read; path is left unchanged.
func refuseStatic(cmd, path string, f bloomlab.Filter, op string) error {
	if s, ok := kind.Lookup(f.Kind()); ok && s.Static {
		return fmt.Errorf("%s: %s: %w; %s is unchanged", cmd, path, kind.StaticError(f.Kind(), op), path)
	}
	return nil
}

// keyBatch collects keys read from key files (whose slices are valid only
// during the callback) into batches for a remote target.
type keyBatch struct {
	buf  []byte
	ends []int
	keys [][]byte
}

func (b *keyBatch) add(key []byte) {
	b.buf = append(b.buf, key...)
	b.ends = append(b.ends, len(b.buf))
}

func (b *keyBatch) len() int { return len(b.ends) }

// batch returns the keys collected; valid until reset.
func (b *keyBatch) batch() [][]byte {
	b.keys = b.keys[:0]
	start := 0
	for _, end := range b.ends {
		b.keys = append(b.keys, b.buf[start:end:end])
		start = end
	}
	return b.keys
}

func (b *keyBatch) reset() { b.buf, b.ends = b.buf[:0], b.ends[:0] }
