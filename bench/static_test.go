package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestStaticRun: the -static run at 5000 keys prints a table with every
// row, each group's reference marked, and fails on no row (a false
// negative or a batched answer that disagrees would be an error).
func TestStaticRun(t *testing.T) {
	var out, progress bytes.Buffer
	if err := run([]string{"-static", "-static-keys", "5000,1000", "-static-rounds", "2"}, &out, &progress); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, l := range staticLibs {
		if strings.Count(s, " "+l.name) != 2 {
			t.Errorf("row %s not in both tables:\n%s", l.name, s)
		}
	}
	if !strings.Contains(s, "xorfilter-bfuse8 *") || !strings.Contains(s, "n = 5000 keys") {
		t.Errorf("table:\n%s", s)
	}
	for _, bad := range [][]string{{"-static", "-static-keys", "0"}, {"-static", "-static-keys", "x"}, {"-static", "-static-rounds", "0"}} {
		if err := run(bad, &out, &progress); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// BenchmarkStatic: every -static row at -keys keys (go test -bench Static
// -keys 1000000): build per key, single and batched queries of present
// keys, with ns/key.
func BenchmarkStatic(b *testing.B) {
	n := *keysFlag
	keys := makeKeys(n, 1)
	out := make([]bool, staticChunk)
	for _, l := range staticLibs {
		b.Run(l.name+"/op=build", func(b *testing.B) {
			for b.Loop() {
				if _, err := l.build(keys); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
		})
		f, err := l.build(keys)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(l.name+"/op=query", func(b *testing.B) {
			j := 0
			for b.Loop() {
				f.contains(keys[j : j+1])
				j = (j + 1) % n
			}
		})
		if _, ok := f.containsBatch(keys[:1], out); ok {
			b.Run(l.name+"/op=batch", func(b *testing.B) {
				j := 0
				for b.Loop() {
					c := min(staticChunk, n-j)
					f.containsBatch(keys[j:j+c], out)
					j = (j + c) % n
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/staticChunk, "ns/key")
			})
		}
	}
}
