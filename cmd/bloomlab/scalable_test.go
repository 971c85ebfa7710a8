package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
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
