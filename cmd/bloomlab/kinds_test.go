package main

import (
	"slices"

	"fmt"
	"github.com/bloomlab/bloomlab/internal/kind"
	"os"
	"strings"
	"testing"
)

// TestEveryKind builds each kind from a key file, then checks query (no
// false negatives, -c, -v), info (text and JSON), add, and for the
// removable kinds remove — through the command, in process. A static kind
// (fuse, ribbon) refuses add, remove and merge with the error that says
// it is static and how to rebuild it (kind.ErrStatic), its file
// unchanged.
func TestEveryKind(t *testing.T) {
	t.Chdir(t.TempDir())
	var keys, more strings.Builder
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&keys, "key-%d\n", i)
		fmt.Fprintf(&more, "more-%d\n", i)
	}
	os.WriteFile("keys.txt", []byte(keys.String()), 0o644)
	os.WriteFile("more.txt", []byte(more.String()), 0o644)
	cases := []struct {
		kind   string
		args   []string
		remove bool
		static bool
	}{
		{"bloom", []string{"-fpr", "0.01"}, false, false},
		{"partitioned", []string{"-bits-per-key", "10"}, false, false},
		{"counting", []string{"-fpr", "0.01"}, true, false},
		{"blocked", []string{"-fpr", "0.01"}, false, false},
		{"sbbf", []string{"-fpr", "0.01"}, false, false},
		{"choices", []string{"-fpr", "0.01", "-c", "2"}, false, false},
		{"dlcbf", []string{"-fpr", "0.01", "-n", "4000"}, true, false},
		{"dleft", []string{"-bits-per-key", "16", "-n", "4000"}, false, false},
		{"countmin", []string{"-eps", "0.001", "-delta", "0.01"}, false, false},
		{"scalable", []string{"-fpr", "0.01", "-n", "500"}, false, false},
		{"cuckoo", []string{"-fpr", "0.01", "-n", "4000"}, true, false},
		{"fuse", []string{"-fpr", "0.01"}, false, true},
		{"ribbon", []string{"-fpr", "0.01"}, false, true},
	}
	for _, name := range kind.Names() {
		if !slices.ContainsFunc(cases, func(c struct {
			kind   string
			args   []string
			remove bool
			static bool
		}) bool {
			return c.kind == name
		}) {
			t.Errorf("kind %s is registered but not tested here", name)
		}
	}
	for _, c := range cases {
		file := c.kind + ".blf"
		args := append([]string{"build", "-kind", c.kind, "-o", file}, c.args...)
		if _, e, code := invoke(append(args, "keys.txt"), ""); code != 0 {
			t.Fatalf("%s: build exit %d: %s", c.kind, code, e)
		}
		if out, e, code := invoke([]string{"query", "-c", file, "keys.txt"}, ""); code != 0 || out != "2000\n" {
			t.Fatalf("%s: query -c = %q, exit %d, %s: false negatives", c.kind, out, code, e)
		}
		if out, _, code := invoke([]string{"query", "-v", "-c", file, "keys.txt"}, ""); code != 1 || out != "0\n" {
			t.Fatalf("%s: query -v -c = %q, exit %d", c.kind, out, code)
		}
		if out, e, code := invoke([]string{"info", file}, ""); code != 0 || !strings.Contains(out, c.kind) || strings.Count(out, "\n") < 12 {
			t.Fatalf("%s: info exit %d: %s %s", c.kind, code, out, e)
		}
		if out, e, code := invoke([]string{"info", "-json", file}, ""); code != 0 || !strings.HasPrefix(out, "{") {
			t.Fatalf("%s: info -json exit %d: %s %s", c.kind, code, out, e)
		}
		if c.static {
			before, _ := os.ReadFile(file)
			for _, args := range [][]string{{"add", file, "more.txt"}, {"remove", file, "keys.txt"}, {"merge", "-o", "m.blf", file, file}} {
				_, e, code := invoke(args, "")
				if code != 1 || !strings.Contains(e, "is static") || !strings.Contains(e, "rebuild it from all the keys (bloomlab build -kind "+c.kind) {
					t.Fatalf("%s: %v on a static filter: exit %d, %q; want exit 1 and the static error", c.kind, args, code, e)
				}
			}
			if after, _ := os.ReadFile(file); string(after) != string(before) {
				t.Fatalf("%s: a refused add, remove or merge changed the file", c.kind)
			}
			if _, err := os.Stat("m.blf"); err == nil {
				t.Fatalf("%s: a refused merge wrote its output", c.kind)
			}
			if out, _, _ := invoke([]string{"query", "-c", file, "keys.txt"}, ""); out != "2000\n" {
				t.Fatalf("%s: after the refused changes, query -c = %q", c.kind, out)
			}
			continue
		}
		if _, e, code := invoke([]string{"add", file, "more.txt"}, ""); code != 0 {
			t.Fatalf("%s: add exit %d: %s", c.kind, code, e)
		}
		if out, _, _ := invoke([]string{"query", "-c", file, "keys.txt", "more.txt"}, ""); out != "4000\n" {
			t.Fatalf("%s: after add, query -c = %q", c.kind, out)
		}
		_, e, code := invoke([]string{"remove", file, "more.txt"}, "")
		if c.remove {
			if code != 0 {
				t.Fatalf("%s: remove exit %d: %s", c.kind, code, e)
			}
			if out, _, _ := invoke([]string{"query", "-c", file, "keys.txt"}, ""); out != "2000\n" {
				t.Fatalf("%s: after remove, query -c = %q: false negatives", c.kind, out)
			}
		} else if code != 1 {
			t.Fatalf("%s: remove on a kind without remove: exit %d, want 1", c.kind, code)
		}
	}
}
