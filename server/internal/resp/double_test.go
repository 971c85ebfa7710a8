package resp

import (
	"bufio"
	"compress/gzip"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestAppendDoubleRedis8 compares the shortest form with Redis 8's own
// d2string (fpconv_dtoa) on 1,630 doubles: chosen ones (0.01, 1e-7,
// 6.25e-5, 2^62, 1e21, the extremes) and random bit patterns and
// decimals; testdata/redis8-doubles.txt.gz was written by Redis's C code.
// Grisu2 (Redis) may in rare cases give a longer text than the shortest
// (Go); such a line must still read back as the same double.
func TestAppendDoubleRedis8(t *testing.T) {
	f, err := os.Open("testdata/redis8-doubles.txt.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(zr)
	n, diff := 0, 0
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		hex, want, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("bad line %q", line)
		}
		bits, err := strconv.ParseUint(hex, 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		v := math.Float64frombits(bits)
		got := string(AppendDouble(nil, v, true))
		n++
		if got != want {
			diff++
			back, err := strconv.ParseFloat(got, 64)
			if err != nil || back != v || len(got) > len(want) {
				t.Errorf("%s (%v): got %q, Redis 8 %q", hex, v, got, want)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d doubles, %d differ from Redis 8 text (and read back)", n, diff)
	if n < 1600 || diff > n/100 {
		t.Fatalf("%d doubles, %d differ from Redis 8's text", n, diff)
	}
}

func TestAppendDoubleRedis7(t *testing.T) {
	for _, c := range []struct {
		f    float64
		want string
	}{{0.01, "0.01"}, {0.1, "0.10000000000000001"}, {1, "1"}, {1e-7, "9.9999999999999995e-08"},
		{math.Inf(1), "inf"}, {math.Inf(-1), "-inf"}, {math.NaN(), "nan"}} {
		if got := string(AppendDouble(nil, c.f, false)); got != c.want {
			t.Errorf("%v: got %q, want %q", c.f, got, c.want)
		}
		if !math.IsInf(c.f, 0) && !math.IsNaN(c.f) {
			continue
		}
		if got := string(AppendDouble(nil, c.f, true)); got != c.want {
			t.Errorf("%v shortest: got %q, want %q", c.f, got, c.want)
		}
	}
}

// TestWriterDouble: Double writes Redis 8's text with Shortest, Redis
// 7.0's without, as a bulk string under RESP2 and a double under RESP3.
func TestWriterDouble(t *testing.T) {
	for _, c := range []struct {
		proto    int
		shortest bool
		want     string
	}{
		{2, true, "$4\r\n0.01\r\n$4\r\n1e-7\r\n$3\r\n100\r\n"},
		{3, true, ",0.01\r\n,1e-7\r\n,100\r\n"},
		{2, false, "$4\r\n0.01\r\n$22\r\n9.9999999999999995e-08\r\n$3\r\n100\r\n"},
		{3, false, ",0.01\r\n,9.9999999999999995e-08\r\n,100\r\n"},
	} {
		var b strings.Builder
		w := NewWriter(&b)
		w.Proto, w.Shortest = c.proto, c.shortest
		w.Double(0.01)
		w.Double(1e-7)
		w.Double(100)
		w.Flush()
		if b.String() != c.want {
			t.Errorf("RESP%d shortest=%v: got %q, want %q", c.proto, c.shortest, b.String(), c.want)
		}
	}
}
