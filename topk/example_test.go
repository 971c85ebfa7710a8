package topk_test

import (
	"fmt"

	"github.com/bloomlab/bloomlab/topk"
)

// A sketch keeps the k heaviest items of a stream: TOPK.RESERVE hits 3
// 1000 5 0.9, then TOPK.ADD and TOPK.LIST WITHCOUNT.
func Example() {
	s, err := topk.New(topk.Config{K: 3, Width: 1000, Depth: 5, Decay: 0.9})
	if err != nil {
		panic(err)
	}
	for i := 0; i < 100; i++ {
		s.Add([]byte("home"))
		if i%2 == 0 {
			s.Add([]byte("search"))
		}
		if i%5 == 0 {
			s.Add([]byte("cart"))
		}
		if i%10 == 0 {
			s.Add([]byte("help"))
		}
		s.Add([]byte(fmt.Sprint("page", i))) // seen once each
	}
	for _, e := range s.List(nil) {
		fmt.Printf("%s %d\n", e.Item, e.Count)
	}
	fmt.Println(s.Query([]byte("cart")), s.Query([]byte("help")), s.Count([]byte("help")))
	// Output:
	// home 100
	// search 50
	// cart 20
	// true false 10
}
