package theory

import (
	"math"
	"testing"
)

// TestFuseLayout: the paper's sizes at known points (the authors' Go
// code gives BinaryFuse8 of 10^6 keys 1,130,496 cells in segments of
// 8192), the large-n factors 1.125 and 1.075, and the clamps.
func TestFuseLayout(t *testing.T) {
	for _, c := range []struct {
		arity         int
		n             uint64
		cells, segLen uint64
	}{
		{3, 0, 12, 4}, {3, 1, 12, 4}, {4, 1, 16, 4}, {4, 2, 16, 4},
		{3, 1_000_000, 1_130_496, 8192},
		{4, 1_000_000, 1_077_248, 4096},
		{3, 100_000_000, 112_590_848, 1 << 17},
		{4, 100_000_000, 107_544_576, 1 << 16},
	} {
		cells, segLen, ok := FuseLayout(c.arity, c.n)
		if !ok || cells != c.cells || segLen != c.segLen {
			t.Errorf("%d-wise n=%d: %d cells, segments of %d; want %d, %d", c.arity, c.n, cells, segLen, c.cells, c.segLen)
		}
	}
	if got := FuseSizeFactor(3, 1e9); got != 1.125 {
		t.Errorf("3-wise factor at 10^9: %v", got)
	}
	if got := FuseSizeFactor(4, 1e9); got != 1.075 {
		t.Errorf("4-wise factor at 10^9: %v", got)
	}
	for _, bad := range []struct {
		arity int
		n     uint64
	}{{2, 10}, {5, 10}, {3, MaxFuseKeys + 1}} {
		if _, _, ok := FuseLayout(bad.arity, bad.n); ok || FuseBits(bad.arity, 8, bad.n) != 0 {
			t.Errorf("FuseLayout(%d, %d) ok", bad.arity, bad.n)
		}
	}
	if cells, _, _ := FuseLayout(3, MaxFuseKeys); cells >= 1<<32 {
		t.Errorf("%d cells for MaxFuseKeys: past 32-bit indexes", cells)
	}
	if got := FuseBitsPerKey(4, 8, 100_000_000); got > 1.08*8 {
		t.Errorf("4-wise 8-bit at 10^8: %v bits per key, above 1.08 × 8", got)
	}
	if FPFuse(8) != 1.0/256 || !math.IsNaN(FuseBitsPerKey(3, 8, 0)) {
		t.Error("FPFuse or FuseBitsPerKey(0)")
	}
}

// TestFuseBitsMonotone: FuseBits never decreases with n (the fuse
// Builder's memory budget relies on it), over every n below 2·10^5 and a
// sparse walk to MaxFuseKeys.
func TestFuseBitsMonotone(t *testing.T) {
	for _, arity := range []int{3, 4} {
		prev := uint64(0)
		check := func(n uint64) {
			b := FuseBits(arity, 8, n)
			if b < prev {
				t.Fatalf("%d-wise: FuseBits(%d) = %d < FuseBits(n−1) = %d", arity, n, b, prev)
			}
			prev = b
		}
		for n := uint64(0); n < 200_000; n++ {
			check(n)
		}
		for n := uint64(200_000); n <= MaxFuseKeys; n += n/1000 + 1 {
			check(n)
		}
	}
}
