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

// TestHeapLimit: under RLIMIT_AS, HeapLimit leaves out the address space
// already mapped (Go's reservations take most of a GiB at start) and
// headroom for the runtime's growth; without one it is Limit.
func TestHeapLimit(t *testing.T) {
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &old); err != nil {
		t.Skip(err)
	}
	if old.Cur == ^uint64(0) {
		if h, l := HeapLimit(), Limit(); h != l {
			t.Errorf("no RLIMIT_AS: HeapLimit %d, Limit %d", h, l)
		}
	}
	mapped := mappedBytes()
	if mapped == 0 {
		t.Skip("no /proc/self/statm")
	}
	lowered := old
	lowered.Cur = mapped + 1<<30
	if old.Cur < lowered.Cur {
		t.Skip("RLIMIT_AS below what the test needs")
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &lowered); err != nil {
		t.Skip(err)
	}
	h := HeapLimit()
	syscall.Setrlimit(syscall.RLIMIT_AS, &old)
	if h == 0 || h > 1<<30-headroom(1<<30) {
		t.Errorf("RLIMIT_AS %d with %d mapped: HeapLimit %d, want at most %d", lowered.Cur, mapped, h, 1<<30-headroom(1<<30))
	}
}
