package clog

import (
	"math"
	"testing"
)

// TestLog: Log agrees with glibc's log (2.36, x86-64; the values are
// glibc's bits) on arguments where Go's math.Log does not — RedisBloom's
// error rates 0.01, 0.0003125, 0.0015 and total weights of a t-digest — and
// down to the smallest subnormal.
func TestLog(t *testing.T) {
	differ := 0
	for _, c := range []struct {
		x    float64
		want uint64
	}{
		{0.01, 0xc0126bb1bbb55515},
		{0.0003125, 0xc020244dcd88dca5},
		{7.62939453125e-11, 0xc0374be2acc643f5},
		{0.0015, 0xc01a02585ac4061b},
		{4.6875e-05, 0xc023efa11d103529},
		{4.3655745685100556e-14, 0xc03ec32f5d92b0e5},
		{1.9852334701272665e-26, 0xc04d973a9a21a58f},
		{0.005, 0xc015317a1b949c53},
		{0.0025, 0xc017f7427b73e391},
		{0.001, 0xc01ba18a998fffa0},
		{0.5, 0xbfe62e42fefa39ef},
		{0.9, 0xbfbaf8e8210a415c},
		{1e-300, 0xc085963447f87fb5},
		{5e-324, 0xc0874385446d71c3},
		{0.7071067811865476, 0xbfd62e42fefa39ee},
	} {
		if got := math.Float64bits(Log(c.x)); got != c.want {
			t.Errorf("Log(%v) = %x, glibc %x", c.x, got, c.want)
		}
		if math.Float64bits(math.Log(c.x)) != c.want {
			differ++
		}
	}
	if differ < 7 {
		t.Errorf("math.Log differs from glibc on %d of the values; the table lost its point", differ)
	}
	if !math.IsNaN(Log(math.NaN())) || !math.IsInf(Log(0), -1) || !math.IsInf(Log(math.Inf(1)), 1) {
		t.Error("Log outside its domain")
	}
}

// TestLogAllocsBounded: Log's allocations (math/big's temporaries) stay a
// small constant, so a digest that calls it once per merge of hundreds of
// values allocates almost nothing per value.
func TestLogAllocsBounded(t *testing.T) {
	Log(3)
	x := 2.0
	if n := testing.AllocsPerRun(200, func() { x++; Log(x) }); n > 64 {
		t.Errorf("Log allocates %v times per call", n)
	}
}
