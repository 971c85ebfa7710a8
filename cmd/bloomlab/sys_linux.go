package main

import "syscall"

// newFileMode returns the permissions a newly created file gets: 0666 less
// the process umask, as os.Create would give.
func newFileMode() uint32 {
	mask := syscall.Umask(0)
	syscall.Umask(mask)
	return 0o666 &^ uint32(mask)
}
