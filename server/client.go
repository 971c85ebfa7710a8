package server

import (
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/server/internal/resp"
)

// client is one connection (or the internal client that replays the log
// and expires keys).
type client struct {
	s    *Server
	d    *dialect // the server's dialect (s.d)
	conn net.Conn // nil for the internal client
	r    *resp.Reader
	w    *resp.Writer
	id   int64

	name, libName, libVer string
	authed                bool
	created               time.Time

	excl      bool // db.mu is held exclusively (MULTI/EXEC, replay)
	replaying bool // executing log records: nothing is logged again (unless master)
	// master: the client applies the primary's stream on a replica (its
	// changes are logged here, and not fed to this server's own stream,
	// which takes the primary's bytes as they are); rconf and rep are a
	// replica's connection to this primary (REPLCONF, PSYNC); replSeen
	// the stream's end after its last command (WAIT waits for it).
	master   bool
	rconf    *replConf
	rep      *replica
	replSeen int64
	// afterExec are changes a command inside EXEC left for after the
	// block, which release the keyspace first (REPLICAOF).
	afterExec []func()

	multi    bool
	multiErr bool
	queue    [][][]byte
	queueLen int64 // bytes queued, bounded by MaxCommand
	watched  []string
	dirty    atomic.Bool

	// The log: logPos is the end of this client's last record; seen the
	// log's end after the client's last command that used the keyspace
	// (every change its replies observed lies before it); durable the
	// position known written (or synced, with Always) before which
	// replies may be sent.
	logPos  int64
	seen    int64
	durable int64
	inTx    bool     // inside EXEC: records are gathered in tx
	tx      [][]byte // encoded records of the EXEC block
	lastErr string   // the last top-level error reply (replay checks it)

	running  *command                      // the command running (for contain)
	shared   bool                          // db.mu is held shared for running
	stage    uint8                         // what the goroutine does (stageIO, …), for contain
	mark     int                           // where the reply of the command running begins in the output
	res      []int8                        // scratch: an insert's outcomes
	digests  [prefetchGroup]hashing.Digest // scratch: a group of items' hashes (hashGroup)
	out      replyBuf                      // replies not yet sent: sent between commands, never while a lock is held
	held     int64                         // bytes of out and queue accounted as client memory (account)
	memTotal int64                         // the connection's client memory: the reader's, out's and queue's (clientmem.go)
	quit     bool
	ps       *psState // pub/sub: subscriptions and queued messages (cmd_pubsub.go), from the first subscription
	dlMu     sync.Mutex
	stopping bool
	lower    [32]byte  // the command name in lower case
	writeBy  time.Time // the connection's write deadline (flush)

	// The last command looked up, by the name as the client sent it: a
	// client sends the same command again and again.
	lastName []byte
	lastCmd  *command
}

func newClient(s *Server, conn net.Conn) *client {
	c := &client{s: s, d: s.d, conn: conn, id: s.nextID.Add(1), created: time.Now()}
	c.r = resp.NewReader(conn, s.lim)
	c.r.Account(c.growReader, c.readerFits)
	c.clientMem(connFixed, false)
	c.out.give = s.putChunk
	c.w = resp.NewWriter(&c.out)
	c.w.Shortest = s.d.shortestDoubles
	c.authed = s.cfg.Password == ""
	return c
}

// internalClient runs commands on behalf of the server (log replay,
// expiry); its replies are discarded.
func (s *Server) internalClient() *client {
	c := &client{s: s, d: s.d, id: 0, authed: true, excl: true, created: time.Now()}
	c.w = resp.NewWriter(io.Discard)
	return c
}

// replyBuf holds a connection's replies until they are sent. Commands
// write into it while they hold locks; it is sent to the network only
// between commands, so that a client that does not read its replies
// never holds a lock (a 16 MiB BF.SCANDUMP chunk waits here, not in a
// handler). One large bulk string at a time may be held by reference
// (Hold: a SCANDUMP chunk, built in a buffer of the server's pool, is
// sent from there and the buffer returned, instead of copied into b and
// b dropped once sent, which left a chunk of garbage per chunk).
type replyBuf struct {
	b      []byte
	held   []byte // logically at heldAt in b
	heldAt int
	give   func([]byte) // returns held once sent or dropped
}

func (r *replyBuf) Write(p []byte) (int, error) {
	r.b = append(r.b, p...)
	return len(p), nil
}

// Hold keeps p, to be sent after what b holds now (resp.Holder).
func (r *replyBuf) Hold(p []byte) bool {
	if r.held != nil {
		return false
	}
	r.held, r.heldAt = p, len(r.b)
	return true
}

// len is the replies' length, the held bytes included.
func (r *replyBuf) len() int { return len(r.b) + len(r.held) }

// size is the memory the replies hold.
func (r *replyBuf) size() int64 { return int64(cap(r.b) + cap(r.held)) }

// truncate drops the replies after the first n bytes.
func (r *replyBuf) truncate(n int) {
	switch {
	case r.held == nil:
		r.b = r.b[:n]
	case n <= r.heldAt:
		r.b = r.b[:n]
		r.release()
	case n < r.heldAt+len(r.held):
		r.b = r.b[:r.heldAt]
		r.held = r.held[:n-r.heldAt]
	default:
		r.b = r.b[:n-len(r.held)]
	}
}

func (r *replyBuf) release() {
	if r.held != nil && r.give != nil {
		r.give(r.held)
	}
	r.held = nil
}

// writeTo sends the replies and empties r (keeping b's buffer only if it
// is small: clientmem.go).
func (r *replyBuf) writeTo(conn net.Conn) error {
	var err error
	if r.held == nil {
		_, err = conn.Write(r.b)
	} else {
		bufs := net.Buffers{r.b[:r.heldAt], r.held, r.b[r.heldAt:]}
		_, err = bufs.WriteTo(conn)
		r.release()
	}
	if cap(r.b) > keepReplies {
		r.b = nil // a large reply's buffer is not kept (clientmem.go)
	} else {
		r.b = r.b[:0]
	}
	return err
}

// pendingReplies is the size of the replies not yet sent.
func (c *client) pendingReplies() int { return c.out.len() + c.w.Buffered() }

// flush sends the replies. It first waits until the log is written (and,
// with Always, synced) up to the end it had after the client's commands
// ran: nothing is acknowledged before it is durable, and neither is
// anything a reply observed. The client's own records are not enough: a
// BF.ADD answered 0 because another client's add, not yet synced, had set
// its bits changes nothing and logs nothing, and a crash before that sync
// would leave the key it acknowledged absent. Every write logs itself
// before it releases the lock that ordered it, so every change a reply
// observed lies before the end read after the command (c.seen). This is
// Redis's rule too (replies go out after the log write of the event
// loop's iteration). A log failure that loses a record closes, without
// the replies, the connection of every client whose replies may have
// observed it (its own write or another's): an answer from a state that
// a crash takes back is no answer (commands that use the keyspace are
// refused from then on, see call).
func (c *client) flush() error {
	err := c.flushOut()
	if c.ps != nil && err == nil {
		c.idle() // the pusher may write queued messages now
	}
	return err
}

func (c *client) flushOut() error {
	if err := c.w.Flush(); err != nil {
		return err
	}
	if c.rep != nil {
		// A replica's connection is its sender's (feedReplica): what it
		// sends us (ACKs) is not answered.
		c.out.truncate(0)
		return nil
	}
	if c.out.len() == 0 {
		return nil
	}
	// Let the other connections whose commands have arrived run them
	// first, as Redis's event loop runs every ready client's commands
	// before it writes: the first of us to come back writes the log once
	// for all their records, and the replies go out together, while the
	// clients are still awake to read them (a reply that wakes a sleeping
	// client costs the sender more than the write). One yield per batch of
	// commands; with nothing else to run it returns at once.
	runtime.Gosched()
	// The client's own records (c.logPos: an EXEC block is logged after
	// its commands' observations) and what its replies observed.
	if pos := max(c.logPos, c.seen); pos > c.durable {
		if err := c.s.aof.wait(pos); err != nil {
			return err // a reply may rest on a write the log lost: no reply
		}
		c.durable = pos
	}
	// The deadline moves only when half of WriteTimeout has passed since
	// it was set (a timer change per batch costs more than the batch's
	// parsing): a write that stalls fails after WriteTimeout/2 to
	// WriteTimeout. A subscriber's pusher writes too: every write, and
	// the deadline, under its lock.
	if c.ps != nil {
		c.ps.wmu.Lock()
		defer c.ps.wmu.Unlock()
	}
	if now := time.Now(); c.writeBy.Sub(now) < c.s.cfg.WriteTimeout/2 {
		c.writeBy = now.Add(c.s.cfg.WriteTimeout)
		c.conn.SetWriteDeadline(c.writeBy)
	}
	err := c.out.writeTo(c.conn)
	c.account()
	return err
}

func (s *Server) accept(conn net.Conn) {
	s.totalConns.Add(1)
	s.mu.Lock()
	if s.closing.Load() {
		s.mu.Unlock()
		conn.Close()
		return
	}
	if len(s.clients) >= s.cfg.MaxClients {
		s.mu.Unlock()
		s.rejectedConns.Add(1)
		conn.SetWriteDeadline(time.Now().Add(time.Second))
		conn.Write([]byte("-ERR max number of clients reached\r\n"))
		conn.Close()
		return
	}
	c := newClient(s, conn)
	s.clients[c] = struct{}{}
	s.conns.Add(1)
	s.mu.Unlock()
	go c.serve()
}

// stop asks the connection to finish the commands it has received and
// close (graceful shutdown).
func (c *client) stop() {
	c.dlMu.Lock()
	c.stopping = true
	c.conn.SetReadDeadline(time.Now())
	c.dlMu.Unlock()
}

// serve reads commands and runs them; replies are flushed once per batch
// (when no further command is already received).
func (c *client) serve() {
	s := c.s
	defer func() {
		s.unwatchAll(c)
		c.unsubscribeAll()
		c.releaseMem()
		s.mu.Lock()
		delete(s.clients, c)
		s.mu.Unlock()
		c.conn.Close()
		c.closePubsub() // after the close: a pusher's write in progress fails
		s.conns.Done()
	}()
	defer c.contain() // after the cleanup above: a contained panic's reply goes out first
	idle := s.cfg.IdleTimeout
	for {
		if c.r.Buffered() == 0 || c.pendingReplies() > 64<<10 {
			if c.flush() != nil {
				return
			}
		}
		if c.r.Buffered() == 0 {
			c.dlMu.Lock()
			if c.stopping {
				c.dlMu.Unlock()
				return
			}
			switch {
			case idle > 0 && c.subscribed():
				// Redis's timeout spares subscribers, which only listen.
				c.conn.SetReadDeadline(time.Time{})
			case idle > 0:
				c.conn.SetReadDeadline(time.Now().Add(idle))
			}
			c.dlMu.Unlock()
		}
		// Redis's limits before AUTH (a bulk of 16 KiB, 10 arguments).
		c.r.Unauthenticated = !c.authed
		c.stage = stageRead
		args, err := c.r.ReadCommand()
		c.stage = stageIO
		if err == resp.ErrNoMemory {
			// Read to its end and dropped: too large for the memory left.
			c.flagTx()
			c.err(errOOM)
			continue
		}
		if err != nil {
			var pe *resp.ProtocolError
			if errors.As(err, &pe) {
				c.w.Error("ERR " + pe.Error())
			}
			c.flush()
			return
		}
		if c.ps != nil {
			c.beginCommand() // the messages queued until now go before its reply
		}
		c.stage, c.mark = stageExec, c.pendingReplies()
		c.exec(args)
		c.stage = stageIO
		c.r.Release() // a large command's buffer goes before its reply
		c.account()
		if c.quit {
			c.flush()
			return
		}
	}
}

// What a connection's goroutine is doing, for contain.
const (
	stageIO   uint8 = iota // sending replies, setting deadlines (the log's locks may be held)
	stageRead              // reading a command (client-local state only)
	stageExec              // running a command (exec)
)

// exec runs one command as Redis does: lookup, authentication, arity (a
// container's subcommand and its arity too), queueing inside MULTI (or
// refusal, for the commands Redis flags no_multi), then the command.
func (c *client) exec(args [][]byte) {
	c.s.totalCommands.Add(1)
	cmd := c.lastCmd
	if cmd == nil || string(args[0]) != string(c.lastName) {
		cmd = lookupCommand(args[0], &c.lower)
		if cmd != nil {
			c.lastName, c.lastCmd = append(c.lastName[:0], args[0]...), cmd
		}
	}
	if cmd == nil {
		c.flagTx()
		c.err(unknownCommand(args))
		return
	}
	if !c.authed && cmd.flags&fNoAuth == 0 {
		c.flagTx()
		c.err("NOAUTH Authentication required.")
		return
	}
	if !cmd.arityOK(len(args)) {
		if c.multi && cmd.name == "exec" {
			// Redis's execCommandAbort: a refused EXEC ends the
			// transaction, saying why.
			c.endTx()
			c.err("EXECABORT Transaction discarded because of: " + strings.TrimPrefix(wrongArity(cmd.name), "ERR "))
			return
		}
		c.flagTx()
		c.err(wrongArity(cmd.name))
		return
	}
	if cmd.subs != nil && len(args) > 1 {
		if msg := cmd.checkSub(args); msg != "" {
			c.flagTx()
			c.err(msg)
			return
		}
	}
	if cmd.flags&fWrite != 0 && c.conn != nil && !c.master && c.s.repl.replicaLink() != nil {
		c.flagTx()
		c.err("READONLY You can't write against a read only replica.")
		return
	}
	if c.ps != nil && c.subscribedResp2() && !pubsubAllowed(cmd) {
		c.flagTx()
		c.err(pubsubRefusal(cmd, args))
		return
	}
	if c.multi && cmd.flags&fNoQueue == 0 {
		if cmd.flags&fNoMulti != 0 {
			c.flagTx()
			c.err("ERR Command not allowed inside a transaction")
			return
		}
		c.enqueue(args)
		return
	}
	c.call(cmd, args)
}

func (c *client) flagTx() {
	if c.multi {
		c.multiErr = true
	}
}

func (c *client) enqueue(args [][]byte) {
	n := int64(len(args)+1) * sizeofSlice // the copies' slice headers
	for _, a := range args {
		n += int64(len(a))
	}
	if c.queueLen+n > c.s.lim.MaxCommand && c.s.lim.MaxCommand > 0 || len(c.queue) >= 1<<20 {
		c.multiErr = true
		c.err("ERR transaction too large")
		return
	}
	// The copy is client memory, which must fit under MaxMemory.
	if !c.clientMem(n, true) {
		c.multiErr = true
		c.err(errOOM)
		return
	}
	c.held += n
	cp := make([][]byte, len(args))
	for i, a := range args {
		cp[i] = append([]byte(nil), a...)
	}
	c.queue = append(c.queue, cp)
	c.queueLen += n
	c.w.Simple("QUEUED")
}

// call runs cmd with the lock its table entry asks for.
func (c *client) call(cmd *command, args [][]byte) {
	s := c.s
	if cmd.lock != lockNone && s.repl.loading.Load() && c.conn != nil && !c.excl {
		// A replica loading its primary's full sync holds the keyspace:
		// Redis's answer instead of a wait (clients retry it).
		c.err("LOADING Redis is loading the dataset in memory")
		return
	}
	if cmd.lock != lockNone && !c.replaying {
		if err := s.logErr(); err != nil && (cmd.flags&fWrite != 0 || s.aof.lost()) {
			// Writes are refused once the log has failed, as in Redis;
			// reads too if the keyspace holds writes the log lost.
			msg := "MISCONF Errors writing to the AOF file: " + oneLine(err.Error())
			if cmd.flags&fWrite == 0 {
				msg += " (reads are refused too: the keyspace holds writes the log lost; restart the server)"
			}
			c.err(msg)
			return
		}
		defer c.observe()
	}
	if cmd.flags&fWrite != 0 && s.cfg.MinReplicasToWrite > 0 && !c.master && !c.replaying && c.conn != nil && s.repl.goodReplicas(s.cfg.MinReplicasMaxLag) < s.cfg.MinReplicasToWrite {
		c.err("NOREPLICAS Not enough good replicas to write.")
		return
	}
	if cmd.flags&fDenyOOM != 0 && !c.master && s.overLimit() {
		c.err(errOOM)
		return
	}
	if !cmd.argsOK(len(args), c.replaying) {
		c.err(wrongArity(cmd.name))
		return
	}
	prev := c.running
	c.running = cmd
	if c.excl || cmd.lock == lockNone {
		c.run(cmd, args)
		c.running = prev
		return
	}
	if cmd.lock != lockExcl {
		// If cmd panics, the lock is still held (c.shared): contain
		// releases it after a read and keeps it after a write (a
		// snapshot, which must not freeze a half-changed value, waits for
		// the exclusive lock until the server stops).
		s.db.mu.RLock()
		c.shared = true
		again := c.run(cmd, args)
		c.shared = false
		s.db.mu.RUnlock()
		if !again {
			c.running = prev
			return
		}
	}
	// No defer: a command that panics holding the keyspace exclusively
	// keeps it until the server stops (contain), so that nobody reads or
	// snapshots what it half changed.
	s.db.mu.Lock()
	c.excl = true
	c.run(cmd, args)
	c.excl = false
	s.db.mu.Unlock()
	c.running = prev
}

// run runs cmd. The reply of a command that only reads (repliesOnly)
// is client memory that must fit under MaxMemory, like a request: if it
// does not, it is replaced by an OOM error (fitReply).
func (c *client) run(cmd *command, args [][]byte) bool {
	if c.conn == nil || !cmd.repliesOnly(args) {
		return cmd.run(c, args)
	}
	start := c.pendingReplies()
	again := cmd.run(c, args)
	c.fitReply(start)
	return again
}

// repliesOnly reports whether cmd's only effect is its reply (the
// commands Redis flags readonly, and PING, ECHO, INFO, COMMAND, CLIENT
// LIST and CLIENT INFO), which may then be refused for want of memory.
func (cmd *command) repliesOnly(args [][]byte) bool {
	switch {
	case cmd.flags&fReadonly != 0:
		return true
	case cmd.name == "client":
		return len(args) > 1 && (eqFold(args[1], "list") || eqFold(args[1], "info"))
	}
	switch cmd.name {
	case "ping", "echo", "info", "command":
		return true
	}
	return false
}

// replyFits reports whether n more bytes of replies would fit under
// MaxMemory now (a command with a large reply asks before it builds it).
func (c *client) replyFits(n int64) bool { return c.conn == nil || c.readerFits(n) }

// replyGrows is for a command that builds a large reply from a small
// request, part by part (COMMAND DOCS and COMMAND INFO of many names): it
// reports whether the reply written since start still fits under
// MaxMemory; if not, it drops that reply and answers OOM, so that a reply
// that cannot be kept is never built whole.
func (c *client) replyGrows(start int) bool {
	if c.replyFits(int64(c.pendingReplies() - start)) {
		return true
	}
	c.w.Flush()
	c.out.truncate(start)
	c.err(errOOM)
	return false
}

// fitReply checks the reply of a command that only reads, written after
// start: if its bytes (beyond the connection's first clientFree bytes)
// do not fit under MaxMemory, it is dropped and the command answered
// OOM, as a request that does not fit is. Without it, the replies that
// clients do not read (each connection holds one, a 16 MiB BF.SCANDUMP
// chunk or a whole KEYS, until the write times out), or that EXEC
// gathers (40 queued reads of a 2 MiB string: 80 MiB), were counted but
// held whatever the limit. The commands whose reply can be large without
// a large request (GET, KEYS, BF.SCANDUMP, CF.SCANDUMP) ask replyFits
// first and do not build a reply that cannot fit; a dropped reply's
// buffer, still allocated, is accounted until it is sent.
func (c *client) fitReply(start int) {
	if n := int64(c.pendingReplies() - start); n > 0 && !c.readerFits(n) {
		c.w.Flush() // into c.out: a replyBuf does not fail
		c.out.truncate(start)
		c.err(errOOM)
	}
	c.account()
}

// unlockWritten releases a write command's lock on e (taken with
// e.mu.Lock). If the command panicked, e stays locked and the panic goes
// on: no reader may see the half-changed value before the server stops.
func unlockWritten(e *entry) {
	if r := recover(); r != nil {
		panic(r)
	}
	e.mu.Unlock()
}

// readsOnly reports whether a panic in cmd can be contained: cmd changes
// nothing shared, neither keys (write commands, EXEC) nor persistence
// (SAVE, BGSAVE, BGREWRITEAOF, SHUTDOWN, CONFIG are admin).
func (cmd *command) readsOnly() bool {
	return cmd.flags&(fWrite|fAdmin) == 0 && cmd.name != "exec"
}

// contain recovers a panic in a connection's goroutine (deferred by
// serve: one defer per connection, none per command). A panic while
// reading a command, or in a command that only reads outside MULTI/EXEC
// (or in exec's own checks and queueing), is contained: the locks it held
// were released as it unwound (every lock a reader takes is released by a
// defer; contain releases the keyspace's shared lock, see call), the
// stack is logged, the client gets the replies to the commands before it,
// then "ERR internal error" in place of the half-written reply, and its
// connection is closed; the server goes on serving the others. Any other
// command, or a read while the keyspace is held exclusively (inside
// EXEC), may have left a value or the keyspace half changed, and a panic
// while sending replies may hold the log's locks: the server stops as a
// crash would (the stack logged, exit status 2, no snapshot). The locks held stay held meanwhile, so no other client
// reads the change. The log holds every acknowledged write (the panicking
// command was acknowledged to nobody).
func (c *client) contain() {
	r := recover()
	if r == nil {
		return
	}
	s := c.s
	cmd := c.running
	what := "reading a command"
	switch {
	case cmd != nil:
		what = strings.ToUpper(cmd.name)
	case c.stage == stageExec:
		what = "dispatching a command"
	case c.stage == stageIO:
		what = "sending replies"
	}
	stack := debug.Stack()
	if c.stage == stageIO || c.excl || c.inTx || cmd != nil && !cmd.readsOnly() {
		s.fatalPanic(fmt.Sprintf("bloomlab: panic in %s (client %d): %v\n%s\nbloomlab: the keyspace may hold a half-applied change: stopping without a snapshot (the log holds every acknowledged write)", what, c.id, r, stack))
		return
	}
	if c.shared {
		c.shared = false
		s.db.mu.RUnlock()
	}
	s.reportPanic(fmt.Sprintf("bloomlab: panic in %s (client %d), which only reads: closing this connection, serving the others: %v\n%s", what, c.id, r, stack))
	c.running = nil
	if c.stage == stageExec {
		c.w.Flush() // the replies before mark, and the partial one after, into c.out
		if c.out.len() > c.mark {
			c.out.truncate(c.mark)
		}
	}
	c.err("ERR internal error")
	c.stage = stageIO
	c.flush()
}

// observe notes the log's end after a command that used the keyspace:
// the client's replies wait until the log is durable up to it (flush).
func (c *client) observe() {
	if e := c.s.aof.appendedEnd(); e > c.seen {
		c.seen = e
	}
	c.replSeen = c.s.repl.offset.Load()
}

// err writes a top-level error reply.
func (c *client) err(msg string) {
	msg = oneLine(msg) // an argument quoted in the text must not break the protocol
	c.lastErr = msg
	c.w.Error(msg)
}

const errOOM = "OOM command not allowed when used memory > 'maxmemory'."

// unknownCommand is Redis's text for a command it does not have.
func unknownCommand(args [][]byte) string {
	var b strings.Builder
	for _, a := range args[1:] {
		if b.Len() >= 128 {
			break
		}
		room := 128 - b.Len()
		if len(a) > room {
			a = a[:room]
		}
		b.WriteString("'")
		b.Write(a)
		b.WriteString("' ")
	}
	name := args[0]
	if len(name) > 128 {
		name = name[:128]
	}
	return oneLine("ERR unknown command '" + string(name) + "', with args beginning with: " + b.String())
}

func wrongArity(name string) string {
	return "ERR wrong number of arguments for '" + name + "' command"
}

// oneLine replaces CR and LF (which would break the protocol) with spaces,
// as Redis does in error replies.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' {
			return ' '
		}
		return r
	}, s)
}
