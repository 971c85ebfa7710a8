package topk

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/rdb"
)

// RDBTypeName and RDBEncVer are the module type name and the encoding
// version of the value in a Redis RDB file or DUMP payload: RedisBloom's
// TOPK (rm_topk.c TopKRdbSave/TopKRdbLoad, topk.h; the same in RedisBloom
// 2.4 and 8.6). Its fields:
//
//	k, width, depth          unsigned integers (uint32 in RedisBloom)
//	decay                    double
//	buckets                  string of width·depth·8 bytes: per bucket
//	                         fingerprint, count (uint32, little-endian)
//	heap                     string of k·24 bytes: RedisBloom's HeapBucket
//	                         structs as they lie in memory on a 64-bit
//	                         machine: fingerprint, item length (uint32),
//	                         the item's char* (8 bytes), count (uint32),
//	                         4 bytes of padding
//	k items                  strings: each heap slot's item and a NUL byte,
//	                         or the NUL alone for a slot without an item
const (
	RDBTypeName = "TopK-TYPE"
	RDBEncVer   = 0
)

// heapBucketSize is sizeof(HeapBucket) on a 64-bit machine; the offsets of
// its fields follow.
const (
	heapBucketSize = 24
	hbFP           = 0
	hbLen          = 4
	hbCount        = 16
)

// ReadRedisBloomRDB reads one TopK-TYPE module value (m's fields, through
// its EOF opcode). The sketch keeps what RedisBloom's load keeps: the
// parameters, the buckets, and of each heap slot the fingerprint, item
// length and count of its struct with the item of its string (the
// struct's pointer and padding bytes are ignored). Its decay generator
// starts from DefaultSeed (Config.Seed): a file holds no generator state,
// and RedisBloom's is the C library's rand(), shared by the process.
// (RedisBloom's load also rebuilds the decay table by repeated products,
// decay^i = decay^(i−1)·decay, where TOPK.RESERVE takes powers, as New
// does here; the last bits of a probability can differ, which only
// matters as much as the coin flips themselves.)
//
// alloc, when not nil, is called before anything is allocated for the
// value: once with the bytes of its buckets, heap and decay table, then
// once per heap item with the item's length. The sum is Bytes(). Its
// error stops the read.
//
// Everything is checked before it is allocated or used, with errors
// wrapping ErrFormat: an encoding version above RDBEncVer (newer than
// RedisBloom 2.4 to 8.6 write), k, width or depth of 0 or beyond 2^32 − 1
// (RedisBloom's fields are 32 bits) or beyond New's bounds, a decay
// outside (0, 1], strings of other lengths than the parameters give, an
// item beyond MaxItemLen, or without its NUL, or whose length is not the
// struct's (RedisBloom saves an item up to its first NUL byte, so an item
// holding one comes back shorter than its struct says: such a file cannot
// be read back as RedisBloom saved it), a fingerprint that is not the
// item's, and a slot without an item that is neither empty (all zero) nor
// the empty item (RedisBloom loads the empty item as no item, with the
// empty item's fingerprint: it is read back as the empty item here).
func ReadRedisBloomRDB(m *rdb.ModuleValue, alloc func(bytes int64) error) (*Sketch, error) {
	bad := func(msg string, args ...any) error {
		return fmt.Errorf("topk: RDB value of "+RDBTypeName+": "+msg+": %w", append(args, ErrFormat)...)
	}
	wrap := func(what string, err error) error {
		return fmt.Errorf("topk: RDB value of %s: %s: %w", RDBTypeName, what, err)
	}
	switch {
	case m.Name != RDBTypeName:
		return nil, bad("the value is a %s", m.Name)
	case m.EncVer > RDBEncVer:
		return nil, bad("encoding version %d is newer than the %d RedisBloom 2.4 to 8.6 write", m.EncVer, RDBEncVer)
	}
	var p [3]uint64 // k, width, depth
	for i := range p {
		v, err := m.ReadUnsigned()
		if err != nil {
			return nil, wrap("parameters", err)
		}
		if v > math.MaxUint32 {
			return nil, bad("k, width or depth of %d, beyond RedisBloom's 32 bits", v)
		}
		p[i] = v
	}
	decay, err := m.ReadDouble()
	if err != nil {
		return nil, wrap("decay", err)
	}
	cfg := Config{K: uint32(p[0]), Width: uint32(p[1]), Depth: uint32(p[2]), Decay: decay}
	if err := check(cfg); err != nil {
		return nil, bad("%v", err)
	}
	cfg.Seed = DefaultSeed
	s := &Sketch{cfg: cfg, rng: cfg.Seed}
	s.init()
	nb := uint64(cfg.Width) * uint64(cfg.Depth)
	k := uint64(cfg.K)

	// The buckets.
	rr := records{size: 8, each: func(i uint64, r []byte) {
		s.data[i] = bucket{binary.LittleEndian.Uint32(r), binary.LittleEndian.Uint32(r[4:])}
	}}
	err = m.ReadStringTo(func(n int64) error {
		if uint64(n) != 8*nb {
			return bad("buckets of %d bytes, width·depth = %d buckets need %d", n, nb, 8*nb)
		}
		if alloc != nil {
			if err := alloc(s.Bytes() + int64(8*nb+48*k)); err != nil {
				return err
			}
		}
		s.data = make([]bucket, nb)
		return nil
	}, rr.piece)
	if err != nil {
		return nil, wrap("buckets", err)
	}

	// The heap's structs.
	var lens []uint32 // each slot's item length
	hr := records{size: heapBucketSize, each: func(i uint64, r []byte) {
		s.heap[i] = slot{fp: binary.LittleEndian.Uint32(r[hbFP:]), count: binary.LittleEndian.Uint32(r[hbCount:])}
		lens[i] = binary.LittleEndian.Uint32(r[hbLen:])
	}}
	err = m.ReadStringTo(func(n int64) error {
		if uint64(n) != heapBucketSize*k {
			return bad("heap of %d bytes, k = %d slots need %d", n, k, heapBucketSize*k)
		}
		s.heap = make([]slot, k)
		lens = make([]uint32, k)
		return nil
	}, hr.piece)
	if err != nil {
		return nil, wrap("heap", err)
	}

	// The items.
	for i := range s.heap {
		h := &s.heap[i]
		var size int64
		var last byte
		err := m.ReadStringTo(func(n int64) error {
			switch {
			case n < 1:
				return bad("heap slot %d: an empty string, not even the NUL that ends an item", i)
			case n-1 > MaxItemLen:
				return bad("heap slot %d: item of %d bytes, beyond %d", i, n-1, MaxItemLen)
			case n > 1 && uint64(n-1) != uint64(lens[i]):
				return bad("heap slot %d: an item string of %d bytes for an item of %d (RedisBloom saves an item up to its first NUL byte)", i, n-1, lens[i])
			}
			size = n
			if n > 1 {
				if alloc != nil {
					if err := alloc(n - 1); err != nil {
						return err
					}
				}
				h.item = make([]byte, 0, n-1)
			}
			return nil
		}, func(p []byte) error {
			if len(p) == 0 {
				return nil
			}
			last = p[len(p)-1]
			room := int(size-1) - len(h.item)
			h.item = append(h.item, p[:min(len(p), room)]...)
			return nil
		})
		if err != nil {
			return nil, wrap(fmt.Sprintf("heap slot %d", i), err)
		}
		switch {
		case last != 0:
			return nil, bad("heap slot %d: the item string does not end in a NUL byte", i)
		case size > 1:
			h.full = true
			s.itemCap += int64(cap(h.item))
		case h.fp == 0 && lens[i] == 0 && h.count == 0:
			// An empty slot.
		case lens[i] == 0 && h.fp == hashing.MurmurHash2([]byte{}, fpSeed):
			h.item, h.full = []byte{}, true
		default:
			return nil, bad("heap slot %d has no item but fingerprint %#x, item length %d, count %d", i, h.fp, lens[i], h.count)
		}
		if h.full && hashing.MurmurHash2(h.item, fpSeed) != h.fp {
			return nil, bad("heap slot %d: fingerprint %#x is not its item's", i, h.fp)
		}
	}
	if err := m.End(); err != nil {
		return nil, wrap("end", err)
	}
	return s, nil
}

// records hands on the fixed-size records of a string read in pieces.
type records struct {
	size  int
	carry [heapBucketSize]byte
	n     int    // bytes in carry
	i     uint64 // records handed on
	each  func(i uint64, r []byte)
}

func (r *records) piece(p []byte) error {
	if r.n > 0 {
		c := copy(r.carry[r.n:r.size], p)
		r.n += c
		p = p[c:]
		if r.n < r.size {
			return nil
		}
		r.each(r.i, r.carry[:r.size])
		r.i++
		r.n = 0
	}
	for len(p) >= r.size {
		r.each(r.i, p[:r.size])
		r.i++
		p = p[r.size:]
	}
	r.n = copy(r.carry[:], p)
	return nil
}

// WriteRedisBloomRDB writes the sketch's fields as RedisBloom's
// TopKRdbSave does; the caller writes the value's EOF opcode
// (rdb.ModuleWriter.End). The values are RedisBloom's for the same
// sketch but for two things. In each heap slot's struct the 8 bytes of the
// item's pointer (and the 4 of padding) are written as zeros, where Redis
// writes the address its item had in memory: those bytes never match a
// file Redis wrote, and its load ignores them. And an item holding a NUL
// byte is written whole with its NUL (its struct's length), where
// RedisBloom cuts it at its first NUL, so that it loads back whole, here
// and in RedisBloom. The generator's state is not written (RedisBloom has
// no place for it). The zero Sketch is refused (ErrParam).
func (s *Sketch) WriteRedisBloomRDB(m *rdb.ModuleWriter) error {
	if len(s.heap) == 0 {
		return fmt.Errorf("topk: WriteRedisBloomRDB of a zero Sketch (make one with New or ReadFrom): %w", ErrParam)
	}
	m.Unsigned(uint64(s.cfg.K))
	m.Unsigned(uint64(s.cfg.Width))
	m.Unsigned(uint64(s.cfg.Depth))
	m.Double(s.cfg.Decay)
	const chunk = 64 << 10
	err := m.StringFunc(int64(len(s.data))*8, func(w io.Writer) error {
		buf := make([]byte, 0, min(chunk, 8*len(s.data)))
		for _, b := range s.data {
			buf = binary.LittleEndian.AppendUint32(buf, b.fp)
			buf = binary.LittleEndian.AppendUint32(buf, b.count)
			if len(buf) == cap(buf) {
				if _, err := w.Write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
		}
		_, err := w.Write(buf)
		return err
	})
	if err != nil {
		return err
	}
	err = m.StringFunc(int64(len(s.heap))*heapBucketSize, func(w io.Writer) error {
		buf := make([]byte, 0, min(chunk, heapBucketSize*len(s.heap)))
		for _, h := range s.heap {
			var r [heapBucketSize]byte
			binary.LittleEndian.PutUint32(r[hbFP:], h.fp)
			binary.LittleEndian.PutUint32(r[hbLen:], uint32(len(h.item)))
			binary.LittleEndian.PutUint32(r[hbCount:], h.count)
			buf = append(buf, r[:]...)
			if len(buf) == cap(buf) {
				if _, err := w.Write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
		}
		_, err := w.Write(buf)
		return err
	})
	if err != nil {
		return err
	}
	nul := []byte{0}
	for _, h := range s.heap {
		if len(h.item) == 0 { // no item, or the empty item: the NUL alone
			m.String(nul)
			continue
		}
		err := m.StringFunc(int64(len(h.item))+1, func(w io.Writer) error {
			if _, err := w.Write(h.item); err != nil {
				return err
			}
			_, err := w.Write(nul)
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}
