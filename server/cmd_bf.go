package server

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/bloomlab/bloomlab/internal/clog"
	"io"
	"math"
	"strconv"

	"github.com/bloomlab/bloomlab"
	"github.com/bloomlab/bloomlab/internal/blrd"
	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/rdb"
	"github.com/bloomlab/bloomlab/scalable"
)

// RedisBloom's BF.* commands, as RedisBloom 8.6.2 answers them under
// Dialect8 and 2.4.23 under Dialect24. Replies, reply shapes and error
// texts are RedisBloom's; where this server differs on purpose it is said
// here and in docs/SERVER.md. A filter's structure never depends on the
// dialect or the module configs once made: the log records what was made.

// Ranges of a filter's parameters: RedisBloom 8's (2.4 has no upper
// bounds; a client could ask for any size).
const (
	maxCapacity  = 1 << 30
	maxExpansion = scalable.MaxExpansion
)

const (
	errBFNotFound = "ERR not found"
	errBFExists   = "ERR item exists"
	errBFFull     = "ERR non scaling filter is full"
	errBFInsert   = "ERR problem inserting into filter" // RedisBloom 8: a link that cannot be made
	errCapRange   = "ERR capacity must be in the range [1, 1073741824]"
	errExpRange   = "ERR expansion must be in the range [1, 32768]"
)

func init() {
	registerFamily(&family{name: "bf", category: "bloom", module: true, types: []*valueType{bfType, bfLoadType}, rdb: bfRDB,
		files: []string{"*"}, fromFile: func(f kind.Filter) value { return newBF(f) },
		commands: []*command{
			{name: "bf.reserve", arity: -1, args: atLeast(4), flags: fWrite | fDenyOOM, lock: lockExcl, keys: key1("rw", ksRW), acl: "write fast",
				since: "1.0.0", summary: "Creates a new Bloom Filter", run: bfReserve,
				info8: &modInfo{-4, "write denyoom module"},
				doc: &cmdDoc{complexity: "O(1)", args: []docArg{
					{name: "key", typ: "key", key: true},
					{name: "error_rate", typ: "double"},
					{name: "capacity", typ: "integer"},
					{name: "expansion", typ: "block", token: "EXPANSION", flags: "optional", args: []docArg{
						{name: "expansion", typ: "integer"},
					}},
					{name: "nonscaling", typ: "pure-token", token: "NONSCALING", flags: "optional"},
				}}},
			{name: "bf.add", arity: -1, args: exactly(3), flags: fWrite | fDenyOOM, lock: lockWrite, keys: key1("rw", ksRW), acl: "write",
				since: "1.0.0", summary: "Adds an item to a Bloom Filter", run: bfAdd,
				info8: &modInfo{3, "write denyoom module"},
				doc:   &cmdDoc{complexity: "O(k), where k is the number of hash functions used by the last sub-filter", args: docKeyItem}},
			{name: "bf.madd", arity: -1, args: atLeast(3), flags: fWrite | fDenyOOM, lock: lockWrite, keys: key1("rw", ksRW), acl: "write",
				since: "1.0.0", summary: "Adds one or more items to a Bloom Filter. A filter will be created if it does not exist", run: bfAdd,
				info8: &modInfo{-3, "write denyoom module"},
				doc:   &cmdDoc{complexity: "O(k * n), where k is the number of hash functions and n is the number of items", args: docKeyItems}},
			{name: "bf.insert", arity: -1, args: atLeast(4), flags: fWrite | fDenyOOM, lock: lockWrite, keys: key1("rw", ksRW), acl: "write",
				since: "1.0.0", summary: "Adds one or more items to a Bloom Filter. A filter will be created if it does not exist", run: bfInsert,
				info8: &modInfo{-4, "write denyoom module"},
				doc: &cmdDoc{complexity: "O(k * n), where k is the number of hash functions and n is the number of items", args: []docArg{
					{name: "key", typ: "key", key: true},
					{name: "capacity", typ: "block", token: "CAPACITY", flags: "optional", args: []docArg{
						{name: "capacity", typ: "integer"},
					}},
					{name: "error", typ: "block", token: "ERROR", flags: "optional", args: []docArg{
						{name: "error", typ: "double"},
					}},
					{name: "expansion", typ: "block", token: "EXPANSION", flags: "optional", args: []docArg{
						{name: "expansion", typ: "integer"},
					}},
					{name: "nocreate", typ: "pure-token", token: "NOCREATE", flags: "optional"},
					{name: "nonscaling", typ: "pure-token", token: "NONSCALING", flags: "optional"},
					{name: "items", typ: "pure-token", token: "ITEMS"},
					{name: "item", typ: "string", flags: "multiple"},
				}}},
			{name: "bf.exists", arity: -1, args: exactly(3), flags: fReadonly | fFast, lock: lockRead, keys: key1("r", ksRO), acl: "read",
				since: "1.0.0", summary: "Checks whether an item exists in a Bloom Filter", run: bfExists,
				info8: &modInfo{3, "readonly module fast"},
				doc:   &cmdDoc{complexity: "O(k), where k is the number of hash functions used by the last sub-filter", args: docKeyItem}},
			{name: "bf.mexists", arity: -1, args: atLeast(3), flags: fReadonly | fFast, lock: lockRead, keys: key1("r", ksRO), acl: "read",
				since: "1.0.0", summary: "Checks whether one or more items exist in a Bloom Filter", run: bfExists,
				info8: &modInfo{-3, "readonly module fast"},
				doc:   &cmdDoc{complexity: "O(k * n), where k is the number of hash functions and n is the number of items", args: docKeyItems}},
			{name: "bf.info", arity: -1, args: between(2, 3), flags: fReadonly | fFast, lock: lockRead, keys: key1("r", ksRO), acl: "read fast",
				since: "1.0.0", summary: "Returns information about a Bloom Filter", run: bfInfo,
				info8: &modInfo{-2, "readonly module fast"},
				doc: &cmdDoc{complexity: "O(1)", args: []docArg{
					{name: "key", typ: "key", key: true},
					{name: "single_value", typ: "oneof", flags: "optional", args: []docArg{
						{name: "capcaity", typ: "pure-token", token: "CAPACITY"},
						{name: "SIZE", typ: "pure-token", token: "SIZE"},
						{name: "FILTERS", typ: "pure-token", token: "FILTERS"},
						{name: "ITEMS", typ: "pure-token", token: "ITEMS"},
						{name: "EXPANSION", typ: "pure-token", token: "EXPANSION"},
					}},
				}}},
			{name: "bf.card", arity: -1, args: exactly(2), flags: fReadonly | fFast, lock: lockRead, keys: key1("r", ksRO), acl: "read fast",
				since: "1.0.0", summary: "Returns the cardinality of a Bloom filter", run: bfCard,
				info8: &modInfo{2, "readonly module fast"},
				doc:   &cmdDoc{since: "2.4.4", complexity: "O(1)", args: docKeyOnly}},
			{name: "bf.debug", arity: -1, args: exactly(2), flags: fReadonly | fFast, lock: lockRead, keys: key1("r", ksRWUpdate), acl: "read",
				since: "1.0.0", summary: "Returns the links of a Bloom filter: its size, then each link's bytes, bits, hashes, capacity, size and ratio (RedisBloom's internal command)", run: bfDebug,
				info8: &modInfo{-1, "readonly module fast"},
				doc:   &cmdDoc{bare: true}},
			{name: "bf.scandump", arity: -1, args: exactly(3), flags: fReadonly, lock: lockRead, keys: key1("r", ksRW), acl: "read",
				since: "1.0.0", summary: "Begins an incremental save of the bloom filter", run: bfDumps.scanDump,
				info8: &modInfo{3, "readonly module fast"},
				doc:   scanDumpDoc},
			{name: "bf.loadchunk", arity: -1, args: exactly(4), flags: fWrite | fDenyOOM, lock: lockExcl, keys: key1("rw", ksRW), acl: "write",
				since: "1.0.0", summary: "Restores a filter previously saved using SCANDUMP", run: bfDumps.loadChunk,
				info8: &modInfo{4, "write denyoom module"},
				doc:   loadChunkDoc},
		}})
	*bfDumps = dumpFamily{
		prefix:   "bf",
		complete: bfType,
		loading:  bfLoadType,
		of:       valueOf((*client).bfOf),
		dumper: func(v value) (scanDumper, string) {
			// A chain of RedisBloom's layout dumps as RedisBloom does; one
			// of the blocked layout (or a bloomlab-profile chain loaded
			// with -load) in bloomlab's framing, whose header RedisBloom's
			// BF.LOADCHUNK refuses (scalable.Filter.ScanDump).
			b := v.(*bfValue)
			if b.chain == nil {
				return nil, fmt.Sprintf("ERR this %s filter has no RedisBloom dump: only RedisBloom-profile chains do (bloomlab export)", b.f.Kind())
			}
			return b.chain, ""
		},
		scanIter: func(arg []byte) (int64, string) {
			iter, ok := parseInt(arg)
			if !ok {
				return 0, "Second argument must be numeric"
			}
			return iter, ""
		},
		newLoader: func() blrd.Loader { return new(scalable.Loader) },
		finish: func(ld blrd.Loader) (value, error) {
			f, err := ld.(*scalable.Loader).Filter()
			if err != nil {
				return nil, err
			}
			return newBF(f), nil
		},
		loadIter: func(arg []byte) (int64, string) {
			iter, ok := parseInt(arg)
			if !ok {
				return 0, "ERR Second argument must be numeric"
			}
			return iter, ""
		},
		badHeader: badBFData,
		badChunk: func(err error) string {
			var ce *blrd.ChunkError
			if !errors.As(err, &ce) {
				return badBFData(err)
			}
			switch ce.Reason {
			case blrd.BadIterator:
				return errBadData
			case blrd.OutOfOrder:
				return fmt.Sprintf("%s: chunk for bytes %d … %d, expected byte %d next (chunks must come in BF.SCANDUMP's order)", errBadData, ce.Start, ce.End, ce.Next)
			}
			return errTooBig // Crossing, Beyond
		},
		badLoad:     badBFData,
		errComplete: errBadData + ": the key holds a complete filter (DEL it before loading another)",
		refuse8:     bfRefuse8,
	}
}

// bfDumps is BF's dump: BF.SCANDUMP and BF.LOADCHUNK (dumps.go), filled
// in by init (its hooks refer to it, through bfOf).
var bfDumps = new(dumpFamily)

// BF's value types: a filter, and one being loaded with BF.LOADCHUNK.
var (
	bfType     = &valueType{name: "MBbloom--", tag: 1, decode: decodeBF}
	bfLoadType = &valueType{name: "MBbloom--", tag: 4, decode: bfDumps.decodeLoading}
)

// bfRDB is BF in Redis's RDB files and DUMP payloads: RedisBloom's
// MBbloom-- module type, which holds chains of RedisBloom's layout.
var bfRDB = &rdbCodec{module: scalable.RDBTypeName, encver: scalable.RDBEncVer,
	read: func(m *rdb.ModuleValue, alloc func(int64) error) (value, error) {
		f, err := scalable.ReadRedisBloomRDB(m, alloc)
		if err != nil {
			return nil, err
		}
		return newBF(f), nil
	},
	write: func(v value, m *rdb.ModuleWriter) error { return v.(*bfValue).chain.WriteRedisBloomRDB(m) },
	unsupported: func(v value) string {
		x, ok := v.(*bfValue)
		switch {
		case !ok:
			return "BF.LOADCHUNK in progress"
		case x.chain == nil:
			return "bloomlab " + x.f.Kind() + " filter"
		}
		switch p := x.chain.Config().Profile; p {
		case scalable.RedisBloom:
			return ""
		case scalable.Blocked:
			return "bloomlab blocked-layout BF filter"
		default:
			return "bloomlab scalable filter (" + p.String() + " profile)"
		}
	},
}

// bfValue is a filter answering BF.*: a growing chain (BF.RESERVE, BF.ADD,
// BF.LOADCHUNK, or a scalable file), or a filter of any other kind loaded
// from a file.
type bfValue struct {
	f     kind.Filter
	chain *scalable.Filter   // f, when it is a chain
	add   func([]byte) error // the other kinds' insert; nil if read-only
}

func newBF(f kind.Filter) *bfValue {
	v := &bfValue{f: f}
	if c, ok := f.(*scalable.Filter); ok {
		v.chain = c
		return v
	}
	if add, ok := kind.Adder(f); ok {
		v.add = add
	}
	return v
}

// readOnlyError is the reply to an insert into a loaded filter of kind
// name that takes no keys: for a static kind (fuse, ribbon) the words of
// kind.StaticError, saying how to rebuild it and serve it again.
func readOnlyError(name string) string {
	if s, ok := kind.Lookup(name); ok && s.Static {
		return "ERR " + kind.StaticError(name, "add keys to").Error() + " and serve the new file (bloomlab serve -load NAME=FILE)"
	}
	return fmt.Sprintf("ERR this %s filter was loaded read-only: its kind does not take keys", name)
}

func (v *bfValue) typ() *valueType { return bfType }
func (v *bfValue) memory() int64   { return int64(v.f.Bits()/8) + 96 }

func (v *bfValue) encode(w io.Writer) error {
	_, err := v.f.WriteTo(w)
	return err
}

func (v *bfValue) clone() (value, error) {
	switch {
	case v.chain != nil:
		return newBF(v.chain.Clone()), nil
	case v.add == nil:
		return v, nil // never changed
	}
	var b bytes.Buffer
	b.Grow(int(min(v.f.Bits()/8, math.MaxInt32)) + 8192) // the file: no growth while it is written
	if _, err := v.f.WriteTo(&b); err != nil {
		return nil, err
	}
	f, err := bloomlab.Unmarshal(b.Bytes())
	if err != nil {
		return nil, err
	}
	return newBF(f), nil
}

// info returns BF.INFO's fields: a chain's as RedisBloom computes them;
// another kind's as one filter that cannot expand.
func (v *bfValue) info() (capacity, size, filters, items int64, expansion int64, scales bool) {
	if v.chain != nil {
		in := v.chain.RedisInfo()
		return int64(in.Capacity), int64(in.Size), int64(in.Filters), int64(in.Items), int64(in.Expansion), !v.chain.Config().NonScaling
	}
	return int64(v.f.Capacity()), int64(v.f.Bits() / 8), 1, int64(v.f.N()), 0, false
}

func decodeBF(r io.Reader, n int64) (value, error) {
	f, err := bloomlab.ReadFrom(&payloadReader{r, n})
	if err != nil {
		return nil, err
	}
	return newBF(f), nil
}

const (
	errBadData = "ERR received bad data"
	errNoLink  = "ERR invalid offset - no link found"
	errTooBig  = "ERR invalid chunk - Too big for current filter"
)

// bfRefuse8 words a BF.LOADCHUNK refused as RedisBloom 8.6.2 answers the
// nearest refusal of its own (the texts its tests match): "invalid
// offset - no link found" for a chunk that lands on no link, "invalid
// chunk - Too big for current filter" for one that crosses the end of
// its link, "received bad data" otherwise. Where RedisBloom would take
// the chunk (over a complete filter, or out of order) this server still
// refuses it: written over a filter's bits it would make false
// negatives. The detail goes to the server's log.
func bfRefuse8(c *client, r loadRefusal) string {
	c.s.logRefusal(r.key, fmt.Sprintf("BF.LOADCHUNK refused (iterator %d, %d bytes): %s", r.iter, r.n, r.reply))
	switch v := r.v.(type) {
	case *bfValue:
		if v.chain == nil {
			return bfChunkAt(r.iter, r.n, []uint64{v.f.Bits() / 8})
		}
		links := v.chain.RedisInfo().Links
		sizes := make([]uint64, len(links))
		for i, l := range links {
			sizes[i] = l.Bytes
		}
		return bfChunkAt(r.iter, r.n, sizes)
	case *loadingValue:
		var ce *blrd.ChunkError
		if errors.As(r.err, &ce) && ce.Reason == blrd.Crossing {
			return errTooBig
		}
		_, total := v.ld.Progress()
		return bfChunkAt(r.iter, r.n, []uint64{total})
	}
	return errBadData
}

// bfChunkAt is RedisBloom's reply to a chunk of n bytes with iterator
// iter onto links of the given sizes: where it lands, as its
// SBChain_LoadEncodedChunk finds it, or "received bad data" for a chunk
// it would write (this server does not).
func bfChunkAt(iter int64, n int, links []uint64) string {
	if iter <= 0 || iter < int64(n) {
		return errBadData
	}
	at := iter - int64(n) // RedisBloom's offset, from 1
	if at < 1 {
		return errNoLink
	}
	off := uint64(at - 1)
	for _, size := range links {
		if off < size {
			if uint64(n) > size-off {
				return errTooBig
			}
			return errBadData
		}
		off -= size
	}
	return errNoLink
}

// badBFData is BF.LOADCHUNK's reply to data the loader refuses.
func badBFData(err error) string { return errBadData + ": " + oneLine(err.Error()) }

// chainBytes predicts the bytes of a new chain's first link, as
// RedisBloom sizes it, without allocating it.
func chainBytes(errRate float64, capacity int64, nonScaling bool) float64 {
	if !nonScaling {
		errRate /= 2
	}
	ln := clog.Log(errRate) // Go's math.Log on amd64 is wrong for subnormals
	bpe := -ln / (math.Ln2 * math.Ln2)
	return float64(capacity)*bpe/8 + 64
}

// newChain creates a chain and its key after checking memory. The caller
// holds the keyspace exclusively and checked the key is absent.
func (c *client) newChain(key []byte, p bfParams) (*entry, string) {
	s := c.s
	var need float64
	if p.layout == layoutBlocked {
		if msg := c.refuseUnloadable("blocked-layout BF"); msg != "" {
			return nil, msg
		}
		// Sizing a blocked link takes up to tens of milliseconds at
		// large capacities (with the keyspace held), so a key that
		// cannot fit is refused first by a bound: a blocked link needs
		// at least the bits of RedisBloom's at its rate, less one
		// block's rounding.
		lb := int64(chainBytes(p.errRate, p.capacity, p.nonScaling)) - 128 + int64(len(key)) + 256
		if !c.replaying && s.maxMem > 0 && s.mem.Load()+lb > s.maxMem {
			return nil, errOOM
		}
		bits, err := firstLinkBits(p.blockedConfig())
		if err != nil {
			return nil, "ERR could not create filter"
		}
		need = float64(bits)/8 + 64
	} else {
		need = chainBytes(p.errRate, p.capacity, p.nonScaling)
	}
	need += float64(len(key)) + 256
	if need > 1<<46 {
		return nil, "ERR could not create filter"
	}
	if !c.reserve(int64(need)) {
		return nil, errOOM
	}
	f, err := newChainFilter(p)
	if err != nil {
		s.mem.Add(-int64(need))
		return nil, "ERR could not create filter"
	}
	return s.add(string(key), newBF(f), int64(need)), ""
}

// firstLinkBits is scalable.FirstLinkBits (a test counts its calls).
var firstLinkBits = scalable.FirstLinkBits

// bfParams are a new filter's parameters, as BF.RESERVE and BF.INSERT
// take them (RedisBloom's BFInsertOptions), and its layout (bloomlab's
// LAYOUT).
type bfParams struct {
	errRate    float64
	capacity   int64
	expansion  int64 // recorded in the chain (RedisBloom's growth), also when it does not scale
	nonScaling bool
	layout     bfLayout
}

// bfLayout is the layout of a BF key made over the protocol: RedisBloom's
// (the default) or scalable's blocked profile.
type bfLayout uint8

const (
	layoutRedisBloom bfLayout = iota
	layoutBlocked
)

func (l bfLayout) String() string {
	if l == layoutBlocked {
		return "blocked"
	}
	return "redisbloom"
}

// parseLayout reads a layout's name, case-insensitively.
func parseLayout(b []byte) (bfLayout, bool) {
	switch {
	case eqFold(b, "redisbloom"):
		return layoutRedisBloom, true
	case eqFold(b, "blocked"):
		return layoutBlocked, true
	}
	return 0, false
}

const (
	errBadLayout = "ERR bad layout: want LAYOUT BLOCKED or LAYOUT REDISBLOOM"
	errNoLayout  = "ERR no layout: want LAYOUT BLOCKED or LAYOUT REDISBLOOM"
)

// layoutOf names the layout of a BF value, as BF.INFO's Layout answers
// it: a chain's profile (redisbloom, blocked, or bloomlab for a chain
// loaded from a file), another kind's name.
func (v *bfValue) layoutOf() string {
	if v.chain != nil {
		return v.chain.Config().Profile.String()
	}
	return v.f.Kind()
}

// newChainFilter makes the chain of a new key (allocating its first link).
func newChainFilter(p bfParams) (*scalable.Filter, error) {
	if p.layout == layoutBlocked {
		return scalable.New(p.blockedConfig())
	}
	return scalable.NewRedisBloom(p.errRate, uint64(p.capacity), uint32(p.expansion), p.nonScaling)
}

// blockedConfig is the scalable configuration of a blocked-layout key:
// the blocked profile, seed 0, RedisBloom's tightening ratio 1/2.
func (p bfParams) blockedConfig() scalable.Config {
	exp := uint32(p.expansion)
	if exp == 0 {
		exp = scalable.DefaultConfig().Expansion // non-scaling: never used
	}
	return scalable.Config{Capacity: uint64(p.capacity), FPR: p.errRate, Expansion: exp, NonScaling: p.nonScaling, Profile: scalable.Blocked}
}

// bfDefaults are the parameters of a filter created without them (BF.ADD,
// BF.MADD, BF.INSERT without options): the module configs (bf-error-rate,
// bf-initial-size, bf-expansion-factor, 0 meaning non-scaling), but
// RedisBloom's built-in ones (0.01, 100, 2) when replaying the log: a
// record never relies on a default, except those of logs written before
// the configs existed, which are these.
func (c *client) bfDefaults() bfParams {
	if c.replaying {
		// A record without LAYOUT was made in RedisBloom's layout
		// (reserveArgs writes LAYOUT BLOCKED for the other).
		d := scalable.DefaultConfig()
		return bfParams{errRate: d.FPR, capacity: int64(d.Capacity), expansion: int64(d.Expansion)}
	}
	e, n, x, l := c.s.modcfg.bfDefaults()
	return bfParams{errRate: e, capacity: n, expansion: x, nonScaling: x == 0, layout: l}
}

// bf8 reports whether BF's parameters are read by RedisBloom 8.6.2's
// rules (Dialect8, or a log record: the log holds what was made, in a form
// both dialects' records read alike; EXPANSION 0 reads as 8 reads it).
// Replaying, no cap applies (a record holds the rate that was made, up to
// 2.4's 0.999…), and NONSCALING with EXPANSION g records the growth of a
// non-scaling filter.
func (c *client) bf8() bool { return c.d.bfRules8 || c.replaying }

// capRate applies RedisBloom 8's cap on an error rate to a live command.
func (c *client) capRate(e float64) float64 {
	if cap := c.d.bfErrRateCap; cap > 0 && e > cap && !c.replaying {
		return cap
	}
	return e
}

// reserveArgs is BF.RESERVE for key with p, every parameter explicit: the
// log's record of a filter created, which every dialect and module config
// replays alike.
func (p bfParams) reserveArgs(key []byte) [][]byte {
	args := [][]byte{[]byte("BF.RESERVE"), key, strconv.AppendFloat(nil, p.errRate, 'g', -1, 64),
		strconv.AppendInt(nil, p.capacity, 10), []byte("EXPANSION"), strconv.AppendInt(nil, p.expansion, 10)}
	if p.nonScaling {
		args = append(args, []byte("NONSCALING"))
	}
	if p.layout == layoutBlocked {
		args = append(args, []byte("LAYOUT"), []byte("BLOCKED"))
	}
	return args
}

// insertArgs is BF.INSERT for key with p and items, every parameter
// explicit (see reserveArgs).
func (p bfParams) insertArgs(key []byte, items [][]byte) [][]byte {
	args := make([][]byte, 0, 13+len(items))
	args = append(args, []byte("BF.INSERT"), key, []byte("CAPACITY"), strconv.AppendInt(nil, p.capacity, 10),
		[]byte("ERROR"), strconv.AppendFloat(nil, p.errRate, 'g', -1, 64), []byte("EXPANSION"), strconv.AppendInt(nil, p.expansion, 10))
	if p.nonScaling {
		args = append(args, []byte("NONSCALING"))
	}
	if p.layout == layoutBlocked {
		args = append(args, []byte("LAYOUT"), []byte("BLOCKED"))
	}
	args = append(args, []byte("ITEMS"))
	return append(args, items...)
}

// reserveParams reads BF.RESERVE's parameters, or returns the error reply.
func (c *client) reserveParams(args [][]byte) (bfParams, string) {
	if !c.bf8() {
		return reserveParams24(args)
	}
	var p bfParams
	var ok bool
	if p.errRate, ok = c.parseDouble(args[2]); !ok {
		return p, "ERR bad error rate"
	}
	if !(p.errRate > 0 && p.errRate < 1) {
		return p, "ERR error rate must be in the range (0.000000, 1.000000)"
	}
	p.errRate = c.capRate(p.errRate)
	if p.capacity, ok = parseInt(args[3]); !ok {
		return p, "ERR bad capacity"
	}
	if p.capacity < 1 || p.capacity > maxCapacity {
		return p, errCapRange
	}
	p.expansion = c.bfDefaults().expansion
	p.nonScaling = p.expansion == 0 || argIndex(args, 4, "NONSCALING") >= 0
	ex := argIndex(args, 4, "EXPANSION")
	if ex+1 == len(args) {
		return p, "ERR no expansion"
	}
	if ex >= 0 {
		if p.expansion, ok = parseInt(args[ex+1]); !ok {
			return p, "ERR bad expansion"
		}
		switch {
		case p.expansion == 0:
			p.nonScaling = true
		case p.nonScaling && !c.replaying:
			return p, "Nonscaling filters cannot expand"
		}
		if p.expansion < 0 || p.expansion > maxExpansion {
			return p, "ERR expansion must be in the range [0, 32768]"
		}
	}
	return p, ""
}

// reserveParams24 reads BF.RESERVE's parameters as RedisBloom 2.4.23
// does (with 8's upper bounds).
func reserveParams24(args [][]byte) (bfParams, string) {
	p := bfParams{expansion: int64(scalable.DefaultConfig().Expansion)}
	var ok bool
	if p.errRate, ok = parseFloat(args[2]); !ok {
		return p, "ERR bad error rate"
	}
	if p.errRate >= 1 || p.errRate <= 0 {
		return p, "ERR (0 < error rate range < 1) "
	}
	if p.capacity, ok = parseInt(args[3]); !ok {
		return p, "ERR bad capacity"
	}
	if p.capacity <= 0 {
		return p, "ERR (capacity should be larger than 0)"
	}
	if p.capacity > maxCapacity {
		return p, errCapRange
	}
	p.nonScaling = argIndex(args, 4, "NONSCALING") >= 0
	ex := argIndex(args, 4, "EXPANSION")
	if ex+1 == len(args) {
		return p, "ERR no expansion"
	}
	if ex >= 0 {
		if p.nonScaling {
			return p, "Nonscaling filters cannot expand"
		}
		if p.expansion, ok = parseInt(args[ex+1]); !ok {
			return p, "ERR bad expansion"
		}
		if p.expansion < 1 || p.expansion > maxExpansion {
			return p, errExpRange
		}
	}
	return p, ""
}

func bfReserve(c *client, args [][]byte) bool {
	// LAYOUT L (bloomlab's) is taken off before RedisBloom's rules read
	// the rest, so that they answer as without it. Given more than once,
	// every value must be a layout and the last counts (as BF.INSERT
	// reads it).
	layout := c.bfDefaults().layout
	for li := 4; li < len(args); {
		if li = argIndex(args, li, "LAYOUT"); li < 0 {
			break
		}
		if li+1 == len(args) {
			c.err(errNoLayout)
			return false
		}
		var ok bool
		if layout, ok = parseLayout(args[li+1]); !ok {
			c.err(errBadLayout)
			return false
		}
		args = append(args[:li:li], args[li+2:]...)
	}
	if len(args) > 7 {
		c.err(wrongArity("bf.reserve")) // RedisBloom's count, without the LAYOUT options
		return false
	}
	p, msg := c.reserveParams(args)
	if msg != "" {
		c.err(msg)
		return false
	}
	p.layout = layout
	if e := c.s.getForCreate(c, args[1]); e != nil {
		if e.v.typ() == bfType || e.v.typ() == bfLoadType {
			c.err(errBFExists)
		} else {
			c.err(errWrongType)
		}
		return false
	}
	if _, msg := c.newChain(args[1], p); msg != "" {
		c.err(msg)
		return false
	}
	c.log(p.reserveArgs(args[1]))
	c.w.Simple("OK")
	return false
}

// bfOf returns key's filter for a command that reads it, or writes the
// error reply (and returns nil): WRONGTYPE, or a load in progress.
func (c *client) bfOf(e *entry) *bfValue { v, _ := asValue[*bfValue](c, e); return v }

// insertOptions are BF.INSERT's (and, with the defaults, BF.ADD's).
type insertOptions struct {
	bfParams
	autocreate bool
	multi      bool
}

func bfAdd(c *client, args [][]byte) bool {
	multi := len(args[0]) > 3 && (args[0][3] == 'm' || args[0][3] == 'M')
	return c.insert(args, 2, insertOptions{bfParams: c.bfDefaults(), autocreate: true, multi: multi})
}

func bfInsert(c *client, args [][]byte) bool {
	opt := insertOptions{bfParams: c.bfDefaults(), autocreate: true, multi: true}
	d8 := c.bf8()
	userExp := false // 2.4: an EXPANSION given must be at least 1
	items := -1
	var ok bool
	for i := 2; i < len(args) && items < 0; {
		a := args[i]
		switch {
		case eqFold(a, "ITEMS"):
			i++
			items = i
		case eqFold(a, "ERROR"), eqFold(a, "EXPANSION"), eqFold(a, "CAPACITY"):
			i++
			if i == len(args) {
				c.err(wrongArity("bf.insert"))
				return false
			}
			switch {
			case eqFold(a, "ERROR"):
				if opt.errRate, ok = c.parseDouble(args[i]); !ok || d8 && !(opt.errRate > 0 && opt.errRate < 1) {
					c.err("Bad error rate")
					return false
				}
				opt.errRate = c.capRate(opt.errRate)
			case eqFold(a, "EXPANSION"):
				if opt.expansion, ok = parseInt(args[i]); !ok || d8 && (opt.expansion < 0 || opt.expansion > maxExpansion) {
					c.err("Bad expansion")
					return false
				}
				userExp = true
			default:
				if opt.capacity, ok = parseInt(args[i]); !ok || d8 && (opt.capacity < 1 || opt.capacity > maxCapacity) {
					c.err("Bad capacity")
					return false
				}
			}
			i++
		case eqFold(a, "NOCREATE"):
			opt.autocreate = false
			i++
		case eqFold(a, "NONSCALING"):
			opt.nonScaling = true
			i++
		case eqFold(a, "LAYOUT"): // bloomlab's
			if i+1 == len(args) {
				c.err(errNoLayout)
				return false
			}
			if opt.layout, ok = parseLayout(args[i+1]); !ok {
				c.err(errBadLayout)
				return false
			}
			i += 2
		default:
			c.err("Unknown argument received")
			return false
		}
	}
	if items < 0 || items == len(args) {
		c.err(wrongArity("bf.insert"))
		return false
	}
	if d8 {
		if opt.expansion == 0 {
			opt.nonScaling = true
		}
		return c.insert(args, items, opt)
	}
	if opt.errRate <= 0 || opt.errRate >= 1 || opt.capacity < 1 || opt.expansion < 0 || userExp && opt.expansion < 1 {
		c.err("Bad argument received")
		return false
	}
	if opt.capacity > maxCapacity {
		c.err(errCapRange)
		return false
	}
	if opt.expansion > maxExpansion {
		c.err(errExpRange)
		return false
	}
	return c.insert(args, items, opt)
}

// The outcome of one item of an insert.
const (
	resPresent int8 = 0
	resAdded   int8 = 1
)

// insert adds args[items:] to key args[1], creating it if allowed. It
// logs the command with the items it processed (all of them, unless one
// was refused: then the reply stops at that item's error, as RedisBloom's
// does for a full non-scaling filter).
func (c *client) insert(args [][]byte, items int, opt insertOptions) bool {
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
			var msg string
			if e, msg = c.newChain(key, opt.bfParams); msg != "" {
				c.err(msg)
				return false
			}
			created = true
		}
	}
	e.mu.Lock()
	defer unlockWritten(e)
	v := c.bfOf(e)
	if v == nil {
		return false
	}
	if v.chain == nil && v.add == nil {
		c.err(readOnlyError(v.f.Kind()))
		return false
	}
	if err := s.writable(e); err != nil {
		c.err("ERR " + err.Error())
		return false
	}
	v = e.v.(*bfValue)
	res := c.res[:0]
	stop := ""
	rest := false // Dialect8: the items after a link that cannot be made are answered too
	limited := s.maxMem > 0 && !c.replaying
	var reserved int64
	room, roomKnown := uint64(0), false
	ds := &c.digests
	for i, item := range args[items:] {
		if i&(prefetchGroup-1) == 0 && v.chain != nil {
			c.hashGroup(v.chain, args[items+i:], true)
		}
		var present bool
		var err error
		if v.chain != nil {
			if limited {
				if !roomKnown {
					room, roomKnown = v.chain.Room(), true
				}
				if room == 0 {
					next, nerr := v.chain.NextLinkBits()
					if nerr == nil && next > 0 {
						if !c.reserve(int64(next / 8)) {
							stop = errOOM
							break
						}
						reserved += int64(next / 8)
					}
				}
			}
			present, err = v.chain.AddHash(ds[i&(prefetchGroup-1)])
			if err == nil && !present && roomKnown {
				if room > 0 {
					room--
				} else {
					roomKnown = false
				}
			}
		} else {
			present = v.f.Contains(item)
			if !present {
				err = v.add(item)
			}
		}
		if err != nil {
			switch {
			case errors.Is(err, scalable.ErrFull) && v.chain != nil && v.chain.Config().NonScaling:
				stop = errBFFull
			case errors.Is(err, scalable.ErrFull) && c.d.bfFullContinue:
				// RedisBloom 8 answers its text for each item it cannot
				// insert and goes on with the next (see rest below).
				if !c.replaying {
					s.logf("bloomlab: %s %q: the filter cannot grow: %s", args[0], key, oneLine(err.Error()))
				}
				stop, rest = errBFInsert, true
			case errors.Is(err, scalable.ErrFull):
				stop = "ERR the filter cannot grow: " + oneLine(err.Error())
			default:
				stop = "ERR " + oneLine(err.Error())
			}
			break
		}
		if present {
			res = append(res, resPresent)
		} else {
			res = append(res, resAdded)
		}
	}
	c.res = res
	s.mem.Add(-reserved)
	s.resize(key, e)
	changed := created
	for _, r := range res {
		if r == resAdded {
			changed = true
		}
	}
	if changed {
		s.touchKey(key)
		switch {
		case !created:
			c.log(args[:items+len(res)])
		case len(res) == 0:
			c.log(opt.reserveArgs(key))
		default:
			// The parameters made explicit: a replay makes this filter
			// whatever its dialect and module configs.
			c.log(opt.insertArgs(key, args[items:items+len(res)]))
		}
	}
	if !opt.multi {
		if stop != "" {
			c.err(stop)
		} else {
			c.boolReply(res[0] == resAdded)
		}
		return false
	}
	n := len(res)
	var after [][]byte // the items after the one refused, answered as RedisBloom 8 does
	if stop != "" {
		n++
		if rest {
			after = args[items+len(res)+1:]
			n += len(after)
		}
	}
	c.w.Array(n)
	for _, r := range res {
		c.boolReply(r == resAdded)
	}
	if stop != "" {
		c.w.Error(stop)
	}
	// No later item can be inserted either (the next link is the same):
	// one already present answers 0, another the refusal. Nothing changes,
	// so the log holds the items up to the refused one.
	for _, item := range after {
		if v.f.Contains(item) {
			c.boolReply(false)
		} else {
			c.w.Error(stop)
		}
	}
	return false
}

func bfExists(c *client, args [][]byte) bool {
	multi := len(args[0]) > 3 && (args[0][3] == 'm' || args[0][3] == 'M')
	e := c.s.get(args[1])
	var v *bfValue
	if e != nil {
		e.mu.RLock()
		defer e.mu.RUnlock()
		// A key of another type (a cuckoo filter, a sketch, a string)
		// answers WRONGTYPE, as a partial filter answers its error:
		// RedisBloom answers 0, an "absent" that is no answer (a client
		// asking BF.EXISTS of a CF key would see every key absent).
		if v = c.bfOf(e); v == nil {
			return false
		}
	}
	if multi {
		c.w.Array(len(args) - 2)
	}
	for i, item := range args[2:] {
		switch {
		case v == nil:
			c.boolReply(false)
		case v.chain != nil:
			if i&(prefetchGroup-1) == 0 {
				c.hashGroup(v.chain, args[2+i:], false)
			}
			c.boolReply(v.chain.ContainsHash(c.digests[i&(prefetchGroup-1)]))
		default:
			c.boolReply(v.f.Contains(item))
		}
	}
	return false
}

// prefetchGroup is how many items of a BF.MADD, BF.INSERT or BF.MEXISTS
// are hashed together and have their first cache lines loaded together
// (scalable.Prefetch) before they are answered one by one: their misses
// overlap. A power of two.
const prefetchGroup = 16

// hashGroup hashes the first prefetchGroup items (or all, if fewer) into
// c.digests, and, if there are several, prefetches their words in f
// (probes: an insert's).
func (c *client) hashGroup(f *scalable.Filter, items [][]byte, probes bool) {
	items = items[:min(len(items), prefetchGroup)]
	for i, item := range items {
		c.digests[i] = f.Digest(item)
	}
	if len(items) > 1 {
		f.Prefetch(c.digests[:len(items)], probes)
	}
}

func bfInfo(c *client, args [][]byte) bool {
	e, v := readKey(c, args[1], (*client).bfOf)
	if e == nil {
		return false
	}
	defer e.mu.RUnlock()
	capacity, size, filters, items, expansion, scales := v.info()
	exp := func() {
		if scales {
			c.w.Int(expansion)
		} else {
			c.w.Null()
		}
	}
	if len(args) == 3 {
		f := args[2]
		one := func(name string) {
			// Redis 8: a map of one under RESP3, an array of the value
			// otherwise.
			if c.redis8() {
				c.w.Map(1)
				c.w.Simple(name)
			} else {
				c.w.Array(1)
			}
		}
		switch {
		case eqFold(f, "capacity"):
			one("Capacity")
			c.w.Int(capacity)
		case eqFold(f, "size"):
			one("Size")
			c.w.Int(size)
		case eqFold(f, "filters"):
			one("Number of filters")
			c.w.Int(filters)
		case eqFold(f, "items"):
			one("Number of items inserted")
			c.w.Int(items)
		case eqFold(f, "expansion"):
			one("Expansion rate")
			exp()
		case eqFold(f, "layout"): // bloomlab's
			one("Layout")
			c.w.Simple(v.layoutOf())
		default:
			c.err("Invalid information value")
		}
		return false
	}
	// A key of RedisBloom's layout answers RedisBloom's five fields, which
	// its clients parse (as does a filter of another kind loaded from a
	// file, as before); one of the blocked layout adds its layout.
	blockedKey := v.chain != nil && v.chain.Config().Profile == scalable.Blocked
	if blockedKey {
		c.mapReply(6)
	} else {
		c.mapReply(5)
	}
	c.w.Simple("Capacity")
	c.w.Int(capacity)
	c.w.Simple("Size")
	c.w.Int(size)
	c.w.Simple("Number of filters")
	c.w.Int(filters)
	c.w.Simple("Number of items inserted")
	c.w.Int(items)
	c.w.Simple("Expansion rate")
	exp()
	if blockedKey {
		c.w.Simple("Layout")
		c.w.Simple("blocked")
	}
	return false
}

func bfCard(c *client, args [][]byte) bool {
	e := c.s.get(args[1])
	if e == nil {
		c.w.Int(0)
		return false
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	if v := c.bfOf(e); v != nil {
		c.w.Int(int64(v.f.N()))
	}
	return false
}

// bfDebug is BF.DEBUG key, as RedisBloom answers it: "size:N" (the keys
// added), then per link "bytes:B bits:b hashes:k hashwidth:64 capacity:C
// size:N ratio:R" (R as C's %g). A filter of another kind loaded from a
// file has no links to describe: its reply is an error.
func bfDebug(c *client, args [][]byte) bool {
	e, v := readKey(c, args[1], (*client).bfOf)
	if e == nil {
		return false
	}
	defer e.mu.RUnlock()
	if v.chain == nil {
		c.err(fmt.Sprintf("ERR this %s filter has no RedisBloom links: BF.INFO describes it", v.f.Kind()))
		return false
	}
	links := v.chain.RedisInfo().Links
	// A RedisBloom-profile chain hashes with 64 bits (FORCE64, which
	// package scalable requires: RedisBloom 1.0's 32-bit chains are
	// refused); the other profiles with xxh3-128.
	width := 64
	if v.chain.Config().Profile != scalable.RedisBloom {
		width = 128
	}
	c.w.Array(1 + len(links))
	b := append(make([]byte, 0, 128), "size:"...)
	b = strconv.AppendUint(b, v.chain.N(), 10)
	c.w.Bulk(b)
	for _, l := range links {
		b = append(b[:0], "bytes:"...)
		b = strconv.AppendUint(b, l.Bytes, 10)
		b = append(b, " bits:"...)
		b = strconv.AppendUint(b, l.Bits, 10)
		b = append(b, " hashes:"...)
		b = strconv.AppendInt(b, int64(l.Hashes), 10)
		b = append(b, " hashwidth:"...)
		b = strconv.AppendInt(b, int64(width), 10)
		b = append(b, " capacity:"...)
		b = strconv.AppendUint(b, l.Capacity, 10)
		b = append(b, " size:"...)
		b = strconv.AppendUint(b, l.Size, 10)
		b = append(b, " ratio:"...)
		b = strconv.AppendFloat(b, l.Ratio, 'g', 6, 64) // C's %g
		c.w.Bulk(b)
	}
	return false
}
