package countmin

import (
	"errors"

	"github.com/bloomlab/bloomlab/internal/rdb"
)

// RDBTypeName and RDBEncVer are the module type name and the encoding
// version of the value in a Redis RDB file or DUMP payload: RedisBloom's CMS (rm_cms.c CMSRdbSave/CMSRdbLoad): width, depth, counter, the counter array.
const (
	RDBTypeName = "CMSk-TYPE"
	RDBEncVer   = 0
)

// ReadRedisBloomRDB reads one CMSk-TYPE module value (m's fields, through its
// EOF opcode). alloc, when not nil, is called with the bytes the value will
// hold before they are allocated, and its error stops the read.
//
// TODO(h25): implement.
func ReadRedisBloomRDB(m *rdb.ModuleValue, alloc func(bytes int64) error) (*Sketch, error) {
	return nil, errors.New("countmin: reading CMSk-TYPE from an RDB value is not implemented yet")
}

// WriteRedisBloomRDB writes the value's fields as RedisBloom saves them
// and the value's EOF opcode.
//
// TODO(h25): implement.
func (x *Sketch) WriteRedisBloomRDB(m *rdb.ModuleWriter) error {
	return errors.New("countmin: writing CMSk-TYPE as an RDB value is not implemented yet")
}
