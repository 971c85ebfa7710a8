package main

import "syscall"

// physicalMemory returns the machine's RAM in bytes, or 0 if unknown.
func physicalMemory() uint64 {
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) != nil {
		return 0
	}
	return uint64(si.Totalram) * uint64(si.Unit)
}

// newFileMode returns the permissions a newly created file gets: 0666 less
// the process umask, as os.Create would give.
func newFileMode() uint32 {
	mask := syscall.Umask(0)
	syscall.Umask(mask)
	return 0o666 &^ uint32(mask)
}
