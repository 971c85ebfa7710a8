package bloomlab_test

import (
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// layers are bloomlab's floors, lowest first: a package may import
// packages of its own floor or below, never above (the command over the
// server, the server over the kinds, the kinds over the internal helpers,
// which stand over theory, which stands over hashing). Every package of
// the module has a floor here; a new package must be given one.
var layers = []struct {
	name string
	pkgs []string // import paths relative to the module; "dir/*" is every package under dir
}{
	{"leaf", []string{"internal/base", "internal/xxh3mid"}},
	{"hashing", []string{"hashing"}},
	{"theory", []string{"theory"}},
	{"internal helpers and formats", []string{"internal/*", "server/internal/*", "rdb"}},
	{"kinds", []string{"blocked", "bloom", "choices", "counting", "countmin", "cuckoo", "dlcbf", "dleft", "fuse", "ribbon", "sbbf", "scalable", "tdigest", "topk"}},
	{"ReadFrom, every kind", []string{"."}},
	{"server, redisblocked", []string{"server", "redisblocked"}},
	{"command", []string{"cmd/*"}},
}

const module = "github.com/bloomlab/bloomlab"

// floor returns rel's floor, or -1 for none.
func floor(rel string) int {
	best, bestLen := -1, -1
	for i, l := range layers {
		for _, p := range l.pkgs {
			match := rel == p
			if dir, ok := strings.CutSuffix(p, "/*"); ok {
				match = rel == dir || strings.HasPrefix(rel, dir+"/")
			}
			// The longest pattern wins (internal/base over internal/*).
			if match && len(p) > bestLen {
				best, bestLen = i, len(p)
			}
		}
	}
	return best
}

// TestLayers: no package imports one on a floor above its own (non-test
// imports, every package of the module but the nested bench module).
func TestLayers(t *testing.T) {
	var rels []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "bench") {
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != "." {
			return filepath.SkipDir
		}
		rels = append(rels, filepath.ToSlash(path))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, rel := range rels {
		p, err := build.ImportDir(rel, 0)
		if err != nil {
			if _, ok := err.(*build.NoGoError); ok {
				continue
			}
			t.Fatal(err)
		}
		own := floor(rel)
		if own < 0 {
			t.Errorf("package %s has no floor in layers: give it one", rel)
			continue
		}
		checked++
		for _, imp := range p.Imports {
			if imp != module && !strings.HasPrefix(imp, module+"/") {
				continue
			}
			to := strings.TrimPrefix(strings.TrimPrefix(imp, module), "/")
			if to == "" {
				to = "."
			}
			f := floor(to)
			if f > own {
				t.Errorf("%s (%s) imports %s (%s), a floor above it", rel, layers[own].name, to, layers[f].name)
			}
		}
	}
	if checked < 25 {
		sort.Strings(rels)
		t.Fatalf("only %d packages checked: %v", checked, rels)
	}
}
