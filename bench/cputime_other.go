//go:build !linux

package main

// threadCPUNanos reports that per-thread CPU time is not available here.
func threadCPUNanos() (int64, bool) { return 0, false }
