package main

import (
	"bufio"
	"fmt"
)

func init() {
	register(&command{
		name:    "query",
		summary: "Like grep: print the keys (one per line) that may be in the filter; -v prints the absent ones instead; -c prints only how many would be printed. Exit status 0 if any key was selected, 1 if none, 2 on error. FILE may be a URL target (redis://…?key=NAME, see build), queried in pipelined batches of 1000 keys; a key whose query fails is an error (exit 2), never an absent key.",
		usage:   "bloomlab query [-v] [-c] FILE|TARGET [KEYFILE…]",
		run:     runQuery,
	})
}

func runQuery(e *env, args []string) error {
	err := query(e, args)
	if err == nil {
		return nil
	}
	if _, ok := err.(*exitError); ok {
		return err
	}
	if ue, ok := err.(*usageError); ok {
		return ue // exit 2 as well
	}
	return &exitError{code: 2, err: err}
}

func query(e *env, args []string) error {
	fs := flagSet("query")
	invert := fs.Bool("v", false, "select the keys that are certainly absent")
	count := fs.Bool("c", false, "print only the number of selected keys")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 1 {
		return usagef("missing FILE")
	}
	files := keyFiles(pos[1:])
	if err := checkKeyFiles(files); err != nil {
		return err
	}
	t, err := openTarget(pos[0])
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(e.stdout, 64<<10)
	var selected uint64
	err = t.query(e, files, func(key []byte, present bool) error {
		if present == *invert {
			return nil
		}
		selected++
		if !*count {
			w.Write(key)
			return w.WriteByte('\n')
		}
		return nil
	})
	if err != nil {
		w.Flush()
		return err
	}
	if *count {
		fmt.Fprintln(w, selected)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if selected == 0 {
		return &exitError{code: 1}
	}
	return nil
}
