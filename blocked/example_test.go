package blocked_test

import (
	"fmt"

	"github.com/bloomlab/bloomlab/blocked"
)

// A blocked filter sets and tests a key's k bits inside one 512-bit block:
// one cache miss per query. ContainsBatch loads the blocks of a group of
// keys back to back, which hides most of the misses of a large filter.
func Example() {
	f, err := blocked.NewWithEstimates(1_000_000, 0.01)
	if err != nil {
		panic(err)
	}
	f.AddString("alice")
	f.AddString("bob")
	keys := [][]byte{[]byte("alice"), []byte("bob"), []byte("carol")}
	fmt.Println(f.ContainsString("alice"), f.ContainsBatch(keys, nil))
	fmt.Printf("%d blocks, k = %d, %.2f bits per key\n", f.Blocks(), f.K(), float64(f.Bits())/1e6)
	// Output:
	// true [true true false]
	// 19328 blocks, k = 6, 9.90 bits per key
}
