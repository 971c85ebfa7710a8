//go:build !unix

package server

import "os"

// lockDir opens the lock file without locking it: advisory locks are not
// available here, and two servers on one directory are not detected
// (docs/SERVER.md says so).
func lockDir(dir string, path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
}
