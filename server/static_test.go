package server

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bloomlab/bloomlab/fuse"
	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/ribbon"
)

// TestLoadStatic: a static filter (fuse, ribbon) served with -load answers
// BF.EXISTS, BF.MEXISTS, BF.CARD and BF.INFO as the other loaded kinds do,
// with no false negative; BF.ADD, BF.MADD and BF.INSERT answer the error
// that says the filter is static and how to rebuild it (kind.StaticError,
// RedisBloom's "ERR " prefix) and change nothing; BF.LOADCHUNK onto it is
// refused as onto any complete filter; DUMP and BF.SCANDUMP refuse it (no
// RedisBloom form). It persists in -dir and comes back at restart.
func TestLoadStatic(t *testing.T) {
	keys := make([][]byte, 500)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "k%d", i)
	}
	files := t.TempDir()
	write := func(name string, f kind.Filter, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(files, name)
		w, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteTo(w); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return path
	}
	fu, err := fuse.New(keys, fuse.Config{})
	fuPath := write("fu.blf", fu, err)
	rb, err := ribbon.New(keys, ribbon.Config{})
	rbPath := write("rb.blf", rb, err)
	dir := t.TempDir()
	cfg := Config{Dir: dir, Load: []Load{{Name: "fu", Path: fuPath}, {Name: "rb", Path: rbPath}}}
	s := start(t, cfg)
	for round := 0; round < 2; round++ {
		c := dial(t, s)
		for _, k := range []string{"fu", "rb"} {
			name := map[string]string{"fu": "fuse", "rb": "ribbon"}[k]
			checkAll(t, c, k, 0, 500)
			static := "-ERR cannot add keys to a " + name + " filter: the filter is static: it is built once from its whole key set and answers for exactly those keys; " +
				"rebuild it from all the keys (bloomlab build -kind " + name + " -o FILE KEYFILE…) and serve the new file (bloomlab serve -load NAME=FILE)"
			expect(t, c, [][]string{
				{"+MBbloom--", "TYPE", k},
				{"*[:1, :1]", "BF.MEXISTS", k, "k1", "k499"},
				{":500", "BF.CARD", k},
				{static, "BF.ADD", k, "new"},
				{static, "BF.MADD", k, "new", "k1"},
				{static, "BF.INSERT", k, "ITEMS", "new"},
				{static, "BF.INSERT", k, "NOCREATE", "ITEMS", "new"},
				{"-ERR invalid offset - no link found", "BF.LOADCHUNK", k, "1", "x"},
				{"-ERR key holds a bloomlab " + name + " filter, which Redis cannot load", "DUMP", k},
				{":500", "BF.CARD", k},
			})
			if got := c.do("BF.INFO", k); !strings.HasPrefix(got, "*[+Capacity, :500, +Size, ") || !strings.Contains(got, "+Number of items inserted, :500") {
				t.Fatalf("BF.INFO %s: %s", k, got)
			}
			if got := c.do("BF.SCANDUMP", k, "0"); !strings.HasPrefix(got, "-ERR ") {
				t.Fatalf("BF.SCANDUMP %s: %s", k, got)
			}
			if got := c.do("BF.EXISTS", k, "new"); got != ":0" && got != ":1" {
				t.Fatalf("BF.EXISTS %s new: %s", k, got)
			}
		}
		s = restart(t, s, cfg)
	}
	s.Close()
}
