//go:build !unix

package server

import "time"

// cpuTimes returns 0, 0: no getrusage here.
func cpuTimes() (user, sys time.Duration) { return 0, 0 }
