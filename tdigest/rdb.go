package tdigest

import (
	"errors"
	"fmt"
	"math"

	"github.com/bloomlab/bloomlab/rdb"
)

// RDBTypeName and RDBEncVer are the module type name and the encoding
// version of the value in a Redis RDB file or DUMP payload: RedisBloom's
// TDIGEST (rm_tdigest.c TDigestRdbSave/TDigestRdbLoad, the same in
// RedisBloom 2.4 and 8.6): compression, min and max (doubles), cap,
// merged_nodes, unmerged_nodes and total_compressions (signed integers,
// which RedisModule_SaveSigned writes as unsigned fields of the same
// bits),
// merged_weight and unmerged_weight (doubles), then the merged nodes'
// means and then their weights, one double each. Only the merged nodes
// are saved: RedisBloom merges the buffer first.
const (
	RDBTypeName = "TDIS-TYPE"
	RDBEncVer   = 0
)

// ReadRedisBloomRDB reads one TDIS-TYPE module value (m's fields, through
// its EOF opcode) as RedisBloom's TDigestRdbLoad loads it, so that every
// later answer is RedisBloom's after its load, bit for bit: the fields as
// saved, the weights converted from doubles, and, where the value has an
// unmerged node (RedisBloom leaves one when the total weight is at most
// 1, which its merge does not touch), that node as RedisBloom's load
// leaves it: mean 0 and weight 0 (its value is not saved), with the saved
// unmerged weight.
//
// alloc, when not nil, is called once, before anything is allocated for
// the nodes, with MemoryUsage of the compression (what the digest is
// accounted as holding, RedisBloom's TDigestMemUsage); its error stops the
// read. The nodes' memory grows as their fields arrive.
//
// It refuses, with errors wrapping ErrFormat, before anything is
// allocated: an encoding version above RDBEncVer (RedisBloom's load does
// not check it), a compression that is not an integer in [1,
// MaxCompression], a cap other than Capacity(compression) (RedisBloom
// sizes the nodes from the compression and trusts the cap), node counts
// outside [0, cap] or beyond it together, more than one unmerged node or
// one with a total weight above 1 (RedisBloom writes no other: a larger
// buffer would be loaded as zeros that its next merge takes in), negative
// total compressions, a min or max that is NaN or infinite (every value
// added is finite), total weights that are not integers in [0, 2^63) or
// whose sum overflows; then, as the nodes arrive, such a weight or sum.
// The means are taken as they come: RedisBloom's merge leaves them sorted,
// but its later code, and this package's, answer from any means without
// fault, and a merge's rounding could leave two out of order by an ulp.
// Nor is the weights' sum held to the merged weight: a digest that lost
// an unmerged node at a load holds a node of weight 0 and a merged weight
// that counts the lost value.
func ReadRedisBloomRDB(m *rdb.ModuleValue, alloc func(bytes int64) error) (*Digest, error) {
	bad := func(msg string, args ...any) error {
		return fmt.Errorf("tdigest: RDB value of "+RDBTypeName+": "+msg+": %w", append(args, ErrFormat)...)
	}
	wrap := func(err error) error { return fmt.Errorf("tdigest: RDB value of %s: %w", RDBTypeName, err) }
	switch {
	case m.Name != RDBTypeName:
		return nil, bad("the value is a %s", m.Name)
	case m.EncVer > RDBEncVer:
		return nil, bad("encoding version %d is newer than the %d RedisBloom 2.4 to 8.6 write", m.EncVer, RDBEncVer)
	}
	var dbl [3]float64 // compression, min, max
	for i := range dbl {
		v, err := m.ReadDouble()
		if err != nil {
			return nil, wrap(err)
		}
		dbl[i] = v
	}
	var sgn [4]int64 // cap, merged, unmerged, total compressions
	for i := range sgn {
		// RedisModule_SaveSigned writes an unsigned field of the same
		// bits (and LoadSigned reads one).
		v, err := m.ReadUnsigned()
		if err != nil {
			return nil, wrap(err)
		}
		sgn[i] = int64(v)
	}
	var wts [2]int64 // merged, unmerged weight
	for i := range wts {
		v, err := m.ReadDouble()
		if err != nil {
			return nil, wrap(err)
		}
		w, ok := weight(v)
		if !ok {
			return nil, bad("a total weight of %v, not an integer in [0, 2^63)", v)
		}
		wts[i] = w
	}
	comp, lo, hi := dbl[0], dbl[1], dbl[2]
	cp, merged, unmerged, tc := sgn[0], sgn[1], sgn[2], sgn[3]
	mw, uw := wts[0], wts[1]
	switch {
	case !(comp >= 1 && comp <= MaxCompression) || comp != math.Trunc(comp):
		return nil, bad("compression %v, not an integer in [1, %d]", comp, int64(MaxCompression))
	case cp != int64(Capacity(int64(comp))):
		return nil, bad("capacity %d, where compression %v has %d", cp, comp, Capacity(int64(comp)))
	case merged < 0 || merged > cp || unmerged < 0 || unmerged > cp-merged:
		return nil, bad("%d merged and %d unmerged nodes, capacity %d", merged, unmerged, cp)
	case unmerged > 1 || (unmerged == 1 && (uw > 1 || mw > 1-uw)):
		return nil, bad("%d unmerged nodes of total weight %d (merged weight %d): RedisBloom merges its buffer before it saves, unless the total weight is at most 1", unmerged, uw, mw)
	case tc < 0:
		return nil, bad("total compressions %d", tc)
	case math.IsNaN(lo) || math.IsInf(lo, 0) || math.IsNaN(hi) || math.IsInf(hi, 0):
		return nil, bad("min %v, max %v", lo, hi)
	case mw > math.MaxInt64-uw:
		return nil, bad("merged weight %d and unmerged weight %d overflow", mw, uw)
	}
	if alloc != nil {
		if err := alloc(MemoryUsage(int64(comp))); err != nil {
			return nil, err
		}
	}
	n := int(merged + unmerged)
	means := make([]float64, 0, min(n, 1<<12)) // grows as the means arrive
	for range merged {
		v, err := m.ReadDouble()
		if err != nil {
			return nil, wrap(err)
		}
		means = append(means, v)
	}
	means = append(means, make([]float64, unmerged)...)
	weights := make([]int64, n)
	var sum int64
	for i := range merged {
		v, err := m.ReadDouble()
		if err != nil {
			return nil, wrap(err)
		}
		w, ok := weight(v)
		if !ok || w > math.MaxInt64-sum {
			return nil, bad("merged node %d: weight %v, not an integer in [0, 2^63), or the weights' sum overflows", i, v)
		}
		weights[i] = w
		sum += w
	}
	if err := m.End(); err != nil {
		return nil, wrap(err)
	}
	return &Digest{
		compression: comp, min: lo, max: hi, cap: int(cp),
		merged: int(merged), unmerged: int(unmerged),
		mergedW: mw, unmergW: uw, totalCompressions: tc,
		means: means, weights: weights,
	}, nil
}

// weight returns v as an int64 if it is an integer in [0, 2^63), as a C
// cast of it to long long keeps it.
func weight(v float64) (int64, bool) {
	if !(v >= 0 && v < 0x1p63) || v != math.Trunc(v) {
		return 0, false
	}
	return int64(v), true
}

// WriteRedisBloomRDB merges the digest's buffered values (Compress), as
// RedisBloom's TDigestRdbSave does before it saves, so that the digest
// written and the digest's later answers are RedisBloom's; then it writes
// its fields as TDigestRdbSave does (the weights as doubles), byte for
// byte what RedisBloom writes for the same digest. As there, an unmerged
// node left by the merge (a total weight of at most 1) is counted but its
// value is not written: a digest read back from it has lost that value
// (ReadRedisBloomRDB), as RedisBloom's has. A merge that overflows is
// ignored, as RedisBloom ignores it. The caller writes the value's EOF
// opcode (rdb.ModuleWriter.End). The zero Digest is refused.
func (d *Digest) WriteRedisBloomRDB(m *rdb.ModuleWriter) error {
	if d.cap == 0 {
		return errors.New("tdigest: WriteRedisBloomRDB of the zero Digest, which has no compression (make one with New)")
	}
	d.compress() // td_compress's result is ignored by TDigestRdbSave too
	m.Double(d.compression)
	m.Double(d.min)
	m.Double(d.max)
	// RedisModule_SaveSigned: an unsigned field of the same bits.
	m.Unsigned(uint64(d.cap))
	m.Unsigned(uint64(d.merged))
	m.Unsigned(uint64(d.unmerged))
	m.Unsigned(uint64(d.totalCompressions))
	m.Double(float64(d.mergedW))
	m.Double(float64(d.unmergW))
	for _, x := range d.means[:d.merged] {
		m.Double(x)
	}
	for _, w := range d.weights[:d.merged] {
		m.Double(float64(w))
	}
	return nil
}
