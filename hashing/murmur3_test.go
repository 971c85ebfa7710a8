package hashing

import (
	"encoding/binary"
	"testing"
)

// TestMurmurHash3KnownAnswers pins MurmurHash3_x64_128 to published
// vectors: the reference's outputs for seed 0 (the table of spaolacci's and
// twmb's Go ports, the empty key among them), and SMHasher's verification
// value 0x6384BA69 for MurmurHash3_x64_128, which hashes the keys
// {}, {0}, {0, 1}, …, {0, …, 254} with seeds 256, 255, …, 2 and then the
// concatenation of the 256 outputs with seed 0: every tail length and
// seed-dependent path at once.
func TestMurmurHash3KnownAnswers(t *testing.T) {
	for _, c := range []struct {
		key    string
		h1, h2 uint64
	}{
		{"", 0, 0},
		{"hello", 0xcbd8a7b341bd9b02, 0x5b1e906a48ae1d19},
		{"hello, world", 0x342fac623a5ebc8e, 0x4cdcbc079642414d},
		{"19 Jan 2038 at 3:14:07 AM", 0xb89e5988b737affc, 0x664fc2950231b2cb},
		{"The quick brown fox jumps over the lazy dog.", 0xcd99481f9ee902c9, 0x695da1a38987b6e7},
	} {
		if h1, h2 := MurmurHash3_x64_128([]byte(c.key), 0); h1 != c.h1 || h2 != c.h2 {
			t.Errorf("%q: %#016x %#016x, want %#016x %#016x", c.key, h1, h2, c.h1, c.h2)
		}
	}
	var key [256]byte
	var all [256 * 16]byte
	for i := range 256 {
		key[i] = byte(i)
		h1, h2 := MurmurHash3_x64_128(key[:i], uint32(256-i))
		binary.LittleEndian.PutUint64(all[16*i:], h1)
		binary.LittleEndian.PutUint64(all[16*i+8:], h2)
	}
	h1, _ := MurmurHash3_x64_128(all[:], 0)
	if v := uint32(h1); v != 0x6384BA69 {
		t.Errorf("SMHasher verification value %#08x, want 0x6384ba69", v)
	}
}

// TestBitsAndBloomsHashes: the four base hashes are MurmurHash3 of the
// key and of the key followed by a byte 1, for every key length 0–48 (each
// tail length, with and without whole blocks, and the tail of 15 bytes
// whose extra byte completes a block).
func TestBitsAndBloomsHashes(t *testing.T) {
	var key [49]byte
	for i := range key {
		key[i] = byte(7*i + 3)
	}
	for n := range len(key) {
		h := BitsAndBloomsHashes(key[:n])
		a1, a2 := MurmurHash3_x64_128(key[:n], 0)
		ext := append(append([]byte(nil), key[:n]...), 1)
		b1, b2 := MurmurHash3_x64_128(ext, 0)
		if h != [4]uint64{a1, a2, b1, b2} {
			t.Errorf("len %d: %x, want %x", n, h, [4]uint64{a1, a2, b1, b2})
		}
	}
}

// TestBitsAndBloomsLocation: the index rule, term by term as the peer's
// location writes it (h[i%2] + i·h[2+(((i+(i%2))%4)/2)]), for i < 200.
func TestBitsAndBloomsLocation(t *testing.T) {
	h := [4]uint64{0x0123456789abcdef, 0xfedcba9876543210, 0x9e3779b97f4a7c15, 0xc6a4a7935bd1e995}
	for i := uint64(0); i < 200; i++ {
		want := h[i%2] + i*h[2+(((i+(i%2))%4)/2)]
		if got := BitsAndBloomsLocation(h, i); got != want {
			t.Fatalf("i = %d: %#x, want %#x", i, got, want)
		}
	}
}

// TestBitsAndBloomsIndexer: KeyPositions reduces every location with %,
// for m not a power of two and up to 2^48, and allocates nothing;
// Positions panics on this scheme and KeyPositions on the others, and the
// indexer's parameters are checked.
func TestBitsAndBloomsIndexer(t *testing.T) {
	for _, m := range []uint64{1, 2, 3, 1000, 1 << 20, 1<<20 + 7, 1<<48 - 1, 1 << 48} {
		ix, err := NewBitsAndBloomsIndexer(m, MaxK)
		if err != nil {
			t.Fatal(err)
		}
		var out [MaxK]uint64
		for _, key := range []string{"", "a", "abcdefghijklmno", "abcdefghijklmnopqrstuvwxyz0123456789"} {
			h := BitsAndBloomsHashes([]byte(key))
			for i, p := range ix.KeyPositions([]byte(key), out[:]) {
				if want := BitsAndBloomsLocation(h, uint64(i)) % m; p != want {
					t.Fatalf("m = %d %q i = %d: %d, want %d", m, key, i, p, want)
				}
			}
		}
		if a := testing.AllocsPerRun(100, func() { ix.KeyPositions([]byte("some key"), out[:]) }); a != 0 {
			t.Errorf("KeyPositions: %v allocations", a)
		}
	}
	for _, c := range []struct {
		m uint64
		k int
	}{{0, 3}, {1<<48 + 1, 3}, {100, 0}, {100, 65}} {
		if _, err := NewBitsAndBloomsIndexer(c.m, c.k); err == nil {
			t.Errorf("m = %d k = %d accepted", c.m, c.k)
		}
	}
	if BitsAndBlooms.String() != "bitsandblooms" || BitsAndBlooms.Valid() {
		t.Errorf("scheme %v valid %v", BitsAndBlooms, BitsAndBlooms.Valid())
	}
	mustPanic := func(name string, f func()) {
		defer func() {
			if recover() == nil {
				t.Errorf("%s did not panic", name)
			}
		}()
		f()
	}
	ix, _ := NewBitsAndBloomsIndexer(100, 3)
	mustPanic("Positions", func() { ix.Positions(Digest{}, make([]uint64, 3)) })
	dix, _ := NewIndexer(Double, 100, 3)
	mustPanic("KeyPositions", func() { dix.KeyPositions(nil, make([]uint64, 3)) })
}
