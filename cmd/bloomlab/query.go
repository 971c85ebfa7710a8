package main

import (
	"bufio"
	"fmt"
	"strconv"
)

func init() {
	register(&command{
		name: "query",
		summary: "Like grep: print the keys (one per line) that may be in the filter; -v prints the absent ones instead; -c prints only how many would be printed. Exit status 0 if any key was selected, 1 if none, 2 on error. FILE may be a URL target (redis://…?key=NAME, see build), queried in pipelined batches of 1000 keys; a key whose query fails is an error (exit 2), never an absent key. " +
			"It may be parquet://FILE.parquet?column=NAME: the split-block Bloom filters of one column of a Parquet file (read-only), a key selected when any row group may hold it (or has no filter); each key line is converted by the column's physical type (INT32, INT64, FLOAT, DOUBLE from decimal text; BYTE_ARRAY and FIXED_LEN_BYTE_ARRAY the raw line; a nested column by its dotted path), and -row-groups prints which row groups.",
		usage: "bloomlab query [-v] [-c] [-row-groups] FILE|TARGET [KEYFILE…]",
		run:   runQuery,
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
	rowGroups := fs.Bool("row-groups", false, "parquet:// targets: after each key, a tab and the row groups that may hold it (comma-separated)")
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
	if *rowGroups {
		pt, ok := t.(*parquetTarget)
		if !ok {
			return usagef("-row-groups goes with a parquet:// target")
		}
		err = pt.groups(e, files, func(key []byte, groups []int) error {
			if (len(groups) > 0) == *invert {
				return nil
			}
			selected++
			if *count {
				return nil
			}
			w.Write(key)
			for i, g := range groups {
				sep := byte(',')
				if i == 0 {
					sep = '\t'
				}
				w.WriteByte(sep)
				w.WriteString(strconv.Itoa(g))
			}
			return w.WriteByte('\n')
		})
	} else {
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
	}
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
