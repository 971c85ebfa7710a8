package sysmem

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestPhysicalMatchesMeminfo: Physical is /proc/meminfo's MemTotal, which
// the kernel reports from the same counter in KiB.
func TestPhysicalMatchesMeminfo(t *testing.T) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	var kib uint64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			kib, err = strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if kib == 0 {
		t.Skip("no MemTotal in /proc/meminfo")
	}
	got := Physical()
	if got/1024 != kib {
		t.Errorf("Physical() = %d bytes = %d KiB, /proc/meminfo says %d KiB", got, got/1024, kib)
	}
}

// Limit is at most the machine's memory, and follows RLIMIT_AS (a command
// under `ulimit -v` used to pass the memory check and die out of memory).
func TestLimit(t *testing.T) {
	if l, p := Limit(), Physical(); l == 0 || l > p {
		t.Fatalf("Limit %d, Physical %d", l, p)
	}
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &old); err != nil {
		t.Skip(err)
	}
	lowered := old
	lowered.Cur = 64 << 30
	if old.Cur != ^uint64(0) && old.Cur < lowered.Cur {
		lowered.Cur = old.Cur
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &lowered); err != nil {
		t.Skip(err)
	}
	defer syscall.Setrlimit(syscall.RLIMIT_AS, &old)
	if l := Limit(); l > lowered.Cur {
		t.Errorf("Limit %d above RLIMIT_AS %d", l, lowered.Cur)
	}
}
