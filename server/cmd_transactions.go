package server

// Redis's transactions (COMMAND DOCS group "transactions"): MULTI, EXEC,
// DISCARD, WATCH, UNWATCH.

func init() {
	watch := keyless("watch", -2, fNoQueue|fFast, "fast transaction", "Watch the given keys to determine execution of the MULTI/EXEC block", cmdWatch)
	watch.keys = []keySpec{{first: 1, last: -1, step: 1, read: true}}
	registerFamily(&family{name: "transactions", commands: []*command{
		keyless("multi", 1, fNoQueue|fFast, "fast transaction", "Mark the start of a transaction block", cmdMulti),
		keyless("exec", 1, fNoQueue, "slow transaction", "Execute all commands issued after MULTI", cmdExec),
		keyless("discard", 1, fNoQueue|fFast, "fast transaction", "Discard all commands issued after MULTI", cmdDiscard),
		watch,
		keyless("unwatch", 1, fFast, "fast transaction", "Forget about all watched keys", cmdUnwatch),
	}})
}

func cmdMulti(c *client, args [][]byte) bool {
	if c.multi {
		c.err("ERR MULTI calls can not be nested")
		return false
	}
	c.multi, c.multiErr, c.queue, c.queueLen = true, false, c.queue[:0], 0
	c.w.Simple("OK")
	return false
}

func (c *client) endTx() {
	c.multi, c.multiErr, c.queueLen = false, false, 0
	clear(c.queue)
	c.queue = c.queue[:0]
	c.s.unwatchAll(c)
}

func cmdDiscard(c *client, args [][]byte) bool {
	if !c.multi {
		c.err("ERR DISCARD without MULTI")
		return false
	}
	c.endTx()
	c.w.Simple("OK")
	return false
}

var multiRecord, execRecord = appendRecord(nil, [][]byte{[]byte("MULTI")}), appendRecord(nil, [][]byte{[]byte("EXEC")})

// cmdExec runs the queued commands with the keyspace held exclusively, so
// that no other client sees a state between them; their log records are
// written between MULTI and EXEC records and replayed whole or not at all.
func cmdExec(c *client, args [][]byte) bool {
	s := c.s
	switch {
	case !c.multi:
		c.err("ERR EXEC without MULTI")
		return false
	case c.multiErr:
		c.endTx()
		c.err("EXECABORT Transaction discarded because of previous errors.")
		return false
	case c.dirty.Load():
		c.endTx()
		c.w.NullArray()
		return false
	}
	queue := c.queue
	s.db.mu.Lock()
	c.excl, c.inTx, c.tx = true, true, c.tx[:0]
	c.w.Array(len(queue))
	for _, q := range queue {
		cmd := lookupCommand(q[0], &c.lower)
		c.call(cmd, q)
	}
	c.inTx = false
	if len(c.tx) > 0 {
		recs := append(append([][]byte{multiRecord}, c.tx...), execRecord)
		if s.aof != nil {
			c.logPos = s.aof.appendRaw(recs...)
		}
		s.repl.feedRecords(recs...)
	}
	clear(c.tx)
	c.tx = c.tx[:0]
	c.excl = false
	s.db.mu.Unlock()
	for _, f := range c.afterExec {
		f()
	}
	c.afterExec = nil
	c.endTx()
	return false
}

func cmdWatch(c *client, args [][]byte) bool {
	if c.multi {
		c.err("ERR WATCH inside MULTI is not allowed")
		return false
	}
	for _, k := range args[1:] {
		c.s.addWatch(c, string(k))
	}
	c.w.Simple("OK")
	return false
}

func cmdUnwatch(c *client, args [][]byte) bool {
	c.s.unwatchAll(c)
	c.w.Simple("OK")
	return false
}
