package hashing

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"testing"

	"github.com/bloomlab/bloomlab/internal/stats"
)

// Known answers: the digest of fixed keys and the positions of "bloomlab"
// (seed 42, k = 7) under every scheme. Files store only the scheme and seed,
// so these values must never change: a failure here means existing files
// would be misread.
func TestKnownDigests(t *testing.T) {
	if got, want := Sum(nil, 0), (Digest{H1: 0x6001c324468d497f, H2: 0x99aa06d3014798d8}); got != want {
		t.Errorf("Sum(nil, 0) = %#v, want %#v", got, want)
	}
	if got, want := SumString("bloomlab", 42), (Digest{H1: 0x852f818b668f5ff2, H2: 0x59ed1c445b2df099}); got != want {
		t.Errorf("SumString(bloomlab, 42) = %#v, want %#v", got, want)
	}
	if Sum([]byte("bloomlab"), 42) != SumString("bloomlab", 42) {
		t.Error("Sum and SumString disagree")
	}
	if SumUint64(0x0102030405060708, 3) != Sum([]byte{8, 7, 6, 5, 4, 3, 2, 1}, 3) {
		t.Error("SumUint64 is not Sum of the little-endian bytes")
	}
}

var knownPositions = []struct {
	s   Scheme
	m   uint64
	pos []uint64
}{
	{Independent, 1048576, []uint64{0x52014, 0xe87c6, 0x41cc1, 0xc09e8, 0x448eb, 0xbc2a9, 0xf41be}},
	{Independent, 1000003, []uint64{0x4e34c, 0xddb76, 0x3ebfd, 0xb7b25, 0x4161b, 0xb3732, 0xe8cd1}},
	{Independent, 5000000000, []uint64{0x5f775e03, 0x10ea63455, 0x4c99181e, 0xe03d0a51, 0x4fcfb62a, 0xdb0ded16, 0x11c2e2745}},
	{Double, 1048576, []uint64{0x852f8, 0xdf1c9, 0x3909a, 0x92f6b, 0xece3c, 0x46d0d, 0xa0bde}},
	{Double, 1000003, []uint64{0x7f041, 0xd4c6c, 0x36654, 0x8c27f, 0xe1eaa, 0x43892, 0x994bd}},
	{Double, 5000000000, []uint64{0x9b0c64a0, 0x103bc7e2b, 0x4266a5b6, 0xab16bf41, 0x113c6d8cc, 0x52710057, 0xbb2119e2}},
	{Enhanced, 1048576, []uint64{0x852f8, 0xdf1c9, 0x3909b, 0x92f6f, 0xece46, 0x46d21, 0xa0c01}},
	{Enhanced, 1000003, []uint64{0x7f041, 0xd4c6c, 0x36655, 0x8c283, 0xe1eb4, 0x438a6, 0x994e0}},
	{Enhanced, 5000000000, []uint64{0x9b0c64a0, 0x103bc7e2b, 0x4266a5b7, 0xab16bf45, 0x113c6d8d6, 0x5271006b, 0xbb211a05}},
	{ExtendedSquare, 1048576, []uint64{0x852f8, 0xdf1ca, 0x3909e, 0x92f74, 0xece4c, 0x46d26, 0xa0c02}},
	{ExtendedSquare, 1000003, []uint64{0x7f041, 0xd4c6d, 0x36658, 0x8c288, 0xe1eba, 0x438ab, 0x994e1}},
	{ExtendedSquare, 5000000000, []uint64{0x9b0c64a0, 0x103bc7e2c, 0x4266a5ba, 0xab16bf4a, 0x113c6d8dc, 0x52710070, 0xbb211a06}},
	{ExtendedCube, 1048576, []uint64{0x852f8, 0xdf1ca, 0x390a2, 0x92f86, 0xece7c, 0x46d8a, 0xa0cb6}},
	{ExtendedCube, 1000003, []uint64{0x7f041, 0xd4c6d, 0x3665c, 0x8c29a, 0xe1eea, 0x4390f, 0x99595}},
	{ExtendedCube, 5000000000, []uint64{0x9b0c64a0, 0x103bc7e2c, 0x4266a5be, 0xab16bf5c, 0x113c6d90c, 0x527100d4, 0xbb211aba}},
	{Partition, 1048579, []uint64{0x1306c, 0x4471c, 0x514a7, 0x82b57, 0xb4207, 0xc0f92, 0xf2642}},
	{Partition, 1000006, []uint64{0x12252, 0x41462, 0x4d868, 0x7ca78, 0xabc88, 0xb808e, 0xe729e}},
	{Partition, 5000000005, []uint64{0x16265785, 0x4fae1007, 0x5ea2a5f6, 0x982a5e78, 0xd1b216fa, 0xe0a6ace9, 0x11a2e656b}},
	{PrimePartition, 1048621, []uint64{0x1306f, 0x44727, 0x514b4, 0x82b6c, 0xb4224, 0xc0fb1, 0xf2669}},
	{PrimePartition, 1000069, []uint64{0x12257, 0x41473, 0x4d87c, 0x7ca98, 0xabcb4, 0xb80bd, 0xe72d9}},
	{PrimePartition, 5000000243, []uint64{0x16265796, 0x4fae1046, 0x5ea2a641, 0x982a5ef1, 0xd1b217a1, 0xe0a6ad9c, 0x11a2e664c}},
	{PartitionIndependent, 1048579, []uint64{0xbb70, 0x45c8a, 0x528ae, 0x893b5, 0x9c148, 0xd1bd1, 0xfe4d5}},
	{PartitionIndependent, 1000006, []uint64{0xb2c1, 0x428d2, 0x4eb81, 0x82dff, 0x94d99, 0xc805e, 0xf285a}},
	{PartitionIndependent, 5000000005, []uint64{0xda35693, 0x513d2a0d, 0x601791bc, 0x9fc2200e, 0xb5b35b2d, 0xf42acebe, 0x1280bb07c}},
}

func TestKnownPositions(t *testing.T) {
	d := SumString("bloomlab", 42)
	for _, c := range knownPositions {
		ix, err := NewIndexer(c.s, c.m, len(c.pos))
		if err != nil {
			t.Fatal(err)
		}
		var buf [MaxK]uint64
		if got := ix.Positions(d, buf[:]); !slices.Equal(got, c.pos) {
			t.Errorf("%v m=%d: positions %#v, want %#v", c.s, c.m, got, c.pos)
		}
	}
}

// reference computes the positions from the definitions with plain modular
// arithmetic (128-bit where needed), independently of the incremental code.
func reference(s Scheme, d Digest, m uint64, k int) []uint64 {
	mulmod := func(a, b, n uint64) uint64 {
		hi, lo := bits.Mul64(a, b)
		_, r := bits.Div64(hi%n, lo, n)
		return r
	}
	out := make([]uint64, k)
	switch s {
	case Double, Enhanced, ExtendedSquare, ExtendedCube:
		a := Reduce(d.H1, m)
		var b uint64
		if m%2 == 0 {
			b = 2*Reduce(d.H2, m/2) + 1
		} else if m > 1 {
			b = Reduce(d.H2, m-1) + 1
		}
		for i := range out {
			ii := uint64(i)
			var f uint64
			switch s {
			case Enhanced:
				f = (ii*ii*ii - ii) / 6
			case ExtendedSquare:
				f = ii * ii
			case ExtendedCube:
				f = ii * ii * ii
			}
			out[i] = (a + mulmod(ii, b, m) + f%m) % m
		}
	case Partition, PrimePartition:
		sub := m / uint64(k)
		a, b := Reduce(d.H1, sub), Reduce(d.H2, sub)
		for i := range out {
			out[i] = uint64(i)*sub + (a+mulmod(uint64(i), b, sub))%sub
		}
	case Independent:
		for i := range out {
			out[i] = Reduce(mixIndex(d, i), m)
		}
	case PartitionIndependent:
		sub := m / uint64(k)
		for i := range out {
			out[i] = uint64(i)*sub + Reduce(mixIndex(d, i), sub)
		}
	}
	return out
}

func TestPositionsMatchDefinition(t *testing.T) {
	ms := []uint64{1, 2, 3, 5, 7, 64, 100, 1 << 20, 1000003, 1<<32 + 15, 5000000000, MaxM}
	for _, s := range Schemes() {
		for _, m0 := range ms {
			for _, k := range []int{1, 2, 7, 13, MaxK} {
				m := PartitionSize(s, m0, k)
				if m > MaxM {
					continue
				}
				ix, err := NewIndexer(s, m, k)
				if err != nil {
					t.Fatalf("%v m=%d k=%d: %v", s, m, k, err)
				}
				for key := uint64(0); key < 50; key++ {
					d := SumUint64(key, 7)
					var buf [MaxK]uint64
					got := ix.Positions(d, buf[:])
					want := reference(s, d, m, k)
					if !slices.Equal(got, want) {
						t.Fatalf("%v m=%d k=%d key=%d: got %v want %v", s, m, k, key, got, want)
					}
					for i, p := range got {
						if p >= m {
							t.Fatalf("%v: position %d = %d ≥ m = %d", s, i, p, m)
						}
						if s.Partitioned() && p/(m/uint64(k)) != uint64(i) {
							t.Fatalf("%v: position %d = %d outside subarray %d", s, i, p, i)
						}
					}
				}
			}
		}
	}
}

func TestDoubleStep(t *testing.T) {
	// 000 §3.1: with m even the step is odd, so for m a power of two the k
	// positions of a key are distinct; the step is never 0 for m > 1.
	for _, m := range []uint64{2, 64, 1 << 20, 1000, 1001, 1000003} {
		ix, _ := NewIndexer(Double, m, 2)
		for key := uint64(0); key < 2000; key++ {
			_, b := ix.DoubleStart(SumUint64(key, 1))
			if b == 0 || b >= m || (m%2 == 0 && b%2 == 0) {
				t.Fatalf("m=%d: step %d", m, b)
			}
		}
	}
	ix, _ := NewIndexer(Double, 1<<16, 16)
	for key := uint64(0); key < 2000; key++ {
		var buf [MaxK]uint64
		p := slices.Clone(ix.Positions(SumUint64(key, 1), buf[:]))
		slices.Sort(p)
		if len(slices.Compact(p)) != 16 {
			t.Fatalf("repeated position for key %d", key)
		}
	}
}

func TestReduce(t *testing.T) {
	for _, n := range []uint64{1, 2, 3, 10, 1000003, 1 << 40, 1<<63 + 1, math.MaxUint64} {
		for x := uint64(0); x < 1000; x++ {
			v := splitmix(x)
			if r := Reduce(v, n); r >= n {
				t.Fatalf("Reduce(%d, %d) = %d", v, n, r)
			}
		}
		if r := Reduce(0, n); r >= n { // x = 0 takes the rejection path
			t.Fatalf("Reduce(0, %d) = %d", n, r)
		}
	}
	// With n = 2^63+1 almost half of all x are rejected: the result must
	// still be uniform (top half vs bottom half balanced).
	n := uint64(1<<63 + 1)
	hi := 0
	const trials = 100000
	for x := uint64(0); x < trials; x++ {
		if Reduce(splitmix(x^0xabc), n) >= n/2 {
			hi++
		}
	}
	lo, up := stats.BinomialQuantileBounds(trials, 0.5, 1e-6)
	if uint64(hi) < lo || uint64(hi) > up {
		t.Errorf("Reduce biased for n = 2^63+1: %d of %d in the upper half, want [%d, %d]", hi, trials, lo, up)
	}
}

// TestUniformity applies a chi-square test to the positions of every scheme
// for random and structured keys: each probe index separately, and the pair
// (probe 0, probe 1) jointly, which catches correlated probes.
func TestUniformity(t *testing.T) {
	const keys = 200000
	keySets := map[string]func(i uint64) Digest{
		"random":     func(i uint64) Digest { return SumUint64(splitmix(i), 99) },
		"sequential": func(i uint64) Digest { return SumUint64(i, 99) },
		"prefix": func(i uint64) Digest {
			return SumString(fmt.Sprintf("https://example.com/a/very/long/shared/prefix/for/every/key/%08d", i), 99)
		},
	}
	for _, s := range Schemes() {
		for name, keyf := range keySets {
			const k, bins = 4, 64
			m := PartitionSize(s, 64*bins, k) // partitioned: bins per subarray
			ix, err := NewIndexer(s, m, k)
			if err != nil {
				t.Fatal(err)
			}
			sub := ix.SubarraySize()
			var single [k][bins]float64
			var pair [16][16]float64
			for i := uint64(0); i < keys; i++ {
				var buf [MaxK]uint64
				p := ix.Positions(keyf(i), buf[:])
				for j := range k {
					local := p[j] % sub
					single[j][local*bins/sub]++
				}
				pair[(p[0]%sub)*16/sub][(p[1]%sub)*16/sub]++
			}
			// Bin j of b covers the local positions l with l·b/sub = j; with
			// sub not a multiple of b (a prime) the bins differ in width.
			width := func(b uint64) []float64 {
				w := make([]float64, b)
				for l := uint64(0); l < sub; l++ {
					w[l*b/sub]++
				}
				return w
			}
			w64, w16 := width(bins), width(16)
			check := func(what string, counts, expect []float64) {
				var chi float64
				for i, c := range counts {
					e := expect[i]
					chi += (c - e) * (c - e) / e
				}
				if pv := stats.ChiSquareUpper(chi, len(counts)-1); pv < 1e-6 {
					t.Errorf("%v/%s %s: chi-square %.1f (df %d), p = %.2g", s, name, what, chi, len(counts)-1, pv)
				}
			}
			e64 := make([]float64, bins)
			for i := range e64 {
				e64[i] = keys * w64[i] / float64(sub)
			}
			for j := range k {
				check(fmt.Sprintf("probe %d", j), single[j][:], e64)
			}
			var flat, e256 []float64
			for a, row := range pair {
				flat = append(flat, row[:]...)
				for b := range row {
					e256 = append(e256, keys*w16[a]*w16[b]/float64(sub*sub))
				}
			}
			check("probes 0,1 jointly", flat, e256)
		}
	}
}

func TestPartitionSize(t *testing.T) {
	cases := []struct {
		s    Scheme
		m    uint64
		k    int
		want uint64
	}{
		{Double, 1001, 7, 1001},
		{Partition, 1001, 7, 1001},
		{Partition, 1002, 7, 1008},
		{PartitionIndependent, 10, 3, 12},
		{PrimePartition, 1000, 7, 7 * 149},
		{PrimePartition, 5, 2, 6},
	}
	for _, c := range cases {
		if got := PartitionSize(c.s, c.m, c.k); got != c.want {
			t.Errorf("PartitionSize(%v, %d, %d) = %d, want %d", c.s, c.m, c.k, got, c.want)
		}
	}
}

func TestPrimes(t *testing.T) {
	var sieve [10000]bool
	for i := 2; i < len(sieve); i++ {
		sieve[i] = true
	}
	for i := 2; i*i < len(sieve); i++ {
		if sieve[i] {
			for j := i * i; j < len(sieve); j += i {
				sieve[j] = false
			}
		}
	}
	for i := range sieve {
		if IsPrime(uint64(i)) != sieve[i] {
			t.Fatalf("IsPrime(%d) = %v", i, !sieve[i])
		}
	}
	for _, c := range [][2]uint64{{1<<61 - 1, 1}, {1<<61 + 1, 0}, {18446744073709551557, 1}, {3215031751, 0}, {1000000007, 1}} {
		if IsPrime(c[0]) != (c[1] == 1) {
			t.Errorf("IsPrime(%d) wrong", c[0])
		}
	}
	if NextPrime(1000) != 1009 || NextPrime(0) != 2 || NextPrime(3) != 3 {
		t.Error("NextPrime wrong")
	}
}

func TestParams(t *testing.T) {
	for _, c := range []struct {
		s Scheme
		m uint64
		k int
	}{{Double, 0, 3}, {Double, MaxM + 1, 3}, {Double, 100, 0}, {Double, 100, MaxK + 1}, {Partition, 100, 3}, {PrimePartition, 100, 4}, {0, 100, 3}, {Custom, 100, 3}, {42, 100, 3}} {
		if _, err := NewIndexer(c.s, c.m, c.k); err == nil {
			t.Errorf("NewIndexer(%v, %d, %d) accepted", c.s, c.m, c.k)
		}
	}
	if _, err := NewCustomIndexer(10, 2, nil); err == nil {
		t.Error("nil IndexFunc accepted")
	}
	for _, s := range Schemes() {
		got, err := ParseScheme(s.String())
		if err != nil || got != s {
			t.Errorf("ParseScheme(%q) = %v, %v", s.String(), got, err)
		}
	}
	if _, err := ParseScheme("custom"); err == nil {
		t.Error("ParseScheme(custom) accepted")
	}
	if _, err := ParseScheme("nope"); err == nil {
		t.Error("ParseScheme(nope) accepted")
	}
}

func TestCustom(t *testing.T) {
	// 003 §2: m = 5, k = 2, h1(x) = x mod 5, h2(x) = (2x + 3) mod 5.
	ix, err := NewCustomIndexer(5, 2, func(d Digest, i int) uint64 {
		if i == 0 {
			return d.H1 % 5
		}
		return (2*d.H1 + 3) % 5
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range [][3]uint64{{9, 4, 1}, {11, 1, 0}, {15, 0, 3}, {16, 1, 0}} {
		var buf [MaxK]uint64
		if got := ix.Positions(Digest{H1: c[0]}, buf[:]); got[0] != c[1] || got[1] != c[2] {
			t.Errorf("x=%d: %v, want [%d %d]", c[0], got, c[1], c[2])
		}
	}
	wrap, _ := NewCustomIndexer(5, 1, func(Digest, int) uint64 { return 12 })
	var buf [MaxK]uint64
	if p := wrap.Positions(Digest{}, buf[:]); p[0] != 2 {
		t.Errorf("out-of-range custom position not taken mod m: %d", p[0])
	}
}

func TestNoAllocs(t *testing.T) {
	key := []byte("0123456789abcdef")
	var sink uint64
	for _, s := range Schemes() {
		ix, _ := NewIndexer(s, PartitionSize(s, 1<<20, 7), 7)
		var buf [MaxK]uint64
		if a := testing.AllocsPerRun(100, func() {
			d := Sum(key, 1)
			sink += ix.Positions(d, buf[:])[0]
			sink += SumString("abc", 1).H1
		}); a != 0 {
			t.Errorf("%v: %v allocations per run", s, a)
		}
	}
	_ = sink
}

var sinkU64 uint64

func BenchmarkPositions(b *testing.B) {
	for _, s := range Schemes() {
		b.Run(s.String(), func(b *testing.B) {
			ix, _ := NewIndexer(s, PartitionSize(s, 1<<24, 7), 7)
			var buf [MaxK]uint64
			d := SumString("x", 1)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				d.H1 += 0x9E3779B97F4A7C15
				sinkU64 += ix.Positions(d, buf[:])[6]
			}
		})
	}
}

func BenchmarkSum16(b *testing.B) {
	key := []byte("0123456789abcdef")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		key[0] = byte(i)
		sinkU64 += Sum(key, 1).H1
	}
}

// TestIndependentHash: position i of the Independent and
// PartitionIndependent schemes is IndependentHash(d, i) reduced, as its doc
// says.
func TestIndependentHash(t *testing.T) {
	var buf [MaxK]uint64
	for _, s := range []Scheme{Independent, PartitionIndependent} {
		const k = 7
		m := PartitionSize(s, 10007, k)
		ix, err := NewIndexer(s, m, k)
		if err != nil {
			t.Fatal(err)
		}
		for j := range 1000 {
			d := SumUint64(uint64(j), 3)
			for i, p := range ix.Positions(d, buf[:]) {
				want := Reduce(IndependentHash(d, i), m)
				if s == PartitionIndependent {
					want = uint64(i)*ix.SubarraySize() + Reduce(IndependentHash(d, i), ix.SubarraySize())
				}
				if p != want {
					t.Fatalf("%v key %d probe %d: Positions %d, IndependentHash gives %d", s, j, i, p, want)
				}
			}
		}
	}
}
