package server

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// keyspace is the one database (SELECT 0).
//
// Locking: mu is held shared by commands that read keys or change one
// existing key's value (these also lock the entry: shared to read,
// exclusively to write), and exclusively by commands that create, delete
// or rename keys, change expiry times, run a MULTI/EXEC block, or freeze
// the keyspace for a snapshot. An entry's value pointer changes only
// under its own write lock or under mu held exclusively.
type keyspace struct {
	mu      sync.RWMutex
	m       map[string]*entry
	expires map[string]*entry // the keys with an expiry time
}

type entry struct {
	mu       sync.RWMutex
	v        value
	expireAt int64  // Unix milliseconds; 0: none (changed under keyspace.mu held exclusively)
	mem      int64  // bytes accounted for the entry (key and value)
	frozen   uint64 // the snapshot that froze v; a writer copies v first
}

// typeName is TYPE's answer for e (readers hold db.mu; the value may be
// replaced under e.mu by a writer copying a frozen value).
func (e *entry) typeName() string {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.v.typ().name
}

func (db *keyspace) init() {
	db.m = map[string]*entry{}
	db.expires = map[string]*entry{}
}

// clockSkew is added to the wall clock by nowMs: tests move the clock
// with it (atomic: the server's goroutines read the clock meanwhile).
var clockSkew atomic.Int64

// nowMs is the time keys expire by, Unix milliseconds.
func nowMs() int64 { return time.Now().UnixMilli() + clockSkew.Load() }

// expired reports whether e's time has passed.
func (e *entry) expired(now int64) bool { return e.expireAt != 0 && now >= e.expireAt }

// expiredNow reports whether e has expired, for a command. While the log
// is replayed nothing expires (as in Redis while it loads): the log holds
// a DEL for every expiry that a write acted on, at the point where it
// acted, so replay reproduces the writes as they ran whatever the clock
// says now. Expiring by the clock at replay would delete a key whose
// expiry a later record removed (PERSIST, a later EXPIRE) before that
// record, or recreate it empty at a later write: acknowledged writes
// lost. Keys whose time has passed expire once replay is over.
func (s *Server) expiredNow(e *entry) bool {
	return e.expireAt != 0 && !s.loading && e.expired(nowMs())
}

// get returns the live entry of key (nil if missing or expired). The
// caller holds db.mu (either way).
func (s *Server) get(key []byte) *entry {
	e := s.db.m[string(key)]
	if e == nil {
		return nil
	}
	if s.expiredNow(e) {
		return nil
	}
	return e
}

// getForCreate returns key's live entry, deleting it first if it has
// expired (logging the deletion). The caller holds db.mu exclusively.
func (s *Server) getForCreate(c *client, key []byte) *entry {
	e := s.db.m[string(key)]
	if e != nil && s.expiredNow(e) {
		s.deleteKey(c, string(key), e)
		c.logArgs("DEL", string(key))
		return nil
	}
	return e
}

// add creates key with v. The caller holds db.mu exclusively, checked the
// key is absent and reserved v's memory (see reserve); the reservation
// becomes the entry's.
func (s *Server) add(key string, v value, reserved int64) *entry {
	e := &entry{v: v}
	e.mem = entryMem(key, v)
	s.mem.Add(e.mem - reserved)
	s.db.m[key] = e
	s.touch(key)
	return e
}

func entryMem(key string, v value) int64 { return int64(len(key)) + 64 + v.memory() }

// deleteKey removes key. The caller holds db.mu exclusively.
func (s *Server) deleteKey(c *client, key string, e *entry) {
	delete(s.db.m, key)
	if e.expireAt != 0 {
		delete(s.db.expires, key)
	}
	s.mem.Add(-e.mem)
	s.touch(key)
}

// setExpire sets or clears key's expiry time. The caller holds db.mu
// exclusively.
func (s *Server) setExpire(key string, e *entry, at int64) {
	e.expireAt = at
	if at == 0 {
		delete(s.db.expires, key)
	} else {
		s.db.expires[key] = e
	}
	s.touch(key)
}

// freezes are the serialisations of the keyspace in progress (a
// snapshot, replicas' full syncs), each of which froze the values it
// writes: under the keyspace's exclusive lock, each value's entry takes
// the freeze's id (ids increase), and a writer copies a value frozen by a
// freeze still in progress before changing it (writable). A value frozen
// by a later freeze than the oldest in progress may be copied for nothing
// (it was not in the older one), never changed under one that writes it.
type freezes struct {
	mu     sync.Mutex
	last   uint64
	active []uint64
	oldest atomic.Uint64 // the oldest freeze in progress (0: none)
}

// begin starts a freeze and returns its id; the caller holds the
// keyspace exclusively while it freezes values with it.
func (f *freezes) begin() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.last++
	f.active = append(f.active, f.last)
	f.oldest.Store(f.active[0])
	return f.last
}

// end ends freeze id: its values may be changed again.
func (f *freezes) end(id uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, a := range f.active {
		if a == id {
			f.active = append(f.active[:i], f.active[i+1:]...)
			break
		}
	}
	if len(f.active) == 0 {
		f.oldest.Store(0)
	} else {
		f.oldest.Store(f.active[0])
	}
}

// writable prepares e for a change of its value: the caller holds e.mu
// for writing (or db.mu exclusively). If a snapshot in progress froze the
// value, the value is copied first and the snapshot keeps the original.
func (s *Server) writable(e *entry) error {
	if e.frozen != 0 && e.frozen >= s.freezes.oldest.Load() && s.freezes.oldest.Load() != 0 {
		v, err := e.v.clone()
		if err != nil {
			return err
		}
		e.v = v
	}
	e.frozen = 0
	return nil
}

// resize updates e's accounted memory after its value changed size. The
// caller holds e.mu for writing.
func (s *Server) resize(key []byte, e *entry) {
	m := int64(len(key)) + 64 + e.v.memory()
	if d := m - e.mem; d != 0 {
		e.mem = m
		s.mem.Add(d)
	}
}

// reserve accounts n more bytes if they fit under MaxMemory, reporting
// whether they did. Reservations are atomic: concurrent writers cannot
// together exceed the limit. The used memory includes what clients hold
// (clientmem.go).
func (s *Server) reserve(n int64) bool {
	if n <= 0 {
		return true
	}
	for {
		cur := s.mem.Load()
		if s.maxMem > 0 && cur+n > s.maxMem {
			return false
		}
		if s.mem.CompareAndSwap(cur, cur+n) {
			s.notePeak()
			return true
		}
	}
}

// reserve accounts n bytes that the client's command is about to hold:
// against MaxMemory (false: refused, nothing accounted), or, replaying the
// log, whatever the limit, since a replay repeats what was acknowledged.
// The caller gives them back (s.mem.Add(-n)) if it does not hold them
// after all.
func (c *client) reserve(n int64) bool {
	if c.replaying {
		c.s.mem.Add(n)
		return true
	}
	return c.s.reserve(n)
}

// room is the bytes that MaxMemory leaves (math.MaxInt64 without a
// limit): what a reader may allocate before it reserves.
func (s *Server) room() int64 {
	if s.maxMem <= 0 {
		return math.MaxInt64
	}
	return s.maxMem - s.mem.Load()
}

// overLimit reports whether memory already exceeds MaxMemory (Redis
// refuses every write that may allocate then).
func (s *Server) overLimit() bool { return s.maxMem > 0 && s.mem.Load() > s.maxMem }

// expireCycle deletes expired keys in the background: up to 200 at a
// time, as long as more than a quarter of a sample have expired (Redis's
// active expiry).
func (s *Server) expireCycle() {
	if s.logErr() != nil {
		// The deletions could not be logged; lazy expiry still hides the
		// keys, and the clock expires them again after a restart.
		return
	}
	for round := 0; round < 16; round++ {
		s.db.mu.Lock()
		if len(s.db.expires) == 0 {
			s.db.mu.Unlock()
			return
		}
		now := nowMs()
		sampled, gone := 0, 0
		var c *client
		for k, e := range s.db.expires {
			if sampled == 200 {
				break
			}
			sampled++
			if e.expired(now) {
				if c == nil {
					c = s.internalClient()
				}
				s.deleteKey(c, k, e)
				c.logArgs("DEL", k)
				gone++
			}
		}
		s.db.mu.Unlock()
		if gone*4 <= sampled {
			return
		}
	}
}

// watchers maps watched keys to the clients watching them (WATCH).
type watchers struct {
	n  atomic.Int64 // watched keys, for the fast path
	mu sync.Mutex
	m  map[string]map[*client]struct{}
}

// touch marks the clients watching key dirty: their EXEC will fail.
func (s *Server) touch(key string) {
	if s.watch.n.Load() == 0 {
		return
	}
	s.watch.mu.Lock()
	for c := range s.watch.m[key] {
		c.dirty.Store(true)
	}
	s.watch.mu.Unlock()
}

// touchKey is touch for a key as the command received it (no string is
// made unless someone watches).
func (s *Server) touchKey(key []byte) {
	if s.watch.n.Load() != 0 {
		s.touch(string(key))
	}
}

// touchAll marks every watching client dirty (FLUSHALL).
func (s *Server) touchAll() {
	if s.watch.n.Load() == 0 {
		return
	}
	s.watch.mu.Lock()
	for _, cs := range s.watch.m {
		for c := range cs {
			c.dirty.Store(true)
		}
	}
	s.watch.mu.Unlock()
}

func (s *Server) addWatch(c *client, key string) {
	s.watch.mu.Lock()
	defer s.watch.mu.Unlock()
	if s.watch.m == nil {
		s.watch.m = map[string]map[*client]struct{}{}
	}
	cs := s.watch.m[key]
	if cs == nil {
		cs = map[*client]struct{}{}
		s.watch.m[key] = cs
	}
	if _, ok := cs[c]; !ok {
		cs[c] = struct{}{}
		c.watched = append(c.watched, key)
		s.watch.n.Add(1)
	}
}

func (s *Server) unwatchAll(c *client) {
	if len(c.watched) == 0 {
		c.dirty.Store(false)
		return
	}
	s.watch.mu.Lock()
	defer s.watch.mu.Unlock()
	for _, k := range c.watched {
		if cs := s.watch.m[k]; cs != nil {
			delete(cs, c)
			if len(cs) == 0 {
				delete(s.watch.m, k)
			}
			s.watch.n.Add(-1)
		}
	}
	c.watched = c.watched[:0]
	c.dirty.Store(false)
}
