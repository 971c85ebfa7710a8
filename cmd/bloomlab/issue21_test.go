package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bloomlab/bloomlab/scalable"
)

// Regression tests for issue 21's items on the command.

// A key file that is a directory is refused at once, naming it, by every
// command that reads key files. build said "is not a regular file: give
// -n", and with -n failed later on "is a directory".
func TestKeyFileIsDirectory(t *testing.T) {
	t.Chdir(t.TempDir())
	os.Mkdir("d", 0o755)
	os.WriteFile("k.txt", []byte("a\nb\n"), 0o644)
	if _, e, code := invoke([]string{"build", "-kind", "counting", "-n", "10", "-fpr", "0.01", "-o", "f.blf", "k.txt"}, ""); code != 0 {
		t.Fatalf("build: exit %d: %s", code, e)
	}
	for _, args := range [][]string{
		{"build", "-kind", "bloom", "-fpr", "0.01", "-o", "w.blf", "d"},
		{"build", "-kind", "bloom", "-n", "10", "-fpr", "0.01", "-o", "w.blf", "d"},
		{"build", "-kind", "bloom", "-n", "10", "-fpr", "0.01", "-o", "w.blf", "k.txt", "d"},
		{"build", "-kind", "cuckoo", "-o", "w.blf", "d"},
		{"add", "f.blf", "d"},
		{"query", "f.blf", "d"},
		{"query", "-c", "f.blf", "k.txt", "d"},
		{"remove", "f.blf", "d"},
		{"import", "-format", "redisbloom", "-o", "w.blf", "d"},
	} {
		_, e, code := invoke(args, "")
		if code != 2 || !strings.Contains(e, "d is a directory") || strings.Contains(e, "regular file") {
			t.Errorf("%v: exit %d: %s", args, code, e)
		}
	}
	if _, err := os.Stat("w.blf"); err == nil {
		t.Error("a refused build wrote its output")
	}
	if out, _, code := invoke([]string{"query", "-c", "f.blf", "k.txt"}, ""); code != 0 || out != "2\n" {
		t.Errorf("the filter after the refused commands: %q exit %d", out, code)
	}
}

// build and add give a growing cuckoo filter the memory the process may
// use as its budget, as they do a scalable chain: copies of one key,
// which force a growth every 2b copies (-profile redisbloom -expansion 2:
// every 4), end in an error naming the budget, exit 1, with nothing
// written or the file unchanged, never in a fatal out-of-memory.
// `yes same | head -20 | bloomlab build -kind cuckoo -n 1000 -expansion
// 32768 -o x.blf -` asked at its 17th key for a sub-filter of 2.5 TB.
func TestCuckooMemoryBudget(t *testing.T) {
	t.Chdir(t.TempDir())
	defer func(f func() uint64) { memoryLimit = f }(memoryLimit)
	memoryLimit = func() uint64 { return 1 << 20 } // bytes: 2^23 bits
	same := strings.Repeat("same\n", 48)           // 11 growths: 2 MiB of tables
	_, e, code := invoke([]string{"build", "-kind", "cuckoo", "-profile", "redisbloom", "-n", "1000", "-expansion", "2", "-o", "r.blf", "-"}, same)
	if code != 1 || !strings.Contains(e, "memory budget of 8388608 bits") || !strings.Contains(e, "nothing written") {
		t.Fatalf("build past the budget: exit %d: %s", code, e)
	}
	if _, err := os.Stat("r.blf"); err == nil {
		t.Error("a refused build wrote its output")
	}
	_, e, code = invoke([]string{"build", "-kind", "cuckoo", "-n", "1000", "-expansion", "32768", "-o", "x.blf", "-"}, strings.Repeat("same\n", 20))
	if code != 1 || !strings.Contains(e, "memory budget") || !strings.Contains(e, "copies") {
		t.Fatalf("build -expansion 32768: exit %d: %s", code, e)
	}

	os.WriteFile("same.txt", []byte(same), 0o644)
	os.WriteFile("few.txt", []byte("same\nsame\nsame\nother\n"), 0o644)
	if _, e, code := invoke([]string{"build", "-kind", "cuckoo", "-profile", "redisbloom", "-n", "1000", "-expansion", "2", "-o", "r.blf", "few.txt"}, ""); code != 0 {
		t.Fatalf("build: exit %d: %s", code, e)
	}
	before, _ := os.ReadFile("r.blf")
	_, e, code = invoke([]string{"add", "r.blf", "same.txt"}, "")
	if code != 1 || !strings.Contains(e, "memory budget") || !strings.Contains(e, "unchanged") {
		t.Errorf("add past the budget: exit %d: %s", code, e)
	}
	if after, _ := os.ReadFile("r.blf"); !bytes.Equal(after, before) {
		t.Error("a refused add changed the file")
	}
	// Within the budget the same filter grows.
	memoryLimit = func() uint64 { return 64 << 20 }
	if _, e, code := invoke([]string{"add", "r.blf", "same.txt"}, ""); code != 0 {
		t.Errorf("add within the budget: exit %d: %s", code, e)
	}
	if out, _, code := invoke([]string{"query", "-c", "r.blf", "few.txt"}, ""); code != 0 || out != "4\n" {
		t.Errorf("keys after the adds: %q, exit %d", out, code)
	}
}

// TestCuckooDefaultBudgetKept: build and add keep a growing cuckoo
// filter's own default budget (cuckoo.Info.DefaultMaxBits: 2^30 bits here)
// where it is below the memory the process may use: they replaced it with
// all of that memory, so that copies of one key doubled the tables until
// then (an add of 185 copies grew a filter to 18 GiB before its refusal).
// With 1 TiB to use, 72 copies of one key grew the tables to 2^32 bits
// (512 MiB) without a word; the default refuses them at 2^30.
func TestCuckooDefaultBudgetKept(t *testing.T) {
	t.Chdir(t.TempDir())
	defer func(f func() uint64) { memoryLimit = f }(memoryLimit)
	memoryLimit = func() uint64 { return 1 << 40 }
	same := strings.Repeat("same\n", 72)
	_, e, code := invoke([]string{"build", "-kind", "cuckoo", "-profile", "redisbloom", "-n", "1000", "-expansion", "2", "-o", "r.blf", "-"}, same)
	if code != 1 || !strings.Contains(e, "memory budget of 1073741824 bits") {
		t.Fatalf("build of 72 copies: exit %d: %s", code, e)
	}
	if _, e, code := invoke([]string{"build", "-kind", "cuckoo", "-profile", "redisbloom", "-n", "1000", "-expansion", "2", "-o", "r.blf", "-"}, "same\n"); code != 0 {
		t.Fatalf("build: exit %d: %s", code, e)
	}
	_, e, code = invoke([]string{"add", "r.blf", "-"}, same)
	if code != 1 || !strings.Contains(e, "memory budget of 1073741824 bits") || !strings.Contains(e, "unchanged") {
		t.Fatalf("add of 72 copies: exit %d: %s", code, e)
	}
	// A scalable chain, which has no budget of its own, gets the memory.
	f, err := scalable.New(scalable.Config{Capacity: 100, FPR: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	setMemoryBudget(f)
	if got := f.MaxBits(); got != 8<<40 {
		t.Errorf("scalable budget %d, want %d", got, uint64(8<<40))
	}
}

// Extreme sizes are refused with a usage error before anything is
// allocated, never wrapped: -n 2^64 − 1 with buckets of one slot became
// a filter of one bucket (RedisBloom's next power of two wraps to 0).
func TestCuckooExtremeArguments(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, a := range [][]string{
		{"-profile", "redisbloom", "-bucket-size", "1", "-n", "18446744073709551615"},
		{"-profile", "redisbloom", "-bucket-size", "1", "-n", "9223372036854775809"},
		{"-profile", "redisbloom", "-n", "1000", "-expansion", "32769"},
		{"-profile", "redisbloom", "-n", "1000", "-expansion", "2147483648"},
		{"-profile", "redisbloom", "-n", "1000", "-expansion", "9223372036854775807"},
		{"-n", "1000", "-expansion", "2147483648"},
		{"-n", "1000", "-expansion", "-1"},
	} {
		args := append(append([]string{"build", "-kind", "cuckoo"}, a...), "-o", "z.blf", "-")
		if _, e, code := invoke(args, "k\n"); code != 2 {
			t.Errorf("%v: exit %d: %s", a, code, e)
		}
	}
	if _, err := os.Stat("z.blf"); err == nil {
		t.Error("a refused build wrote its output")
	}
}

// A cuckoo filter's capacity survives export and import in the
// redisbloom format (BLRD version 2 carries it; CF.SCANDUMP's header
// does not): build -n 600 gave 600, the import 1024 (the slots), and a
// filter holding more keys than its capacity lost the warning. A
// version-1 file, as older builds exported, still imports, with the
// slots as its capacity.
func TestCuckooCapacityRoundTrip(t *testing.T) {
	t.Chdir(t.TempDir())
	var keys strings.Builder
	for i := 0; i < 700; i++ {
		fmt.Fprintf(&keys, "key%d\n", i)
	}
	os.WriteFile("keys.txt", []byte(keys.String()), 0o644)
	// 256 buckets of 4 (1024 slots) for a capacity of 600: 700 keys fit.
	_, e, code := invoke([]string{"build", "-kind", "cuckoo", "-profile", "redisbloom", "-n", "600", "-bucket-size", "4", "-max-kicks", "500", "-o", "c.blf", "keys.txt"}, "")
	if code != 0 || !strings.Contains(e, "more than the 600 it was sized for") {
		t.Fatalf("build: exit %d: %s", code, e)
	}
	for _, args := range [][]string{
		{"export", "-format", "redisbloom", "-o", "c.blrd", "c.blf"},
		{"import", "-format", "redisbloom", "-kind", "cuckoo", "-o", "d.blf", "c.blrd"},
		{"import", "-format", "redisbloom", "-o", "e.blf", "c.blrd"}, // detected
	} {
		if _, e, code := invoke(args, ""); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, e)
		}
	}
	info := func(file string) (capacity uint64, warned bool) {
		out, e, code := invoke([]string{"info", "-json", file}, "")
		var r struct {
			Capacity uint64
			Warnings []string
		}
		if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
			t.Fatalf("info %s: exit %d: %s", file, code, e)
		}
		return r.Capacity, len(r.Warnings) > 0
	}
	for _, f := range []string{"c.blf", "d.blf", "e.blf"} {
		if c, w := info(f); c != 600 || !w {
			t.Errorf("%s: capacity %d, over-capacity warning %v", f, c, w)
		}
	}
	b, _ := os.ReadFile("c.blrd")
	if binary.LittleEndian.Uint16(b[4:]) != 2 {
		t.Errorf("exported as version %d", binary.LittleEndian.Uint16(b[4:]))
	}
	// The version-1 file of the cuckoo package's tests: capacity = slots.
	old, err := os.ReadFile(filepath.Join(testdataDir, "..", "..", "..", "cuckoo", "testdata", "cuckoo-redisbloom-v1.blrd"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile("old.blrd", old, 0o644)
	if _, e, code := invoke([]string{"import", "-format", "redisbloom", "-o", "old.blf", "old.blrd"}, ""); code != 0 {
		t.Fatalf("import of a version-1 file: exit %d: %s", code, e)
	}
	if c, _ := info("old.blf"); c != 480 {
		t.Errorf("version-1 file: capacity %d, want its 480 slots", c)
	}
}

// A build that fails on copies of one key in a cuckoo filter says to
// remove the repeated keys; it said "size for more keys with -n", which
// cannot help: every copy of a key takes a slot in the key's two buckets,
// whatever the filter's size. A build that fails on distinct keys keeps
// the -n hint.
func TestBuildCuckooRepeatsHint(t *testing.T) {
	t.Chdir(t.TempDir())
	defer func(f func() uint64) { memoryLimit = f }(memoryLimit)
	memoryLimit = func() uint64 { return 1 << 20 }
	for _, n := range []string{"1000", "1e5"} {
		_, e, code := invoke([]string{"build", "-kind", "cuckoo", "-n", n, "-expansion", "32768", "-o", "x.blf", "-"}, strings.Repeat("same\n", 20))
		if code != 1 || !strings.Contains(e, "repeat") || !strings.Contains(e, "sort -u") || strings.Contains(e, "with -n") {
			t.Errorf("-n %s, copies of one key: exit %d: %s", n, code, e)
		}
	}
	var keys strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&keys, "k%d\n", i)
	}
	_, e, code := invoke([]string{"build", "-kind", "dleft", "-n", "100", "-fpr", "0.01", "-stash-limit", "1", "-o", "d.blf", "-"}, keys.String())
	if code != 1 || !strings.Contains(e, "size for more keys with -n") || strings.Contains(e, "sort -u") {
		t.Errorf("dleft past its stash: exit %d: %s", code, e)
	}
}

// redis -h says what pull and push take: a cuckoo (CF) filter too, by
// CF.SCANDUMP and CF.LOADCHUNK. It named the BF commands and a scalable
// file only, though both move RedisBloom-profile cuckoo filters.
func TestRedisHelpNamesCuckoo(t *testing.T) {
	o, _, code := invoke([]string{"redis", "push", "-h"}, "")
	for _, want := range []string{"CF.SCANDUMP", "CF.LOADCHUNK", "CF.INFO", "-kind scalable|cuckoo -profile redisbloom", "bytes per BF.LOADCHUNK or CF.LOADCHUNK"} {
		if code != 0 || !strings.Contains(strings.Join(strings.Fields(o), " "), want) {
			t.Errorf("redis push -h (exit %d) does not say %q:\n%s", code, want, o)
		}
	}
}
