package server

import (
	"bytes"
	"fmt"

	"crypto/rand"
	"encoding/hex"
	"github.com/bloomlab/bloomlab/rdb"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Replication, the primary's side (Redis's protocol of 7.0 to 8.x, as its
// src/replication.c): the stream a primary sends its replicas is what the
// log records, each record a command in Redis's form (a RESP array of
// bulk strings; a MULTI/EXEC block kept whole; SELECT 0 first after a
// full sync), so that a serve replica applying it as a replay does ends
// with every key as the primary has it, bit for bit.
//
// The stream is kept in blocks (Redis 7's shared replication buffer): the
// last BacklogSize bytes are kept for partial resynchronisations (the
// backlog), and the blocks a replica has not been sent yet are kept for
// it, up to its output limit. Offsets are Redis's: master_repl_offset
// counts the bytes fed since the replication ID began; PSYNC asks for the
// byte after the replica's offset.

// replBlockSize is the size of the stream's blocks (a larger record takes
// a block of its own size).
const replBlockSize = 64 << 10

// Redis's defaults: repl-backlog-size 1mb, client-output-buffer-limit
// replica 256mb 64mb 60, repl-ping-replica-period 10, repl-timeout 60.
const (
	defaultBacklogSize = 1 << 20
	replicaHardLimit   = 256 << 20
	replicaSoftLimit   = 64 << 20
	replicaSoftSeconds = 60
	replPingPeriod     = 10 * time.Second
	replTimeout        = 60 * time.Second
)

type replBlock struct {
	start int64 // the stream offset (0-based) of b[0]
	b     []byte
}

// replication is the primary side's state, in Server.repl.
type replication struct {
	mu   sync.Mutex
	cond sync.Cond // signalled when the stream grows or a replica must look up

	// active is whether a backlog exists: until the first replica
	// attaches nothing is fed (Redis creates its backlog then).
	active atomic.Bool
	id     string // master_replid
	id2    string // master_replid2 ("0000…" when none)
	off2   int64  // second_repl_offset (-1 when none)
	// offset is master_repl_offset: the stream's bytes so far (its end,
	// 0-based); head the offset of the first byte still kept.
	offset  atomic.Int64
	head    int64
	blocks  []*replBlock
	size    int64 // the backlog's size (repl-backlog-size)
	selectd bool  // SELECT 0 was fed since the last full sync started

	replicas map[*replica]struct{}
	lastPing time.Time
	// refusals counts the replicas refused a full sync, refused the last
	// reason (INFO's bloomlab_replicas_refused, bloomlab_last_refusal).
	refusals atomic.Int64
	refused  atomic.Pointer[string]
	// fullSyncs, partialOK and partialErr are INFO stats' sync_full,
	// sync_partial_ok and sync_partial_err.
	fullSyncs, partialOK, partialErr atomic.Int64

	// loading: a replica is loading a full sync (clients are answered
	// LOADING; INFO persistence's loading:1).
	loading atomic.Bool
	// resume: the replayed log ended at a replica's position (id and
	// offset are its), so a restarted replica asks PSYNC from there.
	resume bool
	// link is the replica side's connection to its primary (replica.go);
	// nil on a primary.
	link atomic.Pointer[replicaLink]
}

// stateRecord is the log record of a replica's position in its primary's
// stream: REPLCONF bloomlab-state ID OFFSET. A replica logs it after each
// batch of the stream it applied (under the keyspace's exclusive lock,
// with the batch) and at the head of each log generation; a restart that
// replays it as the last record resumes with PSYNC ID OFFSET+1, and one
// that replays a change after it (a kill between a batch and its record)
// asks for a full sync: the position is not known.
func stateRecord(id string, off int64) [][]byte {
	return [][]byte{[]byte("REPLCONF"), []byte("bloomlab-state"), []byte(id), strconv.AppendInt(nil, off, 10)}
}

// replayState applies a state record met in the log (reporting whether
// args is one).
func (r *replication) replayState(args [][]byte) bool {
	if len(args) != 4 || !eqFold(args[0], "replconf") || !eqFold(args[1], "bloomlab-state") {
		return false
	}
	off, ok := parseInt(args[3])
	if ok && len(args[2]) == 40 && off >= 0 {
		r.mu.Lock()
		r.id, r.id2, r.off2 = string(args[2]), noReplID, -1
		r.offset.Store(off)
		r.head, r.blocks = off, nil
		r.mu.Unlock()
		r.resume = true
	}
	return true
}

// logState logs a replica's position (stateRecord); the caller holds the
// keyspace exclusively.
func (r *replication) logState(s *Server) {
	if r.link.Load() == nil || s.aof == nil {
		return
	}
	r.mu.Lock()
	rec := stateRecord(r.id, r.offset.Load())
	r.mu.Unlock()
	s.aof.appendRecord(rec)
}

// replicaLink returns the link to the primary, nil on a primary.
func (r *replication) replicaLink() *replicaLink { return r.link.Load() }

func newReplID() string {
	var b [20]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

const noReplID = "0000000000000000000000000000000000000000"

func (r *replication) init(backlog int64) {
	r.cond.L = &r.mu
	r.id, r.id2, r.off2 = newReplID(), noReplID, -1
	r.size = backlog
	if r.size <= 0 {
		r.size = defaultBacklogSize
	}
	r.replicas = map[*replica]struct{}{}
}

// feeding reports whether changes are fed to the stream.
func (r *replication) feeding() bool { return r.active.Load() }

// feed appends commands to the stream, as one unit. The caller holds
// the lock that ordered the changes (the key's, or the keyspace's).
func (r *replication) feed(cmds ...[][]byte) {
	if !r.active.Load() || r.link.Load() != nil {
		return
	}
	r.mu.Lock()
	if !r.selectd {
		r.selectd = true
		r.appendLocked(appendCommand(nil, [][]byte{[]byte("SELECT"), []byte("0")}))
	}
	for _, args := range cmds {
		r.appendCommandLocked(streamForm(args))
	}
	r.trimLocked()
	r.mu.Unlock()
	r.cond.Broadcast()
}

// feedRecords feeds log records (appendRecord's encoding) as commands.
func (r *replication) feedRecords(recs ...[]byte) {
	if !r.active.Load() || r.link.Load() != nil {
		return
	}
	cmds := make([][][]byte, 0, len(recs))
	for _, rec := range recs {
		args, err := parseRecord(rec[8:])
		if err != nil {
			continue // cannot happen: the records were encoded here
		}
		cmds = append(cmds, args)
	}
	r.feed(cmds...)
}

// streamForm is a log record as the stream carries it: Redis's own form
// where the log's differs only to tell replay what a Redis command means
// (CMS.INITBYDIM … PROFILE redisbloom is RedisBloom's CMS.INITBYDIM,
// which a replica applying the stream reads as RedisBloom's).
func streamForm(args [][]byte) [][]byte {
	if len(args) == 6 && eqFold(args[0], "cms.initbydim") && eqFold(args[4], "PROFILE") && eqFold(args[5], "redisbloom") {
		return args[:4]
	}
	return args
}

// appendCommand appends args as a RESP array of bulk strings.
func appendCommand(b []byte, args [][]byte) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, '\r', '\n')
	for _, a := range args {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, '\r', '\n')
		b = append(b, a...)
		b = append(b, '\r', '\n')
	}
	return b
}

func commandLen(args [][]byte) int {
	n := 1 + decimalLen(len(args)) + 2
	for _, a := range args {
		n += 1 + decimalLen(len(a)) + 2 + len(a) + 2
	}
	return n
}

// decimalLen is the number of decimal digits of n ≥ 0.
func decimalLen(n int) int {
	d := 1
	for n >= 10 {
		n /= 10
		d++
	}
	return d
}

// appendCommandLocked encodes args into the stream's last block (a new
// one if it has no room).
func (r *replication) appendCommandLocked(args [][]byte) {
	n := commandLen(args)
	b := r.tailLocked(n)
	b.b = appendCommand(b.b, args)
	r.offset.Add(int64(n))
}

func (r *replication) appendLocked(p []byte) {
	b := r.tailLocked(len(p))
	b.b = append(b.b, p...)
	r.offset.Add(int64(len(p)))
}

// tailLocked returns a block with room for n more bytes at the stream's
// end. A block is never appended to beyond its capacity: a sender reading
// its first bytes reads memory no writer changes.
func (r *replication) tailLocked(n int) *replBlock {
	if k := len(r.blocks); k > 0 {
		if t := r.blocks[k-1]; cap(t.b)-len(t.b) >= n {
			return t
		}
	}
	t := &replBlock{start: r.offset.Load(), b: make([]byte, 0, max(n, replBlockSize))}
	r.blocks = append(r.blocks, t)
	return t
}

// trimLocked drops the blocks that neither the backlog nor a replica
// needs any more.
func (r *replication) trimLocked() {
	keep := r.offset.Load() - r.size // the backlog's first byte
	for rep := range r.replicas {
		if rep.online && rep.sent < keep {
			keep = rep.sent
		}
		if !rep.online && rep.from >= 0 && rep.from < keep {
			keep = rep.from // a full sync's stream, kept from its snapshot
		}
	}
	i := 0
	for i < len(r.blocks)-1 && r.blocks[i+1].start <= keep {
		i++
	}
	if i > 0 {
		clear(r.blocks[:i])
		r.blocks = r.blocks[i:]
	}
	if len(r.blocks) > 0 {
		r.head = max(r.blocks[0].start, r.offset.Load()-r.size)
	} else {
		r.head = r.offset.Load()
	}
}

// readLocked returns the stream's bytes from off (at most max), as
// slices of the blocks (which the caller only reads).
func (r *replication) readLocked(off int64, max int, dst [][]byte) [][]byte {
	for _, b := range r.blocks {
		end := b.start + int64(len(b.b))
		if end <= off {
			continue
		}
		from := int(off - b.start)
		p := b.b[from:]
		if len(p) > max {
			p = p[:max]
		}
		dst = append(dst, p)
		max -= len(p)
		off += int64(len(p))
		if max <= 0 {
			break
		}
	}
	return dst
}

// activate creates the backlog if there is none: a new replication ID
// (Redis: the history before it cannot be served), fed from now on.
func (r *replication) activate() {
	if r.active.Load() {
		return
	}
	r.mu.Lock()
	if !r.active.Load() && r.link.Load() == nil {
		r.id, r.id2, r.off2 = newReplID(), noReplID, -1
	}
	r.head = r.offset.Load()
	r.blocks = nil
	r.selectd = false
	r.active.Store(true)
	r.mu.Unlock()
}

// shiftID is Redis's shiftReplicationId: a replica promoted keeps its
// former primary's ID as the secondary one, valid up to its offset, so that
// its former siblings resynchronise partially.
func (r *replication) shiftIDLocked() {
	r.id2 = r.id
	r.off2 = r.offset.Load() + 1
	r.id = newReplID()
}

// canContinue reports whether PSYNC id off can continue from the backlog
// and, if so, whether the replica must be told the new ID.
func (r *replication) canContinueLocked(id string, psyncOff int64) (ok, newID bool) {
	if !r.active.Load() {
		return false, false
	}
	switch {
	case id == r.id:
	case id == r.id2 && psyncOff <= r.off2:
		newID = true
	default:
		return false, false
	}
	cur := psyncOff - 1
	if cur < r.head || cur > r.offset.Load() {
		return false, false
	}
	return true, newID
}

// replCron is the replication's part of the server's 100 ms tick
// (Redis's replicationCron): a PING in the stream every
// repl-ping-replica-period while replicas are attached, replicas that
// acknowledged nothing for repl-timeout or stayed over the soft output
// limit for its seconds disconnected, and waiters woken.
func (s *Server) replCron() {
	r := &s.repl
	if !r.active.Load() {
		return
	}
	now := time.Now()
	r.mu.Lock()
	n := len(r.replicas)
	ping := n > 0 && r.link.Load() == nil && now.Sub(r.lastPing) >= replPingPeriod
	if ping {
		r.lastPing = now
	}
	var drop []*replica
	for rep := range r.replicas {
		if !rep.online {
			// The stream kept for a full sync in progress counts against
			// the replica's hard limit too (Redis's output buffer holds it
			// during the sync): a sync too slow for the write rate ends.
			if rep.from >= 0 && r.offset.Load()-rep.from > replicaHardLimit {
				drop = append(drop, rep)
			}
			continue
		}
		if at := rep.ackAt.Load(); at > 0 && now.UnixMilli()-at > replTimeout.Milliseconds() {
			drop = append(drop, rep)
			continue
		}
		if r.offset.Load()-rep.sent > replicaSoftLimit {
			if rep.softSince.IsZero() {
				rep.softSince = now
			} else if now.Sub(rep.softSince) > replicaSoftSeconds*time.Second {
				drop = append(drop, rep)
			}
		} else {
			rep.softSince = time.Time{}
		}
	}
	for _, rep := range drop {
		rep.closed = true
	}
	r.mu.Unlock()
	for _, rep := range drop {
		s.logf("bloomlab: replica %s:%d: disconnected (no ACK for %s, or over its output limit)", rep.conf.ip, rep.conf.port, replTimeout)
		rep.c.conn.Close()
	}
	if ping {
		r.feed([][]byte{[]byte("PING")})
	}
	r.cond.Broadcast()
}

// carrierModule is the module type that carries a value Redis cannot
// load (a bloomlab kind, a blocked-layout BF, a LOADCHUNK in progress)
// in a full sync to a serve replica, which says REPLCONF capa bloomlab:
// its snapshot tag (unsigned) and snapshot encoding (a string). Redis
// would refuse the whole payload for it, so a replica that does not say
// capa bloomlab is refused instead (freezeForSync).
const carrierModule = "bloomlab-"

var carrierCodec = &rdbCodec{
	module: carrierModule,
	encver: 1,
	read: func(m *rdb.ModuleValue, alloc func(int64) error) (value, error) {
		tag, err := m.ReadUnsigned()
		if err != nil {
			return nil, err
		}
		vt := valueTypes[byte(tag)]
		if tag > 255 || vt == nil {
			return nil, fmt.Errorf("a carried value of unknown type %d", tag)
		}
		payload, err := m.ReadString()
		if err != nil {
			return nil, err
		}
		if err := alloc(int64(len(payload))); err != nil {
			return nil, err
		}
		return vt.decode(bytes.NewReader(payload), int64(len(payload)))
	},
	write: func(v value, m *rdb.ModuleWriter) error {
		var b bytes.Buffer
		if err := v.encode(&b); err != nil {
			return err
		}
		m.Unsigned(uint64(v.typ().tag))
		m.String(b.Bytes())
		return nil
	},
}

// writeCarried writes v with the carrier (carrierModule).
func writeCarried(v value, w rdbSink) error {
	m, err := w.module(carrierModule, carrierCodec.encver)
	if err != nil {
		return err
	}
	if err := carrierCodec.write(v, m); err != nil {
		return err
	}
	return m.End()
}

// goodReplicas counts the replicas online that acknowledged within lag
// (default 10 s; Redis's repl_good_slaves_count).
func (r *replication) goodReplicas(lag time.Duration) int {
	if lag <= 0 {
		lag = 10 * time.Second
	}
	if !r.active.Load() {
		return 0
	}
	now := time.Now().UnixMilli()
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for rep := range r.replicas {
		if rep.online && now-rep.ackAt.Load() <= lag.Milliseconds() {
			n++
		}
	}
	return n
}

// plainReplicas counts the attached replicas that are not serve (they did
// not say capa bloomlab): while one is, a write that would make a value
// Redis cannot load is refused (refuseUnloadable).
func (r *replication) plainReplicas() int {
	if !r.active.Load() {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for rep := range r.replicas {
		if !rep.conf.capaBloomlab {
			n++
		}
	}
	return n
}

// refuseUnloadable is the error of a write that would make a value of
// what (a blocked-layout BF…) while a replica that cannot load it is
// attached, "" when there is none.
func (c *client) refuseUnloadable(what string) string {
	if c.master || c.replaying {
		return ""
	}
	if n := c.s.repl.plainReplicas(); n > 0 {
		return fmt.Sprintf("ERR a replica that is not bloomlab serve is attached (%d): it cannot load a %s; nothing was changed", n, what)
	}
	return ""
}
