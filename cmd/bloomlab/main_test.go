package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// testdataDir is the absolute path of testdata (tests chdir elsewhere).
var testdataDir = func() string {
	d, err := filepath.Abs("testdata")
	if err != nil {
		panic(err)
	}
	return d
}()

// invoke runs the command in-process.
func invoke(args []string, stdin string) (stdout, stderr string, code int) {
	var o, e bytes.Buffer
	code = exitCode(run(args, strings.NewReader(stdin), &o, &e))
	return o.String(), e.String(), code
}

// workdir makes a temporary working directory holding the word lists and
// the fixture filters, and changes into it.
func workdir(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"words.txt", "others.txt"} {
		b, err := os.ReadFile(filepath.Join(testdataDir, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	for _, args := range [][]string{
		{"build", "-kind", "bloom", "-m", "2000", "-k", "5", "-seed", "3", "-o", "w.blf", "words.txt"},
		{"build", "-kind", "counting", "-fpr", "0.01", "-o", "c.blf", "words.txt"},
		{"build", "-kind", "partitioned", "-bits-per-key", "10", "-o", "p.blf", "words.txt"},
		{"build", "-kind", "bloom", "-m", "2000", "-k", "4", "-seed", "3", "-o", "k4.blf", "others.txt"},
	} {
		if _, e, code := invoke(args, ""); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, e)
		}
	}
	good, err := os.ReadFile("w.blf")
	if err != nil {
		t.Fatal(err)
	}
	flip := append([]byte(nil), good...)
	flip[len(flip)/2] ^= 0x10
	hdr := append([]byte(nil), good...)
	hdr[9] ^= 1 // seed byte: header CRC mismatch
	for name, b := range map[string][]byte{
		"empty.blf":     {},
		"garbage.blf":   []byte("this is not a filter\n"),
		"truncated.blf": good[:len(good)-10],
		"bitflip.blf":   flip,
		"header.blf":    hdr,
		"trailing.blf":  append(append([]byte(nil), good...), 'x'),
		"binary.txt":    {0, 1, 2, 0xff, '\n', 0xfe, 0xfd, '\r', '\n', '\n', 0x80},
		"empty.txt":     {},
	} {
		if err := os.WriteFile(name, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir("dir.blf", 0o755); err != nil {
		t.Fatal(err)
	}
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join(testdataDir, name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s: output differs from %s (go test -update rewrites it)\n--- got ---\n%s\n--- want ---\n%s", name, path, got, want)
	}
}

var goldenCases = []struct {
	name  string
	args  []string
	stdin string
	code  int
}{
	{"usage", nil, "", 2},
	{"help", []string{"help"}, "", 0},
	{"help_build", []string{"help", "build"}, "", 0},
	{"experiments", []string{"experiments"}, "", 0},
	{"plan_fpr", []string{"plan", "-n", "1000000", "-fpr", "0.01"}, "", 0},
	{"plan_bpk_json", []string{"plan", "-n", "1000", "-bits-per-key", "10", "-json"}, "", 0},
	{"info_bloom", []string{"info", "w.blf"}, "", 0},
	{"info_bloom_json", []string{"info", "w.blf", "-json"}, "", 0},
	{"info_counting", []string{"info", "c.blf"}, "", 0},
	{"info_partitioned_json", []string{"info", "-json", "p.blf"}, "", 0},
	{"query", []string{"query", "w.blf", "others.txt"}, "", 0},
	{"query_stdin", []string{"query", "w.blf"}, "buda\nnot-a-word\r\n\nbufego\n", 0},
	{"query_v", []string{"query", "-v", "w.blf", "-", "others.txt"}, "buda\nzzz\n", 0},
	{"query_c", []string{"query", "-c", "w.blf", "words.txt", "others.txt"}, "", 0},
	{"query_none", []string{"query", "w.blf"}, "certainly-absent-key\n", 1},
	{"query_none_c", []string{"query", "-c", "w.blf", "empty.txt"}, "", 1},
	{"query_binary", []string{"query", "-c", "-v", "w.blf", "binary.txt"}, "", 0},
	{"reproduce_example", []string{"reproduce", "notes/example"}, "", 0},
	{"reproduce_example_csv", []string{"reproduce", "notes/example", "-format", "csv"}, "", 0},
	{"reproduce_ktable_quick_json", []string{"reproduce", "notes/k-table", "-quick", "-seed", "1", "-format", "json"}, "", 0},
	{"simulate_bloom_csv", []string{"simulate", "bloom", "-n", "1000", "-c", "8", "-k", "3,5", "-scheme", "independent,partition", "-trials", "4", "-format", "csv"}, "", 0},
	{"simulate_bloom_text", []string{"simulate", "bloom", "-n", "2000", "-m", "20000", "-trials", "3", "-seed", "5"}, "", 0},
	{"simulate_help", []string{"simulate", "bloom", "-h"}, "", 0},
	// Corrupt and unreadable inputs.
	{"err_empty_file", []string{"info", "empty.blf"}, "", 1},
	{"err_garbage_file", []string{"info", "garbage.blf"}, "", 1},
	{"err_truncated_file", []string{"info", "truncated.blf"}, "", 1},
	{"err_bitflip_file", []string{"info", "bitflip.blf"}, "", 1},
	{"err_header_file", []string{"info", "header.blf"}, "", 1},
	{"err_trailing_file", []string{"info", "trailing.blf"}, "", 1},
	{"err_directory", []string{"info", "dir.blf"}, "", 1},
	{"err_missing_file", []string{"add", "missing.blf", "words.txt"}, "", 1},
	{"err_query_corrupt", []string{"query", "bitflip.blf", "words.txt"}, "", 2},
	{"err_query_missing_keys", []string{"query", "w.blf", "nokeys.txt"}, "", 2},
	{"err_remove_bloom", []string{"remove", "w.blf", "words.txt"}, "", 1},
	{"err_remove_absent", []string{"remove", "c.blf", "others.txt"}, "", 1},
	{"err_merge_kinds", []string{"merge", "-o", "m.blf", "w.blf", "c.blf"}, "", 1},
	{"err_merge_k", []string{"merge", "-o", "m.blf", "w.blf", "k4.blf"}, "", 1},
	{"err_build_empty", []string{"build", "-kind", "bloom", "-fpr", "0.01", "-o", "e.blf", "empty.txt"}, "", 1},
	// Usage errors.
	{"usage_unknown_command", []string{"frobnicate"}, "", 2},
	{"usage_build_nokind", []string{"build", "-fpr", "0.01", "-o", "x.blf", "words.txt"}, "", 2},
	{"usage_build_two_sizes", []string{"build", "-kind", "bloom", "-fpr", "0.01", "-m", "100", "-k", "2", "-o", "x.blf"}, "", 2},
	{"usage_build_stdin_needs_n", []string{"build", "-kind", "bloom", "-fpr", "0.01", "-o", "x.blf"}, "", 2},
	{"usage_build_bad_fpr", []string{"build", "-kind", "bloom", "-fpr", "1.5", "-o", "x.blf", "words.txt"}, "", 2},
	{"usage_build_scheme_kind", []string{"build", "-kind", "bloom", "-scheme", "partition", "-fpr", "0.01", "-o", "x.blf", "words.txt"}, "", 2},
	{"usage_build_bad_scheme", []string{"build", "-kind", "bloom", "-scheme", "sha1", "-fpr", "0.01", "-o", "x.blf", "words.txt"}, "", 2},
	{"usage_query_flag", []string{"query", "-x", "w.blf"}, "", 2},
	{"usage_query_nofile", []string{"query"}, "", 2},
	{"usage_plan_non", []string{"plan", "-fpr", "0.01"}, "", 2},
	{"usage_reproduce_unknown", []string{"reproduce", "nope/table"}, "", 2},
	{"usage_reproduce_format", []string{"reproduce", "notes/example", "-format", "xml"}, "", 2},
	{"usage_simulate_kind", []string{"simulate", "nope"}, "", 2},
	{"usage_simulate_param", []string{"simulate", "bloom", "-n", "0"}, "", 2},
}

func TestGolden(t *testing.T) {
	workdir(t)
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			o, e, code := invoke(tc.args, tc.stdin)
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstderr: %s", code, tc.code, e)
			}
			got := fmt.Sprintf("$ bloomlab %s\n-- stdout --\n%s-- stderr --\n%s-- exit %d --\n", strings.Join(tc.args, " "), o, e, code)
			checkGolden(t, tc.name, got)
		})
	}
}

// Every usage error is one line on stderr, and every runtime error starts
// with "bloomlab: ".
func TestErrorShape(t *testing.T) {
	workdir(t)
	for _, tc := range goldenCases {
		_, e, code := invoke(tc.args, tc.stdin)
		if code == 0 || e == "" {
			continue
		}
		if strings.Count(e, "\n") != 1 {
			t.Errorf("%s: stderr is not one line: %q", tc.name, e)
		}
		if !strings.HasPrefix(e, "bloomlab") {
			t.Errorf("%s: stderr %q", tc.name, e)
		}
		if strings.Contains(e, "goroutine") || strings.Contains(e, "panic") {
			t.Errorf("%s: panic trace", tc.name)
		}
	}
}

// Built filters have no false negatives; add, remove and merge keep them.
func TestRoundTrip(t *testing.T) {
	workdir(t)
	mustRun := func(stdin string, args ...string) string {
		t.Helper()
		o, e, code := invoke(args, stdin)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, e)
		}
		return o
	}
	for _, f := range []string{"w.blf", "c.blf", "p.blf"} {
		// -v -c counts the keys reported absent: there must be none, and
		// like grep -c the command then prints 0 and exits 1.
		if o, e, code := invoke([]string{"query", "-c", "-v", f, "words.txt"}, ""); o != "0\n" || code != 1 {
			t.Errorf("%s: %s words reported absent, exit %d %s", f, strings.TrimSpace(o), code, e)
		}
	}
	mustRun("", "add", "c.blf", "others.txt")
	if o := mustRun("", "query", "-c", "c.blf", "others.txt"); o != "100\n" {
		t.Errorf("after add: %s", o)
	}
	mustRun("", "remove", "c.blf", "words.txt")
	if o := mustRun("", "query", "-c", "c.blf", "others.txt"); o != "100\n" {
		t.Errorf("after remove, the remaining keys: %s", o)
	}
	// Removing again: every key is absent now, or a false positive.
	o, e, code := invoke([]string{"remove", "-ignore-missing", "c.blf", "words.txt"}, "")
	if code != 0 || !strings.Contains(e, "skipped") {
		t.Errorf("remove -ignore-missing: exit %d, %q %q", code, o, e)
	}
	// Stdin with -n, binary keys.
	mustRun("a\x00b\n\xff\xfe\n", "build", "-kind", "bloom", "-n", "2", "-fpr", "0.001", "-o", "s.blf", "-")
	if o := mustRun("\xff\xfe\nzz\n", "query", "s.blf"); o != "\xff\xfe\n" {
		t.Errorf("binary key query: %q", o)
	}
	// Merge.
	mustRun("", "build", "-kind", "bloom", "-m", "2000", "-k", "5", "-seed", "3", "-o", "o.blf", "others.txt")
	mustRun("", "merge", "-o", "u.blf", "w.blf", "o.blf")
	if o := mustRun("", "query", "-c", "u.blf", "words.txt", "others.txt"); o != "300\n" {
		t.Errorf("merged filter: %s keys present, want 300", o)
	}
	info := mustRun("", "info", "u.blf")
	if !regexp.MustCompile(`keys added: +300\n`).MatchString(info) {
		t.Errorf("merged info:\n%s", info)
	}
	// Merging into one of the inputs.
	mustRun("", "merge", "-o", "w.blf", "w.blf", "o.blf")
}

func TestLongLine(t *testing.T) {
	workdir(t)
	long := strings.Repeat("x", maxKeyLen+1) + "\n"
	if err := os.WriteFile("long.txt", []byte("ok\n"+long), 0o644); err != nil {
		t.Fatal(err)
	}
	_, e, code := invoke([]string{"query", "w.blf", "long.txt"}, "")
	if code != 2 || !strings.Contains(e, "long.txt:2: line longer than 1048576 bytes") {
		t.Errorf("exit %d, %q", code, e)
	}
	// A key of exactly the limit is fine.
	if err := os.WriteFile("max.txt", []byte(strings.Repeat("y", maxKeyLen)+"\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, e, code := invoke([]string{"add", "w.blf", "max.txt"}, ""); code != 0 {
		t.Errorf("max-length key: exit %d, %s", code, e)
	}
}

// A write that fails leaves the old file intact and no temporary file.
func TestAtomicWriteFailure(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.blf")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("disk on fire")
	err := writeFileAtomic(path, func(w io.Writer) error {
		w.Write([]byte("half of the new"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Errorf("old file changed: %q", b)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("temporary files left: %v", ents)
	}
	if err := writeFileAtomic(path, func(w io.Writer) error { _, err := w.Write([]byte("new")); return err }); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	if b, _ := os.ReadFile(path); string(b) != "new" || st.Mode().Perm() != 0o600 {
		t.Errorf("after rewrite: %q, mode %v", b, st.Mode())
	}
	// A failing add through the command leaves the filter as it was.
	t.Chdir(dir)
	os.WriteFile("keys.txt", []byte("a\n"+strings.Repeat("z", maxKeyLen+5)+"\n"), 0o644)
	invoke([]string{"build", "-kind", "bloom", "-m", "100", "-k", "2", "-o", "g.blf", "-"}, "q\n")
	before, _ := os.ReadFile("g.blf")
	if _, _, code := invoke([]string{"add", "g.blf", "keys.txt"}, ""); code != 1 {
		t.Errorf("add with an overlong key: exit %d", code)
	}
	if after, _ := os.ReadFile("g.blf"); !bytes.Equal(before, after) {
		t.Error("failed add changed the file")
	}
}

// Random bytes as filter files or keys never crash any command.
func TestGarbageNeverPanics(t *testing.T) {
	workdir(t)
	good, _ := os.ReadFile("c.blf")
	r := rand.New(rand.NewPCG(1, 2))
	n := 300
	if testing.Short() {
		n = 50
	}
	for i := 0; i < n; i++ {
		var b []byte
		switch i % 3 {
		case 0:
			b = make([]byte, r.IntN(200))
			for j := range b {
				b[j] = byte(r.Uint32())
			}
		case 1:
			b = append([]byte(nil), good[:r.IntN(len(good))]...)
		default:
			b = append([]byte(nil), good...)
			for j := 0; j < 1+r.IntN(4); j++ {
				b[r.IntN(len(b))] ^= byte(1 + r.IntN(255))
			}
		}
		os.WriteFile("fuzz.blf", b, 0o644)
		for _, args := range [][]string{
			{"info", "fuzz.blf"}, {"query", "fuzz.blf", "binary.txt"},
			{"add", "fuzz.blf", "binary.txt"}, {"remove", "fuzz.blf", "binary.txt"},
			{"merge", "-o", "out.blf", "c.blf", "fuzz.blf"},
		} {
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("%v on input %x: panic %v", args, b, p)
					}
				}()
				invoke(args, string(b))
				invoke([]string{"query", "w.blf"}, string(b))
			}()
		}
	}
}

func TestReproducePlots(t *testing.T) {
	dir := t.TempDir()
	o, e, code := invoke([]string{"reproduce", "less-hashing/figure1", "-quick", "-trials", "1", "-plot", dir, "-format", "csv"}, "")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	if got := strings.Count(o, "\n"); got != 1+60*3 {
		t.Errorf("%d CSV lines, want 181", got)
	}
	for _, c := range []int{4, 8, 12, 16} {
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("figure1-c%d.svg", c)))
		if err != nil || !bytes.HasPrefix(b, []byte("<svg")) {
			t.Errorf("figure1-c%d.svg: %v", c, err)
		}
	}
}

func TestExitCode(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{nil, 0}, {errors.New("x"), 1}, {usagef("x"), 2},
		{&exitError{code: 1}, 1}, {&exitError{code: 2, err: errors.New("x")}, 2},
		{fmt.Errorf("wrapped: %w", usagef("x")), 2},
	} {
		if got := exitCode(c.err); got != c.want {
			t.Errorf("exitCode(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}

func TestParseFlagsInterleaved(t *testing.T) {
	fs := flagSet("x")
	v := fs.Bool("v", false, "")
	o := fs.String("o", "", "")
	pos, err := parseFlags(fs, []string{"a", "-v", "b", "-o", "out", "-", "--", "-c", "d"})
	if err != nil || !*v || *o != "out" || strings.Join(pos, " ") != "a b - -c d" {
		t.Errorf("pos %q v %v o %q err %v", pos, *v, *o, err)
	}
}
