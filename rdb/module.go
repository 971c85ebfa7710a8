package rdb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/bloomlab/bloomlab/internal/format"
)

// Opcodes of a module value's fields.
const (
	modEOF    = 0
	modSint   = 1
	modUint   = 2
	modFloat  = 3
	modDouble = 4
	modString = 5
)

var modOpNames = [...]string{"EOF", "signed integer", "unsigned integer", "float", "double", "string"}

func modOpName(op uint64) string {
	if op < uint64(len(modOpNames)) {
		return modOpNames[op]
	}
	return fmt.Sprintf("unknown opcode %d", op)
}

// moduleCharset is the 64 characters of module type names, in the order
// of their 6-bit codes.
const moduleCharset = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// ModuleName returns the 9-character type name of a module id: the id's
// upper 54 bits are nine 6-bit characters, the first the most significant;
// the lower 10 bits are the encoding version.
func ModuleName(id uint64) string {
	var b [9]byte
	for i := range b {
		b[i] = moduleCharset[(id>>(10+6*(8-i)))&63]
	}
	return string(b[:])
}

// ModuleID returns the module id of a type name and an encoding version,
// or an error when the name is not 9 characters of the charset or the
// version does not fit 10 bits.
func ModuleID(name string, encver int) (uint64, error) {
	if len(name) != 9 {
		return 0, fmt.Errorf("rdb: module type name %q is not 9 characters", name)
	}
	if encver < 0 || encver > 1023 {
		return 0, fmt.Errorf("rdb: module encoding version %d does not fit 10 bits", encver)
	}
	var id uint64
	for i := 0; i < len(name); i++ {
		c := -1
		for j := 0; j < len(moduleCharset); j++ {
			if moduleCharset[j] == name[i] {
				c = j
				break
			}
		}
		if c < 0 {
			return 0, fmt.Errorf("rdb: module type name %q has a character outside A-Z a-z 0-9 - _", name)
		}
		id = id<<6 | uint64(c)
	}
	return id<<10 | uint64(encver), nil
}

// ModuleValue reads the fields of one module value (RDB_TYPE_MODULE_2) in
// order: each Read method checks that the next field has its opcode, and
// End that the value's EOF opcode comes next. Name and EncVer come from
// the value's module id.
type ModuleValue struct {
	ID     uint64
	Name   string
	EncVer int
	// Key is the value's key, when Reader.Next read it from a file.
	Key []byte

	start int64 // the offset of the value's first field in the file

	in     *input
	lim    Limits
	fields int64
	peeked bool
	op     uint64
	done   bool
}

// Next returns the opcode of the next field (0 for the value's end)
// without reading it.
func (m *ModuleValue) Next() (int, error) {
	if m.done {
		return modEOF, nil
	}
	if !m.peeked {
		op, err := m.in.readPlainLen()
		if err != nil {
			return 0, err
		}
		if op > modString {
			return 0, m.in.fail("module value of %s: unknown field opcode %d", m.Name, op)
		}
		m.op, m.peeked = op, true
	}
	return int(m.op), nil
}

// expect consumes the next opcode, which must be want.
func (m *ModuleValue) expect(want uint64) error {
	op, err := m.Next()
	if err != nil {
		return err
	}
	if uint64(op) != want {
		return m.in.fail("module value of %s (encver %d), field %d: a %s where a %s was expected", m.Name, m.EncVer, m.fields, modOpName(uint64(op)), modOpName(want))
	}
	m.peeked = false
	if want == modEOF {
		m.done = true
		return nil
	}
	m.fields++
	if m.fields > m.lim.MaxFields {
		return m.in.fail("module value of %s has more than %d fields", m.Name, m.lim.MaxFields)
	}
	return nil
}

// ReadUnsigned reads an unsigned integer field.
func (m *ModuleValue) ReadUnsigned() (uint64, error) {
	if err := m.expect(modUint); err != nil {
		return 0, err
	}
	return m.in.readPlainLen()
}

// ReadSigned reads a signed integer field: as Redis's RM_LoadSigned, the
// 64 bits of an unsigned field (RM_SaveSigned writes one); a field with
// the signed opcode, which rdb.h defines and Redis never writes, is read too.
func (m *ModuleValue) ReadSigned() (int64, error) {
	op, err := m.Next()
	if err != nil {
		return 0, err
	}
	want := uint64(modUint)
	if op == modSint {
		want = modSint
	}
	if err := m.expect(want); err != nil {
		return 0, err
	}
	v, err := m.in.readPlainLen()
	return int64(v), err
}

// ReadFloat reads a float field.
func (m *ModuleValue) ReadFloat() (float32, error) {
	if err := m.expect(modFloat); err != nil {
		return 0, err
	}
	var p [4]byte
	if err := m.in.readFull(p[:]); err != nil {
		return 0, err
	}
	return math.Float32frombits(binary.LittleEndian.Uint32(p[:])), nil
}

// ReadDouble reads a double field.
func (m *ModuleValue) ReadDouble() (float64, error) {
	if err := m.expect(modDouble); err != nil {
		return 0, err
	}
	var p [8]byte
	if err := m.in.readFull(p[:]); err != nil {
		return 0, err
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(p[:])), nil
}

// ReadString reads a string field (within Limits.MaxString).
func (m *ModuleValue) ReadString() ([]byte, error) {
	if err := m.expect(modString); err != nil {
		return nil, err
	}
	return m.in.readString()
}

// End reads the value's EOF opcode: it fails when fields remain.
func (m *ModuleValue) End() error {
	if m.done {
		return nil
	}
	return m.expect(modEOF)
}

// Skip passes over the fields not read yet, and the EOF opcode.
func (m *ModuleValue) Skip() error {
	for !m.done {
		op, err := m.Next()
		if err != nil {
			return err
		}
		if err := m.expect(uint64(op)); err != nil {
			return err
		}
		switch op {
		case modSint, modUint:
			_, err = m.in.readPlainLen()
		case modFloat:
			err = m.in.discard(4)
		case modDouble:
			err = m.in.discard(8)
		case modString:
			err = m.in.skipString()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Fields returns the number of fields read or skipped so far.
func (m *ModuleValue) Fields() int64 { return m.fields }

// ValueError is a module value of an RDB file that its decoder refused
// (ModuleValue.Err): the key, the module type and encoding version, and
// the offset in the file where it went wrong (the byte a malformed field
// stopped at, or else the offset of the value's first field, for a
// value well formed but whose fields do not make a valid structure).
type ValueError struct {
	Key    []byte
	Module string
	EncVer int
	Offset int64
	Err    error
}

func (e *ValueError) Error() string {
	return fmt.Sprintf("rdb: key %q (module value %s encoding version %d) at offset %d: %s", e.Key, e.Module, e.EncVer, e.Offset, e.what())
}

func (e *ValueError) Unwrap() error { return e.Err }

// what is what is wrong: the decoder's message without what the prefix
// already says (the package and module type, the encoding version, the
// "invalid bloomlab file" of a decoder's format error, which names the
// file format and not an RDB value).
func (e *ValueError) what() string {
	var fe *FormatError
	if errors.As(e.Err, &fe) {
		return fe.Msg
	}
	msg := strings.TrimSuffix(e.Err.Error(), ": "+format.ErrFormat.Error())
	if _, after, ok := strings.Cut(msg, fmt.Sprintf("RDB value (encoding version %d): ", e.EncVer)); ok {
		msg = after
	}
	return msg
}

// Err returns err, a decoder's refusal of m, as a *ValueError naming m's
// key, type and offset, when m was read from a file (Reader.Next) and err
// says the value is malformed (an *FormatError of this package, or a
// decoder's error wrapping format.ErrFormat); any other error (a memory
// limit's, say) is returned as it is.
func (m *ModuleValue) Err(err error) error {
	if err == nil || m == nil || m.Key == nil {
		return err
	}
	var ve *ValueError
	if errors.As(err, &ve) {
		return err
	}
	off := m.start
	var fe *FormatError
	switch {
	case errors.As(err, &fe):
		off = fe.Offset
	case errors.Is(err, format.ErrFormat):
	default:
		return err
	}
	return &ValueError{Key: m.Key, Module: m.Name, EncVer: m.EncVer, Offset: off, Err: err}
}
