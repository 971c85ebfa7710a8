package stats

import "math"

// normalQuantile returns Φ⁻¹(p), the standard normal quantile, for
// 0 < p < 1, by Wichura's algorithm AS 241 (PPND16), accurate to about
// 1e-16 relative. Tail probabilities are used as given (p or 1 − p,
// whichever is smaller, enters only through ln), so pass the smaller tail
// for full precision. It returns ∓Inf at p = 0, 1 and NaN outside [0, 1].
func normalQuantile(p float64) float64 {
	switch {
	case math.IsNaN(p) || p < 0 || p > 1:
		return math.NaN()
	case p == 0:
		return math.Inf(-1)
	case p == 1:
		return math.Inf(1)
	}
	q := p - 0.5
	if math.Abs(q) <= 0.425 {
		r := 0.180625 - q*q
		return q * (((((((2.5090809287301226727e+3*r+3.3430575583588128105e+4)*r+
			6.7265770927008700853e+4)*r+4.5921953931549871457e+4)*r+
			1.3731693765509461125e+4)*r+1.9715909503065514427e+3)*r+
			1.3314166789178437745e+2)*r + 3.3871328727963666080e0) /
			(((((((5.2264952788528545610e+3*r+2.8729085735721942674e+4)*r+
				3.9307895800092710610e+4)*r+2.1213794301586595867e+4)*r+
				5.3941960214247511077e+3)*r+6.8718700749205790830e+2)*r+
				4.2313330701600911252e+1)*r + 1)
	}
	r := p
	if q > 0 {
		r = 1 - p
	}
	r = math.Sqrt(-math.Log(r))
	var z float64
	if r <= 5 {
		r -= 1.6
		z = (((((((7.74545014278341407640e-4*r+2.27238449892691845833e-2)*r+
			2.41780725177450611770e-1)*r+1.27045825245236838258e0)*r+
			3.64784832476320460504e0)*r+5.76949722146069140550e0)*r+
			4.63033784615654529590e0)*r + 1.42343711074968357734e0) /
			(((((((1.05075007164441684324e-9*r+5.47593808499534494600e-4)*r+
				1.51986665636164571966e-2)*r+1.48103976427480074590e-1)*r+
				6.89767334985100004550e-1)*r+1.67638483018380384940e0)*r+
				2.05319162663775882187e0)*r + 1)
	} else {
		r -= 5
		z = (((((((2.01033439929228813265e-7*r+2.71155556874348757815e-5)*r+
			1.24266094738807843860e-3)*r+2.65321895265761230930e-2)*r+
			2.96560571828504891230e-1)*r+1.78482653991729133580e0)*r+
			5.46378491116411436990e0)*r + 6.65790464350110377720e0) /
			(((((((2.04426310338993978564e-15*r+1.42151175831644588870e-7)*r+
				1.84631831751005468180e-5)*r+7.86869131145613259100e-4)*r+
				1.48753612908506148525e-2)*r+1.36929880922735805310e-1)*r+
				5.99832206555887937690e-1)*r + 1)
	}
	if q < 0 {
		return -z
	}
	return z
}

// maxIter bounds the iterations of the continued fractions and series
// below for shape parameter a: they need O(√a) terms.
func maxIter(a float64) int { return 200 + int(30*math.Sqrt(a)) }

// betaCF evaluates the continued fraction of the incomplete beta function
// by the modified Lentz method (Numerical Recipes §6.4); NaN if it does not
// converge. It converges quickly for x < (a+1)/(a+b+2).
func betaCF(a, b, x float64) float64 {
	const tiny = 1e-300
	qab, qap, qam := a+b, a+1, a-1
	c, d := 1.0, 1-qab*x/qap
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for m := 1; m <= maxIter(math.Max(a, b)); m++ {
		mf := float64(m)
		m2 := 2 * mf
		aa := mf * (b - mf) * x / ((qam + m2) * (a + m2))
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		h *= d * c
		aa = -(a + mf) * (qab + mf) * x / ((a + m2) * (qap + m2))
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < 1e-16 {
			return h
		}
	}
	return math.NaN()
}

// betaInc returns the regularised incomplete beta function I_x(a, b) for
// a, b > 0, 0 ≤ x ≤ 1, given y = 1 − x computed by the caller without
// cancellation (Numerical Recipes §6.4).
func betaInc(a, b, x, y float64) float64 {
	if x <= 0 {
		return 0
	}
	if y <= 0 {
		return 1
	}
	lx, ly := math.Log(x), math.Log(y)
	if x > 0.5 {
		lx = math.Log1p(-y)
	} else {
		ly = math.Log1p(-x)
	}
	lab, _ := math.Lgamma(a + b)
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	front := math.Exp(lab - la - lb + a*lx + b*ly)
	if x < (a+1)/(a+b+2) {
		return front * betaCF(a, b, x) / a
	}
	return 1 - front*betaCF(b, a, y)/b
}

// studentTail returns P(T > t) for t ≥ 0 and T Student-t with df degrees
// of freedom: ½·I_{df/(df+t²)}(df/2, ½).
func studentTail(t, df float64) float64 {
	r2 := t * t / df
	x := 1 / (1 + r2)   // df/(df+t²)
	y := 1 / (1 + 1/r2) // t²/(df+t²)
	return 0.5 * betaInc(df/2, 0.5, x, y)
}

// studentLogPDF returns the log density of Student's t at t.
func studentLogPDF(t, df float64) float64 {
	l1, _ := math.Lgamma((df + 1) / 2)
	l2, _ := math.Lgamma(df / 2)
	return l1 - l2 - 0.5*math.Log(df*math.Pi) - (df+1)/2*math.Log1p(t*t/df)
}

// cornishFisher returns the Cornish–Fisher expansion of the Student-t
// quantile from the normal quantile z, to order df⁻⁴ (Abramowitz & Stegun
// 26.7.5).
func cornishFisher(z, df float64) float64 {
	z2 := z * z
	g1 := (z2 + 1) * z / 4
	g2 := ((5*z2+16)*z2 + 3) * z / 96
	g3 := (((3*z2+19)*z2+17)*z2 - 15) * z / 384
	g4 := ((((79*z2+776)*z2+1482)*z2-1920)*z2 - 945) * z / 92160
	return z + (g1+(g2+(g3+g4/df)/df)/df)/df
}

// cornishFisherDF is the df from which StudentTQuantile uses the
// Cornish–Fisher expansion alone: its first omitted term is O(z¹¹/df⁵),
// below 1e-15 relative there for |z| ≤ 10.
const cornishFisherDF = 1e5

// StudentTQuantile returns the p-quantile of Student's t distribution with
// df > 0 degrees of freedom (df may be fractional; df = +Inf gives the
// normal quantile). Closed forms are used for df = 1 and 2; for
// df ≥ 1e5 the Cornish–Fisher expansion to order df⁻⁴; otherwise that
// expansion refined by a safeguarded Newton iteration on the exact tail
// ½·I_{df/(df+t²)}(df/2, ½), so the result is accurate to about 1e-12
// relative. It returns −Inf, 0, +Inf for p = 0, ½, 1 and NaN for p outside
// [0, 1], df ≤ 0 or NaN.
func StudentTQuantile(p, df float64) float64 {
	switch {
	case math.IsNaN(p) || math.IsNaN(df) || p < 0 || p > 1 || df <= 0:
		return math.NaN()
	case p == 0:
		return math.Inf(-1)
	case p == 1:
		return math.Inf(1)
	case p == 0.5:
		return 0
	}
	// Solve P(T > t) = u for t > 0, u the smaller tail.
	u, sign := p, -1.0
	if p > 0.5 {
		u, sign = 1-p, 1
	}
	var t float64
	switch {
	case df == 1:
		t = 1 / math.Tan(math.Pi*u)
	case df == 2:
		t = (1 - 2*u) / math.Sqrt(2*u*(1-u))
	case math.IsInf(df, 1):
		t = -normalQuantile(u)
	case df >= cornishFisherDF:
		t = cornishFisher(-normalQuantile(u), df)
	default:
		t = refineT(cornishFisher(-normalQuantile(u), df), u, df)
	}
	return sign * t
}

// refineT solves ln P(T > t) = ln u for t > 0 by Newton's method from the
// guess t0, keeping a bracket [lo, hi] and bisecting (or doubling, while hi
// is unbounded) whenever a step leaves it.
func refineT(t0, u, df float64) float64 {
	lu := math.Log(u)
	lo, hi := 0.0, math.Inf(1)
	t := t0
	if !(t > 0) || math.IsInf(t, 0) {
		t = 1
	}
	for i := 0; i < 200; i++ {
		tail := studentTail(t, df)
		g := math.Log(tail) - lu // decreasing in t
		if g == 0 || math.IsNaN(g) {
			return t
		}
		if g > 0 {
			lo = t
		} else {
			hi = t
		}
		// d/dt ln tail = −pdf/tail.
		next := t + g*tail/math.Exp(studentLogPDF(t, df))
		if !(next > lo && next < hi) {
			if math.IsInf(hi, 1) {
				next = 2 * t
			} else {
				next = lo + (hi-lo)/2
			}
		}
		if math.Abs(next-t) <= 1e-14*t {
			return next
		}
		t = next
	}
	return t
}

// gammaPrefix returns x^a·e^{−x}/Γ(a) for a, x > 0, as
// a·e^{−δ(a) − bd0(a, x)}/√(2πa) (Loader's Poisson density), which keeps
// full precision for large a where a·ln x − x − ln Γ(a) would cancel.
func gammaPrefix(a, x float64) float64 {
	return a * math.Exp(-stirlerr(a)-bd0(a, x)) / math.Sqrt(2*math.Pi*a)
}

// gammaQ returns the regularised upper incomplete gamma function Q(a, x)
// for a > 0, x ≥ 0: by the series for P when x < a+1 (Q = 1 − P), else by
// the continued fraction for Q (Numerical Recipes §6.2). NaN if the
// iteration does not converge.
func gammaQ(a, x float64) float64 {
	if x == 0 {
		return 1
	}
	if math.IsInf(x, 1) {
		return 0
	}
	if x < a+1 {
		ap, del := a, 1/a
		sum := del
		for i := 0; i < maxIter(a); i++ {
			ap++
			del *= x / ap
			sum += del
			if math.Abs(del) < math.Abs(sum)*1e-17 {
				return 1 - sum*gammaPrefix(a, x)
			}
		}
		return math.NaN()
	}
	const tiny = 1e-300
	b := x + 1 - a
	c, d := 1/tiny, 1/b
	h := d
	for i := 1; i <= maxIter(a); i++ {
		an := -float64(i) * (float64(i) - a)
		b += 2
		d = an*d + b
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = b + an/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < 1e-16 {
			return h * gammaPrefix(a, x)
		}
	}
	return math.NaN()
}

// ChiSquareUpper returns the upper-tail p-value P(χ²_df ≥ stat) of the
// chi-square distribution with df degrees of freedom: the regularised
// incomplete gamma function Q(df/2, stat/2), evaluated by series or
// continued fraction (Numerical Recipes §6.2) with a cancellation-free
// prefactor, accurate to about 1e-13 relative for df up to 1e8. It returns 1
// for stat = 0, 0 for stat = +Inf, and NaN for df ≤ 0, stat < 0 or NaN.
func ChiSquareUpper(stat float64, df int) float64 {
	if df <= 0 || math.IsNaN(stat) || stat < 0 {
		return math.NaN()
	}
	return gammaQ(float64(df)/2, stat/2)
}
