package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync/atomic"

	"github.com/bloomlab/bloomlab/rdb"
	"github.com/bloomlab/bloomlab/tdigest"
)

// RedisBloom's TDIGEST.* commands, on the tdigest package: every reply is
// RedisBloom's (8.6.2 and 2.4.23 share t-digest-c; dialect 2.4 answers
// INFO as an array under RESP3 too, and doubles in %.17g).
//
// RedisBloom's queries (QUANTILE, CDF, RANK, REVRANK, BYRANK, BYREVRANK,
// TRIMMED_MEAN, MERGE's sources) merge a digest's buffered values first,
// and where that merge happens changes later answers in their last bits.
// So here a query takes the key's write lock, and a query that merged the
// buffer logs the replay-only record "TDIGEST.ADD key" (no values:
// merge the buffer), so that replaying the log after a kill -9 rebuilds
// the digest exactly, and the snapshot keeps the buffer as it is.
// (RedisBloom merges the buffer when it saves its RDB and logs no query,
// so its digest after a restart can answer differently than before it.)
//
// Memory: a key accounts RedisBloom's TDIGEST.INFO "Memory usage" (the
// whole capacity of 6·compression+10 centroids) from its creation, checked
// against -maxmemory before it is made; the arrays grow within that as
// values arrive.

// tdigestType is TDIGEST's value type.
var tdigestType = &valueType{name: "TDIS-TYPE", tag: 8, decode: decodeTDigest}

// tdQuery declares one of TDIGEST's queries of many values (QUANTILE,
// CDF, RANK, REVRANK, BYRANK, BYREVRANK): read-only, but under the key's
// write lock, since a query may merge the buffer first.
func tdQuery(name, summary, complexity, arg string, run func(*client, [][]byte) bool) *command {
	return &command{name: name, arity: -1, args: atLeast(3), flags: fReadonly | fFast, lock: lockWrite, keys: key1("r", ksRO), acl: "read fast",
		since: "2.4.0", summary: summary, run: run,
		info8: &modInfo{-3, "readonly module"},
		doc:   &cmdDoc{complexity: complexity, args: []docArg{docKey, {name: arg, typ: "double", flags: "multiple"}}}}
}

// tdigestRDB is TDIGEST in Redis's RDB files and DUMP payloads:
// RedisBloom's TDIS-TYPE module type. A digest's buffer must be merged
// before it is written (RedisBloom's save merges it: the caller does,
// under the key's write lock, and logs it as the queries do), but for a
// buffer of total weight 1, which RedisBloom's merge leaves as it is, and
// so does its save: such a buffer is written as RedisBloom writes it.
var tdigestRDB = &rdbCodec{module: tdigest.RDBTypeName, encver: tdigest.RDBEncVer,
	read: func(m *rdb.ModuleValue, alloc func(int64) error) (value, error) {
		d, err := tdigest.ReadRedisBloomRDB(m, alloc)
		if err != nil {
			return nil, err
		}
		return &tdigestValue{d}, nil
	},
	write: func(v value, m *rdb.ModuleWriter) error {
		d := v.(*tdigestValue).d
		if d.UnmergedNodes() != 0 && d.MergedWeight()+d.UnmergedWeight() > 1 {
			return errors.New("server: a digest written with its buffer unmerged")
		}
		return d.WriteRedisBloomRDB(m)
	},
}

type tdigestValue struct{ d *tdigest.Digest }

func (v *tdigestValue) typ() *valueType       { return tdigestType }
func (v *tdigestValue) memory() int64         { return v.d.MemoryUsage() }
func (v *tdigestValue) clone() (value, error) { return &tdigestValue{v.d.Clone()}, nil }

func (v *tdigestValue) encode(w io.Writer) error {
	b, _ := v.d.MarshalBinary()
	_, err := w.Write(b)
	return err
}

// decodeTDigest reads one digest from the snapshot (n bytes are left in
// it): its header first, which says its length (checked against the
// capacity and against n), then the rest; UnmarshalBinary checks it all.
func decodeTDigest(r io.Reader, n int64) (value, error) {
	var hdr [tdigest.HeaderSize]byte
	if n < int64(len(hdr)) {
		return nil, tdigest.ErrFormat
	}
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	total, err := tdigest.EncodedLen(hdr[:])
	if err != nil {
		return nil, err
	}
	if int64(total) > n {
		return nil, fmt.Errorf("%w: %d bytes, %d left in the snapshot", tdigest.ErrFormat, total, n)
	}
	buf := make([]byte, total)
	copy(buf, hdr[:])
	if _, err := io.ReadFull(r, buf[len(hdr):]); err != nil {
		return nil, err
	}
	var d tdigest.Digest
	if err := d.UnmarshalBinary(buf); err != nil {
		return nil, err
	}
	return &tdigestValue{&d}, nil
}

const (
	errTDMissing = "ERR T-Digest: key does not exist"
	errTDExists  = "ERR T-Digest: key already exists"
)

func init() {
	// Queries take lockWrite: they may merge the buffer (see above).
	registerFamily(&family{name: "tdigest", category: "tdigest", module: true, types: []*valueType{tdigestType}, rdb: tdigestRDB, settle: tdSettle,
		commands: []*command{
			{name: "tdigest.create", arity: -1, args: counts(2, 4, 2), flags: fWrite | fDenyOOM | fFast, lock: lockExcl, keys: key1("rw", ksRW), acl: "write fast",
				since: "2.4.0", summary: "Allocates memory and initializes a new t-digest sketch", run: tdCreate,
				info8: &modInfo{-2, "write denyoom module"},
				doc: &cmdDoc{complexity: "O(1)", args: []docArg{
					{name: "key", typ: "key", key: true},
					{name: "compression_block", typ: "block", flags: "optional", args: []docArg{
						{name: "compression_token", typ: "pure-token", token: "COMPRESSION"},
						{name: "compression", typ: "integer"},
					}},
				}}},
			{name: "tdigest.add", arity: -1, args: argc{min: 3, replay: &argc{min: 2}}, flags: fWrite | fDenyOOM, lock: lockWrite, keys: key1("rw", ksRW), acl: "write",
				since: "2.4.0", summary: "Adds one or more observations to a t-digest sketch", run: tdAdd,
				info8: &modInfo{-3, "write denyoom module"},
				doc: &cmdDoc{complexity: "O(N), where N is the number of samples to add", args: []docArg{
					{name: "key", typ: "key", key: true},
					{name: "value", typ: "double", flags: "multiple"},
				}}},
			{name: "tdigest.reset", arity: -1, args: exactly(2), flags: fWrite | fDenyOOM | fFast, lock: lockWrite, keys: key1("rw", ksRW), acl: "write fast",
				since: "2.4.0", summary: "Resets a t-digest sketch: empty the sketch and re-initializes it.", run: tdReset,
				info8: &modInfo{2, "write denyoom module"},
				doc:   &cmdDoc{complexity: "O(1)", args: docKeyOnly}},
			{name: "tdigest.merge", arity: -1, args: atLeast(4), flags: fWrite | fDenyOOM, lock: lockWrite, keys: []keySpec{{first: 1, last: 1, step: 1, write: true, read: true, flags: ksRW}, {numkeys: 2, read: true, flags: ksRO}}, acl: "write",
				since: "2.4.0", summary: "Merges multiple t-digest sketches into a single sketch", run: tdMerge,
				info8: &modInfo{-4, "write denyoom module movablekeys"},
				doc: &cmdDoc{complexity: "O(N*K), where N is the number of centroids and K being the number of input sketches", args: []docArg{
					{name: "destination-key", typ: "key", key: true},
					{name: "numkeys", typ: "integer"},
					{name: "source-key", typ: "key", key: true, keySpec: 1, flags: "multiple"},
					{name: "compression_block", typ: "block", flags: "optional", args: []docArg{
						{name: "compression_token", typ: "pure-token", token: "COMPRESSION"},
						{name: "compression", typ: "integer"},
					}},
					{name: "override", typ: "pure-token", token: "OVERRIDE", flags: "optional"},
				}}},
			{name: "tdigest.min", arity: -1, args: exactly(2), flags: fReadonly | fFast, lock: lockWrite, keys: key1("r", ksRO), acl: "read fast",
				since: "2.4.0", summary: "Returns the minimum observation value from a t-digest sketch", run: tdMinMax,
				info8: &modInfo{2, "readonly module"},
				doc:   &cmdDoc{complexity: "O(1)", args: docKeyOnly}},
			{name: "tdigest.max", arity: -1, args: exactly(2), flags: fReadonly | fFast, lock: lockWrite, keys: key1("r", ksRO), acl: "read fast",
				since: "2.4.0", summary: "Returns the maximum observation value from a t-digest sketch", run: tdMinMax,
				info8: &modInfo{2, "readonly module"},
				doc:   &cmdDoc{complexity: "O(1)", args: docKeyOnly}},
			tdQuery("tdigest.quantile", "Returns, for each input fraction, an estimation of the value (floating point) that is smaller than the given fraction of observations", "O(N) where N is the number of quantiles specified.", "quantile", tdQuantile),
			tdQuery("tdigest.cdf", "Returns, for each input value, an estimation of the floating-point fraction of (observations smaller than the given value + half the observations equal to the given value). Multiple fractions can be retrieved in a single call.", "O(N) where N is the number of values specified.", "value", tdCDF),
			tdQuery("tdigest.rank", "Returns, for each input value (floating-point), the estimated rank of the value (the number of observations in the sketch that are smaller than the value + half the number of observations that are equal to the value)", "O(N) where N is the number of values specified.", "value", tdRank),
			tdQuery("tdigest.revrank", "Returns, for each input value (floating-point), the estimated reverse rank of the value (the number of observations in the sketch that are larger than the value + half the number of observations that are equal to the value)", "O(N) where N is the number of values specified.", "value", tdRank),
			tdQuery("tdigest.byrank", "Returns, for each input rank, an estimation of the value (floating-point) with that rank", "O(N) where N is the number of ranks specified", "rank", tdByRank),
			tdQuery("tdigest.byrevrank", "Returns, for each input reverse rank, an estimation of the value (floating-point) with that reverse rank", "O(N) where N is the number of reverse ranks specified.", "reverse_rank", tdByRank),
			{name: "tdigest.trimmed_mean", arity: -1, args: exactly(4), flags: fReadonly, lock: lockWrite, keys: key1("r", ksRO), acl: "read",
				since: "2.4.0", summary: "Returns an estimation of the mean value from the sketch, excluding observation values outside the low and high cutoff quantiles", run: tdTrimmedMean,
				info8: &modInfo{4, "readonly module"},
				doc: &cmdDoc{complexity: "O(N) where N is the number of centroids", args: []docArg{
					{name: "key", typ: "key", key: true},
					{name: "low_cut_quantile", typ: "double"},
					{name: "high_cut_quantile", typ: "double"},
				}}},
			{name: "tdigest.info", arity: -1, args: exactly(2), flags: fReadonly | fFast, lock: lockWrite, keys: key1("r", ksRO), acl: "read fast",
				since: "2.4.0", summary: "Returns information and statistics about a t-digest sketch", run: tdInfo,
				info8: &modInfo{2, "readonly module"},
				doc:   &cmdDoc{complexity: "O(1)", args: docKeyOnly}},
		}})
}

// tdOf returns key's entry, locked for writing (nothing under the
// exclusive lock), and its digest; or it writes RedisBloom's error reply
// ("key does not exist", WRONGTYPE) and returns nil, nothing locked.
func (c *client) tdOf(key []byte) (*entry, *tdigestValue) {
	return valueAt[*tdigestValue](c, key, errTDMissing, true)
}

// tdMerged merges e's buffered values, as RedisBloom's query is about to
// (the caller holds e's write lock): the value is made writable first (a
// snapshot in progress keeps its copy), and the merge is logged as
// "TDIGEST.ADD key" so that a replay merges there too. It returns the
// value to query, nil after writing the error reply.
func (c *client) tdMerged(key []byte, e *entry) *tdigestValue {
	if e.v.(*tdigestValue).d.UnmergedNodes() == 0 {
		return e.v.(*tdigestValue)
	}
	if err := c.settleKey(string(key), e); err != nil {
		if errors.Is(err, errTDOverflow) {
			c.err("ERR T-Digest: overflow detected")
		} else {
			c.err("ERR " + err.Error())
		}
		return nil
	}
	return e.v.(*tdigestValue)
}

// errTDOverflow is a merge that overflowed (tdSettle).
var errTDOverflow = errors.New("T-Digest: overflow detected")

// tdSettle merges a digest's buffer, as RedisBloom's rdb_save compresses
// the live sketch whenever it is saved (SAVE, DEBUG RELOAD, DUMP; a
// BGSAVE's forked child compresses only its copy there, the live one
// here: docs/SERVER.md), and as a query does before it reads. A replay
// merges on the record "TDIGEST.ADD key" (no values). A buffer that the
// merge leaves (total weight 1) is no change.
func tdSettle(key string, v value) ([]string, error) {
	d := v.(*tdigestValue).d
	if d.UnmergedNodes() == 0 {
		return nil, nil
	}
	if err := d.Compress(); err != nil {
		return nil, fmt.Errorf("%w: %v", errTDOverflow, err)
	}
	if d.UnmergedNodes() != 0 {
		return nil, nil
	}
	return []string{"TDIGEST.ADD", key}, nil
}

// tdCreate: TDIGEST.CREATE key [COMPRESSION compression] (default 100).
func tdCreate(c *client, args [][]byte) bool {
	s := c.s
	if e := s.getForCreate(c, args[1]); e != nil {
		if _, ok := e.v.(*tdigestValue); ok {
			c.err(errTDExists)
		} else {
			c.err(errWrongType)
		}
		return false
	}
	comp := int64(100)
	if len(args) == 4 {
		if argIndex(args[2:], 0, "COMPRESSION") < 0 {
			c.err("ERR T-Digest: wrong keyword")
			return false
		}
		var ok bool
		if comp, ok = c.tdCompression(args[3]); !ok {
			return false
		}
	}
	if comp > tdigest.MaxCompression {
		if !c.replaying {
			s.logf("bloomlab: TDIGEST.CREATE %q: compression %d, beyond 2^32", args[1], comp)
		}
		c.err("ERR T-Digest: allocation failed")
		return false
	}
	need := int64(len(args[1])) + 64 + tdigest.MemoryUsage(comp)
	if !c.reserve(need) {
		c.err(errOOM)
		return false
	}
	d, err := tdigest.New(comp)
	if err != nil {
		s.mem.Add(-need)
		c.err("ERR T-Digest: allocation failed")
		return false
	}
	s.add(string(args[1]), &tdigestValue{d}, need)
	c.logArgs("TDIGEST.CREATE", string(args[1]), "COMPRESSION", strconv.FormatInt(comp, 10))
	c.w.Simple("OK")
	return false
}

// tdCompression parses a compression (a positive integer) or writes
// RedisBloom's error.
func (c *client) tdCompression(b []byte) (int64, bool) {
	n, ok := parseInt(b)
	if !ok {
		c.err("ERR T-Digest: error parsing compression parameter")
		return 0, false
	}
	if n <= 0 {
		c.err("ERR T-Digest: compression parameter needs to be a positive integer")
		return 0, false
	}
	return n, true
}

// tdValue parses a value of TDIGEST.ADD (finite) or writes RedisBloom's
// error.
func (c *client) tdValue(b []byte) (float64, bool) {
	f, ok := c.parseDouble(b)
	if !ok {
		c.err("ERR T-Digest: error parsing val parameter")
		return 0, false
	}
	if f < -1.7976931348623157e308 || f > 1.7976931348623157e308 {
		c.err("ERR T-Digest: val parameter needs to be a finite number")
		return 0, false
	}
	return f, true
}

// tdAdd: TDIGEST.ADD key value…, every value checked before any is added.
// Replay also reads "TDIGEST.ADD key": a query merged the buffer there.
func tdAdd(c *client, args [][]byte) bool {
	e, v := c.tdOf(args[1])
	if e == nil {
		return false
	}
	defer c.unlockWrittenEntry(e)
	if len(args) == 2 {
		c.tdMerged(args[1], e)
		return false
	}
	for _, a := range args[2:] {
		if _, ok := c.tdValue(a); !ok {
			return false
		}
	}
	if v.d.Size() > 1<<62 { // t-digest-c's overflow check, before any change (2^62 adds away)
		c.err("ERR T-Digest: overflow detected")
		return false
	}
	if err := c.s.writable(e); err != nil {
		c.err("ERR " + err.Error())
		return false
	}
	v = e.v.(*tdigestValue)
	for _, a := range args[2:] {
		f, _ := c.tdValue(a)
		if err := v.d.Add(f); err != nil {
			c.err("ERR T-Digest: overflow detected")
			return false
		}
	}
	c.s.touchKey(args[1])
	c.log(args)
	c.w.Simple("OK")
	return false
}

func tdReset(c *client, args [][]byte) bool {
	e, _ := c.tdOf(args[1])
	if e == nil {
		return false
	}
	defer c.unlockWrittenEntry(e)
	if err := c.s.writable(e); err != nil {
		c.err("ERR " + err.Error())
		return false
	}
	e.v.(*tdigestValue).d.Reset()
	c.s.touchKey(args[1])
	c.log(args)
	c.w.Simple("OK")
	return false
}

// tdMerge: TDIGEST.MERGE dest numkeys src… [COMPRESSION c] [OVERRIDE], in
// rm_tdigest.c's order of checks. The new digest has COMPRESSION, or
// dest's compression when dest exists and no OVERRIDE, or else the
// largest of the sources'; it takes dest's values (unless OVERRIDE) and
// then each source's, merging each source's buffer first.
func tdMerge(c *client, args [][]byte) bool {
	s := c.s
	if !c.excl {
		// Under the keyspace's shared lock, holding only the keys it
		// touches (tdMergeLock); anything else (a destination to create,
		// to delete or to drop a TTL from, an argument that is answered
		// an error) runs again with the keyspace held exclusively.
		unlock, ok := c.tdMergeLock(args)
		if !ok {
			return true
		}
		defer unlock()
	}
	if hook := tdMergeHook.Load(); hook != nil {
		(*hook)()
	}
	var start *tdigestValue
	de := s.getForCreate(c, args[1]) // an expired destination is absent
	if de != nil {
		v, ok := de.v.(*tdigestValue)
		if !ok {
			c.err(errWrongType)
			return false
		}
		start = v
	}
	numKeys, ok := parseInt(args[2])
	if !ok {
		c.err("ERR T-Digest: error parsing numkeys")
		return false
	}
	if numKeys <= 0 {
		c.err("ERR T-Digest: numkeys needs to be a positive integer")
		return false
	}
	if numKeys > int64(len(args)-3) {
		c.err(wrongArity("tdigest.merge"))
		return false
	}
	var comp int64
	useMax := start == nil
	if start != nil {
		comp = start.d.Compression()
	}
	override := false
	rest := args[3+numKeys:]
	if len(rest) > 0 {
		cl := argIndex(rest, 0, "COMPRESSION")
		if cl >= 0 {
			useMax = false
			if cl+1 >= len(rest) {
				c.err(wrongArity("tdigest.merge"))
				return false
			}
			if comp, ok = c.tdCompression(rest[cl+1]); !ok {
				return false
			}
		}
		if argIndex(rest, 0, "OVERRIDE") >= 0 {
			override = true
			if cl < 0 {
				useMax, comp = true, 0
			}
		} else if cl < 0 {
			c.err("ERR T-Digest: wrong keyword")
			return false
		}
	}
	srcs := make([]*entry, numKeys)
	for i := range srcs {
		name := args[3+i]
		if bytes.Equal(name, args[1]) {
			if start == nil {
				c.err(errTDMissing)
				return false
			}
			srcs[i] = de
		} else {
			e := s.get(name) // held: by the exclusive lock, or by tdMergeLock
			if e == nil {
				c.err(errTDMissing)
				return false
			}
			if _, ok := asValue[*tdigestValue](c, e); !ok {
				return false
			}
			srcs[i] = e
		}
		if useMax {
			comp = max(comp, srcs[i].v.(*tdigestValue).d.Compression())
		}
	}
	if comp > tdigest.MaxCompression {
		c.err("ERR T-Digest: allocation of destination digest failed")
		return false
	}
	need := tdigest.MemoryUsage(comp)
	if de == nil {
		need += int64(len(args[1])) + 64
	}
	if !c.reserve(need) {
		c.err(errOOM)
		return false
	}
	to, err := tdigest.New(comp)
	if err != nil {
		s.mem.Add(-need)
		c.err("ERR T-Digest: allocation of destination digest failed")
		return false
	}
	// The sources' buffers are merged (td_merge compresses them): each
	// source is made writable first, for a snapshot in progress.
	for _, e := range append(srcs, de) {
		if e != nil {
			if err := s.writable(e); err != nil {
				s.mem.Add(-need)
				c.err("ERR " + err.Error())
				return false
			}
		}
	}
	// Which digests buffer values now: a merge that fails still merged
	// some of their buffers (as RedisBloom's does), and logs that.
	buffered := make([]bool, len(srcs)+1)
	for i, e := range append(srcs, de) {
		buffered[i] = e != nil && e.v.(*tdigestValue).d.UnmergedNodes() > 0
	}
	if de != nil && !override {
		to.Merge(de.v.(*tdigestValue).d) // RedisBloom ignores this one's error
	}
	for _, e := range srcs {
		if err := to.Merge(e.v.(*tdigestValue).d); err != nil {
			s.mem.Add(-need)
			c.tdLogMerged(args, srcs, de, buffered)
			c.err("ERR T-Digest: overflow detected")
			return false
		}
	}
	nv := &tdigestValue{to}
	if de != nil {
		s.mem.Add(-need) // the key's accounting follows its new value
		de.v = nv
		de.frozen = 0
		s.resize(args[1], de)
		s.touch(string(args[1]))
		if de.expireAt != 0 { // RedisBloom sets a new value: Redis drops the TTL
			s.setExpire(string(args[1]), de, 0)
		}
	} else {
		s.add(string(args[1]), nv, need)
	}
	c.log(args)
	c.w.Simple("OK")
	return false
}

// tdMergeHook, if set (tests), runs when TDIGEST.MERGE holds its keys.
var tdMergeHook atomic.Pointer[func()]

// tdMergeLock write-locks the keys of a TDIGEST.MERGE that may run under
// the keyspace's shared lock: a live destination without a TTL, numkeys
// sources that exist, all t-digests, and numkeys well formed. The keys
// are locked once each, in the order of their names (two merges of the
// same keys in any order never deadlock), and unlock releases them (kept
// locked if the merge panicked: unlockWritten). ok false: run the merge
// exclusively (it creates, deletes or drops a TTL, or answers an error,
// in the order the exclusive path checks them). Other clients' commands
// on other keys run meanwhile; what still waits is said in
// docs/SERVER.md.
func (c *client) tdMergeLock(args [][]byte) (unlock func(), ok bool) {
	s := c.s
	de := s.db.m[string(args[1])]
	if de == nil || de.expireAt != 0 || s.expiredNow(de) {
		return nil, false
	}
	numKeys, ok := parseInt(args[2])
	if !ok || numKeys <= 0 || numKeys > int64(len(args)-3) {
		return nil, false
	}
	names := make([]string, 0, numKeys+1)
	names = append(names, string(args[1]))
	for _, a := range args[3 : 3+numKeys] {
		names = append(names, string(a))
	}
	slices.Sort(names)
	names = slices.Compact(names)
	held := make([]*entry, 0, len(names))
	for _, n := range names {
		e := s.db.m[n]
		if e == nil || s.expiredNow(e) {
			return nil, false
		}
		held = append(held, e)
	}
	for _, e := range held {
		e.mu.Lock()
	}
	for _, e := range held {
		// A value changes under its entry's lock: read its type locked.
		if _, td := e.v.(*tdigestValue); !td {
			for _, e := range held {
				e.mu.Unlock()
			}
			return nil, false
		}
	}
	return func() {
		if r := recover(); r != nil {
			panic(r)
		}
		for _, e := range held {
			e.mu.Unlock()
		}
	}, true
}

// tdLogMerged logs "TDIGEST.ADD key" (merge the buffer) for each digest
// of a failed TDIGEST.MERGE whose buffer the merge emptied (buffered:
// whether srcs[i], and de last, buffered values before), once each, so
// that a replay, where the failed MERGE is not logged, merges them too.
func (c *client) tdLogMerged(args [][]byte, srcs []*entry, de *entry, buffered []bool) {
	done := make(map[*entry]bool)
	for i, e := range append(srcs, de) {
		if e == nil || !buffered[i] || done[e] || e.v.(*tdigestValue).d.UnmergedNodes() > 0 {
			continue
		}
		done[e] = true
		name := args[1]
		if i < len(srcs) {
			name = args[3+i]
		}
		c.logArgs("TDIGEST.ADD", string(name))
	}
}

func tdMinMax(c *client, args [][]byte) bool {
	e, v := c.tdOf(args[1])
	if e == nil {
		return false
	}
	defer c.unlockEntry(e, true)
	if eqFold(args[0], "tdigest.min") {
		c.w.Double(v.d.Min())
	} else {
		c.w.Double(v.d.Max())
	}
	return false
}

func tdQuantile(c *client, args [][]byte) bool {
	e, _ := c.tdOf(args[1])
	if e == nil {
		return false
	}
	defer c.unlockEntry(e, true)
	qs := make([]float64, len(args)-2)
	for i, a := range args[2:] {
		q, ok := c.parseDouble(a)
		if !ok {
			c.err("ERR T-Digest: error parsing quantile")
			return false
		}
		if q < 0 || q > 1 {
			c.err("ERR T-Digest: quantile should be in [0,1]")
			return false
		}
		qs[i] = q
	}
	v := c.tdMerged(args[1], e)
	if v == nil {
		return false
	}
	out := make([]float64, len(qs))
	for i := 0; i < len(qs); i++ {
		start := i
		for i < len(qs)-1 && qs[i] <= qs[i+1] {
			i++
		}
		v.d.Quantiles(qs[start:i+1], out[start:i+1])
	}
	c.w.Array(len(out))
	for _, f := range out {
		c.w.Double(f)
	}
	return false
}

func tdCDF(c *client, args [][]byte) bool {
	e, _ := c.tdOf(args[1])
	if e == nil {
		return false
	}
	defer c.unlockEntry(e, true)
	for _, a := range args[2:] {
		if _, ok := c.parseDouble(a); !ok {
			c.err("ERR T-Digest: error parsing cdf")
			return false
		}
	}
	v := c.tdMerged(args[1], e)
	if v == nil {
		return false
	}
	c.w.Array(len(args) - 2)
	for _, a := range args[2:] {
		x, _ := c.parseDouble(a)
		c.w.Double(v.d.CDF(x))
	}
	return false
}

// tdRank: TDIGEST.RANK and REVRANK. RedisBloom merges the buffer only when
// a value lies within [min, max] of a non-empty digest.
func tdRank(c *client, args [][]byte) bool {
	rev := eqFold(args[0], "tdigest.revrank")
	e, v := c.tdOf(args[1])
	if e == nil {
		return false
	}
	defer c.unlockEntry(e, true)
	merge := false
	for _, a := range args[2:] {
		x, ok := c.parseDouble(a)
		if !ok {
			c.err("ERR T-Digest: error parsing value")
			return false
		}
		merge = merge || v.d.Size() > 0 && x >= v.d.Min() && x <= v.d.Max()
	}
	if merge {
		if v = c.tdMerged(args[1], e); v == nil {
			return false
		}
	}
	c.w.Array(len(args) - 2)
	for _, a := range args[2:] {
		x, _ := c.parseDouble(a)
		if rev {
			c.w.Int(v.d.RevRank(x))
		} else {
			c.w.Int(v.d.Rank(x))
		}
	}
	return false
}

// tdByRank: TDIGEST.BYRANK and BYREVRANK. RedisBloom merges the buffer
// only for a rank in (0, size).
func tdByRank(c *client, args [][]byte) bool {
	rev := eqFold(args[0], "tdigest.byrevrank")
	e, v := c.tdOf(args[1])
	if e == nil {
		return false
	}
	defer c.unlockEntry(e, true)
	merge := false
	for _, a := range args[2:] {
		r, ok := parseInt(a)
		if !ok {
			c.err("ERR T-Digest: error parsing rank")
			return false
		}
		if r < 0 {
			c.err("ERR T-Digest: rank needs to be non negative")
			return false
		}
		merge = merge || r != 0 && float64(r) < float64(v.d.Size())
	}
	if merge {
		if v = c.tdMerged(args[1], e); v == nil {
			return false
		}
	}
	c.w.Array(len(args) - 2)
	for _, a := range args[2:] {
		r, _ := parseInt(a)
		if rev {
			c.w.Double(v.d.ByRevRank(r))
		} else {
			c.w.Double(v.d.ByRank(r))
		}
	}
	return false
}

func tdTrimmedMean(c *client, args [][]byte) bool {
	e, _ := c.tdOf(args[1])
	if e == nil {
		return false
	}
	defer c.unlockEntry(e, true)
	lo, ok := c.parseDouble(args[2])
	if !ok {
		c.err("ERR T-Digest: error parsing low_cut_percentile")
		return false
	}
	hi, ok := c.parseDouble(args[3])
	if !ok {
		c.err("ERR T-Digest: error parsing high_cut_percentile")
		return false
	}
	if lo < 0 || lo > 1 || hi < 0 || hi > 1 {
		c.err("ERR T-Digest: low_cut_percentile and high_cut_percentile should be in [0,1]")
		return false
	}
	if lo >= hi {
		c.err("ERR T-Digest: low_cut_percentile should be lower than high_cut_percentile")
		return false
	}
	v := c.tdMerged(args[1], e)
	if v == nil {
		return false
	}
	c.w.Double(v.d.TrimmedMean(lo, hi))
	return false
}

func tdInfo(c *client, args [][]byte) bool {
	e, v := c.tdOf(args[1])
	if e == nil {
		return false
	}
	defer c.unlockEntry(e, true)
	d := v.d
	mem := d.MemoryUsage()
	if c.d.tdMemoryOfPointer {
		mem = 8 + 16*int64(d.Capacity()) // 2.4.23's TDigestMemUsage: sizeof a pointer, not the struct
	}
	c.mapReply(9)
	for _, f := range []struct {
		name string
		n    int64
	}{
		{"Compression", d.Compression()}, {"Capacity", int64(d.Capacity())},
		{"Merged nodes", int64(d.MergedNodes())}, {"Unmerged nodes", int64(d.UnmergedNodes())},
		{"Merged weight", d.MergedWeight()}, {"Unmerged weight", d.UnmergedWeight()},
		{"Observations", d.Size()}, {"Total compressions", d.TotalCompressions()},
		{"Memory usage", mem},
	} {
		c.w.Simple(f.name)
		c.w.Int(f.n)
	}
	return false
}
