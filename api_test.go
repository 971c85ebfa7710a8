package bloomlab_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// publicPackages returns the directories of the module's importable
// packages outside internal/, cmd/ and bench/ (the root is "."), parsed
// without their tests.
func publicPackages(t *testing.T) map[string]*ast.Package {
	t.Helper()
	out := map[string]*ast.Package{}
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		base := filepath.Base(path)
		if path != "." && (strings.HasPrefix(base, ".") || base == "testdata" || base == "internal" || base == "cmd" || base == "bench" || base == "docs") {
			return filepath.SkipDir
		}
		pkgs, err := parser.ParseDir(token.NewFileSet(), path, func(fi os.FileInfo) bool {
			return !strings.HasSuffix(fi.Name(), "_test.go")
		}, parser.ParseComments)
		if err != nil {
			return err
		}
		for _, p := range pkgs {
			out[path] = p
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestNoExportedInternalParameters: no exported function or method of a
// public package takes a parameter of a type from an internal package,
// which no caller outside the module can name or make (cuckoo.Decode and
// scalable.Decode took a *format.Decoder). Results may be internal types
// reached through a public alias (bloomlab.Filter = kind.Filter).
func TestNoExportedInternalParameters(t *testing.T) {
	for dir, p := range publicPackages(t) {
		for name, f := range p.Files {
			internal := map[string]bool{} // local names of internal imports
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				if !strings.Contains(path, "/internal/") {
					continue
				}
				local := filepath.Base(path)
				if imp.Name != nil {
					local = imp.Name.Name
				}
				internal[local] = true
			}
			for _, decl := range f.Decls {
				fn, ok := decl.(*ast.FuncDecl)
				if !ok || !fn.Name.IsExported() {
					continue
				}
				if fn.Recv != nil && !exportedRecv(fn.Recv.List[0].Type) {
					continue
				}
				for _, field := range fn.Type.Params.List {
					ast.Inspect(field.Type, func(n ast.Node) bool {
						if sel, ok := n.(*ast.SelectorExpr); ok {
							if id, ok := sel.X.(*ast.Ident); ok && internal[id.Name] {
								t.Errorf("%s: %s takes %s.%s, an internal type no caller outside the module can make", filepath.Join(dir, filepath.Base(name)), fn.Name.Name, id.Name, sel.Sel.Name)
							}
						}
						return true
					})
				}
			}
		}
	}
}

func exportedRecv(e ast.Expr) bool {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.IsExported()
		default:
			return true
		}
	}
}

// TestRootDocListsEveryPackage: the root package's doc names every public
// package of the module, as a "  - name:" item (it listed 10 of 13).
func TestRootDocListsEveryPackage(t *testing.T) {
	pkgs := publicPackages(t)
	root := pkgs["."]
	if root == nil {
		t.Fatal("no root package")
	}
	d := doc.New(root, "github.com/bloomlab/bloomlab", doc.AllDecls)
	for dir := range pkgs {
		if dir == "." {
			continue
		}
		name := pkgs[dir].Name
		if !regexp.MustCompile(`(?m)^\s*- ` + regexp.QuoteMeta(name) + `:`).MatchString(d.Doc) {
			t.Errorf("the root package's doc does not list package %s (%s)", name, dir)
		}
	}
}
