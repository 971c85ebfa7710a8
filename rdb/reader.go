package rdb

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
)

// RDB versions this package reads and writes.
const (
	MinVersion = 10 // Redis 7.0
	MaxVersion = 12 // Redis 7.4 and 8.x
)

// Opcodes of the RDB stream.
const (
	opSlotInfo   = 0xF4
	opFunction2  = 0xF5
	opFunctionPG = 0xF6
	opModuleAux  = 0xF7
	opIdle       = 0xF8
	opFreq       = 0xF9
	opAux        = 0xFA
	opResizeDB   = 0xFB
	opExpireMs   = 0xFC
	opExpireSec  = 0xFD
	opSelectDB   = 0xFE
	opEOF        = 0xFF
)

// Value types.
const (
	TypeString  = 0
	TypeModule2 = 7
)

// typeNames are Redis's names of its value types, for errors.
var typeNames = map[byte]string{
	0: "string", 1: "list", 2: "set", 3: "zset", 4: "hash", 5: "zset (v2)",
	6: "module (v1)", 7: "module", 9: "hash (zipmap)", 10: "list (ziplist)",
	11: "set (intset)", 12: "zset (ziplist)", 13: "hash (ziplist)",
	14: "list (quicklist)", 15: "stream (listpacks)", 16: "hash (listpack)",
	17: "zset (listpack)", 18: "list (quicklist v2)", 19: "stream (listpacks v2)",
	20: "set (listpack)", 21: "stream (listpacks v3)", 22: "hash (with field expiry, pre-GA)",
	23: "hash (listpack, with field expiry, pre-GA)", 24: "hash (with field expiry)",
	25: "hash (listpack, with field expiry)",
}

// TypeName returns Redis's name for a value type byte.
func TypeName(t byte) string {
	if n, ok := typeNames[t]; ok {
		return n
	}
	return "type " + strconv.Itoa(int(t))
}

// Limits bound what one value may make the reader hold. Zero fields take
// DefaultLimits' values.
type Limits struct {
	// MaxString bounds one string's length in bytes, compressed or not
	// (default 16 GiB: RedisBloom saves a filter's bits as one string, and
	// Redis sets no bound on a string in a file).
	MaxString int64
	// MaxFields bounds the number of opcode-tagged fields of one module
	// value, and of elements skipped in one other value (default 1<<32).
	MaxFields int64
	// InputSize, when positive, is the input's total length (a file's
	// size). A string whose declared length fits in what is left of the
	// input is then allocated once at its size; otherwise (and when it is
	// 0) a string's memory grows as its bytes arrive, to at most twice
	// what has arrived, and is copied as it grows.
	InputSize int64
	// Room, when set, is called before a string (a key, a string value,
	// an AUX field, a module value's string field) is allocated, with no
	// argument, and answers how many bytes the caller may still hold: a
	// longer string, plain or as it decompresses, is an error wrapping
	// ErrNoRoom, before anything is allocated for it (a server passes
	// what -maxmemory leaves: an LZF-compressed string can announce 88
	// times its bytes).
	Room func() int64
	// SkipStrings, when set, makes Reader.Next pass over string values
	// without keeping them (Entry.String is nil; Entry.StringLen is their
	// length): an LZF-compressed one is decoded through a bounded window,
	// which checks it, and never held whole. For a listing, or a search
	// for a module value.
	SkipStrings bool
}

// ErrNoRoom is a string longer than Limits.Room allows.
var ErrNoRoom = errors.New("rdb: a string is longer than the room the caller's limit leaves")

// DefaultLimits are the limits used where a field of Limits is zero.
var DefaultLimits = Limits{MaxString: 16 << 30, MaxFields: 1 << 32}

func (l Limits) withDefaults() Limits {
	if l.MaxString <= 0 {
		l.MaxString = DefaultLimits.MaxString
	}
	if l.MaxFields <= 0 {
		l.MaxFields = DefaultLimits.MaxFields
	}
	return l
}

// FormatError is malformed or unsupported input, at a byte offset of the
// stream (of the value, for a DUMP payload).
type FormatError struct {
	Offset int64
	Msg    string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("rdb: at byte %d: %s", e.Offset, e.Msg)
}

// UnsupportedTypeError is a key whose value type this package does not
// decode. Reader.Next returns it with the entry; Reader.Skip passes over
// the value when its encoding allows (CanSkip).
type UnsupportedTypeError struct {
	Key  []byte
	Type byte
}

func (e *UnsupportedTypeError) Error() string {
	return fmt.Sprintf("rdb: key %q has a value of type %s, which is not supported", e.Key, TypeName(e.Type))
}

// ErrChecksum is a trailer whose CRC-64 does not match the file.
var ErrChecksum = errors.New("rdb: the file's CRC-64 does not match its contents")

// input is the byte source: it counts and checksums every byte consumed.
type input struct {
	br     *bufio.Reader
	crc    uint64
	off    int64
	noCRC  bool
	maxStr int64
	size   int64 // the input's length, if known (Limits.InputSize)
	lzf    int   // LZF-compressed strings read
	room   func() int64
	// lzfSeen, when set (by tests), is given each LZF-compressed string
	// read whole: its compressed bytes and its decompressed ones.
	lzfSeen func(compressed, out []byte)
}

func (in *input) fail(format string, args ...any) error {
	return &FormatError{Offset: in.off, Msg: fmt.Sprintf(format, args...)}
}

func (in *input) eof(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return &FormatError{Offset: in.off, Msg: "unexpected end of input"}
	}
	return err
}

func (in *input) readByte() (byte, error) {
	b, err := in.br.ReadByte()
	if err != nil {
		return 0, in.eof(err)
	}
	in.off++
	if !in.noCRC {
		in.crc = crcUpdate(in.crc, []byte{b})
	}
	return b, nil
}

func (in *input) readFull(p []byte) error {
	n, err := io.ReadFull(in.br, p)
	if !in.noCRC {
		in.crc = crcUpdate(in.crc, p[:n])
	}
	in.off += int64(n)
	if err != nil {
		return in.eof(err)
	}
	return nil
}

// discard passes over n bytes, checksumming them.
func (in *input) discard(n int64) error {
	for n > 0 {
		chunk := int(min(n, int64(in.br.Size())))
		p, err := in.br.Peek(chunk)
		if len(p) == 0 && err != nil {
			return in.eof(err)
		}
		if !in.noCRC {
			in.crc = crcUpdate(in.crc, p)
		}
		in.br.Discard(len(p))
		in.off += int64(len(p))
		n -= int64(len(p))
	}
	return nil
}

// readLen reads a length. encoded reports a special string encoding, whose
// kind is then the returned value.
func (in *input) readLen() (n uint64, encoded bool, err error) {
	b, err := in.readByte()
	if err != nil {
		return 0, false, err
	}
	switch b >> 6 {
	case 0:
		return uint64(b & 0x3f), false, nil
	case 1:
		b2, err := in.readByte()
		if err != nil {
			return 0, false, err
		}
		return uint64(b&0x3f)<<8 | uint64(b2), false, nil
	case 3:
		return uint64(b & 0x3f), true, nil
	}
	switch b {
	case 0x80:
		var p [4]byte
		if err := in.readFull(p[:]); err != nil {
			return 0, false, err
		}
		return uint64(binary.BigEndian.Uint32(p[:])), false, nil
	case 0x81:
		var p [8]byte
		if err := in.readFull(p[:]); err != nil {
			return 0, false, err
		}
		return binary.BigEndian.Uint64(p[:]), false, nil
	}
	return 0, false, in.fail("invalid length encoding 0x%02x", b)
}

// readPlainLen reads a length that may not be a special encoding.
func (in *input) readPlainLen() (uint64, error) {
	n, enc, err := in.readLen()
	if err == nil && enc {
		err = in.fail("a string encoding where a length was expected")
	}
	return n, err
}

// Special string encodings.
const (
	encInt8  = 0
	encInt16 = 1
	encInt32 = 2
	encLZF   = 3
)

// readBytes reads n raw bytes, growing the result only as they arrive.
func (in *input) readBytes(n int64) ([]byte, error) {
	const step = 64 << 10
	if n <= step || (in.size > 0 && n <= in.size-in.off) {
		p := make([]byte, n)
		return p, in.readFull(p)
	}
	p := make([]byte, 0, step)
	for int64(len(p)) < n {
		if len(p) == cap(p) {
			// At most double what has arrived: a declared length the
			// input never delivers costs what it delivered.
			p = slices.Grow(p, int(min(int64(cap(p)), n-int64(len(p)))))
		}
		start := len(p)
		end := int(min(int64(cap(p)), n))
		p = p[:end]
		if err := in.readFull(p[start:end]); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// fits checks a string of n bytes against Limits.Room.
func (in *input) fits(n uint64) error {
	if in.room == nil {
		return nil
	}
	if room := in.room(); n > uint64(max(room, 0)) {
		return fmt.Errorf("rdb: at byte %d: a string of %d bytes, with room for %d: %w", in.off, n, max(room, 0), ErrNoRoom)
	}
	return nil
}

// readString reads a string in any of its encodings.
func (in *input) readString() ([]byte, error) {
	n, enc, err := in.readLen()
	if err != nil {
		return nil, err
	}
	if !enc {
		if n > uint64(in.maxStr) {
			return nil, in.fail("string of %d bytes is over the limit (%d)", n, in.maxStr)
		}
		if err := in.fits(n); err != nil {
			return nil, err
		}
		return in.readBytes(int64(n))
	}
	switch n {
	case encInt8, encInt16, encInt32:
		var p [4]byte
		size := 1 << n
		if err := in.readFull(p[:size]); err != nil {
			return nil, err
		}
		var v int64
		switch n {
		case encInt8:
			v = int64(int8(p[0]))
		case encInt16:
			v = int64(int16(binary.LittleEndian.Uint16(p[:])))
		default:
			v = int64(int32(binary.LittleEndian.Uint32(p[:])))
		}
		return strconv.AppendInt(nil, v, 10), nil
	case encLZF:
		clen, err := in.readPlainLen()
		if err != nil {
			return nil, err
		}
		ulen, err := in.readPlainLen()
		if err != nil {
			return nil, err
		}
		if clen > uint64(in.maxStr) || ulen > uint64(in.maxStr) {
			return nil, in.fail("compressed string of %d bytes (%d compressed) is over the limit (%d)", ulen, clen, in.maxStr)
		}
		if clen == 0 || ulen > clen*lzfMaxRatio {
			return nil, in.fail("compressed string of %d bytes cannot expand to %d", clen, ulen)
		}
		if err := in.fits(clen + ulen); err != nil {
			return nil, err
		}
		in.lzf++
		c, err := in.readBytes(int64(clen))
		if err != nil {
			return nil, err
		}
		start := in.off
		out, err := LZFDecompress(c, int(ulen))
		if err != nil {
			return nil, &FormatError{Offset: start, Msg: "invalid LZF-compressed string"}
		}
		if in.lzfSeen != nil {
			in.lzfSeen(c, out)
		}
		return out, nil
	}
	return nil, in.fail("unknown string encoding %d", n)
}

// skipString passes over a string without keeping it.
func (in *input) skipString() error {
	n, enc, err := in.readLen()
	if err != nil {
		return err
	}
	if !enc {
		return in.discard(int64(min(n, math.MaxInt64)))
	}
	switch n {
	case encInt8, encInt16, encInt32:
		return in.discard(1 << n)
	case encLZF:
		clen, err := in.readPlainLen()
		if err != nil {
			return err
		}
		if _, err := in.readPlainLen(); err != nil {
			return err
		}
		return in.discard(int64(min(clen, math.MaxInt64)))
	}
	return in.fail("unknown string encoding %d", n)
}

// AuxField is one AUX field of the file (redis-ver, ctime, used-mem, …).
type AuxField struct{ Key, Value string }

// Entry is one key of the file. For a module value, Module reads its
// fields; it is valid until the next call of Next.
type Entry struct {
	DB       uint64
	Key      []byte
	Type     byte
	ExpireMs int64 // absolute Unix time in milliseconds; -1: none (as in Redis: any other negative time has passed)
	Idle     int64 // LRU idle seconds; -1: none
	Freq     int   // LFU frequency; -1: none
	String   []byte
	// StringLen is a string value's length in bytes (also under
	// Limits.SkipStrings, which leaves String nil).
	StringLen int64
	Module    *ModuleValue
}

// Reader reads an RDB file as a stream of entries.
type Reader struct {
	in      input
	lim     Limits
	version int
	db      uint64
	aux     []AuxField
	pending *ModuleValue // the last module value, to finish before the next entry
	skip    *Entry       // the last unsupported entry, Skip's target
	done    bool
	// ResizeDB holds the last RESIZEDB hint (keys, keys with expiry).
	ResizeKeys, ResizeExpires uint64
}

// NewReader reads the header ("REDIS" and a version from 10 to 12) of an
// RDB file from r.
func NewReader(r io.Reader, lim Limits) (*Reader, error) {
	lim = lim.withDefaults()
	rd := &Reader{lim: lim}
	rd.in = input{br: bufio.NewReaderSize(r, 64<<10), maxStr: lim.MaxString, size: lim.InputSize, room: lim.Room}
	var hdr [9]byte
	if err := rd.in.readFull(hdr[:]); err != nil {
		return nil, err
	}
	if string(hdr[:5]) != "REDIS" {
		return nil, &FormatError{Msg: "not a Redis RDB file (no REDIS signature)"}
	}
	v, err := strconv.Atoi(string(hdr[5:]))
	if err != nil || v < 0 {
		return nil, &FormatError{Offset: 5, Msg: fmt.Sprintf("invalid RDB version %q", hdr[5:])}
	}
	if v > MaxVersion {
		return nil, &FormatError{Offset: 5, Msg: fmt.Sprintf("RDB version %d is newer than this reader knows (%d to %d: Redis 7.0 to 8.x)", v, MinVersion, MaxVersion)}
	}
	if v < MinVersion {
		return nil, &FormatError{Offset: 5, Msg: fmt.Sprintf("RDB version %d is older than this reader reads (%d to %d: Redis 7.0 to 8.x)", v, MinVersion, MaxVersion)}
	}
	rd.version = v
	return rd, nil
}

// Version is the file's RDB version.
func (r *Reader) Version() int { return r.version }

// Aux returns the AUX fields read so far.
func (r *Reader) Aux() []AuxField { return r.aux }

// Next returns the next key, or io.EOF after the file's EOF opcode and a
// verified checksum (ErrChecksum when it does not match; a zero checksum
// means none was computed, as in Redis). A value of a type this package
// does not decode returns the entry (key and type) with an
// *UnsupportedTypeError; Skip passes over it where possible, and any other
// call of Next after it fails.
func (r *Reader) Next() (*Entry, error) {
	if r.done {
		return nil, io.EOF
	}
	if r.skip != nil {
		return nil, &FormatError{Offset: r.in.off, Msg: fmt.Sprintf("the value of key %q (type %s) was neither read nor skipped", r.skip.Key, TypeName(r.skip.Type))}
	}
	if m := r.pending; m != nil {
		r.pending = nil
		if err := m.Skip(); err != nil {
			return nil, err
		}
	}
	e := &Entry{ExpireMs: -1, Idle: -1, Freq: -1}
	for {
		op, err := r.in.readByte()
		if err != nil {
			return nil, err
		}
		switch op {
		case opAux:
			k, err := r.in.readString()
			if err != nil {
				return nil, err
			}
			v, err := r.in.readString()
			if err != nil {
				return nil, err
			}
			if len(r.aux) >= 1024 {
				return nil, r.in.fail("more than 1024 AUX fields")
			}
			r.aux = append(r.aux, AuxField{string(k), string(v)})
		case opResizeDB:
			if r.ResizeKeys, err = r.in.readPlainLen(); err != nil {
				return nil, err
			}
			if r.ResizeExpires, err = r.in.readPlainLen(); err != nil {
				return nil, err
			}
		case opSelectDB:
			if r.db, err = r.in.readPlainLen(); err != nil {
				return nil, err
			}
		case opExpireMs:
			var p [8]byte
			if err := r.in.readFull(p[:]); err != nil {
				return nil, err
			}
			e.ExpireMs = int64(binary.LittleEndian.Uint64(p[:]))
		case opExpireSec:
			var p [4]byte
			if err := r.in.readFull(p[:]); err != nil {
				return nil, err
			}
			e.ExpireMs = int64(binary.LittleEndian.Uint32(p[:])) * 1000
		case opIdle:
			n, err := r.in.readPlainLen()
			if err != nil {
				return nil, err
			}
			e.Idle = int64(min(n, math.MaxInt64))
		case opFreq:
			b, err := r.in.readByte()
			if err != nil {
				return nil, err
			}
			e.Freq = int(b)
		case opFunction2:
			// A function library's code: not data, passed over.
			if err := r.in.skipString(); err != nil {
				return nil, err
			}
		case opFunctionPG:
			return nil, r.in.fail("pre-GA function library (Redis 7.0 release candidates) is not supported")
		case opModuleAux:
			if err := r.skipModuleAux(); err != nil {
				return nil, err
			}
		case opSlotInfo:
			// A cluster node's per-slot sizing hint (Redis 7.4 and
			// later): slot, keys, keys with expiry. Passed over.
			for range 3 {
				if _, err := r.in.readPlainLen(); err != nil {
					return nil, err
				}
			}
		case opEOF:
			return nil, r.finish()
		default:
			if op >= 0xF0 {
				return nil, r.in.fail("unknown opcode 0x%02x", op)
			}
			e.DB = r.db
			return r.readEntry(op, e)
		}
	}
}

// skipModuleAux passes over a module's AUX data: its id, when it was
// saved, then opcode-tagged fields to the EOF opcode.
func (r *Reader) skipModuleAux() error {
	id, err := r.in.readPlainLen()
	if err != nil {
		return err
	}
	whenOp, err := r.in.readPlainLen()
	if err != nil {
		return err
	}
	if whenOp != modUint {
		return r.in.fail("module AUX data of %s with an invalid header", ModuleName(id))
	}
	if _, err := r.in.readPlainLen(); err != nil {
		return err
	}
	m := &ModuleValue{in: &r.in, lim: r.lim, ID: id, Name: ModuleName(id), EncVer: int(id & 1023)}
	return m.Skip()
}

// finish checks the trailer after the EOF opcode.
func (r *Reader) finish() error {
	want := r.in.crc
	var p [8]byte
	if err := r.in.readFull(p[:]); err != nil {
		return err
	}
	got := binary.LittleEndian.Uint64(p[:])
	if got != 0 && got != want {
		return ErrChecksum
	}
	r.done = true
	return io.EOF
}

func (r *Reader) readEntry(typ byte, e *Entry) (*Entry, error) {
	key, err := r.in.readString()
	if err != nil {
		return nil, err
	}
	e.Key, e.Type = key, typ
	if err := r.readValue(e); err != nil {
		return e, err
	}
	return e, nil
}

// readValue reads the value of e.Type, or stops before it with an
// *UnsupportedTypeError.
func (r *Reader) readValue(e *Entry) error {
	switch e.Type {
	case TypeString:
		if r.lim.SkipStrings {
			return r.in.readStringTo(func(n int64) error {
				e.StringLen = n
				return nil
			}, func([]byte) error { return nil })
		}
		s, err := r.in.readString()
		if err != nil {
			return err
		}
		e.String, e.StringLen = s, int64(len(s))
		return nil
	case TypeModule2:
		id, err := r.in.readPlainLen()
		if err != nil {
			return err
		}
		m := &ModuleValue{in: &r.in, lim: r.lim, ID: id, Name: ModuleName(id), EncVer: int(id & 1023), Key: e.Key, start: r.in.off}
		e.Module = m
		r.pending = m
		return nil
	}
	r.skip = e
	return &UnsupportedTypeError{Key: e.Key, Type: e.Type}
}

// CanSkip reports whether Skip can pass over a value of type t: every
// type whose encoding says where it ends (strings, lists, sets, sorted
// sets, hashes and their compact encodings, hashes with field expiry,
// streams with their consumer groups, module values of the v2 format),
// but not v1 module values or types newer than this reader.
func CanSkip(t byte) bool {
	switch t {
	case 0, 1, 2, 3, 4, 5, 7, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25:
		return true
	}
	return false
}

// Skip passes over the value of the entry that Next returned with an
// *UnsupportedTypeError, so that Next can go on. It fails for a type
// CanSkip refuses, after which the reader cannot go on.
func (r *Reader) Skip() error {
	e := r.skip
	if e == nil {
		return errors.New("rdb: Skip without an unsupported value to skip")
	}
	if !CanSkip(e.Type) {
		return &FormatError{Offset: r.in.off, Msg: fmt.Sprintf("the value of key %q (type %s) cannot be skipped: its encoding does not say where it ends", e.Key, TypeName(e.Type))}
	}
	r.skip = nil
	in := &r.in
	count := func(mult uint64) (uint64, error) {
		n, err := in.readPlainLen()
		if err != nil {
			return 0, err
		}
		if n > uint64(r.lim.MaxFields) || n*mult > uint64(r.lim.MaxFields) {
			return 0, in.fail("value of key %q has %d elements, over the limit (%d)", e.Key, n, r.lim.MaxFields)
		}
		return n * mult, nil
	}
	switch e.Type {
	case 1, 2, 14: // list, set, quicklist: strings
		n, err := count(1)
		if err != nil {
			return err
		}
		for ; n > 0; n-- {
			if err := in.skipString(); err != nil {
				return err
			}
		}
	case 4: // hash: field, value
		n, err := count(2)
		if err != nil {
			return err
		}
		for ; n > 0; n-- {
			if err := in.skipString(); err != nil {
				return err
			}
		}
	case 3: // zset: member, score as a length-prefixed text
		n, err := count(1)
		if err != nil {
			return err
		}
		for ; n > 0; n-- {
			if err := in.skipString(); err != nil {
				return err
			}
			b, err := in.readByte()
			if err != nil {
				return err
			}
			if b < 253 {
				if err := in.discard(int64(b)); err != nil {
					return err
				}
			}
		}
	case 5: // zset v2: member, binary double
		n, err := count(1)
		if err != nil {
			return err
		}
		for ; n > 0; n-- {
			if err := in.skipString(); err != nil {
				return err
			}
			if err := in.discard(8); err != nil {
				return err
			}
		}
	case 18: // quicklist v2: container kind, blob
		n, err := count(1)
		if err != nil {
			return err
		}
		for ; n > 0; n-- {
			if _, err := in.readPlainLen(); err != nil {
				return err
			}
			if err := in.skipString(); err != nil {
				return err
			}
		}
	case 22, 24: // hash with field expiry: (24: the least expiry), then ttl, field, value
		if e.Type == 24 {
			if err := in.discard(8); err != nil {
				return err
			}
		}
		n, err := count(3)
		if err != nil {
			return err
		}
		for ; n > 0; n -= 3 {
			if _, err := in.readPlainLen(); err != nil {
				return err
			}
			if err := in.skipString(); err != nil {
				return err
			}
			if err := in.skipString(); err != nil {
				return err
			}
		}
	case 25: // listpack with field expiry: the least expiry, then the listpack
		if err := in.discard(8); err != nil {
			return err
		}
		return in.skipString()
	case 15, 19, 21: // stream (listpacks v1, v2, v3)
		return r.skipStream(e, count)
	case 7:
		id, err := in.readPlainLen()
		if err != nil {
			return err
		}
		m := &ModuleValue{in: in, lim: r.lim, ID: id, Name: ModuleName(id), EncVer: int(id & 1023)}
		return m.Skip()
	default: // one blob (ziplist, listpack, intset, zipmap, string)
		return in.skipString()
	}
	return nil
}

// skipStream passes over a stream as Redis's rdbLoadObject reads it: its
// listpacks (a node key and a listpack each), its length and IDs (v2 on:
// first ID, max deleted ID, entries added), then its consumer groups:
// name, last ID (v2 on: entries read), the pending entries (a raw 16-byte
// ID, an 8-byte delivery time, a delivery count), the consumers (name,
// 8-byte seen time, v3: 8-byte active time, pending IDs of 16 bytes).
func (r *Reader) skipStream(e *Entry, count func(mult uint64) (uint64, error)) error {
	in := &r.in
	lens := func(n int) error {
		for ; n > 0; n-- {
			if _, err := in.readPlainLen(); err != nil {
				return err
			}
		}
		return nil
	}
	n, err := count(2)
	if err != nil {
		return err
	}
	for ; n > 0; n-- {
		if err := in.skipString(); err != nil {
			return err
		}
	}
	ids := 3 // length, last ID
	if e.Type >= 19 {
		ids += 5 // first ID, max deleted ID, entries added
	}
	if err := lens(ids); err != nil {
		return err
	}
	groups, err := count(1)
	if err != nil {
		return err
	}
	for ; groups > 0; groups-- {
		if err := in.skipString(); err != nil {
			return err
		}
		ids := 2 // last ID
		if e.Type >= 19 {
			ids++ // entries read
		}
		if err := lens(ids); err != nil {
			return err
		}
		pel, err := count(1)
		if err != nil {
			return err
		}
		for ; pel > 0; pel-- {
			if err := in.discard(16 + 8); err != nil {
				return err
			}
			if err := lens(1); err != nil {
				return err
			}
		}
		consumers, err := count(1)
		if err != nil {
			return err
		}
		for ; consumers > 0; consumers-- {
			if err := in.skipString(); err != nil {
				return err
			}
			times := int64(8)
			if e.Type >= 21 {
				times += 8
			}
			if err := in.discard(times); err != nil {
				return err
			}
			pel, err := count(1)
			if err != nil {
				return err
			}
			if err := in.discard(int64(16 * pel)); err != nil {
				return err
			}
		}
	}
	return nil
}
