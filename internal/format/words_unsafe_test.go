//go:build (386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64 || wasm) && !purego

package format

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
)

// TestFillInPlace: the in-place read gives the words, the checksum, the
// byte count and the errors of the portable one, at every length around
// the chunk size and for every truncation point tried.
func TestFillInPlace(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 7, chunkWords - 1, chunkWords, chunkWords + 1, 3*chunkWords + 5} {
		data := make([]byte, 8*n)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		for _, cut := range []int{len(data), len(data) - 1, len(data) / 2, 3} {
			if cut < 0 || cut > len(data) {
				continue
			}
			a := &Decoder{r: bytes.NewReader(data[:cut])}
			b := &Decoder{r: bytes.NewReader(data[:cut])}
			wa, wb := make([]uint64, n), make([]uint64, n)
			ea, eb := a.fillInPlace(wa), b.fillSafe(wb)
			if (ea == nil) != (eb == nil) || ea != nil && ea.Error() != eb.Error() {
				t.Fatalf("n = %d, cut %d: errors %v and %v", n, cut, ea, eb)
			}
			if ea != nil {
				if !errors.Is(ea, io.ErrUnexpectedEOF) || !errors.Is(ea, ErrFormat) {
					t.Fatalf("n = %d, cut %d: %v", n, cut, ea)
				}
				continue
			}
			if a.crc != b.crc || a.n != b.n {
				t.Fatalf("n = %d: crc %08x/%08x, n %d/%d", n, a.crc, b.crc, a.n, b.n)
			}
			for i := range wa {
				if wa[i] != wb[i] {
					t.Fatalf("n = %d: word %d is %#x in place, %#x decoded", n, i, wa[i], wb[i])
				}
			}
		}
	}
}
