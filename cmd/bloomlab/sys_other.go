//go:build !linux

package main

// newFileMode returns the permissions a newly created file gets.
func newFileMode() uint32 { return 0o644 }
