package hugepage

import (
	"os"
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

func TestAligned(t *testing.T) {
	for _, c := range []struct{ p, n, start, end uintptr }{
		{0, huge, 0, huge},
		{1, huge, huge, huge},
		{huge - 8, 3 * huge, huge, 3 * huge},
		{5 * huge, 10 * huge, 5 * huge, 15 * huge},
		{huge + 1, 100, 2 * huge, 2 * huge},
	} {
		from, to := aligned(c.p, c.n)
		if s, e := c.p+from, c.p+to; s != c.start || e != c.end {
			t.Errorf("aligned(%#x, %#x) = [%#x, %#x), want [%#x, %#x)", c.p, c.n, s, e, c.start, c.end)
		}
	}
}

// TestWordsBytes: the slices are zeroed, of the length and capacity asked,
// and usable, advised or not.
func TestWordsBytes(t *testing.T) {
	for _, n := range []uint64{0, 1, 1000, MinBytes/8 - 1, MinBytes / 8, 3 * MinBytes / 8} {
		w := WordsCap(n, n+3)
		if uint64(len(w)) != n || uint64(cap(w)) != n+3 {
			t.Fatalf("WordsCap(%d, %d): len %d cap %d", n, n+3, len(w), cap(w))
		}
		for i := range w {
			if w[i] != 0 {
				t.Fatalf("word %d not zero", i)
			}
			w[i] = uint64(i)
		}
		b := Bytes(8 * n)
		if uint64(len(b)) != 8*n {
			t.Fatalf("Bytes(%d): len %d", 8*n, len(b))
		}
		for i := range b {
			if b[i] != 0 {
				t.Fatalf("byte %d not zero", i)
			}
		}
	}
}

// TestAdvised: on Linux, a large array's aligned part is mapped with the
// huge-page advice (the "hg" flag in /proc/self/smaps).
func TestAdvised(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("madvise is Linux's")
	}
	if off {
		t.Skip("BLOOMLAB_NO_HUGEPAGES is set")
	}
	w := Words(4 * MinBytes / 8)
	a := uintptr(unsafe.Pointer(unsafe.SliceData(w)))
	from, to := aligned(a, uintptr(len(w))*8)
	start, end := a+from, a+to
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	found := false
	var inside bool
	for _, line := range strings.Split(string(smaps), "\n") {
		var lo, hi uintptr
		if n, _ := sscanRange(line, &lo, &hi); n {
			inside = lo <= start && end <= hi
			continue
		}
		if inside && strings.HasPrefix(line, "VmFlags:") && strings.Contains(line, " hg") {
			found = true
		}
	}
	runtime.KeepAlive(w)
	if !found {
		t.Errorf("no mapping of [%#x, %#x) has the huge-page advice", start, end)
	}
}

// sscanRange parses an smaps mapping line's "lo-hi" address range.
func sscanRange(line string, lo, hi *uintptr) (bool, error) {
	f := strings.Fields(line)
	if len(f) < 5 || !strings.Contains(f[0], "-") {
		return false, nil
	}
	a, b, _ := strings.Cut(f[0], "-")
	x, ok1 := hex(a)
	y, ok2 := hex(b)
	if !ok1 || !ok2 {
		return false, nil
	}
	*lo, *hi = x, y
	return true, nil
}

func hex(s string) (uintptr, bool) {
	var v uintptr
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | uintptr(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | uintptr(c-'a'+10)
		default:
			return 0, false
		}
	}
	return v, true
}
