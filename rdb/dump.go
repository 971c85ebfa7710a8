package rdb

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// ErrDumpPayload is Redis's answer to a RESTORE payload with a wrong
// checksum or a version newer than it knows.
var ErrDumpPayload = errors.New("ERR DUMP payload version or checksum are wrong")

// DumpVersion is the RDB version written into DUMP payloads by EncodeDump
// callers that have no reason to choose another: Redis 7.0's.
const DumpVersion = 10

// SplitDump checks a DUMP payload (a value, its 2-byte RDB version and the
// 8-byte CRC-64 of both, little-endian) and returns the value and the
// version. A payload shorter than its footer, with a wrong checksum, or of
// a version above MaxVersion is ErrDumpPayload, as in Redis.
func SplitDump(payload []byte) (value []byte, version int, err error) {
	if len(payload) < 10 {
		return nil, 0, ErrDumpPayload
	}
	n := len(payload) - 10
	version = int(binary.LittleEndian.Uint16(payload[n:]))
	if version > MaxVersion {
		return nil, version, ErrDumpPayload
	}
	if CRC64(payload[:n+2]) != binary.LittleEndian.Uint64(payload[n+2:]) {
		return nil, version, ErrDumpPayload
	}
	return payload[:n], version, nil
}

// EncodeDump appends value's footer (version and CRC-64) to a copy of it.
func EncodeDump(value []byte, version int) []byte {
	p := make([]byte, 0, len(value)+10)
	p = append(p, value...)
	p = binary.LittleEndian.AppendUint16(p, uint16(version))
	return binary.LittleEndian.AppendUint64(p, CRC64(p))
}

// Value is one decoded DUMP payload: its type, then a string's bytes or a
// module value's fields to read (Module), then Finish.
type Value struct {
	Version int
	Type    byte
	String  []byte
	Module  *ModuleValue
	in      *input
}

// ReadDump checks a DUMP payload (SplitDump) and starts reading its value.
// A type other than a string or a module value is an
// *UnsupportedTypeError (with no key).
func ReadDump(payload []byte, lim Limits) (*Value, error) {
	value, version, err := SplitDump(payload)
	if err != nil {
		return nil, err
	}
	if len(value) == 0 {
		return nil, &FormatError{Msg: "empty DUMP payload value"}
	}
	lim = lim.withDefaults()
	in := &input{br: bufio.NewReaderSize(bytes.NewReader(value[1:]), 4096), noCRC: true, maxStr: lim.MaxString, off: 1, size: int64(len(value)), room: lim.Room}
	v := &Value{Version: version, Type: value[0], in: in}
	switch v.Type {
	case TypeString:
		if v.String, err = in.readString(); err != nil {
			return nil, err
		}
	case TypeModule2:
		id, err := in.readPlainLen()
		if err != nil {
			return nil, err
		}
		v.Module = &ModuleValue{in: in, lim: lim, ID: id, Name: ModuleName(id), EncVer: int(id & 1023)}
	default:
		return nil, &UnsupportedTypeError{Type: v.Type}
	}
	return v, nil
}

// Finish checks that the value ends where the payload does (after a
// module value's EOF opcode: call its End or Skip first).
func (v *Value) Finish() error {
	if v.Module != nil && !v.Module.done {
		return &FormatError{Offset: v.in.off, Msg: fmt.Sprintf("module value of %s not read to its end", v.Module.Name)}
	}
	if _, err := v.in.br.ReadByte(); err != io.EOF {
		return &FormatError{Offset: v.in.off, Msg: "bytes after the value in a DUMP payload"}
	}
	return nil
}

// DumpWriter builds the value of a DUMP payload.
type DumpWriter struct{ e enc }

// NewDumpWriter returns a DumpWriter; compress as in NewWriter.
func NewDumpWriter(compress bool) *DumpWriter { return &DumpWriter{e: enc{compress: compress}} }

// String writes a string value.
func (d *DumpWriter) String(s []byte) { d.e.byte(TypeString); d.e.string(s) }

// Module starts a module value; write its fields and call End, then Payload.
func (d *DumpWriter) Module(name string, encver int) (*ModuleWriter, error) {
	id, err := ModuleID(name, encver)
	if err != nil {
		return nil, err
	}
	d.e.byte(TypeModule2)
	d.e.length(id)
	return &ModuleWriter{e: &d.e}, nil
}

// Payload returns the DUMP payload of the value written, in RDB version
// version.
func (d *DumpWriter) Payload(version int) []byte { return EncodeDump(d.e.buf, version) }
