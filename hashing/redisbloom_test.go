package hashing

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMurmurHash64AKnownAnswers pins MurmurHash64A and RedisBloomHash to
// the values RedisBloom 2.4's own C code (deps/murmur2/MurmurHash2.c,
// compiled on x86-64) gives for the keys "", "a", "ab", …, "abcdefghijklmnopq":
// every tail length 0–7 with zero, one and two 8-byte blocks.
func TestMurmurHash64AKnownAnswers(t *testing.T) {
	want := []struct{ a, b uint64 }{
		{0x1ab11ea5a7b2c56e, 0xbbddcb5ab56dd547},
		{0x4292cee227b9150a, 0x7e9b527031f50c11},
		{0x2db1bf3a2e66542c, 0x293d5ccc2e02cc02},
		{0xca52f3863690cd7b, 0x492e507dc7ce3d23},
		{0xc19f5358d983a6bf, 0xe0cf7f46f508e46e},
		{0xf27f6d3730b4f30f, 0x7c733ac54ddf1280},
		{0x01ddc66cbc7b3e37, 0x1b348e32fa3fef62},
		{0x9fa0b24601c1e9a9, 0x593e9b0945664832},
		{0xd435df7a565a8af1, 0xbf3d673c0b1029cf},
		{0xa2c004e44bd0a465, 0x28459a22cef68950},
		{0x4dda8bb8288b5bbd, 0x361e14fc5e36a65b},
		{0x0b6930e3a92083b0, 0xdeb9aa8b3d5ec2da},
		{0xf0b550d26a298a3c, 0x37665bf0ab8309c9},
		{0x2407060734c8952c, 0x6e49c391e5447ca8},
		{0x4000a853bc7b875d, 0x62802f454a3ff6e0},
		{0xc4e6b4f6cdd08966, 0x4dbd74e04e8a2ad3},
		{0xa2d5453f05c0542c, 0x72b0c3aa939d90ed},
		{0xb84efba0e5917aa7, 0x963f6ccab23b3692},
	}
	key := []byte("abcdefghijklmnopq")
	for n, w := range want {
		a, b := RedisBloomHash(key[:n])
		if a != w.a || b != w.b {
			t.Errorf("len %d: got %#016x %#016x, want %#016x %#016x", n, a, b, w.a, w.b)
		}
		if got := MurmurHash64A(key[:n], RedisBloomSeed); got != w.a {
			t.Errorf("MurmurHash64A len %d = %#016x", n, got)
		}
	}
	if a, b := RedisBloomHash([]byte("k0")); a != 0x7f2a78f20ea9dd72 || b != 0x1dd8e24c89f69783 {
		t.Errorf("k0: %#x %#x", a, b)
	}
}

// TestMod64 checks Mod64 against % for the extremes of t (including every
// value near 2^64, where a + i·b wraps) and random t, for small, odd,
// power-of-two and large m up to 2^62.
func TestMod64(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	ms := []uint64{1, 2, 3, 7, 63, 64, 65, 1102, 1152, 4608, 1<<20 - 1, 1 << 32, 1<<32 + 1, 1 << 48, 1<<48 - 1, 1<<62 - 1, 1 << 62}
	for i := 0; i < 200; i++ {
		ms = append(ms, r.Uint64N(1<<48)+1, r.Uint64N(1<<62)+1)
	}
	for _, m := range ms {
		recip := ^uint64(0) / m
		check := func(x uint64) {
			if got := Mod64(x, m, recip); got != x%m {
				t.Fatalf("Mod64(%d, %d) = %d, want %d", x, m, got, x%m)
			}
		}
		for d := uint64(0); d < 300; d++ {
			check(d)
			check(math.MaxUint64 - d)
			check(m*d + d)
		}
		for i := 0; i < 2000; i++ {
			check(r.Uint64())
		}
	}
}

func TestRedisBloomNotAnIndexerScheme(t *testing.T) {
	if _, err := NewIndexer(RedisBloom, 1024, 7); err == nil {
		t.Error("NewIndexer accepted the RedisBloom scheme")
	}
	if RedisBloom.Valid() {
		t.Error("RedisBloom reported as an Indexer scheme")
	}
}

func TestMurmurNoAlloc(t *testing.T) {
	key := []byte("some key of moderate length")
	if a := testing.AllocsPerRun(100, func() { RedisBloomHash(key) }); a != 0 {
		t.Errorf("RedisBloomHash: %v allocs", a)
	}
}
