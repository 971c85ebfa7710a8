package dleft

import (
	"slices"
	"testing"
)

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

// refEncode is encodeGroup as first written: each bucket's fingerprints
// sorted by prefix into a new slice (stable, one pass per prefix value),
// then written in that order.
func refEncode(f *Filter, ws []uint64, A int) {
	clear(ws)
	off := uint(f.cfg.Group) * f.cbits
	for k := 0; k < f.cfg.Group; k++ {
		fps := f.scratch[k]
		a := len(fps)
		p := uint(0)
		var cnt [4]uint8
		if a > 0 {
			p = uint(f.modeOf(a))
			var sorted []uint64
			for v := uint64(0); v < 1<<p; v++ {
				for _, fp := range fps {
					if p == 0 || fp>>(64-p) == v {
						sorted = append(sorted, fp)
					}
				}
				cnt[v] = uint8(len(sorted) - int(sum(cnt[:v])))
			}
			w := uint(f.fb[a][A]) - p
			for _, fp := range sorted {
				putBits(ws, off, w, (fp<<p)>>(64-w))
				off += w
			}
		}
		ws[0] |= uint64(f.index[stateKey{uint8(a), cnt}]) << (uint(k) * f.cbits)
	}
}

func sum(xs []uint8) (s uint8) {
	for _, x := range xs {
		s += x
	}
	return s
}

// TestEncodeGroup: encodeGroup writes the same words as refEncode for
// random fingerprints at every load of every encoding, grouped or not.
func TestEncodeGroup(t *testing.T) {
	x := uint64(1)
	next := func() uint64 { x = x*6364136223846793005 + 1442695040888963407; return x ^ x>>29 }
	for _, c := range []Config{
		{BucketBits: 64, Semisort: SemisortNone}, {BucketBits: 64, Semisort: Semisort1},
		{BucketBits: 128, Semisort: SemisortNone, MinFingerprintBits: 4}, {BucketBits: 128, Semisort: Semisort1},
		{BucketBits: 128, Semisort: Semisort2}, {BucketBits: 64, Semisort: Semisort1, Group: 4},
		{BucketBits: 128, Semisort: Semisort2, Group: 4}, {BucketBits: 64, Semisort: SemisortNone, Group: 8, MinFingerprintBits: 4},
	} {
		c.Buckets = 8
		f := must(New(c))
		G := f.cfg.Group
		got, want := make([]uint64, f.wpg), make([]uint64, f.wpg)
		tested := 0
		for range 3000 {
			// Random loads whose group total the table allows.
			A := 0
			for k := range G {
				a := int(next() % uint64(f.maxLoad+1))
				f.scratch[k] = f.scratch[k][:0]
				for range a {
					f.scratch[k] = append(f.scratch[k], next())
				}
				A += a
			}
			ok := A < len(f.fb[0])
			for k := 0; ok && k < G; k++ {
				a := len(f.scratch[k])
				ok = f.fb[a][A] >= 0 && modeFor(f.cfg.BucketBits, f.cfg.Semisort, a) >= 0
			}
			if !ok {
				continue
			}
			saved := make([][]uint64, G)
			for k := range G {
				saved[k] = append([]uint64(nil), f.scratch[k]...)
			}
			refEncode(f, want, A)
			for k := range G {
				f.scratch[k] = append(f.scratch[k][:0], saved[k]...)
			}
			f.encodeGroup(got, A)
			if !slices.Equal(got, want) {
				t.Fatalf("%+v: loads %v: encodeGroup %x, reference %x", c, saved, got, want)
			}
			tested++
		}
		if tested < 100 {
			t.Errorf("%+v: only %d groups encoded", c, tested)
		}
	}
}
