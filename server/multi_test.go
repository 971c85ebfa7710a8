package server

import (
	"bufio"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bloomlab/bloomlab/internal/redistest"
	"github.com/bloomlab/bloomlab/server/internal/resp"
)

// multiTranscript sends SET k v, then MULTI, cmd, EXEC and PING on a
// fresh connection to addr, and returns the replies to cmd, EXEC and
// PING as the comparison sees them: errors and simple replies whole,
// EXEC's array as its length and each element's kind (error elements
// whole), since element contents (client ids, INFO text, times) differ
// between servers.
func multiTranscript(t *testing.T, addr string, cmd []string) []string {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	var b []byte
	for _, c := range [][]string{{"SET", "k", "v"}, {"MULTI"}, cmd, {"EXEC"}, {"PING"}} {
		b = append(b, resp.Command(c...)...)
	}
	if _, err := conn.Write(b); err != nil {
		t.Fatal(err)
	}
	rr := resp.NewReplyReader(bufio.NewReader(conn), 0)
	var out []string
	for i := 0; i < 5; i++ {
		v, err := rr.Read()
		if err == io.EOF {
			out = append(out, "EOF")
			break
		}
		if err != nil {
			t.Fatalf("%v: reading reply %d: %v", cmd, i, err)
		}
		if i < 2 {
			continue // SET, MULTI
		}
		out = append(out, shape(v))
	}
	return out
}

func shape(v resp.Value) string {
	switch {
	case v.Kind == resp.ErrorReply, v.Kind == resp.SimpleString, v.Kind == resp.Integer && v.Int < 0:
		return v.String()
	case v.Kind == resp.ArrayReply && !v.Null:
		parts := make([]string, len(v.Elems))
		for i, e := range v.Elems {
			if e.Kind == resp.ErrorReply {
				parts[i] = e.String()
			} else {
				parts[i] = string(e.Kind)
			}
		}
		return "*" + strconv.Itoa(len(v.Elems)) + "[" + strings.Join(parts, " ") + "]"
	}
	return string(v.Kind)
}

// TestMultiLikeRedis: inside MULTI, every command of the table that Redis
// 7.0 also has is queued, refused or run at once as Debian's
// redis-server answers it, with the same texts: SAVE and SHUTDOWN are
// refused (ERR Command not allowed inside a transaction) and make EXEC
// answer EXECABORT; UNWATCH is queued; nested MULTI and WATCH are refused
// without aborting; QUIT, DISCARD and EXEC run at once; arity errors and
// unknown subcommands (CLIENT FOO, CONFIG GET without a pattern) are
// refused at queueing and abort the transaction. Before, SHUTDOWN inside
// MULTI stopped the server at once.
func TestMultiLikeRedis(t *testing.T) {
	r := redistest.Start(t, redistest.Options{Extra: []string{"--enable-debug-command", "yes"}})
	s := start(t, Config{Dir: t.TempDir()})
	addr := s.Addr().String()
	cases := [][]string{
		{"del", "k"}, {"unlink", "k"}, {"exists", "k"}, {"type", "k"}, {"keys", "*"}, {"scan", "0"}, {"dbsize"},
		{"rename", "k", "k2"}, {"rename", "nokey", "k2"}, {"expire", "k", "100"}, {"pexpire", "k", "100"},
		{"expireat", "k", "100"}, {"pexpireat", "k", "100"}, {"expire", "k", "x"}, {"ttl", "k"}, {"pttl", "k"},
		{"persist", "k"}, {"dump", "k"}, {"dump", "nokey"}, {"restore", "k3", "0", "x"}, {"restore", "k3", "-1", "x"},
		{"restore", "k3", "0", "x", "FOO"}, {"flushdb"}, {"flushall"}, {"set", "k", "v"}, {"set", "k", "v", "FOO"}, {"get", "k"},
		{"ping"}, {"echo", "x"}, {"hello", "3"}, {"hello", "2"}, {"hello", "4"}, {"auth", "x"}, {"auth", "default", "x"},
		{"select", "0"}, {"quit"}, {"reset"},
		{"client", "id"}, {"client", "list"}, {"client", "info"}, {"client", "setname", "x"}, {"client", "getname"},
		{"client", "foo"}, {"client", "id", "x"}, {"client", "setname"}, {"client"},
		{"command", "count"}, {"command", "info", "get"}, {"command", "docs", "get"}, {"command", "foo"},
		{"command", "count", "x"},
		{"config", "get", "maxmemory"}, {"config", "set", "x", "y"}, {"config", "resetstat"}, {"config", "foo"},
		{"config", "get"}, {"config", "resetstat", "x"}, {"config"},
		{"module", "list"}, {"module", "foo"}, {"module", "list", "x"}, {"module"},
		{"memory", "usage", "nokey"}, {"memory", "usage", "nokey", "SAMPLES", "5"}, {"memory", "usage", "nokey", "SAMPLES", "-1"},
		{"memory", "usage", "nokey", "SAMPLES", "1", "samples", "0"}, {"memory", "usage", "nokey", "SAMPLES", "1", "samples"}, {"memory", "foo"}, {"memory", "usage"}, {"memory"},
		{"info", "server"}, {"lastsave"}, {"bgsave"}, {"bgrewriteaof"}, {"save"}, {"save", "x"},
		{"shutdown"}, {"shutdown", "NOSAVE"}, {"shutdown", "ABORT"}, {"shutdown", "FOO"},
		{"multi"}, {"exec"}, {"discard"}, {"watch", "k"}, {"watch"}, {"unwatch"}, {"unwatch", "x"},
		// DEBUG RELOAD itself differs: Redis reloads its RDB file (NOSAVE
		// without one fails); this server refuses a reload that would
		// save inside MULTI (TestDebugRefusals).
		{"debug", "foo"}, {"debug", "reload", "x"}, {"debug", "reload", "MERGE", "x"},
		{"nosuchcommand", "x"},
		// Replication: PSYNC and SYNC are refused (no_multi); the rest
		// queue, as Sentinel's reconfiguration block needs REPLICAOF to.
		{"wait", "0", "0"}, {"role"}, {"replicaof", "no", "one"}, {"slaveof", "no", "one"},
		{"replconf", "listening-port", "1"}, {"replconf", "x"}, {"psync", "?", "-1"}, {"sync"},
		// Sentinel's reconfiguration block: every part queues.
		{"config", "rewrite"}, {"client", "kill", "TYPE", "pubsub"}, {"client", "kill", "TYPE", "foo"},
		{"client", "kill", "1.2.3.4:5"}, {"client", "kill", "ID", "x"}, {"client", "kill", "SKIPME", "maybe"}, {"client", "kill"},
		// Pub/sub: queued; EXEC runs them (the connection is subscribed
		// after it: PING answers ["pong", ""] in RESP2).
		{"subscribe", "ch"}, {"subscribe", "ch", "ch2"}, {"psubscribe", "c*"}, {"unsubscribe"}, {"unsubscribe", "ch"},
		{"punsubscribe"}, {"punsubscribe", "c*"}, {"publish", "ch", "m"}, {"pubsub", "numpat"}, {"pubsub", "channels"},
		{"pubsub", "channels", "c*", "x"}, {"pubsub", "numsub", "ch"}, {"pubsub", "help"}, {"pubsub", "foo"},
		{"pubsub", "numpat", "x"}, {"pubsub"},
	}
	// Every command of the table that Redis has, once with its arity
	// broken.
	seen := map[string]bool{}
	for _, c := range cases {
		seen[c[0]] = true
	}
	for _, c := range fuzzable() {
		if strings.Contains(c.name, ".") {
			continue // RedisBloom's: not in redis-server
		}
		if !seen[c.name] {
			t.Errorf("no MULTI case for %s", c.name)
		}
		switch n := c.arity; {
		case n >= 0:
			cases = append(cases, append([]string{c.name}, strings.Split(strings.Repeat("x ", n), " ")[:n]...))
		case n < -1:
			cases = append(cases, append([]string{c.name}, strings.Split(strings.Repeat("x ", -n-2), " ")[:-n-2]...))
		}
	}
	for _, c := range cases {
		want := multiTranscript(t, r.Addr, c)
		got := multiTranscript(t, addr, c)
		if strings.Join(got, " | ") != strings.Join(want, " | ") {
			t.Errorf("MULTI, %s, EXEC, PING:\n got %v\nwant %v (redis-server)", strings.Join(c, " "), got, want)
		}
	}
	select {
	case <-s.Done():
		t.Fatal("the server stopped")
	default:
	}
}
