package hashing

import (
	"testing"

	"github.com/zeebo/xxh3"
)

// TestSum64SeedZero: Sum64's seed-0 shortcut (xxh3.Hash) is the seeded
// hash with seed 0, at every length from 0 to 2000 bytes (every xxh3 code
// path), for []byte and string keys.
func TestSum64SeedZero(t *testing.T) {
	b := make([]byte, 2000)
	for i := range b {
		b[i] = byte(i*7 + 3)
	}
	for n := 0; n <= len(b); n++ {
		want := xxh3.HashSeed(b[:n], 0)
		if Sum64(b[:n], 0) != want || Sum64String(string(b[:n]), 0) != want {
			t.Fatalf("%d bytes: Sum64 with seed 0 is not xxh3.HashSeed(key, 0)", n)
		}
		if Sum64(b[:n], 5) != xxh3.HashSeed(b[:n], 5) {
			t.Fatalf("%d bytes: seed 5", n)
		}
	}
}
