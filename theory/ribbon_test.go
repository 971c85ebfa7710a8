package theory

import (
	"math"
	"testing"
)

// TestRibbonBits: the slots of a shard are its keys times 1 + ε plus the
// 128-slot window, in whole blocks; overhead at 10^6 and 10^8 keys is at
// most 6% (the goal, metadata included) at r = 7 and 16 and does
// not grow with n; the bound RibbonMaxBits is above the expected size.
// (Package ribbon's tests check these against the filters it builds.)
func TestRibbonBits(t *testing.T) {
	for _, c := range []struct{ k, blocks uint64 }{{0, 1}, {1, 2}, {100, 2}, {124, 2}, {125, 3}, {1 << 15, 265}} {
		if got := RibbonShardBlocks(c.k); got != c.blocks {
			t.Errorf("RibbonShardBlocks(%d) = %d, want %d", c.k, got, c.blocks)
		}
	}
	if RibbonShards(0) != 1 || RibbonShards(RibbonShardKeys) != 1 || RibbonShards(RibbonShardKeys+1) != 2 {
		t.Error("RibbonShards")
	}
	if got, want := RibbonBits(1000, 8), uint64((RibbonShardBlocks(1000)*128+128)*8+128); got != want {
		t.Errorf("RibbonBits(1000, 8) = %d, want %d", got, want)
	}
	for _, r := range []int{7, 16} {
		o6, o8 := RibbonOverhead(1e6, r), RibbonOverhead(1e8, r)
		if o6 > 0.06 || o8 > 0.06 || math.Abs(o6-o8) > 0.002 {
			t.Errorf("r=%d: overhead %.4f at 10^6, %.4f at 10^8", r, o6, o8)
		}
		for _, n := range []uint64{0, 1, 1000, 1e6, 1e8} {
			if RibbonMaxBits(n, r) < RibbonBits(n, r) {
				t.Errorf("r=%d n=%d: bound %d below %d", r, n, RibbonMaxBits(n, r), RibbonBits(n, r))
			}
		}
	}
	if FPRibbon(7) != 1.0/128 || !math.IsNaN(RibbonBitsPerKey(0, 8)) {
		t.Error("FPRibbon or RibbonBitsPerKey(0)")
	}
}

// TestRibbonMaxBitsMonotone: RibbonMaxBits never decreases with n (the
// ribbon Builder's memory budget relies on it).
func TestRibbonMaxBitsMonotone(t *testing.T) {
	prev := uint64(0)
	for n := uint64(0); n < 1<<41; n += n/1000 + 1 {
		b := RibbonMaxBits(n, 8)
		if b < prev {
			t.Fatalf("RibbonMaxBits(%d) = %d < %d", n, b, prev)
		}
		prev = b
	}
	for n := uint64(0); n < 200_000; n++ {
		b := RibbonMaxBits(n, 8)
		if n > 0 && b < RibbonMaxBits(n-1, 8) {
			t.Fatalf("RibbonMaxBits(%d) = %d < RibbonMaxBits(n−1)", n, b)
		}
	}
}

// TestRibbonHugeN: past any memory the ribbon sizes saturate at
// math.MaxUint64 instead of wrapping (n near 2^64 once gave 1 shard and
// RibbonMaxBits 4224 bits, a "bound" below 10 keys'), and RibbonShards and
// RibbonMaxBits stay monotone.
func TestRibbonHugeN(t *testing.T) {
	ns := []uint64{1 << 40, 1 << 50, 1 << 56, 1<<56 + 1, 1 << 60, 1 << 63, math.MaxUint64}
	for i := 1; i < len(ns); i++ {
		a, b := ns[i-1], ns[i]
		if RibbonShards(b) < RibbonShards(a) {
			t.Errorf("RibbonShards(%d) = %d < RibbonShards(%d) = %d", b, RibbonShards(b), a, RibbonShards(a))
		}
		for _, r := range []int{1, 8, 32} {
			if RibbonMaxBits(b, r) < RibbonMaxBits(a, r) {
				t.Errorf("r=%d: RibbonMaxBits(%d) = %d < RibbonMaxBits(%d) = %d", r, b, RibbonMaxBits(b, r), a, RibbonMaxBits(a, r))
			}
			if RibbonBits(b, r) < RibbonBits(a, r) || RibbonSlots(b) < RibbonSlots(a) {
				t.Errorf("r=%d: RibbonBits or RibbonSlots(%d) below its value at %d", r, b, a)
			}
			if bpk := RibbonBitsPerKey(b, r); bpk < float64(r) {
				t.Errorf("r=%d: RibbonBitsPerKey(%d) = %g, below the bound %d", r, b, bpk, r)
			}
		}
	}
	if s := RibbonShards(math.MaxUint64); s != math.MaxUint64/RibbonShardKeys+1 {
		t.Errorf("RibbonShards(MaxUint64) = %d", s)
	}
}
