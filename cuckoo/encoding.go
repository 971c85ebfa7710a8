package cuckoo

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/format"
)

// File layout (docs/FORMAT.md, kind 9): the common header with kind 9,
// scheme 0 (bloomlab profile: xxh3-128 with the header's seed) or 64
// (RedisBloom profile: MurmurHash64A with seed 0; header seed 0); a
// 47-byte parameter block
//
//	offset size field
//	0      1    b: slots per bucket (bloomlab 1, 2, 4, 8; RedisBloom 1 … 255)
//	1      1    f: fingerprint bits (bloomlab 4 … 32; RedisBloom 8)
//	2      1    flags: bit 0 semi-sorted (bloomlab, b = 4); other bits 0
//	3      4    max kicks (relocations per insert): 1 … 65535
//	7      4    expansion: 0 (does not grow) or a power of two ≤ 32768
//	11     8    m0: buckets of the first sub-filter (bloomlab: ValidBuckets;
//	            RedisBloom: a power of two)
//	19     4    L: sub-filters, 1 … 65535 (1 if the expansion is 0)
//	23     8    N: keys held; must equal the occupied slots
//	31     8    deletes since the last compaction
//	39     8    capacity: the design n of the first sub-filter (0:
//	            unknown); bloomlab at most b·m0, RedisBloom (CF.RESERVE's
//	            capacity, which rounds down to m0 buckets) below (m0 + 1)·b
//
// and a payload holding each sub-filter's table, oldest first; sub-filter
// s has m0·expansion^s buckets, at most 2^48 bits. Bloomlab: ⌈m·B/64⌉
// words (bucket i at bits i·B …, B = b·f, or 4f − 4 semi-sorted), then two
// zero words (the guard the tables keep for unaligned loads); bits after
// the last bucket are zero; a semi-sorted bucket's rank is below 3876 and
// its fingerprints ascending. RedisBloom: ⌈m·b/8⌉ words, byte k of the
// table (bucket ⌊k/b⌋, slot k mod b) in byte k mod 8 of word ⌊k/8⌋, the
// padding zero.

const (
	paramsLen = 47
	flagSemi  = 1
	guard     = 2 // words after a bloomlab table
)

// scheme returns the file's scheme byte for the profile.
func (p Profile) scheme() uint8 {
	if p == RedisBloom {
		return uint8(hashing.RedisBloom)
	}
	return 0
}

// tableWords returns the payload words of a sub-filter of m buckets.
func (f *Filter) tableWords(m uint64) uint64 {
	if f.profile == RedisBloom {
		return (m*uint64(f.lay.b) + 7) / 8
	}
	return f.lay.words(m)
}

// WriteTo writes f in the bloomlab file format.
func (f *Filter) WriteTo(w io.Writer) (int64, error) {
	if len(f.subs) == 0 {
		return 0, errZero
	}
	var p format.Params
	p.U8(uint8(f.lay.b))
	p.U8(uint8(f.lay.f))
	var flags uint8
	if f.lay.semisort {
		flags |= flagSemi
	}
	p.U8(flags)
	p.U32(uint32(f.maxKicks))
	p.U32(uint32(f.expansion))
	p.U64(f.m0)
	p.U32(uint32(len(f.subs)))
	p.U64(f.n)
	p.U64(f.deletes)
	p.U64(f.capacity)
	var payload uint64
	for i := range f.subs {
		payload += 8 * f.tableWords(f.subs[i].m)
	}
	e := format.NewEncoder(w)
	e.Begin(format.Header{Kind: format.KindCuckoo, Scheme: f.profile.scheme(), Seed: f.seed, PayloadLen: payload}, p.Bytes())
	for i := range f.subs {
		s := &f.subs[i]
		if f.profile != RedisBloom {
			e.Words(s.words)
			continue
		}
		var buf [512]uint64
		for b := s.bytes; len(b) > 0; {
			n := 0
			for ; n < len(buf) && len(b) > 0; n++ {
				var w [8]byte
				k := copy(w[:], b)
				buf[n] = binary.LittleEndian.Uint64(w[:])
				b = b[k:]
			}
			e.Words(buf[:n])
		}
	}
	return e.Close()
}

// MarshalBinary returns f in the bloomlab file format.
func (f *Filter) MarshalBinary() ([]byte, error) {
	return format.Marshal(f, int(min(f.Bits()/8, 1<<30))+256)
}

// UnmarshalBinary replaces f with the filter encoded in data, which must
// hold exactly one file. On error f is unchanged.
func (f *Filter) UnmarshalBinary(data []byte) error {
	g, err := format.Unmarshal(data, "cuckoo", decode)
	if err == nil {
		*f = *g
	}
	return err
}

// ReadFrom replaces f with the filter read from r, reading exactly one
// file. On error f is unchanged; corrupt or hostile input yields an error
// wrapping format.ErrFormat, never a panic, and nothing is allocated
// beyond what the bytes received justify.
func (f *Filter) ReadFrom(r io.Reader) (int64, error) {
	g, n, err := format.ReadFrom(r, decode)
	if err == nil {
		*f = *g
	}
	return n, err
}

// Unmarshal decodes a filter from data, which must hold exactly one file.
func unmarshal(data []byte) (*Filter, error) { return format.Unmarshal(data, "cuckoo", decode) }

// decode reads one cuckoo filter in the bloomlab file format from d
// (Filter.ReadFrom, Unmarshal and bloomlab.ReadFrom are the public ways
// in).
func decode(d *format.Decoder) (*Filter, error) {
	params, err := d.Begin(format.KindCuckoo)
	if err != nil {
		return nil, fmt.Errorf("cuckoo: %w", err)
	}
	bad := func(msg string, args ...any) error {
		return fmt.Errorf("cuckoo: "+msg+": %w", append(args, format.ErrFormat)...)
	}
	pr := format.NewParamReader(params)
	b, fb, flags := int(pr.U8()), int(pr.U8()), pr.U8()
	kicks, exp := pr.U32(), uint64(pr.U32())
	m0 := pr.U64()
	nsub := pr.U32()
	n, deletes, capacity := pr.U64(), pr.U64(), pr.U64()
	if err := pr.Err(); err != nil {
		return nil, fmt.Errorf("cuckoo: %w", err)
	}
	f := &Filter{maxKicks: int(kicks), expansion: exp, seed: d.Header.Seed, capacity: capacity, m0: m0, n: n, deletes: deletes}
	switch d.Header.Scheme {
	case 0:
		f.profile = Bloomlab
		if flags&^flagSemi != 0 {
			return nil, bad("flags %#x", flags)
		}
		if f.lay, err = newLayout(b, fb, flags&flagSemi != 0); err != nil {
			return nil, bad("%v", err)
		}
		if !validBuckets(m0) {
			return nil, bad("%d buckets is not a bucket count of the bloomlab profile", m0)
		}
		if m0 > maxTableBits/f.lay.bucketBits {
			return nil, bad("%d buckets of %d bits exceed 2^48 bits", m0, f.lay.bucketBits)
		}
		if capacity > m0*uint64(b) {
			return nil, bad("capacity %d exceeds the %d slots of the first sub-filter", capacity, m0*uint64(b))
		}
	case uint8(hashing.RedisBloom):
		f.profile = RedisBloom
		switch {
		case b < 1 || b > redisMaxBucketSize || fb != 8 || flags != 0:
			return nil, bad("RedisBloom profile with bucket size %d, %d-bit fingerprints, flags %#x", b, fb, flags)
		case d.Header.Seed != 0:
			return nil, bad("RedisBloom profile with seed %d (must be 0)", d.Header.Seed)
		case m0 == 0 || m0&(m0-1) != 0 || m0 > maxTableBits/8/uint64(b):
			return nil, bad("RedisBloom profile with %d buckets", m0)
		}
		if capacity >= (m0+1)*uint64(b) {
			return nil, bad("capacity %d for %d buckets of %d", capacity, m0, b)
		}
		f.lay = layout{mode: modeRedis, b: b, f: 8, bucketBits: 8 * uint64(b), fpMask: 255}
	default:
		return nil, bad("scheme %d (want 0, bloomlab, or 64, RedisBloom)", d.Header.Scheme)
	}
	switch {
	case kicks < 1 || kicks > maxKicksLimit:
		return nil, bad("max kicks %d out of range [1, %d]", kicks, maxKicksLimit)
	case exp > maxExpansion || exp&(exp-1) != 0:
		return nil, bad("expansion %d, want 0 or a power of two up to %d", exp, maxExpansion)
	case nsub < 1 || nsub > maxSubFilters || exp == 0 && nsub > 1:
		return nil, bad("%d sub-filters with expansion %d", nsub, exp)
	}
	// Every sub-filter's size, and the payload they need, before any is
	// allocated.
	ms := make([]uint64, nsub)
	var words, slots uint64
	for i := range ms {
		m := m0
		if i > 0 {
			hi, lo := bits.Mul64(ms[i-1], exp)
			if hi != 0 || lo > maxTableBits/f.lay.bucketBits {
				return nil, bad("sub-filter %d exceeds 2^48 bits", i)
			}
			m = lo
		}
		ms[i] = m
		words += f.tableWords(m)
		slots += m * uint64(b)
		if words > 1<<58 {
			return nil, bad("the sub-filters exceed 2^64 bits")
		}
	}
	if words*8 != d.Header.PayloadLen {
		return nil, bad("payload of %d bytes, the parameters need %d", d.Header.PayloadLen, words*8)
	}
	if n > slots {
		return nil, bad("%d keys in %d slots", n, slots)
	}
	var held uint64
	for _, m := range ms {
		var s sub
		if f.profile == RedisBloom {
			// The table's bytes are the file's: read in place, with the 8
			// bytes of slack the table keeps.
			tb, err := d.Bytes(8*f.tableWords(m), 8)
			if err != nil {
				return nil, fmt.Errorf("cuckoo: %w", err)
			}
			s, err = redisSub(m, b, tb)
			if err != nil {
				return nil, err
			}
		} else {
			w, err := d.Words(f.tableWords(m))
			if err != nil {
				return nil, fmt.Errorf("cuckoo: %w", err)
			}
			if s, err = f.bloomlabSub(m, w); err != nil {
				return nil, err
			}
		}
		e, _ := f.subEntries(&s)
		held += e
		f.subs = append(f.subs, s)
	}
	if err := d.End(); err != nil {
		return nil, fmt.Errorf("cuckoo: %w", err)
	}
	if held != n {
		return nil, bad("N = %d, but %d slots are occupied", n, held)
	}
	return f, nil
}

// bloomlabSub checks a bloomlab table read from a file: zero guard words
// and padding, valid and canonical semi-sorted buckets.
func (f *Filter) bloomlabSub(m uint64, w []uint64) (sub, error) {
	l := &f.lay
	tb := m * l.bucketBits
	nw := uint64(len(w)) - guard
	if w[nw] != 0 || w[nw+1] != 0 || tb%64 != 0 && w[nw-1]>>(tb%64) != 0 {
		return sub{}, fmt.Errorf("cuckoo: bits set after the last bucket: %w", format.ErrFormat)
	}
	s := bloomlabSub(m)
	s.words = w
	if l.mode == modeSemi {
		var e [4]uint64
		for i := uint64(0); i < m; i++ {
			if !semiDecode(l, w, i*l.bucketBits, &e) {
				return sub{}, fmt.Errorf("cuckoo: bucket %d: semi-sorting rank %d ≥ 3876: %w", i, read64(w, i*l.bucketBits)&0xfff, format.ErrFormat)
			}
			if e[0] > e[1] || e[1] > e[2] || e[2] > e[3] {
				return sub{}, fmt.Errorf("cuckoo: bucket %d: fingerprints not in ascending order: %w", i, format.ErrFormat)
			}
		}
	}
	return s, nil
}

// redisSub makes a RedisBloom table of the payload bytes tb read from a
// file (whole words: the bytes past the table's must be zero); tb has at
// least 8 bytes of spare capacity and becomes the table.
func redisSub(m uint64, b int, tb []byte) (sub, error) {
	size := m * uint64(b)
	for _, p := range tb[size:] {
		if p != 0 {
			return sub{}, fmt.Errorf("cuckoo: bytes set after the last bucket: %w", format.ErrFormat)
		}
	}
	return sub{m: m, bytes: tb[: size : size+8]}, nil
}
