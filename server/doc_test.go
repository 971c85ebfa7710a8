package server

import (
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// TestPackageDoc: the package comment names the command families served
// and both dialects (it said "as RedisBloom 2.4.23", which is the
// -dialect 2.4 answer, not the default 8.6.2).
func TestPackageDoc(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", nil, parser.PackageClauseOnly|parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Join(strings.Fields(f.Doc.Text()), " ")
	for _, s := range []string{"BF.*", "CF.*", "CMS.*", "TOPK.*", "TDIGEST.*", "RedisBloom 8.6.2", "2.4.23"} {
		if !strings.Contains(doc, s) {
			t.Errorf("package comment does not say %q: %s", s, doc[:min(len(doc), 300)])
		}
	}
	if strings.Contains(doc, "commands as RedisBloom 2.4.23") {
		t.Errorf("package comment says it answers as RedisBloom 2.4.23 (the default is 8.6.2)")
	}
}
