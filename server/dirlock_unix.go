//go:build unix && !solaris && !aix

package server

import (
	"errors"
	"os"
	"syscall"
)

// flock is syscall.Flock (a test replaces it with a file system's refusal).
var flock = syscall.Flock

// lockDir takes an exclusive advisory lock on the file bloomlab.lock in
// dir, so that a second server on a directory in use is refused rather
// than appending to the same log file at its own offset, overwriting the
// first server's acknowledged records (and they its). The lock lives as
// long as the returned file is open: the kernel releases it when the
// process dies, kill -9 included.
func lockDir(dir string, path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err = flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, errDirInUse(dir)
		}
		if errors.Is(err, syscall.ENOLCK) || errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOSYS) {
			// A file system without flock (NFS without a lock daemon,
			// some FUSE mounts): serve as on the platforms without it,
			// unlocked, and say so.
			return f, errNoLock{err}
		}
		f.Close()
		return nil, err
	}
	return f, nil
}
