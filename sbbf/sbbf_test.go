package sbbf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/bloomlab/bloomlab/internal/filtertest"
	"github.com/bloomlab/bloomlab/internal/format"
	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/theory"
)

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// refFilter is parquet-format BloomFilter.md's pseudo-code transcribed
// literally: blocks of eight 32-bit words, mask(x) setting bit
// (x·salt[i]) >> 27 of word i, the block chosen by ((h >> 32)·z) >> 32.
type refFilter [][8]uint32

func refMask(x uint32) (b [8]uint32) {
	salt := [8]uint32{0x47b6137b, 0x44974d91, 0x8824ad5b,
		0xa2b7289d, 0x705495c7, 0x2df1424b,
		0x9efc4947, 0x5c6bfb31}
	for i := range 8 {
		y := x * salt[i]
		b[i] |= 1 << (y >> 27)
	}
	return b
}

func (f refFilter) insert(h uint64) {
	i := ((h >> 32) * uint64(len(f))) >> 32
	m := refMask(uint32(h))
	for w := range 8 {
		f[i][w] |= m[w]
	}
}

func (f refFilter) check(h uint64) bool {
	i := ((h >> 32) * uint64(len(f))) >> 32
	m := refMask(uint32(h))
	for w := range 8 {
		if f[i][w]&m[w] != m[w] {
			return false
		}
	}
	return true
}

func (f refFilter) bytes() []byte {
	var out []byte
	for _, b := range f {
		for _, w := range b {
			out = binary.LittleEndian.AppendUint32(out, w)
		}
	}
	return out
}

// TestMatchesSpecPseudoCode: for several sizes, the bytes of a Filter
// equal those of the format's pseudo-code fed the same hashes, and both
// answer the same for keys added and not.
func TestMatchesSpecPseudoCode(t *testing.T) {
	for _, blocks := range []uint64{1, 2, 3, 7, 40, 1000} {
		f := must(New(blocks))
		ref := make(refFilter, blocks)
		n := int(blocks) * 20
		for i := range n {
			key := []byte("key" + strconv.Itoa(i))
			f.Add(key)
			ref.insert(Hash(key))
		}
		if !bytes.Equal(f.Bytes(), ref.bytes()) {
			t.Fatalf("%d blocks: bytes differ from the spec's pseudo-code", blocks)
		}
		diff := 0
		for i := range 20000 {
			key := []byte("probe" + strconv.Itoa(i))
			if f.Contains(key) != ref.check(Hash(key)) {
				diff++
			}
		}
		if diff != 0 {
			t.Errorf("%d blocks: %d answers differ from the spec's", blocks, diff)
		}
	}
}

// TestXXH64KnownAnswers: the hash is XXH64 with seed 0 (the reference
// implementation's values).
func TestXXH64KnownAnswers(t *testing.T) {
	for _, c := range []struct {
		in   string
		want uint64
	}{
		{"", 0xef46db3751d8e999},
		{"abc", 0x44bc2cf5ad770999},
	} {
		if got := Hash([]byte(c.in)); got != c.want {
			t.Errorf("Hash(%q) = %#x, want %#x", c.in, got, c.want)
		}
	}
}

// TestBytesKnownAnswer pins the layout on one key: the 32-bit words'
// bits of "abc" in a one-block filter, from the spec's formula by hand.
func TestBytesKnownAnswer(t *testing.T) {
	f := must(New(1))
	f.Add([]byte("abc"))
	x := uint32(0xad770999) // the low 32 bits of XXH64("abc")
	b := f.Bytes()
	for i, s := range Salt {
		w := binary.LittleEndian.Uint32(b[4*i:])
		if want := uint32(1) << ((x * s) >> 27); w != want {
			t.Errorf("word %d = %#x, want %#x", i, w, want)
		}
	}
}

func TestNoFalseNegativesAndRoundTrips(t *testing.T) {
	f := must(NewWithEstimates(5000, 0.01))
	keys := filtertest.Keys(5000, 3)
	for _, k := range keys {
		f.Add(k)
	}
	g := must(FromBytes(f.Bytes()))
	data := must(f.MarshalBinary())
	var h Filter
	if err := h.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := f.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	var r Filter
	if _, err := r.ReadFrom(&buf); err != nil {
		t.Fatal(err)
	}
	for _, x := range []*Filter{f, g, &h, &r} {
		if !x.Equal(f) {
			t.Fatal("round trip changed the filter")
		}
		for _, k := range keys {
			if !x.Contains(k) {
				t.Fatalf("false negative for %q", k)
			}
		}
	}
	if h.N() != 5000 || h.Capacity() != 5000 || g.N() != 0 {
		t.Errorf("N %d, capacity %d after a round trip; FromBytes N %d", h.N(), h.Capacity(), g.N())
	}
}

func TestUnion(t *testing.T) {
	a, b := must(New(64)), must(New(64))
	ka, kb := filtertest.Keys(500, 1), filtertest.Keys(500, 2)
	for i := range ka {
		a.Add(ka[i])
		b.Add(kb[i])
	}
	if err := a.Union(b); err != nil {
		t.Fatal(err)
	}
	for i := range ka {
		if !a.Contains(ka[i]) || !a.Contains(kb[i]) {
			t.Fatal("false negative after Union")
		}
	}
	if a.N() != 1000 {
		t.Errorf("N = %d after Union, want 1000", a.N())
	}
	before := a.Clone()
	if err := a.Union(must(New(65))); !errors.Is(err, ErrIncompatible) || !a.Equal(before) {
		t.Errorf("Union of 64 and 65 blocks: %v", err)
	}
	if err := a.Union(&Filter{}); !errors.Is(err, ErrParam) {
		t.Errorf("Union with the zero Filter: %v", err)
	}
}

// TestBlocksFor: parquet-go's bloom.NumSplitBlocksOf(n, bits) =
// ⌈⌈n·bits/8⌉/32⌉ (values computed by that formula), at least one block.
func TestBlocksFor(t *testing.T) {
	for _, c := range []struct {
		n    uint64
		bpk  float64
		want uint64
	}{
		{0, 10, 1}, {1, 10, 1}, {25, 10, 1}, {26, 10, 2}, {1000, 10, 40}, {1024, 10, 40},
		{1025, 10, 41}, {26214, 10, 1024}, {100, 1, 1}, {1e6, 16, 62500}, {1e6, 10.5, 41016},
		{1 << 40, 100, 0}, {10, 0, 0}, {10, -1, 0},
	} {
		if got := BlocksFor(c.n, c.bpk); got != c.want {
			t.Errorf("BlocksFor(%d, %v) = %d, want %d", c.n, c.bpk, got, c.want)
		}
	}
	for range 1000 {
		n, b := rand.Uint64N(1<<30), uint64(1+rand.IntN(64))
		want := max(1, ((n*b+7)/8+BlockBytes-1)/BlockBytes)
		if want > MaxBlocks {
			want = 0
		}
		if got := BlocksFor(n, float64(b)); got != want {
			t.Fatalf("BlocksFor(%d, %d) = %d, want %d", n, b, got, want)
		}
	}
	if _, err := NewForBitsPerKey(10, 0); !errors.Is(err, ErrParam) {
		t.Errorf("NewForBitsPerKey(10, 0): %v", err)
	}
}

func TestParams(t *testing.T) {
	for _, b := range []uint64{0, MaxBlocks + 1} {
		if _, err := New(b); !errors.Is(err, ErrParam) {
			t.Errorf("New(%d): %v", b, err)
		}
	}
	for _, n := range []int{0, 1, 31, 33} {
		if _, err := FromBytes(make([]byte, n)); !errors.Is(err, ErrParam) {
			t.Errorf("FromBytes of %d bytes: %v", n, err)
		}
	}
	if _, err := NewWithEstimates(0, 0.01); !errors.Is(err, ErrParam) {
		t.Errorf("NewWithEstimates(0, …): %v", err)
	}
	if _, err := NewWithEstimates(10, 1); !errors.Is(err, ErrParam) {
		t.Errorf("NewWithEstimates(10, 1): %v", err)
	}
}

// TestAllocs: Add, AddHash, Contains and ContainsHash allocate nothing.
func TestAllocs(t *testing.T) {
	f := must(New(1024))
	key := []byte("some key")
	for name, fn := range map[string]func(){
		"Add":            func() { f.Add(key) },
		"AddString":      func() { f.AddString("some key") },
		"AddHash":        func() { f.AddHash(12345) },
		"Contains":       func() { _ = f.Contains(key) },
		"ContainsString": func() { _ = f.ContainsString("k") },
		"ContainsHash":   func() { _ = f.ContainsHash(12345) },
	} {
		if a := testing.AllocsPerRun(100, fn); a != 0 {
			t.Errorf("%s: %v allocations", name, a)
		}
	}
}

// TestRateMatchesTheory: the measured rate of filters at 4, 8, 10 and 16
// bits per key is theory.FPSplitBlock's, within binomial bounds (fixed
// keys: each filter holds a different fixed key set).
func TestRateMatchesTheory(t *testing.T) {
	const n = 20000
	for _, bpk := range []float64{4, 8, 10, 16} {
		blocks := uint64(n * bpk / theory.SplitBlockBits)
		probes := 200000
		if bpk == 16 {
			probes = 1000000
		}
		filtertest.CheckRates(t, filtertest.RateCheck{
			Name: "sbbf " + strconv.FormatFloat(bpk, 'g', -1, 64) + " bits per key", Filters: 5, Probes: probes,
			Build: func(seed uint64) (kind.Filter, error) {
				f, err := New(blocks)
				if err != nil {
					return nil, err
				}
				for _, k := range filtertest.Keys(n, seed) {
					f.Add(k)
				}
				return f, nil
			},
			Predicted: theory.FPSplitBlock(n, float64(blocks)),
		})
	}
}

// TestDecodeRejects: malformed files are errors wrapping format.ErrFormat
// (or a checksum error), never a panic.
func TestDecodeRejects(t *testing.T) {
	f := must(New(4))
	f.Add([]byte("x"))
	good := must(f.MarshalBinary())
	var g Filter
	for cut := range len(good) {
		if err := g.UnmarshalBinary(good[:cut]); err == nil {
			t.Fatalf("a file cut at %d bytes decoded", cut)
		}
	}
	// A header claiming 2^31 blocks (over the limit) with a valid
	// checksum: an error, without allocating 64 GiB.
	var p format.Params
	p.U64(MaxBlocks + 1)
	p.U64(0)
	p.U64(0)
	var buf bytes.Buffer
	e := format.NewEncoder(&buf)
	e.Begin(format.Header{Kind: format.KindSBBF, PayloadLen: (MaxBlocks + 1) * BlockBytes}, p.Bytes())
	if err := g.UnmarshalBinary(buf.Bytes()); !errors.Is(err, format.ErrFormat) {
		t.Errorf("2^31 blocks: %v", err)
	}
	// A seed other than 0.
	buf.Reset()
	p = format.Params{}
	p.U64(1)
	p.U64(0)
	p.U64(0)
	e = format.NewEncoder(&buf)
	e.Begin(format.Header{Kind: format.KindSBBF, Seed: 7, PayloadLen: BlockBytes}, p.Bytes())
	e.Words(make([]uint64, 4))
	if _, err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := g.UnmarshalBinary(buf.Bytes()); !errors.Is(err, format.ErrFormat) {
		t.Errorf("seed 7: %v", err)
	}
}

func FuzzUnmarshal(f *testing.F) {
	g := must(New(2))
	g.Add([]byte("a"))
	f.Add(must(g.MarshalBinary()))
	f.Fuzz(func(t *testing.T, data []byte) {
		var h Filter
		if err := h.UnmarshalBinary(data); err != nil {
			return
		}
		out, err := h.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var h2 Filter
		if err := h2.UnmarshalBinary(out); err != nil || !h2.Equal(&h) {
			t.Fatalf("re-encoded file differs: %v", err)
		}
	})
}

func TestZeroValue(t *testing.T) {
	var f Filter
	key := []byte("k")
	filtertest.Equal(t, "Contains", f.Contains(key), false)
	filtertest.Equal(t, "ContainsHash", f.ContainsHash(1), false)
	filtertest.Equal(t, "M", f.M(), 0)
	filtertest.Equal(t, "FillRatio", f.FillRatio(), 0)
	filtertest.Equal(t, "EstimatedFPR", f.EstimatedFPR(), 0)
	filtertest.Equal(t, "Bytes", len(f.Bytes()), 0)
	if _, err := f.WriteTo(new(bytes.Buffer)); !errors.Is(err, ErrParam) {
		t.Errorf("WriteTo: %v", err)
	}
	if _, err := f.MarshalBinary(); !errors.Is(err, ErrParam) {
		t.Errorf("MarshalBinary: %v", err)
	}
	filtertest.Panics(t, "Add", "New", func() { f.Add(key) })
	filtertest.Panics(t, "AddHash", "New", func() { f.AddHash(1) })
}
