package blocked

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"os"
	"sync"
	"testing"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/format"
	"github.com/bloomlab/bloomlab/internal/stats"
	"github.com/bloomlab/bloomlab/theory"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

func keys16(n int, salt uint64) [][]byte {
	buf := make([]byte, 16*n)
	keys := make([][]byte, n)
	for i := range keys {
		binary.LittleEndian.PutUint64(buf[16*i:], uint64(i)*0x9E3779B97F4A7C15^salt)
		binary.LittleEndian.PutUint64(buf[16*i+8:], salt)
		keys[i] = buf[16*i : 16*i+16 : 16*i+16]
	}
	return keys
}

func must(f *Filter, err error) *Filter {
	if err != nil {
		panic(err)
	}
	return f
}

func TestNoFalseNegatives(t *testing.T) {
	for _, k := range []int{1, 6, 7, 8, 15, 64} {
		for _, m := range []uint64{1, 512, 5000, 1 << 20} {
			f := must(New(m, k, WithSeed(uint64(k))))
			keys := keys16(3000, m)
			for i, key := range keys {
				if i%2 == 0 {
					f.Add(key)
				} else {
					f.AddAtomic(key)
				}
			}
			out := f.ContainsBatch(keys, nil)
			for i, key := range keys {
				if !f.Contains(key) || !out[i] || !f.ContainsString(string(key)) {
					t.Fatalf("k=%d m=%d: false negative", k, m)
				}
			}
		}
	}
}

// TestFalsePositiveRate: a filter sized for 10^6 keys at 1% and 0.1%; the
// false positives among 10^6 absent keys lie in the binomial acceptance
// region (α = 1e-6) of both the state's exact rate and the model
// theory.FPBlocked, and the model rate is at most the target.
func TestFalsePositiveRate(t *testing.T) {
	n, queries := 1000000, 1000000
	if testing.Short() {
		n, queries = 200000, 200000
	}
	keys, absent := keys16(n, 1), keys16(queries, 2)
	for _, fpr := range []float64{0.01, 0.001} {
		f := must(NewWithEstimates(uint64(n), fpr, WithSeed(5)))
		f.AddBatch(keys)
		out := f.ContainsBatch(absent, nil)
		fp := 0
		for i, ok := range out {
			if ok {
				fp++
			}
			if ok != f.Contains(absent[i]) {
				t.Fatal("ContainsBatch disagrees with Contains")
			}
		}
		model := theory.FPBlocked(float64(n), float64(f.Blocks()), BlockBits, f.K())
		if model > fpr {
			t.Errorf("fpr %v: model rate %v above target", fpr, model)
		}
		for what, p := range map[string]float64{"state": f.EstimatedFPR(), "model": model} {
			lo, hi := stats.BinomialQuantileBounds(uint64(queries), p, 1e-6)
			if uint64(fp) < lo || uint64(fp) > hi {
				t.Errorf("fpr %v: %d false positives in %d; %s rate %.6f gives [%d, %d]", fpr, fp, queries, what, p, lo, hi)
			}
		}
		if fpr == 0.01 {
			if bpk := float64(f.M()) / float64(n); bpk > 11 {
				t.Errorf("%.2f bits per key at 1%%, want ≤ 11", bpk)
			}
		}
		if c := f.ApproxCount(); c < 0.97*float64(n) || c > 1.03*float64(n) {
			t.Errorf("ApproxCount %.0f for %d keys", c, n)
		}
	}
}

func TestLargerThan2To32Bits(t *testing.T) {
	f := must(New(1<<32+1<<30, 3))
	keys := keys16(20000, 9)
	f.AddBatch(keys)
	for _, key := range keys {
		if !f.Contains(key) {
			t.Fatal("false negative above 2^32 bits")
		}
	}
	var high uint64
	for b := uint64(1<<32) / BlockBits; b < f.blocks; b++ {
		for _, w := range f.bits[b*wordsPerBlock : (b+1)*wordsPerBlock] {
			if w != 0 {
				high++
				break
			}
		}
	}
	if high < 3600 || high > 4400 { // a fifth of 20,000 keys
		t.Errorf("%d nonempty blocks above bit 2^32, want about 4000", high)
	}
}

func TestConcurrent(t *testing.T) {
	f := must(New(1<<20, 7))
	keys := keys16(20000, 3)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := g; i < len(keys); i += 4 {
				f.AddAtomic(keys[i])
				if !f.Contains(keys[i]) {
					panic("false negative right after AddAtomic")
				}
			}
		}(g)
	}
	wg.Wait()
	if f.N() != 20000 {
		t.Errorf("N = %d", f.N())
	}
}

func TestParamsAndSetOps(t *testing.T) {
	for _, c := range []struct {
		m uint64
		k int
	}{{0, 3}, {hashing.MaxM + 1, 3}, {100, 0}, {100, 65}} {
		if _, err := New(c.m, c.k); !errors.Is(err, ErrParam) {
			t.Errorf("New(%d, %d): %v", c.m, c.k, err)
		}
	}
	if _, err := NewWithEstimates(0, 0.01); !errors.Is(err, ErrParam) {
		t.Error("n = 0 accepted")
	}
	if _, err := NewWithEstimates(10, 1); !errors.Is(err, ErrParam) {
		t.Error("fpr = 1 accepted")
	}
	a, b := must(New(1<<14, 5)), must(New(1<<14, 5))
	ka, kb := keys16(300, 1), keys16(300, 2)
	a.AddBatch(ka)
	b.AddBatch(kb)
	u := a.Clone()
	if err := u.Union(b); err != nil {
		t.Fatal(err)
	}
	for _, k := range append(ka, kb...) {
		if !u.Contains(k) {
			t.Fatal("union lost a key")
		}
	}
	in := u.Clone()
	if err := in.Intersect(a); err != nil || !in.Equal(a) {
		t.Fatalf("u ∩ a should equal a: %v", err)
	}
	before := a.Clone()
	for _, g := range []*Filter{must(New(1<<15, 5)), must(New(1<<14, 6)), must(New(1<<14, 5, WithSeed(1)))} {
		if err := a.Union(g); !errors.Is(err, ErrIncompatible) {
			t.Errorf("union: %v", err)
		}
	}
	if !a.Equal(before) {
		t.Error("failed union changed the filter")
	}
	a.Clear()
	if a.Ones() != 0 || a.N() != 0 || before.Ones() == 0 {
		t.Error("Clear wrong or Clone shares storage")
	}
}

func goldenFilter() *Filter {
	f := must(New(1024, 4, WithSeed(1)))
	f.SetCapacity(3)
	for _, k := range []string{"a", "b", "c"} {
		f.AddString(k)
	}
	return f
}

func TestEncoding(t *testing.T) {
	got, err := goldenFilter().MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	const name = "testdata/blocked-v1.golden"
	if *update {
		os.WriteFile(name, got, 0o644)
	}
	want, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("encoding changed:\n got %x\nwant %x", got, want)
	}
	var g Filter
	if err := g.UnmarshalBinary(want); err != nil || !g.Equal(goldenFilter()) || g.Capacity() != 3 || g.N() != 3 {
		t.Fatalf("decode: %v", err)
	}
	sentinel := goldenFilter()
	check := func(what string, b []byte) {
		g := sentinel.Clone()
		if err := g.UnmarshalBinary(b); err == nil || !errors.Is(err, format.ErrFormat) {
			t.Fatalf("%s: %v", what, err)
		}
		if !g.Equal(sentinel) {
			t.Fatalf("%s: failed decode changed the receiver", what)
		}
	}
	for i := range want {
		check("truncated", want[:i])
		for _, x := range []byte{1, 0x80, 0xff} {
			b := bytes.Clone(want)
			b[i] ^= x
			check("flipped", b)
		}
	}
	check("trailing", append(bytes.Clone(want), 0))
}

func FuzzUnmarshal(f *testing.F) {
	b, _ := goldenFilter().MarshalBinary()
	f.Add(b)
	f.Fuzz(func(t *testing.T, data []byte) {
		var g Filter
		if g.UnmarshalBinary(data) != nil {
			return
		}
		again, err := g.MarshalBinary()
		if err != nil || !bytes.Equal(again, data) {
			t.Fatal("accepted input does not re-encode to itself")
		}
		g.Add(data)
		if !g.Contains(data) {
			t.Fatal("false negative on a decoded filter")
		}
	})
}

func TestNoAllocs(t *testing.T) {
	f := must(New(1<<20, 8))
	keys := keys16(100, 1)
	out := make([]bool, 0, 100)
	ds := make([]hashing.Digest, 100)
	for i, k := range keys {
		ds[i] = f.Digest(k)
	}
	for name, fn := range map[string]func(){
		"Add":               func() { f.Add(keys[0]) },
		"AddAtomic":         func() { f.AddAtomic(keys[1]) },
		"AddStringAtomic":   func() { f.AddStringAtomic("y") },
		"Contains":          func() { f.Contains(keys[2]) },
		"ContainsString":    func() { f.ContainsString("x") },
		"ContainsBatch":     func() { out = f.ContainsBatch(keys, out) },
		"ContainsHashBatch": func() { out = f.ContainsHashBatch(ds, out) },
		"AddBatch":          func() { f.AddBatch(keys) },
	} {
		if a := testing.AllocsPerRun(20, fn); a != 0 {
			t.Errorf("%s: %v allocs", name, a)
		}
	}
}

var sink bool

func BenchmarkBlocked(b *testing.B) {
	const n = 1 << 20
	keys, absent := keys16(n, 1), keys16(n, 2)
	f := must(NewWithEstimates(n, 0.01))
	b.Run("add", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			f.Add(keys[i&(n-1)])
		}
	})
	f.AddBatch(keys)
	b.Run("present", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			sink = f.Contains(keys[i&(n-1)])
		}
	})
	b.Run("absent", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			sink = f.Contains(absent[i&(n-1)])
		}
	})
	out := make([]bool, 0, 256)
	b.Run("absent-batch", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i += 256 {
			j := i & (n - 1)
			out = f.ContainsBatch(absent[j:j+256], out)
		}
	})
}

// BlockOf and AppendPositions describe exactly the bits Add sets: a filter
// built by setting those bits in its payload bytes (bit p of a block is
// bit p mod 8 of byte p/8) equals one built with Add, including across
// probe groups (k > 7) and filters of more than 2^32 bits' worth of
// blocks' index range.
func TestPositionsAgreeWithAdd(t *testing.T) {
	for _, c := range []struct {
		blocks uint64
		k      int
	}{{1, 1}, {97, 7}, {1000, 8}, {513, 23}, {4096, 64}} {
		f, err := New(c.blocks*BlockBits, c.k, WithSeed(42))
		if err != nil {
			t.Fatal(err)
		}
		payload := make([]byte, c.blocks*BlockBits/8)
		var pos []uint16
		for _, key := range keys16(500, 3) {
			f.Add(key)
			d := f.Digest(key)
			b := BlockOf(d, c.blocks)
			pos = AppendPositions(pos[:0], d, c.k)
			if len(pos) != c.k {
				t.Fatalf("k = %d: %d positions", c.k, len(pos))
			}
			for _, p := range pos {
				if p >= BlockBits {
					t.Fatalf("position %d", p)
				}
				payload[b*BlockBits/8+uint64(p>>3)] |= 1 << (p & 7)
			}
		}
		var got []byte
		for _, w := range f.bits {
			got = binary.LittleEndian.AppendUint64(got, w)
		}
		if !bytes.Equal(got, payload) {
			t.Errorf("blocks %d, k %d: the bits of BlockOf/AppendPositions differ from Add's", c.blocks, c.k)
		}
	}
	buf := make([]uint16, 0, 64)
	if got := testing.AllocsPerRun(100, func() { buf = AppendPositions(buf[:0], hashing.Digest{H1: 1, H2: 2}, 64) }); got != 0 {
		t.Errorf("AppendPositions allocates %v times with room in dst", got)
	}
}
