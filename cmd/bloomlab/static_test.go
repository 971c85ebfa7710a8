package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// staticKinds are the static kinds (kind.Spec.Static) the command tests.
var staticKinds = []string{"fuse", "ribbon"}

// writeStaticKeys writes n keys "PREFIX-i" to name and returns them as the
// text a pipe would carry.
func writeStaticKeys(t *testing.T, name, prefix string, n int) string {
	t.Helper()
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%s-%d\n", prefix, i)
	}
	if err := os.WriteFile(name, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestStaticBuildPipe: a static kind builds from standard input without
// -n (its size is set by the keys it gets), with every key present and
// no warning about its capacity (build's or info's), info -json marking
// it static; the other kinds still need -n there.
func TestStaticBuildPipe(t *testing.T) {
	t.Chdir(t.TempDir())
	keys := writeStaticKeys(t, "keys.txt", "k", 3000)
	for _, k := range staticKinds {
		_, e, code := invoke([]string{"build", "-kind", k, "-fpr", "0.01", "-o", k + ".blf"}, keys)
		if code != 0 || strings.Contains(e, "warning") {
			t.Fatalf("%s: build from a pipe without -n: exit %d: %s", k, code, e)
		}
		if out, e, code := invoke([]string{"query", "-c", k + ".blf", "keys.txt"}, ""); code != 0 || out != "3000\n" {
			t.Fatalf("%s: query -c = %q, exit %d, %s: false negatives", k, out, code, e)
		}
		if out, e, code := invoke([]string{"info", k + ".blf"}, ""); code != 0 || strings.Contains(out, "warning") || !strings.Contains(out, "keys added:") {
			t.Fatalf("%s: info exit %d: %s %s", k, code, out, e)
		}
		if out, e, code := invoke([]string{"info", "-json", k + ".blf"}, ""); code != 0 || !strings.Contains(out, `"static": true`) || strings.Contains(out, `"warnings"`) {
			t.Fatalf("%s: info -json exit %d: %s %s", k, code, out, e)
		}
	}
	if _, e, code := invoke([]string{"build", "-kind", "bloom", "-fpr", "0.01", "-o", "b.blf"}, keys); code != 2 || !strings.Contains(e, "need -n") {
		t.Fatalf("bloom from a pipe without -n: exit %d: %s", code, e)
	}
}

// TestStaticBuildMemory: a static kind's build checks, before it reads a
// key, that the peak of its build (plan.BuildBytes: 8 bytes of hash per
// key, the construction's working arrays and the filter) fits the memory the
// process may use, with -n and after counting a key file, and says what
// it needs; from a pipe without -n, the builder's budget stops it with an
// error, nothing written. The refusal wraps no usage error (exit 1).
func TestStaticBuildMemory(t *testing.T) {
	t.Chdir(t.TempDir())
	keys := writeStaticKeys(t, "keys.txt", "k", 20000)
	defer func(f func() uint64) { memoryLimit = f }(memoryLimit)
	memoryLimit = func() uint64 { return 100 << 10 } // 100 KiB: 20,000 keys' hashes take 156 KiB
	for _, k := range staticKinds {
		for _, args := range [][]string{
			{"build", "-kind", k, "-fpr", "0.01", "-o", k + ".blf", "keys.txt"},
			{"build", "-kind", k, "-fpr", "0.01", "-n", "1e6", "-o", k + ".blf", "keys.txt"},
		} {
			_, e, code := invoke(args, "")
			if code != 1 || !strings.Contains(e, "8 bytes of hash per key") || !strings.Contains(e, "more than the 100 KiB this process may use") {
				t.Fatalf("%s: %v: exit %d: %s", k, args, code, e)
			}
		}
		_, e, code := invoke([]string{"build", "-kind", k, "-fpr", "0.01", "-o", k + ".blf"}, keys)
		if code != 1 || !strings.Contains(e, "memory budget") || !strings.Contains(e, "nothing written (a static filter's build holds 8 bytes of hash per key") {
			t.Fatalf("%s: a pipe outgrowing memory: exit %d: %s", k, code, e)
		}
		if _, err := os.Stat(k + ".blf"); err == nil {
			t.Fatalf("%s: a refused build wrote its file", k)
		}
	}
	memoryLimit = func() uint64 { return 64 << 20 }
	for _, k := range staticKinds {
		if _, e, code := invoke([]string{"build", "-kind", k, "-fpr", "0.01", "-o", k + ".blf", "keys.txt"}, ""); code != 0 {
			t.Fatalf("%s: build within 64 MiB: exit %d: %s", k, code, e)
		}
	}
}

// TestStaticRate: a -fpr a static kind cannot meet exactly is met by the
// next rate it offers below, and build and plan show that rate: fuse's
// 8-bit fingerprints give 2^-8 for -fpr 0.01.
func TestStaticRate(t *testing.T) {
	t.Chdir(t.TempDir())
	writeStaticKeys(t, "keys.txt", "k", 1000)
	_, e, code := invoke([]string{"build", "-kind", "fuse", "-fpr", "0.01", "-o", "f.blf", "keys.txt"}, "")
	if code != 0 || !strings.Contains(e, "-fpr 0.01 gives 0.003906") {
		t.Fatalf("build: exit %d: %s", code, e)
	}
	out, e, code := invoke([]string{"plan", "-n", "1000", "-fpr", "0.01"}, "")
	if code != 0 {
		t.Fatalf("plan: exit %d: %s", code, e)
	}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && f[0] == "fuse" && !strings.Contains(line, "0.003906") {
			t.Fatalf("plan's fuse row does not show the rate 2^-8: %s", line)
		}
	}
}

// TestStaticBuildMemoryDocs: the README and build's help give, for a
// static build of 10^9 keys, what plan says its peak takes ("build
// memory" at -fpr 0.001), not only the 8 bytes of hash per key it holds.
func TestStaticBuildMemoryDocs(t *testing.T) {
	out, e, code := invoke([]string{"plan", "-n", "1e9", "-fpr", "0.001"}, "")
	if code != 0 {
		t.Fatalf("plan: exit %d: %s", code, e)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	flat := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	docs := map[string]string{"README.md": flat(string(readme)), "build's help": flat(lookup("build").summary)}
	for _, k := range staticKinds {
		var bytes float64
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) > 0 && f[0] == k {
				_, after, ok := strings.Cut(line, "build memory: ")
				if !ok {
					t.Fatalf("plan's %s row has no build memory: %s", k, line)
				}
				if _, err := fmt.Sscanf(after, "%g bytes", &bytes); err != nil {
					t.Fatalf("plan's %s row: %v: %s", k, err, line)
				}
			}
		}
		want := fmt.Sprintf("%.1f GB for %s", bytes/1e9, k)
		for name, text := range docs {
			if !strings.Contains(text, want) {
				t.Errorf("%s does not say %q (plan -n 1e9 -fpr 0.001)", name, want)
			}
		}
	}
	for name, text := range docs {
		if strings.Contains(text, "(8 GB for 10^9 keys)") {
			t.Errorf("%s gives 8 GB as a static build's memory for 10^9 keys", name)
		}
	}
}
