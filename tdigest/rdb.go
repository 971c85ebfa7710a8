package tdigest

import (
	"errors"

	"github.com/bloomlab/bloomlab/internal/rdb"
)

// RDBTypeName and RDBEncVer are the module type name and the encoding
// version of the value in a Redis RDB file or DUMP payload: RedisBloom's TDIGEST (rm_tdigest.c TDigestRdbSave/TDigestRdbLoad): compression, min, max, cap, merged_nodes, unmerged_nodes, total_compressions, merged_weight, unmerged_weight, then the merged means and weights.
const (
	RDBTypeName = "TDIS-TYPE"
	RDBEncVer   = 0
)

// ReadRedisBloomRDB reads one TDIS-TYPE module value (m's fields, through its
// EOF opcode). alloc, when not nil, is called with the bytes the value will
// hold before they are allocated, and its error stops the read.
//
// TODO(h25): implement.
func ReadRedisBloomRDB(m *rdb.ModuleValue, alloc func(bytes int64) error) (*Digest, error) {
	return nil, errors.New("tdigest: reading TDIS-TYPE from an RDB value is not implemented yet")
}

// WriteRedisBloomRDB writes the value's fields as RedisBloom saves them
// and the value's EOF opcode.
//
// TODO(h25): implement.
func (x *Digest) WriteRedisBloomRDB(m *rdb.ModuleWriter) error {
	return errors.New("tdigest: writing TDIS-TYPE as an RDB value is not implemented yet")
}
