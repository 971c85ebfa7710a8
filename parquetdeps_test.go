package bloomlab_test

import (
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParquetOnlyInCommand: parquet-go (and so its dependencies) is
// imported by the command alone, never by a library package: the kinds
// (sbbf included) stay standard library plus their hashes (issue 26).
func TestParquetOnlyInCommand(t *testing.T) {
	checked := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "bench" || d.Name() == "cmd") {
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != "." {
			return filepath.SkipDir
		}
		p, err := build.ImportDir(path, 0)
		if err != nil {
			if _, ok := err.(*build.NoGoError); ok {
				return nil
			}
			return err
		}
		checked++
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, "github.com/parquet-go/") {
				t.Errorf("package %s imports %s: Parquet files are the command's", path, imp)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 20 {
		t.Fatalf("only %d packages checked", checked)
	}
}
