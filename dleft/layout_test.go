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

// TestContains128: the 128-bit lookup (contains128) answers exactly as the
// general one (containsGroup) for every encoding of 128-bit buckets,
// minimum fingerprint length and load, on present keys and on many absent
// ones (short fingerprints at high loads make matches frequent, so both
// answers occur often).
func TestContains128(t *testing.T) {
	total := 0
	for _, c := range []Config{
		{Semisort: SemisortNone}, {Semisort: SemisortNone, MinFingerprintBits: 4},
		{Semisort: Semisort1}, {Semisort: Semisort1, MinFingerprintBits: 4},
		{Semisort: Semisort2}, {Semisort: Semisort2, MinFingerprintBits: 4}, {D: 1, Semisort: Semisort2},
	} {
		c.BucketBits, c.Buckets = 128, 64
		for _, n := range []int{10, 200, 600, 1500, 2500, 4000} {
			f := must(New(c))
			if f.f128 == nil {
				t.Fatalf("%+v: no 128-bit lookup", c)
			}
			for j := range n {
				f.AddHash(key(5, j))
			}
			fps := 0 // absent keys found: false positives
			for j := range 20000 {
				d, present := key(6, j), j&1 == 1 && j < 2*n // absent keys, and present ones
				if present {
					d = key(5, j/2)
				}
				var cand [8]uint64
				f.bucketsOf(d, &cand)
				h := mix(d, fpIndex)
				got, want := f.contains128(&cand, h), f.containsGroup(&cand, h)
				if got != want {
					t.Fatalf("%+v, n = %d: query %d: contains128 %v, containsGroup %v", c, n, j, got, want)
				}
				if present && !f.lookup(d, &cand, h) { // the stash included
					t.Fatalf("%+v, n = %d: key %d added but not found", c, n, j/2)
				}
				if got && !present {
					fps++
				}
			}
			total += fps
		}
	}
	if total < 1000 {
		t.Errorf("only %d false positives in all: the test compares few matches", total)
	}
}
