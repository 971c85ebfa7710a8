package main

import (
	"os"
	"syscall"
	"unsafe"
)

// isatty asks the terminal driver for f's settings, which only a terminal
// has (isatty(3)).
func isatty(f *os.File) bool {
	var t syscall.Termios
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), syscall.TCGETS, uintptr(unsafe.Pointer(&t)))
	return errno == 0
}
