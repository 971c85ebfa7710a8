package countmin

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRowScanAgrees: rowScan, the check decode runs as the rows arrive,
// rejects exactly the payloads checkRows rejects, with and without
// conservative update, for totals in each of its modes (sums that cannot
// overflow, sums that can, N = 2^64 − 1), rows that sum to N or not,
// counters above N, saturated counters and sums, in random chunks.
func TestRowScanAgrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 15))
	for iter := range 20000 {
		w := uint64(1 + rng.IntN(9))
		d := uint64(1 + rng.IntN(4))
		var total uint64
		switch rng.IntN(5) {
		case 0:
			total = uint64(rng.IntN(50))
		case 1:
			total = math.MaxUint64/w - uint64(rng.IntN(3)) // around the plain mode's bound
		case 2:
			total = math.MaxUint64 - uint64(rng.IntN(3))
		case 3:
			total = math.MaxUint64
		default:
			total = rng.Uint64() >> rng.UintN(64)
		}
		cells := make([]uint64, w*d)
		for i := range d {
			row := cells[i*w : (i+1)*w]
			// A row summing to total, counters at most total.
			left := total
			for j := range row[:w-1] {
				row[j] = left / uint64(1+rng.IntN(3))
				left -= row[j]
			}
			row[w-1] = left
			rng.Shuffle(len(row), func(a, b int) { row[a], row[b] = row[b], row[a] })
		}
		for range rng.IntN(3) { // damage
			j := rng.IntN(len(cells))
			switch rng.IntN(4) {
			case 0:
				cells[j]++
			case 1:
				cells[j]--
			case 2:
				cells[j] = math.MaxUint64
			default:
				cells[j] = rng.Uint64()
			}
		}
		conservative := rng.IntN(2) == 0
		want := checkRows(cells, w, total, conservative) == nil
		s := newRowScan(w, total, conservative)
		for from := 0; from < len(cells); {
			to := min(len(cells), from+1+rng.IntN(2*int(w)))
			s.each(cells[:to], from)
			from = to
		}
		if got := !s.bad; got != want {
			t.Fatalf("case %d: w = %d, N = %d, conservative %v, cells %v: rowScan says %v, checkRows %v",
				iter, w, total, conservative, cells, got, want)
		}
	}
}
