package theory_test

import (
	"fmt"

	"github.com/bloomlab/bloomlab/theory"
)

// Example prints the false-positive table of 003 §3 (m = 8n with k = 3..7,
// and m = 10n with k = 7) from the exact formula.
func Example() {
	const n = 1e6
	for _, row := range []struct {
		bitsPerKey float64
		k          int
	}{{8, 3}, {8, 4}, {8, 5}, {8, 6}, {8, 7}, {10, 7}} {
		m := row.bitsPerKey * n
		fmt.Printf("m=%gn k=%d f=%.4f\n", row.bitsPerKey, row.k, theory.FPExact(m, n, row.k))
	}
	fmt.Println("optimal k for m=8n:", theory.OptimalK(8*n, n))
	fmt.Println("optimal k for m=10n:", theory.OptimalK(10*n, n))
	// Output:
	// m=8n k=3 f=0.0306
	// m=8n k=4 f=0.0240
	// m=8n k=5 f=0.0217
	// m=8n k=6 f=0.0216
	// m=8n k=7 f=0.0229
	// m=10n k=7 f=0.0082
	// optimal k for m=8n: 6
	// optimal k for m=10n: 7
}

// ExampleSize sizes a filter for a million keys at a 1% false-positive rate.
func ExampleSize() {
	m, k, err := theory.Size(1_000_000, 0.01)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("m=%d bits (%.2f bits/key), k=%d, rate %.5f\n", m, float64(m)/1e6, k, theory.FPExact(float64(m), 1e6, k))
	fmt.Printf("overhead over the 004 §4 lower bound: %.3f\n", theory.Overhead(float64(m), 1e6, 0.01))
	// Output:
	// m=9592956 bits (9.59 bits/key), k=7, rate 0.01000
	// overhead over the 004 §4 lower bound: 1.444
}
