package kind

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNoFlagInLibrary: no library package imports "flag". The structures
// declare their options as data (Option) and name parameters in their
// errors (ParamError); only the command (cmd/), the benchmarks (bench/)
// and the command's flag helpers (internal/flagx) speak flags.
func TestNoFlagInLibrary(t *testing.T) {
	root := filepath.Join("..", "..")
	allowed := []string{"cmd", "bench", filepath.Join("internal", "flagx")}
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			for _, a := range allowed {
				if rel == a {
					return filepath.SkipDir
				}
			}
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		for _, im := range f.Imports {
			if p, _ := strconv.Unquote(im.Path.Value); p == "flag" {
				t.Errorf("%s imports flag: declare options as kind.Option, name parameters with kind.ParamError", rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Errorf("checked %d files: the walk missed the module", checked)
	}
}
