package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bloomlab/bloomlab/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// redisKeys writes words.txt (2000 keys) and others.txt (2000 other keys)
// in a temporary working directory.
func redisKeys(t *testing.T) {
	t.Chdir(t.TempDir())
	writeKeys(t, "words.txt", "word", 2000)
	writeKeys(t, "others.txt", "other", 2000)
	writeKeys(t, "more.txt", "more", 500)
}

// Redis targets through the command, in process, against a real
// redis-server with a password and a database number: build -o (refused
// over an existing filter without -force, refused for other kinds), query
// (the same output and exit codes as the same filter in a file), add,
// info (text and JSON, from the servers' counts), redis pull and push
// (byte for byte the file), and clear errors for keys that are not
// filters; the password never appears in a message.
func TestRedisTarget(t *testing.T) {
	s := redistest.Start(t, redistest.Options{Password: "s3cret"})
	redisKeys(t)
	T := "redis://default:s3cret@" + s.Addr + "/3?key=words"
	shown := "redis://default:xxxxx@" + s.Addr + "/3?key=words"
	inv := func(args ...string) (string, string, int) {
		o, e, code := invoke(args, "")
		if strings.Contains(o+e, "s3cret") {
			t.Errorf("%v: the password appears in the output:\n%s%s", args, o, e)
		}
		return o, e, code
	}
	want := func(code int, args ...string) (string, string) {
		t.Helper()
		o, e, c := inv(args...)
		if c != code {
			t.Fatalf("%v: exit %d, want %d\nstdout: %s\nstderr: %s", args, c, code, o, e)
		}
		return o, e
	}
	_, e := want(0, "build", "-kind", "blocked", "-fpr", "0.01", "-seed", "5", "-o", T, "words.txt")
	if !strings.Contains(e, shown+": 39 blocks, 1 shard of at most 2.45 KiB, generation ") {
		t.Errorf("build's note: %s", e)
	}
	want(0, "build", "-kind", "blocked", "-fpr", "0.01", "-seed", "5", "-o", "words.blf", "words.txt")
	_, e = want(1, "build", "-kind", "blocked", "-fpr", "0.01", "-o", T, "words.txt")
	if !strings.Contains(e, shown+": a filter exists; -force replaces it") {
		t.Errorf("build over a filter: %s", e)
	}
	_, e = want(2, "build", "-kind", "bloom", "-fpr", "0.01", "-o", T, "words.txt")
	if !strings.Contains(e, "Redis targets hold blocked filters (-kind blocked), not bloom") {
		t.Errorf("build of a bloom filter: %s", e)
	}
	want(0, "build", "-kind", "blocked", "-fpr", "0.01", "-seed", "5", "-force", "-o", T, "words.txt")

	// query: the file's answers, exit codes and output.
	for _, args := range [][]string{
		{"query"}, {"query", "-v"}, {"query", "-c"}, {"query", "-c", "-v"},
	} {
		for _, keys := range []string{"words.txt", "others.txt"} {
			fo, fe, fc := inv(append(append(args, "words.blf"), keys)...)
			ro, re, rc := inv(append(append(args, T), keys)...)
			if fo != ro || fe != re || fc != rc {
				t.Errorf("%v %s: Redis answers differ from the file's: exit %d/%d, stdout %d/%d bytes, stderr %q/%q", args, keys, rc, fc, len(ro), len(fo), re, fe)
			}
		}
	}
	if o, _, c := invoke([]string{"query", T}, "word-7\nnobody\n"); o != "word-7\n" || c != 0 {
		t.Errorf("query from standard input: %q, exit %d", o, c)
	}

	// add, then the filter holds the new keys, and pull gives the file
	// the same adds make locally.
	want(0, "add", T, "more.txt")
	want(0, "add", "words.blf", "more.txt")
	o, _ := want(0, "query", "-c", T, "more.txt")
	if o != "500\n" {
		t.Errorf("after add: %s", o)
	}
	want(0, "redis", "pull", T, "-o", "pulled.blf")
	a, _ := os.ReadFile("pulled.blf")
	b, _ := os.ReadFile("words.blf")
	if !bytes.Equal(a, b) {
		t.Errorf("pull differs from the same filter built and added to locally")
	}

	// info, from the servers' counts.
	o, _ = want(0, "info", T)
	for _, s := range []string{"file:               " + shown, "kind:               blocked", "keys added:         2500",
		"capacity:           2000", "fill ratio:", "generation:", "shards:             1", "metadata key:       words",
		"warning:            2500 keys added, more than the 2000"} {
		if !strings.Contains(o, s) {
			t.Errorf("info lacks %q:\n%s", s, o)
		}
	}
	fo, _ := want(0, "info", "words.blf")
	if strings.Fields(line(o, "fill ratio"))[2] != strings.Fields(line(fo, "fill ratio"))[2] {
		t.Errorf("fill ratio: Redis %q, file %q", line(o, "fill ratio"), line(fo, "fill ratio"))
	}
	o, _ = want(0, "info", "-json", T)
	var r infoReport
	if err := json.Unmarshal([]byte(o), &r); err != nil || r.Keys != 2500 || r.Kind != "blocked" || r.File != shown {
		t.Errorf("info -json: %v %+v", err, r)
	}

	// push: a file to a new key, byte for byte; refused over a filter
	// without -force; a file of another kind refused.
	T2 := strings.Replace(T, "key=words", "key=copy", 1)
	want(0, "redis", "push", "words.blf", T2)
	_, e = want(1, "redis", "push", "words.blf", T2)
	if !strings.Contains(e, "a filter exists; -force replaces it") {
		t.Errorf("push over a filter: %s", e)
	}
	want(0, "redis", "push", "-force", "words.blf", T2)
	want(0, "redis", "pull", T2, "-o", "copy.blf")
	if a, _ := os.ReadFile("copy.blf"); !bytes.Equal(a, b) {
		t.Error("push then pull changed the file")
	}
	want(0, "build", "-kind", "bloom", "-fpr", "0.01", "-o", "bloom.blf", "words.txt")
	_, e = want(1, "redis", "push", "bloom.blf", T2)
	if !strings.Contains(e, "holds a bloom filter; Redis holds blocked filters") {
		t.Errorf("push of a bloom file: %s", e)
	}
	_, e = want(2, "redis", "push", "-addr", "x:1", "words.blf", T2)
	if !strings.Contains(e, "-addr is for RedisBloom keys") {
		t.Errorf("push with -addr and a target: %s", e)
	}

	// Keys that are not filters; a missing key; a bad URL; remove.
	c := redis.NewClient(&redis.Options{Addr: s.Addr, Password: "s3cret", DB: 3, DisableIdentity: true})
	defer c.Close()
	c.Set(context.Background(), "str", "hello", 0)
	c.HSet(context.Background(), "h", "a", "b")
	for _, k := range []struct{ key, says string }{
		{"str", `key "str" holds a string that is not bloomlab metadata`},
		{"h", `key "h" holds a hash, not a bloomlab filter`},
		{"nokey", `no key "nokey": no such filter`},
	} {
		u := strings.Replace(T, "key=words", "key="+k.key, 1)
		if _, e, code := inv("query", u, "words.txt"); code != 2 || !strings.Contains(e, k.says) {
			t.Errorf("query %s: exit %d, %s", k.key, code, e)
		}
		if _, e, code := inv("info", u); code != 1 || !strings.Contains(e, k.says) {
			t.Errorf("info %s: exit %d, %s", k.key, code, e)
		}
		if _, e, code := inv("add", u, "words.txt"); code != 1 || !strings.Contains(e, k.says) {
			t.Errorf("add %s: exit %d, %s", k.key, code, e)
		}
	}
	if _, e, code := inv("build", "-kind", "blocked", "-fpr", "0.01", "-force", "-o", strings.Replace(T, "key=words", "key=str", 1), "words.txt"); code != 1 || !strings.Contains(e, "not bloomlab metadata") {
		t.Errorf("build over a string: exit %d, %s", code, e)
	}
	for _, u := range []string{"redis://" + s.Addr, "redis://" + s.Addr + "?key=", "redis://" + s.Addr + "?key=a{b}"} {
		if _, e, code := inv("query", u, "words.txt"); code != 2 || e == "" {
			t.Errorf("query %s: exit %d, %s", u, code, e)
		}
	}
	if _, e, code := inv("query", "foo://x", "words.txt"); code != 2 || !strings.Contains(e, `unknown scheme "foo"`) {
		t.Errorf("unknown scheme: exit %d, %s", code, e)
	}
	if _, e, code := inv("remove", T, "words.txt"); code != 2 || !strings.Contains(e, "remove takes files") {
		t.Errorf("remove from a target: exit %d, %s", code, e)
	}
	if _, e, code := inv("merge", "-o", "m.blf", "words.blf", T); code != 2 || !strings.Contains(e, "takes files") {
		t.Errorf("merge of a target: exit %d, %s", code, e)
	}
	if _, e, code := inv("query", strings.Replace(T, "s3cret", "wrong", 1), "words.txt"); code != 2 || !strings.Contains(e, "WRONGPASS") || strings.Contains(e, "wrong@") {
		t.Errorf("wrong password: exit %d, %s", code, e)
	}

	// A server that is down: an error, never a key reported absent.
	s.Kill()
	o, e, code := inv("query", "-v", T, "others.txt")
	if code != 2 || o != "" || !strings.Contains(e, "connection refused") {
		t.Errorf("query -v with the server down: exit %d, stdout %q, stderr %s", code, o, e)
	}
}

func line(out, name string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, name+":") {
			return strings.Join(strings.Fields(l), " ")
		}
	}
	return ""
}

// A cluster target: the shards spread over the masters, and every command
// works through it.
func TestRedisClusterTarget(t *testing.T) {
	cl := redistest.StartCluster(t, redistest.ClusterOptions{Masters: 3})
	redisKeys(t)
	T := "redis+cluster://" + strings.Join(cl.Addrs(), ",") + "?key=words"
	for _, args := range [][]string{
		{"build", "-kind", "blocked", "-n", "100000", "-fpr", "0.01", "-o", T, "words.txt"},
		{"build", "-kind", "blocked", "-n", "100000", "-fpr", "0.01", "-o", "words.blf", "words.txt"},
		{"add", T, "more.txt"},
		{"add", "words.blf", "more.txt"},
	} {
		if _, e, code := invoke(args, ""); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, e)
		}
	}
	fo, _, _ := invoke([]string{"query", "words.blf", "words.txt", "others.txt", "more.txt"}, "")
	ro, re, code := invoke([]string{"query", T, "words.txt", "others.txt", "more.txt"}, "")
	if code != 0 || ro != fo {
		t.Errorf("cluster query differs from the file's (exit %d): %s", code, re)
	}
	o, e, code := invoke([]string{"info", T}, "")
	if code != 0 || !strings.Contains(o, "shards:             12") || strings.Count(line(o, "shards per node"), " 4") != 3 {
		t.Errorf("info: exit %d\n%s%s", code, o, e)
	}
	if _, e, code := invoke([]string{"query", "redis+cluster://" + cl.Addrs()[0] + ",nohostport?key=x"}, ""); code != 2 || !strings.Contains(e, `"nohostport" is not HOST:PORT`) {
		t.Errorf("bad cluster URL: exit %d, %s", code, e)
	}
}

// rediss://: TLS, the server's certificate checked against the
// authorities the process trusts (SSL_CERT_FILE here), in a separate
// process as a user would run it.
func TestRedissTarget(t *testing.T) {
	tlsFiles := redistest.NewTLS(t)
	s := redistest.Start(t, redistest.Options{TLS: tlsFiles})
	dir := t.TempDir()
	writeKeys(t, dir+"/words.txt", "word", 1000)
	T := "rediss://" + s.Addr + "?key=tls"
	env := []string{"SSL_CERT_FILE=" + tlsFiles.CA}
	for _, args := range [][]string{
		{"build", "-kind", "blocked", "-fpr", "0.01", "-o", T, "words.txt"},
		{"query", "-c", T, "words.txt"},
	} {
		out, err := process(dir, env, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		if args[0] == "query" && string(out) != "1000\n" {
			t.Errorf("query over TLS: %q", out)
		}
	}
	// Without trusting the authority, the connection is refused.
	out, err := process(dir, []string{"SSL_CERT_FILE=/dev/null"}, "query", "-c", T, "words.txt").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "certificate") {
		t.Errorf("an untrusted certificate: %v, %s", err, out)
	}
}

// An interruption runs what the writers registered (an upload deletes
// its generation) and reports that nothing was written.
func TestInterruptUndo(t *testing.T) {
	ran := false
	done := onInterrupt(func() { ran = true })
	msg := interrupted()
	tmpMu.Unlock()
	done()
	if !ran || msg == "nothing was being written" {
		t.Errorf("ran %v, message %q", ran, msg)
	}
}

// A password someone forgot to percent-encode never appears, whole or in
// part, in a message: neither in the redacted URL nor in net/url's parse
// error (which quotes the URL, or its "port").
func TestRedisURLPasswordNotPrinted(t *testing.T) {
	for _, u := range []string{
		"redis://:p@ss:w/rd@127.0.0.1:1/0?key=z",
		"redis://alice:p@ss:w/rd@127.0.0.1:1?key=z",
		"rediss://:s3:cr/et@127.0.0.1:1/0?key=z",
		"redis+cluster://:p@ss:w/rd@127.0.0.1:1,127.0.0.1:2?key=z",
		"rediss+cluster://bob:s3:cr/et@127.0.0.1:1?key=z",
	} {
		o, e, code := invoke([]string{"info", u}, "")
		if code != 2 {
			t.Errorf("info %s: exit %d, want 2 (usage)\n%s%s", u, code, o, e)
		}
		for _, piece := range []string{"p@ss", "ss:w", "w/rd", ":w", "s3:cr", "cr/et", "s3"} {
			if strings.Contains(o+e, piece) {
				t.Errorf("info %s: %q of the password appears in the output:\n%s%s", u, piece, o, e)
			}
		}
		if !strings.Contains(e, "percent-encode") {
			t.Errorf("info %s: no hint to percent-encode:\n%s", u, e)
		}
	}
	if got, want := redact("redis://:p@ss:w/rd@h:1/0?key=z"), "redis://:xxxxx@h:1/0?key=z"; got != want {
		t.Errorf("redact = %q, want %q", got, want)
	}
}

// dialCount counts a client's dial attempts.
type dialCount struct{ n atomic.Int64 }

func (h *dialCount) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		h.n.Add(1)
		return next(ctx, network, addr)
	}
}
func (h *dialCount) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h *dialCount) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// A server that is down is an error after one dial per attempt, from
// every client the command makes: go-redis (v9.15 and later) otherwise
// dials 5 times, 100 ms apart, in each attempt, so that one command to a
// refused port took 1.7 s instead of 0.16 s, and to an address that does
// not answer would take 5 dial timeouts per attempt. The command, run as
// a user runs it, prints its error alone (go-redis logged each failed dial
// on standard error).
func TestRedisDialOnce(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	ctx := context.Background()
	check := func(name string, c redis.UniversalClient, attempts int) {
		t.Helper()
		h := &dialCount{}
		switch c := c.(type) {
		case *redis.Client:
			c.AddHook(h)
		case *redis.ClusterClient:
			c.OnNewNode(func(n *redis.Client) { n.AddHook(h) })
		}
		defer c.Close()
		err := c.Get(ctx, "x").Err()
		if err == nil || !strings.Contains(err.Error(), "connection refused") {
			t.Errorf("%s: GET with the server down: %v", name, err)
		}
		if n := h.n.Load(); n != int64(attempts) {
			t.Errorf("%s: %d dials for %d attempts, want one each", name, n, attempts)
		}
	}
	for _, u := range []string{"redis://" + addr + "?key=x", "redis+cluster://" + addr + "?key=x"} {
		tg, err := parseRedisTarget(u)
		if err != nil {
			t.Fatal(err)
		}
		attempts := 1
		if c, ok := tg.c.(*redis.Client); ok {
			attempts += c.Options().MaxRetries // go-redis's URL default: 3 retries
		}
		check(u, tg.c, attempts)
	}
	check("-addr", redis.NewClient(redisBloomOptions(addr, "", "", time.Second)), 1)

	dir := t.TempDir()
	for _, args := range [][]string{
		{"query", "redis://" + addr + "?key=x", "/dev/null"},
		{"redis", "pull", "-addr", addr, "-key", "x", "-o", "x.blf"},
	} {
		var stdout, stderr bytes.Buffer
		c := process(dir, nil, args...)
		c.Stdout, c.Stderr = &stdout, &stderr
		t0 := time.Now()
		err := c.Run()
		t.Logf("%v: %v, %v", args, err, time.Since(t0))
		if err == nil || stdout.Len() != 0 || strings.Count(stderr.String(), "\n") != 1 ||
			!strings.HasPrefix(stderr.String(), "bloomlab: ") || !strings.Contains(stderr.String(), "connection refused") {
			t.Errorf("%v with the server down: %v, stdout %q, stderr:\n%s", args, err, stdout.String(), stderr.String())
		}
	}
}
