package dleft

import (
	"encoding/binary"
	"strconv"
	"strings"
	"testing"

	"github.com/bloomlab/bloomlab/internal/format"
)

// TestLargeFileAgrees: a table of several decoder chunks, checked chunk by
// chunk as it arrives, is rejected exactly when check rejects it, with
// check's error, for bits flipped at and around the chunk boundaries, for
// 64- and 128-bit buckets and grouping.
func TestLargeFileAgrees(t *testing.T) {
	const chunk = 1 << 15 // format's chunk, in words
	bits := []int{0, 1, 3, 4, 8, 40, 63}
	if testing.Short() {
		bits = bits[:3]
	}
	for _, cfg := range []Config{
		{D: 2, Buckets: 5 * chunk / 2, BucketBits: 64, Seed: 3},
		{D: 2, Buckets: 5 * chunk / 4, BucketBits: 128, Seed: 3},
		{D: 2, Buckets: 5 * chunk / 2, BucketBits: 64, Group: 4, Seed: 3},
	} {
		f := must(New(cfg))
		for i := range 50000 {
			f.AddString(strconv.Itoa(i))
		}
		data, err := f.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		off := format.HeaderSize + paramsLen
		nw := len(f.words)
		for _, word := range []int{0, chunk - 1, chunk, chunk + 1, 2*chunk - 1, 3 * chunk, nw - 1} {
			for _, bit := range bits {
				b := append([]byte(nil), data...)
				b[off+8*word+bit/8] ^= 1 << (bit % 8)
				b = reseal(b)
				ref := f.Clone()
				for i := range ref.words {
					ref.words[i] = binary.LittleEndian.Uint64(b[off+8*i:])
				}
				_, want := ref.check()
				var g Filter
				err := g.UnmarshalBinary(b)
				if want == nil && err != nil && strings.Contains(err.Error(), "less than the") {
					continue // a valid table holding more keys than n
				}
				if (err == nil) != (want == nil) || err != nil && want != nil && !strings.Contains(err.Error(), want.Error()) {
					t.Fatalf("%+v, word %d bit %d: decode says %v, check %v", cfg, word, bit, err, want)
				}
			}
		}
	}
}
