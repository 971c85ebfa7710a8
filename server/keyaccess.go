package server

import (
	"fmt"
	"strings"
)

// Looking keys up and locking them, for every family: one generic
// accessor, named per family (bfOf, cfOf, cmsOf, topkOf, tdOf).

// valueAt returns key's entry, locked for reading or writing as write
// says (nothing under the keyspace's exclusive lock), and its value of
// type V; or it writes the error reply and returns nil, nothing locked:
// missing for no key, asValue's for another value.
func valueAt[V value](c *client, key []byte, missing string, write bool) (*entry, V) {
	var none V
	e := c.s.get(key)
	if e == nil {
		c.err(missing)
		return nil, none
	}
	switch {
	case c.excl:
	case write:
		e.mu.Lock()
	default:
		e.mu.RLock()
	}
	v, ok := asValue[V](c, e)
	if !ok {
		c.unlockEntry(e, write)
		return nil, none
	}
	return e, v
}

// asValue returns e's value of type V, or writes the error reply: a load
// in progress of V's family (BF.LOADCHUNK, CF.LOADCHUNK) answers nothing
// until every chunk has arrived, any other value WRONGTYPE.
func asValue[V value](c *client, e *entry) (V, bool) {
	var none V
	switch v := e.v.(type) {
	case V:
		return v, true
	case *loadingValue:
		if v.fam.complete == none.typ() { // typ needs no receiver: V's type
			got, total := v.ld.Progress()
			c.err(fmt.Sprintf("ERR the filter is being loaded with %s.LOADCHUNK (%d of %d bytes): it answers once every chunk has arrived", strings.ToUpper(v.fam.prefix), got, total))
			return none, false
		}
	}
	c.err(errWrongType)
	return none, false
}

// readKey looks up key for a command that reads a family's value:
// the entry, read-locked (the caller unlocks it), and its value; or nil,
// the error reply written (RedisBloom's "ERR not found", WRONGTYPE, a
// load in progress) and no lock held.
func readKey[V comparable](c *client, key []byte, of func(*client, *entry) V) (*entry, V) {
	var none V
	e := c.s.get(key)
	if e == nil {
		c.err(errBFNotFound)
		return nil, none
	}
	e.mu.RLock()
	v := of(c, e)
	if v == none {
		e.mu.RUnlock()
		return nil, none
	}
	return e, v
}

// unlockEntry releases what valueAt locked.
func (c *client) unlockEntry(e *entry, write bool) {
	switch {
	case c.excl:
	case write:
		e.mu.Unlock()
	default:
		e.mu.RUnlock()
	}
}

// unlockWrittenEntry is unlockEntry(e, true) for a command that changed
// e: if it panicked, e stays locked (see unlockWritten).
func (c *client) unlockWrittenEntry(e *entry) {
	if r := recover(); r != nil {
		panic(r)
	}
	c.unlockEntry(e, true)
}
