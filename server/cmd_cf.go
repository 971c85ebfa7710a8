package server

import (
	"errors"
	"fmt"
	"io"
	"math/bits"
	"strings"

	"github.com/bloomlab/bloomlab/cuckoo"
	"github.com/bloomlab/bloomlab/internal/blrd"
)

// RedisBloom's CF.* commands (2.4.23) on package cuckoo's RedisBloom
// profile, which stores, answers, counts and dumps bit for bit as
// RedisBloom's cuckoo filter does. Replies, reply shapes and error texts
// are RedisBloom's (src/rebloom.c); where this server differs on purpose
// it is said here and in docs/SERVER.md:
//
//   - Ranges: capacity at most 2^30 (RedisBloom 8's range and text).
//   - Memory: an add that needs a new sub-filter reserves its bytes
//     against MaxMemory first (cuckoo.TryAddHash, NextSubFilterBits);
//     refused, it answers OOM (CF.ADD) or −1 (in CF.INSERT), changing
//     nothing. A sub-filter past 2^48 bits, or, with no MaxMemory
//     (-no-maxmemory), tables past the cuckoo package's default budget
//     (cuckoo.Filter.DefaultMaxBits: at most half the process's memory),
//     answers "Memory allocation failure" (−1 in CF.INSERT), as
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
	errCFAlloc     = "Memory allocation failure"
	errCFMaxExp    = "Maximum expansions reached"
	errCFCapMin    = "Capacity must be at least (BucketSize * 2)"
	errCFCapRange  = "Capacity must be in the range [2 * BUCKETSIZE, 1073741824]"
	errCFPosition  = "Invalid position"
	errCFLoadChunk = "Couldn't load chunk!"
)

func init() {
	cf := func(name string, flags cmdFlags, lock lockMode, summary string, run func(*client, [][]byte) bool) *command {
		return &command{name: name, arity: -1, flags: flags, lock: lock, first: 1, last: 1, step: 1,
			group: "cf", since: "1.0.0", summary: summary, run: run}
	}
	w, ro := fWrite|fDenyOOM, fReadonly|fFast
	register(
		cf("cf.reserve", w, lockExcl, "Creates a new Cuckoo Filter", cfReserve),
		cf("cf.add", w, lockWrite, "Adds an item to a Cuckoo Filter", cfAdd),
		cf("cf.addnx", w, lockWrite, "Adds an item to a Cuckoo Filter if the item did not exist previously.", cfAdd),
		cf("cf.insert", w, lockWrite, "Adds one or more items to a Cuckoo Filter. A filter will be created if it does not exist", cfInsertCmd),
		cf("cf.insertnx", w, lockWrite, "Adds one or more items to a Cuckoo Filter if the items did not exist previously. A filter will be created if it does not exist", cfInsertCmd),
		cf("cf.exists", ro, lockRead, "Checks whether one or more items exist in a Cuckoo Filter", cfCheck),
		cf("cf.mexists", ro, lockRead, "Checks whether one or more items exist in a Cuckoo Filter", cfCheck),
		cf("cf.count", ro, lockRead, "Return the number of times an item might be in a Cuckoo Filter", cfCheck),
		cf("cf.del", fWrite|fFast, lockWrite, "Deletes an item from a Cuckoo Filter", cfDel),
		cf("cf.compact", fWrite, lockWrite, "Frees sub-filters that deletes emptied", cfCompact),
		cf("cf.info", ro, lockRead, "Returns information about a Cuckoo Filter", cfInfo),
		cf("cf.scandump", fReadonly, lockRead, "Begins an incremental save of the bloom filter", cfDumps.scanDump),
		cf("cf.loadchunk", w, lockExcl, "Restores a filter previously saved using SCANDUMP", cfDumps.loadChunk),
	)
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
			if f.Profile() != cuckoo.RedisBloom {
				return nil, fmt.Sprintf("ERR this cuckoo filter has the %v profile: it has no RedisBloom dump (only RedisBloom-profile filters do: bloomlab build -kind cuckoo -profile redisbloom)", f.Profile())
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
	}
}

// cfDumps is CF's dump: CF.SCANDUMP and CF.LOADCHUNK (dumps.go), filled
// in by init (its hooks refer to it, through cfOf).
var cfDumps = new(dumpFamily)

// CF's value types: a filter, and one being loaded with CF.LOADCHUNK.
var (
	cfType     = registerType(&valueType{name: "MBbloomCF", tag: 5, decode: decodeCF})
	cfLoadType = registerType(&valueType{name: "MBbloomCF", tag: 6, decode: cfDumps.decodeLoading})
)

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
func (c *client) newCF(key []byte, capacity uint64, bucketSize, maxIterations, expansion int) (*entry, string) {
	s := c.s
	need := int64(cfTableBytes(capacity, bucketSize)) + int64(len(key)) + 256
	if !c.reserve(need) {
		return nil, errOOM
	}
	f, err := cuckoo.NewRedisBloom(capacity, bucketSize, maxIterations, expansion)
	if err != nil {
		s.mem.Add(-need)
		return nil, "ERR Could not create filter"
	}
	return s.add(string(key), &cfValue{f}, need), ""
}

// cfOption reads the value of CF.RESERVE's option at args[i], in
// [lo, hi], or writes RedisBloom's error.
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
		c.err(fmt.Sprintf("%s: value must be an integer between %d and %d, inclusive.", name, lo, hi))
		return 0, false
	}
	return v, true
}

func cfReserve(c *client, args [][]byte) bool {
	if len(args) < 3 || len(args)%2 == 0 {
		c.err(wrongArity("cf.reserve"))
		return false
	}
	capacity, ok := parseInt(args[2])
	if !ok {
		c.err("Bad capacity")
		return false
	}
	opts := [3]struct {
		name   string
		lo, hi int64
		v      int64
	}{
		{"MAXITERATIONS", 1, cuckoo.MaxKicks, cuckoo.RedisDefaultMaxIterations},
		{"BUCKETSIZE", 1, cuckoo.RedisMaxBucketSize, cuckoo.RedisDefaultBucketSize},
		{"EXPANSION", 0, cuckoo.MaxExpansion, cuckoo.RedisDefaultExpansion},
	}
	for k := range opts {
		o := &opts[k]
		if i := argIndex(args, 3, o.name); i >= 0 {
			if o.v, ok = c.cfOption(args, i, o.name, o.lo, o.hi); !ok {
				return false
			}
		}
	}
	maxIter, bucketSize, expansion := opts[0].v, opts[1].v, opts[2].v
	if bucketSize*2 > capacity {
		c.err(errCFCapMin)
		return false
	}
	if capacity > maxCapacity {
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
	if _, msg := c.newCF(args[1], uint64(capacity), int(bucketSize), int(maxIter), int(expansion)); msg != "" {
		c.err(msg)
		return false
	}
	c.log(args)
	c.w.Simple("OK")
	return false
}

// cfOf returns key's filter for a command that uses it, or writes the
// error reply (and returns nil): WRONGTYPE, or a load in progress.
func (c *client) cfOf(e *entry) *cfValue { return familyOf[*cfValue](c, e, cfDumps) }

// cfInsertOptions are CF.INSERT's (and, with the defaults, CF.ADD's).
type cfInsertOptions struct {
	capacity   int64
	autocreate bool
	nx         bool // CF.ADDNX, CF.INSERTNX: only keys not already present
	multi      bool // an array reply
}

// isNX reports whether a command name ends in NX (CF.ADDNX, CF.INSERTNX).
func isNX(name []byte) bool { return len(name) > 0 && name[len(name)-1]|0x20 == 'x' }

func cfAdd(c *client, args [][]byte) bool {
	if len(args) != 3 {
		c.err(wrongArity(cmdName(args[0])))
		return false
	}
	opt := cfInsertOptions{capacity: cuckoo.RedisDefaultCapacity, autocreate: true, nx: isNX(args[0])}
	return c.cfInsert(args, 2, opt)
}

func cfInsertCmd(c *client, args [][]byte) bool {
	if len(args) < 4 {
		c.err(wrongArity(cmdName(args[0])))
		return false
	}
	opt := cfInsertOptions{capacity: cuckoo.RedisDefaultCapacity, autocreate: true, nx: isNX(args[0]), multi: true}
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
			if opt.capacity, ok = parseInt(args[i]); !ok {
				c.err("Bad capacity")
				return false
			}
			if opt.capacity < 2*cuckoo.RedisDefaultBucketSize {
				c.err(errCFCapMin)
				return false
			}
			if opt.capacity > maxCapacity {
				c.err(errCFCapRange)
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

// cfInsert adds args[items:] to key args[1], creating it if allowed. Each
// item answers 1 (added), 0 (CF.ADDNX, CF.INSERTNX: may be present) or,
// refused, −1 in an array and the error for CF.ADD; a refused item changes
// nothing. The log gets the command without its refused items: a refusal
// for memory would not recur at replay.
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
			var msg string
			if e, msg = c.newCF(key, uint64(opt.capacity), cuckoo.RedisDefaultBucketSize, cuckoo.RedisDefaultMaxIterations, cuckoo.RedisDefaultExpansion); msg != "" {
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
	if v.f.SubFilters() >= cuckoo.RedisMaxFilters {
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
		f.SetMaxBits(f.DefaultMaxBits())
	}
	res := c.res[:0]
	limited := s.maxMem > 0 && !c.replaying
	var reserved int64
	stop := ""
	for _, item := range args[items:] {
		d := f.Hash(item)
		if opt.nx && f.ContainsHash(d) {
			res = append(res, resPresent)
			continue
		}
		var err error
		oom := false
		if limited && f.Expansion() != 0 {
			// Only a key that needs a new sub-filter needs memory.
			if err = f.TryAddHash(d); errors.Is(err, cuckoo.ErrWouldGrow) {
				next, nerr := f.NextSubFilterBits()
				switch {
				case nerr != nil:
					err = nerr
				case !c.reserve(int64(next / 8)):
					oom = true
				default:
					reserved += int64(next / 8)
					err = f.AddHash(d)
				}
			}
		} else {
			err = f.AddHash(d)
		}
		switch {
		case oom:
			stop = errOOM
		case err == nil:
			res = append(res, resAdded)
			continue
		default:
			stop = cfRefusal(err)
		}
		res = append(res, resRefused)
	}
	c.res = res
	s.mem.Add(-reserved)
	s.resize(key, e)
	c.logInsert(args, items, res, created, opt.capacity)
	if !opt.multi {
		if res[0] == resRefused {
			c.err(stop)
		} else {
			c.w.Int(int64(res[0]))
		}
		return false
	}
	c.w.Array(len(res))
	for _, r := range res {
		c.w.Int(int64(r))
	}
	return false
}

// cfRefusal is CF.ADD's reply to a refused key: RedisBloom's texts for a
// filter that may not grow and for one whose growth failed.
func cfRefusal(err error) string {
	switch {
	case errors.Is(err, cuckoo.ErrCannotGrow):
		return errCFAlloc
	case errors.Is(err, cuckoo.ErrFull):
		return errCFFull
	}
	return "ERR " + oneLine(err.Error())
}

// logInsert logs an insert as it took effect: the command itself when no
// item was refused (nothing is allocated), else the command without its
// refused items, or the creation alone (as CF.RESERVE with CF.INSERT's
// defaults) when it created the key and added nothing.
func (c *client) logInsert(args [][]byte, items int, res []int8, created bool, capacity int64) {
	changed, refused := created, false
	for _, r := range res {
		changed = changed || r == resAdded
		refused = refused || r == resRefused
	}
	if !changed {
		return
	}
	c.s.touchKey(args[1])
	if !refused {
		c.log(args)
		return
	}
	kept := append([][]byte(nil), args[:items]...)
	for i, r := range res {
		if r != resRefused {
			kept = append(kept, args[items+i])
		}
	}
	if len(kept) > items {
		c.log(kept)
		return
	}
	c.logArgs("CF.RESERVE", string(args[1]), fmt.Sprint(capacity),
		"BUCKETSIZE", fmt.Sprint(cuckoo.RedisDefaultBucketSize),
		"MAXITERATIONS", fmt.Sprint(cuckoo.RedisDefaultMaxIterations),
		"EXPANSION", fmt.Sprint(cuckoo.RedisDefaultExpansion))
}

// cfCheck serves CF.EXISTS, CF.MEXISTS and CF.COUNT.
func cfCheck(c *client, args [][]byte) bool {
	name := args[0]
	multi := len(name) > 3 && name[3]|0x20 == 'm'
	count := name[len(name)-1]|0x20 == 't'
	if multi && len(args) < 3 || !multi && len(args) != 3 {
		c.err(wrongArity(cmdName(name)))
		return false
	}
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
		case f == nil:
			c.w.Int(0)
		case count:
			c.w.Int(int64(min(f.Count(item), 1<<63-1)))
		case f.Contains(item):
			c.w.Int(1)
		default:
			c.w.Int(0)
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
	if len(args) != 3 {
		c.err(wrongArity("cf.del"))
		return false
	}
	s := c.s
	e, v := c.cfWritable(args[1], "Not found")
	if e == nil {
		return false
	}
	defer unlockWritten(e)
	d := v.f.Hash(args[2])
	if !v.f.ContainsHash(d) { // nothing to delete: no copy of a frozen value
		c.w.Int(0)
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
	c.w.Int(1)
	return false
}

func cfCompact(c *client, args [][]byte) bool {
	if len(args) != 2 {
		c.err(wrongArity("cf.compact"))
		return false
	}
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
	if len(args) != 2 {
		c.err(wrongArity("cf.info"))
		return false
	}
	e := c.s.get(args[1])
	if e == nil {
		c.err(errBFNotFound)
		return false
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	v := c.cfOf(e)
	if v == nil {
		return false
	}
	in := v.f.RedisInfo()
	c.w.Array(16)
	for _, x := range [8]struct {
		name string
		v    uint64
	}{
		{"Size", in.Size}, {"Number of buckets", in.Buckets}, {"Number of filters", uint64(in.Filters)},
		{"Number of items inserted", in.Items}, {"Number of items deleted", in.Deletes},
		{"Bucket size", uint64(in.BucketSize)}, {"Expansion rate", uint64(in.Expansion)},
		{"Max iterations", uint64(in.MaxIterations)},
	} {
		c.w.Simple(x.name)
		c.w.Int(int64(min(x.v, 1<<63-1)))
	}
	return false
}
