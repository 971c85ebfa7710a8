package sizing

import (
	"errors"
	"testing"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/theory"
)

// Every size Standard returns is one the scheme accepts (a rate plan with
// PrimePartition once returned a multiple of k that was not k·prime, so
// the plan described another filter than New built); rate plans meet the
// rate, budgets are never exceeded, rounding is announced.
func TestStandard(t *testing.T) {
	for _, s := range hashing.Schemes() {
		for _, tg := range []kind.Target{
			{N: 1000, FPR: 0.01}, {N: 12345, FPR: 1e-5}, {N: 1000, BitsPerKey: 9.3}, {N: 7, BitsPerKey: 1},
			{M: 1001, K: 4}, {M: 1, K: 1}, {N: 5, M: 64, K: 3},
		} {
			m, k, notices, err := Standard("x", s, tg)
			if err != nil {
				t.Fatalf("%v %+v: %v", s, tg, err)
			}
			if hashing.PartitionSize(s, m, k) != m {
				t.Errorf("%v %+v: m = %d is not a valid size for k = %d", s, tg, m, k)
			}
			switch {
			case tg.FPR > 0 && FP(s, m, tg.N, k) > tg.FPR*(1+1e-9):
				t.Errorf("%v %+v: rate %g above the target", s, tg, FP(s, m, tg.N, k))
			case tg.BitsPerKey > 0 && float64(m) > tg.BitsPerKey*float64(tg.N) && m > uint64(k) && s != hashing.PrimePartition:
				t.Errorf("%v %+v: m = %d over the budget", s, tg, m)
			case tg.M > 0 && m != tg.M && len(notices) == 0:
				t.Errorf("%v %+v: m rounded to %d silently", s, tg, m)
			}
		}
	}
}

func TestCheck(t *testing.T) {
	for _, tg := range []kind.Target{
		{N: 10}, {N: 10, FPR: 0.1, BitsPerKey: 3}, {N: 10, FPR: 1}, {N: 10, FPR: -0.1}, {N: 10, BitsPerKey: -1},
		{M: 10}, {K: 3}, {M: 1 << 49, K: 3}, {M: 10, K: 65},
	} {
		if err := Check("x", tg); !errors.Is(err, kind.ErrParam) || errors.Is(err, kind.ErrNeedN) {
			t.Errorf("%+v: %v", tg, err)
		}
	}
	if err := Check("x", kind.Target{FPR: 0.01}); !errors.Is(err, kind.ErrNeedN) {
		t.Errorf("no n: %v", err)
	}
	if _, _, _, err := Standard("x", hashing.Enhanced, kind.Target{N: 1e15, FPR: 0.01}); !errors.Is(err, theory.ErrTooLarge) {
		t.Errorf("huge n: %v", err)
	}
}
