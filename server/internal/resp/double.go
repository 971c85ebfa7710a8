package resp

import (
	"math"
	"strconv"
)

// AppendDouble appends f as Redis formats a double reply: "inf", "-inf",
// "nan"; otherwise, with shortest false, C's "%.17g" (Redis 7.0), and with
// shortest true Redis 8's d2string: an integral value within ±2^62 as an
// integer, "0" and "-0", else the shortest digits that read back as f
// laid out as Redis's fpconv_dtoa lays them out (plain up to 7 zeros
// before the last digit of an integer or after the point of a fraction,
// else d.ddde±X with no padding of the exponent).
func AppendDouble(dst []byte, f float64, shortest bool) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	case math.IsNaN(f):
		return append(dst, "nan"...)
	case !shortest:
		return strconv.AppendFloat(dst, f, 'g', 17, 64)
	case f == 0:
		if math.Signbit(f) {
			return append(dst, "-0"...)
		}
		return append(dst, '0')
	case f >= -(1<<62) && f <= 1<<62 && f == math.Trunc(f):
		return strconv.AppendInt(dst, int64(f), 10)
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	// The shortest digits and the exponent of the first: "d.ddde±X".
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, 64)
	var digits [24]byte
	nd := 0
	i := 0
	for ; e[i] != 'e'; i++ {
		if e[i] != '.' {
			digits[nd] = e[i]
			nd++
		}
	}
	exp10, _ := strconv.Atoi(string(e[i+1:]))
	k := exp10 - (nd - 1) // the value is digits × 10^k
	absExp := exp10
	if absExp < 0 {
		absExp = -absExp
	}
	d := digits[:nd]
	switch {
	case k >= 0 && absExp < nd+7: // an integer, written out
		dst = append(dst, d...)
		for range k {
			dst = append(dst, '0')
		}
		return dst
	case k < 0 && (k > -7 || absExp < 4): // a decimal fraction
		if off := nd + k; off <= 0 {
			dst = append(dst, '0', '.')
			for range -off {
				dst = append(dst, '0')
			}
			return append(dst, d...)
		} else {
			dst = append(dst, d[:off]...)
			dst = append(dst, '.')
			return append(dst, d[off:]...)
		}
	}
	dst = append(dst, d[0])
	if nd > 1 {
		dst = append(dst, '.')
		dst = append(dst, d[1:]...)
	}
	dst = append(dst, 'e')
	if exp10 < 0 {
		dst = append(dst, '-')
	} else {
		dst = append(dst, '+')
	}
	return strconv.AppendInt(dst, int64(absExp), 10)
}
