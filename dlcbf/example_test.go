package dlcbf_test

import (
	"errors"
	"fmt"

	"github.com/bloomlab/bloomlab/dlcbf"
)

// A d-left counting Bloom filter for 100,000 keys at about 0.1% false
// positives, in about 23 bits per key (a 4-bit counting Bloom filter needs
// about 58).
func Example() {
	f, err := dlcbf.NewWithEstimates(100_000, 0.001, 0)
	if err != nil {
		panic(err)
	}
	if err := f.AddString("apple"); err != nil {
		panic(err) // bucket overflow: the key was not added
	}
	_ = f.AddString("apple") // a second copy: the cell's counter counts it
	fmt.Println(f.ContainsString("apple"), f.CountString("apple"))
	_ = f.RemoveString("apple")
	_ = f.RemoveString("apple")
	fmt.Println(f.ContainsString("apple"))
	err = f.RemoveString("apple")
	fmt.Println(errors.Is(err, dlcbf.ErrNotPresent))
	fmt.Printf("%.1f bits per key\n", float64(f.Bits())/100_000)
	// Output:
	// true 2
	// false
	// true
	// 22.7 bits per key
}

// The dynamic variant of 002 §III-C: 120 bits of cells per bucket, shared
// by as many cells as the bucket has ever held.
func Example_dynamic() {
	f, err := dlcbf.New(dlcbf.Config{Variant: dlcbf.Dynamic, Subtables: 4, Buckets: 2048, Cells: 8,
		RemainderBits: 14, CounterBits: 1, BucketBits: 120})
	if err != nil {
		panic(err)
	}
	for i := 0; i < 49152; i++ {
		if err := f.AddString(fmt.Sprint("key", i)); err != nil {
			panic(err)
		}
	}
	fmt.Printf("rate from the state: %.1e (static: %.1e)\n", f.EstimatedFPR(), 24.0/16384)
	// Output:
	// rate from the state: 4.4e-05 (static: 1.5e-03)
}

// Planning a dynamic filter without allocating it: its configuration, its
// memory and the rates theory predicts with and without removals.
func ExamplePlanFPR() {
	p, err := dlcbf.PlanFPR(dlcbf.Dynamic, 49152, 0.0015)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d × %d buckets of %d cells in %d bits, r = %d, %.1f bits per key\n", p.Subtables, p.Buckets, p.Cells, p.BucketBits, p.RemainderBits, p.BitsPerKey)
	fmt.Printf("fpr %.1e with no removals, at most %.1e after any\n", p.FPR, p.WorstFPR)
	// Output:
	// 4 × 2048 buckets of 8 cells in 112 bits, r = 14, 20.7 bits per key
	// fpr 1.2e-04 with no removals, at most 1.5e-03 after any
}
