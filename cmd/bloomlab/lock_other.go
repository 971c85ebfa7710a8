//go:build !unix

package main

import "os"

// lock is a no-op where advisory locks are not available: concurrent
// writers of one file are not serialised there (docs say so).
func lock(f *os.File) error { return nil }

// tryLock reports false: without locks no temporary file is known stale.
func tryLock(f *os.File) bool { return false }

// linkCount returns 1: hard links are not counted here.
func linkCount(st os.FileInfo) uint64 { return 1 }
