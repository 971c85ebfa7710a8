package bloom_test

import (
	"bytes"
	"fmt"

	"github.com/bloomlab/bloomlab/bloom"
	"github.com/bloomlab/bloomlab/hashing"
)

func Example() {
	f, err := bloom.NewWithEstimates(1000, 0.01)
	if err != nil {
		panic(err)
	}
	f.AddString("apple")
	f.AddString("banana")
	fmt.Println(f.ContainsString("apple"), f.ContainsString("banana"))
	fmt.Printf("m = %d bits, k = %d, %.1f bits per key\n", f.M(), f.K(), float64(f.M())/1000)
	// Output:
	// true true
	// m = 9601 bits, k = 7, 9.6 bits per key
}

// A partitioned filter with the prime-partition scheme of 001 §2: k
// subarrays of p bits each, p prime.
func ExampleNewPartitioned() {
	f, err := bloom.NewPartitioned(1000, 4, bloom.WithScheme(hashing.PrimePartition))
	if err != nil {
		panic(err)
	}
	f.AddString("x")
	fmt.Println(f.Kind(), f.M(), f.M()/uint64(f.K()), f.ContainsString("x"))
	// Output: partitioned 1004 251 true
}

// Files carry their kind, scheme, seed and a checksum.
func ExampleFilter_WriteTo() {
	f, _ := bloom.New(1<<10, 3, bloom.WithSeed(7))
	f.AddString("kept")
	var buf bytes.Buffer
	if _, err := f.WriteTo(&buf); err != nil {
		panic(err)
	}
	var g bloom.Filter
	if _, err := g.ReadFrom(&buf); err != nil {
		panic(err)
	}
	fmt.Println(g.ContainsString("kept"), g.Seed(), g.Equal(f))
	// Output: true 7 true
}

func ExampleFilter_Union() {
	a, _ := bloom.New(1<<12, 5)
	b, _ := bloom.New(1<<12, 5)
	a.AddString("left")
	b.AddString("right")
	if err := a.Union(b); err != nil {
		panic(err)
	}
	fmt.Println(a.ContainsString("left"), a.ContainsString("right"))
	c, _ := bloom.New(1<<12, 6)
	fmt.Println(a.Union(c))
	// Output:
	// true true
	// bloom: union: k differs (5 vs 6): incompatible filters
}

// The worked example of 003 §2, replayed with its own hash functions:
// m = 5, k = 2, h1(x) = x mod 5, h2(x) = (2x + 3) mod 5.
func ExampleWithIndexFunc() {
	f, _ := bloom.New(5, 2, bloom.WithIndexFunc(func(d hashing.Digest, i int) uint64 {
		if i == 0 {
			return d.H1 % 5
		}
		return (2*d.H1 + 3) % 5
	}))
	f.AddHash(hashing.Digest{H1: 9})
	f.AddHash(hashing.Digest{H1: 11})
	for _, x := range []uint64{15, 16} {
		fmt.Println(x, f.ContainsHash(hashing.Digest{H1: x}))
	}
	// Output:
	// 15 false
	// 16 true
}
