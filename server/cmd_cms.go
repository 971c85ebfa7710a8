package server

import (
	"errors"
	"io"
	"math"
	"math/bits"
	"strconv"

	"github.com/bloomlab/bloomlab/countmin"
	"github.com/bloomlab/bloomlab/rdb"
)

// RedisBloom's CMS.* commands. A key made by CMS.INITBYDIM or
// CMS.INITBYPROB is a redisbloom-profile countmin sketch: bit for bit
// RedisBloom's (MurmurHash2 per row, 32-bit counters saturating at
// 2^32 − 1), under either dialect (RedisBloom 2.4.23 and 8.6.2 have the
// same sketch). The profile is part of the key's structure: the snapshot
// holds it (the countmin file's scheme) and the log records it
// (CMS.INITBYDIM key width depth PROFILE redisbloom, a form only replay
// accepts), so that a dialect never changes a key. Keys written before
// the profile existed (bloomlab's profile: 64-bit counters, rows of one
// xxh3-128 hash; logged as CMS.INITBYDIM key width depth) load and answer
// as they did.
//
// Redisbloom-profile keys answer as RedisBloom: an item of CMS.INCRBY
// whose counters saturate answers the error element "CMS: INCRBY
// overflow" in the array (the add is kept); CMS.MERGE with WEIGHTS
// accepts negative weights (dialect 8; dialect 2.4 refuses them, as serve
// did before) and refuses with "CMS: MERGE overflow", changing nothing, a
// merge that would take a counter out of [0, 2^32 − 1] or overflow a
// product. With a negative weight an estimate can fall below the true
// count of a key. One bound is ours: the count N (CMS.INFO's count) stays
// within a signed 64-bit integer, so an INCRBY that would take it past
// 2^63 − 1 is refused whole ("CMS: INCRBY overflow", nothing changed)
// where RedisBloom wraps it modulo 2^64 and reports a negative count.

// cmsType is CMS's value type.
var cmsType = &valueType{name: "CMSk-TYPE", tag: 2, decode: decodeCMS}

// cmsRDB is CMS in Redis's RDB files and DUMP payloads: RedisBloom's
// CMSk-TYPE module type, which holds sketches of RedisBloom's profile.
var cmsRDB = &rdbCodec{module: countmin.RDBTypeName, encver: countmin.RDBEncVer,
	read: func(m *rdb.ModuleValue, alloc func(int64) error) (value, error) {
		s, err := countmin.ReadRedisBloomRDB(m, alloc)
		if err != nil {
			return nil, err
		}
		return &cmsValue{s}, nil
	},
	write: func(v value, m *rdb.ModuleWriter) error { return v.(*cmsValue).s.WriteRedisBloomRDB(m) },
	unsupported: func(v value) string {
		if p := v.(*cmsValue).s.Profile(); p != countmin.RedisBloom {
			return "bloomlab count-min sketch (" + p.String() + " profile)"
		}
		return ""
	},
}

// cmsValue is a Count-Min sketch answering CMS.*.
type cmsValue struct{ s *countmin.Sketch }

func (v *cmsValue) typ() *valueType       { return cmsType }
func (v *cmsValue) memory() int64         { return int64(v.s.Bits()/8) + 96 }
func (v *cmsValue) clone() (value, error) { return &cmsValue{v.s.Clone()}, nil }

func (v *cmsValue) encode(w io.Writer) error {
	_, err := v.s.WriteTo(w)
	return err
}

func decodeCMS(r io.Reader, n int64) (value, error) {
	var s countmin.Sketch
	if _, err := s.ReadFrom(&payloadReader{r, n}); err != nil {
		return nil, err
	}
	return &cmsValue{&s}, nil
}

const (
	errCMSMissing = "CMS: key does not exist"
	errCMSExists  = "CMS: key already exists"
)

func init() {
	registerFamily(&family{name: "cms", category: "cms", module: true, types: []*valueType{cmsType}, rdb: cmsRDB,
		commands: []*command{
			{name: "cms.initbydim", arity: -1, args: argc{min: 4, max: 4, replay: &argc{min: 4, max: 6, step: 2}}, flags: fWrite | fDenyOOM, lock: lockExcl, keys: key1("rw", ksRW), acl: "write fast",
				since: "2.0.0", summary: "Initializes a Count-Min Sketch to dimensions specified by user", run: cmsInit,
				info8: &modInfo{4, "write denyoom module"},
				doc: &cmdDoc{complexity: "O(1)", args: []docArg{
					{name: "key", typ: "key", key: true},
					{name: "width", typ: "integer"},
					{name: "depth", typ: "integer"},
				}}},
			{name: "cms.initbyprob", arity: -1, args: exactly(4), flags: fWrite | fDenyOOM, lock: lockExcl, keys: key1("rw", ksRW), acl: "write fast",
				since: "2.0.0", summary: "Initializes a Count-Min Sketch to accommodate requested tolerances.", run: cmsInit,
				info8: &modInfo{4, "write denyoom module"},
				doc: &cmdDoc{complexity: "O(1)", args: []docArg{
					{name: "key", typ: "key", key: true},
					{name: "error", typ: "double"},
					{name: "probability", typ: "double"},
				}}},
			{name: "cms.incrby", arity: -1, args: stepped(4, 2), flags: fWrite | fDenyOOM, lock: lockWrite, keys: key1("rw", ksRW), acl: "write",
				since: "2.0.0", summary: "Increases the count of one or more items by increment", run: cmsIncrBy,
				info8: &modInfo{-4, "write denyoom module"},
				doc: &cmdDoc{complexity: "O(n) where n is the number of items", args: []docArg{
					{name: "key", typ: "key", key: true},
					{name: "items", typ: "block", flags: "multiple", args: []docArg{
						{name: "item", typ: "string"},
						{name: "increment", typ: "integer"},
					}},
				}}},
			{name: "cms.query", arity: -1, args: atLeast(3), flags: fReadonly | fFast, lock: lockRead, keys: key1("r", ksRO), acl: "read",
				since: "2.0.0", summary: "Returns the count for one or more items in a sketch", run: cmsQuery,
				info8: &modInfo{-3, "readonly module"},
				doc:   &cmdDoc{complexity: "O(n) where n is the number of items", args: docKeyItems}},
			{name: "cms.merge", arity: -1, args: atLeast(4), flags: fWrite | fDenyOOM, lock: lockExcl, keys: []keySpec{{first: 1, last: 1, step: 1, write: true, read: true, flags: ksRW}, {numkeys: 2, read: true}}, acl: "write",
				since: "2.0.0", summary: "Merges several sketches into one sketch", run: cmsMerge,
				info8: &modInfo{-4, "write denyoom module"},
				doc: &cmdDoc{complexity: "O(n) where n is the number of sketches", args: []docArg{
					{name: "key", typ: "key", key: true},
					{name: "numKeys", typ: "integer"},
					{name: "source", typ: "key", key: true, flags: "multiple"},
					{name: "weights", typ: "block", flags: "optional", args: []docArg{
						{name: "weights", typ: "pure-token", token: "WEIGHTS"},
						{name: "weight", typ: "double", flags: "multiple"},
					}},
				}}},
			{name: "cms.info", arity: -1, args: exactly(2), flags: fReadonly | fFast, lock: lockRead, keys: key1("r", ksRO), acl: "read fast",
				since: "2.0.0", summary: "Returns information about a sketch", run: cmsInfo,
				info8: &modInfo{2, "readonly module"},
				doc:   &cmdDoc{complexity: "O(1)", args: docKeyOnly}},
		}})
}

const errCMSMemory = "CMS: Insufficient memory to create the key"

// cmsInit is CMS.INITBYDIM key width depth and CMS.INITBYPROB key
// overEst prob (RedisBloom's CMS_DimFromProb: countmin.RedisDimensions).
// It makes a redisbloom-profile sketch and logs CMS.INITBYDIM key width
// depth PROFILE redisbloom. Replay also reads the records of keys made
// before the profile existed, the command as the client sent it, and
// makes bloomlab-profile sketches of them, as then.
func cmsInit(c *client, args [][]byte) bool {
	byDim := eqFold(args[0], "cms.initbydim")
	profile := countmin.RedisBloom
	switch {
	case len(args) == 4 && c.replaying && !c.master:
		profile = countmin.Bloomlab // a record written before the profile existed (the replication stream's are Redis's form)
	case len(args) == 4:
	case len(args) == 6 && c.replaying && byDim && eqFold(args[4], "PROFILE"):
		p, err := countmin.ParseProfile(string(args[5]))
		if err != nil {
			c.err("CMS: invalid init arguments")
			return false
		}
		profile = p
	case byDim:
		c.err(wrongArity("cms.initbydim"))
		return false
	default:
		c.err(wrongArity("cms.initbyprob"))
		return false
	}
	s := c.s
	if s.getForCreate(c, args[1]) != nil {
		c.err(errCMSExists)
		return false
	}
	var width, depth uint64
	if byDim {
		w, ok := parseInt(args[2])
		if !ok || w < 1 {
			c.err("CMS: invalid width")
			return false
		}
		d, ok := parseInt(args[3])
		if !ok || d < 1 {
			c.err("CMS: invalid depth")
			return false
		}
		if w > math.MaxInt64/d {
			c.err("CMS: invalid init arguments")
			return false
		}
		width, depth = uint64(w), uint64(d)
	} else {
		e, ok := c.parseDouble(args[2])
		if !ok || e <= 0 || e >= 1 {
			c.err("CMS: invalid overestimation value")
			return false
		}
		p, ok := c.parseDouble(args[3])
		if !ok || p <= 0 || p >= 1 {
			c.err("CMS: invalid prob value")
			return false
		}
		w, d, err := countmin.RedisDimensions(e, p)
		if err != nil || w > math.MaxInt64/uint64(d) {
			c.err("CMS: invalid init arguments")
			return false
		}
		width, depth = w, uint64(d)
	}
	// Bounds: countmin's 2^36 counters (RedisBloom's is the memory it
	// can allocate), and for the bloomlab profile 64 rows.
	var cells uint64
	if profile == countmin.RedisBloom {
		if width*depth > countmin.MaxCells {
			if !c.replaying {
				s.logf("bloomlab: %s %q: %d × %d counters, beyond 2^36", args[0], args[1], width, depth)
			}
			c.err(errCMSMemory)
			return false
		}
		cells = 8 * ((width*depth + 1) / 2) // 32-bit counters, two a word
	} else {
		if depth > countmin.MaxDepth || width*depth > countmin.MaxCells {
			c.err("CMS: invalid init arguments (at most 64 rows and 2^36 counters)")
			return false
		}
		cells = 8 * width * depth
	}
	need := int64(cells) + int64(len(args[1])) + 256
	if !c.reserve(need) {
		c.err(errOOM)
		return false
	}
	sk, err := countmin.New(countmin.Config{Profile: profile, Width: width, Depth: int(depth)})
	if err != nil {
		s.mem.Add(-need)
		c.err("CMS: invalid init arguments")
		return false
	}
	s.add(string(args[1]), &cmsValue{sk}, need)
	c.logArgs("CMS.INITBYDIM", string(args[1]), strconv.FormatUint(width, 10), strconv.FormatUint(depth, 10), "PROFILE", profile.String())
	c.w.Simple("OK")
	return false
}

// cmsOf returns key's entry, locked for reading or writing (nothing under
// the exclusive lock: MERGE), and its sketch; or it writes the error
// reply and returns nil, nothing locked.
func (c *client) cmsOf(key []byte, write bool) (*entry, *cmsValue) {
	return valueAt[*cmsValue](c, key, errCMSMissing, write)
}

func cmsIncrBy(c *client, args [][]byte) bool {
	e, v := c.cmsOf(args[1], true)
	if e == nil {
		return false
	}
	defer c.unlockWrittenEntry(e)
	total, overflow := v.s.N(), false
	for i := 2; i < len(args); i += 2 {
		n, ok := parseInt(args[i+1])
		if !ok {
			c.err("CMS: Cannot parse number")
			return false
		}
		if n < 0 {
			c.err("CMS: Number cannot be negative")
			return false
		}
		var carry uint64
		total, carry = bits.Add64(total, uint64(n), 0)
		overflow = overflow || carry != 0 || total > math.MaxInt64
	}
	if overflow { // the count N would leave int64: refused whole
		c.err("CMS: INCRBY overflow")
		return false
	}
	if err := c.s.writable(e); err != nil {
		c.err("ERR " + err.Error())
		return false
	}
	v = e.v.(*cmsValue)
	c.w.Array((len(args) - 2) / 2)
	for i := 2; i < len(args); i += 2 {
		n, _ := parseInt(args[i+1])
		if v.s.Profile() != countmin.RedisBloom {
			v.s.Add(args[i], uint64(n))
			c.w.Int(int64(v.s.Estimate(args[i])))
			continue
		}
		// RedisBloom keeps the add of an item whose counters saturate
		// and answers an error element for it.
		est, err := v.s.IncrBy(args[i], uint64(n))
		if err != nil {
			c.w.Error("CMS: INCRBY overflow")
			continue
		}
		c.w.Int(int64(est))
	}
	c.s.touchKey(args[1])
	c.log(args)
	return false
}

func cmsQuery(c *client, args [][]byte) bool {
	e, v := c.cmsOf(args[1], false)
	if e == nil {
		return false
	}
	defer c.unlockEntry(e, false)
	c.w.Array(len(args) - 2)
	for _, item := range args[2:] {
		c.w.Int(int64(v.s.Estimate(item)))
	}
	return false
}

func cmsInfo(c *client, args [][]byte) bool {
	e, v := c.cmsOf(args[1], false)
	if e == nil {
		return false
	}
	defer c.unlockEntry(e, false)
	c.mapReply(3)
	c.w.Simple("width")
	c.w.Int(int64(v.s.Width()))
	c.w.Simple("depth")
	c.w.Int(int64(v.s.Depth()))
	c.w.Simple("count")
	c.w.Int(int64(v.s.N()))
	return false
}

// cmsMerge: CMS.MERGE dest numkeys src… [WEIGHTS w…] sets dest to the
// weighted sum of the sources (dest's own counts are replaced, as in
// RedisBloom, unless dest is one of the sources). Every check comes
// before any change: a refused merge leaves dest as it was.
func cmsMerge(c *client, args [][]byte) bool {
	s := c.s
	de, dv := c.cmsOf(args[1], false)
	if de == nil {
		return false
	}
	numKeys, ok := parseInt(args[2])
	if !ok {
		c.err("CMS: invalid numkeys")
		return false
	}
	rest := args[3:]
	if numKeys <= 0 {
		c.err("CMS: Number of keys must be positive")
		return false
	}
	pos := argIndex(rest, 0, "WEIGHTS")
	if pos < 0 {
		if numKeys != int64(len(rest)) {
			c.err("CMS: wrong number of keys")
			return false
		}
	} else if int64(pos) != numKeys || int64(len(rest)) != 1+numKeys*2 {
		c.err("CMS: wrong number of keys/weights")
		return false
	}
	redis := dv.s.Profile() == countmin.RedisBloom
	// Negative weights: RedisBloom's (dialect 8; a replay repeats what
	// was acknowledged, whatever the dialect), never for bloomlab-profile
	// sketches.
	negOK := redis && (c.replaying || c.d.cmsNegativeWeights)
	srcs := make([]*countmin.Sketch, numKeys)
	weights := make([]int64, numKeys)
	var total uint64
	overflow := false
	for i := range srcs {
		weights[i] = 1
		if pos >= 0 {
			w, ok := parseInt(rest[int(numKeys)+1+i])
			if !ok || w < 0 && !negOK {
				c.err("CMS: invalid weight value")
				return false
			}
			weights[i] = w
		}
		_, sv := c.cmsOf(rest[i], false)
		if sv == nil {
			return false
		}
		if sv.s.Width() != dv.s.Width() || sv.s.Depth() != dv.s.Depth() || sv.s.Config() != dv.s.Config() {
			if sv.s.Width() == dv.s.Width() && sv.s.Depth() == dv.s.Depth() {
				s.logf("bloomlab: CMS.MERGE %q: source %q is a %v-profile sketch, %q a %v-profile one: they do not merge",
					args[1], rest[i], sv.s.Profile(), args[1], dv.s.Profile())
			}
			c.err("CMS: width/depth is not equal")
			return false
		}
		srcs[i] = sv.s
		if !redis { // bloomlab profile: N bounded by 2^63 − 1
			hi, lo := bits.Mul64(sv.s.N(), uint64(weights[i]))
			var carry uint64
			total, carry = bits.Add64(total, lo, 0)
			if hi != 0 || carry != 0 || total > math.MaxInt64 {
				overflow = true
			}
		}
	}
	if overflow {
		c.err("CMS: MERGE overflow")
		return false
	}
	need := int64(dv.s.Bits() / 8)
	if !c.reserve(need) {
		c.err(errOOM)
		return false
	}
	out, err := countmin.New(dv.s.Config())
	if err == nil {
		if redis {
			err = out.MergeWeighted(srcs, weights)
		} else {
			for i, src := range srcs {
				if err = out.MergeScaled(src, uint64(weights[i])); err != nil {
					break
				}
			}
		}
	}
	s.mem.Add(-need) // the new sketch replaces the old, which the key accounts for
	switch {
	case errors.Is(err, countmin.ErrOverflow):
		c.err("CMS: MERGE overflow")
		return false
	case err != nil:
		c.err("CMS: width/depth is not equal")
		return false
	}
	de.v = &cmsValue{out}
	de.frozen = 0
	s.resize(args[1], de)
	s.touch(string(args[1]))
	c.log(args)
	c.w.Simple("OK")
	return false
}
