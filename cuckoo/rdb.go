package cuckoo

import (
	"encoding/binary"
	"fmt"
	"github.com/bloomlab/bloomlab/internal/redisbloom"
	"io"
	"math"
	"strings"

	"github.com/bloomlab/bloomlab/internal/blrd"
	"github.com/bloomlab/bloomlab/internal/format"
	"github.com/bloomlab/bloomlab/rdb"
)

// RDBTypeName and RDBEncVer are the module type name and the encoding
// version of the value in a Redis RDB file or DUMP payload: RedisBloom's
// CF (rebloom.c CFRdbSave/CFRdbLoad). All integers are the module API's
// unsigned fields:
//
//	numFilters     L, the sub-filters
//	numBuckets     the first sub-filter's buckets
//	numItems       N
//	numDeletes     (encoding version 4; else 0)
//	bucketSize     (encoding version 4; else 2)
//	maxIterations  (encoding version 4; else 20)
//	expansion      (encoding version 4; else 1)
//	then per sub-filter, oldest first:
//	  numBuckets   (encoding version 4; else the first's)
//	  its buckets  (a string of numBuckets·bucketSize bytes, as in
//	               CF.SCANDUMP)
//
// Encoding versions 2 and 3 were written by RedisBloom 1.1 to 2.0, whose
// fingerprints come from a 32-bit hash (MurmurHash2, fingerprint = the
// hash's top byte): RedisBloom 2.2 and later load them and then hash
// with 64 bits, so that most keys those filters hold are no longer found.
// This package refuses them instead.
const (
	rdbTypeName = redisbloom.CFTypeName
	rdbEncVer   = redisbloom.CFEncVer
)

func badRDB(encver int, msg string, args ...any) error {
	return fmt.Errorf("cuckoo: %s RDB value (encoding version %d): %s: %w", rdbTypeName, encver, fmt.Sprintf(msg, args...), format.ErrFormat)
}

// rdbError is a Loader's refusal of the dump an RDB value makes, reworded
// to name the value.
type rdbError struct {
	msg string
	err error
}

func (e *rdbError) Error() string { return e.msg }
func (e *rdbError) Unwrap() error { return e.err }

func loaderRDB(encver int, err error) error {
	msg := strings.TrimPrefix(err.Error(), "cuckoo: RedisBloom dump: ")
	return &rdbError{fmt.Sprintf("cuckoo: %s RDB value (encoding version %d): %s", rdbTypeName, encver, msg), err}
}

// ReadRedisBloomRDB reads one MBbloomCF module value (m's fields, through
// its EOF opcode) and returns a RedisBloom-profile filter that answers as
// the one RedisBloom saved. It builds CF.SCANDUMP's header from the
// value's fields and feeds the sub-filters' bytes to a Loader as data
// chunks, so that it accepts exactly the filters CF.LOADCHUNK accepts
// (Loader): the header is validated before anything is allocated, each
// sub-filter's numBuckets must be the one the header implies and its
// string exactly its length (checked before its bytes are kept), and the
// item count must be the number of occupied slots. Fields that RedisBloom
// would silently truncate to 16 bits (bucketSize, maxIterations,
// expansion) are refused when they do not fit. A newer encoding version
// than 4, and the 32-bit-hashed versions 2 and 3, are refused with an
// error naming the type and the version.
//
// The sub-filters are allocated once, at their final size, as their
// bytes begin (unless the total exceeds the memory the process may use:
// then as their bytes arrive). alloc, when not nil, is called once before
// any of them with their total bytes; its error stops the read.
func ReadRedisBloomRDB(m *rdb.ModuleValue, alloc func(bytes int64) error) (*Filter, error) {
	encver := m.EncVer
	if m.Name != rdbTypeName {
		return nil, fmt.Errorf("cuckoo: a module value of type %s, not %s: %w", m.Name, rdbTypeName, format.ErrFormat)
	}
	if encver > rdbEncVer {
		return nil, fmt.Errorf("cuckoo: %s encoding version %d is newer than this reader knows (2 … %d): %w", rdbTypeName, encver, rdbEncVer, format.ErrFormat)
	}
	r := rdbFields{m: m}
	nf := r.unsigned()
	nb := r.unsigned()
	items := r.unsigned()
	deletes, bs, mi, exp := uint64(0), uint64(redisDefaultBucketSize), uint64(redisDefaultMaxIterations), uint64(redisDefaultExpansion)
	if encver >= 4 {
		deletes = r.unsigned()
		bs = r.unsigned()
		mi = r.unsigned()
		exp = r.unsigned()
	}
	if r.err != nil {
		return nil, r.err
	}
	switch {
	case nf == 0 || nb == 0:
		return nil, badRDB(encver, "%d sub-filters of %d buckets", nf, nb)
	case bs > math.MaxUint16 || mi > math.MaxUint16 || exp > math.MaxUint16:
		return nil, badRDB(encver, "bucket size %d, max iterations %d, expansion %d: each must fit 16 bits", bs, mi, exp)
	}
	hdr := make([]byte, 0, headerSize)
	hdr = binary.LittleEndian.AppendUint64(hdr, items)
	hdr = binary.LittleEndian.AppendUint64(hdr, nb)
	hdr = binary.LittleEndian.AppendUint64(hdr, deletes)
	hdr = binary.LittleEndian.AppendUint64(hdr, nf)
	hdr = binary.LittleEndian.AppendUint16(hdr, uint16(bs))
	hdr = binary.LittleEndian.AppendUint16(hdr, uint16(mi))
	hdr = binary.LittleEndian.AppendUint16(hdr, uint16(exp))
	var ld Loader
	if err := ld.LoadChunk(1, hdr); err != nil {
		return nil, loaderRDB(encver, err)
	}
	if encver < rdbEncVer {
		return nil, badRDB(encver, "written by RedisBloom 1.1 to 2.0, whose fingerprints come from a 32-bit hash: RedisBloom 2.2 and later load it but no longer find most of its keys, and this reader refuses it (re-add the keys to a new filter)")
	}
	_, total := ld.Progress()
	if alloc != nil {
		if err := alloc(int64(total)); err != nil {
			return nil, err
		}
	}
	ld.AllocateWhole()
	subs := blrd.BodyOf(&ld.Session).f.subs
	var off uint64 // bytes fed to the Loader
	for i := range subs {
		want := subs[i].m
		if got := r.unsigned(); r.err != nil {
			return nil, r.err
		} else if got != want {
			return nil, badRDB(encver, "sub-filter %d has %d buckets, the header implies %d", i, got, want)
		}
		size := want * bs
		err := m.ReadStringTo(func(n int64) error {
			if n < 0 || uint64(n) != size {
				return badRDB(encver, "sub-filter %d: %d bytes of buckets, want %d", i, n, size)
			}
			return nil
		}, func(p []byte) error {
			if len(p) == 0 {
				return nil
			}
			if err := ld.LoadChunk(int64(off)+int64(len(p))+1, p); err != nil {
				return loaderRDB(encver, err)
			}
			off += uint64(len(p))
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if err := m.End(); err != nil {
		return nil, err
	}
	f, err := ld.Filter()
	if err != nil {
		return nil, loaderRDB(encver, err)
	}
	return f, nil
}

// rdbFields reads a module value's unsigned fields, keeping the first
// error.
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

// WriteRedisBloomRDB writes the filter's fields as RedisBloom 2.2 and
// later save them (module type MBbloomCF, encoding version 4); the caller
// starts the
// module value and ends it (the EOF opcode). The buckets are written from
// the sub-filters' own bytes, not copied. Only a RedisBloom-profile filter
// has RedisBloom's layout: a bloomlab-profile one is refused, before
// anything is written, with an error wrapping ErrParam. Like the Filter's
// other methods it must not run alongside a change of the filter.
func (f *Filter) WriteRedisBloomRDB(m *rdb.ModuleWriter) error {
	if len(f.subs) == 0 {
		return errZero
	}
	if f.profile != RedisBloom {
		return fmt.Errorf("cuckoo: Redis cannot load a %v-profile filter: only the redisbloom profile has RedisBloom's layout (%s): %w", f.profile, rdbTypeName, ErrParam)
	}
	m.Unsigned(uint64(len(f.subs)))
	m.Unsigned(f.m0)
	m.Unsigned(f.n)
	m.Unsigned(f.deletes)
	m.Unsigned(uint64(f.lay.b))
	m.Unsigned(uint64(f.maxKicks))
	m.Unsigned(f.expansion)
	for i := range f.subs {
		s := &f.subs[i]
		m.Unsigned(s.m)
		if err := m.StringFunc(int64(len(s.bytes)), func(w io.Writer) error { _, err := w.Write(s.bytes); return err }); err != nil {
			return err
		}
	}
	return nil
}
