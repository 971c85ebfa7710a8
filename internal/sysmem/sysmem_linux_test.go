package sysmem

import (
	"bufio"
	"os"
	"strconv"
	"strings"
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
