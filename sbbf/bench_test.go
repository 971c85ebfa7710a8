package sbbf

import (
	"strconv"
	"testing"
)

// Benchmarks of the hot paths on a filter of 2^20 blocks (32 MiB, past
// the caches): go test -run XXX -bench . ./sbbf
func benchKeys() [][]byte {
	keys := make([][]byte, 1<<16)
	for i := range keys {
		keys[i] = []byte("key-" + strconv.Itoa(i))
	}
	return keys
}

func BenchmarkAdd(b *testing.B) {
	f, keys := must(New(1<<20)), benchKeys()
	b.ResetTimer()
	for i := range b.N {
		f.Add(keys[i&(len(keys)-1)])
	}
}

func BenchmarkContains(b *testing.B) {
	f, keys := must(New(1<<20)), benchKeys()
	for _, k := range keys[:len(keys)/2] {
		f.Add(k)
	}
	b.ResetTimer()
	hits := 0
	for i := range b.N {
		if f.Contains(keys[i&(len(keys)-1)]) {
			hits++
		}
	}
	sink = hits
}

var sink int
