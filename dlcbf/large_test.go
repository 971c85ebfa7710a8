package dlcbf

import (
	"encoding/binary"
	"strconv"
	"strings"
	"testing"

	"github.com/bloomlab/bloomlab/internal/format"
)

// TestLargeFileAgrees: a payload of several decoder chunks, checked chunk
// by chunk as it arrives, is rejected exactly when validate rejects it,
// with validate's error, for bits flipped at and around the chunk
// boundaries, for every variant.
func TestLargeFileAgrees(t *testing.T) {
	const chunk = 1 << 15 // format's chunk, in words
	bits := []int{0, 1, 2, 7, 15, 16, 40, 63}
	if testing.Short() {
		bits = bits[:3]
	}
	for _, v := range variants {
		cfg := Config{Variant: v, Buckets: 5 * chunk * 64 / 4 / 112, Seed: 9}
		f, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 20000 {
			f.AddString(strconv.Itoa(i))
		}
		data, err := f.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		off := format.HeaderSize + int(binary.LittleEndian.Uint32(data[16:]))
		nw := (len(data) - off - 4) / 8
		if nw < 4*chunk {
			t.Fatalf("%v: %d words, want several chunks", v, nw)
		}
		for _, word := range []int{0, chunk - 1, chunk, chunk + 1, 2*chunk - 1, 3 * chunk, nw - 1} {
			for _, bit := range bits {
				b := append([]byte(nil), data...)
				b[off+8*word+bit/8] ^= 1 << (bit % 8)
				b = reseal(b)
				words := make([]uint64, nw)
				for i := range words {
					words[i] = binary.LittleEndian.Uint64(b[off+8*i:])
				}
				ref := build(f.cfg, words)
				ref.n = f.n
				want := ref.validate()
				var g Filter
				err := g.UnmarshalBinary(b)
				if (err == nil) != (want == nil) || err != nil && !strings.Contains(err.Error(), want.Error()) {
					t.Fatalf("%v, word %d bit %d: decode says %v, validate %v", v, word, bit, err, want)
				}
			}
		}
	}
}
