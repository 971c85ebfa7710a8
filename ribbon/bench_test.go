package ribbon

import (
	"fmt"
	"testing"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/filtertest"
)

// BenchmarkContains: single queries by hash (half of them present) at
// 10^4 keys (in cache) and 10^6.
func BenchmarkContains(b *testing.B) {
	for _, n := range []int{10_000, 1_000_000} {
		keys := filtertest.Keys(2*n, 1)
		hs := make([]uint64, len(keys))
		for i, k := range keys {
			hs[i] = hashing.Sum64(k, 0)
		}
		for _, r := range []int{8, 16} {
			f := must(New(keys[:n], Config{ResultBits: r}))
			b.Run(fmt.Sprintf("n=%d/r=%d", n, r), func(b *testing.B) {
				hits := 0
				for i := 0; b.Loop(); i++ {
					if i == len(hs) {
						i = 0
					}
					if f.ContainsHash64(hs[i]) {
						hits++
					}
				}
			})
		}
	}
}
