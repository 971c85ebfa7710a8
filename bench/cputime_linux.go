package main

import "golang.org/x/sys/unix"

// threadCPUNanos returns the CPU time consumed by the calling OS thread, in
// nanoseconds, and whether it is available. The caller must have locked its
// goroutine to the thread (runtime.LockOSThread).
func threadCPUNanos() (int64, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return ts.Nano(), true
}
