package server

import (
	"encoding/binary"
	"errors"
	"math"
	"strconv"

	"github.com/bloomlab/bloomlab/rdb"
)

// DUMP and RESTORE, as Redis 7.0 answers them, in Redis's payload format
// (package rdb: the value as an RDB file holds it, the RDB version, the
// CRC-64), for Redis strings and RedisBloom's five types. DUMP writes
// payloads of RDB version 10 (rdb.DumpVersion, Redis 7.0's), in every
// dialect: Redis 7.0 to 8.x RESTORE them (Redis 8 writes 12, which Redis
// 7.0 refuses). RESTORE reads the versions the dialect's Redis reads: 10
// under Dialect24 (Redis 7.0), 10 to 12 under Dialect8 (Redis 8); a newer
// one gets Redis's "ERR DUMP payload version or checksum are wrong" (a
// logged RESTORE replays whatever the dialect). A key Redis cannot load
// (a bloomlab kind loaded with -load, a blocked-layout BF, a LOADCHUNK in
// progress) answers an error naming what it holds. IDLETIME and FREQ are
// checked as Redis checks them and have no effect: the server keeps no
// LRU or LFU data (it evicts nothing).

func init() {
	registerFamily(&family{name: "dump", group: "generic", commands: []*command{
		{name: "dump", arity: 2, flags: fReadonly, lock: lockWrite, keys: readKey1, acl: "keyspace read slow",
			since: "2.6.0", summary: "Return a serialized version of the value stored at the specified key.", run: cmdDump},
		{name: "restore", arity: -4, flags: fWrite | fDenyOOM, lock: lockExcl, keys: writeKey1, acl: "keyspace write slow dangerous",
			since: "2.6.0", summary: "Create a key using the provided serialized value, previously obtained using DUMP.", run: cmdRestore},
	}})
}

const (
	errBusyKey     = "BUSYKEY Target key name already exists."
	errBadDumpData = "ERR Bad data format"
)

// cmdDump: DUMP key. A digest's buffer is merged first, as RedisBloom's
// save merges it, and as a TDIGEST query that merges it, under the key's
// write lock and logged ("TDIGEST.ADD key"), so that a replay merges
// there too.
func cmdDump(c *client, args [][]byte) bool {
	e := c.s.get(args[1])
	if e == nil {
		c.w.Null()
		return false
	}
	// A value its family settles before it is serialised (a digest's
	// buffer merged) is changed under the key's write lock.
	settle := e.v.typ().fam.settle != nil
	if !c.excl {
		if settle {
			e.mu.Lock()
		} else {
			e.mu.RLock()
		}
	}
	defer c.unlockEntry(e, settle)
	v := e.v
	switch {
	case settle && c.s.repl.replicaLink() != nil:
		// A replica's values change only by its primary's stream (which
		// carries a serve primary's settling; a Redis primary settles in
		// its save's forked child): the payload is a settled copy's.
		cp, err := v.clone()
		if err == nil && cp == v {
			err = errors.New("the value cannot be copied")
		}
		if err == nil {
			_, err = v.typ().fam.settle(string(args[1]), cp)
		}
		if err != nil {
			c.err("ERR " + err.Error())
			return false
		}
		v = cp
	case settle:
		// The type cannot change under the entry's lock held with the
		// keyspace's shared lock.
		if err := c.settleKey(string(args[1]), e); err != nil {
			c.err("ERR " + err.Error())
			return false
		}
		v = e.v
	}
	if what := rdbUnsupported(v); what != "" {
		c.err("ERR " + (&errRDBUnsupported{what}).Error())
		return false
	}
	// The payload is about the value's memory; it is built, then sent.
	if !c.replyFits(2 * v.memory()) {
		c.err(errOOM)
		return false
	}
	d := rdb.NewDumpWriter(true)
	if err := writeRDBValue(v, dumpSink{d}); err != nil {
		c.err("ERR " + err.Error())
		return false
	}
	c.w.Bulk(d.Payload(rdb.DumpVersion))
	return false
}

// cmdRestore: RESTORE key ttl payload [REPLACE] [ABSTTL] [IDLETIME s]
// [FREQ f], with Redis 7.0's checks in its order: the options, then
// BUSYKEY, the TTL, the payload's version and checksum, its value. A TTL
// already past deletes the key (REPLACE) and creates nothing, answering
// OK. The log records "RESTORE key at payload REPLACE ABSTTL" with the
// absolute expiry (0: none), so that a replay makes the same value and
// expiry.
func cmdRestore(c *client, args [][]byte) bool {
	s := c.s
	var replace, absttl bool
	idle, freq := int64(-1), int64(-1)
	for j := 4; j < len(args); j++ {
		more := len(args) - j - 1
		switch {
		case eqFold(args[j], "REPLACE"):
			replace = true
		case eqFold(args[j], "ABSTTL"):
			absttl = true
		case eqFold(args[j], "IDLETIME") && more >= 1 && freq == -1:
			n, ok := parseInt(args[j+1])
			if !ok {
				c.err(errNotInt)
				return false
			}
			if n < 0 {
				c.err("ERR Invalid IDLETIME value, must be >= 0")
				return false
			}
			idle = n
			j++
		case eqFold(args[j], "FREQ") && more >= 1 && idle == -1:
			n, ok := parseInt(args[j+1])
			if !ok {
				c.err(errNotInt)
				return false
			}
			if n < 0 || n > 255 {
				c.err("ERR Invalid FREQ value, must be >= 0 and <= 255")
				return false
			}
			freq = n
			j++
		default:
			c.err(errSyntax)
			return false
		}
	}
	key := args[1]
	old := s.getForCreate(c, key)
	if !replace && old != nil {
		c.err(errBusyKey)
		return false
	}
	ttl, ok := parseInt(args[2])
	if !ok {
		c.err(errNotInt)
		return false
	}
	if ttl < 0 {
		c.err("ERR Invalid TTL value, must be >= 0")
		return false
	}
	room := func() int64 {
		if c.replaying {
			return math.MaxInt64
		}
		return s.room()
	}
	if p := args[3]; !c.replaying && len(p) >= 10 && int(binary.LittleEndian.Uint16(p[len(p)-10:])) > c.d.rdbVersion {
		// The dialect's Redis refuses an RDB version newer than its own
		// (Redis 7.0 a payload of Redis 8); the log replays any.
		c.err(rdb.ErrDumpPayload.Error())
		return false
	}
	dv, err := rdb.ReadDump(args[3], rdb.Limits{InputSize: int64(len(args[3])), Room: room})
	if errors.Is(err, rdb.ErrNoRoom) {
		c.err(errOOM)
		return false
	}
	if err != nil {
		c.err(restoreErr(err))
		return false
	}
	var reserved int64
	alloc := func(n int64) error {
		if n < 0 || !c.reserve(n) {
			return errReloadOOM
		}
		reserved += n
		return nil
	}
	if dv.Type == rdb.TypeString {
		if err := alloc(int64(len(dv.String))); err != nil {
			c.err(errOOM)
			return false
		}
	}
	v, err := readRDBValue(dv.Type, dv.String, dv.Module, alloc)
	if err == nil {
		err = dv.Finish()
	}
	if err != nil {
		s.mem.Add(-reserved)
		if errors.Is(err, errReloadOOM) || errors.Is(err, rdb.ErrNoRoom) {
			c.err(errOOM)
		} else {
			c.err(restoreErr(err))
		}
		return false
	}
	at := int64(0)
	if ttl != 0 {
		at = ttl
		if !absttl {
			now := nowMs()
			if ttl > math.MaxInt64-now {
				at = math.MinInt64 // Redis's sum wraps, and is in the past
			} else {
				at = ttl + now
			}
		}
	}
	if at != 0 && at <= nowMs() && !c.replaying {
		s.mem.Add(-reserved)
		if old != nil {
			s.deleteKey(c, string(key), old)
			c.logArgs("DEL", string(key))
		}
		c.w.Simple("OK")
		return false
	}
	need := entryMem(string(key), v)
	if need > reserved {
		if !c.reserve(need - reserved) {
			s.mem.Add(-reserved)
			c.err(errOOM)
			return false
		}
		reserved = need
	}
	if old != nil {
		s.deleteKey(c, string(key), old)
	}
	e := s.add(string(key), v, reserved)
	if at != 0 {
		s.setExpire(string(key), e, at)
	}
	c.log([][]byte{[]byte("RESTORE"), key, strconv.AppendInt(nil, at, 10), args[3], []byte("REPLACE"), []byte("ABSTTL")})
	c.w.Simple("OK")
	return false
}

// restoreErr is RESTORE's error reply for a payload that does not read:
// Redis's for a wrong checksum or version, else "Bad data format" and
// what is wrong (a type the server does not hold, malformed fields).
func restoreErr(err error) string {
	if errors.Is(err, rdb.ErrDumpPayload) {
		return rdb.ErrDumpPayload.Error()
	}
	var ut *rdb.UnsupportedTypeError
	if errors.As(err, &ut) {
		return errBadDumpData + ": " + (&errRDBType{rdb.TypeName(ut.Type)}).Error()
	}
	return errBadDumpData + ": " + oneLine(err.Error())
}
