package countmin_test

import (
	"fmt"

	"github.com/bloomlab/bloomlab/countmin"
)

// Counting word frequencies with error at most 0.1% of the stream with
// probability 99%, rows g_i = h1 + i·h2.
func Example() {
	s, err := countmin.NewWithEstimates(0.001, 0.01, countmin.Config{Conservative: true})
	if err != nil {
		panic(err)
	}
	for _, w := range []string{"a", "rose", "is", "a", "rose", "is", "a", "rose"} {
		s.AddString(w, 1)
	}
	fmt.Println(s.Width(), s.Depth(), s.EstimateString("rose"), s.EstimateString("a"), s.N())
	// Output:
	// 2719 5 3 3 8
}
