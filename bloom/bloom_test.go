package bloom

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/stats"
	"github.com/bloomlab/bloomlab/theory"
)

// keyset returns n distinct 16-byte keys drawn from a fixed seed; different
// salts give disjoint sets (with overwhelming probability).
func keyset(n int, salt uint64) [][]byte {
	keys := make([][]byte, n)
	x := salt*0x9E3779B97F4A7C15 + 1
	for i := range keys {
		k := make([]byte, 16)
		x = x*6364136223846793005 + 1442695040888963407
		binary.LittleEndian.PutUint64(k, x^salt)
		binary.LittleEndian.PutUint64(k[8:], uint64(i)^(salt<<32))
		keys[i] = k
	}
	return keys
}

func allSchemes() []hashing.Scheme { return hashing.Schemes() }

func TestNoFalseNegatives(t *testing.T) {
	for _, s := range allSchemes() {
		for _, m := range []uint64{1, 7, 64, 1000, 1 << 16} {
			f, err := New(m, 5, WithScheme(s), WithSeed(3))
			if err != nil {
				t.Fatal(err)
			}
			keys := keyset(3000, uint64(m))
			for i, key := range keys {
				switch i % 3 {
				case 0:
					f.Add(key)
				case 1:
					f.AddString(string(key))
				default:
					f.AddAtomic(key)
				}
			}
			for _, key := range keys {
				if !f.Contains(key) || !f.ContainsString(string(key)) || !f.ContainsHash(f.Digest(key)) {
					t.Fatalf("%v m=%d: false negative", s, m)
				}
			}
			out := f.ContainsBatch(keys, nil)
			for i := range out {
				if !out[i] {
					t.Fatalf("%v m=%d: batch false negative", s, m)
				}
			}
		}
	}
}

// TestFalsePositiveRate checks, for every scheme and for random, sequential
// and shared-prefix keys, that (1) the number of ones agrees with the
// expected fill 1 − (1 − 1/m)^{kn} (1 − (1 − k/m)^n partitioned), and (2) the
// number of false positives among 10^6 absent keys is what the filter's
// state implies, both within two-sided binomial acceptance regions at
// α = 1e-6 (fixed seeds: the test is deterministic).
func TestFalsePositiveRate(t *testing.T) {
	n, queries := 100000, 1000000
	if testing.Short() {
		n, queries = 20000, 200000
	}
	var buf []byte
	keySets := map[string]func(i int) []byte{
		"random": func(i int) []byte {
			buf = binary.LittleEndian.AppendUint64(buf[:0], uint64(i)*0x9E3779B97F4A7C15^0xdeadbeef)
			return binary.LittleEndian.AppendUint64(buf, uint64(i)*0xBF58476D1CE4E5B9+7)
		},
		"sequential": func(i int) []byte { return strconv.AppendInt(buf[:0], int64(i), 10) },
		"prefix": func(i int) []byte {
			buf = append(buf[:0], "https://bloomlab.example/a/long/shared/path/segment/"...)
			return strconv.AppendInt(buf, int64(i), 10)
		},
	}
	for _, s := range allSchemes() {
		for name, key := range keySets {
			f, err := NewWithEstimates(uint64(n), 0.01, WithScheme(s), WithSeed(11))
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < n; i++ {
				f.Add(key(i))
			}
			m, k := float64(f.M()), f.K()
			fill := theory.FillExpected(m, float64(n), k)
			if s.Partitioned() {
				fill = theory.FillExpectedPartitioned(m, float64(n), k)
			}
			lo, hi := stats.BinomialQuantileBounds(f.M(), fill, 1e-6)
			if ones := f.Ones(); ones < lo || ones > hi {
				t.Errorf("%v/%s: %d ones, expected fill %.5f gives [%d, %d]", s, name, ones, fill, lo, hi)
			}
			fp := 0
			for i := n; i < n+queries; i++ {
				if f.Contains(key(i)) {
					fp++
				}
			}
			p := f.EstimatedFPR()
			lo, hi = stats.BinomialQuantileBounds(uint64(queries), p, 1e-6)
			if uint64(fp) < lo || uint64(fp) > hi {
				t.Errorf("%v/%s: %d false positives in %d, state predicts %.5f → [%d, %d]", s, name, fp, queries, p, lo, hi)
			}
			exact := theory.FPExact(m, float64(n), k)
			if s.Partitioned() {
				exact = theory.FPPartitioned(m, float64(n), k)
			}
			if exact > 0.01 {
				t.Errorf("%v: sized filter has exact FP %.5f > 0.01", s, exact)
			}
		}
	}
}

// Test003Example replays the worked example of 003 §2 with its own hash
// functions: m = 5, k = 2, h1(x) = x mod 5, h2(x) = (2x + 3) mod 5.
func Test003Example(t *testing.T) {
	f, err := New(5, 2, WithIndexFunc(func(d hashing.Digest, i int) uint64 {
		if i == 0 {
			return d.H1 % 5
		}
		return (2*d.H1 + 3) % 5
	}))
	if err != nil {
		t.Fatal(err)
	}
	bitsOf := func() string {
		s := ""
		for i := uint64(0); i < 5; i++ {
			s += fmt.Sprint(f.bits[0] >> i & 1)
		}
		return s
	}
	f.AddHash(hashing.Digest{H1: 9})
	if got := bitsOf(); got != "01001" {
		t.Errorf("after 9: %s, want 01001", got)
	}
	f.AddHash(hashing.Digest{H1: 11})
	if got := bitsOf(); got != "11001" {
		t.Errorf("after 11: %s, want 11001", got)
	}
	for x, want := range map[uint64]bool{9: true, 11: true, 15: false, 16: true} {
		if got := f.ContainsHash(hashing.Digest{H1: x}); got != want {
			t.Errorf("query %d = %v, want %v", x, got, want)
		}
	}
	if _, err := f.MarshalBinary(); err == nil {
		t.Error("custom-scheme filter serialized")
	}
}

func TestLargerThan2To32Bits(t *testing.T) {
	m := uint64(1)<<32 + 1<<30 + 4099
	f, err := New(m, 3, WithScheme(hashing.Double))
	if err != nil {
		t.Fatal(err)
	}
	keys := keyset(20000, 5)
	f.AddBatch(keys)
	for _, key := range keys {
		if !f.Contains(key) {
			t.Fatal("false negative in a filter over 2^32 bits")
		}
	}
	// A fifth of the bits lie above 2^32: about 12,000 of the 60,000 ones.
	if hi := f.bits.OnesIn(1<<32, m); hi < 11000 || hi > 13000 {
		t.Errorf("%d ones above 2^32, want about 12000: positions are truncated", hi)
	}
	if ones := f.Ones(); ones < 59000 || ones > 60000 {
		t.Errorf("%d ones, want about 60000", ones)
	}
}

func TestNewErrors(t *testing.T) {
	cases := []struct {
		name string
		f    func() (*Filter, error)
	}{
		{"m=0", func() (*Filter, error) { return New(0, 3) }},
		{"m huge", func() (*Filter, error) { return New(hashing.MaxM+1, 3) }},
		{"k=0", func() (*Filter, error) { return New(100, 0) }},
		{"k=65", func() (*Filter, error) { return New(100, 65) }},
		{"scheme", func() (*Filter, error) { return New(100, 3, WithScheme(99)) }},
		{"nil func", func() (*Filter, error) { return New(100, 3, WithIndexFunc(nil)) }},
		{"n=0", func() (*Filter, error) { return NewWithEstimates(0, 0.01) }},
		{"fpr=0", func() (*Filter, error) { return NewWithEstimates(10, 0) }},
		{"fpr=1", func() (*Filter, error) { return NewWithEstimates(10, 1) }},
		{"fpr NaN", func() (*Filter, error) { return NewWithEstimates(10, math.NaN()) }},
		{"fpr tiny", func() (*Filter, error) { return NewWithEstimates(10, 1e-300) }},
	}
	for _, c := range cases {
		f, err := c.f()
		if err == nil || f != nil || !errors.Is(err, ErrParam) {
			t.Errorf("%s: got %v, %v; want ErrParam", c.name, f, err)
		}
	}
}

func TestNewWithEstimates(t *testing.T) {
	for _, fpr := range []float64{0.1, 0.01, 0.001, 1e-6} {
		f, err := NewWithEstimates(10000, fpr)
		if err != nil {
			t.Fatal(err)
		}
		if p := theory.FPExact(float64(f.M()), 10000, f.K()); p > fpr {
			t.Errorf("fpr %v: m=%d k=%d gives %v", fpr, f.M(), f.K(), p)
		}
		if f.K() != theory.OptimalK(float64(f.M()), 10000) {
			t.Errorf("fpr %v: k=%d is not optimal", fpr, f.K())
		}
	}
	p, err := NewWithEstimates(10000, 0.01, WithScheme(hashing.PrimePartition))
	if err != nil {
		t.Fatal(err)
	}
	if p.Kind() != "partitioned" || !hashing.IsPrime(p.M()/uint64(p.K())) {
		t.Errorf("prime partition: kind %s m %d k %d", p.Kind(), p.M(), p.K())
	}
}

func TestSetOperations(t *testing.T) {
	a, _ := New(10000, 4, WithSeed(1))
	b, _ := New(10000, 4, WithSeed(1))
	ka, kb := keyset(500, 1), keyset(500, 2)
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
	if u.N() != 1000 {
		t.Errorf("union N = %d", u.N())
	}
	both := keyset(100, 3)
	a.AddBatch(both)
	b.AddBatch(both)
	in := a.Clone()
	if err := in.Intersect(b); err != nil {
		t.Fatal(err)
	}
	for _, k := range both {
		if !in.Contains(k) {
			t.Fatal("intersection lost a common key")
		}
	}
	if !a.Equal(a.Clone()) || a.Equal(b) {
		t.Error("Equal wrong")
	}
	c := a.Clone()
	c.Clear()
	if c.Ones() != 0 || c.N() != 0 || a.Ones() == 0 {
		t.Error("Clear wrong or Clone shares storage")
	}
	for _, g := range []*Filter{
		must(New(10001, 4, WithSeed(1))),
		must(New(10000, 5, WithSeed(1))),
		must(New(10000, 4, WithSeed(2))),
		must(New(10000, 4, WithSeed(1), WithScheme(hashing.Double))),
	} {
		before := a.Clone()
		if err := a.Union(g); !errors.Is(err, ErrIncompatible) {
			t.Errorf("union with %v/%v: %v", g.M(), g.K(), err)
		}
		if err := a.Intersect(g); !errors.Is(err, ErrIncompatible) {
			t.Errorf("intersect: %v", err)
		}
		if !a.Equal(before) {
			t.Error("failed set operation changed the filter")
		}
	}
	if err := a.Union(must(New(10000, 5, WithSeed(1)))); err == nil || !strings.Contains(err.Error(), "k differs (4 vs 5)") {
		t.Errorf("error should name k: %v", err)
	}
}

func must(f *Filter, err error) *Filter {
	if err != nil {
		panic(err)
	}
	return f
}

func TestApproxCountAndFill(t *testing.T) {
	for _, s := range []hashing.Scheme{hashing.Enhanced, hashing.Partition} {
		f, _ := NewWithEstimates(100000, 0.01, WithScheme(s))
		keys := keyset(100000, 9)
		f.AddBatch(keys)
		f.AddBatch(keys[:1000]) // repeats do not count
		if c := f.ApproxCount(); math.Abs(c-100000) > 1500 {
			t.Errorf("%v: ApproxCount = %.0f, want 100000 ± 1500", s, c)
		}
		if r := f.FillRatio(); math.Abs(r-0.5) > 0.02 {
			t.Errorf("%v: fill %.4f, want about 1/2 at the optimum", s, r)
		}
		if p := f.EstimatedFPR(); p < 0.007 || p > 0.013 {
			t.Errorf("%v: EstimatedFPR %.4f", s, p)
		}
	}
	full, _ := New(64, 1)
	full.bits[0] = math.MaxUint64
	if !math.IsInf(full.ApproxCount(), 1) || full.EstimatedFPR() != 1 {
		t.Error("full filter estimates wrong")
	}
}

func TestConcurrentAtomicAdds(t *testing.T) {
	f, _ := New(1<<20, 7)
	keys := keyset(40000, 4)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := g; i < len(keys); i += 4 {
				f.AddAtomic(keys[i])
				if !f.Contains(keys[i]) {
					panic("false negative after AddAtomic")
				}
			}
		}(g)
	}
	wg.Wait()
	for _, k := range keys {
		if !f.Contains(k) {
			t.Fatal("false negative after concurrent adds")
		}
	}
	if f.N() != uint64(len(keys)) {
		t.Errorf("N = %d", f.N())
	}
}

func TestNoAllocs(t *testing.T) {
	keys := keyset(64, 1)
	out := make([]bool, len(keys))
	for _, s := range allSchemes() {
		f := must(New(1<<20, 7, WithScheme(s)))
		d := f.Digest(keys[0])
		for name, fn := range map[string]func(){
			"Add":             func() { f.Add(keys[1]) },
			"AddString":       func() { f.AddString("abc") },
			"AddHash":         func() { f.AddHash(d) },
			"AddAtomic":       func() { f.AddAtomic(keys[2]) },
			"Contains":        func() { f.Contains(keys[3]) },
			"ContainsString":  func() { f.ContainsString("abc") },
			"ContainsBatch":   func() { out = f.ContainsBatch(keys, out) },
			"AddBatch":        func() { f.AddBatch(keys) },
			"ContainsHashBat": func() { out = f.ContainsHashBatch([]hashing.Digest{d, d}, out) },
		} {
			if a := testing.AllocsPerRun(50, fn); a != 0 {
				t.Errorf("%v %s: %v allocs", s, name, a)
			}
		}
	}
}

var sink bool

// contiguousKeys returns n 16-byte keys backed by one array, as a caller
// holding keys in a buffer would.
func contiguousKeys(n int, salt uint64) [][]byte {
	buf := make([]byte, 16*n)
	keys := make([][]byte, n)
	x := salt*0x9E3779B97F4A7C15 + 1
	for i := range keys {
		x = x*6364136223846793005 + 1442695040888963407
		binary.LittleEndian.PutUint64(buf[16*i:], x)
		binary.LittleEndian.PutUint64(buf[16*i+8:], uint64(i)^salt)
		keys[i] = buf[16*i : 16*i+16 : 16*i+16]
	}
	return keys
}

// BenchmarkFilter measures Add and Contains on present and absent keys for
// a filter sized for 1M keys at 1% (1.2 MB: in this machine's L2/L3) and
// for a small one (2 KiB: in L1), separating memory from computation.
func BenchmarkFilter(b *testing.B) {
	const n = 1 << 20
	keys := contiguousKeys(n, 77)
	absent := contiguousKeys(n, 78)
	for _, size := range []string{"1M", "1M-0.1%", "L1"} {
		for _, s := range []hashing.Scheme{hashing.Double, hashing.Enhanced, hashing.Independent, hashing.Partition} {
			f := must(NewWithEstimates(n, 0.01, WithScheme(s)))
			if size == "1M-0.1%" {
				f = must(NewWithEstimates(n, 0.001, WithScheme(s)))
			}
			if size == "L1" {
				f = must(New(1<<14, 7, WithScheme(s)))
			}
			b.Run(size+"/add/"+s.String(), func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					f.Add(keys[i&(n-1)])
				}
			})
			f.AddBatch(keys)
			b.Run(size+"/present/"+s.String(), func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					sink = f.Contains(keys[i&(n-1)])
				}
			})
			b.Run(size+"/absent/"+s.String(), func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					sink = f.Contains(absent[i&(n-1)])
				}
			})
		}
	}
}

// TestBatchAgrees: the batch queries answer exactly as Contains, for
// present and absent keys, every scheme, any group length.
func TestBatchAgrees(t *testing.T) {
	for _, s := range allSchemes() {
		f := must(New(20000, 5, WithScheme(s)))
		f.AddBatch(keyset(2000, 1))
		for _, n := range []int{0, 1, 15, 16, 17, 5000} {
			keys := append(keyset(n/2, 1), keyset(n-n/2, 2)...)
			ds := make([]hashing.Digest, len(keys))
			for i, k := range keys {
				ds[i] = f.Digest(k)
			}
			got, gotH := f.ContainsBatch(keys, nil), f.ContainsHashBatch(ds, make([]bool, 3))
			for i, k := range keys {
				if got[i] != f.Contains(k) || gotH[i] != got[i] {
					t.Fatalf("%v n=%d key %d: batch %v/%v, Contains %v", s, n, i, got[i], gotH[i], f.Contains(k))
				}
			}
		}
	}
}

// TestAddHashPositions: AddHash's inline incremental walk sets exactly the
// positions hashing.Indexer.Positions gives, for every scheme, odd and
// even m and k up to MaxK (the bits are the file format's meaning).
func TestAddHashPositions(t *testing.T) {
	var buf [hashing.MaxK]uint64
	for _, s := range hashing.Schemes() {
		for _, m := range []uint64{1, 2, 3, 64, 65, 3001, 1<<20 + 7} {
			for _, k := range []int{1, 2, 7, 31, hashing.MaxK} {
				mm := hashing.PartitionSize(s, m, k)
				f, err := New(mm, k, WithScheme(s))
				if err != nil {
					continue // a prime partition may not exist for tiny m
				}
				ix, err := hashing.NewIndexer(s, f.M(), k)
				if err != nil {
					t.Fatal(err)
				}
				for i, key := range keyset(10, m^uint64(k)) {
					d := hashing.Sum(key, f.Seed())
					f.Clear()
					f.AddHash(d)
					want := make(map[uint64]bool)
					for _, p := range ix.Positions(d, buf[:]) {
						want[p] = true
					}
					if got := f.Ones(); got != uint64(len(want)) {
						t.Fatalf("%v m=%d k=%d key %d: %d bits set, want %d", s, f.M(), k, i, got, len(want))
					}
					for p := range want {
						if !f.bits.Has(p) {
							t.Fatalf("%v m=%d k=%d key %d: position %d not set", s, f.M(), k, i, p)
						}
					}
				}
			}
		}
	}
}
