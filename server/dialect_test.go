package server

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"strings"
	"testing"
)

// TestDialectSwitchRestart: a -dir written under one dialect restarts
// under the other with every key as it was (types, expiry times, strings,
// each filter's and sketch's info, dump and answers), from the log alone
// and from a snapshot, and back again. Under Dialect8 the module configs
// are changed before keys are made with defaults (BF.ADD, CF.ADD,
// BF.INSERT on missing keys): CONFIG SET lives in memory only, so the
// restarted server has RedisBloom's defaults, and the log must record
// what those commands made, not the defaults they read. The families
// test their own commands the same way.
func TestDialectSwitchRestart(t *testing.T) {
	var items []string
	for i := 0; i < 200; i++ {
		items = append(items, fmt.Sprint("i", i))
	}
	for _, from := range []Dialect{Dialect24, Dialect8} {
		to := Dialect8
		if from == Dialect8 {
			to = Dialect24
		}
		for _, mode := range []string{"log", "snapshot"} {
			t.Run(fmt.Sprintf("%v to %v, %s", from, to, mode), func(t *testing.T) {
				dir := t.TempDir()
				cfg := Config{Dir: dir, AppendFsync: No, Dialect: from}
				s := start(t, cfg)
				c := dial(t, s)
				if from == Dialect8 {
					for _, kv := range [][2]string{{"bf-error-rate", "0.002"}, {"bf-initial-size", "37"},
						{"bf-expansion-factor", "4"}, {"cf-initial-size", "300"}, {"cf-bucket-size", "4"},
						{"cf-max-iterations", "7"}, {"cf-expansion-factor", "2"}, {"cf-max-expansions", "5"}} {
						if got := c.do("CONFIG", "SET", kv[0], kv[1]); got != "+OK" {
							t.Fatalf("CONFIG SET %s: %s", kv[0], got)
						}
					}
				}
				for _, cmd := range [][]string{
					{"SET", "str", "v"}, {"SET", "exp", "w", "EX", "1000"}, {"SET", "gone", "x"}, {"DEL", "gone"},
					{"BF.RESERVE", "bf", "0.01", "50", "EXPANSION", "2"}, {"BF.RESERVE", "bfns", "0.001", "100", "NONSCALING"},
					{"CF.RESERVE", "cf", "128", "BUCKETSIZE", "2", "MAXITERATIONS", "20", "EXPANSION", "1"},
					{"CMS.INITBYDIM", "cms", "100", "4"}, {"CMS.INITBYPROB", "cmp", "0.01", "0.01"}, {"CMS.INITBYPROB", "cmp2", "0.01", "0.01"},
				} {
					if got := c.do(cmd...); strings.HasPrefix(got, "-") {
						t.Fatalf("%q: %s", cmd, got)
					}
				}
				for i, it := range items {
					for _, cmd := range [][]string{
						{"BF.ADD", "bf", it}, {"BF.ADD", "bfd", it}, {"BF.INSERT", "bfi", "ITEMS", it},
						{"CF.ADD", "cf", it}, {"CF.ADD", "cfd", it}, {"CMS.INCRBY", "cms", it, "3", "hot", "1"},
					} {
						if got := c.do(cmd...); strings.HasPrefix(got, "-") {
							t.Fatalf("%q: %s", cmd, got)
						}
					}
					if i < 80 {
						c.do("BF.ADD", "bfns", it)
					}
					if i%10 == 0 {
						c.do("CF.DEL", "cfd", it)
					}
				}
				c.do("RENAME", "bfd", "bf-defaults")
				c.do("EXPIRE", "cf", "5000")
				if got := c.do("CMS.MERGE", "cmp2", "1", "cmp"); got != "+OK" {
					t.Fatalf("CMS.MERGE: %s", got)
				}
				want := stateOf(t, c, items)
				if mode == "snapshot" {
					if err := s.Shutdown(context.Background()); err != nil {
						t.Fatal(err)
					}
				}
				for _, d := range []Dialect{to, from} {
					cfg.Dialect = d
					s = restart(t, s, cfg)
					if got := stateOf(t, dial(t, s), items); got != want {
						t.Fatalf("restarted under dialect %v:\n%s\nwritten under dialect %v:\n%s", d, got, from, want)
					}
				}
			})
		}
	}
}

// TestDialectOnePlace: every difference between the dialects is a field
// of their rows (dialect.go): no other file of the package names a
// dialect constant outside comments, so that no handler branches on the
// release, and every row fills the fields that have no zero meaning.
func TestDialectOnePlace(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go") && fi.Name() != "dialect.go"
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pkgs {
		for name, f := range p.Files {
			ast.Inspect(f, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok && (id.Name == "Dialect8" || id.Name == "Dialect24") {
					t.Errorf("%s: %s names %s: read a field of the dialect's row (c.d, s.d) instead", fset.Position(id.Pos()), name, id.Name)
				}
				if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "Dialect" {
					if x, ok := sel.X.(*ast.SelectorExpr); ok && x.Sel.Name == "cfg" {
						// s.cfg.Dialect is passed on (openReadOnly), never compared.
						if _, isCmp := n.(*ast.BinaryExpr); isCmp {
							t.Errorf("%s: compares cfg.Dialect", fset.Position(sel.Pos()))
						}
					}
				}
				if b, ok := n.(*ast.BinaryExpr); ok && (b.Op == token.EQL || b.Op == token.NEQ) {
					for _, side := range []ast.Expr{b.X, b.Y} {
						if sel, ok := side.(*ast.SelectorExpr); ok && sel.Sel.Name == "Dialect" {
							t.Errorf("%s: compares a Dialect: read a field of its row", fset.Position(b.Pos()))
						}
					}
				}
				return true
			})
		}
	}
	for i := range dialects {
		d := &dialects[i]
		if len(d.names) == 0 || d.about == "" || d.redisVersion == "" || d.rdbVersion == 0 || d.moduleVersion == 0 ||
			d.cfRangeText == "" || d.cfCapLowText == "" || d.cfAllocText == "" {
			t.Errorf("dialect %d: a field without a zero meaning is unset: %+v", i, *d)
		}
		got, err := ParseDialect(d.names[0])
		if err != nil || int(got) != i || got.String() != d.names[0] {
			t.Errorf("dialect %d: ParseDialect(%q) = %v, %v", i, d.names[0], got, err)
		}
	}
}
