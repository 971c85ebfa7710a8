package server

import (
	"runtime/debug"
	"time"
)

// Memory that clients make the server hold (Redis's mem_clients_normal):
// a connection's fixed buffers (connFixed), its command buffers (the
// argument bytes and arrays of the command being read, reported by the
// reader as they grow), its replies not yet sent, and its MULTI queue. All
// of it is part of the used memory that MaxMemory governs (Server.mem), as
// in Redis: while clients hold memory, writes that would allocate past
// the limit are refused with OOM. What a connection may take beyond its
// first clientFree bytes must also fit under the limit: a request (or the
// reply of a command that only reads) whose bytes would take the used
// memory past it is refused (read to its end without being kept, answered
// OOM). Within its first clientFree bytes a connection's buffers grow
// whatever the limit, so that ordinary commands and pipelines are read and
// answered on a full server (as Redis reads them): that part, at most
// MaxClients × (connFixed + clientFree), counts in the used memory but is
// not refused.
const (
	clientFree = 128 << 10
	// connFixed is a connection's memory before it sends anything: the
	// reader's and the writer's 16 KiB buffers.
	connFixed = 32 << 10
	// keepReplies: a reply buffer larger than this is dropped once sent
	// (as Redis keeps a 16 KiB reply buffer per client), so that a client
	// that pipelined once does not hold its buffer in the used memory.
	keepReplies = 16 << 10
	// bigRelease: a release of at least this many bytes at once counts
	// towards returning memory to the system (returnMemory).
	bigRelease = 1 << 20
	// returnAfter bytes released in large pieces are given back to the
	// system once releases have stopped for returnQuiet.
	returnAfter = 64 << 20
	returnQuiet = time.Second
	// sizeofSlice is a slice header's size (MULTI queue accounting).
	sizeofSlice = 24
)

// clientMem changes the connection's client memory by n bytes. All of it
// counts in the used memory; growth beyond clientFree is reserved under
// MaxMemory when limited (and refused, changing nothing, when it does not
// fit). Only the connection's goroutine calls it.
func (c *client) clientMem(n int64, limited bool) bool {
	s := c.s
	old := c.memTotal
	beyond := max(0, old+n-clientFree) - max(0, old-clientFree)
	if beyond > 0 && limited {
		if !s.reserve(beyond) {
			return false
		}
		s.mem.Add(n - beyond)
	} else {
		s.mem.Add(n)
	}
	c.memTotal = old + n
	s.clientMem.Add(n)
	if n > 0 {
		s.notePeak()
	} else if n <= -bigRelease {
		s.released.Add(-n)
		s.lastRelease.Store(time.Now().UnixNano())
	}
	return true
}

// growReader and readerFits are the connection's reader's accounting
// functions (see resp.Reader.Account).
func (c *client) growReader(n int64) bool { return c.clientMem(n, true) }

func (c *client) readerFits(n int64) bool {
	s, old := c.s, c.memTotal
	counted := max(0, old+n-clientFree) - max(0, old-clientFree)
	return counted <= 0 || s.maxMem <= 0 || s.mem.Load()+counted <= s.maxMem
}

// account keeps the connection's pending replies and MULTI queue counted
// (c.held). It costs a comparison when nothing changed.
func (c *client) account() {
	n := c.out.size() + c.queueLen + int64(cap(c.queue))*sizeofSlice
	if n != c.held {
		c.clientMem(n-c.held, false)
		c.held = n
	}
}

// releaseMem returns everything the connection held when it closes.
func (c *client) releaseMem() {
	c.clientMem(-c.memTotal, false)
	c.held = 0
}

// usedMemory is INFO's used_memory: the keys and all client memory,
// what MaxMemory governs.
func (s *Server) usedMemory() int64 { return s.mem.Load() }

// notePeak records the used memory's peak (INFO's used_memory_peak).
func (s *Server) notePeak() {
	for {
		cur, p := s.usedMemory(), s.memPeak.Load()
		if cur <= p || s.memPeak.CompareAndSwap(p, cur) {
			return
		}
	}
}

// returnMemory gives the memory of large dropped buffers back to the
// system: once at least returnAfter bytes were released in pieces of at
// least bigRelease (a 200 MiB request done, a 16 MiB reply sent) and no
// such release happened for returnQuiet, it runs debug.FreeOSMemory (a
// garbage collection that returns every free page at once). Go would
// otherwise keep the pages until the next collection, which a server
// with a steady heap runs only every two minutes, and its scavenger
// returns them gradually after that. A stream of large requests does not
// trigger it until it pauses (the pages would be taken again at once).
// The background loop calls it every 100 ms.
func (s *Server) returnMemory() {
	if s.released.Load() < returnAfter || time.Since(time.Unix(0, s.lastRelease.Load())) < returnQuiet {
		return
	}
	s.released.Store(0)
	debug.FreeOSMemory()
	s.memReturns.Add(1)
}
