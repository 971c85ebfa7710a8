package counting_test

import (
	"errors"
	"fmt"

	"github.com/bloomlab/bloomlab/counting"
)

// A counting filter supports removal: a removed key is no longer reported,
// the others stay.
func Example() {
	f, err := counting.NewWithEstimates(1000, 0.01, counting.WithSeed(1))
	if err != nil {
		panic(err)
	}
	for _, fruit := range []string{"apple", "banana", "cherry"} {
		f.AddString(fruit)
	}
	f.AddString("apple") // a second apple
	fmt.Println("m, k, w:", f.M(), f.K(), f.CounterBits())
	fmt.Println("apples:", f.CountString("apple"))

	if err := f.RemoveString("banana"); err != nil {
		panic(err)
	}
	fmt.Println("banana:", f.ContainsString("banana"))
	fmt.Println("cherry:", f.ContainsString("cherry"))

	// Removing a key the counters prove absent is refused.
	err = f.RemoveString("banana")
	fmt.Println(errors.Is(err, counting.ErrNotPresent), err)

	// The equivalent standard filter answers the same.
	b := f.ToBloom()
	fmt.Println("bloom:", b.ContainsString("apple"), b.ContainsString("banana"), b.N())
	// Output:
	// m, k, w: 9601 7 4
	// apples: 2
	// banana: false
	// cherry: true
	// true counting: key not present
	// bloom: true false 3
}

// Saturated counters stick at their maximum, so they never produce a false
// negative.
func ExampleFilter_Saturated() {
	f, _ := counting.New(64, 3, counting.WithCounterBits(2)) // counters saturate at 3
	for range 5 {
		f.AddString("hot")
	}
	fmt.Println(f.CountString("hot"), f.Saturated(), f.CounterMax())
	for range 5 {
		_ = f.RemoveString("hot")
	}
	fmt.Println(f.ContainsString("hot"), f.N())
	// Output:
	// 3 3 3
	// true 0
}

// Merge adds two filters' counters: the result holds both multisets.
func ExampleFilter_Merge() {
	a, _ := counting.New(1000, 4)
	b, _ := counting.New(1000, 4)
	a.AddString("x")
	b.AddString("x")
	b.AddString("y")
	if err := a.Merge(b); err != nil {
		panic(err)
	}
	fmt.Println(a.CountString("x"), a.ContainsString("y"), a.N())

	c, _ := counting.New(1000, 4, counting.WithCounterBits(8))
	fmt.Println(a.Merge(c))
	// Output:
	// 2 true 3
	// counting: merge: counter bits differ (4 vs 8): incompatible filters
}
