package server

import (
	"os"
	"syscall"
)

// dataSync is fdatasync(2): the file's data and the metadata needed to
// read them (its size), without its times: one journal write less than
// fsync for a log that only grows.
func dataSync(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return f.Sync()
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		for {
			serr = syscall.Fdatasync(int(fd))
			if serr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	if serr != nil {
		return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: serr}
	}
	return nil
}
