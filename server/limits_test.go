package server

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"math/big"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bloomlab/bloomlab/server/internal/resp"
)

// TestInline: inline commands (as telnet and nc send them), with quotes,
// and pipelined multibulk commands answered in order.
func TestInline(t *testing.T) {
	s := start(t, Config{})
	c := dial(t, s)
	c.sendRaw("PING\r\nBF.ADD f \"a b\"\r\nBF.EXISTS f 'a b'\nbf.exists f a\r\n")
	for _, want := range []string{"+PONG", ":1", ":1", ":0"} {
		if v, _ := c.read(); v.String() != want {
			t.Fatalf("got %v, want %s", v, want)
		}
	}
	var pipe bytes.Buffer
	for i := 0; i < 1000; i++ {
		pipe.Write(resp.Command("BF.ADD", "p", fmt.Sprint(i)))
	}
	c.sendRaw(pipe.String())
	for i := 0; i < 1000; i++ {
		if v, _ := c.read(); v.Kind != ':' {
			t.Fatalf("pipelined add %d: %v", i, v)
		}
	}
	pipe.Reset()
	for i := 0; i < 1000; i++ {
		pipe.Write(resp.Command("BF.EXISTS", "p", fmt.Sprint(i)))
	}
	c.sendRaw(pipe.String())
	for i := 0; i < 1000; i++ {
		if v, _ := c.read(); v.String() != ":1" {
			t.Fatalf("pipelined exists %d: %v", i, v)
		}
	}
}

// TestMalformed: malformed RESP gets Redis's protocol error and the
// connection is closed; the server goes on serving others.
func TestMalformed(t *testing.T) {
	s := start(t, Config{MaxBulk: 1 << 20, MaxArgs: 1000})
	for _, tc := range []struct{ in, want string }{
		{"*x\r\n", "-ERR Protocol error: invalid multibulk length"},
		{"*1\r\n+PING\r\n", "-ERR Protocol error: expected '$', got '+'"},
		{"*1\r\n$2000000\r\n", "-ERR Protocol error: invalid bulk length"},
		{"*1001\r\n", "-ERR Protocol error: invalid multibulk length"},
		{"SET a \"b\r\n", "-ERR Protocol error: unbalanced quotes in request"},
		{"*1\r\n$4\r\nPINGxx", "-ERR Protocol error: expected CRLF after a bulk string"},
		{strings.Repeat("a", 70<<10), "-ERR Protocol error: too big inline request"},
	} {
		c := dial(t, s)
		c.sendRaw(tc.in)
		if v, _ := c.read(); v.String() != tc.want {
			t.Errorf("%.20q: got %v, want %s", tc.in, v, tc.want)
		}
		c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		if n, err := c.conn.Read(make([]byte, 1)); err != io.EOF {
			t.Errorf("%.20q: connection not closed (%d, %v)", tc.in, n, err)
		}
	}
	if got := dial(t, s).do("PING"); got != "+PONG" {
		t.Fatal(got)
	}
}

// TestRedisReplies: the generic commands' replies and error texts, as
// Redis 7.0.15 words them.
func TestRedisReplies(t *testing.T) {
	s := start(t, Config{})
	c := dial(t, s)
	for _, tc := range [][]string{
		{"-ERR unknown command 'FOO', with args beginning with: 'a' 'b' ", "FOO", "a", "b"},
		{"-ERR unknown command 'FOO', with args beginning with: ", "FOO"},
		{"-ERR wrong number of arguments for 'get' command", "GET"},
		{"-ERR wrong number of arguments for 'bf.add' command", "BF.ADD", "f"},
		{"-ERR wrong number of arguments for 'bf.madd' command", "BF.MADD", "f"},
		{"-ERR wrong number of arguments for 'cms.incrby' command", "CMS.INCRBY", "c", "a"},
		{`+OK`, "SELECT", "0"},
		{"-ERR DB index is out of range", "SELECT", "1"},
		{"-ERR value is not an integer or out of range", "SELECT", "x"},
		{"-ERR EXEC without MULTI", "EXEC"},
		{"-ERR DISCARD without MULTI", "DISCARD"},
		{"-ERR no such key", "RENAME", "nokey", "x"},
		{":-2", "TTL", "nokey"},
		{"-ERR invalid cursor", "SCAN", "x"},
		{"-NOPROTO unsupported protocol version", "HELLO", "4"},
		{"-ERR Protocol version is not an integer or out of range", "HELLO", "x"},
		{"-ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?", "AUTH", "x"},
		{"-ERR unknown subcommand 'foo'. Try CLIENT HELP.", "CLIENT", "foo"},
		{`+OK`, "CLIENT", "SETINFO", "lib-name", "go-redis"},
		{`+OK`, "CLIENT", "SETNAME", "me"},
		{`$"me"`, "CLIENT", "GETNAME"},
		{"-ERR Unknown option or number of arguments for CONFIG SET - 'x'", "CONFIG", "SET", "x", "y"},
		{"+none", "TYPE", "nokey"},
		{"-ERR syntax error", "FLUSHALL", "x"},
		{"-ERR error rate must be in the range (0.000000, 1.000000)", "BF.RESERVE", "b", "1", "10"},
		{"-ERR capacity must be in the range [1, 1073741824]", "BF.RESERVE", "b", "0.01", "1073741825"},
		{"-ERR expansion must be in the range [0, 32768]", "BF.RESERVE", "b", "0.01", "10", "EXPANSION", "-1"},
		{"-ERR bad error rate", "BF.RESERVE", "b", "nan", "10"},
		{"-Bad error rate", "BF.INSERT", "b", "ERROR", "2", "ITEMS", "x"},
		{"-Unknown argument received", "BF.INSERT", "b", "FOO", "ITEMS", "x"},
		{"-CMS: invalid width", "CMS.INITBYDIM", "c", "0", "5"},
		{"-CMS: Insufficient memory to create the key", "CMS.INITBYDIM", "c", "100000000", "1000"},
		{"-CMS: Number cannot be negative", "CMS.INITBYDIM", "c", "10", "5"},
	} {
		if tc[0] == "-CMS: Number cannot be negative" {
			c.do(tc[1:]...)
			tc = []string{tc[0], "CMS.INCRBY", "c", "a", "-1"}
		}
		if got := c.do(tc[1:]...); got != tc[0] {
			t.Errorf("%v: got %s, want %s", tc[1:], got, tc[0])
		}
	}
	// CMS counts never wrap: an INCRBY past 2^63 − 1 is refused whole
	// (the first saturates a's counters: RedisBloom's error element).
	if got := c.do("CMS.INCRBY", "c", "a", "9223372036854775000"); got != "*[-CMS: INCRBY overflow]" {
		t.Fatalf("saturating INCRBY: %s", got)
	}
	if got := c.do("CMS.INCRBY", "c", "b", "1", "a", "1000"); got != "-CMS: INCRBY overflow" {
		t.Fatalf("overflow: %s", got)
	}
	if got := c.do("CMS.QUERY", "c", "b"); got != "*[:0]" {
		t.Fatalf("refused INCRBY changed the sketch: %s", got)
	}
	if got := c.do("CMS.MERGE", "c", "1", "c", "WEIGHTS", "-1"); got != "-CMS: MERGE overflow" {
		t.Fatalf("negative weight taking counters below 0: %s", got)
	}
	if got := c.do("CMS.MERGE", "c", "1", "c", "WEIGHTS", "2"); got != "-CMS: MERGE overflow" {
		t.Fatalf("merge overflow: %s", got)
	}
	// MULTI: queued, an error at queueing aborts EXEC.
	c.do("MULTI")
	if got := c.do("BF.ADD", "q", "a"); got != "+QUEUED" {
		t.Fatal(got)
	}
	c.do("NOSUCH")
	if got := c.do("EXEC"); got != "-EXECABORT Transaction discarded because of previous errors." {
		t.Fatal(got)
	}
	if got := c.do("EXISTS", "q"); got != ":0" {
		t.Fatal("aborted transaction applied")
	}
}

// TestMaxMemory: a write that would take memory past the limit is refused
// with Redis's OOM text and changes nothing; reads and deletes go on; a
// growing filter refuses the add that would open a link past the limit.
func TestMaxMemory(t *testing.T) {
	s := start(t, Config{MaxMemory: plusClients(64<<10, 1)})
	c := dial(t, s)
	oom := "-OOM command not allowed when used memory > 'maxmemory'."
	if got := c.do("BF.RESERVE", "big", "0.001", "10000000"); got != oom {
		t.Fatalf("a 17 MiB filter under 64 KiB: %s", got)
	}
	if got := c.do("EXISTS", "big"); got != ":0" {
		t.Fatal("refused filter exists")
	}
	if got := c.do("CMS.INITBYDIM", "c", "1000000", "5"); got != oom {
		t.Fatalf("a 40 MB sketch: %s", got)
	}
	if got := c.do("BF.RESERVE", "g", "0.01", "20000"); got != "+OK" {
		t.Fatal(got)
	}
	// Fill g's first link; the second (twice as large) does not fit.
	var last resp.Value
	for i := 0; i < 25000; i++ {
		c.send("BF.ADD", "g", fmt.Sprint(i))
	}
	refused := 0
	for i := 0; i < 25000; i++ {
		last, _ = c.read()
		if last.Kind == '-' {
			if last.String() != oom {
				t.Fatalf("add %d: %v", i, last)
			}
			refused++
		}
	}
	if refused == 0 {
		t.Fatal("the add that opens a link past maxmemory was accepted")
	}
	if got := c.do("BF.INFO", "g", "FILTERS"); got != "*[:1]" {
		t.Fatalf("links: %s", got)
	}
	if got := c.do("BF.EXISTS", "g", "5"); got != ":1" {
		t.Fatal(got)
	}
	if got := c.do("DEL", "g"); got != ":1" {
		t.Fatal(got)
	}
	if got := c.do("BF.RESERVE", "g2", "0.01", "20000"); got != "+OK" {
		t.Fatalf("after DEL memory is free again: %s", got)
	}
}

// TestConnLimits: idle clients are closed after IdleTimeout, clients past
// MaxClients are refused, an announced huge argument costs nothing until
// its bytes arrive.
func TestConnLimits(t *testing.T) {
	s := start(t, Config{IdleTimeout: 200 * time.Millisecond, MaxClients: 2})
	a, b := dial(t, s), dial(t, s)
	a.do("PING")
	b.do("PING")
	third := dial(t, s)
	third.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	msg, _ := io.ReadAll(third.conn)
	if string(msg) != "-ERR max number of clients reached\r\n" {
		t.Fatalf("third client: %q", msg)
	}
	time.Sleep(400 * time.Millisecond)
	a.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := a.conn.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("idle client not closed: %v", err)
	}
	// A command must arrive whole within the timeout (slowloris).
	c := dial(t, s)
	c.sendRaw("*2\r\n$4\r\nECHO\r\n$100\r\nabc")
	time.Sleep(400 * time.Millisecond)
	c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.conn.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("slow client not closed: %v", err)
	}
}

// TestTLS: with a TLS config the server speaks TLS.
func TestTLS(t *testing.T) {
	key, _ := rsa.GenerateKey(rand.Reader, 2048)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der, _ := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	cert := tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	s := start(t, Config{TLS: &tls.Config{Certificates: []tls.Certificate{cert}}})
	pool := x509.NewCertPool()
	parsed, _ := x509.ParseCertificate(der)
	pool.AddCert(parsed)
	conn, err := tls.Dial("tcp", s.Addr().String(), &tls.Config{RootCAs: pool})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Write(resp.Command("BF.ADD", "f", "x"))
	v, err := resp.NewReplyReader(conn, 0).Read()
	if err != nil || v.String() != ":1" {
		t.Fatalf("over TLS: %v %v", v, err)
	}
	plain, _ := net.Dial("tcp", s.Addr().String())
	defer plain.Close()
	plain.Write(resp.Command("PING"))
	plain.SetReadDeadline(time.Now().Add(5 * time.Second))
	if b, _ := io.ReadAll(plain); bytes.Contains(b, []byte("PONG")) {
		t.Fatal("plain text accepted on a TLS listener")
	}
}

// TestSlowReaderHoldsNoLock: a client that asks for large replies and does
// not read them blocks only itself: replies are sent between commands,
// never while a lock is held, so writers that need the keyspace
// exclusively go on.
func TestSlowReaderHoldsNoLock(t *testing.T) {
	s := start(t, Config{})
	c := dial(t, s)
	c.do("BF.RESERVE", "f", "0.0001", "2000000") // one 4.6 MiB link
	slow := dial(t, s)
	go func() {
		for i := 0; i < 20; i++ {
			slow.conn.Write(resp.Command("BF.SCANDUMP", "f", "1"))
		}
	}()
	time.Sleep(200 * time.Millisecond)
	done := make(chan string, 1)
	go func() { done <- c.do("SET", "x", "y") + c.do("BF.ADD", "f", "k") }()
	select {
	case got := <-done:
		if got != "+OK:1" {
			t.Fatalf("got %s", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a client that does not read its replies blocks the server")
	}
}

// TestUnauthenticatedLimits: with a password, a client that has not
// authenticated may not make the server hold more than Redis lets it: a
// bulk over 16384 bytes or more than 10 arguments is refused at its header
// with Redis's text and the connection closed (Redis 7.0.15 does the same;
// inline commands, at most 64 KiB, are not limited further, as in Redis).
// Before, four such clients could each pin a 512 MiB argument. After AUTH
// the limits are the configured ones.
func TestUnauthenticatedLimits(t *testing.T) {
	s := start(t, Config{Password: "sec"})
	closed := func(c *rawConn, what string) {
		t.Helper()
		c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		if n, err := c.conn.Read(make([]byte, 1)); err != io.EOF {
			t.Errorf("%s: connection not closed (%d, %v)", what, n, err)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"*2\r\n$4\r\nAUTH\r\n$16385\r\n", "-ERR Protocol error: unauthenticated bulk length"},
		{"*1\r\n$536870912\r\n", "-ERR Protocol error: unauthenticated bulk length"},
		{"*11\r\n", "-ERR Protocol error: unauthenticated multibulk length"},
		{"*1048576\r\n", "-ERR Protocol error: unauthenticated multibulk length"},
		{"*2000000\r\n", "-ERR Protocol error: unauthenticated multibulk length"}, // past -max-args: Redis's order
		{"*1\r\n$-1\r\n", "-ERR Protocol error: invalid bulk length"},
	} {
		c := dial(t, s)
		c.sendRaw(tc.in)
		if v, _ := c.read(); v.String() != tc.want {
			t.Errorf("%.20q: got %v, want %s", tc.in, v, tc.want)
		}
		closed(c, tc.in)
	}
	// At the limits: answered, connection open.
	c := dial(t, s)
	big := strings.Repeat("x", 16384)
	for _, tc := range [][]string{
		{"-WRONGPASS invalid username-password pair or user is disabled.", "AUTH", big},
		{"-NOAUTH Authentication required.", "ECHO", big},
		{"-NOAUTH Authentication required.", "BF.MADD", "1", "2", "3", "4", "5", "6", "7", "8", "9"},
	} {
		if got := c.do(tc[1:]...); got != tc[0] {
			t.Errorf("%.30q: got %.80s, want %s", tc[1:], got, tc[0])
		}
	}
	c.sendRaw("AUTH a b c d e f g h i j k\r\n")
	if v, _ := c.read(); v.String() != "-ERR syntax error" {
		t.Errorf("inline command of 12 arguments: %v", v)
	}
	// After AUTH (in the same pipeline) the configured limits apply.
	c.sendRaw("AUTH sec\r\n" + string(resp.Command("ECHO", big+"y")) + string(resp.Command("BF.MADD", "f", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10")))
	for _, want := range []string{"+OK", `$"` + big + `y"`, "*[" + strings.Repeat(":1, ", 9) + ":1]"} {
		if v, _ := c.read(); v.String() != want {
			t.Fatalf("after AUTH: got %.60v, want %.60s", v, want)
		}
	}
	// Without a password there are no such limits.
	open := dial(t, start(t, Config{}))
	if got := open.do("ECHO", big+"y"); got != `$"`+big+`y"` {
		t.Fatalf("no password: %.40s", got)
	}
}

// infoInt returns an integer field of INFO's reply.
func infoInt(t testing.TB, c *rawConn, field string) int64 {
	t.Helper()
	c.send("INFO", "memory")
	v, _ := c.read()
	for _, line := range strings.Split(string(v.Str), "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("INFO %s: %q", field, v)
			}
			return n
		}
	}
	t.Fatalf("INFO memory has no %s", field)
	return 0
}

// sendBig sends a command whose last argument is size bytes of 'x',
// without the final CRLF (the server then holds the argument), from a
// buffer of 1 MiB: the test itself holds nothing large.
func sendBig(c *rawConn, name string, size int) error {
	chunk := bytes.Repeat([]byte{'x'}, 1<<20)
	c.conn.SetWriteDeadline(time.Now().Add(60 * time.Second))
	if _, err := fmt.Fprintf(c.conn, "*2\r\n$%d\r\n%s\r\n$%d\r\n", len(name), name, size); err != nil {
		return err
	}
	for size > 0 {
		n := min(size, len(chunk))
		if _, err := c.conn.Write(chunk[:n]); err != nil {
			return err
		}
		size -= n
	}
	return nil
}

// waitInfo polls INFO until field reaches at least want (a minute at most).
func waitInfo(t testing.TB, c *rawConn, field string, want int64) int64 {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if n := infoInt(t, c, field); n >= want || time.Now().After(deadline) {
			return n
		}
	}
}

// TestClientMemory: the requests clients are sending count in the used
// memory that MaxMemory governs and in INFO's mem_clients_normal. While 8
// connections each hold a 16 MiB argument (to an unknown command), a
// write that would fit without them is refused with OOM; once the
// commands are answered, their buffers are released (not kept for the
// next command) and mem_clients_normal is back at its earlier value, to
// the byte, and the write succeeds. Before, the requests counted nowhere
// and each connection kept its largest buffer. (The 8 × 200 MiB size, and
// the process's RSS, are TestServeClientMemory's in cmd/bloomlab.)
func TestClientMemory(t *testing.T) {
	const conns, size = 8, 16 << 20
	s := start(t, Config{MaxMemory: conns*size + 24<<20})
	ctl := dial(t, s)
	cs := make([]*rawConn, conns)
	for i := range cs {
		cs[i] = dial(t, s)
		// The same small commands before and after: buffers of the same
		// sizes.
		cs[i].do("FOO", strings.Repeat("x", 200))
		cs[i].do("PING")
	}
	// ctl's buffers, once grown by an 8 KiB echo and 6 arguments, hold
	// the commands below and INFO's replies (whose length varies with the
	// figures) without growing.
	ctl.do("ECHO", strings.Repeat("e", 8<<10))
	ctl.do("FOO", "a", "b", "c", "d", "e")
	before, usedBefore := infoInt(t, ctl, "mem_clients_normal"), infoInt(t, ctl, "used_memory")
	errs := make(chan error, conns)
	for _, c := range cs {
		go func() { errs <- sendBig(c, "FOO", size) }()
	}
	for range cs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	// Each buffer is the argument's size (its small buffer before was
	// replaced).
	during := waitInfo(t, ctl, "mem_clients_normal", before+conns*(size-1024))
	if during < before+conns*(size-1024) || during > before+conns*size+1<<20 {
		t.Fatalf("mem_clients_normal %d before, %d while %d connections hold %d bytes each", before, during, conns, size)
	}
	if used := infoInt(t, ctl, "used_memory"); used < usedBefore+conns*(size-1024) {
		t.Fatalf("used_memory %d before, %d during: the requests are not counted", usedBefore, used)
	}
	// A 28.6 MiB filter fits under the limit, but not beside the requests.
	if got := ctl.do("BF.RESERVE", "f", "0.01", "25000000"); got != "-"+errOOM {
		t.Fatalf("a write past maxmemory while clients hold %d bytes: %s", during, got)
	}
	if got := ctl.do("BF.ADD", "small", "k"); got != ":1" {
		t.Fatalf("a write that fits: %s", got)
	}
	ctl.do("DEL", "small")
	for _, c := range cs {
		c.sendRaw("\r\n")
	}
	for _, c := range cs {
		if v, _ := c.read(); !strings.HasPrefix(v.String(), "-ERR unknown command 'FOO', with args beginning with: 'xxx") {
			t.Fatalf("the large command: %.80v", v)
		}
		c.do("FOO", strings.Repeat("x", 200))
		if got := c.do("PING"); got != "+PONG" {
			t.Fatal(got)
		}
	}
	if after := infoInt(t, ctl, "mem_clients_normal"); after != before {
		t.Fatalf("mem_clients_normal %d before, %d during, %d after", before, during, after)
	}
	if used := infoInt(t, ctl, "used_memory"); used != usedBefore {
		t.Fatalf("used_memory %d before, %d after", usedBefore, used)
	}
	if got := ctl.do("BF.RESERVE", "f", "0.01", "25000000"); got != "+OK" {
		t.Fatalf("the same write once the requests are done: %s", got)
	}
	// 128 MiB released in large pieces: returned to the system once
	// releases have stopped for a second.
	for deadline := time.Now().Add(30 * time.Second); s.memReturns.Load() == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d bytes released, not returned to the system", s.released.Load())
		}
	}
	// A MULTI queue is client memory too, released by EXEC or DISCARD.
	q := dial(t, s)
	q.do("MULTI")
	before = infoInt(t, ctl, "mem_clients_normal")
	if got := q.do("ECHO", strings.Repeat("y", 1<<20)); got != "+QUEUED" {
		t.Fatal(got)
	}
	if during := infoInt(t, ctl, "mem_clients_normal"); during < before+1<<20 {
		t.Fatalf("a queued 1 MiB command: mem_clients_normal %d, then %d", before, during)
	}
	q.do("DISCARD")
	// (q keeps its small buffers and the queue's array of one.)
	if after := infoInt(t, ctl, "mem_clients_normal"); after > before+1024 {
		t.Fatalf("after DISCARD: mem_clients_normal %d, was %d", after, before)
	}
}

// TestClientMemoryRefused: a request whose bytes would take the used
// memory past MaxMemory is refused: read to its end without being kept,
// answered with OOM, the connection still in step. The check is made
// before each growth of its buffer: at its header (a request larger than
// the room left is never stored) and as its bytes arrive (another client's
// request took the room meanwhile). The used memory never passes the
// limit by more than the connections' uncounted first 128 KiB.
func TestClientMemoryRefused(t *testing.T) {
	const limit = 64 << 20
	s := start(t, Config{MaxMemory: limit})
	ctl := dial(t, s)
	before := infoInt(t, ctl, "mem_clients_normal")
	oom := "-" + errOOM
	// Larger than the limit: refused, the connection goes on.
	c := dial(t, s)
	if err := sendBig(c, "FOO", 100<<20); err != nil {
		t.Fatal(err)
	}
	c.sendRaw("\r\n")
	if v, _ := c.read(); v.String() != oom {
		t.Fatalf("a 100 MiB request under a 64 MiB limit: %.80v", v)
	}
	if got := c.do("PING"); got != "+PONG" {
		t.Fatalf("after a refused request: %s", got)
	}
	// a announces 48 MiB and sends 8; b sends 40 MiB whole, which fits;
	// a's remaining 40 MiB then do not.
	a, b := dial(t, s), dial(t, s)
	a.sendRaw(fmt.Sprintf("*2\r\n$3\r\nFOO\r\n$%d\r\n", 48<<20))
	a.sendRaw(strings.Repeat("x", 8<<20))
	waitInfo(t, ctl, "mem_clients_normal", before+8<<20)
	if err := sendBig(b, "BAR", 40<<20); err != nil {
		t.Fatal(err)
	}
	waitInfo(t, ctl, "mem_clients_normal", before+48<<20)
	a.sendRaw(strings.Repeat("x", 40<<20) + "\r\n")
	if v, _ := a.read(); v.String() != oom {
		t.Fatalf("a request that no longer fits: %.80v", v)
	}
	b.sendRaw("\r\n")
	if v, _ := b.read(); !strings.HasPrefix(v.String(), "-ERR unknown command 'BAR'") {
		t.Fatalf("the request that fitted: %.80v", v)
	}
	// Refused inside MULTI: the transaction is aborted, as for any OOM.
	a.do("MULTI")
	if err := sendBig(a, "ECHO", 100<<20); err != nil {
		t.Fatal(err)
	}
	a.sendRaw("\r\n")
	if v, _ := a.read(); v.String() != oom {
		t.Fatalf("inside MULTI: %.80v", v)
	}
	if got := a.do("EXEC"); got != "-EXECABORT Transaction discarded because of previous errors." {
		t.Fatal(got)
	}
	for _, x := range []*rawConn{a, b, c} {
		if got := x.do("PING"); got != "+PONG" {
			t.Fatal(got)
		}
	}
	if peak := infoInt(t, ctl, "used_memory_peak"); peak > limit+5*clientFree {
		t.Fatalf("used_memory_peak %d under a limit of %d", peak, limit)
	}
	if after := infoInt(t, ctl, "mem_clients_normal"); after > before+3*clientFree {
		t.Fatalf("mem_clients_normal %d before, %d after", before, after)
	}
	// Every byte accounted is given back when the connections close.
	for _, x := range []*rawConn{a, b, c, ctl} {
		x.conn.Close()
	}
	for deadline := time.Now().Add(10 * time.Second); s.clientMem.Load() != 0 || s.mem.Load() != 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("closed connections leave client memory %d, used memory %d", s.clientMem.Load(), s.mem.Load())
		}
	}
}

// TestClientMemoryAllCounted: every byte clients hold counts in the used
// memory that MaxMemory governs, their small buffers and their fixed
// ones included (Redis counts them too). Connections that each hold less
// than 128 KiB, each a partial argument of 100 KiB, made writes refused
// with OOM once together they take the used memory past the limit; before,
// a connection's first 128 KiB and its 32 KiB of fixed buffers were not
// counted (mem_not_counted_for_evict), so 10,000 connections could hold
// 1.6 GB beyond any limit and a 1 MiB BF.RESERVE here was accepted.
func TestClientMemoryAllCounted(t *testing.T) {
	const conns, part, limit = 60, 100 << 10, 8 << 20
	s := start(t, Config{MaxMemory: limit})
	ctl := dial(t, s)
	ctl.do("ECHO", strings.Repeat("e", 8<<10))
	if got := infoInt(t, ctl, "mem_not_counted_for_evict"); got != 0 {
		t.Fatalf("mem_not_counted_for_evict %d", got)
	}
	before := infoInt(t, ctl, "used_memory")
	if before < 32<<10 {
		t.Fatalf("a connection uses %d bytes: its fixed buffers are not counted", before)
	}
	cs := make([]*rawConn, conns)
	for i := range cs {
		cs[i] = dial(t, s)
		cs[i].sendRaw(fmt.Sprintf("*2\r\n$3\r\nFOO\r\n$%d\r\n%s", part+10, strings.Repeat("x", part)))
	}
	held := int64(conns) * (part + 32<<10)
	used := waitInfo(t, ctl, "used_memory", before+held)
	if used < before+held || used > limit {
		t.Fatalf("used_memory %d with %d connections holding %d bytes each (before: %d)", used, conns, part, before)
	}
	oom := "-" + errOOM
	if got := ctl.do("BF.RESERVE", "f", "0.001", "500000"); got != oom { // 1.1 MiB
		t.Fatalf("a 1.1 MiB filter with %d of %d bytes in use: %s", used, limit, got)
	}
	for _, c := range cs {
		c.conn.Close()
	}
	if after := waitInfoDown(t, ctl, "used_memory", before+4<<10); after > before+4<<10 {
		t.Fatalf("used_memory %d after the connections closed, %d before", after, before)
	}
	if got := ctl.do("BF.RESERVE", "f", "0.001", "500000"); got != "+OK" {
		t.Fatalf("once the connections are closed: %s", got)
	}
}

// TestPipelinedMalformed: a malformed command that arrives in one write
// behind good ones (so the reader's in-place fast paths parse the good
// ones from the buffer) still answers the good ones, then Redis's
// protocol error, then closes the connection.
func TestPipelinedMalformed(t *testing.T) {
	s := start(t, Config{})
	good := "*3\r\n$6\r\nBF.ADD\r\n$1\r\nk\r\n$1\r\na\r\n*3\r\n$9\r\nbf.exists\r\n$1\r\nk\r\n$1\r\na\r\n"
	for _, tc := range []struct{ in, want string }{
		{"*x\r\n", "-ERR Protocol error: invalid multibulk length"},
		{"*1\r\n$x\r\n", "-ERR Protocol error: invalid bulk length"},
		{"*1\r\n$99999999999999999999\r\nPING\r\n", "-ERR Protocol error: invalid bulk length"},
		{"*99999999999999999999\r\n", "-ERR Protocol error: invalid multibulk length"},
		{"*1\r\n$4\r\nPINGxx*1\r\n$4\r\nPING\r\n", "-ERR Protocol error: expected CRLF after a bulk string"},
		{"*1\r\n:4\r\n", "-ERR Protocol error: expected '$', got ':'"},
	} {
		c := dial(t, s)
		c.sendRaw(good + tc.in)
		for _, want := range []string{":0", ":1", tc.want} {
			if v, _ := c.read(); v.String() != want && !(want == ":0" && v.String() == ":1") {
				t.Errorf("%.30q: got %v, want %s", tc.in, v, want)
			}
		}
		c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		if n, err := c.conn.Read(make([]byte, 1)); err != io.EOF {
			t.Errorf("%.30q: connection not closed (%d, %v)", tc.in, n, err)
		}
	}
}

// TestCommandCacheCase: a connection's cache of its last command's table
// entry (keyed by the name as sent) answers alike whatever the case and
// order of names in a pipeline: an unknown name one letter away from the
// cached one is unknown, the cached command's arity is still checked, and
// inside MULTI the cached entry queues as any other.
func TestCommandCacheCase(t *testing.T) {
	s := start(t, Config{})
	c := dial(t, s)
	cmds := [][]string{
		{"bf.add", "q", "1"}, {"BF.ADD", "q", "2"}, {"Bf.Add", "q", "3"}, {"Bf.Add", "q", "3"},
		{"BF.ADE", "q", "4"}, {"Bf.Ad", "q", "4"}, {"Bf.Addd", "q", "4"}, {"Bf.Add", "q"},
		{"Bf.Add", "q", "4"}, {"bf.madd", "q", "5", "1"}, {"bf.mAdd", "q"}, {"bf.exists", "q", "4"},
		{"MULTI"}, {"bf.exists", "q", "5"}, {"bf.exists", "q", "x", "y"}, {"bf.existz", "q", "5"}, {"EXEC"},
		{"bf.exists", "q", "5"},
	}
	want := []string{":1", ":1", ":1", ":0",
		"-ERR unknown command 'BF.ADE', with args beginning with: 'q' '4' ",
		"-ERR unknown command 'Bf.Ad', with args beginning with: 'q' '4' ",
		"-ERR unknown command 'Bf.Addd', with args beginning with: 'q' '4' ",
		"-ERR wrong number of arguments for 'bf.add' command",
		":1", "*[:1, :0]", "-ERR wrong number of arguments for 'bf.madd' command", ":1",
		"+OK", "+QUEUED", "+QUEUED", // a module's command checks its arity when it runs, as in Redis
		"-ERR unknown command 'bf.existz', with args beginning with: 'q' '5' ",
		"-EXECABORT Transaction discarded because of previous errors.",
		":1",
	}
	for _, cmd := range cmds {
		c.send(cmd...)
	}
	for i := range cmds {
		if v, _ := c.read(); v.String() != want[i] {
			t.Errorf("%q: got %v, want %s", cmds[i], v, want[i])
		}
	}
}
