package tdigest

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// TestErrors: bad compressions and values are refused with their errors
// and change nothing.
func TestErrors(t *testing.T) {
	for _, c := range []int64{0, -1, MaxCompression + 1} {
		if _, err := New(c); !errors.Is(err, ErrCompression) {
			t.Errorf("New(%d): %v", c, err)
		}
	}
	d, _ := New(100)
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if err := d.Add(v); !errors.Is(err, ErrValue) {
			t.Errorf("Add(%v): %v", v, err)
		}
	}
	if err := d.AddWeighted(1, 0); err == nil {
		t.Error("AddWeighted with weight 0 accepted")
	}
	if d.Size() != 0 || !math.IsNaN(d.Min()) || !math.IsNaN(d.Quantile(0.5)) || d.Rank(1) != -2 || !math.IsNaN(d.ByRank(0)) {
		t.Error("a refused value changed the digest")
	}
	d.AddWeighted(1, math.MaxInt64)
	if err := d.AddWeighted(2, 1); !errors.Is(err, ErrOverflow) || d.Size() != math.MaxInt64 {
		t.Errorf("overflowing weight: %v, size %d", err, d.Size())
	}
}

// TestAccuracy: on 10^5 uniform values the quantiles are within 0.5% of
// the exact ones, CDF inverts Quantile to 0.5%, and the ranks agree with
// the CDF (a sanity check; exactness is TestDifferential's).
func TestAccuracy(t *testing.T) {
	d, _ := New(100)
	r := rand.New(rand.NewPCG(1, 2))
	const n = 100000
	for range n {
		d.Add(r.Float64())
	}
	for _, q := range []float64{0.001, 0.01, 0.1, 0.5, 0.9, 0.99, 0.999} {
		if v := d.Quantile(q); math.Abs(v-q) > 0.005 {
			t.Errorf("Quantile(%v) = %v", q, v)
		}
		if c := d.CDF(q); math.Abs(c-q) > 0.005 {
			t.Errorf("CDF(%v) = %v", q, c)
		}
		if rk := d.Rank(q); math.Abs(float64(rk)-q*n) > 0.005*n {
			t.Errorf("Rank(%v) = %v", q, rk)
		}
	}
	if d.Min() < 0 || d.Max() >= 1 || d.ByRank(0) != d.Min() || d.ByRevRank(0) != d.Max() || !math.IsInf(d.ByRank(n), 1) {
		t.Error("min/max/rank bounds")
	}
	if m := d.TrimmedMean(0.1, 0.9); math.Abs(m-0.5) > 0.005 {
		t.Errorf("TrimmedMean = %v", m)
	}
}

// TestAddAllocs: Add allocates nothing once the centroid arrays have grown
// (the merge every 6·compression values calls the logarithm, whose few
// temporaries average to less than one per Add).
func TestAddAllocs(t *testing.T) {
	d, _ := New(100)
	for i := range 2000 {
		d.Add(float64(i))
	}
	x := 0.0
	if n := testing.AllocsPerRun(5000, func() { x += 1.5; d.Add(x) }); n != 0 {
		t.Errorf("Add allocates %v times", n)
	}
	// AllocsPerRun rounds the mean down: count every allocation of
	// 20,000 adds (dozens of merges, each calling the log) at once.
	merges := d.TotalCompressions()
	if n := testing.AllocsPerRun(3, func() {
		for range 20000 {
			x += 1.5
			d.Add(x)
		}
	}); n != 0 {
		t.Errorf("20,000 adds with their merges allocate %v times", n)
	}
	if d.TotalCompressions() == merges {
		t.Fatal("no merge happened: the test lost its point")
	}
}

// TestEncodingRoundTrip: a digest encoded with values still buffered and
// decoded answers every query as the original does, and keeps doing so as
// both take the same further values; the encoding is canonical.
func TestEncodingRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	d, _ := New(50)
	for range 1234 {
		d.Add(r.NormFloat64())
	}
	if d.UnmergedNodes() == 0 {
		t.Fatal("nothing buffered: the test lost its point")
	}
	b, _ := d.MarshalBinary()
	var e Digest
	if err := e.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	b2, _ := e.MarshalBinary()
	if !bytes.Equal(b, b2) {
		t.Fatal("re-encoding differs")
	}
	c := d.Clone()
	for round := range 3 {
		for _, q := range []float64{0, 0.01, 0.5, 0.99, 1} {
			for _, x := range []*Digest{&e, c} {
				if a, b := d.Quantile(q), x.Quantile(q); math.Float64bits(a) != math.Float64bits(b) {
					t.Fatalf("round %d Quantile(%v): %v vs %v", round, q, a, b)
				}
				if a, b := d.CDF(q), x.CDF(q); math.Float64bits(a) != math.Float64bits(b) {
					t.Fatalf("round %d CDF(%v): %v vs %v", round, q, a, b)
				}
			}
		}
		for range 777 {
			v := r.ExpFloat64()
			d.Add(v)
			e.Add(v)
			c.Add(v)
		}
	}
	if d.TotalCompressions() != e.TotalCompressions() || d.Size() != e.Size() {
		t.Error("counters differ")
	}
}

// FuzzUnmarshal: no input makes UnmarshalBinary panic or allocate beyond
// its length; whatever it accepts re-encodes to the same bytes and answers
// every query and further Adds without panicking.
func FuzzUnmarshal(f *testing.F) {
	d, _ := New(5)
	b, _ := d.MarshalBinary()
	f.Add(b)
	for i := range 70 {
		d.Add(float64(i % 7))
	}
	b, _ = d.MarshalBinary()
	f.Add(b)
	f.Add([]byte("TDG\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var e Digest
		if err := e.UnmarshalBinary(data); err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v does not wrap ErrFormat", err)
			}
			return
		}
		if b, _ := e.MarshalBinary(); !bytes.Equal(b, data) {
			t.Fatal("accepted input does not re-encode to itself")
		}
		c := e.Clone()
		e.Quantile(0.5)
		e.CDF(1)
		e.Rank(0)
		e.RevRank(0)
		e.ByRank(1)
		e.ByRevRank(1)
		e.TrimmedMean(0.1, 0.9)
		qs := []float64{0, 0.5, 1}
		e.Quantiles(qs, make([]float64, 3))
		for i := range 20 {
			c.Add(float64(i))
		}
		c.Merge(&e)
	})
}
