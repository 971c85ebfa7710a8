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

// HeapLimit is Limit for what the Go heap may still grow by under an
// address-space limit (RLIMIT_AS): that limit counts every mapping, the
// Go runtime's reservations (the page allocator's summaries, arenas),
// thread stacks and C malloc arenas among them (about 1 GiB at start for
// the command), and the runtime maps more as the heap grows (64 MiB
// arenas, their metadata, new threads). So under RLIMIT_AS it is the
// limit less the address space mapped now, less headroom for what the
// runtime maps of its own: 128 MiB and an eighth of the rest. Past it an
// allocation ends the process with a fatal out-of-memory error while the
// heap holds far less than the limit.
func HeapLimit() uint64 {
	limit := Limit()
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_AS, &rl) != nil || rl.Cur == ^uint64(0) {
		return limit
	}
	mapped := mappedBytes()
	if mapped >= rl.Cur {
		return 1 // unknown would be 0: no room at all
	}
	free := rl.Cur - mapped
	free -= min(free, headroom(free))
	return max(1, min(limit, free))
}

// headroom is what HeapLimit keeps, of free bytes of address space, for
// the runtime's own mappings.
func headroom(free uint64) uint64 { return 128<<20 + free/8 }

// mappedBytes is the process's address space (/proc/self/statm's size),
// or 0 if unknown.
func mappedBytes() uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	pages, err := strconv.ParseUint(f[0], 10, 64)
	if err != nil {
		return 0
	}
	return pages * uint64(os.Getpagesize())
}
