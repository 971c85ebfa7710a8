package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"strings"
	"testing"

	"github.com/bloomlab/bloomlab/internal/format"
)

// A growing filter built from a pipe with no -n (issue 11): the RedisBloom
// profile exports BF.SCANDUMP chunks that import back to the same file,
// bit for bit, and the filter answers every added key present.
func TestScalableExportImport(t *testing.T) {
	t.Chdir(t.TempDir())
	var keys strings.Builder
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&keys, "user-%d\n", i)
	}
	_, e, code := invoke([]string{"build", "-kind", "scalable", "-profile", "redisbloom", "-fpr", "0.01", "-o", "s.blf"}, keys.String())
	if code != 0 || !strings.Contains(e, "no -n") {
		t.Fatalf("build from a pipe: exit %d: %s", code, e)
	}
	if out, e, code := invoke([]string{"query", "-v", "-c", "s.blf"}, keys.String()); out != "0\n" || code != 1 {
		t.Fatalf("query: %q exit %d %s: false negatives", out, code, e)
	}
	if _, e, code := invoke([]string{"export", "-format", "redisbloom", "-o", "s.dump", "s.blf"}, ""); code != 0 {
		t.Fatalf("export: %d %s", code, e)
	}
	if _, e, code := invoke([]string{"import", "-format", "redisbloom", "-o", "t.blf", "s.dump"}, ""); code != 0 {
		t.Fatalf("import: %d %s", code, e)
	}
	a, _ := os.ReadFile("s.blf")
	b, _ := os.ReadFile("t.blf")
	if !bytes.Equal(a, b) {
		t.Error("export then import changed the filter")
	}
	out, _, _ := invoke([]string{"info", "t.blf"}, "")
	for _, want := range []string{"kind:", "scalable", "profile:", "redisbloom", "links:"} {
		if !strings.Contains(out, want) {
			t.Errorf("info lacks %q:\n%s", want, out)
		}
	}
	// The bloomlab profile has no RedisBloom dump: a clear error.
	invoke([]string{"build", "-kind", "scalable", "-fpr", "0.01", "-o", "b.blf"}, keys.String())
	if _, e, code := invoke([]string{"export", "-format", "redisbloom", "-o", "b.dump", "b.blf"}, ""); code != 1 || !strings.Contains(e, "-profile redisbloom") {
		t.Errorf("export of a bloomlab-profile chain: exit %d: %s", code, e)
	}
	// A corrupt dump is an error, never a filter with holes.
	d, _ := os.ReadFile("s.dump")
	d[len(d)/2] ^= 1
	os.WriteFile("bad.dump", d, 0o644)
	if _, e, code := invoke([]string{"import", "-format", "redisbloom", "-o", "u.blf", "bad.dump"}, ""); code != 1 || e == "" {
		t.Errorf("import of a corrupt dump: exit %d: %s", code, e)
	}
	if _, err := os.Stat("u.blf"); err == nil {
		t.Error("a failed import wrote its output")
	}
}

// A scalable chain's growth is bounded: an expansion beyond RedisBloom 8's
// 32768 is a usage error, and a file recording one (a crafted file with
// growth 2,566,914,049 made add allocate 10 GB; -expansion 4294967295 asked
// for a second link of 2^48 bits and ended in a fatal out-of-memory) loads,
// answers, and refuses to grow (exit 1, the file unchanged). -ratio and
// -fpr given out of range are usage errors (-ratio 0 used to mean 0.5, and
// -fpr 0 the default 1%).
func TestScalableGrowthBounded(t *testing.T) {
	t.Chdir(t.TempDir())
	var keys strings.Builder
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&keys, "k%d\n", i)
	}
	os.WriteFile("k.txt", []byte(keys.String()), 0o644)
	for _, args := range [][]string{
		{"-n", "100", "-expansion", "4294967295"}, {"-n", "100", "-expansion", "32769"}, {"-ratio", "0"}, {"-ratio", "1"},
		{"-fpr", "0"}, {"-fpr", "0", "-ratio", "0"}, {"-profile", "redisbloom", "-ratio", "0.25"},
	} {
		_, e, code := invoke(append(append([]string{"build", "-kind", "scalable"}, args...), "-o", "s.blf", "k.txt"), "")
		if code != 2 || !strings.Contains(e, "-"+strings.TrimPrefix(args[len(args)-2], "-")) {
			t.Errorf("build %v: exit %d: %s", args, code, e)
		}
	}
	if _, e, code := invoke([]string{"build", "-kind", "scalable", "-n", "100", "-expansion", "32768", "-o", "s.blf", "k.txt"}, ""); code != 0 {
		t.Fatalf("build: exit %d: %s", code, e)
	}
	// The file with the first link full and a hostile expansion.
	b, _ := os.ReadFile("s.blf")
	b = bytes.Clone(b[:len(b)-4])
	binary.LittleEndian.PutUint32(b[format.HeaderSize:], 2566914049)
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))
	os.WriteFile("s.blf", b, 0o644)
	if out, e, code := invoke([]string{"query", "-c", "s.blf", "k.txt"}, ""); code != 0 || out != "100\n" {
		t.Fatalf("query of the crafted file: %q exit %d: %s", out, code, e)
	}
	var more strings.Builder
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&more, "more%d\n", i)
	}
	os.WriteFile("more.txt", []byte(more.String()), 0o644)
	_, e, code := invoke([]string{"add", "s.blf", "more.txt"}, "")
	if code != 1 || !strings.Contains(e, "filter is full") || !strings.Contains(e, "unchanged") {
		t.Errorf("add past the first link: exit %d: %s", code, e)
	}
	if c, _ := os.ReadFile("s.blf"); !bytes.Equal(c, b) {
		t.Error("a refused add changed the file")
	}
	if out, _, _ := invoke([]string{"info", "s.blf"}, ""); !strings.Contains(out, "cannot grow") {
		t.Errorf("info does not say the chain cannot grow:\n%s", out)
	}
}
