package theory

// The asymptotics of d-left hashing and of the d-left Bloom filter of paper
// 002 §II (Bonomi, Mitzenmacher, Panigrahy, Singh, Varghese, "Bloom Filters
// via d-Left Hashing and Dynamic Bit Reassignment").

import (
	"fmt"
	"math"
)

// MaxLoadDleft is the highest load whose fraction LoadsDleft tracks. Tails
// of d-left hashing fall doubly exponentially, so for average loads up to
// MaxLoadDleft/2 the mass beyond it is far below 1e-300.
const MaxLoadDleft = 64

// LoadsDleft returns the fluid limit (n → ∞) of the load distribution of
// d-left hashing with ties broken towards the left (Vöcking's "always go
// left"; 002 §II-A, [4], [11]): n balls are placed one at a time, each in
// the least loaded of d buckets, one chosen uniformly from each of d equal
// subtables, the leftmost on a tie; the table has n/load buckets in all.
//
// q[i][a] is the fraction of subtable i's buckets (i = 0 … d−1, left to
// right) holding exactly a balls, for a = 0 … MaxLoadDleft. Averaging over
// i gives the whole table's distribution (002 Tables I and II).
//
// With s_i(j) the fraction of subtable i's buckets holding at least j
// balls and τ = balls / buckets the average load, a ball lands in subtable
// i at height j when the buckets it picks in subtables before i hold ≥ j,
// its bucket in i holds j−1 and those after i hold ≥ j−1:
//
//	ds_i(j)/dτ = d · Π_{k<i} s_k(j) · (s_i(j−1) − s_i(j)) · Π_{k>i} s_k(j−1),
//
// s_i(0) = 1, s_i(j) = 0 at τ = 0; integrated with the classical
// Runge-Kutta method from τ = 0 to load in steps of at most 1/2048, which
// gives the tails of Tables I and II to all printed digits.
//
// For d = 1 the limit is the Poisson distribution with mean load, whose
// mass beyond MaxLoadDleft (dropped) is below 1e-35 for load ≤ 8 but
// 2e-7 at load 32. The cost depends on d and load only (about
// 2048·load·d²·(load + 24) operations), never on the number of keys.
//
// d must be in [1, 16] and load in [0, MaxLoadDleft/2]; otherwise it
// returns an error wrapping ErrInvalid.
func LoadsDleft(d int, load float64) ([][]float64, error) {
	if !nonNeg(load) || load > MaxLoadDleft/2 {
		return nil, fmt.Errorf("theory: load = %v out of range [0, %d]: %w", load, MaxLoadDleft/2, ErrInvalid)
	}
	path, err := loadsDleft(d, load, 1, int(math.Ceil(load*2048)))
	if err != nil {
		return nil, err
	}
	return path[0], nil
}

// LoadsDleftGrid returns LoadsDleft(d, i/64) for i = 1 … count (count ≤
// 64·MaxLoadDleft/2), from one integration instead of count: the fluid
// limit is autonomous and the ODE of level j involves only levels ≤ j, so
// each snapshot equals the separate call (both step by exactly 1/2048),
// up to levels whose mass no float64 holds. Planners that search over the
// load use it.
func LoadsDleftGrid(d, count int) ([][][]float64, error) {
	if count < 1 || count > 64*MaxLoadDleft/2 {
		return nil, fmt.Errorf("theory: count = %d out of range [1, %d]: %w", count, 64*MaxLoadDleft/2, ErrInvalid)
	}
	return loadsDleft(d, float64(count)/64, count, 32*count)
}

// loadsDleft integrates the fluid limit of d-left hashing to the given
// load in steps of load/steps, and returns the load distributions at
// snapshots evenly spaced steps (steps a multiple of snapshots).
func loadsDleft(d int, load float64, snapshots, steps int) ([][][]float64, error) {
	if d < 1 || d > 16 {
		return nil, fmt.Errorf("theory: d = %d out of range [1, 16]: %w", d, ErrInvalid)
	}
	// s[i][j] for j = 0 … J. For d ≥ 2 tails fall doubly exponentially: 24
	// levels above the average load carry no mass a float64 can hold. For
	// d = 1 the loads are Poisson, whose tail falls only exponentially:
	// track every level up to MaxLoadDleft.
	J := min(MaxLoadDleft+1, int(math.Ceil(load))+24)
	if d == 1 {
		J = MaxLoadDleft + 1
	}
	dim := d * (J + 1)
	s := make([]float64, dim)
	for i := 0; i < d; i++ {
		s[i*(J+1)] = 1
	}
	deriv := func(x, out []float64) {
		df := float64(d)
		for i := 0; i < d; i++ {
			out[i*(J+1)] = 0
		}
		for j := 1; j <= J; j++ {
			for i := 0; i < d; i++ {
				p := df * (x[i*(J+1)+j-1] - x[i*(J+1)+j])
				for k := 0; k < i; k++ {
					p *= x[k*(J+1)+j]
				}
				for k := i + 1; k < d; k++ {
					p *= x[k*(J+1)+j-1]
				}
				out[i*(J+1)+j] = p
			}
		}
	}
	snapshot := func() [][]float64 {
		q := make([][]float64, d)
		for i := range q {
			q[i] = make([]float64, MaxLoadDleft+1)
			for a := 0; a < J; a++ {
				q[i][a] = math.Max(0, s[i*(J+1)+a]-s[i*(J+1)+a+1])
			}
		}
		return q
	}
	var out [][][]float64
	if steps == 0 {
		return [][][]float64{snapshot()}, nil
	}
	h := load / float64(steps)
	every := steps / snapshots
	k1, k2, k3, k4, tmp := make([]float64, dim), make([]float64, dim), make([]float64, dim), make([]float64, dim), make([]float64, dim)
	for step := 0; step < steps; step++ {
		deriv(s, k1)
		for x := range tmp {
			tmp[x] = s[x] + h/2*k1[x]
		}
		deriv(tmp, k2)
		for x := range tmp {
			tmp[x] = s[x] + h/2*k2[x]
		}
		deriv(tmp, k3)
		for x := range tmp {
			tmp[x] = s[x] + h*k3[x]
		}
		deriv(tmp, k4)
		for x := range s {
			s[x] += h / 6 * (k1[x] + 2*k2[x] + 2*k3[x] + k4[x])
		}
		if (step+1)%every == 0 {
			out = append(out, snapshot())
		}
	}
	return out, nil
}

// TableLoadsDleft averages LoadsDleft over the subtables: the fraction of
// all buckets with load a (002 Tables I and II).
func TableLoadsDleft(q [][]float64) []float64 {
	if len(q) == 0 {
		return nil
	}
	out := make([]float64, len(q[0]))
	for _, qi := range q {
		for a, x := range qi {
			out[a] += x / float64(len(q))
		}
	}
	return out
}

// FPDleft is formula (1) of 002 §II-A: the false-positive probability of a
// d-left Bloom filter whose subtable i has load distribution q[i] and whose
// fingerprints in a bucket of load a have bits(a) bits,
//
//	F = Σ_i Σ_a q[i][a] · a · 2^{−bits(a)}.
//
// A query reads one bucket per subtable and matches each of the a
// fingerprints there with probability 2^{−bits(a)}; the union bound (which
// ignores two fingerprints being equal) makes F a slight overestimate. A
// load with bits(a) < 0 is one the bucket cannot hold (overflow); it
// contributes a, as if every fingerprint matched, so that a configuration
// that overflows is never reported as better than it is. Buckets of load
// a with q[i][a] = 0 are skipped, so bits need not be defined there.
func FPDleft(q [][]float64, bits func(a int) int) float64 {
	f := 0.0
	for _, qi := range q {
		for a := 1; a < len(qi); a++ {
			if qi[a] == 0 {
				continue
			}
			f += qi[a] * float64(a) * matchProb(bits(a))
		}
	}
	return f
}

func matchProb(b int) float64 {
	if b < 0 {
		return 1
	}
	return math.Ldexp(1, -b)
}

// FPDleftGrouped is formula (1) for grouped buckets (002 §II-C): the g
// buckets of a group in the same subtable share their bits, so the length
// of a fingerprint depends on the load a of its bucket and the total load
// A of its group, bits(a, A). In the fluid limit the loads of a fixed
// group's buckets are independent draws from q[i], so
//
//	F = Σ_i Σ_a Σ_A q[i][a] · P_i(A − a) · a · 2^{−bits(a, A)},
//
// P_i being the (g−1)-fold convolution of q[i]. bits < 0 marks overflow as
// in FPDleft. g = 1 is FPDleft. g must be in [1, 64], otherwise NaN.
func FPDleftGrouped(q [][]float64, g int, bits func(a, A int) int) float64 {
	if g < 1 || g > 64 {
		return math.NaN()
	}
	f := 0.0
	for _, qi := range q {
		rest := []float64{1} // distribution of the other g−1 buckets' total
		for r := 1; r < g; r++ {
			rest = convolve(rest, qi)
		}
		for a := 1; a < len(qi); a++ {
			if qi[a] < 1e-300 {
				continue
			}
			for o, p := range rest {
				if p < 1e-300 {
					continue
				}
				f += qi[a] * p * float64(a) * matchProb(bits(a, a+o))
			}
		}
	}
	return f
}

func convolve(x, y []float64) []float64 {
	out := make([]float64, len(x)+len(y)-1)
	for i, a := range x {
		if a == 0 {
			continue
		}
		for j, b := range y {
			out[i+j] += a * b
		}
	}
	return out
}
