//go:build !linux

package main

import "os"

// isatty approximates isatty(3) where the terminal ioctl is not at hand:
// a character device (which /dev/null also is).
func isatty(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
