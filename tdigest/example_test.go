package tdigest_test

import (
	"fmt"

	"github.com/bloomlab/bloomlab/tdigest"
)

// Latency percentiles of a stream, as RedisBloom's TDIGEST.QUANTILE would
// answer them for the same values.
func Example() {
	d, err := tdigest.New(100) // RedisBloom's default compression
	if err != nil {
		panic(err)
	}
	for i := 1; i <= 10000; i++ {
		d.Add(float64(i % 1000)) // milliseconds
	}
	fmt.Printf("p50 %.1f  p99 %.1f  max %.0f\n", d.Quantile(0.5), d.Quantile(0.99), d.Max())
	fmt.Printf("rank of 250: %d of %d\n", d.Rank(250), d.Size())
	b, _ := d.MarshalBinary()
	var e tdigest.Digest
	if err := e.UnmarshalBinary(b); err != nil {
		panic(err)
	}
	fmt.Println(e.Quantile(0.5) == d.Quantile(0.5))
	// Output:
	// p50 498.2  p99 989.4  max 999
	// rank of 250: 2503 of 10000
	// true
}
