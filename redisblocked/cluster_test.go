package redisblocked

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// clusterClient returns a cluster client whose node clients count round
// trips in h, with the options the package doc recommends for a dead node
// to be an error quickly (one dial per attempt).
func clusterClient(t *testing.T, cl *redistest.Cluster, h *countHook) *redis.ClusterClient {
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs(), DisableIdentity: true,
		DialTimeout: time.Second, DialerRetries: 1, ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second,
		MaxRedirects: 3, MaxRetries: 1})
	if h != nil {
		c.OnNewNode(func(n *redis.Client) { n.AddHook(h) })
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// A 3-master cluster: the shards spread evenly over the masters (their
// keys' slots are what CLUSTER KEYSLOT says), every answer is the local
// filter's, a single operation is one round trip to one node and a batch
// one per node; operations go on through a slot migration (ASK, then
// MOVED), with both methods.
func TestCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("a cluster and a slot migration: the full run has it")
	}
	cl := redistest.StartCluster(t, redistest.ClusterOptions{Masters: 3})
	h := &countHook{}
	c := clusterClient(t, cl, h)
	ctx := context.Background()
	if n, err := Masters(ctx, c); err != nil || n != 3 {
		t.Fatalf("Masters = %d, %v", n, err)
	}
	node0 := cl.Nodes[0].Client("")
	var probe []string
	for i := range 200 {
		probe = append(probe, fmt.Sprintf("k%d", i), fmt.Sprintf("users:{%d}:g0123456789abcdef:s%d", i*7919, i))
	}
	for _, k := range probe {
		if got, want := Slot(k), int(node0.ClusterKeySlot(ctx, k).Val()); got != want {
			t.Fatalf("Slot(%q) = %d, CLUSTER KEYSLOT %d", k, got, want)
		}
	}

	added := keys("c", 20000)
	for _, m := range methods {
		want := local(t, 50000)
		for _, k := range added[:10000] {
			want.Add(k)
		}
		f, err := UploadFilter(ctx, c, "cl-"+m.String(), want, &Config{Method: m})
		if err != nil {
			t.Fatal(err)
		}
		if p := f.Plan(); p.Shards != 3*ShardsPerMaster {
			t.Errorf("%v: %d shards on 3 masters, want %d", m, p.Shards, 3*ShardsPerMaster)
		}
		in, err := f.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		per := map[string]int{}
		for _, s := range in.Shards {
			per[s.Node]++
			if n := cl.NodeOfSlot(s.Slot); n == nil || n.Addr != s.Node {
				t.Errorf("shard %s: Info says node %s", s.Key, s.Node)
			}
		}
		if len(per) != 3 {
			t.Errorf("%v: shards per node %v, want 4 on each of 3", m, per)
		}
		for _, n := range per {
			if n != ShardsPerMaster {
				t.Errorf("%v: shards per node %v, want 4 on each", m, per)
			}
		}
		if err := f.AddBatch(ctx, added[10000:]); err != nil {
			t.Fatal(err)
		}
		for _, k := range added[10000:] {
			want.Add(k)
		}
		all := append(keys("absent", 5000), added...)
		check := func(stage string) {
			t.Helper()
			got, err := f.ContainsBatch(ctx, all, nil)
			if err != nil {
				t.Fatalf("%v, %s: %v", m, stage, err)
			}
			for i, k := range all {
				if got[i] != want.Contains(k) {
					t.Fatalf("%v, %s: key %q: %v, local %v", m, stage, k, got[i], want.Contains(k))
				}
			}
			for _, k := range all[4990:5010] {
				if v, err := f.Contains(ctx, k); err != nil || v != want.Contains(k) {
					t.Fatalf("%v, %s: Contains(%q) = %v, %v", m, stage, k, v, err)
				}
			}
			extra := []byte(fmt.Sprint("extra-", stage))
			if err := f.Add(ctx, extra); err != nil {
				t.Fatalf("%v, %s: %v", m, stage, err)
			}
			want.Add(extra)
		}
		check("uploaded")
		var buf bytes.Buffer
		if _, err := f.WriteTo(ctx, &buf); err != nil || !bytes.Equal(buf.Bytes(), fileBytes(t, want)) {
			t.Fatalf("%v: download differs: %v", m, err)
		}

		// Round trips: one per single operation, one per node per batch.
		h.reset()
		if err := f.AddString(ctx, "one"); err != nil {
			t.Fatal(err)
		}
		want.AddString("one")
		if n := h.rt(); n != 1 {
			t.Errorf("%v: Add took %d round trips", m, n)
		}
		h.reset()
		f.ContainsString(ctx, "one")
		if n := h.rt(); n != 1 {
			t.Errorf("%v: Contains took %d round trips", m, n)
		}
		h.reset()
		if _, err := f.ContainsBatch(ctx, added[:1000], nil); err != nil {
			t.Fatal(err)
		}
		if n := h.rt(); n != 3 {
			t.Errorf("%v: a batch of 1000 keys took %d round trips, want 3 (one per node)", m, n)
		}
		// Batches of other keys, whose GETRANGEs land on other shards than
		// the commands reused from the batches before: still one round
		// trip per node (no command is sent to a node that answers MOVED).
		for i := range 6 {
			h.reset()
			if _, err := f.ContainsBatch(ctx, keys(fmt.Sprint("rt", i), 100+300*i), nil); err != nil {
				t.Fatal(err)
			}
			if n := h.rt(); n != 3 {
				t.Errorf("%v: batch %d of %d other keys took %d round trips, want 3 (one per node)", m, i, 100+300*i, n)
			}
		}

		// Migrate the slot of shard 0 to another node, operating at each
		// stage: keys still on the source, keys moved (ASK), slot
		// reassigned (MOVED).
		l := f.cur.Load()
		slot := Slot(l.keys[0])
		from := cl.NodeOfSlot(slot)
		to := cl.Nodes[0]
		if to == from {
			to = cl.Nodes[1]
		}
		migrate(t, cl, slot, from, to, check)
		if n := cl.NodeOfSlot(slot); n != to {
			t.Fatalf("slot %d not moved", slot)
		}
		check("after the migration")
	}
}

// migrate moves slot from one node to another as redis-cli --cluster
// reshard does, calling at after each stage.
func migrate(t *testing.T, cl *redistest.Cluster, slot int, from, to *redistest.Server, at func(stage string)) {
	ctx := context.Background()
	fc, tc := from.Client(""), to.Client("")
	fromID, toID := fc.Do(ctx, "CLUSTER", "MYID").Val().(string), tc.Do(ctx, "CLUSTER", "MYID").Val().(string)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(tc.Do(ctx, "CLUSTER", "SETSLOT", slot, "IMPORTING", fromID).Err())
	must(fc.Do(ctx, "CLUSTER", "SETSLOT", slot, "MIGRATING", toID).Err())
	at("slot migrating, keys on the source")
	keys, err := fc.ClusterGetKeysInSlot(ctx, slot, 1000).Result()
	must(err)
	if len(keys) == 0 {
		t.Fatalf("no keys in slot %d", slot)
	}
	args := []any{"MIGRATE", "127.0.0.1", to.Port, "", 0, 5000, "KEYS"}
	for _, k := range keys {
		args = append(args, k)
	}
	must(fc.Do(ctx, args...).Err())
	at("keys moved, slot still migrating (ASK)")
	for _, n := range cl.Nodes {
		must(n.Client("").Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", toID).Err())
	}
	at("slot reassigned (MOVED)")
}

// Kill -9 one master of a cluster (cluster-require-full-coverage no,
// appendfsync always) during batches of adds from several clients: the
// adds to its shards fail with an error, the others succeed; queries of
// its shards fail (answered true, never false) while it is down; restarted
// from its append-only file, it holds every add that was acknowledged: 0
// false negatives. Then, with full coverage required, the cluster is down
// when a master is: CLUSTERDOWN is an error, never "absent".
func TestClusterKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("kill -9 and restarts of a cluster's master: the full run has it")
	}
	cl := redistest.StartCluster(t, redistest.ClusterOptions{Masters: 3, Node: redistest.Options{AppendFsync: "always"}, NodeTimeout: time.Second})
	c := clusterClient(t, cl, nil)
	ctx := context.Background()
	f, err := UploadFilter(ctx, c, "kill", local(t, 1_000_000), nil)
	if err != nil {
		t.Fatal(err)
	}
	l := f.cur.Load()
	victim := cl.Nodes[1]
	victimShard := map[int]bool{}
	for s, key := range l.keys {
		victimShard[s] = cl.NodeOfSlot(Slot(key)) == victim
	}
	onVictim := func(key []byte) bool {
		s, _, _ := l.locate(hashing.Sum(key, l.seed), nil, nil)
		return victimShard[s]
	}
	var (
		mu         sync.Mutex
		acked      [][]byte
		failed     int
		wrongFail  int
		ackedAfter int
		killed     atomic.Bool
		stop       atomic.Bool
		wg         sync.WaitGroup
	)
	for w := range 4 {
		g, err := Open(ctx, c, "kill", &Config{Method: methods[w%2]})
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				batch := keys(fmt.Sprintf("w%d-%d", w, i), 200)
				after := killed.Load()
				err := g.AddBatch(ctx, batch)
				bad := map[int]bool{}
				var be *BatchError
				if errors.As(err, &be) {
					for _, j := range be.Failed {
						bad[j] = true
					}
				} else if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for j, k := range batch {
					switch {
					case !bad[j]:
						acked = append(acked, k)
						if after && !onVictim(k) {
							ackedAfter++
						}
					case onVictim(k):
						failed++
					default:
						wrongFail++
					}
				}
				mu.Unlock()
			}
		}()
	}
	time.Sleep(700 * time.Millisecond)
	victim.Kill()
	killed.Store(true)
	time.Sleep(700 * time.Millisecond)
	stop.Store(true)
	wg.Wait()
	t.Logf("adds acknowledged: %d (on live masters after the kill: %d); failed on the killed master: %d; failed elsewhere: %d", len(acked), ackedAfter, failed, wrongFail)
	if failed == 0 || ackedAfter == 0 || wrongFail != 0 {
		t.Fatalf("want failures on the killed master only, and acknowledged adds on the others after the kill")
	}

	// While it is down: its keys' queries fail and answer true; a single
	// query of one of its keys is an error.
	t0 := time.Now()
	sample := acked[:min(len(acked), 20000)]
	out, err := f.ContainsBatch(ctx, sample, nil)
	t.Logf("query of %d keys with a master down: %v", len(sample), time.Since(t0))
	var be *BatchError
	if !errors.As(err, &be) || !all(out) {
		t.Fatalf("queries with a master down: %v", err)
	}
	for _, j := range be.Failed {
		if !onVictim(sample[j]) {
			t.Fatalf("a query of key %q on a live master failed", sample[j])
		}
	}
	for _, k := range acked {
		if onVictim(k) {
			if v, err := f.Contains(ctx, k); err == nil || v {
				t.Fatalf("Contains of a key on the dead master: %v, %v", v, err)
			}
			break
		}
	}

	t0 = time.Now()
	victim.Restart()
	if err := cl.WaitOK(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	t.Logf("restart: %v", time.Since(t0))
	t0 = time.Now()
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, err = f.ContainsBatch(ctx, acked, out)
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond) // the client reconnecting
	}
	missing := 0
	for _, v := range out {
		if !v {
			missing++
		}
	}
	t.Logf("after restarting the killed master from its append-only file: %d of %d acknowledged adds missing", missing, len(acked))
	if err != nil || missing != 0 {
		t.Fatalf("%v; %d acknowledged adds missing", err, missing)
	}

	// Full coverage required: a master down takes the cluster down.
	for _, n := range cl.Nodes {
		if err := n.Client("").ConfigSet(ctx, "cluster-require-full-coverage", "yes").Err(); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("queries after the restart: %v", time.Since(t0))
	t0 = time.Now()
	victim.Kill()
	live := cl.Nodes[0]
	if err := cl.WaitState(live, "fail", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	t.Logf("cluster_state:fail after %v", time.Since(t0))
	var liveKey []byte
	for _, k := range acked {
		if !onVictim(k) {
			liveKey = k
			break
		}
	}
	v, err := f.Contains(ctx, liveKey)
	if err == nil || v || !strings.Contains(err.Error(), "CLUSTERDOWN") {
		t.Fatalf("Contains of a key on a live master of a failed cluster: %v, %v; want CLUSTERDOWN", v, err)
	}
	t.Logf("full coverage required, a master down: Contains answers %v", err)
	if err := f.Add(ctx, liveKey); err == nil || !strings.Contains(err.Error(), "CLUSTERDOWN") {
		t.Fatalf("Add on a failed cluster: %v", err)
	}
	out, err = f.ContainsBatch(ctx, acked[:500], nil)
	if !errors.As(err, &be) || len(be.Failed) != 500 || !all(out) {
		t.Fatalf("ContainsBatch on a failed cluster: %v", err)
	}
}
