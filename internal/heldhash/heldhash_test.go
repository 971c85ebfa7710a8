package heldhash

import (
	"errors"
	"strings"
	"testing"

	"github.com/bloomlab/bloomlab/internal/base"
)

// TestAdmit: without a budget every count up to max is admitted; with
// one, exactly the counts whose need fits, checked about log2 times;
// past max, ErrParam; near max, twice the count is capped at max (a need
// that is 0 beyond max cannot vouch for keys past it).
func TestAdmit(t *testing.T) {
	need := func(n uint64) uint64 { return 100 * n }
	var b Budget
	if err := b.Admit(1e6, 1e6, need, "x", "y"); err != nil {
		t.Fatal(err)
	}
	if err := b.Admit(1e6+1, 1e6, need, "x", "y"); !errors.Is(err, base.ErrParam) {
		t.Fatalf("past max: %v", err)
	}
	b.Set(100 * 1000)
	calls := 0
	counting := func(n uint64) uint64 { calls++; return need(n) }
	for n := uint64(1); n <= 1000; n++ {
		if err := b.Admit(n, 1e6, counting, "x", "y"); err != nil {
			t.Fatalf("%d keys: %v", n, err)
		}
	}
	if calls > 40 {
		t.Errorf("need ran %d times for 1000 admissions", calls)
	}
	err := b.Admit(1001, 1e6, need, "fuse", "the held hashes")
	if err == nil || !strings.Contains(err.Error(), "fuse: memory budget of 100000 bits reached: building from 1001 keys takes 100100 bits (the held hashes)") {
		t.Fatalf("1001 keys: %v", err)
	}
	// A need that is 0 past max: twice the count is capped at max.
	var c Budget
	c.Set(1000)
	zeroPast := func(n uint64) uint64 {
		if n > 10 {
			return 0
		}
		return 200 * n
	}
	if err := c.Admit(6, 10, zeroPast, "x", "y"); err == nil {
		t.Errorf("6 keys need 1200 bits > 1000, admitted (fits %d)", c.Fits())
	}
}

// TestStore: a Store holds its hashes in order across chunks, copies them
// out and back, truncates, gives ranges in place or in a copy, and
// StoreOf wraps a slice without copying it.
func TestStore(t *testing.T) {
	var s Store
	n := uint64(2*ChunkLen + 5)
	for i := range n {
		s.Append(i * 3)
	}
	if s.Len() != n || len(s.Chunks()) != 3 || len(s.Chunks()[2]) != 5 {
		t.Fatalf("Len %d, %d chunks", s.Len(), len(s.Chunks()))
	}
	all := make([]uint64, n)
	s.CopyTo(all)
	for i, h := range all {
		if h != uint64(i)*3 || s.At(uint64(i)) != h {
			t.Fatalf("hash %d = %d", i, h)
		}
	}
	var scratch []uint64
	if r := s.Range(ChunkLen-2, ChunkLen+2, &scratch); len(r) != 4 || r[0] != (ChunkLen-2)*3 || r[3] != (ChunkLen+1)*3 || &r[0] != &scratch[0] {
		t.Fatalf("a range straddling two chunks: %v", r)
	}
	if r := s.Range(3, 7, &scratch); len(r) != 4 || &r[0] != &s.Chunks()[0][3] {
		t.Fatalf("a range within a chunk is not the chunk's: %v", r)
	}
	for i := range all {
		all[i] = uint64(i) + 1
	}
	s.CopyFrom(all[:ChunkLen+1])
	if s.At(ChunkLen) != ChunkLen+1 || s.At(ChunkLen+1) != (ChunkLen+1)*3 {
		t.Fatal("CopyFrom")
	}
	s.Truncate(ChunkLen)
	if s.Len() != ChunkLen || len(s.Chunks()) != 1 {
		t.Fatalf("Truncate: Len %d, %d chunks", s.Len(), len(s.Chunks()))
	}
	s.Append(7)
	if s.Len() != ChunkLen+1 || s.At(ChunkLen) != 7 {
		t.Fatal("Append after Truncate")
	}
	h := []uint64{1, 2, 3}
	w := StoreOf(h)
	w.Set(1, 9)
	if h[1] != 9 || w.Len() != 3 {
		t.Fatal("StoreOf copied")
	}
}
