package server

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bloomlab/bloomlab/rdb"
	"github.com/bloomlab/bloomlab/server/internal/resp"
)

// Replication, the replica's side (Redis's replication.c, 7.0 to 8.x): a
// link to the primary that performs the handshake (PING, AUTH, REPLCONF
// listening-port and capa, PSYNC), loads a full sync's RDB payload into
// the keyspace (which clients cannot see meanwhile: the load holds it
// exclusively), then applies the stream, acknowledging its offset every
// second. The stream's bytes go on, unchanged, into this server's own
// stream for its sub-replicas (Redis's replicationFeedStreamFromMasterStream),
// so that offsets and replication IDs agree along a chain and a promoted
// replica continues its former siblings.
//
// From a serve primary (it answers REPLCONF capa bloomlab with "+OK
// bloomlab") the stream is its log's records, applied as a replay of the
// log applies them; from a Redis primary, its commands are run as a
// client's would be (replies dropped).

// replicaLink is the replica's connection to its primary.
type replicaLink struct {
	s          *Server
	host       string
	port       int
	stop       chan struct{}
	done       chan struct{}
	ctx        context.Context // cancelled by close: a dial in progress ends
	cancel     context.CancelFunc
	mu         sync.Mutex // conn and st
	wmu        sync.Mutex // writes to conn (ACKs from the ticker and GETACK)
	conn       net.Conn
	st         string       // Redis's repl_state as ROLE names it: connect, connecting, sync, connected
	lastIO     atomic.Int64 // Unix ms of the last bytes from the primary
	downSince  atomic.Int64 // Unix ms the link went down (0: up)
	syncing    atomic.Bool
	fromServe  bool        // the primary is serve (its stream is log records)
	changed    bool        // changes applied since the last state record (stream's goroutine)
	unsaved    atomic.Bool // a full sync's keys are not yet in a snapshot: no position is logged
	applied    atomic.Int64
	skipped    map[string]int64 // commands and keys skipped, by name (-replica-skip-unsupported)
	stopped    atomic.Bool
	lastErr    atomic.Pointer[string]
	listenPort int
}

// ParseReplicaOf parses -replicaof's HOST:PORT.
func ParseReplicaOf(hp string) (string, int, error) {
	h, p, err := net.SplitHostPort(hp)
	if err != nil || h == "" {
		return "", 0, fmt.Errorf("replicaof %q: want HOST:PORT", hp)
	}
	n, err := strconv.Atoi(p)
	if err != nil || n <= 0 || n > 65535 {
		return "", 0, fmt.Errorf("replicaof %q: the port must be 1 to 65535", hp)
	}
	return h, n, nil
}

// replicaOf makes the server a replica of host:port (REPLICAOF): an
// existing link is closed first; the sub-replicas stay attached.
func (s *Server) replicaOf(host string, port int) error {
	if old := s.repl.replicaLink(); old != nil {
		old.close()
	}
	l := &replicaLink{s: s, host: host, port: port, stop: make(chan struct{}), done: make(chan struct{}), st: "connect"}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	l.downSince.Store(time.Now().UnixMilli())
	if a, ok := s.firstAddr().(*net.TCPAddr); ok {
		l.listenPort = a.Port
	}
	s.repl.link.Store(l)
	s.repl.activate() // a replica keeps a backlog for its own replicas (its ID stays: PSYNC continues from it)
	go l.run()
	return nil
}

// firstAddr is the address of one of the server's listeners (nil if none).
func (s *Server) firstAddr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	for l := range s.listeners {
		return l.Addr()
	}
	return nil
}

// promote ends replication (REPLICAOF NO ONE): the link is closed and the
// primary's ID kept as the secondary one up to this offset (PSYNC2), so
// that the former siblings resynchronise partially from this server.
func (s *Server) promote() {
	l := s.repl.replicaLink()
	if l == nil {
		return
	}
	l.close()
	s.db.mu.Lock()
	s.repl.mu.Lock()
	s.repl.shiftIDLocked()
	s.repl.link.Store(nil)
	s.repl.selectd = false
	s.repl.mu.Unlock()
	s.db.mu.Unlock()
}

func (l *replicaLink) close() {
	if l.stopped.Swap(true) {
		<-l.done
		return
	}
	close(l.stop)
	l.cancel()
	l.mu.Lock()
	if l.conn != nil {
		l.conn.Close()
	}
	l.mu.Unlock()
	<-l.done
}

func (l *replicaLink) target() (string, int) { return l.host, l.port }

func (l *replicaLink) state() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.st
}

func (l *replicaLink) setState(st string) {
	l.mu.Lock()
	l.st = st
	l.mu.Unlock()
}

// roleState is ROLE's state field.
func (l *replicaLink) roleState() string { return l.state() }

// offset is the replica's offset: the stream's bytes applied.
func (l *replicaLink) offset() int64 { return l.s.repl.offset.Load() }

// info is INFO replication's fields of a replica.
func (l *replicaLink) info() []any {
	status := "down"
	if l.state() == "connected" {
		status = "up"
	}
	now := time.Now().UnixMilli()
	lastIO := int64(-1)
	if t := l.lastIO.Load(); t > 0 {
		lastIO = (now - t) / 1000
	}
	kv := []any{"master_host", l.host, "master_port", l.port, "master_link_status", status,
		"master_last_io_seconds_ago", lastIO, "master_sync_in_progress", b2i(l.syncing.Load())}
	kv = append(kv, "slave_read_repl_offset", l.offset(), "slave_repl_offset", l.offset())
	if d := l.downSince.Load(); d > 0 {
		kv = append(kv, "master_link_down_since_seconds", (now-d)/1000)
	}
	kv = append(kv, "slave_priority", 100, "slave_read_only", 1, "replica_announced", 1)
	l.mu.Lock()
	if len(l.skipped) > 0 {
		parts := make([]string, 0, len(l.skipped))
		for k, n := range l.skipped {
			parts = append(parts, k+"="+strconv.FormatInt(n, 10))
		}
		sort.Strings(parts)
		kv = append(kv, "bloomlab_replica_skipped", strings.Join(parts, ","))
	}
	l.mu.Unlock()
	return kv
}

// run connects, resynchronises and applies the stream until the link is
// closed, reconnecting a second after each failure (Redis's replication
// cron).
func (l *replicaLink) run() {
	defer close(l.done)
	s := l.s
	for !l.stopped.Load() {
		err := l.session()
		if l.stopped.Load() {
			return
		}
		if l.downSince.Load() == 0 {
			l.downSince.Store(time.Now().UnixMilli())
		}
		l.setState("connect")
		l.syncing.Store(false)
		if err != nil {
			msg := err.Error()
			l.lastErr.Store(&msg)
			s.logf("bloomlab: replication from %s:%d: %v", l.host, l.port, err)
		}
		select {
		case <-l.stop:
			return
		case <-s.stopBg:
			return
		case <-time.After(time.Second):
		}
	}
}

// errStopReplicating ends the link for good: the primary sent what this
// replica refuses to apply (a key or command it has no place for, without
// -replica-skip-unsupported).
var errStopReplicating = errors.New("replication stopped")

// session is one connection to the primary.
func (l *replicaLink) session() error {
	s := l.s
	l.setState("connecting")
	d := net.Dialer{Timeout: 10 * time.Second}
	addr := net.JoinHostPort(l.host, strconv.Itoa(l.port))
	var conn net.Conn
	var err error
	if s.cfg.TLS != nil {
		td := tls.Dialer{NetDialer: &d, Config: s.cfg.TLS.Clone()}
		conn, err = td.DialContext(l.ctx, "tcp", addr)
	} else {
		conn, err = d.DialContext(l.ctx, "tcp", addr)
	}
	if err != nil {
		return err
	}
	l.mu.Lock()
	if l.stopped.Load() {
		l.mu.Unlock()
		conn.Close()
		return nil
	}
	l.conn = conn
	l.mu.Unlock()
	defer conn.Close()
	br := bufio.NewReaderSize(conn, 64<<10)
	rr := resp.NewReplyReader(br, s.lim.MaxBulk)
	ask := func(args ...string) (resp.Value, error) {
		conn.SetDeadline(time.Now().Add(replTimeout))
		if _, err := conn.Write(resp.Command(args...)); err != nil {
			return resp.Value{}, err
		}
		return rr.Read()
	}
	v, err := ask("PING")
	if err != nil {
		return fmt.Errorf("PING: %w", err)
	}
	if v.Kind == resp.ErrorReply && !bytes.HasPrefix(v.Str, []byte("NOAUTH")) && !bytes.HasPrefix(v.Str, []byte("NOPERM")) && !bytes.HasPrefix(v.Str, []byte("ERR operation not permitted")) {
		return fmt.Errorf("PING: %s", v.Str)
	}
	if pass := s.cfg.MasterAuth; pass != "" {
		args := []string{"AUTH", pass}
		if u := s.cfg.MasterUser; u != "" {
			args = []string{"AUTH", u, pass}
		}
		if v, err := ask(args...); err != nil || v.Kind == resp.ErrorReply {
			return fmt.Errorf("AUTH to the primary: %v%s", err, v.Str)
		}
	}
	if _, err := ask("REPLCONF", "listening-port", strconv.Itoa(l.listenPort)); err != nil {
		return err
	}
	v, err = ask("REPLCONF", "capa", "eof", "capa", "psync2", "capa", "bloomlab")
	if err != nil {
		return err
	}
	fromServe := v.Kind == resp.SimpleString && string(v.Str) == "OK bloomlab"
	r := &s.repl
	r.mu.Lock()
	id, off := r.id, r.offset.Load()
	r.mu.Unlock()
	conn.SetDeadline(time.Now().Add(replTimeout))
	if _, err := conn.Write(resp.Command("PSYNC", id, strconv.FormatInt(off+1, 10))); err != nil {
		return err
	}
	line, err := readReplLine(br)
	if err != nil {
		return fmt.Errorf("PSYNC: %w", err)
	}
	switch {
	case strings.HasPrefix(line, "+FULLRESYNC "):
		f := strings.Fields(line[1:])
		if len(f) != 3 || len(f[1]) != 40 {
			return fmt.Errorf("PSYNC: the primary answered %q", line)
		}
		moff, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil || moff < 0 {
			return fmt.Errorf("PSYNC: the primary answered %q", line)
		}
		l.setState("sync")
		l.syncing.Store(true)
		if err := l.fullSync(conn, br, f[1], moff); err != nil {
			return err
		}
		l.syncing.Store(false)
	case strings.HasPrefix(line, "+CONTINUE"):
		if nid := strings.TrimSpace(line[len("+CONTINUE"):]); nid != "" && nid != id {
			if len(nid) != 40 {
				return fmt.Errorf("PSYNC: the primary answered %q", line)
			}
			// The primary's ID changed (it was promoted): the old one
			// stays valid up to here, for this server's own replicas.
			r.mu.Lock()
			r.id2, r.off2, r.id = r.id, r.offset.Load()+1, nid
			// Its own replicas learn the new ID by reconnecting (Redis
			// disconnects them too); they continue partially.
			for rep := range r.replicas {
				rep.closed = true
				rep.c.conn.Close()
			}
			r.mu.Unlock()
			r.cond.Broadcast()
		}
		s.logf("bloomlab: replication from %s:%d: partial resynchronisation accepted at offset %d", l.host, l.port, off)
	case strings.HasPrefix(line, "-"):
		return fmt.Errorf("PSYNC: %s", line[1:])
	default:
		return fmt.Errorf("PSYNC: the primary answered %q", line)
	}
	l.fromServe = fromServe
	l.setState("connected")
	l.downSince.Store(0)
	l.lastIO.Store(time.Now().UnixMilli())
	l.sendAck()
	stopAcks := make(chan struct{})
	defer close(stopAcks)
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-stopAcks:
				return
			case <-t.C:
				l.sendAck()
			}
		}
	}()
	return l.stream(conn, br)
}

// readReplLine reads a line of the primary's, passing over the empty
// lines a primary sends as keepalives while it prepares a full sync.
func readReplLine(br *bufio.Reader) (string, error) {
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			if err == bufio.ErrBufferFull {
				return "", errors.New("a line longer than 64 KiB")
			}
			return "", err
		}
		s := strings.TrimRight(string(line), "\r\n")
		if s != "" {
			return s, nil
		}
	}
}

// sendAck sends REPLCONF ACK offset.
func (l *replicaLink) sendAck() {
	l.mu.Lock()
	conn := l.conn
	l.mu.Unlock()
	if conn == nil {
		return
	}
	l.wmu.Lock()
	conn.SetWriteDeadline(time.Now().Add(replTimeout))
	conn.Write(resp.Command("REPLCONF", "ACK", strconv.FormatInt(l.offset(), 10)))
	l.wmu.Unlock()
}

// fullSync reads the primary's RDB payload and makes it the keyspace:
// the old keys go, the new ones are loaded, with the keyspace held
// exclusively (no client sees a half-loaded dataset); then, with a
// directory, a snapshot makes it the persisted state.
func (l *replicaLink) fullSync(conn net.Conn, br *bufio.Reader, id string, off int64) error {
	s := l.s
	start := time.Now()
	line, err := readReplLine(br)
	if err != nil {
		return fmt.Errorf("full sync: %w", err)
	}
	if !strings.HasPrefix(line, "$") {
		return fmt.Errorf("full sync: the primary sent %q, not an RDB payload", line)
	}
	var src io.Reader
	var mark []byte
	if strings.HasPrefix(line, "$EOF:") {
		mark = []byte(line[5:])
		if len(mark) != 40 {
			return fmt.Errorf("full sync: an EOF mark of %d bytes", len(mark))
		}
		src = &markReader{r: br, mark: mark}
	} else {
		n, err := strconv.ParseInt(line[1:], 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("full sync: the primary sent %q", line)
		}
		src = io.LimitReader(br, n)
	}
	conn.SetReadDeadline(time.Time{})
	src = &ioTimeReader{r: src, conn: conn, l: l}
	rd, err := rdb.NewReader(src, rdb.Limits{Room: s.room})
	if err != nil {
		return fmt.Errorf("full sync: %w", err)
	}
	s.repl.loading.Store(true)
	defer s.repl.loading.Store(false)
	s.db.mu.Lock()
	ic := s.internalClient()
	// The payload loads into a new keyspace; the old one stays until it
	// has loaded whole (a payload that fails, truncated, corrupt or too
	// large for maxmemory, leaves the replica with its previous dataset,
	// as Redis's repl-diskless-load swapdb does): both count against
	// maxmemory meanwhile.
	oldM, oldE := s.db.m, s.db.expires
	s.db.m, s.db.expires = map[string]*entry{}, map[string]*entry{}
	st, err := s.loadRDBEntries(rd, uint64(s.cfg.LoadRDBDB), s.cfg.ReplicaSkipUnsupported, "-replica-skip-unsupported")
	if err == nil {
		// What follows the payload: nothing in the $<len> form; the mark,
		// already read, in the EOF form.
		if mr, ok := src.(*ioTimeReader).r.(*markReader); ok && !mr.found {
			// The RDB file ended (its EOF opcode and checksum): the mark
			// must follow at once.
			var b [1]byte
			if n, _ := mr.Read(b[:]); n != 0 || !mr.found {
				err = fmt.Errorf("the payload's EOF mark does not follow its end")
			}
		}
		if lr, ok := src.(*ioTimeReader).r.(*io.LimitedReader); ok && lr.N != 0 {
			err = fmt.Errorf("%d bytes of the payload after its end", lr.N)
		}
	}
	if err != nil {
		for k, e := range s.db.m {
			s.deleteKey(ic, k, e)
		}
		s.db.m, s.db.expires = oldM, oldE
		s.db.mu.Unlock()
		return fmt.Errorf("full sync refused, the previous dataset kept: %w", err)
	}
	for k, e := range oldM {
		s.mem.Add(-e.mem)
		s.touch(k)
	}
	if s.aof != nil {
		ic.logArgs("FLUSHALL") // the log's older records no longer describe the keyspace
	}
	r := &s.repl
	r.mu.Lock()
	r.id, r.id2, r.off2 = id, noReplID, -1
	r.offset.Store(off)
	r.head = off
	r.blocks = nil
	// This server's own replicas were sent another history: they
	// resynchronise from this one.
	for rep := range r.replicas {
		rep.closed = true
		rep.c.conn.Close()
	}
	r.mu.Unlock()
	r.cond.Broadcast()
	s.db.mu.Unlock()
	if s.persist != nil {
		// The loaded keys are in no log: a snapshot makes them the
		// persisted state, taken in the background while the stream is
		// applied. Until it is written no position is logged, so that a
		// kill before then restarts without one (a full sync), never
		// resuming on a log that lacks the loaded keys.
		l.unsaved.Store(true)
		s.bg.Add(1) // a shutdown waits for it (the link is closed before)
		go func() {
			defer s.bg.Done()
			if err := s.save(false); err != nil {
				s.logf("bloomlab: replication: the snapshot after the full sync failed: %v (no position is logged until one succeeds)", err)
				return
			}
			l.unsaved.Store(false)
			// The changes applied while it was written are in the log:
			// their position now (the stream logs the next ones).
			s.db.mu.Lock()
			s.repl.logState(s)
			s.db.mu.Unlock()
		}()
	}
	for what, n := range st.Skipped {
		l.mu.Lock()
		if l.skipped == nil {
			l.skipped = map[string]int64{}
		}
		l.skipped["key "+what] += n
		l.mu.Unlock()
	}
	s.logf("bloomlab: replication from %s:%d: full sync of %d keys loaded in %s (skipped: %s)", l.host, l.port, st.Keys, time.Since(start).Round(time.Millisecond), st.skippedText())
	return nil
}

// markReader reads a diskless payload up to its 40-byte end mark (not
// included), never taking a byte beyond the mark from the buffered
// reader: what follows is the stream (a primary sends nothing after the
// mark until this replica acknowledges the load, but one that does loses
// nothing).
type markReader struct {
	r     *bufio.Reader
	mark  []byte
	found bool
}

func (m *markReader) Read(p []byte) (int, error) {
	if m.found {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	for {
		buf, _ := m.r.Peek(m.r.Buffered())
		if i := bytes.Index(buf, m.mark); i >= 0 {
			n := copy(p, buf[:i])
			m.r.Discard(n)
			if n == i {
				m.r.Discard(len(m.mark))
				m.found = true
			}
			return n, nil
		}
		if safe := len(buf) - len(m.mark) + 1; safe > 0 {
			// None of these bytes can begin the mark.
			n := copy(p, buf[:safe])
			m.r.Discard(n)
			return n, nil
		}
		if _, err := m.r.Peek(len(buf) + 1); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
	}
}

// ioTimeReader notes the time of each read from the primary and puts a
// deadline of repl-timeout on it.
type ioTimeReader struct {
	r    io.Reader
	conn net.Conn
	l    *replicaLink
}

func (t *ioTimeReader) Read(p []byte) (int, error) {
	t.conn.SetReadDeadline(time.Now().Add(replTimeout))
	n, err := t.r.Read(p)
	if n > 0 {
		t.l.lastIO.Store(time.Now().UnixMilli())
	}
	return n, err
}

// countReader counts the bytes read through it.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// stream applies the primary's commands.
func (l *replicaLink) stream(conn net.Conn, br *bufio.Reader) error {
	s := l.s
	cr := &countReader{r: &ioTimeReader{r: br, conn: conn, l: l}}
	rd := resp.NewReader(cr, s.lim)
	ic := s.internalClient()
	// What the primary sends counts as client memory against maxmemory, as
	// a client's commands do: a command too large for what is left stops
	// the link (logged) instead of being dropped, which would leave the
	// replica apart from its primary.
	rd.Account(ic.growReader, ic.readerFits)
	defer ic.releaseMem()
	ic.excl = true
	ic.master = true
	ic.replaying = l.fromServe
	var block [][][]byte // a MULTI … EXEC block, applied whole
	inMulti := false
	var blockBytes int64
	db := int64(0)
	for {
		if l.changed && rd.Buffered() == 0 && !l.unsaved.Load() {
			// The end of a batch of changes: the replica's position after
			// it, for a restart (stateRecord).
			s.db.mu.Lock()
			s.repl.logState(s)
			s.db.mu.Unlock()
			l.changed = false
		}
		before := cr.n - int64(rd.Buffered())
		args, err := rd.ReadCommand()
		if err == resp.ErrNoMemory {
			return fmt.Errorf("the primary sent a command larger than maxmemory leaves room for (%d bytes, %d in use)", s.maxMem, s.mem.Load())
		}
		if err != nil {
			return err
		}
		n := cr.n - int64(rd.Buffered()) - before
		name := strings.ToLower(string(args[0]))
		switch {
		case name == "multi":
			inMulti, block, blockBytes = true, block[:0], n
			continue
		case name == "exec" && inMulti:
			inMulti = false
			if err := l.applyBlock(ic, block, blockBytes+n); err != nil {
				return err
			}
			block = nil
			continue
		case inMulti:
			cp := make([][]byte, len(args))
			for i, a := range args {
				cp[i] = bytes.Clone(a)
			}
			block = append(block, cp)
			blockBytes += n
			continue
		case name == "select":
			if v, ok := parseInt(args[min(1, len(args)-1)]); ok {
				db = v
			}
			l.advance(args, n)
			continue
		case name == "replconf":
			l.advance(args, n)
			if len(args) >= 2 && eqFold(args[1], "getack") {
				l.sendAck()
			}
			continue
		case name == "ping":
			l.advance(args, n)
			continue
		case name == "publish" && len(args) == 3:
			// Redis propagates PUBLISH (in any database): this server's
			// subscribers get the message, its replicas the command.
			s.publish(args[1], args[2])
			l.advance(args, n)
			continue
		}
		if db != int64(s.cfg.LoadRDBDB) {
			l.skip(fmt.Sprintf("a command of database %d", db))
			l.advance(args, n)
			continue
		}
		if err := l.applyBlock(ic, [][][]byte{args}, n); err != nil {
			return err
		}
	}
}

// advance counts n bytes of the stream as applied and passes them on to
// this server's own replicas, as the command's RESP encoding.
func (l *replicaLink) advance(args [][]byte, n int64) {
	r := &l.s.repl
	r.mu.Lock()
	before := r.offset.Load()
	r.appendCommandLocked(args)
	// The offset counts the primary's bytes, whatever their encoding (an
	// inline command).
	r.offset.Add(n - (r.offset.Load() - before))
	r.trimLocked()
	r.mu.Unlock()
	r.cond.Broadcast()
}

func (l *replicaLink) skip(what string) {
	l.mu.Lock()
	if l.skipped == nil {
		l.skipped = map[string]int64{}
	}
	l.skipped[what]++
	l.mu.Unlock()
}

// applyBlock runs commands of the primary's stream (one, or a MULTI/EXEC
// block's) with the keyspace held exclusively, logged as one unit, and
// counts their n bytes.
func (l *replicaLink) applyBlock(ic *client, cmds [][][]byte, n int64) error {
	s := l.s
	s.db.mu.Lock()
	s.loading = true // nothing expires by this server's clock: the primary's DELs say when
	unit := len(cmds) > 1 && s.aof != nil
	if unit {
		ic.inTx, ic.tx = true, ic.tx[:0]
	}
	var refuse error
	for _, args := range cmds {
		cmd := lookupCommand(args[0], &ic.lower)
		if cmd != nil && cmd.name == "publish" && len(args) == 3 {
			s.publish(args[1], args[2]) // for this server's subscribers
			continue
		}
		if cmd != nil && cmd.flags&fWrite == 0 {
			// A command that changes nothing here (Redis propagates a few).
			l.skip("command " + cmd.name)
			continue
		}
		if cmd == nil {
			what := "command " + strings.ToLower(string(args[0]))
			if !s.cfg.ReplicaSkipUnsupported {
				refuse = fmt.Errorf("the primary sent %s, which this server does not have (-replica-skip-unsupported skips and counts such commands): %w", what, errStopReplicating)
				break
			}
			l.skip(what)
			continue
		}
		if !cmd.arityOK(len(args)) && !ic.replaying {
			l.skip("command " + cmd.name + " (wrong arity)")
			continue
		}
		ic.lastErr = ""
		ic.call(cmd, args)
		if ic.lastErr != "" {
			s.logf("bloomlab: replication: the primary's %s failed here: %s", cmd.name, ic.lastErr)
		}
		l.applied.Add(1)
	}
	if unit {
		ic.inTx = false
		if len(ic.tx) > 0 {
			recs := append(append([][]byte{multiRecord}, ic.tx...), execRecord)
			s.aof.appendRaw(recs...)
		}
		clear(ic.tx)
		ic.tx = ic.tx[:0]
	}
	if refuse != nil {
		s.loading = false
		s.db.mu.Unlock()
		l.stopped.Store(true)
		return refuse
	}
	// The stream moves on with the keyspace still held: a snapshot sees
	// the data and the offset together (its generation's state record).
	r := &s.repl
	r.mu.Lock()
	before := r.offset.Load()
	if len(cmds) > 1 {
		r.appendLocked(appendCommand(nil, [][]byte{[]byte("MULTI")}))
	}
	for _, args := range cmds {
		r.appendCommandLocked(args)
	}
	if len(cmds) > 1 {
		r.appendLocked(appendCommand(nil, [][]byte{[]byte("EXEC")}))
	}
	// The offset counts the primary's bytes, whatever their encoding.
	r.offset.Add(n - (r.offset.Load() - before))
	r.trimLocked()
	r.mu.Unlock()
	l.changed = true
	s.loading = false
	s.db.mu.Unlock()
	r.cond.Broadcast()
	return nil
}
