package xxh3mid

import (
	"math/rand/v2"
	"testing"

	"github.com/bloomlab/bloomlab/internal/filtertest"
	"github.com/zeebo/xxh3"
)

// TestHash: for every length In accepts (and only those), and random
// keys under many seeds (0, 1, 2^64−1, random), Hash is xxh3's.
func TestHash(t *testing.T) {
	for n := 0; n <= 64; n++ {
		if want := n >= 9 && n <= 16; In(n) != want {
			t.Fatalf("In(%d) = %v", n, In(n))
		}
	}
	In(-1) // no panic
	rng := rand.New(rand.NewPCG(1, 2))
	seeds := []uint64{0, 1, ^uint64(0), 1 << 63}
	for i := 0; i < 60; i++ {
		seeds = append(seeds, rng.Uint64())
	}
	key := make([]byte, 16)
	for n := 9; n <= 16; n++ {
		for i := 0; i < 2000; i++ {
			for j := range key[:n] {
				key[j] = byte(rng.Uint32())
			}
			for _, s := range seeds[:4+i%60] {
				if got, want := Hash(key[:n], s), xxh3.HashSeed(key[:n], s); got != want {
					t.Fatalf("n=%d seed %#x key %x: %#x, xxh3 %#x", n, s, key[:n], got, want)
				}
			}
			if got, want := Hash(key[:n], 0), xxh3.Hash(key[:n]); got != want {
				t.Fatalf("n=%d key %x: %#x, xxh3.Hash %#x", n, key[:n], got, want)
			}
		}
	}
}

// TestInlinable: the point of the package is that its callers inline it.
func TestInlinable(t *testing.T) {
	filtertest.Inlinable(t, "github.com/bloomlab/bloomlab/internal/xxh3mid", "Hash", "In")
}
