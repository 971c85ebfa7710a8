package server

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strconv"
)

// Strings: SET and GET, as Redis 7.0 answers them (COMMAND DOCS gives
// them the generic group, as it does the key commands). Strings exist so
// that clients' probes and WRONGTYPE behave as with Redis.

func init() {
	registerFamily(&family{name: "string", group: "generic", types: []*valueType{stringType},
		rdb: &rdbCodec{
			readString:  func(b []byte) value { return &strValue{b} },
			writeString: func(v value) []byte { return v.(*strValue).b },
		},
		commands: []*command{
			{name: "set", arity: -3, flags: fWrite | fDenyOOM, lock: lockExcl, keys: writeKey1, acl: "write string slow",
				since: "1.0.0", summary: "Set the string value of a key", run: cmdSet},
			{name: "get", arity: 2, flags: fReadonly | fFast, lock: lockRead, keys: readKey1, acl: "read string fast",
				since: "1.0.0", summary: "Get the value of a key", run: cmdGet},
		}})
}

// stringType is a string's value type.
var stringType = &valueType{name: "string", tag: 3, decode: decodeString}

// strValue is a string (SET/GET): there so that clients' probes and
// WRONGTYPE behave as with Redis. It is never changed in place.
type strValue struct{ b []byte }

func (v *strValue) typ() *valueType       { return stringType }
func (v *strValue) memory() int64         { return int64(len(v.b)) + 32 }
func (v *strValue) clone() (value, error) { return v, nil }

// encode writes the length (u64) and the bytes.
func (v *strValue) encode(w io.Writer) error {
	var l [8]byte
	binary.LittleEndian.PutUint64(l[:], uint64(len(v.b)))
	if _, err := w.Write(l[:]); err != nil {
		return err
	}
	_, err := w.Write(v.b)
	return err
}

func decodeString(r io.Reader, n int64) (value, error) {
	var l [8]byte
	if _, err := io.ReadFull(r, l[:]); err != nil {
		return nil, eofErr(err)
	}
	size := binary.LittleEndian.Uint64(l[:])
	if n < 8 || size > uint64(n-8) {
		return nil, fmt.Errorf("string of %d bytes, %d left", size, n-8)
	}
	b, err := readExact(r, int64(size))
	if err != nil {
		return nil, err
	}
	return &strValue{b}, nil
}

// cmdSet: SET key value [EX s | PX ms | EXAT s | PXAT ms | KEEPTTL] [NX |
// XX] [GET]. Strings exist so that clients' probes and WRONGTYPE behave
// as with Redis.
func cmdSet(c *client, args [][]byte) bool {
	s := c.s
	var nx, xx, keep, get bool
	at := int64(0)
	for i := 3; i < len(args); i++ {
		o := args[i]
		switch {
		case eqFold(o, "NX") && !xx:
			nx = true
		case eqFold(o, "XX") && !nx:
			xx = true
		case eqFold(o, "GET"):
			get = true
		case eqFold(o, "KEEPTTL") && at == 0:
			keep = true
		case (eqFold(o, "EX") || eqFold(o, "PX") || eqFold(o, "EXAT") || eqFold(o, "PXAT")) && !keep && at == 0 && i+1 < len(args):
			t, ok := parseInt(args[i+1])
			if !ok {
				c.err(errNotInt)
				return false
			}
			i++
			now := nowMs()
			switch {
			case eqFold(o, "EX"):
				at, ok = mulAdd(t, 1000, now)
			case eqFold(o, "PX"):
				at, ok = mulAdd(t, 1, now)
			case eqFold(o, "EXAT"):
				at, ok = mulAdd(t, 1000, 0)
			default:
				at = t
			}
			if !ok || t <= 0 {
				c.err("ERR invalid expire time in 'set' command")
				return false
			}
		default:
			c.err(errSyntax)
			return false
		}
	}
	old := s.getForCreate(c, args[1])
	if get {
		if old == nil {
			c.w.Null()
		} else if sv, ok := old.v.(*strValue); ok {
			c.w.Bulk(sv.b)
		} else {
			c.err(errWrongType)
			return false
		}
	}
	if nx && old != nil || xx && old == nil {
		if !get {
			c.w.Null()
		}
		return false
	}
	v := &strValue{append([]byte(nil), args[2]...)}
	need := entryMem(string(args[1]), v)
	if !c.reserve(need) {
		if get {
			return false // the GET reply is written; Redis also answers it
		}
		c.err(errOOM)
		return false
	}
	prevExp := int64(0)
	if old != nil {
		prevExp = old.expireAt
		s.deleteKey(c, string(args[1]), old)
	}
	e := s.add(string(args[1]), v, need)
	switch {
	case keep && prevExp != 0:
		s.setExpire(string(args[1]), e, prevExp)
	case at != 0:
		s.setExpire(string(args[1]), e, at)
	}
	if e.expireAt != 0 {
		c.logArgs("SET", string(args[1]), string(args[2]), "PXAT", strconv.FormatInt(e.expireAt, 10))
	} else {
		c.logArgs("SET", string(args[1]), string(args[2]))
	}
	if !get {
		c.w.Simple("OK")
	}
	return false
}

func mulAdd(t, m, add int64) (int64, bool) {
	if t > (math.MaxInt64-add)/m || t < 0 {
		return 0, false
	}
	return t*m + add, true
}

func cmdGet(c *client, args [][]byte) bool {
	e := c.s.get(args[1])
	if e == nil {
		c.w.Null()
		return false
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	sv, ok := e.v.(*strValue)
	if !ok {
		c.err(errWrongType)
		return false
	}
	if !c.replyFits(int64(len(sv.b))) {
		c.err(errOOM)
		return false
	}
	c.w.Bulk(sv.b)
	return false
}
