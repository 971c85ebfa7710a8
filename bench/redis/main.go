// Command redis measures package redisblocked (a blocked Bloom filter whose
// blocks live in Redis) against the same filter in-process and against the
// one-key bitmap design (every bit in one string, a key's k SETBIT or
// GETBIT in one Lua call, as Redisson's RBloomFilter and rueidisprob
// keep it), on the same Redis: a standalone redis-server and a cluster of
// three masters that it starts on loopback ports (Debian's redis-server
// and redis-cli), without persistence.
//
// For each design and operation — single Add, single Contains, AddBatch
// and ContainsBatch of -batch keys — several clients (goroutines, each
// with its own connections) run for -dur; it reports keys per second, the
// latency of one call (p50, p99), and the servers' CPU per key (INFO CPU:
// used_cpu_user + used_cpu_sys of every node, before and after, divided by
// the keys). From the CPU per key it projects what N nodes would serve:
// this machine's two cores, shared by the clients and every server, cannot
// show the scaling itself.
//
// Usage (from bench/): go run ./redis [-keys N] [-dur 3s] [-clients 8] [-batch 1000] [-o redis.txt]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/bloomlab/bloomlab/blocked"
	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/redistest"
	"github.com/bloomlab/bloomlab/redisblocked"
	"github.com/bloomlab/bloomlab/theory"
	"github.com/redis/go-redis/v9"
)

func main() {
	keysN := flag.Int("keys", 5_000_000, "the filters are sized for this many keys at 1% (and hold half of them while queried)")
	dur := flag.Duration("dur", 3*time.Second, "time per measurement")
	clients := flag.Int("clients", 8, "clients in parallel")
	batch := flag.Int("batch", 1000, "keys per batch")
	only := flag.String("only", "", "run only the designs whose name contains this")
	out := flag.String("o", "", "also write the report to this file")
	flag.Parse()
	var w io.Writer = os.Stdout
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer f.Close()
		w = io.MultiWriter(os.Stdout, f)
	}
	env := &tb{}
	defer env.cleanup()
	if err := run(env, w, *keysN, *dur, *clients, *batch, *only); err != nil {
		fmt.Fprintln(os.Stderr, "bench/redis:", err)
		env.cleanup()
		os.Exit(1)
	}
}

// tb is the redistest.TB of a program: failures end it.
type tb struct {
	mu       sync.Mutex
	cleanups []func()
	dirs     []string
}

func (t *tb) Helper() {}
func (t *tb) Fatalf(f string, a ...any) {
	fmt.Fprintf(os.Stderr, "bench/redis: "+f+"\n", a...)
	t.cleanup()
	os.Exit(1)
}
func (t *tb) Skipf(f string, a ...any) { t.Fatalf(f, a...) }
func (t *tb) TempDir() string {
	d, err := os.MkdirTemp("", "bench-redis-")
	if err != nil {
		t.Fatalf("%v", err)
	}
	t.mu.Lock()
	t.dirs = append(t.dirs, d)
	t.mu.Unlock()
	return d
}
func (t *tb) Cleanup(f func()) { t.mu.Lock(); t.cleanups = append(t.cleanups, f); t.mu.Unlock() }
func (t *tb) cleanup() {
	t.mu.Lock()
	cs, ds := t.cleanups, t.dirs
	t.cleanups, t.dirs = nil, nil
	t.mu.Unlock()
	for i := len(cs) - 1; i >= 0; i-- {
		cs[i]()
	}
	for _, d := range ds {
		os.RemoveAll(d)
	}
}

// design is one way of holding the filter.
type design struct {
	name, topo string
	add1       func(ctx context.Context, key []byte) error
	has1       func(ctx context.Context, key []byte) (bool, error)
	addN       func(ctx context.Context, keys [][]byte) error
	hasN       func(ctx context.Context, keys [][]byte, out []bool) ([]bool, error)
	nodes      []*redis.Client // for INFO CPU
}

type result struct {
	design, topo, op string
	keysPerSec       float64
	p50, p99         time.Duration
	cpuPerKey        time.Duration // servers' CPU per key
	nodes            int
}

func run(env *tb, w io.Writer, n int, dur time.Duration, clients, batch int, only string) error {
	ctx := context.Background()
	keys := randomKeys(n/2+clients*batch, 1)
	present := keys[:n/2]
	fmt.Fprintf(w, "# bench/redis: filters for %d keys at 1%%, holding %d; %d clients; batches of %d; %v per measurement\n", n, len(present), clients, batch, dur)
	fmt.Fprintf(w, "# %s, GOMAXPROCS %d, %s\n", runtime.Version(), runtime.GOMAXPROCS(0), redisVersion())

	single := redistest.Start(env, redistest.Options{Extra: []string{"--appendonly", "no"}})
	cluster := redistest.StartCluster(env, redistest.ClusterOptions{Masters: 3})
	sc := redis.NewClient(&redis.Options{Addr: single.Addr, DisableIdentity: true, PoolSize: 4 * clients})
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cluster.Addrs(), DisableIdentity: true, PoolSize: 4 * clients})
	defer sc.Close()
	defer cc.Close()
	singleNodes := []*redis.Client{sc}
	var clusterNodes []*redis.Client
	for _, a := range cluster.Addrs() {
		c := redis.NewClient(&redis.Options{Addr: a, DisableIdentity: true})
		defer c.Close()
		clusterNodes = append(clusterNodes, c)
	}

	local, err := blocked.NewWithEstimates(uint64(n), 0.01)
	if err != nil {
		return err
	}
	designs := []*design{inProcess(local)}
	for _, m := range []redisblocked.Method{redisblocked.Bitfield, redisblocked.Script} {
		for _, topo := range []struct {
			name  string
			c     redis.UniversalClient
			nodes []*redis.Client
		}{{"1 node", sc, singleNodes}, {"3-master cluster", cc, clusterNodes}} {
			f, err := redisblocked.UploadFilter(ctx, topo.c, "bench-"+m.String(), local, &redisblocked.Config{Method: m, Replace: true})
			if err != nil {
				return err
			}
			designs = append(designs, &design{name: "redisblocked " + m.String(), topo: topo.name, nodes: topo.nodes,
				add1: f.Add, has1: f.Contains, addN: f.AddBatch, hasN: f.ContainsBatch})
		}
	}
	for _, topo := range []struct {
		name  string
		c     redis.UniversalClient
		nodes []*redis.Client
	}{{"1 node", sc, singleNodes}, {"3-master cluster", cc, clusterNodes}} {
		b, err := newBitmap(ctx, topo.c, "bitmap", uint64(n), 0.01)
		if err != nil {
			return err
		}
		designs = append(designs, &design{name: "one-key bitmap (Lua SETBIT/GETBIT)", topo: topo.name, nodes: topo.nodes,
			add1: b.add, has1: b.has, addN: b.addBatch, hasN: b.hasBatch})
	}

	var results []result
	for _, d := range designs {
		if only != "" && !strings.Contains(d.name+" "+d.topo, only) {
			continue
		}
		// Fill: every design holds the same present keys, added in batches.
		fmt.Fprintf(os.Stderr, "bench/redis: %s, %s: adding %d keys\n", d.name, d.topo, len(present))
		if err := parallel(clients, len(present), batch, func(i, j int) error { return d.addN(ctx, present[i:j]) }); err != nil {
			return fmt.Errorf("%s: fill: %w", d.name, err)
		}
		for _, op := range []string{"add", "contains", "add batch", "contains batch"} {
			r, err := measure(ctx, d, op, keys, clients, batch, dur)
			if err != nil {
				return fmt.Errorf("%s, %s, %s: %w", d.name, d.topo, op, err)
			}
			fmt.Fprintf(os.Stderr, "bench/redis:   %-15s %12.0f keys/s  p50 %-10v p99 %-10v cpu/key %v\n", op, r.keysPerSec, r.p50, r.p99, r.cpuPerKey)
			results = append(results, r)
		}
	}
	report(w, results, batch)
	return nil
}

// measure runs op from clients goroutines for dur.
func measure(ctx context.Context, d *design, op string, keys [][]byte, clients, batch int, dur time.Duration) (result, error) {
	cpu0, err := cpu(ctx, d.nodes)
	if err != nil {
		return result{}, err
	}
	var done atomic.Int64
	var stop atomic.Bool
	lat := make([][]time.Duration, clients)
	errs := make([]error, clients)
	var wg sync.WaitGroup
	start := time.Now()
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(c), 9))
			out := make([]bool, batch)
			for !stop.Load() {
				var err error
				var nk int
				t0 := time.Now()
				switch op {
				case "add":
					err, nk = d.add1(ctx, keys[r.IntN(len(keys))]), 1
				case "contains":
					_, err = d.has1(ctx, keys[r.IntN(len(keys))])
					nk = 1
				case "add batch", "contains batch":
					i := r.IntN(len(keys) - batch)
					if op == "add batch" {
						err = d.addN(ctx, keys[i:i+batch])
					} else {
						out, err = d.hasN(ctx, keys[i:i+batch], out)
					}
					nk = batch
				}
				lat[c] = append(lat[c], time.Since(t0))
				if err != nil {
					errs[c] = err
					return
				}
				done.Add(int64(nk))
			}
		}()
	}
	time.Sleep(dur)
	stop.Store(true)
	wg.Wait()
	el := time.Since(start)
	for _, err := range errs {
		if err != nil {
			return result{}, err
		}
	}
	cpu1, err := cpu(ctx, d.nodes)
	if err != nil {
		return result{}, err
	}
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	slices.Sort(all)
	r := result{design: d.name, topo: d.topo, op: op, keysPerSec: float64(done.Load()) / el.Seconds(),
		p50: all[len(all)/2], p99: all[len(all)*99/100], nodes: len(d.nodes)}
	if len(d.nodes) > 0 {
		r.cpuPerKey = time.Duration((cpu1 - cpu0) / float64(done.Load()) * 1e9)
	}
	return r, nil
}

// cpu returns the servers' CPU seconds (user and system) so far.
func cpu(ctx context.Context, nodes []*redis.Client) (float64, error) {
	var sum float64
	for _, c := range nodes {
		info, err := c.Info(ctx, "cpu").Result()
		if err != nil {
			return 0, err
		}
		for _, line := range strings.Split(info, "\n") {
			k, v, _ := strings.Cut(strings.TrimSpace(line), ":")
			if k == "used_cpu_sys" || k == "used_cpu_user" {
				x, _ := strconv.ParseFloat(v, 64)
				sum += x
			}
		}
	}
	return sum, nil
}

// parallel runs fn over [0, n) in chunks of size from clients goroutines.
func parallel(clients, n, size int, fn func(i, j int) error) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, clients)
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(int64(size))) - size
				if i >= n {
					return
				}
				if err := fn(i, min(i+size, n)); err != nil {
					errs[c] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func randomKeys(n int, seed uint64) [][]byte {
	r := rand.New(rand.NewPCG(seed, seed))
	buf := make([]byte, 16*n)
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = buf[16*i : 16*i+16 : 16*i+16]
	}
	return keys
}

// inProcess is the same blocked filter in this process (AddAtomic, so
// that the clients share it as they share the remote one).
func inProcess(f *blocked.Filter) *design {
	return &design{name: "blocked, in-process", topo: "-",
		add1: func(_ context.Context, k []byte) error { f.AddAtomic(k); return nil },
		has1: func(_ context.Context, k []byte) (bool, error) { return f.Contains(k), nil },
		addN: func(_ context.Context, ks [][]byte) error {
			for _, k := range ks {
				f.AddAtomic(k)
			}
			return nil
		},
		hasN: func(_ context.Context, ks [][]byte, out []bool) ([]bool, error) { return f.ContainsBatch(ks, out), nil },
	}
}

// bitmapFilter is the one-key bitmap design: m bits in one string (at most 2^32,
// Redis's 512 MB), k positions by enhanced double hashing computed by the
// client, a key's k SETBIT (add) or GETBIT (query) in one Lua call
// (EVALSHA); a batch pipelines one call per key.
var (
	bitmapAdd = redis.NewScript(`for i = 1, #ARGV do redis.call('SETBIT', KEYS[1], ARGV[i], 1) end
return 1`)
	bitmapHas = redis.NewScript(`for i = 1, #ARGV do
  if redis.call('GETBIT', KEYS[1], ARGV[i]) == 0 then return 0 end
end
return 1`)
)

type bitmapFilter struct {
	c   redis.UniversalClient
	key string
	ix  *hashing.Indexer
}

func newBitmap(ctx context.Context, c redis.UniversalClient, key string, n uint64, fpr float64) (*bitmapFilter, error) {
	m, k, err := theory.Size(n, fpr)
	if err != nil {
		return nil, err
	}
	ix, err := hashing.NewIndexer(hashing.Enhanced, m, k)
	if err != nil {
		return nil, err
	}
	if err := c.Del(ctx, key).Err(); err != nil {
		return nil, err
	}
	if err := c.SetBit(ctx, key, int64(m-1), 0).Err(); err != nil {
		return nil, err
	}
	for _, s := range []*redis.Script{bitmapAdd, bitmapHas} {
		if err := s.Load(ctx, c).Err(); err != nil {
			return nil, err
		}
	}
	if cc, ok := c.(*redis.ClusterClient); ok { // the scripts on every master
		if err := cc.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
			for _, s := range []*redis.Script{bitmapAdd, bitmapHas} {
				if err := s.Load(ctx, n).Err(); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return nil, err
		}
	}
	return &bitmapFilter{c: c, key: key, ix: ix}, nil
}

func (b *bitmapFilter) args(key []byte) []any {
	pos := b.ix.Positions(hashing.Sum(key, 0), make([]uint64, b.ix.K()))
	args := make([]any, len(pos))
	for i, p := range pos {
		args[i] = p
	}
	return args
}

func (b *bitmapFilter) add(ctx context.Context, key []byte) error {
	return bitmapAdd.EvalSha(ctx, b.c, []string{b.key}, b.args(key)...).Err()
}

func (b *bitmapFilter) has(ctx context.Context, key []byte) (bool, error) {
	v, err := bitmapHas.EvalSha(ctx, b.c, []string{b.key}, b.args(key)...).Int()
	return v == 1, err
}

func (b *bitmapFilter) addBatch(ctx context.Context, keys [][]byte) error {
	p := b.c.Pipeline()
	for _, k := range keys {
		bitmapAdd.EvalSha(ctx, p, []string{b.key}, b.args(k)...)
	}
	cmds, err := p.Exec(ctx)
	_ = cmds
	return err
}

func (b *bitmapFilter) hasBatch(ctx context.Context, keys [][]byte, out []bool) ([]bool, error) {
	p := b.c.Pipeline()
	cmds := make([]*redis.Cmd, len(keys))
	for i, k := range keys {
		cmds[i] = bitmapHas.EvalSha(ctx, p, []string{b.key}, b.args(k)...)
	}
	if _, err := p.Exec(ctx); err != nil {
		return out, err
	}
	out = out[:0]
	for _, c := range cmds {
		v, _ := c.Int()
		out = append(out, v == 1)
	}
	return out, nil
}

func redisVersion() string {
	out, err := execOutput("redis-server", "--version")
	if err != nil {
		return "redis-server ?"
	}
	return strings.TrimSpace(out)
}

// report prints the table, the ratios the issue asks for, and the
// projection from CPU per key.
func report(w io.Writer, rs []result, batch int) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w)
	fmt.Fprintln(tw, "design\ttopology\top\tkeys/s\tp50\tp99\tserver CPU/key\tkeys/s per node\t")
	for _, r := range rs {
		cpu, per := "-", "-"
		if r.nodes > 0 {
			cpu = fmt.Sprintf("%.2f µs", float64(r.cpuPerKey)/1e3)
			per = fmt.Sprintf("%.0f", r.keysPerSec/float64(r.nodes))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.0f\t%v\t%v\t%s\t%s\t\n", r.design, r.topo, r.op, r.keysPerSec, r.p50.Round(time.Microsecond), r.p99.Round(time.Microsecond), cpu, per)
	}
	tw.Flush()
	find := func(design, topo, op string) *result {
		for i := range rs {
			if strings.HasPrefix(rs[i].design, design) && rs[i].topo == topo && rs[i].op == op {
				return &rs[i]
			}
		}
		return nil
	}
	fmt.Fprintln(w)
	for _, topo := range []string{"1 node", "3-master cluster"} {
		for _, op := range []string{"add batch", "contains batch", "add", "contains"} {
			a, s, b := find("redisblocked bitfield", topo, op), find("redisblocked script", topo, op), find("one-key bitmap", topo, op)
			if a == nil || b == nil {
				continue
			}
			fmt.Fprintf(w, "%s, %s: redisblocked bitfield / one-key bitmap = %.2f× keys/s, %.2f× less server CPU per key",
				topo, op, a.keysPerSec/b.keysPerSec, float64(b.cpuPerKey)/float64(a.cpuPerKey))
			if s != nil {
				fmt.Fprintf(w, "; bitfield / script = %.2f× keys/s, %.2f× less CPU per key", a.keysPerSec/s.keysPerSec, float64(s.cpuPerKey)/float64(a.cpuPerKey))
			}
			fmt.Fprintln(w)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Projection from the servers' CPU per key (a Redis node executes commands on one core, so a node saturates at about 1 s / (CPU per key);")
	fmt.Fprintln(w, "a sharded design spreads its keys evenly over the masters, the one-key bitmap keeps all of them on the master holding its key).")
	fmt.Fprintln(w, "This 2-core machine runs the clients and every server: it cannot show the scaling itself.")
	for _, op := range []string{"add batch", "contains batch"} {
		for _, d := range []string{"redisblocked bitfield", "redisblocked script", "one-key bitmap"} {
			r := find(d, "3-master cluster", op)
			if r == nil || r.cpuPerKey == 0 {
				continue
			}
			node := 1e9 / float64(r.cpuPerKey)
			line := fmt.Sprintf("  %s, %s: %.2f µs CPU per key → one node ≈ %.2fM keys/s", d, op, float64(r.cpuPerKey)/1e3, node/1e6)
			if d == "one-key bitmap" {
				line += "; N nodes: the same (one key, one node)"
			} else {
				line += fmt.Sprintf("; 3 nodes ≈ %.1fM, 10 nodes ≈ %.1fM, 30 nodes ≈ %.0fM keys/s", 3*node/1e6, 10*node/1e6, 30*node/1e6)
			}
			fmt.Fprintln(w, line)
		}
	}
	_ = batch
}

func execOutput(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).Output()
	return string(out), err
}
