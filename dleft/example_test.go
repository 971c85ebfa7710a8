package dleft_test

import (
	"fmt"

	"github.com/bloomlab/bloomlab/dleft"
)

// A d-left filter stores a fingerprint of each key in the least loaded of
// d buckets (002 §II), so it answers with a lower rate than a standard
// filter of the same size; a bucket that overflows sends its key to the
// stash, so Add never loses a key.
func Example() {
	f, err := dleft.NewWithEstimates(10_000, 0.001, 0)
	if err != nil {
		panic(err)
	}
	for i := range 10_000 {
		if err := f.AddString(fmt.Sprint("user-", i)); err != nil {
			panic(err)
		}
	}
	fmt.Println(f.ContainsString("user-42"), f.ContainsString("nobody"), f.N(), f.D(), f.Overflows())
	fmt.Printf("%.1f bits per key, rate of the state %.1e\n", float64(f.Bits())/10_000, f.EstimatedFPR())
	// Output:
	// true false 10000 3 0
	// 14.6 bits per key, rate of the state 9.7e-04
}
