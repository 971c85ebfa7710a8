package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
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
