package server

import (
	"fmt"

	"github.com/bloomlab/bloomlab/rdb"
)

// The values of Redis's RDB files and DUMP payloads (package rdb frames
// them): Redis strings, and RedisBloom's five module types, each read and
// written by the codec its family declares (family.rdb: cmd_bf.go,
// cmd_cf.go, cmd_cms.go, cmd_topk.go, cmd_tdigest.go, cmd_strings.go).
// This file only looks codecs up.

// rdbCodecOf is the codec of RedisBloom's module type name, or of Redis
// strings for "", nil if no family declares one.
func rdbCodecOf(module string) *rdbCodec {
	if module == carrierModule {
		return carrierCodec // replication.go: bloomlab's own values, to a serve replica
	}
	for _, f := range families {
		if f.rdb != nil && f.rdb.module == module {
			return f.rdb
		}
	}
	return nil
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
		if codec := rdbCodecOf(""); codec != nil {
			return codec.readString(str), nil
		}
	case rdb.TypeModule2:
		codec := rdbCodecOf(m.Name)
		if codec == nil {
			return nil, &errRDBType{rdbTypeName(typ, m)}
		}
		v, err := codec.read(m, alloc)
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
// string or a RedisBloom value that writeRDBValue writes: its family's
// codec says.
func rdbUnsupported(v value) string {
	codec := v.typ().fam.rdb
	if codec == nil {
		return "bloomlab " + v.typ().name + " value"
	}
	if codec.unsupported != nil {
		return codec.unsupported(v)
	}
	return ""
}

// errRDBUnsupported is writeRDBValue's refusal of a value Redis cannot
// load.
type errRDBUnsupported struct{ what string }

func (e *errRDBUnsupported) Error() string {
	return "key holds a " + e.what + ", which Redis cannot load"
}

// writeRDBValue writes v to w as Redis with RedisBloom saves it, with its
// family's codec. A value Redis cannot load is an *errRDBUnsupported.
func writeRDBValue(v value, w rdbSink) error {
	if what := rdbUnsupported(v); what != "" {
		return &errRDBUnsupported{what}
	}
	codec := v.typ().fam.rdb
	if codec.module == "" {
		return w.str(codec.writeString(v))
	}
	m, err := w.module(codec.module, codec.encver)
	if err != nil {
		return err
	}
	if err := codec.write(v, m); err != nil {
		return err
	}
	return m.End()
}
