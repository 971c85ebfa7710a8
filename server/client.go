package server

import (
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bloomlab/bloomlab/internal/resp"
)

// client is one connection (or the internal client that replays the log
// and expires keys).
type client struct {
	s    *Server
	conn net.Conn // nil for the internal client
	r    *resp.Reader
	w    *resp.Writer
	id   int64

	name, libName, libVer string
	authed                bool
	created               time.Time

	excl      bool // db.mu is held exclusively (MULTI/EXEC, replay)
	replaying bool // executing log records: nothing is logged again

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

	res      []int8   // scratch: an insert's outcomes
	out      replyBuf // replies not yet sent: sent between commands, never while a lock is held
	held     int64    // bytes of out and queue accounted as client memory (account)
	memTotal int64    // the connection's client memory: the reader's, out's and queue's (clientmem.go)
	quit     bool
	dlMu     sync.Mutex
	stopping bool
	lower    [32]byte // the command name in lower case
}

func newClient(s *Server, conn net.Conn) *client {
	c := &client{s: s, conn: conn, id: s.nextID.Add(1), created: time.Now()}
	c.r = resp.NewReader(conn, s.lim)
	c.r.Account(c.growReader, c.readerFits)
	c.w = resp.NewWriter(&c.out)
	c.authed = s.cfg.Password == ""
	return c
}

// internalClient runs commands on behalf of the server (log replay,
// expiry); its replies are discarded.
func (s *Server) internalClient() *client {
	c := &client{s: s, id: 0, authed: true, excl: true, created: time.Now()}
	c.w = resp.NewWriter(io.Discard)
	return c
}

// replyBuf holds a connection's replies until they are sent. Commands
// write into it while they hold locks; it is sent to the network only
// between commands, so that a client that does not read its replies
// never holds a lock (a 16 MiB BF.SCANDUMP chunk waits here, not in a
// handler).
type replyBuf struct{ b []byte }

func (r *replyBuf) Write(p []byte) (int, error) {
	r.b = append(r.b, p...)
	return len(p), nil
}

// pendingReplies is the size of the replies not yet sent.
func (c *client) pendingReplies() int { return len(c.out.b) + c.w.Buffered() }

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
	if err := c.w.Flush(); err != nil {
		return err
	}
	if len(c.out.b) == 0 {
		return nil
	}
	// The client's own records (c.logPos: an EXEC block is logged after
	// its commands' observations) and what its replies observed.
	if pos := max(c.logPos, c.seen); pos > c.durable {
		if err := c.s.aof.wait(pos); err != nil {
			return err // a reply may rest on a write the log lost: no reply
		}
		c.durable = pos
	}
	c.conn.SetWriteDeadline(time.Now().Add(c.s.cfg.WriteTimeout))
	_, err := c.conn.Write(c.out.b)
	if cap(c.out.b) > clientFree {
		c.out.b = nil // a large reply's buffer is not kept (clientmem.go)
	} else {
		c.out.b = c.out.b[:0]
	}
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
		c.releaseMem()
		s.mu.Lock()
		delete(s.clients, c)
		s.mu.Unlock()
		c.conn.Close()
		s.conns.Done()
	}()
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
			if idle > 0 {
				c.conn.SetReadDeadline(time.Now().Add(idle))
			}
			c.dlMu.Unlock()
		}
		// Redis's limits before AUTH (a bulk of 16 KiB, 10 arguments).
		c.r.Unauthenticated = !c.authed
		args, err := c.r.ReadCommand()
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
		c.exec(args)
		c.r.Release() // a large command's buffer goes before its reply
		c.account()
		if c.quit {
			c.flush()
			return
		}
	}
}

// exec runs one command as Redis does: lookup, authentication, arity,
// queueing inside MULTI, then the command.
func (c *client) exec(args [][]byte) {
	c.s.totalCommands.Add(1)
	cmd := lookupCommand(args[0], &c.lower)
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
		c.flagTx()
		c.err(wrongArity(cmd.name))
		return
	}
	if c.multi && cmd.flags&fNoQueue == 0 {
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
	if cmd.flags&fDenyOOM != 0 && s.overLimit() {
		c.err(errOOM)
		return
	}
	if c.excl || cmd.lock == lockNone {
		cmd.run(c, args)
		return
	}
	if cmd.lock != lockExcl {
		s.db.mu.RLock()
		again := cmd.run(c, args)
		s.db.mu.RUnlock()
		if !again {
			return
		}
	}
	s.db.mu.Lock()
	c.excl = true
	cmd.run(c, args)
	c.excl = false
	s.db.mu.Unlock()
}

// observe notes the log's end after a command that used the keyspace:
// the client's replies wait until the log is durable up to it (flush).
func (c *client) observe() {
	if e := c.s.aof.appendedEnd(); e > c.seen {
		c.seen = e
	}
}

// err writes a top-level error reply.
func (c *client) err(msg string) {
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
