package server

import (
	"errors"
	"io"
)

// RDBWriteOptions configure WriteRDB.
type RDBWriteOptions struct {
	// Version is the RDB version written: 10 (the default; Redis 7.0 to
	// 8.x load it) to 12.
	Version int
	// Dialect picks the module encoding versions and the AUX fields
	// (redis-ver) of the RedisBloom release named.
	Dialect Dialect
	// SkipUnsupported leaves out the keys of bloomlab's own kinds, which
	// Redis cannot load, instead of refusing the whole file.
	SkipUnsupported bool
	// NoCompress writes strings without LZF compression (Redis's
	// rdbcompression no).
	NoCompress bool
}

// RDBStats count what WriteRDB or a load of an RDB file did.
type RDBStats struct {
	Keys    int64            // keys written or loaded
	Skipped map[string]int64 // keys left out, by type or kind name
	Expired int64            // keys dropped because they had expired
}

// WriteRDB writes the dataset of a stopped server's directory dir (its
// snapshot and log replayed as a start does, under the directory's lock,
// which a running server holds) to w as a Redis RDB file.
//
// TODO(h25-server): implement.
func WriteRDB(dir string, w io.Writer, opt RDBWriteOptions) (RDBStats, error) {
	return RDBStats{}, errors.New("server: WriteRDB is not implemented yet")
}
