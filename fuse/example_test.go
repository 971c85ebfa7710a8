package fuse_test

import (
	"fmt"

	"github.com/bloomlab/bloomlab/fuse"
)

// A binary fuse filter is built once from its whole key set, then only
// queried.
func Example() {
	keys := [][]byte{[]byte("apple"), []byte("banana"), []byte("cherry")}
	f, err := fuse.New(keys, fuse.Config{Arity: 4, FingerprintBits: 16})
	if err != nil {
		panic(err)
	}
	fmt.Println(f.Contains([]byte("banana")), f.N(), f.EstimatedFPR())
	// Output: true 3 1.52587890625e-05
}

// A Builder holds 8 bytes per key (their 64-bit hashes) until Finish.
func ExampleBuilder() {
	b, _ := fuse.NewBuilder(fuse.Config{})
	for i := range 100_000 {
		b.Add(fmt.Appendf(nil, "key%d", i))
	}
	f, err := b.Finish()
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d keys, %.2f bits per key, present: %v\n", f.N(), f.BitsPerKey(), f.Contains([]byte("key42")))
	// Output: 100000 keys, 9.50 bits per key, present: true
}
