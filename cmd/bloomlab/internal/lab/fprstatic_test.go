package lab

import (
	"testing"

	"github.com/bloomlab/bloomlab/blocked"
	"github.com/bloomlab/bloomlab/bloom"
	"github.com/bloomlab/bloomlab/choices"
	"github.com/bloomlab/bloomlab/cuckoo"
	"github.com/bloomlab/bloomlab/dleft"
	"github.com/bloomlab/bloomlab/fuse"
	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/ribbon"
)

// TestMeasureFPRStatic: measureFPRStatic stores exactly what measureFPR
// stores, for every structure it calls directly and one it does not, with
// queries and without.
func TestMeasureFPRStatic(t *testing.T) {
	bl, _ := bloom.New(4000, 3, bloom.WithScheme(hashing.Independent))
	dl, _ := dleft.New(dleft.Config{Buckets: 64})
	ck, _ := cuckoo.New(cuckoo.Config{Buckets: 256, FingerprintBits: 6})
	bk, _ := blocked.New(4096, 3)
	ch, _ := choices.New(choices.Config{M: 4000, K: 3})
	const n = 700
	fb, _ := fuse.NewBuilder(fuse.Config{})
	rb, _ := ribbon.NewBuilder(ribbon.Config{ResultBits: 6})
	for j := range n {
		if err := fb.AddHash64(keyDigest(7, j).H1); err != nil {
			t.Fatal(err)
		}
		if err := rb.AddHash64(keyDigest(7, j).H1); err != nil {
			t.Fatal(err)
		}
	}
	fu, err := fb.Finish()
	if err != nil {
		t.Fatal(err)
	}
	rf, err := rb.Finish()
	if err != nil {
		t.Fatal(err)
	}
	for j := range n {
		d := keyDigest(7, j)
		bl.AddHash(d)
		if err := dl.AddHash(d); err != nil {
			t.Fatal(err)
		}
		if err := ck.AddHash(d); err != nil {
			t.Fatal(err)
		}
		bk.AddHash(d)
		ch.AddHash(d)
	}
	for _, f := range []fprFilter{bl, dl, ck, bk, ch, fuseLab{fu}, ribbonLab{rf}} {
		for _, q := range []int{0, 1, 5000} {
			var got, want [2]float64
			measureFPR(f, 7, n, q, want[:])
			measureFPRStatic(f, 7, n, q, got[:])
			if got != want {
				t.Errorf("%T, %d queries: measureFPRStatic %v, measureFPR %v", f, q, got, want)
			}
			if q == 5000 && !(want[0] > 0) {
				t.Errorf("%T: no false positive in %d queries: the comparison is weak", f, q)
			}
		}
	}
}
