package main

import (
	"strings"
	"testing"
)

// build -kind choices, online and offline (-rounds), has no false
// negatives; info, query and add work on the result.
func TestBuildChoices(t *testing.T) {
	workdir(t)
	for _, args := range [][]string{
		{"build", "-kind", "choices", "-fpr", "0.01", "-o", "on.blf", "words.txt"},
		{"build", "-kind", "choices", "-c", "3", "-rounds", "10", "-bits-per-key", "12", "-o", "off.blf", "words.txt"},
		{"build", "-kind", "choices", "-m", "5000", "-k", "6", "-c", "1", "-scheme", "independent", "-o", "one.blf", "words.txt"},
	} {
		if _, e, code := invoke(args, ""); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, e)
		}
		f := args[len(args)-2]
		if o, e, code := invoke([]string{"query", "-c", "-v", f, "words.txt"}, ""); o != "0\n" || code != 1 {
			t.Errorf("%s: %s words reported absent, exit %d %s", f, strings.TrimSpace(o), code, e)
		}
		o, e, code := invoke([]string{"info", f}, "")
		if code != 0 || !strings.Contains(o, "kind:") || !strings.Contains(o, "choices") {
			t.Errorf("info %s: exit %d %q %q", f, code, o, e)
		}
	}
	if _, e, code := invoke([]string{"add", "off.blf", "others.txt"}, ""); code != 0 {
		t.Fatalf("add: %s", e)
	}
	if o, _, _ := invoke([]string{"query", "-c", "-v", "off.blf", "words.txt", "others.txt"}, ""); o != "0\n" {
		t.Errorf("after add: %s absent", o)
	}
	for _, args := range [][]string{
		{"build", "-kind", "bloom", "-c", "2", "-fpr", "0.01", "-o", "x.blf", "words.txt"},
		{"build", "-kind", "choices", "-c", "9", "-fpr", "0.01", "-o", "x.blf", "words.txt"},
		{"build", "-kind", "choices", "-rounds", "-1", "-fpr", "0.01", "-o", "x.blf", "words.txt"},
		{"build", "-kind", "choices", "-scheme", "partition", "-fpr", "0.01", "-o", "x.blf", "words.txt"},
	} {
		if _, e, code := invoke(args, ""); code != 2 || strings.Count(e, "\n") != 1 {
			t.Errorf("%v: exit %d, %q", args, code, e)
		}
	}
}
