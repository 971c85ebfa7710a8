package server

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"strings"

	"github.com/bloomlab/bloomlab/cuckoo"
	"github.com/bloomlab/bloomlab/internal/blrd"
	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/internal/redisbloom"
	"github.com/bloomlab/bloomlab/rdb"
)

// RedisBloom's CF.* commands on package cuckoo's RedisBloom profile,
// which stores, answers, counts and dumps bit for bit as RedisBloom's
// cuckoo filter does. Replies, reply shapes and error texts are those of
// the server's dialect (src/rebloom.c of RedisBloom 8.6.2 under
// Dialect8, of 2.4.23 under Dialect24); keys created without parameters
// take the module configs (cfDefaults), and are logged with every
// parameter (logInsert). Where this server differs on purpose it is said
// here and in docs/SERVER.md:
//
//   - Ranges: capacity at most 2^30 (RedisBloom 8's range and text).
//     CF.LOADCHUNK refuses a header of more buckets (cfCheckHeader).
//   - Memory: an add that needs a new sub-filter reserves its bytes
//     against MaxMemory first (cuckoo.Filter.AddHashReserve);
//     refused, it answers OOM (CF.ADD) or −1 (in CF.INSERT; false under
//     Redis 8's RESP3), changing nothing. A sub-filter past 2^48 bits,
//     or, with no MaxMemory (-no-maxmemory), tables past the cuckoo
//     package's default budget (cuckoo.Info.DefaultMaxBits: at most
//     half the process's memory), answers "Memory allocation failure"
//     (Dialect8: "ERR Insufficient memory"; −1 in CF.INSERT), as
//     RedisBloom answers a failed malloc.
//   - CF.EXISTS, CF.MEXISTS and CF.COUNT on a key of another type answer
//     WRONGTYPE (RedisBloom answers 0, an absent that is no answer), and
//     CF.DEL and CF.COMPACT too (RedisBloom: "Not found").
//   - CF.LOADCHUNK insists on CF.SCANDUMP's order, without gap or
//     overlap; the key answers only once every byte has arrived, and the
//     item count is checked against the occupied slots (RedisBloom answers
//     from empty slots meanwhile: false negatives). Loading onto a
//     complete filter is refused. A load in progress persists.
//   - CF.INSERT's options are spelled out (RedisBloom reads first
//     letters); CF.RESERVE's options are looked for after the capacity.
//   - CF.COMPACT is a logged write (RedisBloom declares it read-only).

const (
	errCFFull      = "Filter is full"
	errCFMaxExp    = "Maximum expansions reached"
	errCFCapMin    = "Capacity must be at least (BucketSize * 2)"
	errCFCapRange  = "Capacity must be in the range [2 * BUCKETSIZE, 1073741824]"
	errCFPosition  = "Invalid position"
	errCFLoadChunk = "Couldn't load chunk!"
)

func init() {
	registerFamily(&family{name: "cf", category: "cuckoo", module: true, types: []*valueType{cfType, cfLoadType}, rdb: cfRDB,
		files: []string{"cuckoo"}, fromFile: func(f kind.Filter) value { return &cfValue{f.(*cuckoo.Filter)} },
		commands: []*command{
			{name: "cf.reserve", arity: -1, args: stepped(3, 2), flags: fWrite | fDenyOOM, lock: lockExcl, keys: key1("rw", ksRW), acl: "write fast",
				since: "1.0.0", summary: "Creates a new Cuckoo Filter", run: cfReserve,
				info8: &modInfo{-3, "write denyoom module"},
				doc: &cmdDoc{complexity: "O(1)", args: []docArg{
					{name: "key", typ: "key", key: true},
					{name: "capacity", typ: "integer"},
					{name: "bucketsize", typ: "block", token: "BUCKETSIZE", flags: "optional", args: []docArg{
						{name: "bucketsize", typ: "integer"},
					}},
					{name: "maxiterations", typ: "block", token: "MAXITERATIONS", flags: "optional", args: []docArg{
						{name: "maxiterations", typ: "integer"},
					}},
					{name: "expansion", typ: "block", token: "EXPANSION", flags: "optional", args: []docArg{
						{name: "expansion", typ: "integer"},
					}},
				}}},
			{name: "cf.add", arity: -1, args: exactly(3), flags: fWrite | fDenyOOM, lock: lockWrite, keys: key1("rw", ksRW), acl: "write",
				since: "1.0.0", summary: "Adds an item to a Cuckoo Filter", run: cfAdd,
				info8: &modInfo{3, "write denyoom module"},
				doc:   &cmdDoc{complexity: "O(k + i), where k is the number of sub-filters and i is maxIterations", args: docKeyItem}},
			{name: "cf.addnx", arity: -1, args: exactly(3), flags: fWrite | fDenyOOM, lock: lockWrite, keys: key1("rw", ksRW), acl: "write",
				since: "1.0.0", summary: "Adds an item to a Cuckoo Filter if the item did not exist previously.", run: cfAdd,
				info8: &modInfo{3, "write denyoom module"},
				doc:   &cmdDoc{complexity: "O(k + i), where k is the number of sub-filters and i is maxIterations", args: docKeyItem}},
			{name: "cf.insert", arity: -1, args: atLeast(4), flags: fWrite | fDenyOOM, lock: lockWrite, keys: key1("rw", ksRW), acl: "write",
				since: "1.0.0", summary: "Adds one or more items to a Cuckoo Filter. A filter will be created if it does not exist", run: cfInsertCmd,
				info8: &modInfo{-4, "write denyoom module"},
				doc:   &cmdDoc{complexity: "O(n * (k + i)), where n is the number of items, k is the number of sub-filters and i is maxIterations", args: cfInsertArgs}},
			{name: "cf.insertnx", arity: -1, args: atLeast(4), flags: fWrite | fDenyOOM, lock: lockWrite, keys: key1("rw", ksRW), acl: "write",
				since: "1.0.0", summary: "Adds one or more items to a Cuckoo Filter if the items did not exist previously. A filter will be created if it does not exist", run: cfInsertCmd,
				info8: &modInfo{-4, "write denyoom module"},
				doc:   &cmdDoc{complexity: "O(n * (k + i)), where n is the number of items, k is the number of sub-filters and i is maxIterations", args: cfInsertArgs}},
			{name: "cf.exists", arity: -1, args: exactly(3), flags: fReadonly | fFast, lock: lockRead, keys: key1("r", ksRO), acl: "read",
				since: "1.0.0", summary: "Checks whether one or more items exist in a Cuckoo Filter", run: cfCheck,
				info8: &modInfo{3, "readonly module fast"},
				doc:   &cmdDoc{complexity: "O(k), where k is the number of sub-filters", args: docKeyItem}},
			{name: "cf.mexists", arity: -1, args: atLeast(3), flags: fReadonly | fFast, lock: lockRead, keys: key1("r", ksRO), acl: "read",
				since: "1.0.0", summary: "Checks whether one or more items exist in a Cuckoo Filter", run: cfCheck,
				info8: &modInfo{-3, "readonly module fast"},
				doc:   &cmdDoc{complexity: "O(k * n), where k is the number of sub-filters and n is the number of items", args: docKeyItems}},
			{name: "cf.count", arity: -1, args: exactly(3), flags: fReadonly | fFast, lock: lockRead, keys: key1("r", ksRO), acl: "read",
				since: "1.0.0", summary: "Return the number of times an item might be in a Cuckoo Filter", run: cfCheck,
				info8: &modInfo{3, "readonly module fast"},
				doc:   &cmdDoc{complexity: "O(k), where k is the number of sub-filters", args: docKeyItem}},
			{name: "cf.del", arity: -1, args: exactly(3), flags: fWrite | fFast, lock: lockWrite, keys: key1("rw", ksRW), acl: "write",
				since: "1.0.0", summary: "Deletes an item from a Cuckoo Filter", run: cfDel,
				info8: &modInfo{3, "write module fast"},
				doc:   &cmdDoc{complexity: "O(k), where k is the number of sub-filters", args: docKeyItem}},
			{name: "cf.compact", arity: -1, args: exactly(2), flags: fWrite, lock: lockWrite, keys: key1("rw", ksRWUpdate), acl: "read",
				since: "1.0.0", summary: "Frees sub-filters that deletes emptied", run: cfCompact,
				info8: &modInfo{-1, "readonly module fast"},
				doc:   &cmdDoc{bare: true}},
			{name: "cf.info", arity: -1, args: exactly(2), flags: fReadonly | fFast, lock: lockRead, keys: key1("r", ksRO), acl: "read fast",
				since: "1.0.0", summary: "Returns information about a Cuckoo Filter", run: cfInfo,
				info8: &modInfo{2, "readonly module fast"},
				doc:   &cmdDoc{complexity: "O(1)", args: docKeyOnly}},
			{name: "cf.debug", arity: -1, args: exactly(2), flags: fReadonly | fFast, lock: lockRead, keys: key1("r", ksRWUpdate), acl: "read",
				since: "1.0.0", summary: "Returns the parameters and counts of a Cuckoo Filter on one line", run: cfDebug,
				info8: &modInfo{-1, "readonly module fast"},
				doc:   &cmdDoc{bare: true}},
			{name: "cf.scandump", arity: -1, args: exactly(3), flags: fReadonly, lock: lockRead, keys: key1("r", ksRW), acl: "read",
				since: "1.0.0", summary: "Begins an incremental save of the bloom filter", run: cfDumps.scanDump,
				info8: &modInfo{3, "readonly module fast"},
				doc:   scanDumpDoc},
			{name: "cf.loadchunk", arity: -1, args: exactly(4), flags: fWrite | fDenyOOM, lock: lockExcl, keys: key1("rw", ksRW), acl: "write",
				since: "1.0.0", summary: "Restores a filter previously saved using SCANDUMP", run: cfDumps.loadChunk,
				info8: &modInfo{4, "write denyoom module"},
				doc:   loadChunkDoc},
		}})
	// RedisBloom's texts: its CF.SCANDUMP and CF.LOADCHUNK read the
	// iterator first, and answer a header onto any key.
	badChunk := func(err error) string { return errCFLoadChunk + " " + oneLine(err.Error()) }
	*cfDumps = dumpFamily{
		prefix:   "cf",
		complete: cfType,
		loading:  cfLoadType,
		of:       valueOf((*client).cfOf),
		dumper: func(v value) (scanDumper, string) {
			f := v.(*cfValue).f
			if p := f.Info().Profile; p != cuckoo.RedisBloom {
				return nil, fmt.Sprintf("ERR this cuckoo filter has the %v profile: it has no RedisBloom dump (only RedisBloom-profile filters do: bloomlab build -kind cuckoo -profile redisbloom)", p)
			}
			return f, ""
		},
		scanIter: func(arg []byte) (int64, string) {
			iter, ok := parseInt(arg)
			if !ok || iter < 0 {
				return 0, errCFPosition
			}
			return iter, ""
		},
		scanIterFirst: true,
		endNil:        true,
		newLoader:     func() blrd.Loader { return new(cuckoo.Loader) },
		finish: func(ld blrd.Loader) (value, error) {
			f, err := ld.(*cuckoo.Loader).Filter()
			if err != nil {
				return nil, err
			}
			return &cfValue{f}, nil
		},
		loadIter: func(arg []byte) (int64, string) {
			iter, ok := parseInt(arg)
			if !ok || iter == 0 {
				return 0, errCFPosition
			}
			return iter, ""
		},
		headerOnKey:  true,
		headerLen:    cfHeaderSize,
		errHeaderLen: "Invalid header",
		badHeader:    func(err error) string { return "Couldn't create filter! " + oneLine(err.Error()) },
		badChunk:     badChunk,
		badLoad:      badChunk,
		errComplete:  errCFLoadChunk + " the key holds a complete filter (DEL it before loading another)",
		refuse8:      cfRefuse8,
		checkHeader:  cfCheckHeader,
	}
}

// cfRefuse8 is a CF.LOADCHUNK refusal under Dialect8: RedisBloom 8.6.2's
// text, which its tests match exactly ("Couldn't load chunk!" or
// "Couldn't create filter!", the words before the detail that Dialect24
// answers), the detail going to the server's log.
func cfRefuse8(c *client, r loadRefusal) string {
	c.s.logRefusal(r.key, fmt.Sprintf("CF.LOADCHUNK refused (iterator %d, %d bytes): %s", r.iter, r.n, r.reply))
	if i := strings.IndexByte(r.reply, '!'); i >= 0 {
		return r.reply[:i+1]
	}
	return r.reply
}

// cfDumps is CF's dump: CF.SCANDUMP and CF.LOADCHUNK (dumps.go), filled
// in by init (its hooks refer to it, through cfOf).
var cfDumps = new(dumpFamily)

// CF's value types: a filter, and one being loaded with CF.LOADCHUNK.
var (
	cfType     = &valueType{name: "MBbloomCF", tag: 5, decode: decodeCF}
	cfLoadType = &valueType{name: "MBbloomCF", tag: 6, decode: cfDumps.decodeLoading}
)

// cfInsertArgs are CF.INSERT's and CF.INSERTNX's arguments in COMMAND
// DOCS (RedisBloom 8.6.2's, its capacity block as it nests it).
var cfInsertArgs = []docArg{
	docKey,
	{name: "capacity", typ: "block", flags: "optional", args: []docArg{
		{name: "capacity", typ: "pure-token", token: "CAPACITY"},
		{name: "capacity", typ: "integer"},
	}},
	{name: "nocreate", typ: "pure-token", token: "NOCREATE", flags: "optional"},
	{name: "items", typ: "pure-token", token: "ITEMS"},
	{name: "item", typ: "string", flags: "multiple"},
}

// cfRDB is CF in Redis's RDB files and DUMP payloads: RedisBloom's
// MBbloomCF module type, which holds filters of RedisBloom's profile.
var cfRDB = &rdbCodec{module: redisbloom.CFTypeName, encver: redisbloom.CFEncVer,
	read: func(m *rdb.ModuleValue, alloc func(int64) error) (value, error) {
		f, err := cuckoo.ReadRedisBloomRDB(m, alloc)
		if err != nil {
			return nil, err
		}
		return &cfValue{f}, nil
	},
	write: func(v value, m *rdb.ModuleWriter) error { return v.(*cfValue).f.WriteRedisBloomRDB(m) },
	unsupported: func(v value) string {
		x, ok := v.(*cfValue)
		switch {
		case !ok:
			return "CF.LOADCHUNK in progress"
		case x.f.Info().Profile != cuckoo.RedisBloom:
			return "bloomlab cuckoo filter (" + x.f.Info().Profile.String() + " profile)"
		}
		return ""
	},
}

// cfValue is a cuckoo filter answering CF.*: RedisBloom's profile
// (CF.RESERVE, CF.ADD, CF.LOADCHUNK, or a file of that profile), or a
// bloomlab-profile cuckoo filter loaded from a file.
type cfValue struct{ f *cuckoo.Filter }

func (v *cfValue) typ() *valueType       { return cfType }
func (v *cfValue) memory() int64         { return int64(v.f.Bits()/8) + 96 }
func (v *cfValue) clone() (value, error) { return &cfValue{v.f.Clone()}, nil }

func (v *cfValue) encode(w io.Writer) error {
	_, err := v.f.WriteTo(w)
	return err
}

func decodeCF(r io.Reader, n int64) (value, error) {
	var f cuckoo.Filter
	if _, err := f.ReadFrom(&payloadReader{r, n}); err != nil {
		return nil, err
	}
	return &cfValue{&f}, nil
}

// cfHeaderSize is the size of CF.SCANDUMP's header chunk.
const cfHeaderSize = 38

// cfCheckHeader refuses a CF.LOADCHUNK header whose first sub-filter has
// more buckets than CF.RESERVE or CF.INSERT make here and in RedisBloom 8
// (capacity at most 2^30; RedisBloom 2.4 had no bound), which no dump of
// such a filter has. RedisBloom 8.6.2 accepts it (its
// test_number_of_buckets_does_not_overflow sends 2^32 buckets and no
// item, then inserts); here the key would answer nothing until
// gigabytes of chunks had arrived. The loader checks the rest.
func cfCheckHeader(hdr []byte) error {
	if nb := binary.LittleEndian.Uint64(hdr[8:16]); nb > maxCapacity {
		return fmt.Errorf("a first sub-filter of %d buckets: CF.RESERVE and CF.INSERT make at most %d", nb, maxCapacity)
	}
	return nil
}

// cmdName is the command's name in lower case, for an arity error.
func cmdName(b []byte) string { return strings.ToLower(string(b)) }

// cfTableBytes predicts the bytes of a RedisBloom-profile filter's first
// sub-filter (cuckoo.NewRedisBloom: the next power of two of
// capacity/bucketSize buckets, at least one), without allocating it.
func cfTableBytes(capacity uint64, bucketSize int) uint64 {
	nb := capacity / uint64(bucketSize)
	if nb > 1 {
		nb = 1 << bits.Len64(nb-1)
	}
	return max(nb, 1) * uint64(bucketSize)
}

// newCF creates a RedisBloom-profile filter and its key after checking
// memory. The caller holds the keyspace exclusively and checked the key
// is absent; the parameters are in range.
func (c *client) newCF(key []byte, p cfParams) (*entry, string) {
	s := c.s
	need := int64(cfTableBytes(uint64(p.capacity), int(p.bucketSize))) + int64(len(key)) + 256
	if !c.reserve(need) {
		return nil, errOOM
	}
	f, err := cuckoo.NewRedisBloom(uint64(p.capacity), int(p.bucketSize), int(p.maxIter), int(p.expansion))
	if err != nil {
		s.mem.Add(-need)
		return nil, "ERR Could not create filter"
	}
	return s.add(string(key), &cfValue{f}, need), ""
}

// cfParams are a new filter's parameters, and how many sub-filters an
// add may find (RedisBloom's cf-max-expansions, a check of CF.ADD and
// CF.INSERT, not a property of the filter).
type cfParams struct {
	capacity, bucketSize, maxIter, expansion, maxFilters int64
}

// cfDefaults are the parameters of a filter created without them: the
// module configs (cf-initial-size, cf-bucket-size, cf-max-iterations,
// cf-expansion-factor, cf-max-expansions). A replay takes RedisBloom's
// own defaults instead, and no cap on sub-filters: every record logged
// since keys are created with explicit parameters (CF.RESERVE …
// BUCKETSIZE … MAXITERATIONS … EXPANSION …) is independent of them, and
// a record of an earlier log that relies on defaults was written when
// they were RedisBloom's; a replay never refuses an acknowledged add.
func (c *client) cfDefaults() cfParams {
	if c.replaying {
		return cfParams{redisbloom.CFDefaultCapacity, redisbloom.CFDefaultBucketSize,
			redisbloom.CFDefaultMaxIterations, redisbloom.CFDefaultExpansion, redisbloom.CFMaxNumFilters}
	}
	b, capacity, mi, e, mx := c.s.modcfg.cfDefaults()
	return cfParams{capacity, b, mi, e, mx}
}

// cfReserveRecord is a creation as logged: CF.RESERVE with every
// parameter spelled out, so that its replay makes the same filter
// whatever the replaying server's dialect and module configs.
func cfReserveRecord(key []byte, p cfParams) [][]byte {
	return [][]byte{[]byte("CF.RESERVE"), key, []byte(fmt.Sprint(p.capacity)),
		[]byte("BUCKETSIZE"), []byte(fmt.Sprint(p.bucketSize)),
		[]byte("MAXITERATIONS"), []byte(fmt.Sprint(p.maxIter)),
		[]byte("EXPANSION"), []byte(fmt.Sprint(p.expansion))}
}

// cfMaxBucketSize is CF.RESERVE's largest BUCKETSIZE: 255, or under
// Dialect8 at most half of cf-initial-size (RedisBloom 8 narrows the
// range when cf-initial-size is set). A replay takes the widest range.
func (c *client) cfMaxBucketSize() int64 {
	if c.replaying || !c.d.cfBucketOfConfig {
		return redisbloom.CFMaxBucketSize
	}
	_, capacity, _, _, _ := c.s.modcfg.cfDefaults()
	return min(capacity/2, redisbloom.CFMaxBucketSize)
}

// cfOption reads the value of CF.RESERVE's option at args[i], in
// [lo, hi], or writes RedisBloom's error (the dialect's text).
func (c *client) cfOption(args [][]byte, i int, name string, lo, hi int64) (int64, bool) {
	var v int64
	ok := i+1 < len(args)
	if ok {
		v, ok = parseInt(args[i+1])
	}
	if !ok {
		c.err("Couldn't parse " + name)
		return 0, false
	}
	if v < lo || v > hi {
		c.err(fmt.Sprintf(c.d.cfRangeText, name, lo, hi))
		return 0, false
	}
	return v, true
}

func cfReserve(c *client, args [][]byte) bool {
	capacity, ok := parseInt(args[2])
	if !ok {
		c.err("Bad capacity")
		return false
	}
	p := c.cfDefaults()
	p.capacity = capacity
	opts := [3]struct {
		name   string
		lo, hi int64
		v      *int64
	}{
		{"MAXITERATIONS", 1, redisbloom.CFMaxIterations, &p.maxIter},
		{"BUCKETSIZE", 1, c.cfMaxBucketSize(), &p.bucketSize},
		{"EXPANSION", 0, redisbloom.CFMaxExpansion, &p.expansion},
	}
	for k := range opts {
		o := &opts[k]
		if i := argIndex(args, 3, o.name); i >= 0 {
			if *o.v, ok = c.cfOption(args, i, o.name, o.lo, o.hi); !ok {
				return false
			}
		}
	}
	switch {
	case p.bucketSize*2 > capacity:
		c.err(c.d.cfCapLowText)
		return false
	case capacity > maxCapacity:
		c.err(errCFCapRange)
		return false
	}
	if e := c.s.getForCreate(c, args[1]); e != nil {
		if t := e.v.typ(); t == cfType || t == cfLoadType {
			c.err(errBFExists)
		} else {
			c.err(errWrongType)
		}
		return false
	}
	if _, msg := c.newCF(args[1], p); msg != "" {
		c.err(msg)
		return false
	}
	c.log(cfReserveRecord(args[1], p))
	c.w.Simple("OK")
	return false
}

// cfOf returns key's filter for a command that uses it, or writes the
// error reply (and returns nil): WRONGTYPE, or a load in progress.
func (c *client) cfOf(e *entry) *cfValue { v, _ := asValue[*cfValue](c, e); return v }

// cfInsertOptions are CF.INSERT's (and, with the defaults, CF.ADD's).
type cfInsertOptions struct {
	p          cfParams // of a filter created (the defaults, CAPACITY)
	autocreate bool
	nx         bool // CF.ADDNX, CF.INSERTNX: only keys not already present
	multi      bool // an array reply
}

// isNX reports whether a command name ends in NX (CF.ADDNX, CF.INSERTNX).
func isNX(name []byte) bool { return len(name) > 0 && name[len(name)-1]|0x20 == 'x' }

func cfAdd(c *client, args [][]byte) bool {
	opt := cfInsertOptions{p: c.cfDefaults(), autocreate: true, nx: isNX(args[0])}
	return c.cfInsert(args, 2, opt)
}

// cfCapacityOK checks CF.INSERT's CAPACITY, or writes the dialect's
// refusal: at least twice the bucket size of the filter it would create
// (cf-bucket-size; RedisBloom 2.4: twice its fixed 2), at most 2^30. A
// replay checks only the widest range (its records carry no CAPACITY
// since keys are created with explicit parameters).
func (c *client) cfCapacityOK(capacity, bucketSize int64) bool {
	switch {
	case c.replaying:
		if capacity < 2 || capacity > maxCapacity {
			c.err(errCFCapRange)
			return false
		}
	case c.d.cfInsertCap24:
		if capacity < 2*redisbloom.CFDefaultBucketSize {
			c.err(errCFCapMin)
			return false
		}
		if capacity > maxCapacity {
			c.err(errCFCapRange)
			return false
		}
	case capacity < 2*bucketSize || capacity > maxCapacity:
		c.err(fmt.Sprintf("Capacity must be in the range [cf-bucket-size * 2, %d]", maxCapacity))
		return false
	}
	return true
}

func cfInsertCmd(c *client, args [][]byte) bool {
	opt := cfInsertOptions{p: c.cfDefaults(), autocreate: true, nx: isNX(args[0]), multi: true}
	items := -1
	var ok bool
	for i := 2; i < len(args) && items < 0; {
		a := args[i]
		switch {
		case eqFold(a, "CAPACITY"):
			if i++; i == len(args) {
				c.err(wrongArity(cmdName(args[0])))
				return false
			}
			if opt.p.capacity, ok = parseInt(args[i]); !ok {
				c.err("Bad capacity")
				return false
			}
			if !c.cfCapacityOK(opt.p.capacity, opt.p.bucketSize) {
				return false
			}
			i++
		case eqFold(a, "ITEMS"):
			i++
			items = i
		case eqFold(a, "NOCREATE"):
			opt.autocreate = false
			i++
		default:
			c.err("Unknown argument received")
			return false
		}
	}
	if items < 0 || items == len(args) {
		c.err(wrongArity(cmdName(args[0])))
		return false
	}
	return c.cfInsert(args, items, opt)
}

// The outcome of one item of an insert that was refused.
const resRefused int8 = -1

// cfInsert adds args[items:] to key args[1], creating it if allowed with
// opt.p. Each item answers 1 (added), 0 (CF.ADDNX, CF.INSERTNX: may be
// present) or, refused, −1 in an array and the error for CF.ADD; a
// refused item changes nothing. Under Redis 8's RESP3 (Dialect8) CF.ADD,
// CF.ADDNX and CF.INSERT answer booleans (a refused item of CF.INSERT is
// false), CF.INSERTNX integers, as RedisBloom 8.6.2 does. The log gets
// the command as it took effect (logInsert).
func (c *client) cfInsert(args [][]byte, items int, opt cfInsertOptions) bool {
	s := c.s
	key := args[1]
	e := s.get(key)
	created := false
	if e == nil {
		if !opt.autocreate {
			c.err(errBFNotFound)
			return false
		}
		if !c.excl {
			return true
		}
		e = s.getForCreate(c, key) // a key that expired is gone now
		if e == nil {
			if opt.p.capacity < 2*opt.p.bucketSize {
				c.err("ERR Could not create filter") // cf-initial-size below twice cf-bucket-size
				return false
			}
			var msg string
			if e, msg = c.newCF(key, opt.p); msg != "" {
				c.err(msg)
				return false
			}
			created = true
		}
	}
	e.mu.Lock()
	defer unlockWritten(e)
	v := c.cfOf(e)
	if v == nil {
		return false
	}
	if int64(v.f.Info().SubFilters) >= opt.p.maxFilters {
		if created { // as RedisBloom: the key stays, and is logged
			c.logInsert(args, items, nil, true, opt.p)
		}
		c.err(errCFMaxExp)
		return false
	}
	if err := s.writable(e); err != nil {
		c.err("ERR " + err.Error())
		return false
	}
	f := e.v.(*cfValue).f
	// Growth is governed by MaxMemory (each new sub-filter is reserved
	// below), and a replay repeats what was acknowledged: the cuckoo
	// package's default budget then stands aside. Without a limit
	// (-no-maxmemory) it stays, so that copies of one key, which force a
	// growth every 2·BUCKETSIZE copies, meet "Memory allocation failure"
	// at half the process's memory instead of ending the server.
	if s.maxMem > 0 || c.replaying {
		f.SetMaxBits(0)
	} else {
		f.SetMaxBits(f.Info().DefaultMaxBits)
	}
	res := c.res[:0]
	// Only a key that needs a new sub-filter needs memory: under a
	// MaxMemory the filter asks for the sub-filter's bytes before it
	// allocates them (AddHashReserve), and an add refused for them
	// changes nothing.
	limited := s.maxMem > 0 && !c.replaying
	var reserved int64
	reserve := func(bits uint64) error {
		if !c.reserve(int64(bits / 8)) {
			return errCFNoRoom
		}
		reserved += int64(bits / 8)
		return nil
	}
	stop := ""
	for _, item := range args[items:] {
		d := f.Hash(item)
		if opt.nx && f.ContainsHash(d) {
			res = append(res, resPresent)
			continue
		}
		var err error
		if limited {
			err = f.AddHashReserve(d, reserve)
		} else {
			err = f.AddHash(d)
		}
		switch {
		case errors.Is(err, errCFNoRoom):
			stop = errOOM
		case err == nil:
			res = append(res, resAdded)
			continue
		default:
			stop = cfRefusal(err, c.d)
		}
		res = append(res, resRefused)
	}
	c.res = res
	s.mem.Add(-reserved)
	s.resize(key, e)
	c.logInsert(args, items, res, created, opt.p)
	if !opt.multi {
		if res[0] == resRefused {
			c.err(stop)
		} else {
			c.boolReply(res[0] == resAdded)
		}
		return false
	}
	c.w.Array(len(res))
	bools := !opt.nx && c.redis8()
	for _, r := range res {
		if bools {
			c.w.Bool(r == resAdded)
		} else {
			c.w.Int(int64(r))
		}
	}
	return false
}

// errCFNoRoom refuses a new sub-filter's bytes that MaxMemory does not
// leave (cfInsert's reserve): the add answers OOM.
var errCFNoRoom = errors.New("the new sub-filter exceeds maxmemory")

// cfRefusal is CF.ADD's reply to a refused key: RedisBloom's texts for a
// filter that may not grow and for one whose growth failed (RedisBloom
// 2.4: "Memory allocation failure", 8: "ERR Insufficient memory").
func cfRefusal(err error, d *dialect) string {
	switch {
	case errors.Is(err, cuckoo.ErrCannotGrow):
		return d.cfAllocText
	case errors.Is(err, cuckoo.ErrFull):
		return errCFFull
	}
	return "ERR " + oneLine(err.Error())
}

// logInsert logs an insert as it took effect, so that its replay makes
// the same filter whatever the dialect and module configs of the
// replaying server: the items added (refused ones left out: a refusal
// for memory would not recur at replay) as CF.ADD[NX] key item or
// CF.INSERT[NX] key ITEMS item…, without CAPACITY or NOCREATE; and, when
// the command created the key, first the creation as CF.RESERVE with
// every parameter (cfReserveRecord), the two as one MULTI/EXEC block. A
// command that changed nothing is not logged.
func (c *client) logInsert(args [][]byte, items int, res []int8, created bool, p cfParams) {
	changed, refused := created, false
	for _, r := range res {
		changed = changed || r == resAdded
		refused = refused || r == resRefused
	}
	if !changed {
		return
	}
	c.s.touchKey(args[1])
	cmd := args
	if refused || items > 3 || len(res) == 0 { // CF.INSERT with options, or no item tried
		cmd = make([][]byte, 0, 3+len(res))
		cmd = append(cmd, args[0], args[1])
		if items > 2 {
			cmd = append(cmd, []byte("ITEMS"))
		}
		n := len(cmd)
		for i, r := range res {
			if r != resRefused {
				cmd = append(cmd, args[items+i])
			}
		}
		if len(cmd) == n {
			cmd = nil
		}
	}
	switch {
	case !created:
		c.log(cmd)
	case cmd == nil:
		c.log(cfReserveRecord(args[1], p))
	default:
		c.logUnit(cfReserveRecord(args[1], p), cmd)
	}
}

// logUnit logs records that replay together or not at all: a MULTI/EXEC
// block (inside a transaction, the transaction's block).
func (c *client) logUnit(recs ...[][]byte) {
	s := c.s
	if c.replaying && !c.master || c.inTx || s.aof == nil && !s.repl.feeding() {
		for _, r := range recs {
			c.log(r)
		}
		return
	}
	if s.persist != nil {
		s.persist.dirty.Add(int64(len(recs)))
	}
	raw := make([][]byte, 0, len(recs)+2)
	raw = append(raw, multiRecord)
	for _, r := range recs {
		raw = append(raw, appendRecord(nil, r))
	}
	raw = append(raw, execRecord)
	if s.aof != nil {
		c.logPos = s.aof.appendRaw(raw...)
	}
	if !c.master && s.repl.replicaLink() == nil {
		s.repl.feedRecords(raw...)
	}
}

// cfCheck serves CF.EXISTS, CF.MEXISTS and CF.COUNT.
func cfCheck(c *client, args [][]byte) bool {
	name := args[0]
	multi := len(name) > 3 && name[3]|0x20 == 'm'
	count := name[len(name)-1]|0x20 == 't'
	var f *cuckoo.Filter
	if e := c.s.get(args[1]); e != nil {
		e.mu.RLock()
		defer e.mu.RUnlock()
		v := c.cfOf(e)
		if v == nil {
			return false
		}
		f = v.f
	}
	if multi {
		c.w.Array(len(args) - 2)
	}
	for _, item := range args[2:] {
		switch {
		case count && f == nil:
			c.w.Int(0)
		case count:
			c.w.Int(int64(min(f.Count(item), 1<<63-1)))
		default:
			c.boolReply(f != nil && f.Contains(item))
		}
	}
	return false
}

// cfWritable returns key's filter locked for writing, ready to change
// (copied first if a snapshot froze it), or writes the error reply:
// missing answers the text RedisBloom's command has for a missing key.
// The caller unlocks e.mu when e is not nil.
func (c *client) cfWritable(key []byte, missing string) (*entry, *cfValue) {
	e := c.s.get(key)
	if e == nil {
		c.err(missing)
		return nil, nil
	}
	e.mu.Lock()
	if c.cfOf(e) == nil {
		e.mu.Unlock()
		return nil, nil
	}
	return e, e.v.(*cfValue)
}

func cfDel(c *client, args [][]byte) bool {
	s := c.s
	e, v := c.cfWritable(args[1], "Not found")
	if e == nil {
		return false
	}
	defer unlockWritten(e)
	d := v.f.Hash(args[2])
	if !v.f.ContainsHash(d) { // nothing to delete: no copy of a frozen value
		c.boolReply(false)
		return false
	}
	if err := s.writable(e); err != nil {
		c.err("ERR " + err.Error())
		return false
	}
	e.v.(*cfValue).f.DeleteHash(d)
	s.resize(args[1], e) // a delete may compact, freeing sub-filters
	s.touchKey(args[1])
	c.log(args)
	c.boolReply(true)
	return false
}

func cfCompact(c *client, args [][]byte) bool {
	s := c.s
	e, _ := c.cfWritable(args[1], "Cuckoo filter was not found")
	if e == nil {
		return false
	}
	defer unlockWritten(e)
	if err := s.writable(e); err != nil {
		c.err("ERR " + err.Error())
		return false
	}
	e.v.(*cfValue).f.Compact()
	s.resize(args[1], e)
	s.touchKey(args[1])
	c.log(args)
	c.w.Simple("OK")
	return false
}

func cfInfo(c *client, args [][]byte) bool {
	e, v := readKey(c, args[1], (*client).cfOf)
	if e == nil {
		return false
	}
	defer e.mu.RUnlock()
	in := v.f.Info()
	c.mapReply(8)
	for _, x := range [8]struct {
		name string
		v    uint64
	}{
		{"Size", in.Size}, {"Number of buckets", in.Buckets}, {"Number of filters", uint64(in.SubFilters)},
		{"Number of items inserted", in.N}, {"Number of items deleted", in.Deletes},
		{"Bucket size", uint64(in.BucketSize)}, {"Expansion rate", uint64(in.Expansion)},
		{"Max iterations", uint64(in.MaxKicks)},
	} {
		c.w.Simple(x.name)
		c.w.Int(int64(min(x.v, 1<<63-1)))
	}
	return false
}

// cfDebug is CF.DEBUG key: RedisBloom's one line of the filter's
// parameters and counts, "bktsize:2 buckets:512 items:1 deletes:0
// filters:1 max_iterations:20 expansion:1" (the same under RESP3).
func cfDebug(c *client, args [][]byte) bool {
	e, v := readKey(c, args[1], (*client).cfOf)
	if e == nil {
		return false
	}
	defer e.mu.RUnlock()
	in := v.f.Info()
	c.w.Bulk(fmt.Appendf(nil, "bktsize:%d buckets:%d items:%d deletes:%d filters:%d max_iterations:%d expansion:%d",
		in.BucketSize, in.Buckets, in.N, in.Deletes, in.SubFilters, in.MaxKicks, in.Expansion))
	return false
}
