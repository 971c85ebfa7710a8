package scalable

import (
	"math"
	"testing"
)

// TestRedisLog: the logarithm behind RedisBloom's bits per entry agrees
// with glibc's log (2.36, as RedisBloom calls it) on rates where Go's
// math.Log does not — 0.01 (the first link of a non-scaling 1% filter),
// 0.0003125 (link 4 of a 1% chain), 0.0015 — and on others down to the
// smallest double. The values are glibc's, recorded on x86-64.
func TestRedisLog(t *testing.T) {
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
		if got := math.Float64bits(redisLog(c.x)); got != c.want {
			t.Errorf("redisLog(%v) = %x, glibc %x", c.x, got, c.want)
		}
		if math.Float64bits(math.Log(c.x)) != c.want {
			differ++
		}
	}
	if differ < 7 {
		t.Errorf("math.Log differs from glibc on %d of the values; the table lost its point", differ)
	}
	if !math.IsNaN(redisLog(math.NaN())) || !math.IsInf(redisLog(0), -1) {
		t.Error("redisLog outside its domain")
	}
}
