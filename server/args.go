package server

import (
	"bytes"
	"math"
	"strconv"
	"strings"
)

// Argument parsing as Redis does it.

// parseInt reads a decimal int64 as Redis's string2ll: an optional minus
// sign, no plus sign, no spaces, no leading zeros.
func parseInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	if len(b) == 1 && b[0] == '0' {
		return 0, true
	}
	neg := b[0] == '-'
	p := b
	if neg {
		p = p[1:]
	}
	if len(p) == 0 || p[0] < '1' || p[0] > '9' {
		return 0, false
	}
	var v uint64
	for _, ch := range p {
		if ch < '0' || ch > '9' {
			return 0, false
		}
		d := uint64(ch - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return -int64(v), true
	}
	if v > math.MaxInt64 {
		return 0, false
	}
	return int64(v), true
}

// parseFloat reads a double as Redis reads one (getDoubleFromObject,
// RedisModule_StringToDouble): C's strtod over the whole argument, with
// no leading space, no NaN, and no overflow or underflow to zero. "inf"
// reads, as does C's hexadecimal form ("0x0.04", no exponent needed);
// Go's digit separators ("0.0_1") do not.
func parseFloat(b []byte) (float64, bool) {
	if len(b) == 0 || len(b) > 256 || isSpace(b[0]) || bytes.IndexByte(b, '_') >= 0 {
		return 0, false
	}
	s := string(b)
	t := strings.TrimLeft(s, "+-")
	if len(t) > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X') && !strings.ContainsAny(t, "pP") {
		s += "p0" // strtod's hexadecimal form needs no exponent; Go's does
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || f == 0 && underflows(t) {
		return 0, false
	}
	return f, true
}

// parseDouble is parseFloat for a command's argument, but a log record
// also reads as Go's syntax, as this server read doubles before
// parseFloat followed strtod: logs of then hold the client's text
// ("0.0_1", Go's 0.01) of keys that were acknowledged.
func (c *client) parseDouble(b []byte) (float64, bool) {
	f, ok := parseFloat(b)
	if !ok && c.replaying && len(b) <= 256 {
		var err error
		f, err = strconv.ParseFloat(string(b), 64)
		ok = err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
	}
	return f, ok
}

// underflows reports whether the unsigned number t that ParseFloat read
// as zero has a non-zero digit before its exponent (strtod's ERANGE).
func underflows(t string) bool {
	hex := len(t) > 1 && (t[1] == 'x' || t[1] == 'X')
	if hex {
		t = t[2:]
	}
	for i := 0; i < len(t); i++ {
		switch ch := t[i]; {
		case !hex && (ch == 'e' || ch == 'E'), hex && (ch == 'p' || ch == 'P'):
			return false
		case ch >= '1' && ch <= '9', hex && (ch >= 'a' && ch <= 'f' || ch >= 'A' && ch <= 'F'):
			return true
		}
	}
	return false
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'
}

// eqFold reports whether b equals the ASCII name s, ignoring case.
func eqFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(b); i++ {
		x, y := b[i], s[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// argText is an argument as an error reply quotes it: at most 128 bytes
// (Redis's "%.128s"), CR and LF as spaces. An option longer than that is
// no option any command takes, and the reply stays one short line
// whatever the client sent.
func argText(b []byte) string { return oneLine(string(b[:min(len(b), 128)])) }

const errNotInt = "ERR value is not an integer or out of range"
const errSyntax = "ERR syntax error"

// argIndex returns the index of the first argument from `from` on that
// equals name (case-insensitive), or -1. (RedisBloom searches from the
// command name on, so that a key named "nonscaling" counts as the
// option; here only the options do.)
func argIndex(args [][]byte, from int, name string) int {
	for i := from; i < len(args); i++ {
		if eqFold(args[i], name) {
			return i
		}
	}
	return -1
}
