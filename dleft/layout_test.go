package dleft

import "testing"

// TestStateOf: stateOf gives the counter value of every valid state of
// every encoding, as the index of buildStates does.
func TestStateOf(t *testing.T) {
	for _, c := range []Config{
		{BucketBits: 64, Semisort: SemisortNone}, {BucketBits: 64, Semisort: Semisort1},
		{BucketBits: 128, Semisort: SemisortNone}, {BucketBits: 128, Semisort: Semisort1},
		{BucketBits: 128, Semisort: Semisort2}, {BucketBits: 128, Semisort: Semisort2, Group: 4, MinFingerprintBits: 16},
	} {
		c.Buckets = 8
		f := must(New(c))
		all, _, _ := buildStates(f.cfg.BucketBits, f.cfg.Semisort)
		n := 0
		for v, s := range all {
			if !s.valid {
				continue
			}
			n++
			if got := f.stateOf(int(s.load), uint(s.pre), s.cnt); got != uint16(v) {
				t.Errorf("%+v: load %d counts %v: stateOf = %d, want %d", c, s.load, s.cnt, got, v)
			}
		}
		if n == 0 {
			t.Errorf("%+v: no states", c)
		}
	}
}
