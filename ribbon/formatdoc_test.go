package ribbon

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"testing"

	"github.com/bloomlab/bloomlab/hashing"
)

// TestFormatDocQuery answers queries from a file's bytes alone, following
// docs/FORMAT.md's "Kind 12: ribbon" word for word, and checks that every
// answer is the filter's: the document specifies the format completely.
func TestFormatDocQuery(t *testing.T) {
	for _, tc := range []struct{ n, r int }{{1, 1}, {1000, 7}, {70000, 16}, {5000, 32}} {
		keys := make([][]byte, tc.n)
		for i := range keys {
			keys[i] = fmt.Appendf(nil, "doc-%d", i)
		}
		f, err := New(keys, Config{ResultBits: tc.r, Seed: 99})
		if err != nil {
			t.Fatal(err)
		}
		file, err := f.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		// The fixed header is 32 bytes, then the parameter block, then the
		// payload, then a 4-byte CRC.
		const hdr = 32
		seed := binary.LittleEndian.Uint64(file[8:])
		params := file[hdr : hdr+33]
		S := binary.LittleEndian.Uint64(params[16:])
		B := binary.LittleEndian.Uint64(params[24:])
		r := uint(params[32])
		payload := file[hdr+33 : len(file)-4]
		word := func(i uint64) uint64 { return binary.LittleEndian.Uint64(payload[8*i:]) }
		if uint64(len(payload)) != 8*(S+1+(B+1)*2*uint64(r)) || word(S) != B {
			t.Fatalf("n=%d r=%d: payload of %d bytes for S=%d B=%d", tc.n, tc.r, len(payload), S, B)
		}
		query := func(key []byte) bool {
			h := hashing.Sum64(key, seed)
			s, _ := bits.Mul64(h, S)
			F, a := word(s)&(1<<48-1), word(s)>>48
			N := 128 * (word(s+1)&(1<<48-1) - F)
			hi, lo := bits.Mul64(h^(a+1)*0x9E3779B97F4A7C15, 0xA0761D6478BD642F)
			hh := hi ^ lo
			tt, _ := bits.Mul64(hh, N-127)
			start := 128*F + tt
			hi, lo = bits.Mul64(hh, 0xD6E8FEB86659FD93)
			c0, c1 := (lo^hi)|1, hi^hh
			res := (hh * 0xC2B2AE3D27D4EB4F) >> (64 - r)
			for j := uint64(0); j < uint64(r); j++ {
				parity := uint64(0)
				for i := uint64(0); i < 128; i++ {
					c := c0
					if i >= 64 {
						c = c1
					}
					if c>>(i&63)&1 == 0 {
						continue
					}
					slot := start + i
					b, p := slot/128, slot%128
					w := word(S + 1 + 2*(b*uint64(r)+j) + p/64)
					parity ^= w >> (p % 64) & 1
				}
				if parity != res>>j&1 {
					return false
				}
			}
			return true
		}
		for i, k := range keys {
			if !query(k) {
				t.Fatalf("n=%d r=%d: key %d absent by the document's query", tc.n, tc.r, i)
			}
		}
		for i := 0; i < 20000; i++ {
			k := fmt.Appendf(nil, "absent-%d", i)
			if got, want := query(k), f.Contains(k); got != want {
				t.Fatalf("n=%d r=%d: absent key %d: the document's query says %v, the filter %v", tc.n, tc.r, i, got, want)
			}
		}
	}
}
