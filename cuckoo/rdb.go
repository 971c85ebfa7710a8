package cuckoo

import (
	"errors"

	"github.com/bloomlab/bloomlab/internal/rdb"
)

// RDBTypeName and RDBEncVer are the module type name and the encoding
// version of the value in a Redis RDB file or DUMP payload: RedisBloom's CF (rebloom.c CFRdbSave/CFRdbLoad): numFilters, numBuckets, numItems, numDeletes, bucketSize, maxIterations, expansion, then per filter numBuckets and its buckets; encoding versions 2 to 4.
const (
	RDBTypeName = "MBbloomCF"
	RDBEncVer   = 4
)

// ReadRedisBloomRDB reads one MBbloomCF module value (m's fields, through its
// EOF opcode). alloc, when not nil, is called with the bytes the value will
// hold before they are allocated, and its error stops the read.
//
// TODO(h25): implement.
func ReadRedisBloomRDB(m *rdb.ModuleValue, alloc func(bytes int64) error) (*Filter, error) {
	return nil, errors.New("cuckoo: reading MBbloomCF from an RDB value is not implemented yet")
}

// WriteRedisBloomRDB writes the value's fields as RedisBloom saves them
// and the value's EOF opcode.
//
// TODO(h25): implement.
func (x *Filter) WriteRedisBloomRDB(m *rdb.ModuleWriter) error {
	return errors.New("cuckoo: writing MBbloomCF as an RDB value is not implemented yet")
}
