package sysmem

import "syscall"

// Physical returns the machine's RAM in bytes (sysinfo(2)'s totalram), or
// 0 if unknown.
func Physical() uint64 {
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) != nil {
		return 0
	}
	return uint64(si.Totalram) * uint64(si.Unit)
}
