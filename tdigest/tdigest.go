// Package tdigest is the merging t-digest (Dunning & Ertl, "Computing
// extremely accurate quantiles using t-digests", 2019) exactly as
// RedisBloom 8.6.2 computes it: its deps/t-digest-c (commit 5b89d70) and
// the rank helpers of its src/rm_tdigest.c. A Digest holds at most
// 6·compression+10 centroids; values are buffered unmerged until the
// buffer is full or a query needs them, then sorted (t-digest-c's
// quicksort, central pivot, so equal means keep its order) and merged
// under the q(1−q) size bound with normalizer compression/(2π·n·ln n).
//
// Guarantees: every answer equals RedisBloom's bit for bit, given the same
// sequence of operations (queries merge the buffer, as in RedisBloom, so
// they are part of that sequence). The float arithmetic follows the C
// source's order of operations, products are never fused into an add
// (every x·y+z is written float64(x*y)+z), and ln is the C library's
// (correctly rounded: internal/clog), not math.Log. Add allocates nothing
// but at a merge (the logarithm's few temporaries, once per
// 6·compression values).
//
// A Digest is not safe for concurrent use, reads included: Quantile, CDF,
// TrimmedMean and the ranks merge the buffer first.
package tdigest

import (
	"errors"
	"math"
	"sync"

	"github.com/bloomlab/bloomlab/internal/clog"
)

// MaxCompression bounds the compression New accepts (its capacity is
// 6·compression+10 centroids of 16 bytes).
const MaxCompression = 1 << 32

var (
	// ErrCompression: compression outside [1, MaxCompression].
	ErrCompression = errors.New("tdigest: compression must be a positive integer of at most 2^32")
	// ErrOverflow: the total weight would overflow (t-digest-c's EDOM).
	ErrOverflow = errors.New("tdigest: overflow detected")
	// ErrValue: a value that is NaN or infinite.
	ErrValue = errors.New("tdigest: value must be a finite number")
)

// Digest is a merging t-digest (td_histogram_t).
type Digest struct {
	compression       float64
	min, max          float64
	cap               int
	merged, unmerged  int   // nodes
	mergedW, unmergW  int64 // weights
	totalCompressions int64
	means             []float64
	weights           []int64
}

// Capacity returns the number of centroids a digest of this compression
// holds, 6·compression+10.
func Capacity(compression int64) int { return 6*int(compression) + 10 }

// New returns an empty digest of the given compression (RedisBloom's
// default is 100).
func New(compression int64) (*Digest, error) {
	if compression < 1 || compression > MaxCompression {
		return nil, ErrCompression
	}
	c := Capacity(compression)
	d := &Digest{compression: float64(compression), cap: c}
	d.Reset()
	return d, nil
}

// Reset empties the digest, keeping its compression (td_reset).
func (d *Digest) Reset() {
	d.min = math.MaxFloat64
	d.max = -d.min
	d.merged, d.unmerged = 0, 0
	d.mergedW, d.unmergW = 0, 0
	d.totalCompressions = 0
}

// Compression, Capacity, MergedNodes, UnmergedNodes, MergedWeight,
// UnmergedWeight and TotalCompressions are TDIGEST.INFO's fields.
func (d *Digest) Compression() int64       { return int64(d.compression) }
func (d *Digest) Capacity() int            { return d.cap }
func (d *Digest) MergedNodes() int         { return d.merged }
func (d *Digest) UnmergedNodes() int       { return d.unmerged }
func (d *Digest) MergedWeight() int64      { return d.mergedW }
func (d *Digest) UnmergedWeight() int64    { return d.unmergW }
func (d *Digest) TotalCompressions() int64 { return d.totalCompressions }

// Size is the number of values (the total weight) added.
func (d *Digest) Size() int64 { return d.mergedW + d.unmergW }

// Min and Max are the smallest and largest values added, NaN when empty
// (TDIGEST.MIN/MAX).
func (d *Digest) Min() float64 {
	if d.Size() > 0 {
		return d.min
	}
	return math.NaN()
}

func (d *Digest) Max() float64 {
	if d.Size() > 0 {
		return d.max
	}
	return math.NaN()
}

// MemoryUsage is RedisBloom's TDigestMemUsage on a 64-bit build: the
// struct (80 bytes) and 16 bytes per centroid of capacity.
func (d *Digest) MemoryUsage() int64 { return MemoryUsage(int64(d.compression)) }

// MemoryUsage is the MemoryUsage of a digest of this compression.
func MemoryUsage(compression int64) int64 { return 80 + 16*int64(Capacity(compression)) }

// Add adds value once. It refuses NaN and ±Inf (ErrValue) and an
// overflowing weight (ErrOverflow), changing nothing.
func (d *Digest) Add(value float64) error {
	if math.IsNaN(value) || math.IsInf(value, 0) {
		return ErrValue
	}
	return d.AddWeighted(value, 1)
}

func addSafe(a, b int64) bool {
	if b < 0 {
		return a >= math.MaxInt64-b
	}
	return a <= math.MaxInt64-b
}

// AddWeighted adds a centroid of the given mean and weight (td_add; the
// weight must be positive). It merges first when the buffer is full.
func (d *Digest) AddWeighted(mean float64, weight int64) error {
	if weight < 1 {
		return ErrOverflow
	}
	if d.merged+d.unmerged >= d.cap-1 {
		if err := d.compress(); err != nil {
			return err
		}
	}
	pos := d.merged + d.unmerged
	if pos >= d.cap {
		return ErrOverflow
	}
	if !addSafe(d.unmergW, weight) {
		return ErrOverflow
	}
	nu := d.unmergW + weight
	if !addSafe(nu, d.mergedW) {
		return ErrOverflow
	}
	if mean < d.min {
		d.min = mean
	}
	if mean > d.max {
		d.max = mean
	}
	if pos == len(d.means) {
		d.grow()
	}
	d.means[pos] = mean
	d.weights[pos] = weight
	d.unmerged++
	d.unmergW = nu
	return nil
}

// grow lengthens the centroid arrays by at least one, never past the
// capacity: a digest holds memory for the centroids it has had, while
// MemoryUsage reports RedisBloom's (the whole capacity, allocated at
// creation there).
func (d *Digest) grow() {
	n := min(max(2*len(d.means), 16), d.cap)
	m := make([]float64, n)
	w := make([]int64, n)
	copy(m, d.means)
	copy(w, d.weights)
	d.means, d.weights = m, w
}

// Compress merges the buffered values (td_compress).
func (d *Digest) Compress() error { return d.compress() }

func (d *Digest) compress() error {
	if d.unmerged == 0 {
		return nil
	}
	n := d.merged + d.unmerged
	sortNodes(d.means[:n], d.weights[:n], d.merged)
	total := float64(d.mergedW) + float64(d.unmergW)
	if total <= 1 {
		return nil
	}
	denom := float64(float64(2*math.Pi*total) * clog.Log(total))
	if math.IsInf(denom, 1) {
		return ErrOverflow
	}
	normalizer := d.compression / denom
	if math.IsInf(normalizer, 1) {
		return ErrOverflow
	}
	cur := 0
	soFar := 0.0
	for i := 1; i < n; i++ {
		proposed := float64(d.weights[cur]) + float64(d.weights[i])
		z := proposed * normalizer
		q0 := soFar / total
		q2 := (soFar + proposed) / total
		if z <= float64(q0*(1-q0)) && z <= float64(q2*(1-q2)) {
			d.weights[cur] += d.weights[i]
			delta := d.means[i] - d.means[cur]
			wd := float64(delta*float64(d.weights[i])) / float64(d.weights[cur])
			d.means[cur] += wd
		} else {
			soFar += float64(d.weights[cur])
			cur++
			d.weights[cur] = d.weights[i]
			d.means[cur] = d.means[i]
		}
		if cur != i {
			d.weights[i] = 0
			d.means[i] = 0
		}
	}
	d.merged = cur + 1
	d.mergedW = int64(total)
	d.unmerged = 0
	d.unmergW = 0
	d.totalCompressions++
	return nil
}

// sortNodes sorts the n centroids as td_qsort does (means ascending,
// weights alongside), of which the first merged came from the last
// compression. td_qsort's order of centroids of equal means is its own,
// and the compression that follows depends on it; but where every mean
// differs there is one sorted order. TDIGEST.MERGE compresses the
// destination before each source (td_merge), so that there the array is
// two sorted runs, the digest's centroids and the last source's, which
// td_qsort sorted in n log n every time (a merge of 20,000 sources
// into COMPRESSION 100000: minutes): sortNodes merges two strictly
// increasing runs in one pass, and leaves every other case (a tie
// anywhere, a NaN, a run out of order) to td_qsort, so that the result is
// td_qsort's, bit for bit, always.
func sortNodes(means []float64, weights []int64, merged int) {
	if !mergeRuns(means, weights, merged) {
		qsort(means, weights, 0, len(means)-1)
	}
}

// mergeScratch holds mergeRuns's buffers between compressions.
var mergeScratch sync.Pool

type runScratch struct {
	m []float64
	w []int64
}

// mergeRuns merges means[:k] and means[k:] (weights alongside) if each
// is strictly increasing and no mean of one equals a mean of the other;
// otherwise it changes nothing and reports false.
func mergeRuns(means []float64, weights []int64, k int) bool {
	n := len(means)
	if k <= 0 || k >= n || n < 64 {
		return false
	}
	increasing := func(m []float64) bool {
		if m[0] != m[0] {
			return false // NaN
		}
		for i := 1; i < len(m); i++ {
			if !(m[i-1] < m[i]) {
				return false
			}
		}
		return true
	}
	a, b := means[:k], means[k:]
	if !increasing(a) || !increasing(b) {
		return false
	}
	if a[k-1] < b[0] {
		return true // already in order
	}
	sc, _ := mergeScratch.Get().(*runScratch)
	if sc == nil {
		sc = new(runScratch)
	}
	defer mergeScratch.Put(sc)
	if cap(sc.m) < n {
		sc.m, sc.w = make([]float64, n), make([]int64, n)
	}
	m, w := sc.m[:n], sc.w[:n]
	wa, wb := weights[:k], weights[k:n]
	i, j, o := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			m[o], w[o] = a[i], wa[i]
			i++
		case b[j] < a[i]:
			m[o], w[o] = b[j], wb[j]
			j++
		default:
			return false // a tie: td_qsort's order
		}
		o++
	}
	o += copy(m[o:], a[i:])
	copy(w[o-(len(a)-i):], wa[i:])
	o2 := o + copy(m[o:], b[j:])
	copy(w[o:o2], wb[j:])
	copy(means, m)
	copy(weights, w)
	return true
}

// qsort is td_qsort: a quicksort of the parallel arrays on [start, end],
// central pivot, Lomuto partition.
func qsort(means []float64, weights []int64, start, end int) {
	for start < end {
		if end-start == 1 {
			if means[start] > means[end] {
				means[start], means[end] = means[end], means[start]
				weights[start], weights[end] = weights[end], weights[start]
			}
			return
		}
		p := partition(means, weights, start, end, (end+start)/2)
		if p > start {
			qsort(means, weights, start, p-1)
		}
		start = p + 1
	}
}

func partition(means []float64, weights []int64, start, end, pivot int) int {
	// td_qsort's Lomuto partition on the subslices (no bounds checks on
	// the scan; a swap of an element with itself, which the sorted runs
	// of a compressed digest make at every step, is skipped: the same
	// permutation). i is the C code's i + 1.
	m := means[start : end+1]
	w := weights[start : end+1]
	w = w[:len(m)]
	last := len(m) - 1
	p := pivot - start
	pm := m[p]
	m[p], m[last] = m[last], m[p]
	w[p], w[last] = w[last], w[p]
	i := 0
	for j, x := range m[:last] {
		if x < pm {
			if i != j {
				m[i], m[j] = x, m[i]
				w[i], w[j] = w[j], w[i]
			}
			i++
		}
	}
	m[i], m[last] = m[last], m[i]
	w[i], w[last] = w[last], w[i]
	return start + i
}

// Merge adds every centroid of from (merged first, as td_merge does: from
// is compressed too). On ErrOverflow d holds the centroids added so far.
func (d *Digest) Merge(from *Digest) error {
	if err := d.compress(); err != nil {
		return err
	}
	if err := from.compress(); err != nil {
		return err
	}
	n := from.merged + from.unmerged
	for i := 0; i < n; i++ {
		if err := d.AddWeighted(from.means[i], from.weights[i]); err != nil {
			return err
		}
	}
	return nil
}

// CDF is the fraction of the weight at or below x, counting half of the
// weight at x (td_cdf): NaN when empty, 0 below the min, 1 above the max.
func (d *Digest) CDF(val float64) float64 {
	d.compress()
	if d.merged == 0 {
		return math.NaN()
	}
	if val < d.min {
		return 0
	}
	if val > d.max {
		return 1
	}
	if d.merged == 1 {
		width := d.max - d.min
		if val-d.min <= width {
			return 0.5
		}
		return (val - d.min) / width
	}
	n := d.merged
	lm := d.means[0]
	lw := float64(d.weights[0])
	mw := float64(d.mergedW)
	if val < lm {
		width := lm - d.min
		if width > 0 {
			if val == d.min {
				return 0.5 / mw
			}
			return (1 + float64((val-d.min)/width*(lw/2-1))) / mw
		}
		return 0
	}
	rm := d.means[n-1]
	rw := float64(d.weights[n-1])
	if val > rm {
		width := d.max - rm
		if width > 0 {
			if val == d.max {
				return 1 - 0.5/mw
			}
			dq := (1 + float64((d.max-val)/width*(rw/2-1))) / mw
			return 1 - dq
		}
		return 1
	}
	soFar := 0.0
	for it := 0; it < n-1; it++ {
		if d.means[it] == val {
			dw := 0.0
			for it < n && d.means[it] == val {
				dw += float64(d.weights[it])
				it++
			}
			return (soFar + dw/2) / mw
		} else if d.means[it] <= val && val < d.means[it+1] {
			nw := float64(d.weights[it])
			nwn := float64(d.weights[it+1])
			nm := d.means[it]
			nmn := d.means[it+1]
			if nmn-nm > 0 {
				leftX, rightX := 0.0, 0.0
				if nw == 1 {
					if nwn == 1 {
						return (soFar + 1) / mw
					}
					leftX = 0.5
				} else if nwn == 1 {
					rightX = 0.5
				}
				dw := (nw + nwn) / 2
				dwNo := dw - leftX - rightX
				base := soFar + nw/2 + leftX
				return (base + float64(dwNo*(val-nm))/(nmn-nm)) / mw
			}
			dw := (nw + nwn) / 2
			return (soFar + dw) / mw
		} else {
			soFar += float64(d.weights[it])
		}
	}
	return 1 - 0.5/mw
}

func weightedAverageSorted(x1, w1, x2, w2 float64) float64 {
	x := (float64(x1*w1) + float64(x2*w2)) / (w1 + w2)
	return cmax(x1, cmin(x, x2))
}

// cmax and cmin are C's ((x) > (y) ? (x) : (y)) and ((x) < (y) ? …).
func cmax(x, y float64) float64 {
	if x > y {
		return x
	}
	return y
}

func cmin(x, y float64) float64 {
	if x < y {
		return x
	}
	return y
}

func weightedAverage(x1, w1, x2, w2 float64) float64 {
	if x1 <= x2 {
		return weightedAverageSorted(x1, w1, x2, w2)
	}
	return weightedAverageSorted(x2, w2, x1, w1)
}

// toIndex is td_internal_iterate_centroids_to_index.
func (d *Digest) toIndex(index, lw float64, n int, soFar *float64, pos *int) float64 {
	if lw > 1 && index < lw/2 {
		return d.min + float64((index-1)/(lw/2-1)*(d.means[0]-d.min))
	}
	if index > float64(d.mergedW-1) {
		return d.max
	}
	rw := float64(d.weights[n-1])
	rm := d.means[n-1]
	if rw > 1 && float64(d.mergedW)-index <= rw/2 {
		return d.max - float64((float64(d.mergedW)-index-1)/(rw/2-1)*(d.max-rm))
	}
	for ; *pos < n-1; *pos++ {
		i := *pos
		nw := float64(d.weights[i])
		nwn := float64(d.weights[i+1])
		nm := d.means[i]
		nmn := d.means[i+1]
		dw := (nw + nwn) / 2
		if *soFar+dw > index {
			leftUnit := 0.0
			if nw == 1 {
				if index-*soFar < 0.5 {
					return nm
				}
				leftUnit = 0.5
			}
			rightUnit := 0.0
			if nwn == 1 {
				if *soFar+dw-index <= 0.5 {
					return nmn
				}
				rightUnit = 0.5
			}
			z1 := index - *soFar - leftUnit
			z2 := *soFar + dw - index - rightUnit
			return weightedAverage(nm, z2, nmn, z1)
		}
		*soFar += dw
	}
	z1 := index - float64(d.mergedW) - rw/2.0
	z2 := rw/2 - z1
	return weightedAverage(rm, z1, d.max, z2)
}

// Quantile estimates the value at quantile q (td_quantile): NaN when
// empty or q outside [0, 1].
func (d *Digest) Quantile(q float64) float64 {
	d.compress()
	if q < 0 || q > 1 || d.merged == 0 {
		return math.NaN()
	}
	if d.merged == 1 {
		return d.means[0]
	}
	index := q * float64(d.mergedW)
	if index < 1 {
		return d.min
	}
	lw := float64(d.weights[0])
	soFar := lw / 2
	i := 0
	return d.toIndex(index, lw, d.merged, &soFar, &i)
}

// Quantiles sets out[i] to the quantile qs[i] (td_quantiles), walking the
// centroids once: qs must be ascending, as TDIGEST.QUANTILE passes each
// ascending run. out must be as long as qs.
func (d *Digest) Quantiles(qs, out []float64) {
	d.compress()
	n := d.merged
	if n == 0 {
		for i := range qs {
			out[i] = math.NaN()
		}
		return
	}
	if n == 1 {
		for i, q := range qs {
			if q < 0 || q > 1 {
				out[i] = math.NaN()
			} else {
				out[i] = d.means[0]
			}
		}
		return
	}
	lw := float64(d.weights[0])
	soFar := lw / 2
	pos := 0
	for i, q := range qs {
		out[i] = d.toIndex(q*float64(d.mergedW), lw, n, &soFar, &pos)
	}
}

// TrimmedMean is the mean of the values between the quantiles lo and hi
// (td_trimmed_mean): NaN when empty or a cut outside [0, 1].
func (d *Digest) TrimmedMean(lo, hi float64) float64 {
	d.compress()
	if d.merged == 0 || lo < 0 || lo > 1 || hi < 0 || hi > 1 {
		return math.NaN()
	}
	if d.merged == 1 {
		return d.means[0]
	}
	left := math.Floor(float64(d.mergedW) * lo)
	right := math.Ceil(float64(d.mergedW) * hi)
	done, sum, count := 0.0, 0.0, 0.0
	for i := 0; i < d.merged; i++ {
		w := float64(d.weights[i])
		add := w
		add -= cmin(cmax(0, left-done), add)
		add = cmin(cmax(0, right-done), add)
		done += w
		sum += float64(d.means[i] * add)
		count += add
		if done >= right {
			break
		}
	}
	return sum / count
}

// halfRoundDown rounds to the nearest integer, halves towards zero
// (rm_tdigest.c's _halfRoundDown).
func halfRoundDown(f float64) float64 {
	ip, frac := math.Modf(f)
	if math.Abs(frac) <= 0.5 {
		return ip
	}
	if ip >= 0 {
		return ip + 1
	}
	return ip - 1
}

// cRound is C's round: halves away from zero.
func cRound(f float64) float64 { return math.Round(f) }

// Rank is TDIGEST.RANK's answer for x: the estimated number of values
// below x plus half of those at x, rounded; −2 when empty, −1 below the
// min, Size above the max.
func (d *Digest) Rank(x float64) int64 { return d.rank(x, false) }

// RevRank is TDIGEST.REVRANK's answer: the same counted from the top; −2
// when empty, Size below the min, −1 above the max.
func (d *Digest) RevRank(x float64) int64 { return d.rank(x, true) }

func (d *Digest) rank(x float64, reverse bool) int64 {
	size := float64(d.Size())
	var r float64
	switch {
	case size == 0:
		r = -2
	case x < d.min:
		r = -1
		if reverse {
			r = size
		}
	case x > d.max:
		r = size
		if reverse {
			r = -1
		}
	default:
		c := d.CDF(x) * size
		if reverse {
			r = cRound(size - cRound(c))
		} else {
			r = halfRoundDown(c)
		}
	}
	return cLongLong(r)
}

// cLongLong is C's (long long) cast as x86-64 performs it: NaN and values
// out of range give the minimum (RANK of a digest whose only value is
// still buffered answers it, as RedisBloom does). Go leaves that case to
// the platform.
func cLongLong(f float64) int64 {
	if !(f >= -0x1p63 && f < 0x1p63) {
		return math.MinInt64
	}
	return int64(f)
}

// ByRank is TDIGEST.BYRANK's answer for rank r ≥ 0: the estimated value
// of that rank; NaN when empty, the min at 0, +Inf at Size or more.
func (d *Digest) ByRank(r int64) float64 { return d.byRank(r, false) }

// ByRevRank is TDIGEST.BYREVRANK's: rank counted from the top; the max at
// 0, −Inf at Size or more.
func (d *Digest) ByRevRank(r int64) float64 { return d.byRank(r, true) }

func (d *Digest) byRank(rank int64, reverse bool) float64 {
	size := float64(d.Size())
	r := float64(rank)
	switch {
	case size == 0:
		return math.NaN()
	case r == 0:
		if reverse {
			return d.max
		}
		return d.min
	case r >= size:
		if reverse {
			return math.Inf(-1)
		}
		return math.Inf(1)
	}
	if reverse {
		r = size - r - 1
	}
	return d.Quantile(r / size)
}

// Clone returns an independent copy.
func (d *Digest) Clone() *Digest {
	c := *d
	n := d.merged + d.unmerged
	c.means = append([]float64(nil), d.means[:n]...)
	c.weights = append([]int64(nil), d.weights[:n]...)
	return &c
}
