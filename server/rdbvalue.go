package server

import (
	"errors"
	"fmt"

	"github.com/bloomlab/bloomlab/countmin"
	"github.com/bloomlab/bloomlab/cuckoo"
	"github.com/bloomlab/bloomlab/internal/redisbloom"
	"github.com/bloomlab/bloomlab/rdb"
	"github.com/bloomlab/bloomlab/scalable"
	"github.com/bloomlab/bloomlab/tdigest"
	"github.com/bloomlab/bloomlab/topk"
)

// The values of Redis's RDB files and DUMP payloads (package rdb frames
// them): Redis strings, and RedisBloom's five module types, each read and
// written by its kind's ReadRedisBloomRDB and WriteRedisBloomRDB and
// wrapped in the server's value as the commands that create such a key
// wrap it (BF.RESERVE's chain, CF.RESERVE's filter, CMS.INITBYDIM's
// sketch, TOPK.RESERVE's, TDIGEST.CREATE's digest).

// rdbModule is the codec of one RedisBloom module type.
type rdbModule struct {
	name   string // the module type name (TYPE's answer)
	encver int    // the encoding version written (the same for 2.4.23 and 8.6.2)
	read   func(m *rdb.ModuleValue, alloc func(int64) error) (value, error)
}

// rdbModules are RedisBloom's types by module type name.
var rdbModules = map[string]rdbModule{
	scalable.RDBTypeName: {scalable.RDBTypeName, scalable.RDBEncVer, func(m *rdb.ModuleValue, alloc func(int64) error) (value, error) {
		f, err := scalable.ReadRedisBloomRDB(m, alloc)
		if err != nil {
			return nil, err
		}
		return newBF(f), nil
	}},
	redisbloom.CFTypeName: {redisbloom.CFTypeName, redisbloom.CFEncVer, func(m *rdb.ModuleValue, alloc func(int64) error) (value, error) {
		f, err := cuckoo.ReadRedisBloomRDB(m, alloc)
		if err != nil {
			return nil, err
		}
		return &cfValue{f}, nil
	}},
	countmin.RDBTypeName: {countmin.RDBTypeName, countmin.RDBEncVer, func(m *rdb.ModuleValue, alloc func(int64) error) (value, error) {
		s, err := countmin.ReadRedisBloomRDB(m, alloc)
		if err != nil {
			return nil, err
		}
		return &cmsValue{s}, nil
	}},
	topk.RDBTypeName: {topk.RDBTypeName, topk.RDBEncVer, func(m *rdb.ModuleValue, alloc func(int64) error) (value, error) {
		s, err := topk.ReadRedisBloomRDB(m, alloc)
		if err != nil {
			return nil, err
		}
		return &topkValue{s}, nil
	}},
	tdigest.RDBTypeName: {tdigest.RDBTypeName, tdigest.RDBEncVer, func(m *rdb.ModuleValue, alloc func(int64) error) (value, error) {
		d, err := tdigest.ReadRedisBloomRDB(m, alloc)
		if err != nil {
			return nil, err
		}
		return &tdigestValue{d}, nil
	}},
}

// errRDBType is a value of a Redis type the server does not hold (lists,
// sets, hashes, sorted sets, streams, another module's types).
type errRDBType struct{ what string }

func (e *errRDBType) Error() string {
	return "the value is a Redis " + e.what + ", a type bloomlab serve does not hold"
}

// rdbTypeName names a value's Redis type for errors: Redis's name of the
// type byte, or a module value's module type name.
func rdbTypeName(typ byte, m *rdb.ModuleValue) string {
	if typ == rdb.TypeModule2 && m != nil {
		return fmt.Sprintf("module value of type %s (encoding version %d)", m.Name, m.EncVer)
	}
	return rdb.TypeName(typ)
}

// readRDBValue makes the server's value of one RDB value: a string (its
// bytes, which it keeps) or a RedisBloom module value, whose fields it
// reads through their EOF opcode. alloc is called before each allocation
// of a module value with its bytes, and its error stops the read. Any
// other type is an *errRDBType.
func readRDBValue(typ byte, str []byte, m *rdb.ModuleValue, alloc func(int64) error) (value, error) {
	switch typ {
	case rdb.TypeString:
		return &strValue{str}, nil
	case rdb.TypeModule2:
		mod, ok := rdbModules[m.Name]
		if !ok {
			return nil, &errRDBType{rdbTypeName(typ, m)}
		}
		v, err := mod.read(m, alloc)
		if err != nil {
			return nil, err
		}
		if err := m.End(); err != nil {
			return nil, err
		}
		return v, nil
	}
	return nil, &errRDBType{rdbTypeName(typ, m)}
}

// rdbSink is where a value is written: a key of an RDB file or a DUMP
// payload.
type rdbSink interface {
	str(b []byte) error
	module(name string, encver int) (*rdb.ModuleWriter, error)
}

type dumpSink struct{ d *rdb.DumpWriter }

func (s dumpSink) str(b []byte) error { s.d.String(b); return nil }
func (s dumpSink) module(name string, encver int) (*rdb.ModuleWriter, error) {
	return s.d.Module(name, encver)
}

type fileSink struct {
	w   *rdb.Writer
	key []byte
}

func (s fileSink) str(b []byte) error { return s.w.String(s.key, b) }
func (s fileSink) module(name string, encver int) (*rdb.ModuleWriter, error) {
	return s.w.Module(s.key, name, encver)
}

// rdbUnsupported names what a value holds when Redis cannot load it (a
// bloomlab kind, a chain of another layout than RedisBloom's, a sketch of
// bloomlab's profile, a LOADCHUNK in progress), or "" when it is a Redis
// string or a RedisBloom value that writeRDBValue writes.
func rdbUnsupported(v value) string {
	switch x := v.(type) {
	case *strValue, *topkValue, *tdigestValue:
		return ""
	case *bfValue:
		if x.chain == nil {
			return "bloomlab " + x.f.Kind() + " filter"
		}
		switch p := x.chain.Profile(); p {
		case scalable.RedisBloom:
			return ""
		case scalable.Blocked:
			return "bloomlab blocked-layout BF filter"
		default:
			return "bloomlab scalable filter (" + p.String() + " profile)"
		}
	case *cfValue:
		if x.f.Profile() != cuckoo.RedisBloom {
			return "bloomlab cuckoo filter (" + x.f.Profile().String() + " profile)"
		}
		return ""
	case *cmsValue:
		if x.s.Profile() != countmin.RedisBloom {
			return "bloomlab count-min sketch (" + x.s.Profile().String() + " profile)"
		}
		return ""
	case *loadingValue:
		if x.typ() == cfLoadType {
			return "CF.LOADCHUNK in progress"
		}
		return "BF.LOADCHUNK in progress"
	}
	return "bloomlab " + v.typ().name + " value"
}

// errRDBUnsupported is writeRDBValue's refusal of a value Redis cannot
// load.
type errRDBUnsupported struct{ what string }

func (e *errRDBUnsupported) Error() string {
	return "key holds a " + e.what + ", which Redis cannot load"
}

// writeRDBValue writes v to w as Redis with RedisBloom saves it. A
// digest's buffer must be merged first (RedisBloom's save merges it: the
// caller does, under the key's write lock, and logs it as the queries
// do), but for a buffer of total weight 1 that the merge keeps. A value Redis cannot load is an *errRDBUnsupported.
func writeRDBValue(v value, w rdbSink) error {
	if what := rdbUnsupported(v); what != "" {
		return &errRDBUnsupported{what}
	}
	mod := func(name string, encver int, write func(*rdb.ModuleWriter) error) error {
		m, err := w.module(name, encver)
		if err != nil {
			return err
		}
		if err := write(m); err != nil {
			return err
		}
		return m.End()
	}
	switch x := v.(type) {
	case *strValue:
		return w.str(x.b)
	case *bfValue:
		return mod(scalable.RDBTypeName, scalable.RDBEncVer, x.chain.WriteRedisBloomRDB)
	case *cfValue:
		return mod(redisbloom.CFTypeName, redisbloom.CFEncVer, x.f.WriteRedisBloomRDB)
	case *cmsValue:
		return mod(countmin.RDBTypeName, countmin.RDBEncVer, x.s.WriteRedisBloomRDB)
	case *topkValue:
		return mod(topk.RDBTypeName, topk.RDBEncVer, x.s.WriteRedisBloomRDB)
	case *tdigestValue:
		// RedisBloom's merge leaves a buffer whose total weight is at
		// most 1 (one value, nothing merged) as it is, and so does its
		// save: such a buffer is written as RedisBloom writes it.
		if d := x.d; d.UnmergedNodes() != 0 && d.MergedWeight()+d.UnmergedWeight() > 1 {
			return errors.New("server: a digest written with its buffer unmerged")
		}
		return mod(tdigest.RDBTypeName, tdigest.RDBEncVer, x.d.WriteRedisBloomRDB)
	}
	return &errRDBUnsupported{"bloomlab " + v.typ().name + " value"}
}
