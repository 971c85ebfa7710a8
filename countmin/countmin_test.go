package countmin

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/format"
	"github.com/bloomlab/bloomlab/internal/stats"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

func key(i int) hashing.Digest { return hashing.SumUint64(uint64(i), 42) }

func TestDimensionsAndErrors(t *testing.T) {
	w, d, err := Dimensions(0.01, 0.01)
	if err != nil || w != 272 || d != 5 {
		t.Fatalf("Dimensions(0.01, 0.01) = %d, %d, %v; want 272, 5", w, d, err)
	}
	for _, c := range []struct {
		cfg   Config
		field string
	}{
		{Config{Depth: 1}, "Width"},
		{Config{Width: 1}, "Depth"},
		{Config{Width: 1, Depth: 65}, "Depth"},
		{Config{Width: 1 << 36, Depth: 2}, "Width·Depth"},
		{Config{Width: 4, Depth: 2, Scheme: hashing.Partition}, "Scheme"},
	} {
		if _, err := New(c.cfg); !errors.Is(err, ErrParam) || !strings.Contains(err.Error(), c.field) || !strings.HasPrefix(err.Error(), "countmin: ") {
			t.Errorf("New(%+v) = %v, want an ErrParam naming %s", c.cfg, err, c.field)
		}
	}
	for _, p := range [][2]float64{{0, 0.1}, {0.1, 1}, {math.NaN(), 0.1}, {1e-20, 0.1}} {
		if _, err := NewWithEstimates(p[0], p[1], Config{}); !errors.Is(err, ErrParam) {
			t.Errorf("NewWithEstimates(%v, %v): %v", p[0], p[1], err)
		}
	}
}

// Estimates never fall below the true counts, with or without conservative
// update, for every scheme, across merges; and conservative estimates are
// never above plain ones.
func TestNeverUnderestimates(t *testing.T) {
	for _, s := range []hashing.Scheme{hashing.Double, hashing.Enhanced, hashing.Independent} {
		plain, _ := New(Config{Width: 50, Depth: 4, Scheme: s})
		cons, _ := New(Config{Width: 50, Depth: 4, Scheme: s, Conservative: true})
		other, _ := New(Config{Width: 50, Depth: 4, Scheme: s})
		truth := map[int]uint64{}
		rng := rand.New(rand.NewPCG(1, uint64(s)))
		for range 20000 {
			i, c := rng.IntN(500), uint64(rng.IntN(5)+1)
			truth[i] += c
			cons.AddHash(key(i), c)
			if rng.IntN(2) == 0 {
				plain.AddHash(key(i), c)
			} else {
				other.AddHash(key(i), c)
			}
		}
		if err := plain.Merge(other); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 1000; i++ {
			p, c := plain.EstimateHash(key(i)), cons.EstimateHash(key(i))
			if p < truth[i] || c < truth[i] {
				t.Fatalf("%v: key %d: estimates %d, %d below the true count %d", s, i, p, c, truth[i])
			}
			if c > p {
				t.Fatalf("%v: key %d: conservative %d above plain %d", s, i, c, p)
			}
		}
		if plain.N() != cons.N() {
			t.Fatalf("totals %d, %d", plain.N(), cons.N())
		}
	}
}

// The overestimate exceeds εN for at most a δ fraction of keys: with
// w = ⌈e/ε⌉, d = ⌈ln 1/δ⌉ the count of such keys among 20,000 lies below
// the binomial upper bound (alpha 1e-6) of probability δ; for both row
// schemes.
func TestErrorBound(t *testing.T) {
	const eps, delta, keys = 0.01, 0.05, 20000
	for _, s := range []hashing.Scheme{hashing.Double, hashing.Independent} {
		sk, err := NewWithEstimates(eps, delta, Config{Scheme: s, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < keys; i++ {
			sk.AddHash(key(i), uint64(1+i%7))
		}
		bad := 0
		limit := eps * float64(sk.N())
		for i := 0; i < keys; i++ {
			if float64(sk.EstimateHash(key(i))-uint64(1+i%7)) > limit {
				bad++
			}
		}
		_, hi := stats.BinomialQuantileBounds(keys, delta, 1e-6)
		t.Logf("%v: %d of %d keys over εN (bound %d)", s, bad, keys, hi)
		if uint64(bad) > hi {
			t.Errorf("%v: %d keys over εN, want ≤ %d", s, bad, hi)
		}
	}
}

func TestSaturation(t *testing.T) {
	s, _ := New(Config{Width: 3, Depth: 2})
	s.AddString("a", math.MaxUint64-1)
	s.AddString("a", 5)
	if s.EstimateString("a") != math.MaxUint64 || s.N() != math.MaxUint64 {
		t.Fatal("counters wrapped")
	}
	b, _ := s.MarshalBinary()
	var g Sketch
	if err := g.UnmarshalBinary(b); err != nil || !g.Equal(s) {
		t.Fatalf("saturated round trip: %v", err)
	}
}

func TestMergeErrors(t *testing.T) {
	a, _ := New(Config{Width: 10, Depth: 3})
	for _, cfg := range []Config{{Width: 11, Depth: 3}, {Width: 10, Depth: 4}, {Width: 10, Depth: 3, Seed: 1},
		{Width: 10, Depth: 3, Conservative: true}, {Width: 10, Depth: 3, Scheme: hashing.Independent}} {
		b, _ := New(cfg)
		b.AddString("x", 1)
		before := a.Clone()
		if err := a.Merge(b); !errors.Is(err, ErrIncompatible) {
			t.Errorf("merge with %+v: %v", cfg, err)
		}
		if !a.Equal(before) {
			t.Fatal("failed merge changed the sketch")
		}
	}
}

// TestMergeScaled: w·t added counter by counter equals t merged w times;
// weight 0 changes nothing; products saturate instead of wrapping; an
// incompatible sketch is refused with s unchanged.
func TestMergeScaled(t *testing.T) {
	a, _ := New(Config{Width: 50, Depth: 4})
	b, _ := New(Config{Width: 50, Depth: 4})
	for i := 0; i < 100; i++ {
		a.AddString(fmt.Sprint("a", i), uint64(i))
		b.AddString(fmt.Sprint("b", i%7), 3)
	}
	for _, w := range []uint64{0, 1, 2, 5} {
		got := a.Clone()
		if err := got.MergeScaled(b, w); err != nil {
			t.Fatal(err)
		}
		want := a.Clone()
		for i := uint64(0); i < w; i++ {
			want.Merge(b)
		}
		if !got.Equal(want) {
			t.Fatalf("weight %d: differs from %d merges", w, w)
		}
	}
	big := a.Clone()
	if err := big.MergeScaled(b, math.MaxUint64/2); err != nil || big.EstimateString("b1") != math.MaxUint64 || big.N() != math.MaxUint64 {
		t.Fatalf("no saturation: %v, %d, %d", err, big.EstimateString("b1"), big.N())
	}
	c, _ := New(Config{Width: 50, Depth: 5})
	before := a.Clone()
	if err := a.MergeScaled(c, 3); !errors.Is(err, ErrIncompatible) || !a.Equal(before) {
		t.Fatalf("incompatible: %v", err)
	}
}

// TestAllocs covers every update and query path: plain and conservative
// update, conservative with its counter indices on the stack (d ≤ 8) and
// beyond, for each row scheme.
func TestAllocs(t *testing.T) {
	k := []byte("key")
	for _, sc := range []hashing.Scheme{hashing.Double, hashing.Enhanced, hashing.Independent} {
		for _, d := range []int{5, 8, 9, MaxDepth} {
			for _, cons := range []bool{false, true} {
				s, err := New(Config{Width: 1000, Depth: d, Scheme: sc, Conservative: cons})
				if err != nil {
					t.Fatal(err)
				}
				if a := testing.AllocsPerRun(100, func() {
					s.Add(k, 1)
					_ = s.Estimate(k)
					_ = s.Contains(k)
					s.AddHash(key(1), 2)
					_ = s.EstimateHash(key(1))
				}); a != 0 {
					t.Errorf("%v d=%d conservative=%v: %v allocations", sc, d, cons, a)
				}
			}
		}
	}
}

func goldenSketch(t testing.TB) *Sketch {
	s, err := New(Config{Width: 5, Depth: 3, Seed: 1, Conservative: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range []string{"a", "b", "c", "a"} {
		s.AddString(k, uint64(i+1))
	}
	return s
}

func reseal(b []byte) []byte {
	b = append([]byte(nil), b...)
	tab := crc32.MakeTable(crc32.Castagnoli)
	if len(b) >= format.HeaderSize {
		binary.LittleEndian.PutUint32(b[28:], crc32.Checksum(b[:28], tab))
	}
	if len(b) >= format.HeaderSize+4 {
		binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.Checksum(b[:len(b)-4], tab))
	}
	return b
}

func TestGoldenAndCorruption(t *testing.T) {
	const path = "testdata/countmin-v2.golden"
	gs := goldenSketch(t)
	gs.SetCapacity(3)
	got, err := gs.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("encoding changed:\n got %x\nwant %x", got, want)
	}
	if want[6] != byte(format.KindCountMin) || want[7] != byte(hashing.Double) || len(want) != format.HeaderSize+paramsLen+15*8+4 ||
		binary.LittleEndian.Uint64(want[format.HeaderSize+21:]) != 3 {
		t.Fatal("golden header, capacity or size wrong")
	}
	var g Sketch
	if err := g.UnmarshalBinary(want); err != nil || g.EstimateString("a") < 5 || !g.Equal(gs) || g.Capacity() != 3 {
		t.Fatalf("decode golden: %v, estimate %d, capacity %d", err, g.EstimateString("a"), g.Capacity())
	}
	victim := goldenSketch(t)
	victim.AddString("z", 9)
	before := victim.Clone()
	check := func(name string, b []byte) {
		t.Helper()
		if err := victim.UnmarshalBinary(b); !errors.Is(err, format.ErrFormat) {
			t.Errorf("%s: %v, want ErrFormat", name, err)
		}
		if !victim.Equal(before) {
			t.Fatalf("%s: receiver changed", name)
		}
	}
	for n := 0; n < len(want); n += 7 {
		check("truncated", want[:n])
	}
	for i := range want {
		b := append([]byte(nil), want...)
		b[i] ^= 4
		check("bit flip", b)
	}
	const P = format.HeaderSize
	for name, edit := range map[string]func([]byte){
		"flags":   func(b []byte) { b[P+12] = 2 },
		"depth":   func(b []byte) { b[P+8] = 0 },
		"width":   func(b []byte) { b[P] = 6 },
		"total":   func(b []byte) { b[P+13] = 1 },
		"scheme":  func(b []byte) { b[7] = 6 },
		"counter": func(b []byte) { b[P+paramsLen] = 0xFF },
	} {
		b := append([]byte(nil), want...)
		edit(b)
		check(name, reseal(b))
	}
	check("trailing", append(append([]byte(nil), want...), 1))
}

// TestGoldenV1: files written before the capacity was recorded (a 21-byte
// parameter block) still load, with capacity 0, equal to the sketch they
// were written from, and are rewritten in today's layout.
func TestGoldenV1(t *testing.T) {
	old, err := os.ReadFile("testdata/countmin-v1.golden")
	if err != nil {
		t.Fatal(err)
	}
	if binary.LittleEndian.Uint32(old[16:]) != paramsLenV1 {
		t.Fatal("v1 fixture has another parameter block")
	}
	var g Sketch
	if err := g.UnmarshalBinary(old); err != nil {
		t.Fatalf("v1 file no longer loads: %v", err)
	}
	if !g.Equal(goldenSketch(t)) || g.Capacity() != 0 {
		t.Fatal("v1 file decodes to a different sketch")
	}
	now, err := g.MarshalBinary()
	if err != nil || len(now) != len(old)+8 || binary.LittleEndian.Uint32(now[16:]) != paramsLen {
		t.Fatalf("v1 sketch rewritten as %d bytes (%v), want %d", len(now), err, len(old)+8)
	}
}

func FuzzUnmarshal(f *testing.F) {
	old, err := os.ReadFile("testdata/countmin-v1.golden")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(old)
	gs := goldenSketch(f)
	gs.SetCapacity(3)
	g, _ := gs.MarshalBinary()
	f.Add(g)
	p, _ := New(Config{Width: 4, Depth: 2, Scheme: hashing.Independent})
	p.AddString("x", 3)
	b, _ := p.MarshalBinary()
	f.Add(b)
	for _, r := range []*Sketch{redisGolden(f), func() *Sketch { r, _ := NewRedisBloom(2, 2); r.AddString("x", 7); return r }()} {
		b, _ := r.MarshalBinary()
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, in := range [][]byte{data, reseal(data)} {
			var s Sketch
			if err := s.UnmarshalBinary(in); err != nil {
				if !errors.Is(err, format.ErrFormat) || strings.Contains(err.Error(), "countmin: countmin:") {
					t.Fatalf("error %v does not wrap ErrFormat", err)
				}
				continue
			}
			out, err := s.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			// One encoding per state, except that a file of the first
			// layout is rewritten in today's.
			var g Sketch
			if err := g.UnmarshalBinary(out); err != nil || !g.Equal(&s) || g.Capacity() != s.Capacity() ||
				!bytes.Equal(out, in) && binary.LittleEndian.Uint32(in[16:]) != paramsLenV1 {
				t.Fatalf("re-encoding differs (%v):\n in %x\nout %x", err, in, out)
			}
			s.AddString("fuzz", 1)
			if s.EstimateString("fuzz") < 1 {
				t.Fatal("underestimate in a decoded sketch")
			}
		}
	})
}
