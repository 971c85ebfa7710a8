package main

import (
	"io"
	"os"
)

// isTerminal reports whether w is a character device (a terminal), where
// progress is shown; pipes, files and buffers stay quiet.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
