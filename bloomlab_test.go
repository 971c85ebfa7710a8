package bloomlab_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bloomlab/bloomlab"
	"github.com/bloomlab/bloomlab/blocked"
	"github.com/bloomlab/bloomlab/bloom"
	"github.com/bloomlab/bloomlab/choices"
	"github.com/bloomlab/bloomlab/counting"
	"github.com/bloomlab/bloomlab/hashing"
)

func files(t testing.TB) map[string][]byte {
	b, err := bloom.New(1000, 3, bloom.WithSeed(1))
	if err != nil {
		t.Fatal(err)
	}
	p, err := bloom.NewPartitioned(1000, 3, bloom.WithScheme(hashing.PrimePartition))
	if err != nil {
		t.Fatal(err)
	}
	c, err := counting.New(1000, 3, counting.WithSeed(2))
	if err != nil {
		t.Fatal(err)
	}
	bl, err := blocked.New(1024, 4, blocked.WithSeed(3))
	if err != nil {
		t.Fatal(err)
	}
	ch, err := choices.New(choices.Config{M: 1000, K: 3, C: 2, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	ch.AddString("key")
	out := map[string][]byte{}
	if data, err := ch.MarshalBinary(); err == nil {
		out["choices"] = data
	} else {
		t.Fatal(err)
	}
	for kind, f := range map[string]bloomlab.Filter{"bloom": b, "partitioned": p, "counting": c, "blocked": bl} {
		switch g := f.(type) {
		case *bloom.Filter:
			g.AddString("key")
		case *counting.Filter:
			g.AddString("key")
		case *blocked.Filter:
			g.AddString("key")
		}
		var buf bytes.Buffer
		if _, err := f.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		out[kind] = buf.Bytes()
	}
	return out
}

func TestReadAnyKind(t *testing.T) {
	for kind, data := range files(t) {
		f, err := bloomlab.Unmarshal(data)
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		if f.Kind() != kind || !f.Contains([]byte("key")) {
			t.Errorf("%s: got kind %s, contains %v", kind, f.Kind(), f.Contains([]byte("key")))
		}
		// Two files back to back in one stream.
		r := bytes.NewReader(append(bytes.Clone(data), data...))
		for i := 0; i < 2; i++ {
			if _, err := bloomlab.ReadFrom(r); err != nil {
				t.Fatalf("%s: file %d of a stream: %v", kind, i, err)
			}
		}
		if _, err := bloomlab.ReadFrom(r); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("%s: empty stream: %v", kind, err)
		}
	}
}

func TestRejects(t *testing.T) {
	data := files(t)["bloom"]
	unknown := bytes.Clone(data)
	unknown[6] = 42
	for name, b := range map[string][]byte{
		"empty":     nil,
		"garbage":   []byte("this is not a filter at all, not even close to one"),
		"truncated": data[:len(data)-1],
		"trailing":  append(bytes.Clone(data), 1),
		"unknown":   unknown,
	} {
		f, err := bloomlab.Unmarshal(b)
		if err == nil || f != nil {
			t.Errorf("%s: accepted (%v)", name, f)
			continue
		}
		if !errors.Is(err, bloomlab.ErrFormat) {
			t.Errorf("%s: %v does not wrap ErrFormat", name, err)
		}
	}
}

func FuzzUnmarshal(f *testing.F) {
	for _, b := range files(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := bloomlab.Unmarshal(data)
		if err != nil {
			if g != nil {
				t.Fatal("filter returned with an error")
			}
			return
		}
		var buf bytes.Buffer
		if _, err := g.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), data) {
			t.Fatal("accepted input does not re-encode to itself")
		}
	})
}

// Every golden file of every kind — the files earlier releases wrote
// included (dlcbf and countmin keep their first layout as *-v1) — loads
// through the root loader as the kind its name says, and writes back to a
// file that loads again.
func TestGoldenFilesLoad(t *testing.T) {
	paths, err := filepath.Glob("*/testdata/*.golden")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, path := range paths {
		if strings.HasPrefix(path, "cmd/") || strings.HasPrefix(path, "internal/") {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := bloomlab.Unmarshal(data)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		base := filepath.Base(path)
		if want := strings.SplitN(base, "-", 2)[0]; f.Kind() != want && !(want == "bloom" && f.Kind() == "partitioned") {
			t.Errorf("%s holds a %s", path, f.Kind())
		}
		seen[f.Kind()] = true
		var b bytes.Buffer
		if _, err := f.WriteTo(&b); err != nil {
			t.Errorf("%s: rewrite: %v", path, err)
		} else if _, err := bloomlab.Unmarshal(b.Bytes()); err != nil {
			t.Errorf("%s: rewritten file: %v", path, err)
		}
	}
	for _, k := range bloomlab.Kinds() {
		if !seen[k] {
			t.Errorf("no golden file of kind %s", k)
		}
	}
}
