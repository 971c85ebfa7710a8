package scalable

import (
	"fmt"
	"io"
	"math"

	"github.com/bloomlab/bloomlab/internal/blrd"
	"github.com/bloomlab/bloomlab/internal/format"
	"github.com/bloomlab/bloomlab/rdb"
)

// RDBTypeName and RDBEncVer are the module type name and the encoding
// version of the value in a Redis RDB file or DUMP payload: RedisBloom's
// BF (rebloom.c BFRdbSave/BFRdbLoad). All integers are the module API's
// unsigned fields, the rates its doubles:
//
//	size      keys in the chain (N)
//	nfilters  L, the links
//	options   RedisBloom's option bits (encoding version ≥ 2; else 0)
//	growth    the expansion (encoding version ≥ 4; else 2)
//	then per link, oldest first:
//	  entries  capacity
//	  error    rate (double)
//	  hashes   k
//	  bpe      bits per entry (double)
//	  bits     (encoding version ≥ 1; version 0: ⌊entries·bpe⌋)
//	  n2       (encoding version ≥ 1; version 0: 0)
//	  the bit array (a string of bits/8 bytes, as in BF.SCANDUMP)
//	  size     keys in the link
//
// Encoding versions 0 and 1 (RedisBloom 1.0) have no options: their
// chains hash with 32 bits, which this package does not implement.
const (
	RDBTypeName = "MBbloom--"
	RDBEncVer   = 4
)

// rdbMinEncVer is the oldest encoding version with options (FORCE64):
// RedisBloom 1.1's.
const rdbMinEncVer = 2

func badRDB(encver int, msg string, args ...any) error {
	return fmt.Errorf("scalable: %s RDB value (encoding version %d): %s: %w", RDBTypeName, encver, fmt.Sprintf(msg, args...), format.ErrFormat)
}

// ReadRedisBloomRDB reads one MBbloom-- module value (m's fields, through
// its EOF opcode) of any encoding version RedisBloom has written, 0 to
// RDBEncVer, and returns a RedisBloom-profile chain that answers as the
// one RedisBloom saved. A newer encoding version, the 32-bit hashing of
// versions 0 and 1, and a value RedisBloom's loader or its integrity
// check (bloom_validate_integrity) refuses are errors, as is any value
// BF.LOADCHUNK would refuse as a dump (Loader): the header fields are
// checked against each other and this package's limits before anything
// is allocated, a link's bit array must have exactly the length its bits
// announce (checked before its bytes are kept), no bit may be set beyond
// a link's positions, and the links' sizes must add up to the chain's.
//
// Each link's bits are allocated once, at their final size, when its bit
// array begins (unless the value's total exceeds the memory the process
// may use: then as its bytes arrive). alloc, when not nil, is called just
// before, with the bytes of that link's bit array (the bytes the value
// adds, as every kind's ReadRedisBloomRDB calls it: the calls sum to the
// value's size); its error stops the read before the allocation.
func ReadRedisBloomRDB(m *rdb.ModuleValue, alloc func(bytes int64) error) (*Filter, error) {
	encver := m.EncVer
	if m.Name != RDBTypeName {
		return nil, fmt.Errorf("scalable: a module value of type %s, not %s: %w", m.Name, RDBTypeName, format.ErrFormat)
	}
	if encver > RDBEncVer {
		return nil, fmt.Errorf("scalable: %s encoding version %d is newer than this reader knows (0 … %d): %w", RDBTypeName, encver, RDBEncVer, format.ErrFormat)
	}
	r := rdbFields{m: m}
	size := r.unsigned()
	nf := r.unsigned()
	var options uint64
	growth := uint64(2)
	if encver >= rdbMinEncVer {
		options = r.unsigned()
	}
	if encver >= 4 {
		growth = r.unsigned()
	}
	if r.err != nil {
		return nil, r.err
	}
	if encver < rdbMinEncVer {
		return nil, badRDB(encver, "RedisBloom 1.0's chains hash with 32 bits (no FORCE64 option), which is not supported")
	}
	if err := checkRedisChain(nf, options); err != nil {
		return nil, badRDB(encver, "%v", err)
	}
	if growth > math.MaxUint32 {
		return nil, badRDB(encver, "expansion %d does not fit 32 bits", growth)
	}
	f := &Filter{profile: RedisBloom, growth: uint32(growth), ratio: redisTighten, options: uint32(options)}
	f.card.Store(size)
	b := &loadBody{f: f, ls: make([]*link, 0, nf)}
	var total, sum uint64 // bit-array bytes so far; the links' sizes
	for i := 0; i < int(nf); i++ {
		entries := r.unsigned()
		errRate := r.double()
		hashes := r.unsigned()
		bpe := r.double()
		bitsN := r.unsigned() // encoding versions ≥ 1, the only ones read
		n2 := r.unsigned()
		if r.err != nil {
			return nil, r.err
		}
		switch {
		case hashes > math.MaxUint32:
			return nil, badRDB(encver, "link %d: %d hashes", i, hashes)
		case n2 > math.MaxUint8:
			return nil, badRDB(encver, "link %d: n2 = %d", i, n2)
		}
		bytes := bitsN / 8
		if err := checkRedisLink(bytes, bitsN, errRate, bpe, uint32(hashes), entries, uint8(n2)); err != nil {
			return nil, badRDB(encver, "link %d: %v", i, err)
		}
		l := makeRedisLink(redisGeometry{bits: bitsN, entries: entries, bpe: bpe, k: int(hashes), n2: uint8(n2)}, errRate, nil, 0)
		b.ls = append(b.ls, l)
		var have uint64
		err := m.ReadStringTo(func(n int64) error {
			if n < 0 || uint64(n) != bytes {
				return badRDB(encver, "link %d: a bit array of %d bytes for %d bits (want %d)", i, n, bitsN, bytes)
			}
			total += bytes
			if alloc != nil {
				if err := alloc(int64(bytes)); err != nil {
					return err
				}
			}
			room := bytes
			if limit := blrd.MemLimit(); limit != 0 && total > limit {
				room = min(bytes, 1<<20) // grows as the bytes arrive
			}
			b.Grow(i, room)
			return nil
		}, func(p []byte) error {
			if uint64(len(p)) > bytes-have {
				return badRDB(encver, "link %d: more than the %d bytes of its bit array", i, bytes)
			}
			b.Append(i, have, p)
			have += uint64(len(p))
			return nil
		})
		if err != nil {
			return nil, err
		}
		if have != bytes {
			return nil, badRDB(encver, "link %d: %d of the %d bytes of its bit array", i, have, bytes)
		}
		l.size = r.unsigned()
		if r.err != nil {
			return nil, r.err
		}
		var over bool
		if sum, over = addOverflow(sum, l.size); over {
			return nil, badRDB(encver, "link sizes overflow")
		}
	}
	if err := m.End(); err != nil {
		return nil, err
	}
	if sum != size {
		return nil, badRDB(encver, "the chain holds %d keys, its links %d", size, sum)
	}
	for i, l := range b.ls {
		if !l.tailClear() {
			return nil, badRDB(encver, "link %d: bits set beyond its %d positions", i, l.mod)
		}
	}
	f.links.Store(&b.ls)
	return f, nil
}

// rdbFields reads a module value's fields, keeping the first error.
type rdbFields struct {
	m   *rdb.ModuleValue
	err error
}

func (r *rdbFields) unsigned() uint64 {
	if r.err != nil {
		return 0
	}
	v, err := r.m.ReadUnsigned()
	r.err = err
	return v
}

func (r *rdbFields) double() float64 {
	if r.err != nil {
		return 0
	}
	v, err := r.m.ReadDouble()
	r.err = err
	return v
}

// WriteRedisBloomRDB writes the chain's fields as RedisBloom 2.2 and later
// save them (encoding version RDBEncVer), in one consistent state (adds
// wait meanwhile); the caller starts the module value and ends it (the
// EOF opcode). The bit arrays are written from the links' words, a piece
// at a time. Only a RedisBloom-profile chain has RedisBloom's layout: the
// others (bloomlab's, the blocked one) are refused, before anything is
// written, with an error wrapping ErrParam.
func (f *Filter) WriteRedisBloomRDB(m *rdb.ModuleWriter) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	ls := f.snapshot()
	if len(ls) == 0 {
		return errZero
	}
	if f.profile != RedisBloom {
		return fmt.Errorf("scalable: Redis cannot load a %v-profile chain: only the redisbloom profile has RedisBloom's layout (%s): %w", f.profile, RDBTypeName, ErrParam)
	}
	m.Unsigned(f.card.Load())
	m.Unsigned(uint64(len(ls)))
	m.Unsigned(uint64(f.options))
	m.Unsigned(uint64(f.growth))
	for _, l := range ls {
		m.Unsigned(l.entries)
		m.Double(l.errRate)
		m.Unsigned(uint64(l.k))
		m.Double(l.bpe)
		m.Unsigned(l.bits)
		m.Unsigned(uint64(l.n2))
		if err := m.StringFunc(int64(l.bits/8), func(w io.Writer) error { return writeLinkBytes(w, l.words, 0, l.bits/8) }); err != nil {
			return err
		}
		m.Unsigned(l.size)
	}
	return nil
}
