package bloomlab_test

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/bloomlab/bloomlab"
	"github.com/bloomlab/bloomlab/internal/kind"
)

// Loading a file (issue 10): a decoder that knows the file's size
// allocates each payload once at its final size, so loading a file of S
// bytes should cost about S bytes and about the time of reading the file.
// TestLoadMemory holds every kind to the first; BenchmarkLoad measures the
// second against os.ReadFile of the same file:
//
//	go test -run XXX -bench Load -benchtime 10x -count 5 . | benchstat -col /op -
var (
	loadMiB  = flag.Int("load.mib", 32, "BenchmarkLoad: file size in MiB")
	loadFill = flag.Float64("load.fill", 0.25, "BenchmarkLoad and TestLoadMemory: keys added, as a fraction of capacity (capped at 2^21 keys)")
)

// loadFile is one kind's file for the load tests.
type loadFile struct {
	kind string
	path string
	size int64
}

// writeLoadFiles writes into dir one file per kind of about mib MiB,
// sized for 1% false positives and holding fill·capacity keys (at most
// 2^21, so that building stays quick).
func writeLoadFiles(tb testing.TB, dir string, mib int, fill float64) []loadFile {
	tb.Helper()
	var out []loadFile
	for _, s := range kind.All() {
		// Size n so that the structure takes about mib MiB: plan once
		// for 2^20 keys and scale (every kind's memory is about linear
		// in n).
		const probe = 1 << 20
		p, err := kind.PlanDefault(s, kind.Target{N: probe, FPR: 0.01, Seed: 1})
		if err != nil {
			tb.Fatalf("%s: %v", s.Name, err)
		}
		n := uint64(float64(probe) * float64(uint64(mib)<<23) / float64(p.Bits))
		if p, err = kind.PlanDefault(s, kind.Target{N: n, FPR: 0.01, Seed: 1}); err != nil {
			tb.Fatalf("%s: %v", s.Name, err)
		}
		b, err := p.New()
		if err != nil {
			tb.Fatalf("%s: %v", s.Name, err)
		}
		keys := min(uint64(fill*float64(n)), 1<<21)
		var key []byte
		for i := range keys {
			key = strconv.AppendUint(key[:0], i, 10)
			if err := b.Add(key); err != nil {
				tb.Fatalf("%s: key %d: %v", s.Name, i, err)
			}
		}
		f, err := b.Finish()
		if err != nil {
			tb.Fatalf("%s: %v", s.Name, err)
		}
		path := filepath.Join(dir, s.Name+".blf")
		w, err := os.Create(path)
		if err != nil {
			tb.Fatal(err)
		}
		size, err := f.WriteTo(w)
		if err != nil {
			tb.Fatalf("%s: %v", s.Name, err)
		}
		if err := w.Close(); err != nil {
			tb.Fatal(err)
		}
		out = append(out, loadFile{kind: s.Name, path: path, size: size})
	}
	return out
}

// loadOnce reads the file at path with bloomlab.ReadFrom, from the
// *os.File itself (which knows its size) or, if section, through an
// io.SectionReader as the command does.
func loadOnce(path string, section bool) (bloomlab.Filter, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	var r io.Reader = fh
	if section {
		st, err := fh.Stat()
		if err != nil {
			return nil, err
		}
		r = io.NewSectionReader(fh, 0, st.Size())
	}
	return bloomlab.ReadFrom(r)
}

// BenchmarkLoad loads a file of every kind (-load.mib MiB) with
// bloomlab.ReadFrom from the open file, beside op=readfile, os.ReadFile of
// the same file: the target is load ≤ 2 × readfile.
func BenchmarkLoad(b *testing.B) {
	files := writeLoadFiles(b, b.TempDir(), *loadMiB, *loadFill)
	for _, lf := range files {
		b.Run("kind="+lf.kind+"/op=readfile", func(b *testing.B) {
			b.SetBytes(lf.size)
			b.ReportAllocs()
			for b.Loop() {
				data, err := os.ReadFile(lf.path)
				if err != nil {
					b.Fatal(err)
				}
				sinkBytes = data
			}
			sinkBytes = nil
		})
		b.Run("kind="+lf.kind+"/op=load", func(b *testing.B) {
			b.SetBytes(lf.size)
			b.ReportAllocs()
			for b.Loop() {
				f, err := loadOnce(lf.path, false)
				if err != nil {
					b.Fatal(err)
				}
				sinkFilter = f
			}
			sinkFilter = nil
		})
	}
}

// Sinks, so that the compiler cannot delete the work.
var (
	sinkBytes  []byte
	sinkFilter bloomlab.Filter
)

// TestLoadMemory holds every kind to the memory target of issue 10:
// loading a file of S bytes from a reader that knows its size (an
// *os.File, an io.SectionReader, a bytes.Reader) allocates at most
// 1.1·S + 2 MiB in all.
func TestLoadMemory(t *testing.T) {
	mib := 16
	if testing.Short() {
		mib = 4
	}
	files := writeLoadFiles(t, t.TempDir(), mib, 1.0/16)
	for _, lf := range files {
		data, err := os.ReadFile(lf.path)
		if err != nil {
			t.Fatal(err)
		}
		want, err := bloomlab.Unmarshal(data)
		if err != nil {
			t.Fatalf("%s: %v", lf.kind, err)
		}
		limit := uint64(1.1*float64(lf.size)) + 2<<20
		for _, how := range []string{"file", "section", "bytes"} {
			var got bloomlab.Filter
			alloc := allocated(func() {
				switch how {
				case "bytes":
					got, err = bloomlab.ReadFrom(bytes.NewReader(data))
				default:
					got, err = loadOnce(lf.path, how == "section")
				}
			})
			if err != nil {
				t.Fatalf("%s from a %s: %v", lf.kind, how, err)
			}
			if !sameFile(t, got, want) {
				t.Errorf("%s from a %s: loads a different filter", lf.kind, how)
			}
			t.Logf("%-12s %-8s file %6.2f MiB, allocated %6.2f MiB (%.3f × size)", lf.kind, how,
				float64(lf.size)/(1<<20), float64(alloc)/(1<<20), float64(alloc)/float64(lf.size))
			if alloc > limit {
				t.Errorf("%s from a %s: a file of %d bytes allocated %d bytes, limit 1.1 × size + 2 MiB = %d",
					lf.kind, how, lf.size, alloc, limit)
			}
		}
	}
}

// allocated returns the bytes f allocates (runtime.MemStats.TotalAlloc).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// sameFile reports whether f and g write the same bytes.
func sameFile(t *testing.T, f, g bloomlab.Filter) bool {
	t.Helper()
	var a, b bytes.Buffer
	if _, err := f.WriteTo(&a); err != nil {
		t.Fatal(err)
	}
	if _, err := g.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(a.Bytes(), b.Bytes())
}
