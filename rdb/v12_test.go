package rdb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
)

// v12File builds a file of RDB version 12 framed as Redis 7.4 and 8.x
// write it: their AUX fields, a function library, a module's AUX data,
// SELECTDB, RESIZEDB, a cluster node's SLOT_INFO before each slot's keys,
// a module value, a string with an expiry and LRU idle time, and the four
// kinds of hash with field expiry (types 22 to 25, named and skipped).
func v12File(version string) []byte {
	var e enc
	e.buf = append(e.buf, "REDIS"+version...)
	for _, kv := range [][2]string{
		{"redis-ver", "8.0.2"}, {"redis-bits", "64"}, {"ctime", "1764147600"},
		{"used-mem", "1441792"}, {"repl-stream-db", "0"},
		{"repl-id", "6f1c1bd9e06ad1d2ad3e1ab48d32cfd1e6f5a7a1"}, {"repl-offset", "0"}, {"aof-base", "0"},
	} {
		e.byte(opAux)
		e.string([]byte(kv[0]))
		e.string([]byte(kv[1]))
	}
	e.byte(opFunction2)
	e.string([]byte("#!lua name=mylib\nredis.register_function('f', function() return 1 end)"))
	e.byte(opModuleAux)
	id, _ := ModuleID("MBbloom--", 4)
	e.length(id)
	e.length(modUint)
	e.length(2)
	e.length(modEOF)
	e.byte(opSelectDB)
	e.length(0)
	e.byte(opResizeDB)
	e.length(6)
	e.length(1)

	e.byte(opSlotInfo)
	e.length(866)
	e.length(1)
	e.length(0)
	e.byte(TypeModule2)
	e.string([]byte("bf"))
	e.length(id)
	for _, v := range []uint64{1, 100} {
		e.length(modUint)
		e.length(v)
	}
	e.length(modDouble)
	e.buf = binary.LittleEndian.AppendUint64(e.buf, 0x3f847ae147ae147b)
	e.length(modString)
	e.string(make([]byte, 120))
	e.length(modEOF)

	e.byte(opSlotInfo)
	e.length(12182)
	e.length(1)
	e.length(1)
	e.byte(opExpireMs)
	e.buf = binary.LittleEndian.AppendUint64(e.buf, 4102444800000)
	e.byte(opIdle)
	e.length(30)
	e.byte(TypeString)
	e.string([]byte("s"))
	e.string([]byte("a value"))

	e.byte(22) // hash with field expiry, pre-GA: n, then n × (ttl, field, value)
	e.string([]byte("h22"))
	e.length(2)
	for _, f := range []string{"a", "b"} {
		e.length(1764147600000)
		e.string([]byte(f))
		e.string([]byte("v"))
	}
	e.byte(23) // its listpack, pre-GA: the listpack
	e.string([]byte("h23"))
	e.string([]byte("listpack bytes"))
	e.byte(24) // hash with field expiry: min expiry, n, n × (ttl, field, value)
	e.string([]byte("h24"))
	e.buf = binary.LittleEndian.AppendUint64(e.buf, 1764147600000)
	e.length(2)
	for _, ttl := range []uint64{0, 5} {
		e.length(ttl)
		e.string([]byte("field"))
		e.string([]byte("value"))
	}
	e.byte(25) // its listpack: min expiry, the listpack
	e.string([]byte("h25"))
	e.buf = binary.LittleEndian.AppendUint64(e.buf, 1764147600000)
	e.string([]byte("listpack bytes, longer than twenty, compressible compressible"))
	e.byte(TypeString)
	e.string([]byte("last"))
	e.string([]byte("12"))
	e.byte(opEOF)
	return binary.LittleEndian.AppendUint64(e.buf, CRC64(e.buf))
}

// TestVersion12: a version 12 file framed as Redis 7.4 and 8.x write it
// reads to its end with its checksum verified: AUX fields kept, the
// function library, module AUX data and SLOT_INFO passed over, the module
// value's fields read, the expiry and idle time on their key, and each
// hash with field expiry named by Redis's name for its type (types 22 to
// 25) and skipped. The same file as version 13 is refused by name.
func TestVersion12(t *testing.T) {
	file := v12File("0012")
	r, err := NewReader(bytes.NewReader(file), Limits{InputSize: int64(len(file))})
	must(t, err)
	if r.Version() != 12 {
		t.Fatalf("version %d", r.Version())
	}
	e, err := r.Next()
	must(t, err)
	if string(e.Key) != "bf" || e.Module == nil || e.Module.Name != "MBbloom--" || e.Module.EncVer != 4 {
		t.Fatalf("first entry: %q %+v", e.Key, e.Module)
	}
	fs := readFields(t, e.Module)
	if len(fs) != 4 || fs[1].u != 100 || fs[2].d != 0.01 || len(fs[3].b) != 120 {
		t.Fatalf("module fields: %+v", fs)
	}
	e, err = r.Next()
	must(t, err)
	if string(e.Key) != "s" || string(e.String) != "a value" || e.ExpireMs != 4102444800000 || e.Idle != 30 {
		t.Fatalf("string: %+v", e)
	}
	names := map[string]string{
		"h22": "hash (with field expiry, pre-GA)", "h23": "hash (listpack, with field expiry, pre-GA)",
		"h24": "hash (with field expiry)", "h25": "hash (listpack, with field expiry)",
	}
	for _, key := range []string{"h22", "h23", "h24", "h25"} {
		_, err := r.Next()
		var ue *UnsupportedTypeError
		if !errors.As(err, &ue) || string(ue.Key) != key || !strings.Contains(err.Error(), "type "+names[key]+",") {
			t.Fatalf("%s: %v, want its type named %q", key, err, names[key])
		}
		if !CanSkip(ue.Type) {
			t.Fatalf("%s: type %d cannot be skipped", key, ue.Type)
		}
		must(t, r.Skip())
	}
	e, err = r.Next()
	must(t, err)
	if string(e.Key) != "last" || string(e.String) != "12" || e.ExpireMs != -1 || e.Idle != -1 {
		t.Fatalf("last: %+v", e)
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("end: %v", err)
	}
	if len(r.Aux()) != 8 || r.Aux()[0] != (AuxField{"redis-ver", "8.0.2"}) || r.ResizeKeys != 6 {
		t.Fatalf("aux %v, resize %d", r.Aux(), r.ResizeKeys)
	}
	for cut := 9; cut < len(file); cut += 7 {
		if err := readToEnd(file[:cut]); err == nil {
			t.Fatalf("cut at %d accepted", cut)
		}
	}

	_, err = NewReader(bytes.NewReader(v12File("0013")), Limits{})
	if err == nil || !strings.Contains(err.Error(), "RDB version 13 is newer") {
		t.Fatalf("version 13: %v", err)
	}
}
