package scalable

import (
	"errors"

	"github.com/bloomlab/bloomlab/internal/rdb"
)

// RDBTypeName and RDBEncVer are the module type name and the encoding
// version of the value in a Redis RDB file or DUMP payload: RedisBloom's BF (rebloom.c BFRdbSave/BFRdbLoad): size, nfilters, options, growth, then per link entries, error, hashes, bpe, bits, n2, the bit array, size; encoding versions 0 to 4.
const (
	RDBTypeName = "MBbloom--"
	RDBEncVer   = 4
)

// ReadRedisBloomRDB reads one MBbloom-- module value (m's fields, through its
// EOF opcode). alloc, when not nil, is called with the bytes the value will
// hold before they are allocated, and its error stops the read.
//
// TODO(h25): implement.
func ReadRedisBloomRDB(m *rdb.ModuleValue, alloc func(bytes int64) error) (*Filter, error) {
	return nil, errors.New("scalable: reading MBbloom-- from an RDB value is not implemented yet")
}

// WriteRedisBloomRDB writes the value's fields as RedisBloom saves them
// and the value's EOF opcode.
//
// TODO(h25): implement.
func (x *Filter) WriteRedisBloomRDB(m *rdb.ModuleWriter) error {
	return errors.New("scalable: writing MBbloom-- as an RDB value is not implemented yet")
}
