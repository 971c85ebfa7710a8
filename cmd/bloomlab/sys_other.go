//go:build !linux

package main

// physicalMemory returns the machine's RAM in bytes, or 0 if unknown.
func physicalMemory() uint64 { return 0 }

// newFileMode returns the permissions a newly created file gets.
func newFileMode() uint32 { return 0o644 }
