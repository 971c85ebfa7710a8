package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/bloomlab/bloomlab"
	"github.com/bloomlab/bloomlab/cuckoo"
	"github.com/bloomlab/bloomlab/scalable"
	"github.com/bloomlab/bloomlab/server"
	"github.com/redis/go-redis/v9"
)

// serveProcess starts `bloomlab serve` as a real process (the test binary
// re-executed as the command) on a free loopback port and returns it with
// its address, once it listens. Its standard error is kept in log.
type serveProc struct {
	cmd  *exec.Cmd
	addr string
	mu   sync.Mutex
	log  strings.Builder
	done chan struct{}
}

func startServe(t *testing.T, dir string, args ...string) *serveProc {
	t.Helper()
	p := &serveProc{done: make(chan struct{})}
	p.cmd = process(dir, nil, append([]string{"serve", "-addr", "127.0.0.1:0", "-dir", dir}, args...)...)
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.log.WriteString(line + "\n")
			p.mu.Unlock()
			if a, ok := strings.CutPrefix(line, "bloomlab serve: listening on "); ok {
				addr <- strings.Fields(a)[0]
			}
		}
	}()
	select {
	case p.addr = <-addr:
	case <-time.After(60 * time.Second):
		p.cmd.Process.Kill()
		t.Fatalf("serve did not start: %s", p.stderr())
	}
	t.Cleanup(func() { p.cmd.Process.Kill(); p.cmd.Wait() })
	return p
}

func (p *serveProc) stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

func client(addr string) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DisableIdentity: true,
		ReadTimeout: 20 * time.Second, WriteTimeout: 20 * time.Second})
}

// TestKill9 is the durability test: with -appendfsync always, several
// clients add keys in pipelines; the server is killed with SIGKILL
// mid-load and started again on the same directory. Every key whose add
// was acknowledged must be present (0 false negatives), and BF.CARD,
// BF.INFO and the acknowledgments must agree.
func TestKill9(t *testing.T) {
	kill9(t, func(w, _ int) int { return w }, true, false, "")
}

// TestKill9Snapshots is TestKill9 with a client asking for snapshots
// (BGSAVE) all along: the kill lands anywhere in a snapshot's sequence
// (log rotation, the snapshot's write and rename, the removal of the old
// logs), and nothing acknowledged may be lost.
func TestKill9Snapshots(t *testing.T) {
	kill9(t, func(w, _ int) int { return w }, true, true, "")
}

// TestKill9SharedKeys is TestKill9 with the clients adding the same keys
// two at a time (each batch number is taken by two pipelines), so that
// most acknowledgments are a 0, "already present", that rests on the
// other client's add: one whose record may still be waiting for its
// fsync. Those must survive the kill too.
func TestKill9SharedKeys(t *testing.T) {
	var next atomic.Int64
	kill9(t, func(int, int) int { return int(next.Add(1)-1) / 2 }, false, false, "")
}

// TestKill9Blocked is TestKill9Snapshots on a key of the blocked layout
// (the server started with -bf-layout blocked, the key made by the first
// BF.ADD), restarted with the default layout: the key keeps its layout
// (the log's record of its creation says LAYOUT BLOCKED, and the
// snapshot holds the chain) and loses nothing acknowledged.
func TestKill9Blocked(t *testing.T) {
	kill9(t, func(w, _ int) int { return w }, true, true, "blocked")
}

// kill9 runs the durability test; batchOf gives the batch number of a
// client's next pipeline (the keys are b-<batch>-<i>, or w<w>-… when
// perClient is set); with saves, a further client asks for snapshots
// (BGSAVE) without pause; a layout ("blocked") is the first server's
// -bf-layout, which the key must keep after a restart without it.
func kill9(t *testing.T, batchOf func(w, batch int) int, perClient, saves bool, layout string) {
	dir := t.TempDir()
	first := []string{"-appendfsync", "always", "-save", "0"}
	if layout != "" {
		first = append(first, "-bf-layout", layout)
	}
	p := startServe(t, dir, first...)
	ctx := context.Background()
	const clients = 4
	acked := make([][]string, clients)
	added := make([]int, clients) // acknowledged replies 1
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := 0; w < clients; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rdb := client(p.addr)
			defer rdb.Close()
			for batch := 0; ; batch++ {
				select {
				case <-stop:
					return
				default:
				}
				keys := make([]string, 50)
				pipe := rdb.Pipeline()
				cmds := make([]*redis.BoolCmd, len(keys))
				b := batchOf(w, batch)
				for i := range keys {
					if perClient {
						keys[i] = fmt.Sprintf("w%d-%d-%d", w, batch, i)
					} else {
						keys[i] = fmt.Sprintf("b-%d-%d", b, i)
					}
					cmds[i] = pipe.BFAdd(ctx, "f", keys[i])
				}
				n := acknowledged(pipe.Exec(ctx))
				for i, c := range cmds[:n] {
					acked[w] = append(acked[w], keys[i])
					if c.Val() {
						added[w]++
					}
				}
				if n < len(cmds) {
					return // the server died: the rest is unacknowledged
				}
			}
		}(w)
	}
	snapshots := 0
	if saves {
		bgsaves(p.addr, stop, &wg, time.Millisecond, &snapshots)
	}
	killMidLoad(t, p, stop, &wg)
	total, news := 0, 0
	for w := range acked {
		total += len(acked[w])
		news += added[w]
	}
	if total < 1000 {
		t.Fatalf("only %d adds acknowledged before the kill: the test proves little", total)
	}
	q := startServe(t, dir, "-appendfsync", "always", "-save", "0")
	rdb := client(q.addr)
	defer rdb.Close()
	missing := 0
	for w := range acked {
		missing += absentAfterKill(t, "f", acked[w], func(args ...any) ([]bool, error) {
			return rdb.BFMExists(ctx, "f", args...).Result()
		})
	}
	card, err := rdb.BFCard(ctx, "f").Result()
	if err != nil {
		t.Fatal(err)
	}
	info, err := rdb.BFInfo(ctx, "f").Result()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d adds acknowledged (%d new), %d snapshots started, 0 of them may be lost; after restart: %d missing, CARD %d, BF.INFO %+v", total, news, snapshots, missing, card, info)
	if missing != 0 {
		t.Fatalf("%d false negatives over %d acknowledged keys", missing, total)
	}
	// Unacknowledged adds may have reached the log too: CARD counts at
	// least every acknowledged new key, and agrees with BF.INFO.
	if card < int64(news) || info.ItemsInserted != card || info.Capacity < card {
		t.Fatalf("CARD %d, BF.INFO %+v, %d acknowledged new keys", card, info, news)
	}
	if layout != "" {
		got, err := rdb.Do(ctx, "BF.INFO", "f", "LAYOUT").Result() // RESP3: a map of one
		if err != nil || fmt.Sprint(got) != "map[Layout:"+layout+"]" {
			t.Fatalf("BF.INFO f LAYOUT after the restart: %v, %v; want %s", got, err, layout)
		}
	}
}

// acknowledged returns how many of a pipeline's commands, from the first,
// got their replies. go-redis leaves the commands without an error of
// their own when the pipeline never reached the server (a dial error:
// connection refused once the server is dead) and reports that only in
// Exec's error, so a command's nil Err does not by itself mean a reply.
func acknowledged(cmds []redis.Cmder, err error) int {
	if err == nil {
		return len(cmds)
	}
	n := 0
	for n < len(cmds) && cmds[n].Err() == nil {
		n++
	}
	if n == len(cmds) {
		return 0 // no command failed on its own: none was answered
	}
	return n
}

// bgsaves asks the server at addr for snapshots (BGSAVE), a pause
// apart, until stop is closed or the server dies, counting those started
// in *n (read it after wg.Wait).
func bgsaves(addr string, stop <-chan struct{}, wg *sync.WaitGroup, pause time.Duration, n *int) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		rdb := client(addr)
		defer rdb.Close()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := rdb.BgSave(context.Background()).Err(); err == nil {
				*n++
			} else if !strings.Contains(err.Error(), "in progress") {
				return // the server died
			}
			time.Sleep(pause)
		}
	}()
}

// killMidLoad lets the load run for 1.5 s, kills the server with SIGKILL,
// waits for it to die, then stops the load's goroutines and waits for
// them.
func killMidLoad(t *testing.T, p *serveProc, stop chan struct{}, wg *sync.WaitGroup) {
	t.Helper()
	time.Sleep(1500 * time.Millisecond)
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.done
	p.cmd.Wait()
	close(stop)
	wg.Wait()
}

// absentAfterKill asks mexists, 500 at a time, for the acknowledged items
// of key, reports the first absent ones as errors and returns how many
// are absent.
func absentAfterKill(t *testing.T, key string, items []string, mexists func(args ...any) ([]bool, error)) int {
	t.Helper()
	missing := 0
	for i := 0; i < len(items); i += 500 {
		batch := items[i:min(i+500, len(items))]
		args := make([]any, len(batch))
		for j := range batch {
			args[j] = batch[j]
		}
		res, err := mexists(args...)
		if err != nil {
			t.Fatal(err)
		}
		for j, ok := range res {
			if !ok {
				if missing++; missing < 5 {
					t.Errorf("%s: acknowledged item %s absent after kill -9", key, batch[j])
				}
			}
		}
	}
	return missing
}

// TestServeSignals: SIGTERM lets the commands in flight finish, takes a
// snapshot, empties the log and exits 0; the next start serves the keys.
func TestServeSignals(t *testing.T) {
	dir := t.TempDir()
	p := startServe(t, dir, "-appendfsync", "everysec")
	ctx := context.Background()
	rdb := client(p.addr)
	for i := 0; i < 1000; i++ {
		rdb.BFAdd(ctx, "f", fmt.Sprint(i))
	}
	rdb.Close()
	p.cmd.Process.Signal(syscall.SIGTERM)
	<-p.done // standard error is read to its end before Wait closes it
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("after SIGTERM: %v\n%s", err, p.stderr())
	}
	if !strings.Contains(p.stderr(), "bloomlab serve: stopped") {
		t.Fatalf("stderr: %s", p.stderr())
	}
	if _, err := os.Stat(filepath.Join(dir, "bloomlab.snap")); err != nil {
		t.Fatal(err)
	}
	q := startServe(t, dir)
	rdb = client(q.addr)
	defer rdb.Close()
	if n, err := rdb.BFCard(ctx, "f").Result(); err != nil || n < 990 {
		t.Fatalf("after restart: CARD %d %v", n, err)
	}
	rdb.Do(ctx, "SHUTDOWN")
	<-q.done
	if err := q.cmd.Wait(); err != nil {
		t.Fatalf("after SHUTDOWN: %v", err)
	}
}

// TestServeFlags: -h lists the flags; bad flags are usage errors.
func TestServeFlags(t *testing.T) {
	out, _, code := invoke([]string{"serve", "-h"}, "")
	for _, f := range []string{"-addr", "-dir", "-appendfsync", "-save", "-requirepass", "-tls-cert", "-tls-key", "-maxmemory", "-load", "-timeout", "-maxclients", "-proto-max-bulk-len", "-dialect", "-module-config"} {
		if !strings.Contains(out, f) || code != 0 {
			t.Errorf("serve -h lacks %s", f)
		}
	}
	for _, args := range [][]string{{"serve", "-appendfsync", "sometimes"}, {"serve", "-load", "x"}, {"serve", "-tls-cert", "a"}, {"serve", "-maxmemory", "12q"}, {"serve", "-module-config", "bf-error-rate"}} {
		if _, e, code := invoke(args, ""); code != 2 {
			t.Errorf("%v: exit %d: %s", args, code, e)
		}
	}
	// A bad module config stops the server before it serves.
	_, e, code := invoke([]string{"serve", "-addr", "127.0.0.1:0", "-dir", t.TempDir(), "-module-config", "bf-initial-size=200", "-module-config", "bf-error-rate=2"}, "")
	if want := "module config bf-error-rate=2: Value for `bf-error-rate` must be in the range (0.000000, 1.000000)"; code != 1 || !strings.Contains(e, want) {
		t.Errorf("-module-config bf-error-rate=2: exit %d: %s", code, e)
	}
	var sec seconds
	if err := sec.Set("300"); err != nil || time.Duration(sec) != 5*time.Minute {
		t.Errorf("-save 300: %v %v", time.Duration(sec), err)
	}
	if v, err := parseBytes("1gb"); err != nil || v != 1<<30 {
		t.Errorf("1gb: %d %v", v, err)
	}
}

// TestRedisPullPush: push a RedisBloom-profile file to `bloomlab serve`
// with BF.LOADCHUNK, query it there, pull it back with BF.SCANDUMP: the
// pulled file holds the same filter. Refusals: an existing key without
// -force, a kind with no RedisBloom form, a missing key.
func TestRedisPullPush(t *testing.T) {
	t.Chdir(t.TempDir())
	var keys strings.Builder
	for i := 0; i < 5000; i++ {
		fmt.Fprintf(&keys, "key-%d\n", i)
	}
	os.WriteFile("keys.txt", []byte(keys.String()), 0o644)
	if _, e, code := invoke([]string{"build", "-kind", "scalable", "-profile", "redisbloom", "-fpr", "0.01", "-o", "s.blf", "keys.txt"}, ""); code != 0 {
		t.Fatal(e)
	}
	if _, e, code := invoke([]string{"build", "-kind", "bloom", "-fpr", "0.01", "-o", "b.blf", "keys.txt"}, ""); code != 0 {
		t.Fatal(e)
	}
	srv, err := server.Run(server.Config{Password: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	addr := srv.Addr().String()
	if _, e, code := invoke([]string{"redis", "push", "-addr", addr, "-password", "pw", "-key", "users", "-chunk", "1000", "s.blf"}, ""); code != 0 {
		t.Fatalf("push: %s", e)
	}
	rdb := redis.NewClient(&redis.Options{Addr: addr, Password: "pw"})
	defer rdb.Close()
	ctx := context.Background()
	for i := 0; i < 5000; i += 7 {
		if ok, err := rdb.BFExists(ctx, "users", fmt.Sprint("key-", i)).Result(); err != nil || !ok {
			t.Fatalf("pushed filter lacks key-%d: %v", i, err)
		}
	}
	if _, e, code := invoke([]string{"redis", "push", "-addr", addr, "-password", "pw", "-key", "users", "s.blf"}, ""); code != 1 || !strings.Contains(e, "exists") {
		t.Fatalf("push onto an existing key: %d %s", code, e)
	}
	if _, e, code := invoke([]string{"redis", "push", "-addr", addr, "-password", "pw", "-key", "users", "-force", "s.blf"}, ""); code != 0 {
		t.Fatalf("push -force: %s", e)
	}
	if _, e, code := invoke([]string{"redis", "push", "-addr", addr, "-password", "pw", "-key", "b", "b.blf"}, ""); code != 1 || !strings.Contains(e, "no RedisBloom form") {
		t.Fatalf("push of a bloom file: %d %s", code, e)
	}
	rdb.BFAdd(ctx, "users", "one more")
	if _, e, code := invoke([]string{"redis", "pull", "-addr", addr, "-password", "pw", "-key", "users", "-o", "pulled.blf"}, ""); code != 0 {
		t.Fatalf("pull: %s", e)
	}
	pulled, err := loadFile("pulled.blf")
	if err != nil {
		t.Fatal(err)
	}
	orig, _ := loadFile("s.blf")
	orig.(*scalable.Filter).Add([]byte("one more"))
	if !pulled.(*scalable.Filter).Equal(orig.(*scalable.Filter)) {
		t.Fatal("pulled filter differs from the pushed one plus the key added on the server")
	}
	if _, e, code := invoke([]string{"redis", "pull", "-addr", addr, "-password", "pw", "-key", "nokey", "-o", "x.blf"}, ""); code != 1 || !strings.Contains(e, "does not exist") {
		t.Fatalf("pull of a missing key: %d %s", code, e)
	}
	if _, err := os.Stat("x.blf"); err == nil {
		t.Fatal("a failed pull wrote a file")
	}
	out, _, code := invoke([]string{"redis", "pull", "-addr", addr, "-password", "pw", "-key", "users", "-o", "-"}, "")
	if g, err := bloomlab.ReadFrom(strings.NewReader(out)); code != 0 || err != nil || g.N() != pulled.N() {
		t.Fatalf("pull -o -: %v", err)
	}
	if _, _, code := invoke([]string{"redis", "pull", "-addr", addr, "-key", "users", "-o", "y.blf"}, ""); code != 1 {
		t.Fatal("pull without the password succeeded")
	}
	rdb.Set(ctx, "str", "x", 0)
	if _, e, code := invoke([]string{"redis", "pull", "-addr", addr, "-password", "pw", "-key", "str", "-o", "z.blf"}, ""); code != 1 || !strings.Contains(e, "not a RedisBloom filter") {
		t.Fatalf("pull of a string key: %d %s", code, e)
	}
	_ = io.Discard
}

// TestRedisPushNonScaling: a NONSCALING filter pushes (Redis 8's BF.INFO
// answers its expansion nil, which go-redis's BFInfo could not read: the
// push failed after a good load, saying capacity 0).
func TestRedisPushNonScaling(t *testing.T) {
	t.Chdir(t.TempDir())
	os.WriteFile("keys.txt", []byte("a\nb\nc\n"), 0o644)
	if _, e, code := invoke([]string{"build", "-kind", "scalable", "-profile", "redisbloom", "-nonscaling", "-n", "1000", "-fpr", "0.01", "-o", "s.blf", "keys.txt"}, ""); code != 0 {
		t.Fatal(e)
	}
	srv, err := server.Run(server.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	addr := srv.Addr().String()
	out, e, code := invoke([]string{"redis", "push", "-addr", addr, "-key", "ns", "s.blf"}, "")
	if code != 0 || !strings.Contains(out+e, "3 items") {
		t.Fatalf("push: %d %s %s", code, out, e)
	}
}

// TestRedisPullPushCF: the same for a RedisBloom-profile cuckoo file with
// CF.LOADCHUNK, CF.EXISTS and CF.SCANDUMP; a CF key holding no keys (which
// RedisBloom dumps as nothing) is a clear error, not an empty file.
func TestRedisPullPushCF(t *testing.T) {
	t.Chdir(t.TempDir())
	var keys strings.Builder
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&keys, "key-%d\n", i)
	}
	os.WriteFile("keys.txt", []byte(keys.String()), 0o644)
	if _, e, code := invoke([]string{"build", "-kind", "cuckoo", "-profile", "redisbloom", "-n", "2000", "-o", "c.blf", "keys.txt"}, ""); code != 0 {
		t.Fatal(e)
	}
	srv, err := server.Run(server.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	addr := srv.Addr().String()
	if _, e, code := invoke([]string{"redis", "push", "-addr", addr, "-key", "cf", "-chunk", "500", "c.blf"}, ""); code != 0 {
		t.Fatalf("push: %s", e)
	}
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	ctx := context.Background()
	if typ, _ := rdb.Type(ctx, "cf").Result(); typ != "MBbloomCF" {
		t.Fatalf("TYPE cf = %q", typ)
	}
	for i := 0; i < 3000; i += 7 {
		if ok, err := rdb.CFExists(ctx, "cf", fmt.Sprint("key-", i)).Result(); err != nil || !ok {
			t.Fatalf("pushed filter lacks key-%d: %v", i, err)
		}
	}
	if _, e, code := invoke([]string{"redis", "push", "-addr", addr, "-key", "cf", "c.blf"}, ""); code != 1 || !strings.Contains(e, "exists") {
		t.Fatalf("push onto an existing key: %d %s", code, e)
	}
	rdb.CFAdd(ctx, "cf", "one more")
	rdb.CFDel(ctx, "cf", "key-1")
	if _, e, code := invoke([]string{"redis", "pull", "-addr", addr, "-key", "cf", "-o", "pulled.blf"}, ""); code != 0 {
		t.Fatalf("pull: %s", e)
	}
	pulled, err := loadFile("pulled.blf")
	if err != nil {
		t.Fatal(err)
	}
	orig, _ := loadFile("c.blf")
	o := orig.(*cuckoo.Filter)
	if err := o.Add([]byte("one more")); err != nil {
		t.Fatal(err)
	}
	if !o.Delete([]byte("key-1")) {
		t.Fatal("key-1 not deleted")
	}
	if !pulled.(*cuckoo.Filter).Equal(o) {
		t.Fatal("pulled filter differs from the pushed one with the server's add and delete")
	}
	rdb.CFReserve(ctx, "empty", 100)
	if _, e, code := invoke([]string{"redis", "pull", "-addr", addr, "-key", "empty", "-o", "e.blf"}, ""); code != 1 || !strings.Contains(e, "no keys") {
		t.Fatalf("pull of an empty CF key: %d %s", code, e)
	}
}

// A CF pull is taken under WATCH: a write to the key between two
// CF.SCANDUMP chunks (an add can move fingerprints between buckets, so a
// dump straddling it can miss a key held throughout) discards the dump
// and takes it again; a key written during every dump is refused, never
// written to a file.
func TestRedisPullCFWatched(t *testing.T) {
	t.Chdir(t.TempDir())
	srv, err := server.Run(server.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	addr := srv.Addr().String()
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	ctx := context.Background()
	if err := rdb.CFReserve(ctx, "cf", 1000).Err(); err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		rdb.CFAdd(ctx, "cf", fmt.Sprint("key-", i))
	}
	defer func() { afterScanChunk = nil }()
	writes := 0
	afterScanChunk = func(int64) {
		if writes < 2 {
			writes++
			if err := rdb.CFAdd(ctx, "cf", fmt.Sprint("late-", writes)).Err(); err != nil {
				t.Error(err)
			}
		}
	}
	if _, e, code := invoke([]string{"redis", "pull", "-addr", addr, "-key", "cf", "-o", "p.blf"}, ""); code != 0 {
		t.Fatalf("pull: %s", e)
	}
	g, err := loadFile("p.blf")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"key-0", "key-299", "late-1", "late-2"} {
		if !g.Contains([]byte(k)) {
			t.Errorf("the pulled filter lacks %s", k)
		}
	}
	if g.N() != 302 {
		t.Errorf("pulled N = %d, want 302", g.N())
	}
	afterScanChunk = func(it int64) { rdb.CFAdd(ctx, "cf", fmt.Sprint("always-", it, "-", writes)); writes++ }
	if _, e, code := invoke([]string{"redis", "pull", "-addr", addr, "-key", "cf", "-o", "q.blf"}, ""); code != 1 || !strings.Contains(e, "changed during each") {
		t.Fatalf("pull of a key written throughout: exit %d, %s", code, e)
	}
	if _, err := os.Stat("q.blf"); err == nil {
		t.Error("a refused pull wrote a file")
	}
}

// TestAcknowledgedDialError pins the go-redis behaviour TestKill9 once
// miscounted (199 "lost" keys in one run, all of them from pipelines sent
// after the kill): a pipeline that cannot reach the server returns an
// error from Exec while its commands keep nil errors.
func TestAcknowledgedDialError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	rdb := client(addr)
	defer rdb.Close()
	ctx := context.Background()
	pipe := rdb.Pipeline()
	for i := 0; i < 3; i++ {
		pipe.BFAdd(ctx, "f", i)
	}
	cmds, err := pipe.Exec(ctx)
	if err == nil {
		t.Fatal("Exec to a closed port succeeded")
	}
	nilErrs := 0
	for _, c := range cmds {
		if c.Err() == nil {
			nilErrs++
		}
	}
	t.Logf("Exec: %v; %d of %d commands without an error of their own", err, nilErrs, len(cmds))
	if got := acknowledged(cmds, err); got != 0 {
		t.Fatalf("acknowledged = %d for a pipeline that reached no server", got)
	}
}

// TestKill9Mixed is the durability test for -appendfsync everysec (a
// process crash loses nothing acknowledged: records are written before
// the reply) over the three structures at once, with snapshots all along:
// clients two at a time send the same items to CF.ADDNX (a 0 rests on the
// other client's add), BF.ADD, and CMS.INCRBY of a counter per client.
// After kill -9 and a restart every acknowledged item is present in both
// filters and every counter is at least its acknowledged increments.
func TestKill9Mixed(t *testing.T) {
	dir := t.TempDir()
	p := startServe(t, dir, "-appendfsync", "everysec", "-save", "0")
	ctx := context.Background()
	setup := client(p.addr)
	for _, cmd := range [][]any{{"CF.RESERVE", "cf", 1 << 20}, {"CMS.INITBYDIM", "cm", 1000, 5}} {
		if err := setup.Do(ctx, cmd...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	setup.Close()
	const clients = 4
	acked := make([][]string, clients)
	incrs := make([]int64, clients)
	var next atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := 0; w < clients; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rdb := client(p.addr)
			defer rdb.Close()
			for {
				select {
				case <-stop:
					return
				default:
				}
				b := int(next.Add(1)-1) / 2
				pipe := rdb.Pipeline()
				var cmds []redis.Cmder
				var items []string
				for i := 0; i < 20; i++ {
					item := fmt.Sprintf("b-%d-%d", b, i)
					items = append(items, item)
					cmds = append(cmds, pipe.CFAddNX(ctx, "cf", item), pipe.BFAdd(ctx, "bf", item), pipe.CMSIncrBy(ctx, "cm", fmt.Sprint("c", w), 1))
				}
				n := acknowledged(pipe.Exec(ctx))
				for i := 0; i+3 <= n; i += 3 {
					acked[w] = append(acked[w], items[i/3])
					incrs[w]++
				}
				if n < len(cmds) {
					return
				}
			}
		}(w)
	}
	var snapshots int
	bgsaves(p.addr, stop, &wg, 5*time.Millisecond, &snapshots)
	killMidLoad(t, p, stop, &wg)
	total := 0
	for w := range acked {
		total += len(acked[w])
	}
	if total < 1000 {
		t.Fatalf("only %d items acknowledged before the kill: the test proves little", total)
	}
	q := startServe(t, dir, "-appendfsync", "everysec", "-save", "0")
	rdb := client(q.addr)
	defer rdb.Close()
	missing := 0
	for w := range acked {
		missing += absentAfterKill(t, "cf", acked[w], func(args ...any) ([]bool, error) {
			return rdb.CFMExists(ctx, "cf", args...).Result()
		})
		missing += absentAfterKill(t, "bf", acked[w], func(args ...any) ([]bool, error) {
			return rdb.BFMExists(ctx, "bf", args...).Result()
		})
		got, err := rdb.CMSQuery(ctx, "cm", fmt.Sprint("c", w)).Result()
		if err != nil {
			t.Fatal(err)
		}
		if got[0] < incrs[w] {
			t.Errorf("counter c%d: %d after the restart, %d increments acknowledged", w, got[0], incrs[w])
		}
	}
	t.Logf("%d items acknowledged (CF.ADDNX, BF.ADD, CMS.INCRBY each), %d snapshots started; after restart %d missing", total, snapshots, missing)
}
