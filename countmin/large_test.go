package countmin

import (
	"encoding/binary"
	"strconv"
	"strings"
	"testing"

	"github.com/bloomlab/bloomlab/internal/format"
)

// TestLargeFileAgrees: rows spanning several decoder chunks, checked chunk
// by chunk as they arrive, are rejected exactly when checkRows rejects
// them, with its error, for counters changed at and around the chunk
// boundaries, with and without conservative update.
func TestLargeFileAgrees(t *testing.T) {
	const chunk = 1 << 15 // format's chunk, in words
	for _, cons := range []bool{false, true} {
		s, err := New(Config{Width: 3*chunk/2 + 7, Depth: 4, Conservative: cons, Seed: 2})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 30000 {
			s.Add([]byte(strconv.Itoa(i%7000)), 1)
		}
		data, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		off := format.HeaderSize + paramsLen
		nw := len(s.cells)
		for _, word := range []int{0, chunk - 1, chunk, chunk + 1, 3*chunk/2 + 6, 3*chunk/2 + 7, 3 * chunk, nw - 1} {
			for _, edit := range []func(uint64) uint64{
				func(x uint64) uint64 { return x + 1 },
				func(x uint64) uint64 { return x - 1 },
				func(x uint64) uint64 { return x ^ 1<<40 },
			} {
				b := append([]byte(nil), data...)
				p := b[off+8*word:]
				binary.LittleEndian.PutUint64(p, edit(binary.LittleEndian.Uint64(p)))
				b = reseal(b)
				cells := make([]uint64, nw)
				for i := range cells {
					cells[i] = binary.LittleEndian.Uint64(b[off+8*i:])
				}
				want := checkRows(cells, s.cfg.Width, s.total, cons)
				var g Sketch
				err := g.UnmarshalBinary(b)
				if (err == nil) != (want == nil) || err != nil && !strings.Contains(err.Error(), want.Error()) {
					t.Fatalf("conservative %v, word %d: decode says %v, checkRows %v", cons, word, err, want)
				}
			}
		}
	}
}
