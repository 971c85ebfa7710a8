package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// maxKeyLen is the longest key line accepted.
const maxKeyLen = 1 << 20

// utf8BOM is the byte-order mark some editors put at the start of a text
// file; it is not part of the first key.
var utf8BOM = []byte("\xef\xbb\xbf")

// keyRules says how key files are read, for help texts.
const keyRules = "Keys are read one per line from the KEYFILEs, or from standard input when there is none or the name is \"-\" " +
	"(on a terminal, a notice says so first; Ctrl-D ends the input). " +
	"A trailing CR is stripped (CRLF files work), a UTF-8 byte-order mark at the start of a file is stripped, empty lines are skipped, " +
	"and lines may be up to 1 MiB long; any other bytes, binary included, are part of the key."

// stdinNotice is printed before keys are read from standard input when it
// is a terminal: without it the command would wait silently for input the
// user may not know it wants.
const stdinNotice = "bloomlab: reading keys from standard input (a terminal), one per line; end with Ctrl-D (or give a key file, /dev/null for none)"

// keyFiles returns the key sources named on the command line: "-" (standard
// input) when there is none.
func keyFiles(args []string) []string {
	if len(args) == 0 {
		return []string{"-"}
	}
	return args
}

func sourceName(name string) string {
	if name == "-" {
		return "<stdin>"
	}
	return name
}

// forEachKey calls fn with every key of the files in order: one key per
// line, a trailing "\r" stripped, a UTF-8 byte-order mark at the start of
// each file stripped, empty lines skipped. The key slice is only
// valid during the call. Lines longer than maxKeyLen are an error naming
// the file and line. Standard input ("-") may be named once.
func (e *env) forEachKey(files []string, fn func(key []byte, file string, line int) error) error {
	if err := checkKeyFiles(files); err != nil {
		return err
	}
	for _, name := range files {
		if name == "-" {
			if isTerminal(e.stdin) {
				fmt.Fprintln(e.stderr, stdinNotice)
			}
			if err := scanKeys(e.stdin, sourceName(name), fn); err != nil {
				return err
			}
			continue
		}
		f, err := os.Open(name)
		if err != nil {
			return fmt.Errorf("key file: %w", err)
		}
		err = scanKeys(f, name, fn)
		f.Close() // one file open at a time, however many are named
		if err != nil {
			return err
		}
	}
	return nil
}

// checkKeyFiles rejects, before anything is read or allocated, a key-file
// list that names standard input twice, a directory, or a file that
// cannot be found. Every command that reads key files calls it first.
func checkKeyFiles(files []string) error {
	stdin := 0
	for _, name := range files {
		if name == "-" {
			stdin++
			continue
		}
		st, err := os.Stat(name)
		if err != nil {
			return fmt.Errorf("key file: %w", err)
		}
		if st.IsDir() {
			return usagef("key file %s is a directory (a key file holds keys, one per line)", name)
		}
	}
	if stdin > 1 {
		return usagef("standard input (-) named twice")
	}
	return nil
}

// rereadable reports an error for a key source that cannot be read twice
// with the same content: standard input, pipes, devices. build counts keys
// in a first pass only from regular files.
func rereadable(name string) error {
	if name == "-" {
		return usagef("keys from standard input need -n (they cannot be counted in a first pass)")
	}
	st, err := os.Stat(name)
	if err != nil {
		return fmt.Errorf("key file: %w", err)
	}
	if !st.Mode().IsRegular() {
		return usagef("%s is not a regular file: give -n (a pipe or device cannot be counted in a first pass)", name)
	}
	return nil
}

func scanKeys(r io.Reader, name string, fn func(key []byte, file string, line int) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxKeyLen+2) // + "\r\n"
	line := 0
	for sc.Scan() {
		line++
		key := sc.Bytes() // ScanLines has dropped "\n" and a trailing "\r"
		if line == 1 {
			key = bytes.TrimPrefix(key, utf8BOM)
		}
		if len(key) == 0 {
			continue
		}
		if len(key) > maxKeyLen {
			return fmt.Errorf("%s:%d: line longer than %d bytes", name, line, maxKeyLen)
		}
		if err := fn(key, name, line); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("%s:%d: line longer than %d bytes", name, line+1, maxKeyLen)
		}
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// countKeys counts the keys of the files (a first pass before sizing).
func (e *env) countKeys(files []string) (uint64, error) {
	var n uint64
	err := e.forEachKey(files, func([]byte, string, int) error { n++; return nil })
	return n, err
}

// quoteKey renders a key for an error message: quoted, binary-safe and cut
// to 64 bytes.
func quoteKey(key []byte) string {
	if len(key) > 64 {
		return fmt.Sprintf("%q…", key[:64])
	}
	return fmt.Sprintf("%q", key)
}
