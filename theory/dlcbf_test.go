package theory

import (
	"math"
	"testing"
)

func TestDlcbfFP(t *testing.T) {
	// The design point of docs/DLCBF.md: 4·6·2^−14 = 1.4648e-3, less a little for
	// the union bound.
	p := FPDlcbfStatic(4, 6, 14)
	if ub := 24 * math.Exp2(-14); !(p < ub && p > 0.995*ub) {
		t.Errorf("FPDlcbfStatic(4, 6, 14) = %v, want just below %v", p, ub)
	}
	if got := BitsPerKeyDlcbf(8, 14, 2, 6); math.Abs(got-8*16/6.0) > 1e-12 {
		t.Errorf("BitsPerKeyDlcbf = %v", got)
	}
	if !math.IsNaN(FPDlcbfStatic(0, 6, 14)) || !math.IsNaN(FPDlcbf(nil, nil)) {
		t.Error("invalid arguments accepted")
	}
}
