package topk

import (
	"errors"

	"github.com/bloomlab/bloomlab/internal/rdb"
)

// RDBTypeName and RDBEncVer are the module type name and the encoding
// version of the value in a Redis RDB file or DUMP payload: RedisBloom's TOPK (rm_topk.c TopKRdbSave/TopKRdbLoad): k, width, depth, decay, the buckets, the heap's buckets, then each heap item.
const (
	RDBTypeName = "TopK-TYPE"
	RDBEncVer   = 0
)

// ReadRedisBloomRDB reads one TopK-TYPE module value (m's fields, through its
// EOF opcode). alloc, when not nil, is called with the bytes the value will
// hold before they are allocated, and its error stops the read.
//
// TODO(h25): implement.
func ReadRedisBloomRDB(m *rdb.ModuleValue, alloc func(bytes int64) error) (*Sketch, error) {
	return nil, errors.New("topk: reading TopK-TYPE from an RDB value is not implemented yet")
}

// WriteRedisBloomRDB writes the value's fields as RedisBloom saves them
// and the value's EOF opcode.
//
// TODO(h25): implement.
func (x *Sketch) WriteRedisBloomRDB(m *rdb.ModuleWriter) error {
	return errors.New("topk: writing TopK-TYPE as an RDB value is not implemented yet")
}
