package main

import (
	"bytes"
	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/format"
	"github.com/bloomlab/bloomlab/internal/kind"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Regression tests for the defects an adversarial review of the command
// found (issue 10). Each failed before its fix.

// -h on every subcommand prints its usage and flags on stdout and exits 0
// (it printed "help requested" and exited 2).
func TestHelpFlagEverywhere(t *testing.T) {
	for _, c := range commands {
		args := []string{c.name, "-h"}
		if c.name == "simulate" {
			args = []string{c.name, "bloom", "-h"}
		}
		out, e, code := invoke(args, "")
		if code != 0 || e != "" || !strings.Contains(out, "usage:") && !strings.Contains(out, "bloomlab simulate") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, e)
		}
	}
	out, _, _ := invoke([]string{"build", "-h"}, "")
	for _, want := range []string{"-kind counting", "-counter-bits", "-kind scalable", "-expansion", "-n value", "byte-order mark"} {
		if !strings.Contains(out, want) {
			t.Errorf("build -h lacks %q", want)
		}
	}
}

// Counts accept 1e15 notation and the full integer; plan never allocates
// a structure, so huge n answers at once (it hung, or died out of memory).
func TestPlanHugeN(t *testing.T) {
	for _, n := range []string{"1e15", "1000000000000000", "20000000000", "18446744073709551615"} {
		out, e, code := invoke([]string{"plan", "-n", n, "-fpr", "0.01"}, "")
		if code != 0 || !strings.Contains(out, "recommendation:") {
			t.Errorf("plan -n %s: exit %d: %s %s", n, code, out, e)
		}
	}
	if _, e, code := invoke([]string{"plan", "-n", "1.5", "-fpr", "0.01"}, ""); code != 2 || !strings.Contains(e, "whole number") {
		t.Errorf("plan -n 1.5: exit %d %s", code, e)
	}
}

// build checks memory before allocating, for every kind (dlcbf did not):
// a structure larger than the machine is refused with what it would need,
// or, past a kind's own limits, refused as a parameter error; never an
// out-of-memory crash.
func TestBuildRefusesHugeFilters(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, k := range kind.Names() {
		_, e, code := invoke([]string{"build", "-kind", k, "-n", "1e12", "-fpr", "0.01", "-o", "x.blf", os.DevNull}, "")
		memory := code == 1 && strings.Contains(e, "of memory, more than the")
		limit := code == 2 && (strings.Contains(e, "2^") || strings.Contains(e, "holds at most"))
		capped := k == "countmin" || k == "sbbf" || k == "fuse" // kinds whose own limit comes first (sbbf: 2^31 − 1 blocks; fuse: 3.5·10^9 keys)
		if !capped && !memory || capped && !limit {
			t.Errorf("%s: exit %d: %s", k, code, e)
		}
	}
}

// build refuses to write over its own key file; -o - writes the filter to
// standard output; a UTF-8 BOM is not part of the first key.
func TestBuildOutputs(t *testing.T) {
	t.Chdir(t.TempDir())
	os.WriteFile("keys.txt", []byte("\xef\xbb\xbffirst\nsecond\r\n"), 0o644)
	if _, e, code := invoke([]string{"build", "-kind", "bloom", "-fpr", "0.01", "-o", "keys.txt", "keys.txt"}, ""); code != 2 || !strings.Contains(e, "refusing to overwrite") {
		t.Errorf("self-overwrite: exit %d %s", code, e)
	}
	os.Link("keys.txt", "alias.txt")
	if _, e, code := invoke([]string{"build", "-kind", "bloom", "-fpr", "0.01", "-o", "alias.txt", "keys.txt"}, ""); code != 2 || !strings.Contains(e, "same file") {
		t.Errorf("self-overwrite through a link: exit %d %s", code, e)
	}
	if b, _ := os.ReadFile("keys.txt"); !bytes.HasPrefix(b, []byte("\xef\xbb\xbffirst")) {
		t.Fatal("the key file changed")
	}
	out, e, code := invoke([]string{"build", "-kind", "bloom", "-fpr", "0.01", "-o", "-", "keys.txt"}, "")
	if code != 0 || !strings.HasPrefix(out, "BLMF") {
		t.Fatalf("-o -: exit %d, %q %s", code, out[:min(len(out), 8)], e)
	}
	if _, err := os.Stat("-"); err == nil {
		t.Error("-o - created a file named -")
	}
	os.WriteFile("f.blf", []byte(out), 0o644)
	if out, _, _ := invoke([]string{"query", "f.blf"}, "first\nsecond\n"); out != "first\nsecond\n" {
		t.Errorf("BOM: query = %q", out)
	}
}

// Rounding and capacity are said on stderr.
func TestBuildNotices(t *testing.T) {
	t.Chdir(t.TempDir())
	writeKeys(t, "keys.txt", "k", 100)
	writeKeys(t, "more.txt", "m", 100)
	_, e, code := invoke([]string{"build", "-kind", "partitioned", "-m", "1001", "-k", "4", "-o", "p.blf", "keys.txt"}, "")
	if code != 0 || !strings.Contains(e, "m rounded up from 1001 to 1004") {
		t.Errorf("-m rounding: exit %d: %q", code, e)
	}
	if _, e, code := invoke([]string{"build", "-kind", "bloom", "-fpr", "0.01", "-o", "b.blf", "keys.txt"}, ""); code != 0 || e != "" {
		t.Fatalf("build: %d %s", code, e)
	}
	_, e, code = invoke([]string{"add", "b.blf", "more.txt"}, "")
	if code != 0 || !strings.Contains(e, "holds 200 keys, more than the 100 it was sized for") {
		t.Errorf("past capacity: exit %d: %q", code, e)
	}
	out, _, _ := invoke([]string{"info", "b.blf"}, "")
	if !strings.Contains(out, "warning:") {
		t.Errorf("info does not warn past capacity:\n%s", out)
	}
}

// remove -ignore-missing is loud: skipping keys the filter proves absent
// means the key list holds keys that were never added, which is how
// removals cause false negatives.
func TestRemoveIgnoreMissingWarns(t *testing.T) {
	t.Chdir(t.TempDir())
	writeKeys(t, "keys.txt", "k", 100)
	writeKeys(t, "never.txt", "never", 100)
	invoke([]string{"build", "-kind", "counting", "-fpr", "0.01", "-o", "c.blf", "keys.txt"}, "")
	_, e, code := invoke([]string{"remove", "-ignore-missing", "c.blf", "never.txt"}, "")
	if code != 0 || !strings.Contains(e, "WARNING") || !strings.Contains(e, "false negatives") {
		t.Errorf("exit %d: %q", code, e)
	}
	out, _, _ := invoke([]string{"help", "remove"}, "")
	if !strings.Contains(strings.Join(strings.Fields(out), " "), "only keys that were added") {
		t.Errorf("help remove does not state the precondition:\n%s", out)
	}
}

// Errors name the file written, never the temporary file.
func TestWriteErrorsNameTarget(t *testing.T) {
	t.Chdir(t.TempDir())
	writeKeys(t, "keys.txt", "k", 10)
	_, e, code := invoke([]string{"build", "-kind", "bloom", "-fpr", "0.01", "-o", "nodir/x.blf", "keys.txt"}, "")
	if code != 1 || !strings.Contains(e, "nodir/x.blf") || strings.Contains(e, ".tmp-") {
		t.Errorf("exit %d: %q", code, e)
	}
}

// Defects of the second review (adversarial user, issue 10).

// -o naming a FIFO is refused at once (it waited forever for a writer).
func TestOutputFIFORefused(t *testing.T) {
	t.Chdir(t.TempDir())
	writeKeys(t, "keys.txt", "k", 10)
	if err := syscall.Mkfifo("fifo", 0o644); err != nil {
		t.Skip(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, args := range [][]string{
			{"build", "-kind", "bloom", "-fpr", "0.01", "-o", "fifo", "keys.txt"},
			{"add", "fifo", "keys.txt"},
			{"query", "fifo", "keys.txt"},
		} {
			if _, e, code := invoke(args, ""); code == 0 || !strings.Contains(e, "not a regular file") {
				t.Errorf("%v: exit %d: %s", args, code, e)
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("a FIFO as a filter file blocked the command")
	}
}

// Standard input that is the -o file is refused (the key file was
// replaced by the filter); export refuses to write over its input.
func TestOutputIsInputThroughStdin(t *testing.T) {
	t.Chdir(t.TempDir())
	writeKeys(t, "keys.txt", "k", 50)
	in, err := os.Open("keys.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var o, e bytes.Buffer
	code := exitCode(run([]string{"build", "-kind", "bloom", "-fpr", "0.01", "-n", "50", "-o", "keys.txt"}, in, &o, &e))
	if code != 2 || !strings.Contains(e.String(), "standard input") {
		t.Errorf("exit %d: %s", code, e.String())
	}
	if b, _ := os.ReadFile("keys.txt"); !strings.HasPrefix(string(b), "k-0\n") {
		t.Fatal("the key file was overwritten")
	}
	invoke([]string{"build", "-kind", "scalable", "-profile", "redisbloom", "-fpr", "0.01", "-o", "s.blf", "keys.txt"}, "")
	if _, e, code := invoke([]string{"export", "-format", "redisbloom", "-o", "s.blf", "s.blf"}, ""); code != 2 {
		t.Errorf("export -o IN IN: exit %d: %s", code, e)
	}
}

// A rate given as 0 is refused, not read as "no rate".
func TestZeroRateRefused(t *testing.T) {
	t.Chdir(t.TempDir())
	writeKeys(t, "keys.txt", "k", 50)
	for _, k := range []string{"bloom", "scalable"} {
		if _, e, code := invoke([]string{"build", "-kind", k, "-fpr", "0", "-o", "x.blf", "keys.txt"}, ""); code != 2 || !strings.Contains(e, "-fpr 0 out of range") {
			t.Errorf("%s -fpr 0: exit %d: %s", k, code, e)
		}
	}
}

// Rewriting a file with other hard links warns that they keep the old
// filter; writing through a dangling symbolic link creates its target.
func TestLinks(t *testing.T) {
	t.Chdir(t.TempDir())
	writeKeys(t, "keys.txt", "k", 50)
	invoke([]string{"build", "-kind", "bloom", "-fpr", "0.01", "-o", "a.blf", "keys.txt"}, "")
	os.Link("a.blf", "b.blf")
	if _, e, code := invoke([]string{"add", "a.blf", "keys.txt"}, ""); code != 0 || !strings.Contains(e, "2 hard links") {
		t.Errorf("add to a hard-linked file: exit %d: %q", code, e)
	}
	os.Symlink("target.blf", "link.blf")
	if _, e, code := invoke([]string{"build", "-kind", "bloom", "-fpr", "0.01", "-o", "link.blf", "keys.txt"}, ""); code != 0 {
		t.Fatalf("build through a dangling link: exit %d: %s", code, e)
	}
	if st, err := os.Lstat("link.blf"); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Error("the link was replaced")
	}
	if _, err := os.Stat("target.blf"); err != nil {
		t.Errorf("target not created: %v", err)
	}
}

// An interruption after the rename says what was written ("nothing
// written" was printed for a file that had been written).
func TestInterruptMessage(t *testing.T) {
	defer func(w []string, f map[string]bool) { written, tmpFiles = w, f }(written, tmpFiles)
	written, tmpFiles = nil, map[string]bool{}
	if got := interrupted(); got != "nothing was being written" {
		t.Errorf("idle: %q", got)
	}
	tmpMu.Unlock()
	tmpFiles["/nonexistent/.x.tmp-1"] = true
	if got := interrupted(); got != "nothing written" {
		t.Errorf("temp in flight: %q", got)
	}
	tmpMu.Unlock()
	written = []string{"f.blf"}
	if got := interrupted(); got != "f.blf written before the interruption" {
		t.Errorf("after the rename: %q", got)
	}
	tmpMu.Unlock()
}

// A sparse file claiming a 512 GiB filter (8 KiB on disk) is refused with
// a message; loading it used to end the process out of memory.
func TestSparseFileRefused(t *testing.T) {
	t.Chdir(t.TempDir())
	var b bytes.Buffer
	var p format.Params
	const m = 1 << 42 // bits
	p.U64(m)
	p.U32(7)
	p.U64(0)
	p.U64(0)
	e := format.NewEncoder(&b)
	e.Begin(format.Header{Kind: format.KindBloom, Scheme: uint8(hashing.Enhanced), PayloadLen: m / 8}, p.Bytes())
	if err := os.WriteFile("big.blf", b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate("big.blf", int64(b.Len())+m/8+4); err != nil {
		t.Skip("no sparse files here:", err)
	}
	for _, args := range [][]string{{"info", "big.blf"}, {"query", "big.blf"}, {"add", "big.blf"}} {
		_, e, code := invoke(args, "x\n")
		if code == 0 || !strings.Contains(e, "more memory than") {
			t.Errorf("%v: exit %d: %s", args, code, e)
		}
	}
}
