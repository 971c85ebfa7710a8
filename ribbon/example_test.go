package ribbon_test

import (
	"fmt"

	"github.com/bloomlab/bloomlab/ribbon"
)

// A Ribbon filter is built once from its whole key set, then only
// queried; its rate is 2^-r for any r from 1 to 32.
func Example() {
	keys := [][]byte{[]byte("apple"), []byte("banana"), []byte("cherry")}
	f, err := ribbon.New(keys, ribbon.Config{ResultBits: 10})
	if err != nil {
		panic(err)
	}
	fmt.Println(f.Contains([]byte("banana")), f.N(), f.EstimatedFPR())
	// Output: true 3 0.0009765625
}

// A Builder holds 8 bytes per key (their 64-bit hashes) until Finish.
func ExampleBuilder() {
	b, _ := ribbon.NewBuilder(ribbon.Config{ResultBits: 7})
	for i := range 100_000 {
		b.Add(fmt.Appendf(nil, "key%d", i))
	}
	f, err := b.Finish()
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d keys, %.2f bits per key, present: %v\n", f.N(), f.BitsPerKey(), f.Contains([]byte("key42")))
	// Output: 100000 keys, 7.26 bits per key, present: true
}
