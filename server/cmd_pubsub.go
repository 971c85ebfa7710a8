package server

import (
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Redis's pub/sub commands (COMMAND DOCS group "pubsub"): SUBSCRIBE,
// UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE, PUBLISH, PUBSUB CHANNELS / NUMSUB
// / NUMPAT / HELP, with Redis 7.0.15's replies (RESP2 arrays, RESP3
// pushes) and its RESP2 subscribed mode (exec refuses every other command
// but PING, QUIT and RESET; PING answers ["pong", arg]).
//
// Delivery. A publisher never writes to a subscriber's connection, never
// waits for it, and holds no keyspace lock: under the registry's shared
// lock it appends the encoded message to the subscriber's queue
// (psState.pending, under psState.mu), counts it as client memory and
// wakes the subscriber's pusher goroutine. The pusher writes the queue to
// the connection while the connection's goroutine is idle (blocked
// reading); while that goroutine runs commands (busy, from the command
// read to the flush of its replies) the pusher leaves the queue alone and
// the goroutine moves it into its own replies, before the command's reply
// (beginCommand) and, in a command that changes subscriptions, before the
// confirmation (under the registry's lock, so that no message of a channel
// follows its unsubscribe confirmation or precedes its subscribe
// confirmation). Every write to the connection (the pusher's, flush's)
// holds psState.wmu. A subscriber whose queue passes Redis's
// client-output-buffer-limit for pubsub (32 MiB at once, or 8 MiB for 60
// seconds) is disconnected by the publisher that finds it so, as in Redis.

func init() {
	sub := func(name string, arity int, summary string, run func(*client, [][]byte) bool) *command {
		c := keyless(name, arity, 0, "pubsub slow", summary, run)
		c.since = "2.0.0"
		return c
	}
	publish := keyless("publish", 3, fFast, "pubsub fast", "Post a message to a channel", cmdPublish)
	publish.since = "2.0.0"
	pubsub := keyless("pubsub", -2, 0, "slow", "A container for Pub/Sub commands", cmdPubsub)
	pubsub.since = "2.8.0"
	pubsub.subs = []subcommand{{"channels", -2, "pubsub slow"}, {"numsub", -2, "pubsub slow"}, {"numpat", 2, "pubsub slow"}, {"help", 2, "slow"}}
	registerFamily(&family{name: "pubsub", commands: []*command{
		sub("subscribe", -2, "Listen for messages published to the given channels", cmdSubscribe),
		sub("unsubscribe", -1, "Stop listening for messages posted to the given channels", cmdUnsubscribe),
		sub("psubscribe", -2, "Listen for messages published to channels matching the given patterns", cmdPsubscribe),
		sub("punsubscribe", -1, "Stop listening for messages posted to channels matching the given patterns", cmdPunsubscribe),
		publish,
		pubsub,
	}})
}

// Redis's client-output-buffer-limit pubsub 32mb 8mb 60.
const (
	pubsubHardLimit = 32 << 20
	pubsubSoftLimit = 8 << 20
	// keepPush: a queue buffer larger than this is dropped once written.
	keepPush = 64 << 10
)

// pubsubSoftTime is how long a subscriber's queue may stay past the soft
// limit (a variable for tests).
var pubsubSoftTime = 60 * time.Second

// pubsubRegistry is the server's subscriptions.
type pubsubRegistry struct {
	mu       sync.RWMutex
	channels map[string][]*client // subscribers in subscription order
	patterns map[string][]*client
	patOrder []string // the patterns with subscribers, in the order of their first subscription
	// disconnects counts subscribers closed at the output buffer limit.
	disconnects atomic.Int64
}

// psState is a subscribed connection's subscriptions and message queue.
type psState struct {
	// channels and patterns are the connection's subscriptions, changed
	// by its goroutine under the registry's lock.
	channels map[string]struct{}
	patterns []string // in subscription order (Redis's list)

	proto atomic.Int32 // the connection's protocol, for publishers

	wmu sync.Mutex // held by every write to the connection

	mu        sync.Mutex
	pending   []byte // messages not yet moved or written
	spare     []byte // an empty buffer for pending
	flight    []byte // what the pusher is writing
	held      int64  // bytes of the buffers above counted as client memory
	busy      bool   // the connection's goroutine runs commands: it takes pending
	closed    bool   // disconnected: messages are dropped
	softSince time.Time

	wake chan struct{}
	stop chan struct{}
	done chan struct{}
}

// count is the connection's number of subscriptions.
func (p *psState) count() int { return len(p.channels) + len(p.patterns) }

// subscribed reports whether the connection is in subscribed mode.
func (c *client) subscribed() bool { return c.ps != nil && c.ps.count() > 0 }

// subscribedResp2 reports whether the connection is in RESP2's subscribed
// mode, where only the subscription commands, PING, QUIT and RESET run.
func (c *client) subscribedResp2() bool { return c.w.Proto == 2 && c.subscribed() }

// pubsubAllowed is what RESP2's subscribed mode runs.
func pubsubAllowed(cmd *command) bool {
	switch cmd.name {
	case "subscribe", "unsubscribe", "psubscribe", "punsubscribe", "ping", "quit", "reset":
		return true
	}
	return false
}

// pubsubRefusal is Redis's error for cmd in RESP2's subscribed mode.
func pubsubRefusal(cmd *command, args [][]byte) string {
	name := cmd.name
	if cmd.subs != nil && len(args) > 1 {
		for _, sc := range cmd.subs {
			if eqFold(args[1], sc.name) {
				name += "|" + sc.name
			}
		}
	}
	return "ERR Can't execute '" + name + "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context"
}

// pubsubState returns the connection's state, made (and its pusher
// started) on its first subscription.
func (c *client) pubsubState() *psState {
	if c.ps == nil {
		p := &psState{channels: map[string]struct{}{}, busy: true,
			wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
		p.proto.Store(int32(c.w.Proto))
		c.ps = p
		if c.conn != nil {
			go c.pusher()
		} else {
			close(p.done)
		}
	}
	return c.ps
}

// account keeps p's buffers counted as client memory. p.mu is held.
func (p *psState) account(s *Server) {
	n := int64(cap(p.pending) + cap(p.spare) + cap(p.flight))
	if d := n - p.held; d != 0 {
		p.held = n
		s.mem.Add(d)
		s.clientMem.Add(d)
		if d > 0 {
			s.notePeak()
		}
	}
}

// takePending moves the queued messages into the connection's replies.
// p.mu is held; only the connection's goroutine calls it.
func (c *client) takePending() {
	p := c.ps
	if len(p.pending) == 0 {
		return
	}
	c.w.Flush()
	c.out.Write(p.pending)
	if cap(p.pending) > keepPush {
		p.pending = nil
	} else {
		p.pending = p.pending[:0]
	}
	p.softSince = time.Time{}
	p.account(c.s)
	c.account()
}

// beginCommand marks the connection busy as a command is about to run,
// moving the messages queued until now before its reply.
func (c *client) beginCommand() {
	p := c.ps
	p.mu.Lock()
	p.busy = true
	c.takePending()
	p.mu.Unlock()
}

// idle marks the connection idle after its replies were sent: the pusher
// writes what is queued from now on.
func (c *client) idle() {
	p := c.ps
	p.mu.Lock()
	p.busy = false
	wake := len(p.pending) > 0
	p.mu.Unlock()
	if wake {
		p.signal()
	}
}

func (p *psState) signal() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// pusher writes queued messages to an idle connection.
func (c *client) pusher() {
	p := c.ps
	defer close(p.done)
	for {
		select {
		case <-p.wake:
		case <-p.stop:
			return
		}
		p.wmu.Lock()
		p.mu.Lock()
		if p.busy || p.closed || len(p.pending) == 0 {
			p.mu.Unlock()
			p.wmu.Unlock()
			continue
		}
		buf := p.pending
		p.pending, p.spare, p.flight = p.spare[:0], nil, buf
		p.mu.Unlock()
		if now := time.Now(); c.writeBy.Sub(now) < c.s.cfg.WriteTimeout/2 {
			c.writeBy = now.Add(c.s.cfg.WriteTimeout)
			c.conn.SetWriteDeadline(c.writeBy)
		}
		_, err := c.conn.Write(buf)
		p.wmu.Unlock()
		p.mu.Lock()
		p.flight = nil
		if cap(buf) <= keepPush && p.spare == nil {
			p.spare = buf[:0]
		}
		if len(p.pending)+len(p.flight) <= pubsubSoftLimit {
			p.softSince = time.Time{}
		}
		p.account(c.s)
		again := !p.busy && len(p.pending) > 0
		p.mu.Unlock()
		if err != nil {
			c.conn.Close() // the reader's goroutine ends the connection
			return
		}
		if again {
			p.signal()
		}
	}
}

// closePubsub ends the connection's pub/sub: its subscriptions, its
// pusher (the connection is closed: a write in progress fails) and the
// memory of its queue.
func (c *client) closePubsub() {
	p := c.ps
	if p == nil {
		return
	}
	close(p.stop)
	<-p.done
	p.mu.Lock()
	p.closed = true
	p.pending, p.spare, p.flight = nil, nil, nil
	p.account(c.s)
	p.mu.Unlock()
}

// deliver queues one message for c (publisher side, the registry held
// shared): pattern is nil for a channel's message.
func (c *client) deliver(pattern, channel, msg []byte) {
	p := c.ps
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || c.conn == nil {
		return // an internal client's replies are discarded
	}
	head := byte('*')
	if p.proto.Load() >= 3 {
		head = '>'
	}
	b := p.pending
	if pattern == nil {
		b = append(b, head, '3', '\r', '\n', '$', '7', '\r', '\n')
		b = append(b, "message\r\n"...)
	} else {
		b = append(b, head, '4', '\r', '\n', '$', '8', '\r', '\n')
		b = append(b, "pmessage\r\n"...)
		b = appendBulk(b, pattern)
	}
	b = appendBulk(b, channel)
	b = appendBulk(b, msg)
	p.pending = b
	n := len(p.pending) + len(p.flight)
	over := n > pubsubHardLimit
	if n > pubsubSoftLimit {
		now := time.Now()
		if p.softSince.IsZero() {
			p.softSince = now
		} else if now.Sub(p.softSince) > pubsubSoftTime {
			over = true
		}
	} else {
		p.softSince = time.Time{}
	}
	if over {
		// Redis's client-output-buffer-limit pubsub: the subscriber is
		// closed; what it did not read is dropped.
		p.closed = true
		p.pending, p.spare = nil, nil
		p.account(c.s)
		c.s.ps.disconnects.Add(1)
		c.conn.Close()
		return
	}
	p.account(c.s)
	if !p.busy {
		p.signal()
	}
}

func appendBulk(b, s []byte) []byte {
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, '\r', '\n')
	b = append(b, s...)
	return append(b, '\r', '\n')
}

// confirm writes a subscription command's reply for one name (nil: none).
func (c *client) confirm(kind string, name []byte) {
	c.w.Push(3)
	c.w.BulkString(kind)
	if name == nil {
		c.w.Null()
	} else {
		c.w.Bulk(name)
	}
	c.w.Int(int64(c.ps.count()))
}

// changing holds the registry exclusively for a change of c's
// subscriptions, the messages queued until now moved before its replies;
// the returned function releases it.
func (c *client) changing() func() {
	r := &c.s.ps
	p := c.pubsubState()
	r.mu.Lock()
	p.mu.Lock()
	c.takePending()
	p.mu.Unlock()
	if r.channels == nil {
		r.channels, r.patterns = map[string][]*client{}, map[string][]*client{}
	}
	return r.mu.Unlock
}

func cmdSubscribe(c *client, args [][]byte) bool {
	defer c.changing()()
	r, p := &c.s.ps, c.ps
	for _, ch := range args[1:] {
		if _, ok := p.channels[string(ch)]; !ok {
			p.channels[string(ch)] = struct{}{}
			r.channels[string(ch)] = append(r.channels[string(ch)], c)
		}
		c.confirm("subscribe", ch)
	}
	return false
}

func cmdPsubscribe(c *client, args [][]byte) bool {
	defer c.changing()()
	r, p := &c.s.ps, c.ps
	for _, pat := range args[1:] {
		if !slices.Contains(p.patterns, string(pat)) {
			p.patterns = append(p.patterns, string(pat))
			if len(r.patterns[string(pat)]) == 0 {
				r.patOrder = append(r.patOrder, string(pat))
			}
			r.patterns[string(pat)] = append(r.patterns[string(pat)], c)
		}
		c.confirm("psubscribe", pat)
	}
	return false
}

// removeClient removes c from list, keeping the order.
func removeClient(list []*client, c *client) []*client {
	if i := slices.Index(list, c); i >= 0 {
		list = slices.Delete(list, i, i+1)
	}
	return list
}

// unsubscribe removes c's subscription to ch (the registry held).
func (c *client) unsubscribe(ch string) bool {
	r, p := &c.s.ps, c.ps
	if _, ok := p.channels[ch]; !ok {
		return false
	}
	delete(p.channels, ch)
	if l := removeClient(r.channels[ch], c); len(l) == 0 {
		delete(r.channels, ch)
	} else {
		r.channels[ch] = l
	}
	return true
}

// punsubscribe removes c's subscription to pat (the registry held).
func (c *client) punsubscribe(pat string) bool {
	r, p := &c.s.ps, c.ps
	i := slices.Index(p.patterns, pat)
	if i < 0 {
		return false
	}
	p.patterns = slices.Delete(p.patterns, i, i+1)
	if l := removeClient(r.patterns[pat], c); len(l) == 0 {
		delete(r.patterns, pat)
		if j := slices.Index(r.patOrder, pat); j >= 0 {
			r.patOrder = slices.Delete(r.patOrder, j, j+1)
		}
	} else {
		r.patterns[pat] = l
	}
	return true
}

func cmdUnsubscribe(c *client, args [][]byte) bool {
	defer c.changing()()
	p := c.ps
	if len(args) == 1 {
		if len(p.channels) == 0 {
			c.confirm("unsubscribe", nil)
			return false
		}
		chans := make([]string, 0, len(p.channels))
		for ch := range p.channels {
			chans = append(chans, ch)
		}
		sort.Strings(chans)
		for _, ch := range chans {
			c.unsubscribe(ch)
			c.confirm("unsubscribe", []byte(ch))
		}
		return false
	}
	for _, ch := range args[1:] {
		c.unsubscribe(string(ch))
		c.confirm("unsubscribe", ch)
	}
	return false
}

func cmdPunsubscribe(c *client, args [][]byte) bool {
	defer c.changing()()
	p := c.ps
	if len(args) == 1 {
		if len(p.patterns) == 0 {
			c.confirm("punsubscribe", nil)
			return false
		}
		for _, pat := range slices.Clone(p.patterns) {
			c.punsubscribe(pat)
			c.confirm("punsubscribe", []byte(pat))
		}
		return false
	}
	for _, pat := range args[1:] {
		c.punsubscribe(string(pat))
		c.confirm("punsubscribe", pat)
	}
	return false
}

// unsubscribeAll removes every subscription of a closing connection.
func (c *client) unsubscribeAll() {
	if c.ps == nil {
		return
	}
	r := &c.s.ps
	r.mu.Lock()
	for ch := range c.ps.channels {
		c.unsubscribe(ch)
	}
	for _, pat := range slices.Clone(c.ps.patterns) {
		c.punsubscribe(pat)
	}
	r.mu.Unlock()
}

// publish delivers msg to ch's subscribers and the patterns' that match
// it, and returns the number of receivers.
func (s *Server) publish(ch, msg []byte) int64 {
	r := &s.ps
	r.mu.RLock()
	defer r.mu.RUnlock()
	n := int64(0)
	for _, sub := range r.channels[string(ch)] {
		sub.deliver(nil, ch, msg)
		n++
	}
	for _, pat := range r.patOrder {
		if !globMatch([]byte(pat), ch) {
			continue
		}
		for _, sub := range r.patterns[pat] {
			sub.deliver([]byte(pat), ch, msg)
			n++
		}
	}
	return n
}

func cmdPublish(c *client, args [][]byte) bool {
	s := c.s
	n := s.publish(args[1], args[2])
	// Redis propagates PUBLISH to its replicas (not to the log), whose
	// subscribers get the message too.
	if c.conn != nil && !c.master && s.repl.feeding() && s.repl.replicaLink() == nil {
		s.repl.feed(args)
	}
	if c.ps != nil {
		// Its own messages go before its reply, as in Redis.
		c.ps.mu.Lock()
		c.takePending()
		c.ps.mu.Unlock()
	}
	c.w.Int(n)
	return false
}

var pubsubHelp = []string{
	"PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"CHANNELS [<pattern>]",
	"    Return the currently active channels matching a <pattern> (default: '*').",
	"NUMPAT",
	"    Return number of subscriptions to patterns.",
	"NUMSUB [<channel> ...]",
	"    Return the number of subscribers for the specified channels, excluding",
	"    pattern subscriptions(default: no channels).",
	"SHARDCHANNELS [<pattern>]",
	"    Return the currently active shard level channels matching a <pattern> (default: '*').",
	"SHARDNUMSUB [<shardchannel> ...]",
	"    Return the number of subscribers for the specified shard level channel(s)",
	"HELP",
	"    Prints this help.",
}

func cmdPubsub(c *client, args [][]byte) bool {
	// exec checked the subcommand and its arity (command.subs).
	r := &c.s.ps
	r.mu.RLock()
	defer r.mu.RUnlock()
	switch strings.ToLower(string(args[1])) {
	case "channels":
		if len(args) > 3 {
			c.err("ERR unknown subcommand or wrong number of arguments for '" + argText(args[1]) + "'. Try PUBSUB HELP.")
			return false
		}
		var out []string
		for ch := range r.channels {
			if len(args) == 2 || globMatch(args[2], []byte(ch)) {
				out = append(out, ch)
			}
		}
		sort.Strings(out)
		c.w.Array(len(out))
		for _, ch := range out {
			c.w.BulkString(ch)
		}
	case "numsub":
		c.w.Array(2 * (len(args) - 2))
		for _, ch := range args[2:] {
			c.w.Bulk(ch)
			c.w.Int(int64(len(r.channels[string(ch)])))
		}
	case "numpat":
		c.w.Int(int64(len(r.patterns)))
	case "help":
		c.w.Array(len(pubsubHelp))
		for _, l := range pubsubHelp {
			c.w.Simple(l)
		}
	}
	return false
}

// pubsubCounts is INFO's pubsub_channels and pubsub_patterns.
func (s *Server) pubsubCounts() (channels, patterns int) {
	s.ps.mu.RLock()
	defer s.ps.mu.RUnlock()
	return len(s.ps.channels), len(s.ps.patterns)
}
