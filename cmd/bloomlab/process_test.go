package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestMain lets the test binary run as the command itself (for tests that
// need real, separate processes: concurrent writers, signals).
func TestMain(m *testing.M) {
	if os.Getenv("BLOOMLAB_AS_MAIN") == "1" {
		if os.Getenv("BLOOMLAB_PAUSE_BEFORE_RENAME") == "1" {
			beforeRename = func() {
				fmt.Fprintln(os.Stderr, "paused before rename")
				time.Sleep(time.Minute)
			}
		}
		main()
		return
	}
	os.Exit(m.Run())
}

// process returns a command running bloomlab with args in dir.
func process(dir string, env []string, args ...string) *exec.Cmd {
	c := exec.Command(os.Args[0], args...)
	c.Dir = dir
	c.Env = append(append(os.Environ(), "BLOOMLAB_AS_MAIN=1"), env...)
	return c
}

func writeKeys(t *testing.T, path, prefix string, n int) {
	t.Helper()
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%s-%d\n", prefix, i)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Two processes adding to one file at once both exit 0, and every key of
// both lists is in the file afterwards. Before writers were serialised,
// one list's keys were lost (11 of 11 runs): false negatives.
func TestConcurrentAddsLoseNothing(t *testing.T) {
	dir := t.TempDir()
	for _, kindName := range []string{"bloom", "counting", "blocked"} {
		t.Run(kindName, func(t *testing.T) {
			f := kindName + ".blf"
			if out, err := process(dir, nil, "build", "-kind", kindName, "-n", "40000", "-fpr", "0.001", "-o", f, os.DevNull).CombinedOutput(); err != nil {
				t.Fatalf("build: %v: %s", err, out)
			}
			rounds := 6
			if testing.Short() {
				rounds = 3
			}
			var all []string
			for r := 0; r < rounds; r++ {
				var wg sync.WaitGroup
				errs := make([]error, 2)
				outs := make([][]byte, 2)
				for i, p := range []string{"a", "b"} {
					keys := filepath.Join(dir, fmt.Sprintf("%s-%s%d.txt", kindName, p, r))
					writeKeys(t, keys, fmt.Sprintf("%s%d", p, r), 2000)
					all = append(all, keys)
					wg.Add(1)
					go func(i int, keys string) {
						defer wg.Done()
						outs[i], errs[i] = process(dir, nil, "add", f, keys).CombinedOutput()
					}(i, keys)
				}
				wg.Wait()
				for i := range errs {
					if errs[i] != nil {
						t.Fatalf("round %d: add %d: %v: %s", r, i, errs[i], outs[i])
					}
				}
			}
			out, err := process(dir, nil, append([]string{"query", "-v", "-c", f}, all...)...).Output()
			if got := strings.TrimSpace(string(out)); got != "0" {
				t.Fatalf("%s absent keys after concurrent adds (err %v): false negatives", got, err)
			}
		})
	}
}

// remove and merge -o onto an existing file serialise with add too.
func TestConcurrentRemoveAndMerge(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		if out, err := process(dir, nil, args...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v: %s", args, err, out)
		}
	}
	writeKeys(t, filepath.Join(dir, "base.txt"), "base", 3000)
	writeKeys(t, filepath.Join(dir, "gone.txt"), "gone", 3000)
	writeKeys(t, filepath.Join(dir, "new.txt"), "new", 3000)
	writeKeys(t, filepath.Join(dir, "other.txt"), "other", 3000)
	run("build", "-kind", "counting", "-n", "20000", "-fpr", "0.001", "-o", "c.blf", "base.txt", "gone.txt")
	run("build", "-kind", "bloom", "-n", "20000", "-fpr", "0.001", "-o", "x.blf", "base.txt")
	run("build", "-kind", "bloom", "-n", "20000", "-fpr", "0.001", "-o", "y.blf", "other.txt")
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	for _, args := range [][]string{
		{"remove", "c.blf", "gone.txt"}, {"add", "c.blf", "new.txt"},
		{"merge", "-o", "x.blf", "x.blf", "y.blf"}, {"add", "x.blf", "new.txt"},
	} {
		wg.Add(1)
		go func(args []string) {
			defer wg.Done()
			if out, err := process(dir, nil, args...).CombinedOutput(); err != nil {
				mu.Lock()
				failures = append(failures, fmt.Sprintf("%v: %v: %s", args, err, out))
				mu.Unlock()
			}
		}(args)
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Fatal(failures)
	}
	for f, files := range map[string][]string{
		"c.blf": {"base.txt", "new.txt"},
		"x.blf": {"base.txt", "other.txt", "new.txt"},
	} {
		out, _ := process(dir, nil, append([]string{"query", "-v", "-c", f}, files...)...).Output()
		if got := strings.TrimSpace(string(out)); got != "0" {
			t.Errorf("%s: %s keys absent after concurrent writers: lost update", f, got)
		}
	}
}

// SIGTERM (or SIGINT) while a write is in flight leaves the target as it
// was and no temporary file behind, and exits 128 + signal.
func TestInterruptedWriteLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	writeKeys(t, filepath.Join(dir, "keys.txt"), "k", 1000)
	writeKeys(t, filepath.Join(dir, "more.txt"), "m", 1000)
	if out, err := process(dir, nil, "build", "-kind", "bloom", "-fpr", "0.01", "-o", "f.blf", "keys.txt").CombinedOutput(); err != nil {
		t.Fatalf("build: %v: %s", err, out)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "f.blf"))
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		c := process(dir, []string{"BLOOMLAB_PAUSE_BEFORE_RENAME=1"}, "add", "f.blf", "more.txt")
		stderr, _ := c.StderrPipe()
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stderr)
		for sc.Scan() && !strings.Contains(sc.Text(), "paused before rename") {
		}
		temps, _ := filepath.Glob(filepath.Join(dir, ".f.blf.tmp-*"))
		if len(temps) != 1 {
			t.Fatalf("%v: %d temporary files while paused, want 1", sig, len(temps))
		}
		c.Process.Signal(sig)
		err := c.Wait()
		if code := c.ProcessState.ExitCode(); code != 128+int(sig) {
			t.Errorf("%v: exit %d (%v), want %d", sig, code, err, 128+int(sig))
		}
		if temps, _ := filepath.Glob(filepath.Join(dir, ".f.blf.tmp-*")); len(temps) != 0 {
			t.Errorf("%v: temporary files left: %v", sig, temps)
		}
		if after, _ := os.ReadFile(filepath.Join(dir, "f.blf")); !bytes.Equal(before, after) {
			t.Errorf("%v: the target changed although the write was interrupted", sig)
		}
	}
}

// A temporary file left by a killed writer (kill -9: no handler runs) is
// removed by the next writer of the same file once it is stale, unless a
// live process holds its lock.
func TestStaleTempSwept(t *testing.T) {
	t.Chdir(t.TempDir())
	writeKeys(t, "keys.txt", "k", 100)
	if _, e, code := invoke([]string{"build", "-kind", "bloom", "-fpr", "0.01", "-o", "f.blf", "keys.txt"}, ""); code != 0 {
		t.Fatal(e)
	}
	old := time.Now().Add(-2 * staleAge)
	for _, name := range []string{".f.blf.tmp-dead", ".f.blf.tmp-live", ".f.blf.tmp-young", ".g.blf.tmp-other"} {
		os.WriteFile(name, []byte("partial"), 0o644)
		if name != ".f.blf.tmp-young" {
			os.Chtimes(name, old, old)
		}
	}
	live, err := os.Open(".f.blf.tmp-live")
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	if err := lock(live); err != nil {
		t.Fatal(err)
	}
	if _, e, code := invoke([]string{"add", "f.blf", "keys.txt"}, ""); code != 0 {
		t.Fatal(e)
	}
	for name, want := range map[string]bool{".f.blf.tmp-dead": false, ".f.blf.tmp-live": true, ".f.blf.tmp-young": true, ".g.blf.tmp-other": true} {
		if _, err := os.Stat(name); (err == nil) != want {
			t.Errorf("%s: exists = %v, want %v", name, err == nil, want)
		}
	}
}
