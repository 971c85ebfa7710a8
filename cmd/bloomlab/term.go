package main

import "os"

// isTerminal reports whether f (an io.Reader or io.Writer of the command)
// is a terminal: where progress is shown, where a binary filter is not
// written, and where keys read from standard input get a notice. Pipes,
// files, buffers and other character devices (/dev/null) are not.
func isTerminal(f any) bool {
	file, ok := f.(*os.File)
	return ok && isatty(file)
}
