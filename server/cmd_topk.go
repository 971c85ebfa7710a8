package server

import (
	"bytes"
	"fmt"
	"io"
	"unsafe"

	"github.com/bloomlab/bloomlab/rdb"
	"github.com/bloomlab/bloomlab/topk"
)

// RedisBloom's TOPK.* commands (src/rm_topk.c) over package topk, which
// is RedisBloom's HeavyKeeper bit for bit but for the decay's coin flips:
// each key has its own generator (seeded alike at TOPK.RESERVE), its state
// is in the snapshot and every logged TOPK.ADD/INCRBY advances it on
// replay exactly as it did when it ran, so that a restart, or a kill -9
// and the log's replay, gives back the same TOPK.LIST. RedisBloom's flips
// come from the C library's rand(), seeded at every server start: there
// two runs of the same commands can differ where buckets decay.
//
// Replies follow RedisBloom as rm_topk.c writes them. Items in replies
// (ADD's and INCRBY's expelled items, LIST) are C strings there: they end
// at the item's first NUL byte, here too. Dialect8 (8.6.2): bulk strings,
// TOPK.QUERY booleans and TOPK.INFO a map under RESP3. Dialect24
// (2.4.23): simple strings (a CR or LF in an item is sent as a space, as
// a simple string cannot hold one; RedisBloom sends it raw and breaks the
// protocol), integers for QUERY and an array for INFO under either
// protocol. TOPK.INCRBY with an invalid increment: RedisBloom adds the
// items before it, answers the error element in their place and stops,
// sending fewer elements than the array it announced (the connection
// then reads garbage); here the items before it are added as there, the
// bad one and every one after it answer the error element, unadded.

var topkType = &valueType{name: "TopK-TYPE", tag: 7, decode: decodeTopK}

// topkRDB is TOPK in Redis's RDB files and DUMP payloads: RedisBloom's
// TopK-TYPE module type.
var topkRDB = &rdbCodec{module: topk.RDBTypeName, encver: topk.RDBEncVer,
	read: func(m *rdb.ModuleValue, alloc func(int64) error) (value, error) {
		s, err := topk.ReadRedisBloomRDB(m, alloc)
		if err != nil {
			return nil, err
		}
		return &topkValue{s}, nil
	},
	write: func(v value, m *rdb.ModuleWriter) error { return v.(*topkValue).s.WriteRedisBloomRDB(m) },
}

type topkValue struct{ s *topk.Sketch }

func (v *topkValue) typ() *valueType       { return topkType }
func (v *topkValue) memory() int64         { return v.s.Bytes() + 96 }
func (v *topkValue) clone() (value, error) { return &topkValue{v.s.Clone()}, nil }

func (v *topkValue) encode(w io.Writer) error {
	_, err := v.s.WriteTo(w)
	return err
}

func decodeTopK(r io.Reader, n int64) (value, error) {
	var s topk.Sketch
	if _, err := s.ReadFrom(&payloadReader{r, n}); err != nil {
		return nil, err
	}
	return &topkValue{&s}, nil
}

// topkMaxItem is the longest item TOPK.ADD and TOPK.INCRBY take: the
// longest a sketch's encoding may hold, so that every sketch the server
// makes reads back from its snapshot (a variable for the tests).
var topkMaxItem = topk.MaxItemLen

const (
	errTopKMissing = "TopK: key does not exist"
	errTopKIncr    = "TopK: increment must be an integer greater or equal to 0                            and smaller or equal to 100,000"
	errTopKMemory  = "ERR Insufficient memory to create topk data structure"
)

func init() {
	registerFamily(&family{name: "topk", category: "topk", module: true, types: []*valueType{topkType}, rdb: topkRDB,
		commands: []*command{
			{name: "topk.reserve", arity: -1, args: counts(3, 6, 3), flags: fWrite | fDenyOOM, lock: lockExcl, keys: key1("rw", ksRW), acl: "write fast",
				since: "2.0.0", summary: "Initializes a Top-K sketch with specified parameters", run: topkReserve,
				info8: &modInfo{-3, "write denyoom module"},
				doc: &cmdDoc{complexity: "O(1)", args: []docArg{
					{name: "key", typ: "key", key: true},
					{name: "topk", typ: "integer"},
					{name: "params", typ: "block", flags: "optional", args: []docArg{
						{name: "width", typ: "integer"},
						{name: "depth", typ: "integer"},
						{name: "decay", typ: "double"},
					}},
				}}},
			{name: "topk.add", arity: -1, args: atLeast(3), flags: fWrite | fDenyOOM, lock: lockWrite, keys: key1("rw", ksRW), acl: "write",
				since: "2.0.0", summary: "Adds an item to a Top-k sketch. Multiple items can be added at the same time.", run: topkAdd,
				info8: &modInfo{-3, "write denyoom module"},
				doc:   &cmdDoc{complexity: "O(n * k) where n is the number of items and k is the depth", args: docKeyItems}},
			{name: "topk.incrby", arity: -1, args: stepped(4, 2), flags: fWrite | fDenyOOM, lock: lockWrite, keys: key1("rw", ksRW), acl: "write",
				since: "2.0.0", summary: "Increases the count of one or more items by increment", run: topkAdd,
				info8: &modInfo{-4, "write denyoom module"},
				doc: &cmdDoc{complexity: "O(n * k * incr) where n is the number of items, k is the depth and incr is the increment", args: []docArg{
					{name: "key", typ: "key", key: true},
					{name: "item_increment", typ: "block", flags: "multiple", args: []docArg{
						{name: "item", typ: "string"},
						{name: "increment", typ: "integer"},
					}},
				}}},
			{name: "topk.query", arity: -1, args: atLeast(3), flags: fReadonly, lock: lockRead, keys: key1("r", ksRO), acl: "read",
				since: "2.0.0", summary: "Checks whether one or more items are in a sketch", run: topkQuery,
				info8: &modInfo{-3, "readonly module"},
				doc:   &cmdDoc{complexity: "O(n) where n is the number of items", args: docKeyItems}},
			{name: "topk.count", arity: -1, args: atLeast(3), flags: fReadonly, lock: lockRead, keys: key1("r", ksRO), acl: "read",
				since: "2.0.0", summary: "Return the count for one or more items are in a sketch", run: topkCount,
				info8: &modInfo{-3, "readonly module"},
				doc:   &cmdDoc{complexity: "O(n) where n is the number of items", history: [][2]string{[2]string{"2.4.0", "As of Bloom version 2.4, this command is regarded as deprecated. The count value is not a representative of the number of appearances of an item"}}, args: docKeyItems}},
			{name: "topk.list", arity: -1, args: between(2, 3), flags: fReadonly, lock: lockRead, keys: key1("r", ksRO), acl: "read",
				since: "2.0.0", summary: "Return the full list of items in Top-K sketch.", run: topkList,
				info8: &modInfo{-2, "readonly module"},
				doc: &cmdDoc{complexity: "O(k*log(k)) where k is the value of top-k", args: []docArg{
					{name: "key", typ: "key", key: true},
					{name: "withcount", typ: "pure-token", token: "WITHCOUNT", flags: "optional"},
				}}},
			{name: "topk.info", arity: -1, args: exactly(2), flags: fReadonly, lock: lockRead, keys: key1("r", ksRO), acl: "read fast",
				since: "2.0.0", summary: "Returns information about a sketch", run: topkInfo,
				info8: &modInfo{2, "readonly module"},
				doc:   &cmdDoc{complexity: "O(1)", args: docKeyOnly}},
		}})
}

// topkReserve is TOPK.RESERVE key topk [width depth decay] (defaults 8,
// 7, 0.9: RedisBloom's).
func topkReserve(c *client, args [][]byte) bool {
	s := c.s
	if s.getForCreate(c, args[1]) != nil {
		c.err("TopK: key already exists")
		return false
	}
	u32 := func(b []byte) (uint32, bool) {
		n, ok := parseInt(b)
		return uint32(n), ok && n >= 1 && n <= 1<<32-1
	}
	cfg := topk.Config{Width: topk.DefaultWidth, Depth: topk.DefaultDepth, Decay: topk.DefaultDecay}
	var ok bool
	if cfg.K, ok = u32(args[2]); !ok {
		c.err("TopK: invalid k")
		return false
	}
	if len(args) == 6 {
		if cfg.Width, ok = u32(args[3]); !ok {
			c.err("TopK: invalid width")
			return false
		}
		if cfg.Depth, ok = u32(args[4]); !ok {
			c.err("TopK: invalid depth")
			return false
		}
		if cfg.Decay, ok = c.parseDouble(args[5]); !ok || cfg.Decay <= 0 || cfg.Decay > 1 {
			c.err("TopK: invalid decay value. must be '<= 1' & '> 0'")
			return false
		}
	}
	if cfg.K > topk.MaxK || uint64(cfg.Width)*uint64(cfg.Depth) > topk.MaxBuckets {
		if !c.replaying {
			s.logf("bloomlab: TOPK.RESERVE %q: k %d, %d × %d buckets: beyond %d and %d", args[1], cfg.K, cfg.Width, cfg.Depth, topk.MaxK, uint64(topk.MaxBuckets))
		}
		c.err(errTopKMemory)
		return false
	}
	need := int64(cfg.Width)*int64(cfg.Depth)*8 + int64(cfg.K)*48 + 4096 + int64(len(args[1])) + 256
	if !c.reserve(need) {
		c.err(errOOM)
		return false
	}
	sk, err := topk.New(cfg)
	if err != nil {
		s.mem.Add(-need)
		c.err(errTopKMemory)
		return false
	}
	s.add(string(args[1]), &topkValue{sk}, need)
	c.log(args)
	c.w.Simple("OK")
	return false
}

// topkOf returns key's entry, locked for reading or writing, and its
// sketch; or it writes the error reply and returns nil (nothing locked).
func (c *client) topkOf(key []byte, write bool) (*entry, *topkValue) {
	return valueAt[*topkValue](c, key, errTopKMissing, write)
}

// topkItem writes an item as RedisBloom does: a C string (to its first
// NUL), bulk in Dialect8, simple in Dialect24.
func (c *client) topkItem(item []byte) {
	if i := bytes.IndexByte(item, 0); i >= 0 {
		item = item[:i]
	}
	if c.d.topkBulkItems {
		c.w.Bulk(item)
		return
	}
	if bytes.ContainsAny(item, "\r\n") {
		item = bytes.Map(func(r rune) rune {
			if r == '\r' || r == '\n' {
				return ' '
			}
			return r
		}, item)
	}
	c.w.Simple(string(item))
}

// topkIncr parses an increment of TOPK.INCRBY: [0, 100000].
func topkIncr(b []byte) (uint32, bool) {
	n, ok := parseInt(b)
	return uint32(n), ok && n >= 0 && n <= 100000
}

// topkAdd is TOPK.ADD key item… and TOPK.INCRBY key item incr ….
func topkAdd(c *client, args [][]byte) bool {
	incrBy := eqFold(args[0], "topk.incrby")
	step := 1
	if incrBy {
		step = 2
	}
	e, v := c.topkOf(args[1], true)
	if e == nil {
		return false
	}
	defer c.unlockWrittenEntry(e)
	// The heap may keep a copy of every item, and the expelled one: that
	// memory is reserved before, then accounted as the sketch's.
	var need, longest int64
	for i := 2; i < len(args); i += step {
		if len(args[i]) > topkMaxItem {
			c.err(fmt.Sprintf("ERR TopK: item of %d bytes, beyond %d (the longest a snapshot holds)", len(args[i]), topkMaxItem))
			return false
		}
		need += int64(len(args[i]))
		longest = max(longest, int64(len(args[i])))
	}
	need += longest
	if need > 0 && !c.reserve(need) {
		c.err(errOOM)
		return false
	}
	if err := c.s.writable(e); err != nil {
		c.s.mem.Add(-need)
		c.err("ERR " + err.Error())
		return false
	}
	v = e.v.(*topkValue)
	c.w.Array((len(args) - 2) / step)
	bad := false
	for i := 2; i < len(args); i += step {
		inc := uint32(1)
		if incrBy {
			var ok bool
			if inc, ok = topkIncr(args[i+1]); !ok || bad {
				bad = true
				c.w.Error(errTopKIncr)
				continue
			}
		}
		if out, ok := v.s.IncrBy(args[i], inc); ok {
			c.topkItem(out)
		} else {
			c.w.Null()
		}
	}
	c.s.mem.Add(-need)
	c.s.resize(args[1], e)
	c.s.touchKey(args[1])
	c.log(args)
	return false
}

func topkQuery(c *client, args [][]byte) bool {
	e, v := c.topkOf(args[1], false)
	if e == nil {
		return false
	}
	defer c.unlockEntry(e, false)
	c.w.Array(len(args) - 2)
	for _, item := range args[2:] {
		c.boolReply(v.s.Query(item))
	}
	return false
}

func topkCount(c *client, args [][]byte) bool {
	e, v := c.topkOf(args[1], false)
	if e == nil {
		return false
	}
	defer c.unlockEntry(e, false)
	c.w.Array(len(args) - 2)
	for _, item := range args[2:] {
		c.w.Int(int64(v.s.Count(item)))
	}
	return false
}

// topkList is TOPK.LIST key [WITHCOUNT]. As RedisBloom, any prefix of
// WITHCOUNT (strncasecmp over the argument's length), the empty one
// included, asks for the counts.
func topkList(c *client, args [][]byte) bool {
	withCount := len(args) == 3
	if withCount {
		a := args[2]
		if len(a) > len("WITHCOUNT") || !eqFold(a, "WITHCOUNT"[:len(a)]) {
			c.err("WITHCOUNT keyword expected")
			return false
		}
	}
	e, v := c.topkOf(args[1], false)
	if e == nil {
		return false
	}
	defer c.unlockEntry(e, false)
	// The reply, and the list it is built from, are reserved against
	// MaxMemory before either is built: a client chooses k.
	filled, itemBytes := v.s.Listed()
	if !c.replyFits(int64(filled)*(int64(unsafe.Sizeof(topk.Entry{}))+topkReplyPerItem) + itemBytes) {
		c.err(errOOM)
		return false
	}
	list := v.s.List(nil)
	n := len(list)
	if withCount {
		n *= 2
	}
	c.w.Array(n)
	for _, en := range list {
		c.topkItem(en.Item)
		if withCount {
			c.w.Int(int64(en.Count))
		}
	}
	return false
}

// topkReplyPerItem bounds the RESP framing of one TOPK.LIST element
// beside its bytes: a bulk header ($, 10 digits, CRLF), the CRLF after
// it, and its count (:, 20 digits, CRLF).
const topkReplyPerItem = 16 + 2 + 23

func topkInfo(c *client, args [][]byte) bool {
	e, v := c.topkOf(args[1], false)
	if e == nil {
		return false
	}
	defer c.unlockEntry(e, false)
	cfg := v.s.Config()
	c.mapReply(4)
	c.w.Simple("k")
	c.w.Int(int64(cfg.K))
	c.w.Simple("width")
	c.w.Int(int64(cfg.Width))
	c.w.Simple("depth")
	c.w.Int(int64(cfg.Depth))
	c.w.Simple("decay")
	c.w.Double(cfg.Decay)
	return false
}
