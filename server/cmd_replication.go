package server

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/bloomlab/bloomlab/rdb"
)

// Redis's replication commands (COMMAND DOCS group "server"): REPLCONF,
// PSYNC, SYNC, WAIT, ROLE, REPLICAOF and SLAVEOF. The primary's state is
// replication.go's, the replica's replica.go's.

func init() {
	registerFamily(&family{name: "replication", group: "server", commands: []*command{
		keyless("replconf", -1, fAdmin, "admin slow dangerous", "An internal command for configuring the replication stream", cmdReplconf),
		keyless("psync", -3, fAdmin|fNoMulti, "admin slow dangerous", "An internal command used in replication", cmdPsync),
		keyless("sync", 1, fAdmin|fNoMulti, "admin slow dangerous", "An internal command used in replication", cmdSync),
		keyless("wait", 3, 0, "slow connection", "Wait for the synchronous replication of all the write commands sent in the context of the current connection", cmdWait),
		keyless("role", 1, fFast, "admin fast dangerous", "Returns the replication role", cmdRole),
		keyless("replicaof", 3, fAdmin, "admin slow dangerous", "Configure a server as replica of another, or promote it to a master", cmdReplicaof),
		keyless("slaveof", 3, fAdmin, "admin slow dangerous", "Sets a Redis server as a replica of another, or promotes it to being a master", cmdReplicaof),
	}})
}

// replConf is what a connection said with REPLCONF before PSYNC.
type replConf struct {
	port              int
	ip                string
	capaEOF, capaPSY2 bool
	capaBloomlab      bool
}

// replica is a replica attached to this primary: its connection, where its
// stream stands, and what it acknowledged.
type replica struct {
	c    *client
	conf replConf
	// online: the replica is sent the stream; before, it is sent its full
	// sync, whose stream begins at from (-1: none).
	online bool
	from   int64
	sent   int64 // the stream's offset sent up to (under repl.mu)
	// ack is the offset the replica acknowledged (REPLCONF ACK), ackAt
	// when (Unix ms).
	ack, ackAt atomic.Int64
	acked      chan struct{} // closed at the first ACK (a diskless full sync's end)
	state      string        // INFO's: wait_bgsave, send_bulk, online
	softSince  time.Time     // when its pending stream first passed the soft limit
	closed     bool
}

// cmdReplconf serves REPLCONF (Redis's replconfCommand): options before
// PSYNC, and ACK / GETACK afterwards.
func cmdReplconf(c *client, args [][]byte) bool {
	if len(args)%2 == 0 {
		c.err("ERR syntax error")
		return false
	}
	if c.rconf == nil {
		c.rconf = &replConf{}
	}
	for i := 1; i < len(args); i += 2 {
		opt, val := strings.ToLower(string(args[i])), args[i+1]
		switch opt {
		case "listening-port":
			p, ok := parseInt(val)
			if !ok || p < 0 || p > 65535 {
				c.err("ERR value is not an integer or out of range")
				return false
			}
			c.rconf.port = int(p)
		case "ip-address":
			if len(val) > 46 {
				c.err("ERR REPLCONF ip-address provided by replica instance is too long: " + strconv.Itoa(len(val)) + " bytes")
				return false
			}
			c.rconf.ip = string(val)
		case "capa":
			switch strings.ToLower(string(val)) {
			case "eof":
				c.rconf.capaEOF = true
			case "psync2":
				c.rconf.capaPSY2 = true
			case "bloomlab":
				c.rconf.capaBloomlab = true
			}
		case "ack", "fack":
			off, ok := parseInt(val)
			if rep := c.rep; rep != nil && ok && opt == "ack" {
				c.s.repl.acked(rep, off)
			}
		case "getack":
			if l := c.s.repl.replicaLink(); l != nil && c.master {
				l.sendAck()
			}
		case "rdb-only", "rdb-filter-only":
			// redis-cli --rdb's: accepted, the full sync is the same.
		default: // rdb-channel too: Redis 8's second channel is not served
			opt := args[i]
			if len(opt) > 128 {
				opt = opt[:128]
			}
			c.err("ERR Unrecognized REPLCONF option: " + string(opt))
			return false
		}
	}
	if c.rep != nil || c.master {
		return false // ACK, GETACK: no reply
	}
	if c.rconf.capaBloomlab {
		c.w.Simple("OK bloomlab") // tells a serve replica its primary is serve
	} else {
		c.w.Simple("OK")
	}
	return false
}

// cmdPsync serves PSYNC replid offset: +CONTINUE from the backlog when it
// holds the bytes the replica asks for and the ID is this primary's (or
// its former one, up to where it was valid), a full sync otherwise.
func cmdPsync(c *client, args [][]byte) bool {
	s := c.s
	if l := s.repl.replicaLink(); l != nil && l.state() != "connected" {
		c.err("NOMASTERLINK Can't SYNC while not connected with my master")
		return false
	}
	if c.rep != nil {
		return false // already a replica: Redis ignores it
	}
	off, ok := parseInt(args[2])
	if !ok {
		c.err("ERR value is not an integer or out of range")
		return false
	}
	s.startReplica(c, string(args[1]), off, true)
	return false
}

// cmdSync serves SYNC: a full sync without the +FULLRESYNC line, in the
// $<len> form.
func cmdSync(c *client, args [][]byte) bool {
	if c.rep != nil {
		return false
	}
	s := c.s
	if l := s.repl.replicaLink(); l != nil && l.state() != "connected" {
		c.err("NOMASTERLINK Can't SYNC while not connected with my master")
		return false
	}
	if c.rconf == nil {
		c.rconf = &replConf{}
	}
	c.rconf.capaEOF = false
	s.startReplica(c, "?", -1, false)
	return false
}

// startReplica makes c a replica: it is sent the reply to its PSYNC (or
// SYNC), then its full sync or the backlog from its offset, then the
// stream, by a goroutine of its own; c's own replies are dropped from now
// on (a replica's ACKs are not answered).
func (s *Server) startReplica(c *client, id string, psyncOff int64, psync bool) {
	conf := replConf{}
	if c.rconf != nil {
		conf = *c.rconf
	}
	if conf.ip == "" {
		if a, ok := c.conn.RemoteAddr().(*net.TCPAddr); ok {
			conf.ip = a.IP.String()
		}
	}
	rep := &replica{c: c, conf: conf, from: -1, acked: make(chan struct{})}
	c.rep = rep
	// The replies so far (REPLCONF's +OK) go out first; from now on the
	// connection is the sender's.
	c.flush()
	go s.feedReplica(rep, id, psyncOff, psync)
}

// feedReplica is the goroutine of one replica.
func (s *Server) feedReplica(rep *replica, id string, psyncOff int64, psync bool) {
	r := &s.repl
	conn := rep.c.conn
	w := &deadlineWriter{conn: conn}
	defer func() {
		r.mu.Lock()
		delete(r.replicas, rep)
		rep.closed = true
		r.trimLocked()
		r.mu.Unlock()
		conn.Close() // the client's loop ends too
	}()
	// A partial resync: the backlog from the byte asked for.
	s.db.mu.Lock()
	r.activate()
	r.mu.Lock()
	ok, newID := false, false
	if psync && id != "?" {
		ok, newID = r.canContinueLocked(id, psyncOff)
	}
	if ok {
		rep.online, rep.sent, rep.state = true, psyncOff-1, "online"
		r.replicas[rep] = struct{}{}
		reply := "+CONTINUE\r\n"
		if newID && rep.conf.capaPSY2 {
			reply = "+CONTINUE " + r.id + "\r\n"
		}
		r.partialOK.Add(1)
		r.mu.Unlock()
		s.db.mu.Unlock()
		s.logf("bloomlab: replica %s:%d: partial resynchronisation from offset %d", rep.conf.ip, rep.conf.port, psyncOff)
		if _, err := w.Write([]byte(reply)); err != nil {
			return
		}
		s.streamTo(rep, w)
		return
	}
	if psync && id != "?" {
		r.partialErr.Add(1)
	}
	r.mu.Unlock()
	// A full sync: the keyspace frozen and the stream's offset taken
	// together, under the exclusive lock.
	items, off, fid, err := s.freezeForSync(rep)
	s.db.mu.Unlock()
	if err != nil {
		s.logf("bloomlab: replica %s:%d refused: %v", rep.conf.ip, rep.conf.port, err)
		msg := oneLine(err.Error())
		r.refused.Store(&msg)
		r.refusals.Add(1)
		w.Write([]byte("-ERR " + oneLine(err.Error()) + "\r\n"))
		return
	}
	r.fullSyncs.Add(1)
	r.mu.Lock()
	rid := r.id
	r.mu.Unlock()
	start := time.Now()
	if psync {
		if _, err := fmt.Fprintf(w, "+FULLRESYNC %s %d\r\n", rid, off); err != nil {
			s.freezes.end(fid)
			return
		}
	}
	err = s.sendSnapshot(rep, w, items, rid, off)
	s.freezes.end(fid)
	if err != nil {
		s.logf("bloomlab: replica %s:%d: full sync failed: %v", rep.conf.ip, rep.conf.port, err)
		return
	}
	s.logf("bloomlab: replica %s:%d: full sync of %d keys sent (%s)", rep.conf.ip, rep.conf.port, len(items), time.Since(start).Round(time.Millisecond))
	if rep.conf.capaEOF {
		// Redis's repl_put_online_on_ack: after a diskless payload the
		// stream starts once the replica acknowledges it has loaded it,
		// so that nothing follows the end mark until it has found it.
		t := time.NewTimer(replTimeout)
		select {
		case <-rep.acked:
			t.Stop()
		case <-t.C:
			s.logf("bloomlab: replica %s:%d: no ACK %s after its full sync; disconnected", rep.conf.ip, rep.conf.port, replTimeout)
			return
		case <-s.stopBg:
			return
		}
	}
	r.mu.Lock()
	rep.online, rep.sent, rep.state = true, off, "online"
	r.mu.Unlock()
	s.streamTo(rep, w)
}

// freezeForSync freezes the keyspace for a full sync and registers rep
// at the stream's offset; the caller holds the keyspace exclusively (and
// activated the backlog).
func (s *Server) freezeForSync(rep *replica) ([]snapItem, int64, uint64, error) {
	r := &s.repl
	now := nowMs()
	var ic *client
	var refused []string
	for k, e := range s.db.m {
		if e.expired(now) || rep.conf.capaBloomlab {
			continue
		}
		if what := rdbUnsupported(e.v); what != "" {
			refused = append(refused, fmt.Sprintf("%q holds a %s", k, what))
		}
	}
	if len(refused) > 0 {
		sort.Strings(refused)
		if len(refused) > 3 {
			refused = append(refused[:3], fmt.Sprintf("and %d more", len(refused)-3))
		}
		return nil, 0, 0, fmt.Errorf("a replica cannot load these keys (bloomlab's own kinds travel only to a bloomlab serve replica): %s", strings.Join(refused, "; "))
	}
	id := s.freezes.begin()
	items := make([]snapItem, 0, len(s.db.m))
	for k, e := range s.db.m {
		if e.expired(now) {
			continue // the primary's DEL follows in the stream when it acts on it
		}
		if e.v.typ().fam.settle != nil && r.replicaLink() == nil { // a replica's values change by its primary only
			if ic == nil {
				ic = s.internalClient()
			}
			if err := ic.settleKey(k, e); err != nil {
				s.freezes.end(id)
				return nil, 0, 0, fmt.Errorf("key %q: %w", k, err)
			}
		}
		e.frozen = id
		items = append(items, snapItem{k, e.v, e.expireAt})
	}
	r.mu.Lock()
	off := r.offset.Load()
	rep.from, rep.state = off, "wait_bgsave"
	r.replicas[rep] = struct{}{}
	r.selectd = false // the stream after the snapshot begins with SELECT
	r.mu.Unlock()
	return items, off, id, nil
}

// sendSnapshot writes the frozen items as an RDB file: after "$EOF:<mark>"
// and followed by the mark (a replica that said capa eof), or as a bulk
// of its length, written to a temporary file first.
func (s *Server) sendSnapshot(rep *replica, w io.Writer, items []snapItem, id string, off int64) error {
	sort.Slice(items, func(i, j int) bool { return items[i].key < items[j].key })
	s.repl.mu.Lock()
	rep.state = "send_bulk"
	s.repl.mu.Unlock()
	if rep.conf.capaEOF {
		mark := newReplID()
		if _, err := io.WriteString(w, "$EOF:"+mark+"\r\n"); err != nil {
			return err
		}
		bw := bufio.NewWriterSize(w, 64<<10)
		if err := s.writeSyncRDB(bw, items, id, off, rep.conf.capaBloomlab); err != nil {
			return err
		}
		if _, err := bw.WriteString(mark); err != nil {
			return err
		}
		return bw.Flush()
	}
	f, err := os.CreateTemp(s.cfg.Dir, "bloomlab-sync-*.rdb")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	bw := bufio.NewWriterSize(f, 64<<10)
	if err := s.writeSyncRDB(bw, items, id, off, rep.conf.capaBloomlab); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	size, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "$%d\r\n", size); err != nil {
		return err
	}
	_, err = io.Copy(w, f)
	return err
}

// writeSyncRDB writes items as an RDB file of version 10 with Redis's
// AUX fields of a replication payload (repl-stream-db, repl-id,
// repl-offset).
func (s *Server) writeSyncRDB(w io.Writer, items []snapItem, id string, off int64, carry bool) error {
	rw, err := rdb.NewWriter(w, rdb.DumpVersion, false)
	if err != nil {
		return err
	}
	aux := [][2]string{
		{"redis-ver", s.d.redisVersion},
		{"redis-bits", "64"},
		{"ctime", strconv.FormatInt(time.Now().Unix(), 10)},
		{"used-mem", strconv.FormatInt(s.mem.Load(), 10)},
		{"repl-stream-db", "0"},
		{"repl-id", id},
		{"repl-offset", strconv.FormatInt(off, 10)},
		{"aof-base", "0"},
	}
	for _, a := range aux {
		if err := rw.Aux(a[0], a[1]); err != nil {
			return err
		}
	}
	if len(items) > 0 {
		var expires uint64
		for _, it := range items {
			if it.expireAt != 0 {
				expires++
			}
		}
		if err := rw.SelectDB(0); err != nil {
			return err
		}
		if err := rw.ResizeDB(uint64(len(items)), expires); err != nil {
			return err
		}
	}
	for _, it := range items {
		if it.expireAt != 0 {
			if err := rw.Expire(it.expireAt); err != nil {
				return err
			}
		}
		sink := fileSink{rw, []byte(it.key)}
		var err error
		if carry && rdbUnsupported(it.v) != "" {
			err = writeCarried(it.v, sink)
		} else {
			err = writeRDBValue(it.v, sink)
		}
		if err != nil {
			return fmt.Errorf("key %q: %w", it.key, err)
		}
	}
	return rw.Close()
}

// streamTo sends rep the stream from rep.sent on, until the connection
// fails or the server stops.
func (s *Server) streamTo(rep *replica, w io.Writer) {
	r := &s.repl
	var bufs [][]byte
	for {
		r.mu.Lock()
		for rep.sent >= r.offset.Load() && !rep.closed && !s.closing.Load() {
			r.cond.Wait()
		}
		if rep.closed || s.closing.Load() {
			r.mu.Unlock()
			return
		}
		if pending := r.offset.Load() - rep.sent; pending > replicaHardLimit {
			r.mu.Unlock()
			s.logf("bloomlab: replica %s:%d: %d bytes of stream pending (client-output-buffer-limit replica 256mb); disconnected", rep.conf.ip, rep.conf.port, pending)
			return
		}
		bufs = r.readLocked(rep.sent, 4<<20, bufs[:0])
		r.mu.Unlock()
		n := 0
		for _, b := range bufs {
			n += len(b)
		}
		nb := net.Buffers(bufs)
		if _, err := nb.WriteTo(w); err != nil {
			return
		}
		clear(bufs)
		r.mu.Lock()
		rep.sent += int64(n)
		r.mu.Unlock()
	}
}

// deadlineWriter writes to a connection with Redis's repl-timeout as the
// deadline of each write.
type deadlineWriter struct {
	conn net.Conn
	by   time.Time
}

func (d *deadlineWriter) Write(p []byte) (int, error) {
	if now := time.Now(); d.by.Sub(now) < replTimeout/2 {
		d.by = now.Add(replTimeout)
		d.conn.SetWriteDeadline(d.by)
	}
	return d.conn.Write(p)
}

// acked notes a replica's REPLCONF ACK.
func (r *replication) acked(rep *replica, off int64) {
	rep.ack.Store(off)
	rep.ackAt.Store(time.Now().UnixMilli())
	select {
	case <-rep.acked:
	default:
		r.mu.Lock()
		select {
		case <-rep.acked:
		default:
			close(rep.acked)
		}
		r.mu.Unlock()
	}
	r.cond.Broadcast()
}

// cmdWait serves WAIT numreplicas timeout: it returns once numreplicas
// replicas acknowledged the stream up to what this client's commands
// observed, or once timeout milliseconds (0: no limit) have passed, with
// the number that did.
func cmdWait(c *client, args [][]byte) bool {
	s := c.s
	if s.repl.replicaLink() != nil {
		c.err("ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated.")
		return false
	}
	n, ok1 := parseInt(args[1])
	ms, ok2 := parseInt(args[2])
	if !ok1 || !ok2 {
		c.err("ERR value is not an integer or out of range")
		return false
	}
	if ms < 0 {
		c.err("ERR timeout is negative")
		return false
	}
	target := c.replSeen
	r := &s.repl
	count := func() int64 {
		var k int64
		for rep := range r.replicas {
			if rep.online && rep.ack.Load() >= target {
				k++
			}
		}
		return k
	}
	r.mu.Lock()
	got := count()
	if got >= n || c.multi || c.inTx || c.excl {
		r.mu.Unlock()
		c.w.Int(got)
		return false
	}
	r.mu.Unlock()
	// Ask the replicas for their offsets now (Redis sends REPLCONF GETACK
	// before it sleeps), then wait for their ACKs.
	r.feed([][]byte{[]byte("REPLCONF"), []byte("GETACK"), []byte("*")})
	var deadline time.Time
	if ms > 0 {
		deadline = time.Now().Add(time.Duration(ms) * time.Millisecond)
	}
	if ms > 0 {
		t := time.AfterFunc(time.Until(deadline), func() { r.cond.Broadcast() })
		defer t.Stop()
	}
	r.mu.Lock()
	for {
		got = count()
		if got >= n || ms > 0 && !time.Now().Before(deadline) || s.closing.Load() {
			break
		}
		r.cond.Wait()
	}
	r.mu.Unlock()
	c.w.Int(got)
	return false
}

// cmdRole serves ROLE.
func cmdRole(c *client, args [][]byte) bool {
	s := c.s
	if l := s.repl.replicaLink(); l != nil {
		host, port := l.target()
		c.w.Array(5)
		c.w.BulkString("slave")
		c.w.BulkString(host)
		c.w.Int(int64(port))
		c.w.BulkString(l.roleState())
		c.w.Int(l.offset())
		return false
	}
	r := &s.repl
	r.mu.Lock()
	reps := r.onlineLocked()
	off := r.offset.Load()
	r.mu.Unlock()
	c.w.Array(3)
	c.w.BulkString("master")
	c.w.Int(off)
	c.w.Array(len(reps))
	for _, rep := range reps {
		c.w.Array(3)
		c.w.BulkString(rep.conf.ip)
		c.w.BulkString(strconv.Itoa(rep.conf.port))
		c.w.BulkString(strconv.FormatInt(rep.ack.Load(), 10))
	}
	return false
}

// onlineLocked lists the replicas in INFO's order (the order they
// attached).
func (r *replication) onlineLocked() []*replica {
	reps := make([]*replica, 0, len(r.replicas))
	for rep := range r.replicas {
		reps = append(reps, rep)
	}
	sort.Slice(reps, func(i, j int) bool { return reps[i].c.id < reps[j].c.id })
	return reps
}

// cmdReplicaof serves REPLICAOF host port and REPLICAOF NO ONE (SLAVEOF).
func cmdReplicaof(c *client, args [][]byte) bool {
	s := c.s
	// Inside EXEC (Sentinel's reconfiguration block) the keyspace is held,
	// which the change takes itself: it runs once the block is done.
	later := func(f func()) {
		if c.excl {
			c.afterExec = append(c.afterExec, f)
		} else {
			f()
		}
	}
	if eqFold(args[1], "no") && eqFold(args[2], "one") {
		if s.repl.replicaLink() != nil {
			id := c.id
			later(func() {
				s.promote()
				s.logf("bloomlab: MASTER MODE enabled (user request from 'id=%d')", id)
			})
		}
		c.w.Simple("OK")
		return false
	}
	port, ok := parseInt(args[2])
	if !ok || port < 0 || port > 65535 {
		c.err("ERR Invalid master port")
		return false
	}
	host := string(args[1])
	if l := s.repl.replicaLink(); l != nil {
		if h, p := l.target(); h == host && p == int(port) {
			c.w.Simple("OK Already connected to specified master")
			return false
		}
	}
	id := c.id
	later(func() {
		s.replicaOf(host, int(port))
		s.logf("bloomlab: REPLICAOF %s:%d enabled (user request from 'id=%d')", host, port, id)
	})
	c.w.Simple("OK")
	return false
}

// replInfo is INFO's Replication section.
func (s *Server) replInfo() []any {
	r := &s.repl
	var kv []any
	if l := r.replicaLink(); l != nil {
		kv = append(kv, "role", "slave")
		kv = append(kv, l.info()...)
	} else {
		kv = append(kv, "role", "master")
	}
	r.mu.Lock()
	reps := r.onlineLocked()
	kv = append(kv, "connected_slaves", len(reps))
	now := time.Now().UnixMilli()
	for i, rep := range reps {
		lag := int64(0)
		if at := rep.ackAt.Load(); at > 0 {
			lag = (now - at) / 1000
		}
		kv = append(kv, fmt.Sprintf("slave%d", i), fmt.Sprintf("ip=%s,port=%d,state=%s,offset=%d,lag=%d", rep.conf.ip, rep.conf.port, rep.state, rep.ack.Load(), lag))
	}
	off := r.offset.Load()
	active := 0
	histlen := int64(0)
	first := int64(0)
	if r.active.Load() {
		active = 1
		histlen = off - r.head
		first = r.head + 1
	}
	kv = append(kv, "master_failover_state", "no-failover", "master_replid", r.id, "master_replid2", r.id2,
		"master_repl_offset", off, "second_repl_offset", r.off2,
		"repl_backlog_active", active, "repl_backlog_size", r.size,
		"repl_backlog_first_byte_offset", first, "repl_backlog_histlen", histlen)
	if n := r.refusals.Load(); n > 0 {
		kv = append(kv, "bloomlab_replicas_refused", n, "bloomlab_last_refusal", *r.refused.Load())
	}
	r.mu.Unlock()
	return kv
}
