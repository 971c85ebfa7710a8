package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bloomlab/bloomlab/internal/redistest"
	"github.com/bloomlab/bloomlab/server/internal/resp"
	"github.com/redis/go-redis/v9"
)

// pubsubStep is one command of a pub/sub transcript on a named
// connection, and the number of replies it reads there (RESP2, RESP3):
// messages published to the connection before are read with the reply
// of its next command.
type pubsubStep struct {
	conn   string
	args   string
	n2, n3 int
}

// pubsubScript: subscriptions, messages from another connection (to a
// subscriber in each protocol), RESP2's subscribed mode and its refusals,
// PUBSUB's subcommands, their errors, and MULTI. (UNSUBSCRIBE without
// arguments unsubscribes in Redis's dict order: one channel at a time
// here; PUNSUBSCRIBE's order is the subscriptions'.) Connection "x" stays
// in RESP2.
var pubsubScript = []pubsubStep{
	{"a", "subscribe c1 c2", 2, 2},
	{"a", "psubscribe p* c?", 2, 2},
	{"x", "subscribe c1", 1, 1},
	{"x", "psubscribe *x p*", 2, 2},
	{"b", "publish c1 hello", 1, 1},
	{"b", "publish cx hi", 1, 1},
	{"b", "publish zz none", 1, 1},
	{"b", "publish p1 pp", 1, 1},
	{"a", "ping", 5, 5},
	{"x", "ping", 4, 4},
	{"a", "ping x", 1, 1},
	{"a", "get k", 1, 1},
	{"a", "set k v", 1, 1},
	{"a", "client id x", 1, 1},
	{"a", "pubsub numpat", 1, 1},
	{"a", "discard", 1, 1},
	{"a", "publish c1 self", 1, 3},
	{"a", "unsubscribe c1", 1, 1},
	{"b", "pubsub numsub c1 c2 zz", 1, 1},
	{"b", "pubsub numsub", 1, 1},
	{"b", "pubsub numpat", 1, 1},
	{"b", "pubsub channels *2", 1, 1},
	{"b", "pubsub channels x*", 1, 1},
	{"b", "publish c2 two", 1, 1},
	{"a", "punsubscribe", 4, 4},
	{"a", "unsubscribe", 1, 1},
	{"a", "unsubscribe", 1, 1},
	{"a", "punsubscribe", 1, 1},
	{"a", "ping", 1, 1},
	{"a", "subscribe", 1, 1},
	{"a", "unsubscribe x", 1, 1},
	{"a", "punsubscribe x*", 1, 1},
	{"b", "pubsub foo", 1, 1},
	{"b", "pubsub", 1, 1},
	{"b", "pubsub numpat x", 1, 1},
	{"b", "pubsub channels a b", 1, 1},
	{"b", "pubsub help", 1, 1},
	{"b", "publish", 1, 1},
	{"b", "publish a b c", 1, 1},
	{"c", "multi", 1, 1},
	{"c", "subscribe q", 1, 1},
	{"c", "publish q x", 1, 1},
	{"c", "exec", 2, 2},
	{"c", "ping", 1, 1},
	{"c", "discard", 1, 1},
	{"c", "multi", 1, 1},
	{"c", "unsubscribe", 1, 1},
	{"c", "ping", 1, 1},
	{"d", "multi", 1, 1},
	{"d", "unsubscribe", 1, 1},
	{"d", "exec", 1, 1},
	{"d", "ping", 1, 1},
	{"x", "punsubscribe", 2, 3},
	{"x", "unsubscribe", 1, 1},
	{"x", "ping", 1, 1},
	{"b", "pubsub numpat", 1, 1},
	{"b", "pubsub channels", 1, 1},
	{"e", "subscribe z", 1, 1},
	{"e", "psubscribe z*", 1, 1},
	{"b", "publish z 1", 1, 1},
	{"e", "reset", 3, 3},
	{"e", "ping", 1, 1},
	{"e", "get k", 1, 1},
	{"b", "pubsub numsub z", 1, 1},
	{"b", "pubsub numpat", 1, 1},
	{"b", "publish z 2", 1, 1},
	{"e", "reset x", 1, 1},
}

// pubsubTranscript runs the script against addr and returns each step's
// reply bytes.
func pubsubTranscript(t *testing.T, addr string, proto int) []string {
	conns := map[string]*rawConn{}
	var out []string
	for i, st := range pubsubScript {
		c := conns[st.conn]
		if c == nil {
			c = dialAddr(t, addr)
			conns[st.conn] = c
			if proto == 3 && st.conn != "x" {
				c.send("HELLO", "3")
				c.read()
			}
		}
		c.send(strings.Fields(st.args)...)
		n := st.n2
		if proto == 3 {
			n = st.n3
		}
		var b []byte
		for j := 0; j < n; j++ {
			_, raw := c.read()
			b = append(b, raw...)
		}
		out = append(out, fmt.Sprintf("%d %s: %s => %q", i, st.conn, st.args, b))
	}
	return out
}

// TestPubsubLikeRedis runs one transcript against Debian's redis-server
// 7.0.15 and this server, in RESP2 and RESP3, and compares every reply
// byte for byte.
func TestPubsubLikeRedis(t *testing.T) {
	r := redistest.Start(t, redistest.Options{})
	s := start(t, Config{})
	for _, proto := range []int{2, 3} {
		want := pubsubTranscript(t, r.Addr, proto)
		got := pubsubTranscript(t, s.Addr().String(), proto)
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("RESP%d:\n got %s\nwant %s", proto, got[i], want[i])
			}
		}
	}
}

// TestPubsubInfo: INFO's pubsub_channels and pubsub_patterns, and the
// subscriptions of a closed connection gone.
func TestPubsubInfo(t *testing.T) {
	s := start(t, Config{})
	sub := dial(t, s)
	sub.send("SUBSCRIBE", "a", "b")
	sub.read()
	sub.read()
	sub.send("PSUBSCRIBE", "x*")
	sub.read()
	c := dial(t, s)
	info := c.do("INFO", "stats")
	if !strings.Contains(info, `pubsub_channels:2\r\npubsub_patterns:1\r\n`) {
		t.Errorf("INFO stats: %s", info)
	}
	sub.conn.Close()
	deadline := time.Now().Add(10 * time.Second)
	for c.do("PUBLISH", "a", "m") != ":0" || c.do("PUBSUB", "NUMPAT") != ":0" {
		if time.Now().After(deadline) {
			t.Fatal("a closed subscriber's subscriptions stay")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if info := c.do("INFO", "stats"); !strings.Contains(info, `pubsub_channels:0\r\npubsub_patterns:0\r\n`) {
		t.Errorf("INFO stats: %s", info)
	}
}

// TestPubsubSlowSubscriber: a subscriber that does not read holds its
// messages as client memory until Redis's pubsub hard limit (32 MiB),
// then is disconnected; PUBLISH answers throughout and the memory is
// returned.
func TestPubsubSlowSubscriber(t *testing.T) {
	s := start(t, Config{})
	base := s.clientMem.Load()
	sub := dial(t, s)
	if tc, ok := sub.conn.(*net.TCPConn); ok {
		tc.SetReadBuffer(64 << 10)
	}
	sub.send("SUBSCRIBE", "big")
	sub.read()
	pub := dial(t, s)
	msg := strings.Repeat("m", 1<<20)
	peak := int64(0)
	disconnected := false
	for i := 0; i < 200; i++ {
		start := time.Now()
		v := pub.do("PUBLISH", "big", msg)
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("PUBLISH %d took %v: the publisher waits for the subscriber", i, d)
		}
		peak = max(peak, s.clientMem.Load()-base)
		if v == ":0" {
			disconnected = true
			t.Logf("disconnected after %d messages of 1 MiB; client memory peaked at %d bytes", i, peak)
			break
		}
		if v != ":1" {
			t.Fatalf("PUBLISH %d: %s", i, v)
		}
	}
	if !disconnected {
		t.Fatal("a subscriber that does not read was not disconnected after 200 MiB")
	}
	if peak < pubsubSoftLimit {
		t.Errorf("client memory peaked at %d bytes: the queued messages are not counted", peak)
	}
	if peak > pubsubHardLimit+16<<20 { // the buffers' capacity, the publisher's 1 MiB request

		t.Errorf("client memory peaked at %d bytes, past the 32 MiB limit", peak)
	}
	if got := s.ps.disconnects.Load(); got != 1 {
		t.Errorf("%d disconnections at the limit", got)
	}
	// The subscriber reads what was written before the close, then EOF.
	sub.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.Copy(io.Discard, sub.conn); err != nil {
		t.Errorf("the subscriber's connection: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for s.clientMem.Load()-base > 4<<20 {
		if time.Now().After(deadline) {
			t.Fatalf("client memory %d bytes after the disconnection (base %d)", s.clientMem.Load(), base)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if v := pub.do("PUBSUB", "NUMSUB", "big"); v != "*[$\"big\", :0]" {
		t.Errorf("PUBSUB NUMSUB big: %s", v)
	}
}

// TestPubsubConcurrent (run it with -race): publishers on several
// connections and subscribers in both protocols that send commands while
// messages arrive, and one that subscribes and unsubscribes a channel
// over and over while it is published to. Every subscriber gets every
// message of its channels, each publisher's in order, and no message of
// a channel between its unsubscribe and subscribe confirmations.
func TestPubsubConcurrent(t *testing.T) {
	s := start(t, Config{})
	const pubs, msgs, subs = 4, 300, 4
	type subscriber struct {
		c   *rawConn
		got map[string]int // publisher → messages
	}
	var list []*subscriber
	for i := 0; i < subs; i++ {
		c := dial(t, s)
		if i%2 == 1 {
			c.do("HELLO", "3")
		}
		c.send("SUBSCRIBE", "news")
		c.read()
		c.send("PSUBSCRIBE", "n*")
		c.read()
		list = append(list, &subscriber{c: c, got: map[string]int{}})
	}
	flip := dial(t, s)
	flip.send("SUBSCRIBE", "anchor")
	flip.read()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for p := 0; p < pubs; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			conn, err := net.Dial("tcp", s.Addr().String())
			if err != nil {
				errs <- err
				return
			}
			defer conn.Close()
			rr := resp.NewReplyReader(bufio.NewReader(conn), 0)
			for i := 0; i < msgs; i++ {
				m := fmt.Sprintf("%d:%d", p, i)
				conn.Write(append(resp.Command("PUBLISH", "news", m), resp.Command("PUBLISH", "flip", m)...))
				for j := 0; j < 2; j++ {
					if _, err := rr.Read(); err != nil {
						errs <- err
						return
					}
				}
			}
		}(p)
	}
	stopFlip := make(chan struct{})
	flipDone := make(chan struct{})
	go func() {
		defer close(flipDone)
		in := false // subscribed to flip, by the confirmations read
		rr := resp.NewReplyReader(bufio.NewReader(flip.conn), 0)
		flip.conn.SetDeadline(time.Now().Add(60 * time.Second))
		for n := 0; ; n++ {
			select {
			case <-stopFlip:
				return
			default:
			}
			cmd := "SUBSCRIBE"
			if n%2 == 1 {
				cmd = "UNSUBSCRIBE"
			}
			flip.conn.Write(append(resp.Command(cmd, "flip"), resp.Command("PING")...))
			for {
				v, err := rr.Read()
				if err != nil {
					errs <- err
					return
				}
				if pongLike(v) {
					break
				}
				if len(v.Elems) == 3 {
					switch string(v.Elems[0].Str) {
					case "subscribe":
						in = true
					case "unsubscribe":
						in = false
					case "message":
						if !in {
							errs <- fmt.Errorf("a message of flip after its unsubscribe confirmation: %s", v)
							return
						}
					}
				}
			}
		}
	}()
	// Each subscriber reads its messages (a channel's and a pattern's per
	// publish) and sends a PING every so often.
	var rg sync.WaitGroup
	for i, sb := range list {
		rg.Add(1)
		go func(i int, sb *subscriber) {
			defer rg.Done()
			rr := resp.NewReplyReader(bufio.NewReader(sb.c.conn), 0)
			sb.c.conn.SetDeadline(time.Now().Add(60 * time.Second))
			want := 2 * pubs * msgs
			last := map[string]int{}
			n, pings, pongs := 0, 0, 0
			for n < want || pongs < pings {
				if n%50 == 0 && pings < n/50+1 {
					sb.c.conn.Write(resp.Command("PING"))
					pings++
				}
				v, err := rr.Read()
				if err != nil {
					errs <- fmt.Errorf("subscriber %d after %d messages: %v", i, n, err)
					return
				}
				if pongLike(v) {
					pongs++
					continue
				}
				e := v.Elems
				var m string
				switch {
				case len(e) == 3 && string(e[0].Str) == "message" && string(e[1].Str) == "news":
					m = string(e[2].Str)
				case len(e) == 4 && string(e[0].Str) == "pmessage" && string(e[1].Str) == "n*" && string(e[2].Str) == "news":
					m = "p" + string(e[3].Str)
				default:
					errs <- fmt.Errorf("subscriber %d: %s", i, v)
					return
				}
				who, seq, _ := strings.Cut(m, ":")
				k, _ := strconv.Atoi(seq)
				if prev, ok := last[who]; ok && k != prev+1 || !ok && k != 0 {
					errs <- fmt.Errorf("subscriber %d: message %s after %d", i, m, prev)
					return
				}
				last[who] = k
				n++
			}
		}(i, sb)
	}
	wg.Wait()
	rg.Wait()
	close(stopFlip)
	<-flipDone
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if v := dial(t, s).do("PUBSUB", "NUMSUB", "news"); v != fmt.Sprintf("*[$\"news\", :%d]", subs) {
		t.Errorf("PUBSUB NUMSUB news: %s", v)
	}
}

// TestPubsubSoftLimit: a subscriber whose queue stays past 8 MiB for
// longer than the soft limit's time (60 seconds, shortened here) is
// disconnected.
func TestPubsubSoftLimit(t *testing.T) {
	old := pubsubSoftTime
	pubsubSoftTime = 200 * time.Millisecond
	t.Cleanup(func() { pubsubSoftTime = old })
	s := start(t, Config{})
	sub := dial(t, s)
	if tc, ok := sub.conn.(*net.TCPConn); ok {
		tc.SetReadBuffer(64 << 10)
	}
	sub.send("SUBSCRIBE", "big")
	sub.read()
	pub := dial(t, s)
	msg := strings.Repeat("m", 1<<20)
	for i := 0; i < 200 && s.ps.disconnects.Load() == 0; i++ {
		// Past 8 MiB queued (the socket's buffers hold some more), well
		// under 32 MiB: only the soft limit's time disconnects.
		if v := pub.do("PUBLISH", "big", msg); v != ":1" {
			t.Fatalf("PUBLISH %d: %s", i, v)
		}
		if i >= 20 {
			time.Sleep(50 * time.Millisecond)
		}
		if i == 30 {
			t.Fatal("not disconnected past the soft limit")
		}
	}
	if s.ps.disconnects.Load() != 1 {
		t.Fatal("not disconnected")
	}
}

// TestPubsubProtoSwitch: a subscriber's messages follow its protocol as
// HELLO changes it, and UNSUBSCRIBE and PUBSUB CHANNELS give every
// channel as redis-server does (compared as sets: Redis's order is its
// hash table's).
func TestPubsubProtoSwitch(t *testing.T) {
	s := start(t, Config{})
	sub := dial(t, s)
	sub.do("HELLO", "3")
	sub.send("SUBSCRIBE", "a")
	sub.read()
	pub := dial(t, s)
	pub.do("PUBLISH", "a", "one")
	if _, raw := sub.read(); string(raw) != ">3\r\n$7\r\nmessage\r\n$1\r\na\r\n$3\r\none\r\n" {
		t.Errorf("RESP3 message: %q", raw)
	}
	sub.do("HELLO", "2")
	pub.do("PUBLISH", "a", "two")
	if _, raw := sub.read(); string(raw) != "*3\r\n$7\r\nmessage\r\n$1\r\na\r\n$3\r\ntwo\r\n" {
		t.Errorf("RESP2 message: %q", raw)
	}

	r := redistest.Start(t, redistest.Options{})
	sets := func(addr string) (chans, unsub string) {
		c := dialAddr(t, addr)
		c.send("SUBSCRIBE", "x3", "x1", "x2", "y")
		for i := 0; i < 4; i++ {
			c.read()
		}
		o := dialAddr(t, addr)
		v, _ := o.read2("PUBSUB", "CHANNELS", "x*")
		var got []string
		for _, e := range v.Elems {
			got = append(got, e.String())
		}
		sort.Strings(got)
		c.send("UNSUBSCRIBE")
		var un []string
		for i := 0; i < 4; i++ {
			// The counts go down whatever the order: compare the
			// channels.
			v, _ := c.read()
			if len(v.Elems) != 3 {
				t.Fatalf("UNSUBSCRIBE: %s", v)
			}
			un = append(un, v.Elems[0].String()+" "+v.Elems[1].String())
		}
		sort.Strings(un)
		return strings.Join(got, " "), strings.Join(un, " ")
	}
	wc, wu := sets(r.Addr)
	gc, gu := sets(s.Addr().String())
	if gc != wc || gu != wu {
		t.Errorf("PUBSUB CHANNELS x*: %s, redis-server %s\nUNSUBSCRIBE: %q\nredis-server %q", gc, wc, gu, wu)
	}
}

// read2 sends a command and returns its reply.
func (c *rawConn) read2(args ...string) (resp.Value, []byte) {
	c.t.Helper()
	c.send(args...)
	return c.read()
}

// TestPubsubGoRedis: go-redis v9's PubSub (channels, patterns, its
// health-check PINGs in subscribed mode) over RESP2 and RESP3.
func TestPubsubGoRedis(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			ctx := context.Background()
			s := start(t, Config{})
			rdb := goRedis(t, s, proto, "")
			ps := rdb.Subscribe(ctx, "news")
			defer ps.Close()
			if _, err := ps.Receive(ctx); err != nil {
				t.Fatal(err)
			}
			if err := ps.PSubscribe(ctx, "n*"); err != nil {
				t.Fatal(err)
			}
			if err := ps.Ping(ctx); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(5 * time.Second)
			for {
				n, err := rdb.PubSubNumPat(ctx).Result()
				if err != nil {
					t.Fatal(err)
				}
				if n == 1 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("PSUBSCRIBE not registered")
				}
				time.Sleep(5 * time.Millisecond)
			}
			if n, err := rdb.Publish(ctx, "news", "hi").Result(); err != nil || n != 2 {
				t.Fatalf("PUBLISH: %d, %v", n, err)
			}
			got := map[string]bool{}
			for len(got) < 2 {
				m, err := ps.ReceiveTimeout(ctx, 5*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				switch m := m.(type) {
				case *redis.Message:
					got[m.Pattern+"|"+m.Channel+"|"+m.Payload] = true
				case *redis.Pong, *redis.Subscription:
				default:
					t.Fatalf("unexpected %T %v", m, m)
				}
			}
			if !got["|news|hi"] || !got["n*|news|hi"] {
				t.Errorf("messages: %v", got)
			}
			chans, err := rdb.PubSubChannels(ctx, "*").Result()
			if err != nil || len(chans) != 1 || chans[0] != "news" {
				t.Errorf("PUBSUB CHANNELS: %v, %v", chans, err)
			}
			subs, err := rdb.PubSubNumSub(ctx, "news", "none").Result()
			if err != nil || subs["news"] != 1 || subs["none"] != 0 {
				t.Errorf("PUBSUB NUMSUB: %v, %v", subs, err)
			}
		})
	}
}

// TestPubsubReplicated: PUBLISH on a primary reaches the subscribers of
// its replicas, as Redis propagates it (serve to serve, and Debian's
// redis-server to serve).
func TestPubsubReplicated(t *testing.T) {
	rs := redistest.Start(t, redistest.Options{Extra: []string{"--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0"}})
	p := start(t, Config{})
	for _, primary := range []string{p.Addr().String(), rs.Addr} {
		// Without -replica-skip-unsupported: PUBLISH must not stop
		// replication.
		r := start(t, Config{ReplicaOf: primary})
		rc := dial(t, r)
		waitFor(t, "the replica's link", func() bool { return infoField(rc, "replication", "master_link_status") == "up" })
		sub := dial(t, r)
		sub.send("SUBSCRIBE", "news")
		sub.read()
		pc := dialAddr(t, primary)
		if got := pc.do("PUBLISH", "news", "hi"); got != ":0" {
			t.Errorf("PUBLISH on the primary: %s", got)
		}
		if v, _ := sub.read(); v.String() != `*[$"message", $"news", $"hi"]` {
			t.Errorf("the replica's subscriber: %s", v)
		}
		// Inside a MULTI block, and a write after it still replicated.
		pc.do("MULTI")
		pc.do("PUBLISH", "news", "in")
		pc.do("SET", "k", "v")
		pc.do("EXEC")
		if v, _ := sub.read(); v.String() != `*[$"message", $"news", $"in"]` {
			t.Errorf("the replica's subscriber: %s", v)
		}
		waitFor(t, "the replica's SET", func() bool { return rc.do("GET", "k") == `$"v"` })
	}
}

// TestPubsubIdleTimeout: the idle timeout closes a connection that sends
// nothing, but not a subscriber's (Redis's timeout spares pub/sub
// clients), which still gets its messages.
func TestPubsubIdleTimeout(t *testing.T) {
	s := start(t, Config{IdleTimeout: 200 * time.Millisecond})
	idle := dial(t, s)
	idle.do("PING")
	sub := dial(t, s)
	sub.send("SUBSCRIBE", "a")
	sub.read()
	time.Sleep(600 * time.Millisecond)
	idle.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := idle.conn.Read(make([]byte, 1)); err == nil {
		t.Error("an idle connection was not closed")
	}
	pub := dial(t, s)
	if got := pub.do("PUBLISH", "a", "m"); got != ":1" {
		t.Fatalf("PUBLISH: %s (the subscriber was closed)", got)
	}
	if v, _ := sub.read(); v.String() != `*[$"message", $"a", $"m"]` {
		t.Errorf("message: %s", v)
	}
}

// TestReset: RESET as Redis 7.0's: with a password the connection must
// authenticate again; RESP3 returns to RESP2; the name goes.
func TestReset(t *testing.T) {
	s := start(t, Config{Password: "pw"})
	c := dial(t, s)
	for _, step := range [][2]string{
		{"AUTH pw", "+OK"}, {"CLIENT SETNAME n", "+OK"}, {"RESET", "+RESET"}, {"GET k", "-NOAUTH Authentication required."},
		{"HELLO 3 AUTH default pw", ""}, {"CLIENT GETNAME", "_"}, {"RESET", "+RESET"}, {"AUTH pw", "+OK"}, {"GET k", "$-1"},
	} {
		if got := c.do(strings.Fields(step[0])...); step[1] != "" && got != step[1] {
			t.Errorf("%s: %s, want %s", step[0], got, step[1])
		}
	}
}
