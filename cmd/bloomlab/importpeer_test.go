package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bbFixture is a file the bits-and-blooms/bloom library wrote (see
// bloom/bitsandblooms_test.go).
func bbFixture(name string) string { return filepath.Join(bbDir, name) }

var bbDir, _ = filepath.Abs(filepath.Join("..", "..", "bloom", "testdata", "bitsandblooms"))

// TestImportBitsAndBlooms: import -format bitsandblooms makes a bloom file
// from each form the library writes (binary and JSON, -endian little,
// -base64 std, standard input), whose query answers as the library's Test
// for 3000 keys; add and merge work on it; misplaced flags, bad values, a
// wrong -kind, a wrong byte order and export to the format are refused
// with exit status 2 or 1 and a message saying what to do.
func TestImportBitsAndBlooms(t *testing.T) {
	raw, err := os.ReadFile(bbFixture("answers.json"))
	if err != nil {
		t.Fatal(err)
	}
	var answers map[string]string
	if err := json.Unmarshal(raw, &answers); err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	var keys strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&keys, "k%d\n", i)
	}
	if err := os.WriteFile("keys.txt", []byte(keys.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	stdinJSON, _ := os.ReadFile(bbFixture("m1000k7-le.json"))
	for _, c := range []struct {
		name  string
		args  []string
		stdin string
	}{
		{"m1000k7", []string{bbFixture("m1000k7.bin")}, ""},
		{"m1000k7", []string{bbFixture("m1000k7.json")}, ""},
		{"m1000k7", []string{"-endian", "little", bbFixture("m1000k7-le.bin")}, ""},
		{"m1000k7", []string{"-endian", "little", "-"}, string(stdinJSON)},
		{"m1000k7", []string{"-base64", "std", "-kind", "bloom", bbFixture("m1000k7-std.json")}, ""},
		{"m77k12", []string{bbFixture("m77k12.json")}, ""},
		{"short", []string{bbFixture("short.bin")}, ""},
	} {
		args := append([]string{"import", "-format", "bitsandblooms", "-o", "f.blf"}, c.args...)
		if _, e, code := invoke(args, c.stdin); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, e)
		}
		out, e, code := invoke([]string{"query", "f.blf", "keys.txt"}, "")
		if code != 0 {
			t.Fatalf("query: exit %d: %s", code, e)
		}
		present := map[string]bool{}
		for _, k := range strings.Fields(out) {
			present[k] = true
		}
		for i, a := range answers[c.name] {
			if present[fmt.Sprintf("k%d", i)] != (a == '1') {
				t.Fatalf("%v: k%d answered %v, the library's Test %c", c.args, i, present[fmt.Sprintf("k%d", i)], a)
			}
		}
	}
	// add and merge on imported filters.
	if _, e, code := invoke([]string{"import", "-format", "bitsandblooms", "-o", "g.blf", bbFixture("m77k12.bin")}, ""); code != 0 {
		t.Fatal(e)
	}
	if _, e, code := invoke([]string{"add", "g.blf", "-"}, "a new key\n"); code != 0 {
		t.Fatal(e)
	}
	if _, e, code := invoke([]string{"import", "-format", "bitsandblooms", "-o", "h.blf", bbFixture("m77k12.json")}, ""); code != 0 {
		t.Fatal(e)
	}
	if _, e, code := invoke([]string{"merge", "-o", "gh.blf", "g.blf", "h.blf"}, ""); code != 0 {
		t.Fatalf("merge: %s", e)
	}
	if out, _, _ := invoke([]string{"query", "gh.blf", "-"}, "a new key\nk0\n"); out != "a new key\nk0\n" {
		t.Errorf("merged filter answers %q", out)
	}
	if out, _, _ := invoke([]string{"info", "gh.blf"}, ""); !strings.Contains(out, "bitsandblooms") {
		t.Errorf("info does not name the scheme:\n%s", out)
	}
	if _, e, code := invoke([]string{"merge", "-o", "x.blf", "g.blf", "f.blf"}, ""); code == 0 {
		t.Errorf("merge of m = 77 and m = 300 accepted: %s", e)
	}
	// A file holding more than the filter (a byte more; two filters
	// concatenated) is not taken for the first filter.
	one, _ := os.ReadFile(bbFixture("m77k12.bin"))
	os.WriteFile("trailing.bin", append(append([]byte(nil), one...), '\n'), 0o644)
	os.WriteFile("twice.bin", append(append([]byte(nil), one...), one...), 0o644)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"import", "-format", "redisbloom", "-endian", "little", "-o", "x.blf", "in"}, 2, "-endian goes with -format bitsandblooms"},
		{[]string{"import", "-format", "bitsandblooms", "-endian", "middle", "-o", "x.blf", bbFixture("m77k12.bin")}, 2, `-endian "middle": want big or little`},
		{[]string{"import", "-format", "bitsandblooms", "-base64", "hex", "-o", "x.blf", bbFixture("m77k12.json")}, 2, `-base64 "hex": want url or std`},
		{[]string{"import", "-format", "bitsandblooms", "-kind", "cuckoo", "-o", "x.blf", bbFixture("m77k12.bin")}, 2, "imports as -kind bloom, not cuckoo"},
		{[]string{"import", "-format", "bitsandblooms", "-o", "x.blf", bbFixture("m1000k7-le.bin")}, 1, "try -endian little"},
		{[]string{"import", "-format", "bitsandblooms", "-o", "x.blf", bbFixture("m1000k7-std.json")}, 1, "give -base64 std"},
		{[]string{"export", "-format", "bitsandblooms", "-o", "x", "g.blf"}, 2, "import only"},
		{[]string{"import", "-format", "bitsandblooms", "-o", "x.blf", "trailing.bin"}, 1, "bytes after the filter"},
		{[]string{"import", "-format", "bitsandblooms", "-o", "x.blf", "twice.bin"}, 1, "bytes after the filter"},
	} {
		_, e, code := invoke(c.args, "")
		if code != c.code || !strings.Contains(e, c.want) {
			t.Errorf("%v: exit %d, %q; want exit %d and %q", c.args, code, e, c.code, c.want)
		}
		if _, err := os.Stat("x.blf"); err == nil {
			t.Errorf("%v: wrote x.blf", c.args)
		}
	}
}

// TestServeBitsAndBlooms: serve -load serves an imported filter: BF.EXISTS
// answers as the library's Test, BF.ADD takes new keys.
func TestServeBitsAndBlooms(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "bb.blf")
	if _, e, code := invoke([]string{"import", "-format", "bitsandblooms", "-o", f, bbFixture("m1000k7.bin")}, ""); code != 0 {
		t.Fatal(e)
	}
	p := startServe(t, dir, "-save", "0", "-load", "bb="+f)
	c := client(p.addr)
	defer c.Close()
	ctx := context.Background()
	for _, k := range []string{"k0", "k42", "k99"} {
		if ok, err := c.BFExists(ctx, "bb", k).Result(); err != nil || !ok {
			t.Fatalf("BF.EXISTS bb %s: %v %v", k, ok, err)
		}
	}
	if ok, err := c.BFAdd(ctx, "bb", "served key").Result(); err != nil || !ok {
		t.Fatalf("BF.ADD: %v %v", ok, err)
	}
	if ok, err := c.BFExists(ctx, "bb", "served key").Result(); err != nil || !ok {
		t.Fatalf("BF.EXISTS after BF.ADD: %v %v", ok, err)
	}
}
