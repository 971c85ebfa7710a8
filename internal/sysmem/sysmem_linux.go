package sysmem

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Physical returns the machine's RAM in bytes (sysinfo(2)'s totalram), or
// 0 if unknown.
func Physical() uint64 {
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) != nil {
		return 0
	}
	return uint64(si.Totalram) * uint64(si.Unit)
}

// Limit returns the memory this process may use: the least of the
// machine's RAM, the address-space limit (RLIMIT_AS, ulimit -v) and the
// memory limit of its control group (cgroup v2 memory.max, or v1
// memory.limit_in_bytes); 0 if none is known. An allocation beyond it ends
// the process with Go's fatal out-of-memory error, which no recover
// catches, so the command and the decoders check it first.
func Limit() uint64 {
	limit := Physical()
	lower := func(v uint64) {
		if v > 0 && (limit == 0 || v < limit) {
			limit = v
		}
	}
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_AS, &rl) == nil && rl.Cur != ^uint64(0) {
		lower(rl.Cur)
	}
	for _, path := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		if b, err := os.ReadFile(path); err == nil {
			if v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil {
				lower(v)
			}
		}
	}
	return limit
}
