package main

import (
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
