package counting

import (
	"encoding/binary"
	"strconv"
	"testing"

	"github.com/bloomlab/bloomlab/internal/format"
)

// TestLargeFileAgrees: counters spanning several decoder chunks, tallied
// chunk by chunk as they arrive, give the saturated count countSaturated
// gives, and the file is rejected exactly when the counter-by-counter sum
// disagrees with k·n while none is saturated, for bits flipped at and
// around the chunk boundaries, for every width.
func TestLargeFileAgrees(t *testing.T) {
	const chunk = 1 << 15 // format's chunk, in words
	bits := []int{0, 1, 3, 4, 31, 63}
	if testing.Short() {
		bits = bits[:3]
	}
	for _, w := range widths {
		m := uint64(5*chunk*64/w + 3)
		f, err := New(m, 3, WithCounterBits(w), WithSeed(4))
		if err != nil {
			t.Fatal(err)
		}
		for i := range 20000 {
			f.AddString(strconv.Itoa(i % 5000))
		}
		data, err := f.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		off := format.HeaderSize + int(binary.LittleEndian.Uint32(data[16:]))
		nw := len(f.words)
		for _, word := range []int{0, chunk - 1, chunk, chunk + 1, 2*chunk - 1, 3 * chunk, nw - 2} {
			for _, bit := range bits {
				b := append([]byte(nil), data...)
				b[off+8*word+bit/8] ^= 1 << (bit % 8)
				b = reseal(b)
				ref := f.Clone()
				for i := range ref.words {
					ref.words[i] = binary.LittleEndian.Uint64(b[off+8*i:])
				}
				sat := ref.countSaturated()
				valid := sat != 0 || sumRef(ref.lay, ref.words) == 3*f.N()
				var g Filter
				err := g.UnmarshalBinary(b)
				if (err == nil) != valid || err == nil && g.Saturated() != sat {
					t.Fatalf("w = %d, word %d bit %d: decode says %v (%d saturated), want valid %v (%d saturated)",
						w, word, bit, err, g.Saturated(), valid, sat)
				}
			}
		}
	}
}
