//go:build !linux

package server

import "os"

// dataSync is f.Sync where fdatasync(2) is not at hand.
func dataSync(f *os.File) error { return f.Sync() }
