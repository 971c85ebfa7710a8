package theory

import "math"

// The d-left counting Bloom filter (002 §III, package dlcbf), on top of the
// d-left load distribution of dleft.go (LoadsDleft).

// FPDlcbf returns the false-positive rate of a d-left counting Bloom filter
// whose subtables have the load distributions q (from LoadsDleft) and whose
// cells hold remainders of bits(j) bits in a bucket of load j: a cell
// matches an absent key with probability 2^−bits, so the rate is
//
//	1 − Π_i Σ_j Q[i][j]·(1 − 2^−bits(j))^j
//
// (002 §II-A equation (1) without its union bound). For the static dlCBF
// bits(j) = r for every j, and the rate is close to d·L·2^−r at average
// load L (docs/DLCBF.md's 4·6·2^−14 = 1.46e-3). It returns NaN for empty q.
func FPDlcbf(q [][]float64, bits func(load int) float64) float64 {
	if len(q) == 0 || bits == nil {
		return math.NaN()
	}
	keep := 1.0
	for _, row := range q {
		s := 0.0
		for j, x := range row {
			s += x * math.Exp(float64(j)*math.Log1p(-math.Exp2(-bits(j))))
		}
		keep *= s
	}
	return 1 - keep
}

// FPDlcbfStatic is FPDlcbf for the static dlCBF: d subtables at average
// load avgLoad, remainders of r bits.
// It returns NaN where LoadsDleft returns an error.
func FPDlcbfStatic(d int, avgLoad float64, r int) float64 {
	q, err := LoadsDleft(d, avgLoad)
	if err != nil {
		return math.NaN()
	}
	return FPDlcbf(q, func(int) float64 { return float64(r) })
}

// BitsPerKeyDlcbf returns the bits per key of a static dlCBF with h cells
// of r remainder bits and c counter bits per bucket at average load
// avgLoad keys per bucket: h·(r + c)/avgLoad.
func BitsPerKeyDlcbf(h, r, c int, avgLoad float64) float64 {
	return float64(h*(r+c)) / avgLoad
}
