package docs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"go/scanner"
	"go/token"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bloomlab/bloomlab/internal/redistest"
)

// skips are the commands of the docs that the test does not run, each with
// its reason. An entry names the page and the command's beginning as
// written (before any substitution); one that matches no command fails the
// test.
var skips = []struct{ page, prefix, reason string }{
	{"README.md", "go test ./...", "the test suite, which includes this test"},
	{"README.md", "go install ./cmd/bloomlab", "the test has built bloomlab from this tree and put it first on PATH"},
	{"docs/LAB.md", "go install ./cmd/bloomlab", "the test has built bloomlab from this tree and put it first on PATH"},
}

// rewrites are substitutions the test makes in every command, with their
// reason. Each must apply somewhere.
var rewrites = []struct{ old, new, reason string }{
	{"go run ./cmd/bloomlab ", "bloomlab ", "the same program, built once by the test from this tree (go run needs the repository as its directory)"},
}

// docPorts are the ports the docs use (see the package doc); the test maps
// each to a free port of its own per page.
var docPorts = regexp.MustCompile(`\b638[0-9]\b`)

// commandTimeout bounds one command: a hang guard, not a speed test.
const commandTimeout = 3 * time.Minute

type replacement struct {
	old, new, reason string
	line             int
}

type block struct {
	page     string // "README.md", "docs/SERVER.md"
	line     int    // the opening fence's line
	lang     string
	lines    []string
	replaces []replacement
}

func (b block) where() string { return fmt.Sprintf("%s:%d", b.page, b.line) }

var (
	fenceRE     = regexp.MustCompile("^( *)(```+|~~~+)\\s*([^\\s`]*)")
	directiveRE = regexp.MustCompile(`^\s*<!--\s*doctest:\s*(.*?)\s*-->\s*$`)
)

// parsePage returns the fenced blocks of a Markdown page.
func parsePage(page string, data []byte) ([]block, error) {
	var blocks []block
	var pending []replacement
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if m := directiveRE.FindStringSubmatch(l); m != nil {
			r, err := parseDirective(m[1])
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %v", page, i+1, err)
			}
			r.line = i + 1
			pending = append(pending, r)
			continue
		}
		m := fenceRE.FindStringSubmatch(l)
		if m == nil {
			if strings.TrimSpace(l) != "" && len(pending) > 0 {
				return nil, fmt.Errorf("%s:%d: a doctest directive must be followed by a code block", page, pending[0].line)
			}
			continue
		}
		indent, fence := len(m[1]), m[2]
		b := block{page: page, line: i + 1, lang: strings.ToLower(m[3]), replaces: pending}
		pending = nil
		closed := false
		for i++; i < len(lines); i++ {
			c := lines[i]
			t := strings.TrimLeft(c, " ")
			if strings.HasPrefix(t, fence) && strings.TrimSpace(strings.TrimLeft(t, fence[:1])) == "" {
				closed = true
				break
			}
			for n := 0; n < indent && strings.HasPrefix(c, " "); n++ {
				c = c[1:]
			}
			b.lines = append(b.lines, c)
		}
		if !closed {
			return nil, fmt.Errorf("%s: unclosed code block", b.where())
		}
		blocks = append(blocks, b)
	}
	if len(pending) > 0 {
		return nil, fmt.Errorf("%s:%d: a doctest directive must be followed by a code block", page, pending[0].line)
	}
	return blocks, nil
}

// parseDirective parses `replace "OLD" "NEW" REASON`.
func parseDirective(s string) (replacement, error) {
	verb, rest, _ := strings.Cut(s, " ")
	if verb != "replace" {
		return replacement{}, fmt.Errorf("unknown doctest directive %q (want replace \"OLD\" \"NEW\" REASON)", verb)
	}
	var q [2]string
	for i := range q {
		rest = strings.TrimSpace(rest)
		p, err := strconv.QuotedPrefix(rest)
		if err != nil {
			return replacement{}, fmt.Errorf("doctest replace: want two quoted strings and a reason: %v", err)
		}
		q[i], _ = strconv.Unquote(p)
		rest = rest[len(p):]
	}
	reason := strings.TrimSpace(rest)
	if q[0] == "" || reason == "" {
		return replacement{}, errors.New("doctest replace: empty OLD string or no reason")
	}
	return replacement{old: q[0], new: q[1], reason: reason}, nil
}

func isShell(lang string) bool {
	switch lang {
	case "sh", "bash", "shell", "console":
		return true
	}
	return false
}

var looksRunnable = regexp.MustCompile(`^(\$ |bloomlab |redis-cli |go run )`)

// command is one shell command of a page.
type command struct {
	b          block
	line       int    // its line in the page
	text       string // as written, continuations joined
	run        string // after the substitutions
	want       []string
	exit       int
	background bool
	skip       string
}

func (c *command) where() string { return fmt.Sprintf("%s:%d", c.b.page, c.line) }

var exitRE = regexp.MustCompile(`^\[exit status (\d+)\]$`)

// commands splits a shell block into its commands.
func commands(b block) []*command {
	var out []*command
	transcript := len(b.lines) > 0 && strings.HasPrefix(b.lines[0], "$ ")
	var cur *command
	cont := false
	for i, l := range b.lines {
		line := b.line + 1 + i
		switch {
		case cont:
			cur.text += "\n" + l
		case transcript && strings.HasPrefix(l, "$ "):
			cur = &command{b: b, line: line, text: strings.TrimPrefix(l, "$ ")}
			out = append(out, cur)
		case transcript:
			cur.want = append(cur.want, strings.TrimRight(l, " \t"))
			continue
		case strings.TrimSpace(l) == "" || strings.HasPrefix(strings.TrimSpace(l), "#"):
			continue
		default:
			cur = &command{b: b, line: line, text: l}
			out = append(out, cur)
		}
		cont = strings.HasSuffix(l, `\`)
	}
	trim := func(l []string) []string {
		for len(l) > 0 && l[len(l)-1] == "" {
			l = l[:len(l)-1]
		}
		return l
	}
	for _, c := range out {
		c.want = trim(c.want)
		if n := len(c.want); n > 0 {
			if m := exitRE.FindStringSubmatch(c.want[n-1]); m != nil {
				c.exit, _ = strconv.Atoi(m[1])
				c.want = trim(c.want[:n-1])
			}
		}
		if len(c.want) == 0 {
			c.want = nil
		}
	}
	return out
}

// lint returns what a shell command as written does wrong.
func lint(c *command) []string {
	var bad []string
	t := stripComment(c.text)
	if strings.Contains(c.text, "6379") {
		bad = append(bad, "uses port 6379, where a reader's own Redis listens: use 6380")
	}
	if regexp.MustCompile(`\bredis-cli\b`).MatchString(t) && !regexp.MustCompile(`\bredis-cli\b.*\s-(p|u)\s`).MatchString(t) {
		bad = append(bad, "redis-cli without -p talks to port 6379: say redis-cli -p 6380")
	}
	if strings.Contains(t, "bloomlab serve") && !strings.Contains(t, "-addr") {
		bad = append(bad, "bloomlab serve without -addr listens on 6379: say -addr 127.0.0.1:6380")
	}
	if regexp.MustCompile(`\bredis-server\b`).MatchString(t) && !strings.Contains(t, "--port") {
		bad = append(bad, "redis-server without --port listens on 6379: say --port 6380")
	}
	for _, m := range regexp.MustCompile(`rediss?(\+cluster)?://(?:[^@/?\s']*@)?([^/?\s']+)`).FindAllStringSubmatch(t, -1) {
		for _, hp := range strings.Split(m[2], ",") {
			if h, _, _ := strings.Cut(hp, ":"); h != "127.0.0.1" && h != "localhost" {
				bad = append(bad, fmt.Sprintf("server %s: examples talk only to servers they start on 127.0.0.1 (show other forms in the text)", hp))
			}
		}
	}
	for _, f := range strings.FieldsFunc(t, func(r rune) bool { return r == ' ' || r == '=' || r == '\t' || r == '\n' }) {
		if strings.HasPrefix(f, "/") && !strings.HasPrefix(f, "/dev/") {
			bad = append(bad, fmt.Sprintf("absolute path %s: examples run in a scratch directory, without root", f))
		}
	}
	return bad
}

// stripComment drops a trailing "# …" comment (outside quotes) from a
// command, for the lint only.
func stripComment(s string) string {
	var q rune
	for i, r := range s {
		switch {
		case q != 0:
			if r == q {
				q = 0
			}
		case r == '\'' || r == '"':
			q = r
		case r == '#' && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t'):
			return s[:i]
		}
	}
	return s
}

// applyReplaces applies a block's directives to its lines (each must
// match).
func applyReplaces(b block) (block, []string) {
	var bad []string
	text := strings.Join(b.lines, "\n")
	for _, r := range b.replaces {
		if !strings.Contains(text, r.old) {
			bad = append(bad, fmt.Sprintf("%s:%d: doctest replace %q matches nothing in the block", b.page, r.line, r.old))
			continue
		}
		text = strings.ReplaceAll(text, r.old, r.new)
	}
	b.lines = strings.Split(text, "\n")
	return b, bad
}

// page is a Markdown page's examples.
type page struct {
	name     string
	shell    []*command
	goBlocks []block
	needs    []string // Redis tools
}

// loadPages parses README.md and docs/*.md, lints them, and resolves the
// skip list, the rewrites and the directives.
func loadPages(t *testing.T, root string) []*page {
	names := []string{"README.md"}
	more, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	for _, m := range more {
		names = append(names, "docs/"+filepath.Base(m))
	}
	usedSkip := make([]int, len(skips))
	usedRewrite := make([]int, len(rewrites))
	var pages []*page
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		blocks, err := parsePage(name, data)
		if err != nil {
			t.Error(err)
			continue
		}
		p := &page{name: name}
		for _, b := range blocks {
			if len(b.replaces) > 0 && !isShell(b.lang) && b.lang != "go" {
				t.Errorf("%s: doctest directive on a block that does not run (%q)", b.where(), b.lang)
			}
			for _, r := range b.replaces {
				t.Logf("%s: scaled: %q → %q: %s", b.where(), r.old, r.new, r.reason)
			}
			switch {
			case isShell(b.lang):
				p.shell = append(p.shell, shellCommands(t, p, b, usedSkip, usedRewrite)...)
			case b.lang == "go":
				gb, bad := applyReplaces(b)
				for _, msg := range bad {
					t.Error(msg)
				}
				p.goBlocks = append(p.goBlocks, gb)
			case b.lang == "":
				for i, l := range b.lines {
					if looksRunnable.MatchString(l) {
						t.Errorf("%s:%d: a block without a language that looks like a shell example: label it sh or console (run) or text (a synopsis); run as one", name, b.line+1+i)
						b.lang = "console"
						p.shell = append(p.shell, shellCommands(t, p, b, usedSkip, usedRewrite)...)
						break
					}
				}
			case b.lang == "python":
				t.Logf("%s: not run: a python block (the test runs shell and Go examples; redis-py is no dependency of this module)", b.where())
			}
		}
		pages = append(pages, p)
	}
	for i, s := range skips {
		if usedSkip[i] == 0 {
			t.Errorf("skip list: %s %q matches no command: remove the entry", s.page, s.prefix)
		}
	}
	for i, r := range rewrites {
		if usedRewrite[i] == 0 {
			t.Errorf("rewrite %q matches no command: remove it", r.old)
		}
	}
	return pages
}

// shellCommands resolves a shell block's commands: the lint (a command
// that fails it is reported and not run), the directives, the skip list,
// the rewrites.
func shellCommands(t *testing.T, p *page, b block, usedSkip, usedRewrite []int) []*command {
	var out []*command
	linted := map[int][]string{}
	for _, c := range commands(b) {
		for _, msg := range lint(c) {
			t.Errorf("%s: %s\n\t%s", c.where(), msg, c.text)
			linted[c.line] = append(linted[c.line], msg)
		}
	}
	sb, bad := applyReplaces(b)
	for _, msg := range bad {
		t.Error(msg)
	}
	for _, c := range commands(sb) {
		if msgs := linted[c.line]; len(msgs) > 0 {
			c.skip = "not run: " + strings.Join(msgs, "; ")
		}
		for i, s := range skips {
			if s.page == p.name && strings.HasPrefix(c.text, s.prefix) {
				c.skip = s.reason
				usedSkip[i]++
			}
		}
		c.run = c.text
		for i, r := range rewrites {
			if strings.Contains(c.run, r.old) {
				c.run = strings.ReplaceAll(c.run, r.old, r.new)
				usedRewrite[i]++
			}
		}
		if s := strings.TrimSpace(stripComment(c.run)); strings.HasSuffix(s, "&") && !strings.HasSuffix(s, "&&") {
			c.background = true
			c.run = strings.TrimSuffix(s, "&")
		}
		if c.skip == "" {
			for _, tool := range []string{"redis-server", "redis-cli"} {
				if strings.Contains(c.run, tool) && !slices.Contains(p.needs, tool) {
					p.needs = append(p.needs, tool)
				}
			}
		}
		out = append(out, c)
	}
	return out
}

// moduleRoot is the directory of this module's go.mod.
func moduleRoot(t *testing.T) string {
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// TestDocs runs every shell and Go example of README.md and docs/*.md (see
// the package doc for the conventions).
func TestDocs(t *testing.T) {
	start := time.Now()
	count(func() {
		tally.commands, tally.commandsFailed, tally.outputs, tally.goRun, tally.goFailed, tally.skipped = 0, 0, 0, 0, 0, 0
	})
	root := moduleRoot(t)
	pages := loadPages(t, root)
	bin := t.TempDir()
	build := exec.Command(goTool(), "build", "-o", filepath.Join(bin, "bloomlab"), "./cmd/bloomlab")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/bloomlab: %v\n%s", err, out)
	}
	var mu sync.Mutex
	left := map[string]map[string][32]byte{} // page → file → content hash
	t.Run("pages", func(t *testing.T) {
		var goBlocks []block
		for _, p := range pages {
			goBlocks = append(goBlocks, p.goBlocks...)
		}
		if len(goBlocks) > 0 {
			t.Run("go", func(t *testing.T) {
				t.Parallel()
				runGo(t, root, goBlocks)
			})
		}
		for _, p := range pages {
			if len(p.shell) == 0 {
				continue
			}
			t.Run(strings.TrimSuffix(filepath.Base(p.name), ".md"), func(t *testing.T) {
				t.Parallel()
				files := runPage(t, p, bin)
				mu.Lock()
				left[p.name] = files
				mu.Unlock()
			})
		}
	})
	checkOverwrites(t, left)
	t.Logf("docs test: %d shell commands run (%d with their output compared), %d failed, %d not run; %d Go examples run, %d failed; %v",
		tally.commands, tally.outputs, tally.commandsFailed, tally.skipped, tally.goRun, tally.goFailed, time.Since(start).Round(time.Millisecond))
}

// checkOverwrites fails when two pages leave different files under one
// name: a reader following both in one directory loses the first.
func checkOverwrites(t *testing.T, left map[string]map[string][32]byte) {
	owner := map[string]string{}
	names := make([]string, 0, len(left))
	for p := range left {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		files := make([]string, 0, len(left[p]))
		for f := range left[p] {
			files = append(files, f)
		}
		sort.Strings(files)
		for _, f := range files {
			if q, ok := owner[f]; ok && left[q][f] != left[p][f] {
				t.Errorf("%s and %s both write %s, with different contents: a reader who follows both in one directory loses one (use another name on one page)", q, p, f)
				continue
			}
			owner[f] = p
		}
	}
}

// tally counts the examples run and those that failed, for the summary.
var tally struct {
	sync.Mutex
	commands, commandsFailed, outputs, goRun, goFailed, skipped int
}

func count(f func()) {
	tally.Lock()
	defer tally.Unlock()
	f()
}

// syncBuffer is a Buffer a background process writes while the test may
// read it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type bgProc struct {
	c    *command
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
	err  error
}

// freePort returns a loopback port nobody listens on now.
func freePort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// runPage runs a page's shell commands in a new directory and returns the
// files they left (name → content hash).
func runPage(t *testing.T, p *page, bin string) map[string][32]byte {
	for _, tool := range p.needs {
		redistest.Need(t, tool)
	}
	dir := t.TempDir()
	stdin, err := os.Open(dir) // reading it fails: see the package doc
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	ports := map[string]string{}
	port := func(s string) string {
		return docPorts.ReplaceAllStringFunc(s, func(doc string) string {
			if ports[doc] == "" {
				ports[doc] = freePort(t)
			}
			return ports[doc]
		})
	}
	var bg []*bgProc
	defer func() { stopAll(t, bg) }()
	for _, c := range p.shell {
		if c.skip != "" {
			t.Logf("%s: skipped %q: %s", c.where(), c.text, c.skip)
			count(func() { tally.skipped++ })
			continue
		}
		run := port(c.run)
		failed := false
		fail := func(format string, args ...any) {
			t.Errorf(format, args...)
			if !failed {
				count(func() { tally.commandsFailed++ })
			}
			failed = true
		}
		count(func() { tally.commands++ })
		cmd := exec.Command("bash", "-c", run)
		cmd.Dir, cmd.Env, cmd.Stdin = dir, env, stdin
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if c.background {
			pr := &bgProc{c: c, cmd: cmd, out: &syncBuffer{}, done: make(chan struct{})}
			cmd.Stdout, cmd.Stderr = pr.out, pr.out
			if err := cmd.Start(); err != nil {
				t.Fatalf("%s: %s: %v", c.where(), shown(c.text, run), err)
			}
			go func() { pr.err = cmd.Wait(); close(pr.done) }()
			bg = append(bg, pr)
			waitPorts(t, pr, run, ports)
			continue
		}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		begin := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatalf("%s: %s: %v", c.where(), shown(c.text, run), err)
		}
		timer := time.AfterFunc(commandTimeout, func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
		err := cmd.Wait()
		timer.Stop()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%s: %s: %v", c.where(), shown(c.text, run), err)
		}
		took := time.Since(begin)
		if took >= commandTimeout {
			fail("%s: %s: still running after %v: killed (does it wait for standard input, or for a server?)\n%s", c.where(), shown(c.text, run), commandTimeout, out.String())
			continue
		}
		if code != c.exit {
			fail("%s: %s: exit status %d, the doc says %d\n%s", c.where(), shown(c.text, run), code, c.exit, out.String())
			continue
		}
		if c.want != nil {
			count(func() { tally.outputs++ })
			want := make([]string, len(c.want))
			for i, w := range c.want {
				want[i] = port(w)
			}
			if got := outputLines(out.String()); !matchLines(want, got) {
				fail("%s: %s: output differs from the doc\n--- doc\n%s\n--- got\n%s", c.where(), shown(c.text, run), strings.Join(want, "\n"), strings.Join(got, "\n"))
			}
		}
		if took > 5*time.Second {
			t.Logf("%s: %s: %v", c.where(), shown(c.text, run), took.Round(time.Millisecond))
		}
	}
	stopAll(t, bg)
	bg = nil
	files := map[string][32]byte{}
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		files[filepath.ToSlash(rel)] = sha256.Sum256(data)
		return nil
	})
	return files
}

// shown is a command for a message: as the page spells it (text), then as
// the test ran it (run), if its ports or a rewrite changed it.
func shown(text, run string) string {
	if run == text {
		return text
	}
	return text + " (run as: " + run + ")"
}

// waitPorts waits until the page ports a background command names accept
// connections.
func waitPorts(t *testing.T, pr *bgProc, run string, ports map[string]string) {
	t.Helper()
	var want []string
	for _, real := range ports {
		if regexp.MustCompile(`\b` + real + `\b`).MatchString(run) {
			want = append(want, real)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, port := range want {
		for {
			conn, err := net.DialTimeout("tcp", "127.0.0.1:"+port, time.Second)
			if err == nil {
				conn.Close()
				break
			}
			select {
			case <-pr.done:
				t.Fatalf("%s: %s exited before it listened on %s: %v\n%s", pr.c.where(), shown(pr.c.text, run), port, pr.err, pr.out.String())
			case <-time.After(20 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %s: nothing listens on %s after 30 s\n%s", pr.c.where(), shown(pr.c.text, run), port, pr.out.String())
			}
		}
	}
}

// stopAll stops the page's background processes: those still running get
// SIGTERM (then SIGKILL after 20 s); each must have exited 0.
func stopAll(t *testing.T, bg []*bgProc) {
	for _, pr := range bg {
		select {
		case <-pr.done:
		default:
			syscall.Kill(-pr.cmd.Process.Pid, syscall.SIGTERM)
			select {
			case <-pr.done:
			case <-time.After(20 * time.Second):
				syscall.Kill(-pr.cmd.Process.Pid, syscall.SIGKILL)
				<-pr.done
				t.Errorf("%s: %s: did not stop within 20 s of SIGTERM\n%s", pr.c.where(), pr.c.text, pr.out.String())
				continue
			}
		}
		if pr.err != nil {
			t.Errorf("%s: %s: %v\n%s", pr.c.where(), pr.c.text, pr.err, pr.out.String())
		}
		// Whatever the command started in its group goes with it.
		syscall.Kill(-pr.cmd.Process.Pid, syscall.SIGKILL)
	}
}

// outputLines splits output into lines without trailing blanks or
// trailing empty lines.
func outputLines(s string) []string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t\r")
	}
	if len(lines) == 1 && lines[0] == "" {
		return nil
	}
	return lines
}

// matchLines matches output lines against the doc's, with the
// placeholders of the package doc.
func matchLines(want, got []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	if want[0] == "…" {
		for i := 0; i <= len(got); i++ {
			if matchLines(want[1:], got[i:]) {
				return true
			}
		}
		return false
	}
	return len(got) > 0 && lineRE(want[0]).MatchString(got[0]) && matchLines(want[1:], got[1:])
}

func lineRE(w string) *regexp.Regexp {
	parts := strings.Split(w, "…")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
}

// imports the test adds to a Go fragment that uses them.
var knownImports = map[string]string{
	"bytes": "bytes", "context": "context", "errors": "errors", "fmt": "fmt", "io": "io",
	"log": "log", "os": "os", "strings": "strings", "time": "time",
	"redis":    "github.com/redis/go-redis/v9",
	"bloomlab": "github.com/bloomlab/bloomlab",
}

func init() {
	for _, p := range []string{"blocked", "bloom", "choices", "countmin", "counting", "cuckoo", "dlcbf", "dleft",
		"hashing", "redisblocked", "scalable", "server", "theory"} {
		knownImports[p] = "github.com/bloomlab/bloomlab/" + p
	}
}

var importLineRE = regexp.MustCompile(`^import\s+(?:([A-Za-z_]\w*)\s+)?("[^"]+")\s*$`)

// goProgram turns a Go block into a file of package main, and returns its
// expected output (nil: not checked).
func goProgram(b block) (string, []string, error) {
	lines := b.lines
	var want []string
	for i, l := range lines {
		s := strings.TrimSpace(l)
		if rest, ok := strings.CutPrefix(s, "// Output:"); ok {
			if rest = strings.TrimSpace(rest); rest != "" {
				want = append(want, rest)
			}
			for _, o := range lines[i+1:] {
				o = strings.TrimSpace(o)
				if o == "" {
					continue
				}
				if !strings.HasPrefix(o, "//") {
					return "", nil, fmt.Errorf("%s: code after // Output:", b.where())
				}
				want = append(want, strings.TrimPrefix(strings.TrimPrefix(o, "//"), " "))
			}
			if want == nil {
				want = []string{}
			}
			break
		}
	}
	for i, l := range lines {
		if s := strings.TrimSpace(l); s != "" && !strings.HasPrefix(s, "//") {
			if strings.HasPrefix(s, "package ") {
				return strings.Join(lines[i:], "\n") + "\n", want, nil
			}
			break
		}
	}
	imports := map[string]string{} // name → path
	var named []string
	body := lines
	for len(body) > 0 {
		s := strings.TrimSpace(body[0])
		if s == "" {
			body = body[1:]
			continue
		}
		if s == "import (" {
			end := slices.Index(body, ")")
			if end < 0 {
				return "", nil, fmt.Errorf("%s: unclosed import (", b.where())
			}
			for _, l := range body[1:end] {
				if l = strings.TrimSpace(l); l != "" {
					named = append(named, l)
				}
			}
			body = body[end+1:]
			continue
		}
		if m := importLineRE.FindStringSubmatch(s); m != nil {
			named = append(named, strings.TrimSpace(m[1]+" "+m[2]))
			body = body[1:]
			continue
		}
		break
	}
	for _, imp := range named {
		f := strings.Fields(imp)
		path, _ := strconv.Unquote(f[len(f)-1])
		name := filepath.Base(path)
		if strings.HasPrefix(name, "v") && strings.Contains(path, "go-redis") {
			name = "redis"
		}
		if len(f) == 2 {
			name = f[0]
		}
		imports[name] = imp
	}
	code := strings.Join(body, "\n")
	// Identifiers used as pkg.Name, outside comments and strings.
	var s scanner.Scanner
	fset := token.NewFileSet()
	file := fset.AddFile("", fset.Base(), len(code))
	s.Init(file, []byte(code), nil, 0)
	var prev []string
	for {
		_, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		cur := tok.String()
		if tok == token.IDENT {
			cur = "ident:" + lit
		}
		if len(prev) == 2 && prev[1] == "." && strings.HasPrefix(prev[0], "ident:") && tok == token.IDENT {
			name := strings.TrimPrefix(prev[0], "ident:")
			if path, ok := knownImports[name]; ok && imports[name] == "" {
				imports[name] = strconv.Quote(path)
			}
		}
		prev = append(prev, cur)
		if len(prev) > 2 {
			prev = prev[1:]
		}
	}
	var src strings.Builder
	src.WriteString("package main\n\nimport (\n")
	keys := make([]string, 0, len(imports))
	for k := range imports {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		imp := imports[k]
		if !strings.Contains(imp, " ") && !strings.HasSuffix(strings.Trim(imp, `"`), "/"+k) && strings.Trim(imp, `"`) != k {
			imp = k + " " + imp
		}
		fmt.Fprintf(&src, "\t%s\n", imp)
	}
	// A line directive makes the compiler's errors name the page's lines.
	fmt.Fprintf(&src, ")\n\nfunc main() {\n//line %s:%d\n%s\n}\n", b.page, b.line+1+len(lines)-len(body), code)
	return src.String(), want, nil
}

// runGo compiles every Go block as a program of a module that requires
// this one, and runs it.
func runGo(t *testing.T, root string, blocks []block) {
	mod := t.TempDir()
	// The root's requirements (the whole build list, for a module whose
	// go.mod must name every module it builds from) and its go.sum, plus
	// the root itself from this tree.
	rootMod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	gomod := regexp.MustCompile(`(?m)^module .*$`).ReplaceAllString(string(rootMod), "module bloomlab.doctest") +
		fmt.Sprintf("\nrequire github.com/bloomlab/bloomlab v0.0.0\n\nreplace github.com/bloomlab/bloomlab => %s\n", root)
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	type prog struct {
		b    block
		name string
		want []string
	}
	var progs []prog
	for i, b := range blocks {
		src, want, err := goProgram(b)
		if err != nil {
			t.Error(err)
			continue
		}
		name := fmt.Sprintf("ex%02d", i)
		dir := filepath.Join(mod, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		progs = append(progs, prog{b, name, want})
	}
	env := append(os.Environ(), "GOFLAGS=-mod=readonly", "GOPROXY=off", "GOWORK=off")
	bin := t.TempDir()
	for _, p := range progs {
		// One go build per program, so that each error names its block.
		build := exec.Command(goTool(), "build", "-o", filepath.Join(bin, p.name), "./"+p.name)
		build.Dir, build.Env = mod, env
		if out, err := build.CombinedOutput(); err != nil {
			src, _ := os.ReadFile(filepath.Join(mod, p.name, "main.go"))
			count(func() { tally.goRun++; tally.goFailed++ })
			t.Errorf("%s: the Go example does not compile: %v\n%s\n--- as compiled\n%s", p.b.where(), err, out, src)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
		run := exec.CommandContext(ctx, filepath.Join(bin, p.name))
		run.Dir = t.TempDir()
		var stdout, stderr bytes.Buffer
		run.Stdout, run.Stderr = &stdout, &stderr
		err := run.Run()
		cancel()
		count(func() { tally.goRun++ })
		if err != nil {
			count(func() { tally.goFailed++ })
			t.Errorf("%s: the Go example fails: %v\n%s%s", p.b.where(), err, stdout.String(), stderr.String())
			continue
		}
		if p.want != nil {
			if got := outputLines(stdout.String()); !matchLines(p.want, got) {
				count(func() { tally.goFailed++ })
				t.Errorf("%s: the Go example's output differs from its // Output:\n--- doc\n%s\n--- got\n%s", p.b.where(), strings.Join(p.want, "\n"), strings.Join(got, "\n"))
			}
		}
	}
}

// TestMatchLines pins the placeholder rules of the package doc.
func TestMatchLines(t *testing.T) {
	for _, c := range []struct {
		want, got string
		ok        bool
	}{
		{"a\nb", "a\nb", true},
		{"a\nb", "a\nc", false},
		{"a …s", "a 12.5s", true},
		{"a …s", "a 12.5ms x", false},
		{"x\n…\ny", "x\ny", true},
		{"x\n…\ny", "x\n1\n2\ny", true},
		{"x\n…\ny", "x\n1\n2", false},
		{"…", "", true},
		{"a.b", "axb", false},
	} {
		if got := matchLines(outputLines(c.want), outputLines(c.got)); got != c.ok {
			t.Errorf("matchLines(%q, %q) = %v", c.want, c.got, got)
		}
	}
}

var (
	linkRE    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	headingRE = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	slugDrop  = regexp.MustCompile(`[^\p{L}\p{N} _-]`)
)

// prose returns a page's lines outside fenced code blocks (others blank).
func prose(data []byte) []string {
	lines := strings.Split(string(data), "\n")
	fence := ""
	for i, l := range lines {
		t := strings.TrimLeft(l, " ")
		if fence == "" {
			if m := fenceRE.FindStringSubmatch(l); m != nil {
				fence = m[2]
				lines[i] = ""
			}
			continue
		}
		if strings.HasPrefix(t, fence) && strings.TrimSpace(strings.TrimLeft(t, fence[:1])) == "" {
			fence = ""
		}
		lines[i] = ""
	}
	return lines
}

// anchors returns the anchors GitHub makes of a page's headings.
func anchors(data []byte) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, l := range prose(data) {
		m := headingRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		slug := strings.ReplaceAll(slugDrop.ReplaceAllString(strings.ToLower(m[1]), ""), " ", "-")
		if n := seen[slug]; n > 0 {
			out[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

// TestLinks checks that every relative link of README.md and docs/*.md
// names a file of the repository and, with a #fragment, a heading of it
// (a section that was renamed or never existed is a broken promise too).
func TestLinks(t *testing.T) {
	root := moduleRoot(t)
	names := []string{"README.md"}
	more, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	for _, m := range more {
		names = append(names, "docs/"+filepath.Base(m))
	}
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range prose(data) {
			for _, m := range linkRE.FindAllStringSubmatch(l, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, frag, _ := strings.Cut(target, "#")
				path := filepath.Join(root, name)
				if file != "" {
					path = filepath.Join(root, filepath.Dir(name), filepath.FromSlash(file))
				}
				rel, err := filepath.Rel(root, path)
				if err != nil || strings.HasPrefix(rel, "..") {
					t.Errorf("%s:%d: link %s leaves the repository", name, i+1, target)
					continue
				}
				body, err := os.ReadFile(path)
				if err != nil {
					if st, serr := os.Stat(path); serr != nil || !st.IsDir() {
						t.Errorf("%s:%d: link %s: no such file", name, i+1, target)
					}
					continue
				}
				if frag != "" && strings.HasSuffix(path, ".md") && !anchors(body)[frag] {
					t.Errorf("%s:%d: link %s: %s has no heading #%s", name, i+1, target, rel, frag)
				}
			}
		}
	}
}

// TestLint pins what the lint refuses and what it lets through.
func TestLint(t *testing.T) {
	for _, c := range []struct {
		cmd string
		bad int
	}{
		{"bloomlab serve -addr 127.0.0.1:6380 -dir data &", 0},
		{"redis-cli -p 6380 BF.EXISTS users alice", 0},
		{"redis-server --port 6380 --save ''", 0},
		{"bloomlab info 'redis://127.0.0.1:6380?key=users'", 0},
		{"bloomlab query users.blf /dev/null # /var/lib in a comment", 0},
		{"bloomlab serve -dir /var/lib/bloomlab", 2},
		{"redis-cli BF.EXISTS users alice", 1},
		{"redis-server", 1},
		{"bloomlab add 'redis://127.0.0.1:6379?key=users' keys.txt", 1},
		{"bloomlab query 'redis+cluster://10.0.0.1:7000,127.0.0.1:7001?key=u' k.txt", 1},
		{"bloomlab info 'rediss://alice:secret@cache.example:6380?key=users'", 1},
	} {
		if got := lint(&command{text: c.cmd}); len(got) != c.bad {
			t.Errorf("lint(%q) = %q, want %d findings", c.cmd, got, c.bad)
		}
	}
}

// TestCommands pins how a block becomes commands.
func TestCommands(t *testing.T) {
	b := block{page: "p.md", line: 1, lang: "console", lines: []string{
		"$ printf 'a\\nb\\n' \\",
		"  > k.txt",
		"$ bloomlab query f.blf k.txt",
		"a",
		"",
		"[exit status 1]",
		"$ bloomlab serve -addr 127.0.0.1:6380 &   # a server",
	}}
	cs := commands(b)
	if len(cs) != 3 {
		t.Fatalf("%d commands, want 3", len(cs))
	}
	if cs[0].text != "printf 'a\\nb\\n' \\\n  > k.txt" || cs[0].want != nil || cs[0].line != 2 {
		t.Errorf("continued command: %+v", cs[0])
	}
	if !slices.Equal(cs[1].want, []string{"a"}) || cs[1].exit != 1 || cs[1].line != 4 {
		t.Errorf("transcript: want %q exit %d line %d", cs[1].want, cs[1].exit, cs[1].line)
	}
	script := commands(block{page: "p.md", line: 10, lang: "sh", lines: []string{"# a comment", "", "seq 1 3 > k.txt", "bloomlab add f.blf k.txt"}})
	if len(script) != 2 || script[0].line != 13 || script[1].want != nil {
		t.Errorf("script: %+v", script)
	}
}

// A failing command is reported as the page spells it, so that a reader
// finds it there: the test's ports and rewrites follow, when they changed
// it ("redis-cli -p 38407 …" is on no page).
func TestShownCommand(t *testing.T) {
	if got := shown("bloomlab info a.blf", "bloomlab info a.blf"); got != "bloomlab info a.blf" {
		t.Errorf("unchanged: %q", got)
	}
	want := "redis-cli -p 6380 PING (run as: redis-cli -p 38407 PING)"
	if got := shown("redis-cli -p 6380 PING", "redis-cli -p 38407 PING"); got != want {
		t.Errorf("substituted: %q, want %q", got, want)
	}
}
