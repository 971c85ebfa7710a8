package server

import (
	"hash/maphash"
	"math"
	"sort"
	"strconv"
)

// The generic key commands, as Redis 7.0 answers them.

func init() {
	k := func(name string, arity int, flags cmdFlags, lock lockMode, keys []keySpec, acl, summary string, run func(*client, [][]byte) bool) *command {
		return &command{name: name, arity: arity, flags: flags, lock: lock, keys: keys, acl: acl, since: "1.0.0", summary: summary, run: run}
	}
	all := func(read, write bool) []keySpec {
		return []keySpec{{first: 1, last: -1, step: 1, read: read, write: write}}
	}
	memory := k("memory", -2, 0, lockRead, nil, "slow", "A container for memory diagnostics commands", cmdMemory)
	memory.group, memory.since = "server", "4.0.0"
	memory.subs = []subcommand{{"usage", -3, "read slow"}}
	registerFamily(&family{name: "generic", commands: []*command{
		k("del", -2, fWrite, lockExcl, all(false, true), "keyspace write slow", "Delete a key", cmdDel),
		k("unlink", -2, fWrite|fFast, lockExcl, all(false, true), "keyspace write fast", "Delete a key asynchronously in another thread. Otherwise it is just as DEL, but non blocking.", cmdDel),
		k("exists", -2, fReadonly|fFast, lockRead, all(true, false), "keyspace read fast", "Determine if a key exists", cmdExists),
		k("type", 2, fReadonly|fFast, lockRead, readKey1, "keyspace read fast", "Determine the type stored at key", cmdType),
		k("keys", 2, fReadonly, lockRead, nil, "keyspace read slow dangerous", "Find all keys matching the given pattern", cmdKeys),
		k("scan", -2, fReadonly, lockRead, nil, "keyspace read slow", "Incrementally iterate the keys space", cmdScan),
		k("dbsize", 1, fReadonly|fFast, lockRead, nil, "keyspace read fast", "Return the number of keys in the selected database", cmdDBSize),
		k("rename", 3, fWrite, lockExcl, []keySpec{{first: 1, last: 1, step: 1, read: true, write: true}, {first: 2, last: 2, step: 1, write: true}},
			"keyspace write slow", "Rename a key", cmdRename),
		k("expire", -3, fWrite|fFast, lockExcl, writeKey1, "keyspace write fast", "Set a key's time to live in seconds", cmdExpire),
		k("pexpire", -3, fWrite|fFast, lockExcl, writeKey1, "keyspace write fast", "Set a key's time to live in milliseconds", cmdExpire),
		k("expireat", -3, fWrite|fFast, lockExcl, writeKey1, "keyspace write fast", "Set the expiration for a key as a UNIX timestamp", cmdExpire),
		k("pexpireat", -3, fWrite|fFast, lockExcl, writeKey1, "keyspace write fast", "Set the expiration for a key as a UNIX timestamp specified in milliseconds", cmdExpire),
		k("ttl", 2, fReadonly|fFast, lockRead, readKey1, "keyspace read fast", "Get the time to live for a key in seconds", cmdTTL),
		k("pttl", 2, fReadonly|fFast, lockRead, readKey1, "keyspace read fast", "Get the time to live for a key in milliseconds", cmdTTL),
		k("persist", 2, fWrite|fFast, lockExcl, writeKey1, "keyspace write fast", "Remove the expiration from a key", cmdPersist),
		k("flushdb", -1, fWrite, lockExcl, nil, "keyspace write slow dangerous", "Remove all keys from the current database", cmdFlush),
		k("flushall", -1, fWrite, lockExcl, nil, "keyspace write slow dangerous", "Remove all keys from all databases", cmdFlush),
		memory,
	}})
}

// cmdMemory is MEMORY USAGE key [SAMPLES count]: the bytes the key
// accounts against -maxmemory (its name, 64 bytes of entry, its value's
// memory), nil for a missing key. RedisBloom's flow tests compare it with
// TDIGEST.INFO's Memory usage.
func cmdMemory(c *client, args [][]byte) bool {
	// Redis's parse: SAMPLES options in any number, each checked in turn
	// (a negative count is a syntax error), before the key is looked up.
	for j := 3; j < len(args); j += 2 {
		if !eqFold(args[j], "SAMPLES") || j+1 >= len(args) {
			c.err("ERR syntax error")
			return false
		}
		n, ok := parseInt(args[j+1])
		if !ok {
			c.err("ERR value is not an integer or out of range")
			return false
		}
		if n < 0 {
			c.err("ERR syntax error")
			return false
		}
	}
	e := c.s.get(args[2])
	if e == nil {
		c.w.Null()
		return false
	}
	e.mu.RLock()
	n := e.mem
	e.mu.RUnlock()
	c.w.Int(n)
	return false
}

func cmdDel(c *client, args [][]byte) bool {
	n := 0
	for _, k := range args[1:] {
		if e := c.s.getForCreate(c, k); e != nil {
			c.s.deleteKey(c, string(k), e)
			n++
		}
	}
	if n > 0 {
		c.log(args)
	}
	c.w.Int(int64(n))
	return false
}

func cmdExists(c *client, args [][]byte) bool {
	n := 0
	for _, k := range args[1:] {
		if c.s.get(k) != nil {
			n++
		}
	}
	c.w.Int(int64(n))
	return false
}

func cmdType(c *client, args [][]byte) bool {
	if e := c.s.get(args[1]); e != nil {
		c.w.Simple(e.typeName())
	} else {
		c.w.Simple("none")
	}
	return false
}

func cmdKeys(c *client, args [][]byte) bool {
	now := nowMs()
	var out []string
	size := int64(0) // the reply's
	for k, e := range c.s.db.m {
		if !e.expired(now) && globMatch(args[1], []byte(k)) {
			out = append(out, k)
			size += int64(len(k)) + 16
		}
	}
	if !c.replyFits(size) {
		c.err(errOOM)
		return false
	}
	c.w.Array(len(out))
	for _, k := range out {
		c.w.BulkString(k)
	}
	return false
}

var scanSeed = maphash.MakeSeed()

// scanHash orders keys for SCAN: a cursor is the position in that order
// (1 … 2^63), so that every key present for the whole scan is returned
// whatever is added or deleted meanwhile.
func scanHash(k string) uint64 { return maphash.String(scanSeed, k)>>1 + 1 }

func cmdScan(c *client, args [][]byte) bool {
	cur, err := strconv.ParseUint(string(args[1]), 10, 64)
	if err != nil {
		c.err("ERR invalid cursor")
		return false
	}
	count := int64(10)
	var match, typ []byte
	for i := 2; i < len(args); i += 2 {
		if i+1 >= len(args) {
			c.err(errSyntax)
			return false
		}
		switch {
		case eqFold(args[i], "MATCH"):
			match = args[i+1]
		case eqFold(args[i], "COUNT"):
			n, ok := parseInt(args[i+1])
			if !ok {
				c.err(errNotInt)
				return false
			}
			if n < 1 {
				c.err(errSyntax)
				return false
			}
			count = n
		case eqFold(args[i], "TYPE"):
			typ = args[i+1]
		default:
			c.err(errSyntax)
			return false
		}
	}
	if cur == 0 {
		cur = 1
	}
	// Redis takes any positive COUNT; more than the keyspace holds is the
	// keyspace (and 2*count below cannot overflow).
	count = max(min(count, int64(len(c.s.db.m))), 1)
	// The count keys with the smallest positions at or after the cursor;
	// the next cursor is the position after them.
	var best []keyPos
	var bound uint64 = math.MaxUint64 // the largest position kept, once count are kept
	minRest := uint64(math.MaxUint64) // the smallest position not returned
	for k := range c.s.db.m {
		h := scanHash(k)
		if h < cur {
			continue
		}
		if int64(len(best)) >= count && h >= bound {
			minRest = min(minRest, h)
			continue
		}
		best = append(best, keyPos{k, h})
		if int64(len(best)) > 2*count {
			sortKH(best)
			minRest = min(minRest, best[count].h)
			best = best[:count]
			bound = best[count-1].h
		}
	}
	sortKH(best)
	if int64(len(best)) > count {
		minRest = min(minRest, best[count].h)
		best = best[:count]
	}
	next := uint64(0)
	if minRest != math.MaxUint64 {
		next = minRest
	}
	now := nowMs()
	out := best[:0]
	for _, x := range best {
		e := c.s.db.m[x.k]
		if e.expired(now) || match != nil && !globMatch(match, []byte(x.k)) || typ != nil && !eqFold(typ, e.typeName()) {
			continue
		}
		out = append(out, x)
	}
	// COUNT is the client's: the reply is reserved before it is built.
	size := int64(64)
	for _, x := range out {
		size += int64(len(x.k)) + 16
	}
	if !c.replyFits(size) {
		c.err(errOOM)
		return false
	}
	c.w.Array(2)
	c.w.BulkString(strconv.FormatUint(next, 10))
	c.w.Array(len(out))
	for _, x := range out {
		c.w.BulkString(x.k)
	}
	return false
}

type keyPos struct {
	k string
	h uint64
}

func sortKH(s []keyPos) {
	sort.Slice(s, func(i, j int) bool { return s[i].h < s[j].h || s[i].h == s[j].h && s[i].k < s[j].k })
}

func cmdDBSize(c *client, args [][]byte) bool {
	c.w.Int(int64(len(c.s.db.m)))
	return false
}

func cmdRename(c *client, args [][]byte) bool {
	s := c.s
	src, dst := args[1], args[2]
	e := s.getForCreate(c, src)
	if e == nil {
		c.err("ERR no such key")
		return false
	}
	if string(src) != string(dst) {
		if old := s.getForCreate(c, dst); old != nil {
			s.deleteKey(c, string(dst), old)
		}
		exp := e.expireAt
		delete(s.db.m, string(src))
		delete(s.db.expires, string(src))
		s.touch(string(src))
		d := string(dst)
		s.mem.Add(int64(len(dst)) - int64(len(src)))
		e.mem += int64(len(dst)) - int64(len(src))
		s.db.m[d] = e
		if exp != 0 {
			s.db.expires[d] = e
		}
		s.touch(d)
		c.log(args)
	}
	c.w.Simple("OK")
	return false
}

// cmdExpire serves EXPIRE, PEXPIRE, EXPIREAT and PEXPIREAT with Redis 7's
// NX, XX, GT and LT. The log records the absolute time (PEXPIREAT).
func cmdExpire(c *client, args [][]byte) bool {
	s := c.s
	name := string(c.lower[:len(args[0])])
	var nx, xx, gt, lt bool
	for _, o := range args[3:] {
		switch {
		case eqFold(o, "NX"):
			nx = true
		case eqFold(o, "XX"):
			xx = true
		case eqFold(o, "GT"):
			gt = true
		case eqFold(o, "LT"):
			lt = true
		default:
			c.err("ERR Unsupported option " + argText(o))
			return false
		}
	}
	if nx && (xx || gt || lt) {
		c.err("ERR NX and XX, GT or LT options at the same time are not compatible")
		return false
	}
	if gt && lt {
		c.err("ERR GT and LT options at the same time are not compatible")
		return false
	}
	t, ok := parseInt(args[2])
	if !ok {
		c.err(errNotInt)
		return false
	}
	now := nowMs()
	var at int64
	bad := false
	switch name {
	case "expire":
		bad = t > math.MaxInt64/1000 || t < math.MinInt64/1000
		t *= 1000
		fallthrough
	case "pexpire":
		bad = bad || t > 0 && now > math.MaxInt64-t || t < 0 && now < math.MinInt64-t
		at = now + t
	case "expireat":
		bad = t > math.MaxInt64/1000 || t < math.MinInt64/1000
		at = t * 1000
	default:
		at = t
	}
	if bad {
		c.err("ERR invalid expire time in '" + name + "' command")
		return false
	}
	e := s.getForCreate(c, args[1])
	if e == nil {
		c.w.Int(0)
		return false
	}
	cur := e.expireAt
	switch {
	case nx && cur != 0, xx && cur == 0,
		gt && (cur == 0 || at <= cur),
		lt && cur != 0 && at >= cur:
		c.w.Int(0)
		return false
	}
	if at <= now && !c.replaying {
		s.deleteKey(c, string(args[1]), e)
		c.logArgs("DEL", string(args[1]))
		c.w.Int(1)
		return false
	}
	s.setExpire(string(args[1]), e, at)
	c.logArgs("PEXPIREAT", string(args[1]), strconv.FormatInt(at, 10))
	c.w.Int(1)
	return false
}

func cmdTTL(c *client, args [][]byte) bool {
	e := c.s.get(args[1])
	switch {
	case e == nil:
		c.w.Int(-2)
	case e.expireAt == 0:
		c.w.Int(-1)
	default:
		ms := max(e.expireAt-nowMs(), 0)
		if c.lower[0] == 'p' {
			c.w.Int(ms)
		} else {
			c.w.Int((ms + 500) / 1000)
		}
	}
	return false
}

func cmdPersist(c *client, args [][]byte) bool {
	e := c.s.getForCreate(c, args[1])
	if e == nil || e.expireAt == 0 {
		c.w.Int(0)
		return false
	}
	c.s.setExpire(string(args[1]), e, 0)
	c.log(args)
	c.w.Int(1)
	return false
}

func cmdFlush(c *client, args [][]byte) bool {
	if len(args) > 2 || len(args) == 2 && !eqFold(args[1], "ASYNC") && !eqFold(args[1], "SYNC") {
		c.err(errSyntax)
		return false
	}
	s := c.s
	for k, e := range s.db.m {
		s.mem.Add(-e.mem)
		delete(s.db.m, k)
	}
	clear(s.db.expires)
	s.touchAll()
	c.logArgs("FLUSHALL")
	c.w.Simple("OK")
	return false
}

// globMatch is Redis's stringmatch: * ? [abc] [^a-z] and \ escapes. A
// pattern that needs more than a million steps for one key (nested stars
// over a long key) does not match, so that a client cannot make KEYS or
// SCAN run without bound.
func globMatch(p, s []byte) bool {
	budget := 1 << 20
	return globMatchBudget(p, s, &budget)
}

func globMatchBudget(p, s []byte, budget *int) bool {
	for len(p) > 0 {
		if *budget--; *budget <= 0 {
			return false
		}
		switch p[0] {
		case '*':
			for len(p) > 1 && p[1] == '*' {
				p = p[1:]
			}
			if len(p) == 1 {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if globMatchBudget(p[1:], s[i:], budget) {
					return true
				}
				if *budget <= 0 {
					return false
				}
			}
			return false
		case '?':
			if len(s) == 0 {
				return false
			}
			s = s[1:]
			p = p[1:]
			continue
		case '[':
			if len(s) == 0 {
				return false
			}
			p = p[1:]
			not := len(p) > 0 && p[0] == '^'
			if not {
				p = p[1:]
			}
			match := false
			for len(p) > 0 && p[0] != ']' {
				switch {
				case p[0] == '\\' && len(p) >= 2:
					if p[1] == s[0] {
						match = true
					}
					p = p[2:]
				case len(p) >= 3 && p[1] == '-':
					lo, hi := p[0], p[2]
					if lo > hi {
						lo, hi = hi, lo
					}
					if s[0] >= lo && s[0] <= hi {
						match = true
					}
					p = p[3:]
				default:
					if p[0] == s[0] {
						match = true
					}
					p = p[1:]
				}
			}
			if len(p) > 0 {
				p = p[1:] // ']'
			}
			if match == not {
				return false
			}
			s = s[1:]
			continue
		case '\\':
			if len(p) >= 2 {
				p = p[1:]
			}
		}
		if len(s) == 0 || p[0] != s[0] {
			return false
		}
		s, p = s[1:], p[1:]
	}
	return len(s) == 0
}
