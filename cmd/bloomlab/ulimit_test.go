package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestStaticBuildUlimit: a static build from a pipe under ulimit -v (1, 2
// and 4 GiB) either builds a filter holding its keys (exit 0) or stops
// with the budget's error, nothing written (exit 1), never with Go's fatal
// out-of-memory error (exit 2). The budget compared the live bytes with
// the address-space limit, but Go's reservations take about 1 GiB of it
// at start, and the growing slice of hashes left its old arrays' address
// space behind: at 2 GiB both kinds died with "fatal error: out of
// memory" in growslice. The command runs as a binary built here without
// the race detector (whose shadow memory a limit on address space cannot
// hold), from a key file through cat, so that its input is a pipe.
func TestStaticBuildUlimit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command and 12 million keys (about 30 s)")
	}
	if runtime.GOOS != "linux" {
		t.Skip("ulimit -v, /proc: Linux")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bloomlab")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	const n = 12_000_000
	keys := filepath.Join(dir, "keys.txt")
	f, err := os.Create(keys)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(w, "k-%d\n", i)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, k := range staticKinds {
		for _, gib := range []int{1, 2, 4} {
			out := filepath.Join(dir, fmt.Sprintf("%s-%d.blf", k, gib))
			script := fmt.Sprintf("ulimit -v %d && cat %s | %s build -kind %s -fpr 0.004 -o %s", gib<<20, keys, bin, k, out)
			c := exec.Command("bash", "-c", script)
			msg, err := c.CombinedOutput()
			code := c.ProcessState.ExitCode()
			t.Logf("%s at %d GiB: exit %d: %.200s", k, gib, code, msg)
			switch {
			case strings.Contains(string(msg), "fatal error") || strings.Contains(string(msg), "runtime:"):
				t.Errorf("%s at %d GiB: the runtime's error: exit %d: %.500s", k, gib, code, msg)
			case code == 0:
				// A few keys are present (query reads them from a pipe).
				q := exec.Command(bin, "query", "-c", out, "-")
				q.Stdin = strings.NewReader("k-1\nk-5000000\nk-12000000\n")
				if got, err := q.Output(); err != nil || string(got) != "3\n" {
					t.Errorf("%s at %d GiB: query -c = %q, %v: false negatives", k, gib, got, err)
				}
			case code == 1 && strings.Contains(string(msg), "memory budget") && strings.Contains(string(msg), "nothing written"):
				if _, err := os.Stat(out); err == nil {
					t.Errorf("%s at %d GiB: a refused build wrote %s", k, gib, out)
				}
			default:
				t.Errorf("%s at %d GiB: exit %d (%v): %.500s", k, gib, code, err, msg)
			}
		}
	}
}
