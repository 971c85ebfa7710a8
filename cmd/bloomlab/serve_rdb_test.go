package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bloomlab/bloomlab/rdb"
)

// TestServeLoadRDB: `bloomlab serve -load-rdb` of the RDB file Redis
// 7.0.15 with RedisBloom 8.6.2 saved loads its 27 keys (the log line says
// so) and serves them; a restart on the directory keeps them without the
// flag; -db takes a database number.
func TestServeLoadRDB(t *testing.T) {
	file, err := filepath.Abs("../../rdb/testdata/redisbloom-8.6.2-rdb.rdb")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := startServe(t, dir, "-load-rdb", file)
	if !strings.Contains(p.stderr(), "27 keys loaded, 0 skipped (none), 0 expired") {
		t.Fatalf("log: %s", p.stderr())
	}
	ctx := context.Background()
	c := client(p.addr)
	if n, err := c.DBSize(ctx).Result(); err != nil || n != 27 {
		t.Fatalf("DBSIZE %d %v", n, err)
	}
	if typ, err := c.Type(ctx, "tk-b").Result(); err != nil || typ != "TopK-TYPE" {
		t.Fatalf("TYPE tk-b: %s %v", typ, err)
	}
	c.Close()
	p.cmd.Process.Kill()
	p.cmd.Wait()
	q := startServe(t, dir)
	c = client(q.addr)
	defer c.Close()
	if n, err := c.DBSize(ctx).Result(); err != nil || n != 27 {
		t.Fatalf("DBSIZE after a restart: %d %v", n, err)
	}
	if _, e, code := invoke([]string{"serve", "-db", "-1", "-load-rdb", file}, ""); code != 2 {
		t.Errorf("-db -1: exit %d: %s", code, e)
	}
	out, _, _ := invoke([]string{"serve", "-h"}, "")
	for _, f := range []string{"-load-rdb", "-skip-unsupported", "-db"} {
		if !strings.Contains(out, f) {
			t.Errorf("serve -h lacks %s", f)
		}
	}
}

// TestServeLoadRDBKill9: `bloomlab serve -load-rdb` of a 48 MiB file (96
// strings of 512 KiB of random bytes) killed with SIGKILL at several
// points of its start (during the load, the first snapshot's write, or
// after), then started again with the same flags: every key is there and
// complete (its SHA-256), never a part of the file.
func TestServeLoadRDBKill9(t *testing.T) {
	const keys, size = 96, 512 << 10
	file := filepath.Join(t.TempDir(), "dump.rdb")
	sums := map[string][32]byte{}
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriter(f)
	w, err := rdb.NewWriter(bw, 10, false)
	if err != nil {
		t.Fatal(err)
	}
	w.SelectDB(0)
	r := rand.New(rand.NewChaCha8([32]byte{25}))
	buf := make([]byte, size)
	for i := range keys {
		for j := 0; j < size; j += 8 {
			v := r.Uint64()
			for k := range 8 {
				buf[j+k] = byte(v >> (8 * k))
			}
		}
		k := fmt.Sprint("k", i)
		sums[k] = sha256.Sum256(buf)
		w.String([]byte(k), buf)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	ctx := context.Background()
	midLoad := 0
	for _, delay := range []time.Duration{0, 20 * time.Millisecond, 60 * time.Millisecond, 150 * time.Millisecond, 400 * time.Millisecond} {
		dir := t.TempDir()
		cmd := process(dir, nil, "serve", "-addr", "127.0.0.1:0", "-dir", dir, "-load-rdb", file)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(delay)
		cmd.Process.Kill()
		cmd.Wait()
		if _, err := os.Stat(filepath.Join(dir, "bloomlab.snap")); err != nil {
			midLoad++
		}
		p := startServe(t, dir, "-load-rdb", file)
		c := client(p.addr)
		if n, err := c.DBSize(ctx).Result(); err != nil || n != keys {
			t.Fatalf("killed after %v: DBSIZE %d %v", delay, n, err)
		}
		for k, want := range sums {
			v, err := c.Get(ctx, k).Bytes()
			if err != nil || sha256.Sum256(v) != want {
				t.Fatalf("killed after %v: key %s is not the file's (%d bytes, %v)", delay, k, len(v), err)
			}
		}
		c.Close()
		p.cmd.Process.Kill()
		p.cmd.Wait()
	}
	t.Logf("%d of 5 kills came before the first snapshot existed", midLoad)
}
