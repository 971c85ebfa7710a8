package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bloomlab/bloomlab/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// TestSentinelFailover: real Redis Sentinels (three, quorum 2,
// down-after 1 s) manage one serve primary and two serve replicas, all
// real processes. A go-redis failover client writes BF, CF, CMS, TOPK and
// TDIGEST commands in a loop, each followed by WAIT 1 1000; the primary is
// killed with SIGKILL; Sentinel promotes a replica and the client goes on.
// Every write that WAIT acknowledged on a replica is on the new primary (0
// lost); the old primary, restarted on its address, is made a replica of
// the new one by Sentinel. The time from the kill to the first write that
// succeeds is logged, and the writes without an acknowledgment that were
// lost.
func TestSentinelFailover(t *testing.T) {
	p := startServe(t, t.TempDir(), "-appendfsync", "always")
	r1 := startServe(t, t.TempDir(), "-replicaof", p.addr)
	r2 := startServe(t, t.TempDir(), "-replicaof", p.addr)
	ctx := context.Background()
	pc := client(p.addr)
	defer pc.Close()
	waitUntil(t, "two replicas online", 20*time.Second, func() bool {
		info, _ := pc.Info(ctx, "replication").Result()
		return strings.Count(info, "state=online") == 2
	})
	var sentinels []string
	for i := 0; i < 3; i++ {
		s := redistest.StartSentinel(t, redistest.SentinelOptions{Addr: p.addr})
		sentinels = append(sentinels, s.Addr)
	}
	waitUntil(t, "the sentinels to know each other and the replicas", 30*time.Second, func() bool {
		for _, a := range sentinels {
			sc := redis.NewSentinelClient(&redis.Options{Addr: a})
			peers, err1 := sc.Sentinels(ctx, "mymaster").Result()
			reps, err2 := sc.Replicas(ctx, "mymaster").Result()
			sc.Close()
			if err1 != nil || err2 != nil || len(peers) != 2 || len(reps) != 2 {
				return false
			}
		}
		return true
	})
	fc := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: "mymaster", SentinelAddrs: sentinels,
		MaxRetries: -1, DialTimeout: time.Second, ReadTimeout: 3 * time.Second, WriteTimeout: 3 * time.Second})
	defer fc.Close()

	type write struct {
		i     int
		acked bool // WAIT 1 1000 answered 1 or more
	}
	var (
		mu       sync.Mutex
		writes   []write
		killedAt time.Time
		backAt   time.Time
		errs     []string
	)
	defer func() {
		if t.Failed() {
			mu.Lock()
			t.Logf("killed at %s; the first errors:\n%s", killedAt.Format("15:04:05.000"), strings.Join(errs, "\n"))
			mu.Unlock()
			t.Logf("primary:\n%s\nreplica 1 (%s):\n%s\nreplica 2 (%s):\n%s", p.stderr(), r1.addr, r1.stderr(), r2.addr, r2.stderr())
		}
	}()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			it := "i" + strconv.Itoa(i)
			began := time.Now()
			cmds := [][]any{{"BF.ADD", "bf", it}, {"CF.ADD", "cf", it}, {"CMS.INCRBY", "cms", "k", "1"},
				{"TOPK.ADD", "tk", it}, {"TDIGEST.ADD", "td", strconv.Itoa(i)}}
			var err error
			for _, c := range cmds {
				if err = fc.Do(ctx, c...).Err(); err != nil {
					break
				}
			}
			if err != nil {
				mu.Lock()
				if len(errs) < 20 {
					errs = append(errs, fmt.Sprintf("%s: %v", time.Now().Format("15:04:05.000"), err))
				}
				mu.Unlock()
				time.Sleep(20 * time.Millisecond)
				i-- // the same item again: nothing of it counts until it is written whole
				continue
			}
			n, err := fc.Do(ctx, "WAIT", 1, 1000).Int()
			mu.Lock()
			writes = append(writes, write{i: i, acked: err == nil && n >= 1})
			if !killedAt.IsZero() && began.After(killedAt) && backAt.IsZero() {
				backAt = time.Now()
			}
			mu.Unlock()
		}
	}()
	// The keys exist, then some writes, then the kill.
	for _, c := range [][]any{{"CMS.INITBYDIM", "cms", 1000, 5}, {"TOPK.RESERVE", "tk", 10}, {"TDIGEST.CREATE", "td"}} {
		if err := pc.Do(ctx, c...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(1500 * time.Millisecond)
	mu.Lock()
	killedAt = time.Now()
	mu.Unlock()
	p.cmd.Process.Kill()
	p.cmd.Wait()
	waitUntil(t, "a write after the failover", 60*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return !backAt.IsZero()
	})
	time.Sleep(500 * time.Millisecond)
	close(stop)
	<-done
	mu.Lock()
	failover := backAt.Sub(killedAt)
	all := writes
	mu.Unlock()

	// The new primary holds every acknowledged write.
	var addr []string
	sc0 := redis.NewSentinelClient(&redis.Options{Addr: sentinels[0]})
	defer sc0.Close()
	waitUntil(t, "Sentinel to name the new primary", 30*time.Second, func() bool {
		a, err := sc0.GetMasterAddrByName(ctx, "mymaster").Result()
		addr = a
		return err == nil && a[0]+":"+a[1] != p.addr
	})
	newAddr := addr[0] + ":" + addr[1]
	nc := client(newAddr)
	defer nc.Close()
	lostAcked, lostOther, acked := 0, 0, 0
	for _, w := range all {
		it := "i" + strconv.Itoa(w.i)
		bf, _ := nc.Do(ctx, "BF.EXISTS", "bf", it).Bool()
		cf, _ := nc.Do(ctx, "CF.EXISTS", "cf", it).Bool()
		if w.acked {
			acked++
		}
		switch {
		case bf && cf:
		case w.acked:
			lostAcked++
		default:
			lostOther++
		}
	}
	if lostAcked > 0 {
		t.Errorf("%d of %d writes that WAIT acknowledged are missing after the failover", lostAcked, acked)
	}
	if acked == 0 {
		t.Fatal("no write was acknowledged by a replica")
	}
	t.Logf("failover: %d writes (%d acknowledged by WAIT), %d unacknowledged lost; from the kill to the first write: %s",
		len(all), acked, lostOther, failover.Round(time.Millisecond))

	// The old primary comes back on its address and is made a replica.
	old := startServe(t, p.cmd.Dir, "-addr", p.addr)
	oc := client(old.addr)
	defer oc.Close()
	waitUntil(t, "the old primary to follow the new one", 60*time.Second, func() bool {
		info, _ := oc.Info(ctx, "replication").Result()
		return strings.Contains(info, "role:slave") && strings.Contains(info, "master_link_status:up") &&
			strings.Contains(info, fmt.Sprintf("master_port:%s", addr[1]))
	})
	_ = r1
	_ = r2
}

func waitUntil(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
