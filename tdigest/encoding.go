package tdigest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// The binary form (MarshalBinary), little-endian: "TDG\x01", compression
// (uint64), min and max (float64 bits), merged and unmerged node counts,
// total compressions, merged and unmerged weights (uint64 each), then
// every node, merged ones first, as mean (float64 bits) and weight
// (uint64). It keeps the unmerged buffer, so a decoded digest answers
// exactly as the encoded one would (RedisBloom's RDB merges it first).
const (
	magic      = "TDG\x01"
	headerSize = 4 + 8*8
)

// ErrFormat: data that is not a digest's binary form.
var ErrFormat = errors.New("tdigest: malformed encoding")

// HeaderSize is the length of the encoding's header, which says the
// length of the whole (EncodedLen).
const HeaderSize = headerSize

// EncodedLen checks an encoding's header (its first HeaderSize bytes) and
// returns the length of the whole encoding, so that a reader of a stream
// knows how much to read, bounded by the capacity, before it reads it.
func EncodedLen(header []byte) (int, error) {
	if len(header) < headerSize || string(header[:4]) != magic {
		return 0, fmt.Errorf("%w: no header", ErrFormat)
	}
	comp := binary.LittleEndian.Uint64(header[4:])
	if comp < 1 || comp > MaxCompression {
		return 0, fmt.Errorf("%w: compression %d", ErrFormat, comp)
	}
	c := uint64(Capacity(int64(comp)))
	merged, unmerged := binary.LittleEndian.Uint64(header[4+8*3:]), binary.LittleEndian.Uint64(header[4+8*4:])
	if merged > c || unmerged > c || merged+unmerged > c {
		return 0, fmt.Errorf("%w: %d+%d nodes, capacity %d", ErrFormat, merged, unmerged, c)
	}
	return headerSize + 16*int(merged+unmerged), nil
}

// MarshalBinary encodes the digest; it never fails.
func (d *Digest) MarshalBinary() ([]byte, error) {
	n := d.merged + d.unmerged
	b := make([]byte, 0, headerSize+16*n)
	b = append(b, magic...)
	for _, v := range []uint64{uint64(d.compression), math.Float64bits(d.min), math.Float64bits(d.max),
		uint64(d.merged), uint64(d.unmerged), uint64(d.totalCompressions), uint64(d.mergedW), uint64(d.unmergW)} {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	for i := 0; i < n; i++ {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(d.means[i]))
		b = binary.LittleEndian.AppendUint64(b, uint64(d.weights[i]))
	}
	return b, nil
}

// UnmarshalBinary decodes data into d, replacing its contents. It checks
// the whole header and the length before it allocates (memory in
// proportion to data's length, whatever the compression): a compression
// in [1, MaxCompression], node counts within the capacity, every weight
// positive, the weights summing to the merged and unmerged totals without
// overflow. On error d is unchanged.
func (d *Digest) UnmarshalBinary(data []byte) error {
	if len(data) < headerSize || string(data[:4]) != magic {
		return fmt.Errorf("%w: no header", ErrFormat)
	}
	u := func(i int) uint64 { return binary.LittleEndian.Uint64(data[4+8*i:]) }
	comp := u(0)
	if comp < 1 || comp > MaxCompression {
		return fmt.Errorf("%w: compression %d", ErrFormat, comp)
	}
	c := Capacity(int64(comp))
	merged, unmerged, tc, mw, uw := u(3), u(4), u(5), u(6), u(7)
	if merged > uint64(c) || unmerged > uint64(c) || merged+unmerged > uint64(c) {
		return fmt.Errorf("%w: %d+%d nodes, capacity %d", ErrFormat, merged, unmerged, c)
	}
	n := int(merged + unmerged)
	if len(data) != headerSize+16*n {
		return fmt.Errorf("%w: %d bytes for %d nodes", ErrFormat, len(data), n)
	}
	if tc > math.MaxInt64 || mw > math.MaxInt64 || uw > math.MaxInt64 || mw+uw > math.MaxInt64 {
		return fmt.Errorf("%w: counts out of range", ErrFormat)
	}
	var sums [2]uint64
	for i := 0; i < n; i++ {
		w := binary.LittleEndian.Uint64(data[headerSize+16*i+8:])
		part := 0
		if i >= int(merged) {
			part = 1
		}
		if w < 1 || w > math.MaxInt64 || sums[part]+w > math.MaxInt64 {
			return fmt.Errorf("%w: node %d weight %d", ErrFormat, i, w)
		}
		sums[part] += w
	}
	if sums[0] != mw || sums[1] != uw {
		return fmt.Errorf("%w: weights sum to %d+%d, header says %d+%d", ErrFormat, sums[0], sums[1], mw, uw)
	}
	means := make([]float64, n)
	weights := make([]int64, n)
	for i := range n {
		means[i] = math.Float64frombits(binary.LittleEndian.Uint64(data[headerSize+16*i:]))
		weights[i] = int64(binary.LittleEndian.Uint64(data[headerSize+16*i+8:]))
	}
	*d = Digest{
		compression: float64(comp), cap: c,
		min: math.Float64frombits(u(1)), max: math.Float64frombits(u(2)),
		merged: int(merged), unmerged: int(unmerged), totalCompressions: int64(tc),
		mergedW: int64(mw), unmergW: int64(uw), means: means, weights: weights,
	}
	return nil
}
