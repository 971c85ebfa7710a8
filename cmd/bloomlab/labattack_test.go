package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bloomlab/bloomlab/cmd/bloomlab/internal/lab"
)

// Regression tests for the defects a hostile review of reproduce and
// simulate found (h18). Each failed before its fix.

// An unusable -markdown or -plot destination is refused before the run,
// with nothing printed to stdout: it used to be found only after the run
// (19 minutes for reproduce all), whose results were then lost.
func TestReproduceOutputsCheckedFirst(t *testing.T) {
	t.Chdir(t.TempDir())
	os.WriteFile("file", []byte("x"), 0o644)
	os.Mkdir("dir", 0o755)
	os.Symlink("dir", "dirlink")
	os.Symlink("loop2", "loop1")
	os.Symlink("loop1", "loop2")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-markdown", "missing/x.md"}, "missing/x.md"},
		{[]string{"-markdown", "dir"}, "not a regular file"},
		{[]string{"-markdown", "dirlink"}, "not a regular file"},
		{[]string{"-markdown", "loop1"}, "symbolic links"},
		{[]string{"-markdown", "file/x.md"}, "file/x.md"},
		{[]string{"-plot", "file"}, "file"},
		{[]string{"-plot", "file/sub"}, "file/sub"},
	} {
		args := append([]string{"reproduce", "notes/example"}, tc.args...)
		o, e, code := invoke(args, "")
		if code == 0 || o != "" || !strings.Contains(e, tc.want) {
			t.Errorf("%v: exit %d, stdout %d bytes, stderr %q (want it to name %q)", tc.args, code, len(o), e, tc.want)
		}
	}
	if ents, _ := os.ReadDir("dir"); len(ents) != 0 {
		t.Errorf("the checks left files: %v", ents)
	}
	// A -plot directory that does not exist yet is fine (it is created).
	if _, e, code := invoke([]string{"reproduce", "notes/example", "-plot", "new/plots", "-markdown", "new.md"}, ""); code != 0 {
		t.Errorf("new -plot directory: exit %d: %s", code, e)
	}
}

// The figures a -markdown document links exist, relative to the document,
// whatever mix of relative and absolute paths names them; without -plot
// there are no figures to link (it linked NAME.svg beside the document).
func TestMarkdownFigureLinksResolve(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	link := regexp.MustCompile(`!\[[^]]*\]\(([^)]*)\)`)
	for _, tc := range []struct{ md, plot string }{
		{"a/r.md", filepath.Join(dir, "p1")},
		{filepath.Join(dir, "b", "r.md"), "p2"},
		{"c/r.md", "c/../p3"},
		{"r.md", ""},
	} {
		os.MkdirAll(filepath.Dir(tc.md), 0o755)
		args := []string{"reproduce", "dleft/underloaded", "-quick", "-trials", "1", "-markdown", tc.md}
		if tc.plot != "" {
			args = append(args, "-plot", tc.plot)
		}
		if _, e, code := invoke(args, ""); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, e)
		}
		b, err := os.ReadFile(tc.md)
		if err != nil {
			t.Fatal(err)
		}
		links := link.FindAllStringSubmatch(string(b), -1)
		if tc.plot == "" {
			if len(links) != 0 {
				t.Errorf("no -plot: the document links %v", links)
			}
			continue
		}
		if len(links) == 0 {
			t.Errorf("%s: no figure linked", tc.md)
		}
		for _, l := range links {
			if filepath.IsAbs(l[1]) {
				t.Errorf("%s: absolute link %s", tc.md, l[1])
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(tc.md), filepath.FromSlash(l[1]))); err != nil {
				t.Errorf("%s -plot %s: link %s does not resolve: %v", tc.md, tc.plot, l[1], err)
			}
		}
	}
}

// An interruption while a progress line is on the terminal erases it
// before its message: "bloomlab: interrupted …" was appended to the
// progress text on the same line.
func TestInterruptErasesProgress(t *testing.T) {
	defer func(w []string, f map[string]bool) { written, tmpFiles = w, f }(written, tmpFiles)
	written, tmpFiles = nil, map[string]bool{}
	var b bytes.Buffer
	clk := &fakeClock{t: time.Unix(1000, 0)}
	p := newProgressLine(&b, "x/y", clk.now)
	clk.advance(progressInterval)
	p.update(lab.RunProgress{Done: 1, Total: 2, Rows: 1})
	if !strings.Contains(b.String(), "x/y 50%") {
		t.Fatalf("no progress drawn: %q", b.String())
	}
	msg, code := interruptNotice(syscall.SIGINT)
	tmpMu.Unlock()
	if code != 130 || !strings.HasPrefix(msg, "bloomlab: interrupted by interrupt;") {
		t.Errorf("notice %q, code %d", msg, code)
	}
	if !strings.HasSuffix(b.String(), "\r\033[K") {
		t.Errorf("the progress line was not erased: %q", b.String())
	}
	// Drawn and cleared lines are forgotten: nothing more is written.
	n := b.Len()
	p.clear()
	interruptNotice(syscall.SIGINT)
	tmpMu.Unlock()
	if b.Len() != n {
		t.Errorf("wrote %q after the line was erased", b.String()[n:])
	}
}

// A read-only file is not replaced, as a plain write would not replace it
// (the rename of the temporary file needs only the directory's
// permission, so chmod a-w protected nothing); reproduce refuses it before
// the run. Root writes anyway, as with a plain write.
func TestReadOnlyFileNotReplaced(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may write read-only files")
	}
	t.Chdir(t.TempDir())
	os.WriteFile("keep.md", []byte("precious"), 0o444)
	o, e, code := invoke([]string{"reproduce", "notes/example", "-markdown", "keep.md"}, "")
	if code == 0 || o != "" || !strings.Contains(e, "keep.md: permission denied") {
		t.Errorf("exit %d, stdout %d bytes, stderr %q", code, len(o), e)
	}
	err := writeFileAtomic("keep.md", func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err })
	if err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("writeFileAtomic: %v", err)
	}
	if b, _ := os.ReadFile("keep.md"); string(b) != "precious" {
		t.Errorf("the read-only file now holds %q", b)
	}
}

// Every figure docs/RESULTS.md links is a file under docs/results/, and
// every SVG there is linked.
func TestResultsDocFigures(t *testing.T) {
	docs := filepath.Join("..", "..", "docs")
	b, err := os.ReadFile(filepath.Join(docs, "RESULTS.md"))
	if err != nil {
		t.Skip(err)
	}
	linked := map[string]bool{}
	for _, l := range regexp.MustCompile(`!\[[^]]*\]\(([^)]*)\)`).FindAllStringSubmatch(string(b), -1) {
		if !strings.HasPrefix(l[1], "results/") {
			t.Errorf("figure %s is not under docs/results/", l[1])
		}
		if _, err := os.Stat(filepath.Join(docs, filepath.FromSlash(l[1]))); err != nil {
			t.Errorf("figure link %s: %v", l[1], err)
		}
		linked[l[1]] = true
	}
	svgs, _ := filepath.Glob(filepath.Join(docs, "results", "*.svg"))
	for _, f := range svgs {
		if rel := "results/" + filepath.Base(f); !linked[rel] {
			t.Errorf("docs/%s is linked from nowhere in RESULTS.md", rel)
		}
	}
	if len(linked) == 0 {
		t.Error("RESULTS.md links no figure")
	}
}

// -seed takes any 64-bit value in decimal, 1e6 notation or 0x hex, and
// its errors name the range (they said "parse error").
func TestSeedFlag(t *testing.T) {
	run := func(seed string) (string, string, int) {
		return invoke([]string{"reproduce", "notes/example", "-seed", seed, "-format", "json"}, "")
	}
	o16, _, code := run("16")
	if code != 0 {
		t.Fatalf("-seed 16: exit %d", code)
	}
	if o, e, code := run("0x10"); code != 0 || o != o16 {
		t.Errorf("-seed 0x10: exit %d, %s; want the output of -seed 16", code, e)
	}
	if _, e, code := run("1e3"); code != 0 {
		t.Errorf("-seed 1e3: exit %d: %s", code, e)
	}
	for _, bad := range []string{"-1", "0xzz", "18446744073709551616", "1.5", ""} {
		if _, e, code := run(bad); code == 0 || !strings.Contains(e, "[0, 2^64 − 1]") {
			t.Errorf("-seed %q: exit %d, stderr %q: want a usage error naming the range", bad, code, e)
		}
	}
}

// The command a -markdown document quotes runs as written: arguments that
// a shell would split or expand are quoted.
func TestShellJoin(t *testing.T) {
	got := shellJoin([]string{"all", "-markdown", "my results.md", "-plot", "it's", "", "docs/results"})
	want := `all -markdown 'my results.md' -plot 'it'\''s' '' docs/results`
	if got != want {
		t.Errorf("shellJoin = %s, want %s", got, want)
	}
}
