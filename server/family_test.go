package server

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"
)

// TestFamiliesDeclared: every registered family declares every piece
// (checkFamily), every command and value type belongs to one, and the
// files that only look things up (rdbvalue.go, cmddocs.go, commands.go,
// types.go, client.go, family.go) name no family's value or structure
// package, so that a new family is one new file.
func TestFamiliesDeclared(t *testing.T) {
	if len(families) < 11 {
		t.Fatalf("%d families registered", len(families))
	}
	for _, f := range families {
		for _, m := range checkFamily(f) {
			t.Error(m)
		}
	}
	for name, c := range commandTable {
		if c.fam == nil {
			t.Errorf("%s: registered outside a family", name)
		}
	}
	for tag, vt := range valueTypes {
		if vt.fam == nil {
			t.Errorf("value tag %d (%s): registered outside a family", tag, vt.name)
		}
	}
	structures := map[string]bool{}
	for _, p := range []string{"countmin", "cuckoo", "scalable", "tdigest", "topk", "bloom", "blocked", "fuse", "ribbon"} {
		structures["github.com/bloomlab/bloomlab/"+p] = true
	}
	fset := token.NewFileSet()
	for _, file := range []string{"rdbvalue.go", "cmddocs.go", "commands.go", "types.go", "client.go", "family.go"} {
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); structures[p] {
				t.Errorf("%s imports %s: a family's codec or command belongs in the family's file", file, p)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				switch id.Name {
				case "bfValue", "cfValue", "cmsValue", "topkValue", "tdigestValue", "strValue", "bfType", "cfType", "cmsType", "topkType", "tdigestType", "stringType":
					t.Errorf("%s: names %s", fset.Position(id.Pos()), id.Name)
				}
			}
			return true
		})
	}
}

// TestFamilyCheckFinds: checkFamily names each piece a family leaves out.
func TestFamilyCheckFinds(t *testing.T) {
	run := func(*client, [][]byte) bool { return false }
	vt := &valueType{name: "X-TYPE", tag: 200, decode: decodeString}
	for _, tc := range []struct {
		f    *family
		want string
	}{
		{&family{name: "x", module: true, commands: []*command{{name: "x.a", arity: -1, summary: "s", since: "1", acl: "read", run: run, doc: &cmdDoc{}, info8: &modInfo{2, "readonly"}}}}, "ACL category"},
		{&family{name: "x", types: []*valueType{vt}, commands: []*command{{name: "x.a", arity: 2, summary: "s", since: "1", acl: "read", run: run}}}, "without an RDB codec"},
		{&family{name: "x", rdb: &rdbCodec{module: "X"}, commands: []*command{{name: "x.a", arity: 2, summary: "s", since: "1", acl: "read", run: run}}}, "module codec"},
		{&family{name: "x", commands: []*command{{name: "x.a", arity: 2, summary: "s", since: "1", run: run}}}, "ACL categories"},
		{&family{name: "x", commands: []*command{{name: "x.a", arity: 2, since: "1", acl: "read", run: run}}}, "summary"},
		{&family{name: "x", commands: []*command{{name: "x.a", summary: "s", since: "1", acl: "read", run: run}}}, "arity"},
		{&family{name: "x", category: "x", module: true, commands: []*command{{name: "x.a", arity: -1, summary: "s", since: "1", acl: "read", run: run}}}, "COMMAND DOCS or INFO"},
		{&family{name: "x", commands: []*command{{name: "x.a", arity: 2, summary: "s", since: "1", acl: "write", flags: fWrite, lock: lockWrite, run: run}}}, "declares no key"},
		{&family{name: "x", commands: []*command{{name: "x.a", arity: 2, summary: "s", since: "1", acl: "read", lock: lockRead, keys: []keySpec{{first: 1, last: 1, step: 1}}, run: run}}}, "neither read nor written"},
		{&family{name: "x", commands: []*command{{name: "x", arity: -2, summary: "s", since: "1", acl: "slow", run: run, subs: []subcommand{{"a", 2, ""}}}}}, "subcommand"},
		{&family{name: "x"}, "no commands"},
	} {
		miss := strings.Join(checkFamily(tc.f), "; ")
		if !strings.Contains(miss, tc.want) {
			t.Errorf("%+v: checkFamily says %q, want it to name %q", tc.f, miss, tc.want)
		}
	}
}

// TestArgc: the counts dispatch enforces.
func TestArgc(t *testing.T) {
	for _, tc := range []struct {
		a    argc
		ok   []int
		fail []int
	}{
		{exactly(3), []int{3}, []int{2, 4}},
		{atLeast(3), []int{3, 4, 100}, []int{1, 2}},
		{between(2, 3), []int{2, 3}, []int{1, 4}},
		{stepped(3, 2), []int{3, 5, 7}, []int{2, 4, 6}},
		{stepped(4, 2), []int{4, 6}, []int{3, 5}},
		{counts(3, 6, 3), []int{3, 6}, []int{4, 5, 9}},
		{counts(2, 4, 2), []int{2, 4}, []int{3, 5, 6}},
	} {
		for _, n := range tc.ok {
			if !tc.a.ok(n) {
				t.Errorf("%+v refuses %d", tc.a, n)
			}
		}
		for _, n := range tc.fail {
			if tc.a.ok(n) {
				t.Errorf("%+v takes %d", tc.a, n)
			}
		}
	}
	cms := commandTable["cms.initbydim"]
	if cms.argsOK(6, false) || !cms.argsOK(6, true) || !cms.argsOK(4, false) {
		t.Errorf("cms.initbydim: a 6-argument record replays, a 6-argument command does not")
	}
}
