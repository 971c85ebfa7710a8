// Command replbench measures replication on any pair of servers that speak
// Redis's replication protocol (bench/replication.sh runs it against
// bloomlab serve and against redis-server with RedisBloom, side by side).
//
// Usage:
//
//	replbench -mode lag  -primary HOST:PORT -replica HOST:PORT -for 10s
//	replbench -mode sync -primary HOST:PORT -replica HOST:PORT [-pid PID]
//
// lag samples both servers' offsets every 5 ms (INFO replication:
// master_repl_offset on the primary, slave_repl_offset on the replica) for
// the duration, while the caller loads the primary, and prints
//
//	lag-bytes-p50 N lag-bytes-p99 N lag-bytes-max N lag-ms-p50 F lag-ms-p99 F
//
// where a sample's lag in bytes is the primary's offset minus the
// replica's, and its lag in milliseconds the time since the primary's
// offset first passed the replica's (from the primary's samples).
//
// sync makes the replica a replica of the primary (REPLICAOF), with a
// client writing BF.ADD to a key of its own at 1,000 a second and another
// timing BF.EXISTS on the primary in a loop, until the replica's link is up
// and its offset has reached the primary's; it prints
//
//	sync-s F exists-p99-ms F exists-max-ms F writes N
//
// and, with -pid (the primary's process, Linux, root), its peak RSS over
// the sync beyond its RSS before, in MiB (peak-mib N).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "replbench:", err)
		os.Exit(1)
	}
}

func run() error {
	mode := flag.String("mode", "lag", "lag or sync")
	paddr := flag.String("primary", "", "the primary")
	raddr := flag.String("replica", "", "the replica")
	dur := flag.Duration("for", 10*time.Second, "lag: how long to sample")
	pid := flag.Int("pid", 0, "sync: the primary's process, for its peak RSS")
	flag.Parse()
	ctx := context.Background()
	p := redis.NewClient(&redis.Options{Addr: *paddr, Protocol: 2, DisableIdentity: true})
	r := redis.NewClient(&redis.Options{Addr: *raddr, Protocol: 2, DisableIdentity: true})
	defer p.Close()
	defer r.Close()
	switch *mode {
	case "lag":
		return lag(ctx, p, r, *dur)
	case "sync":
		return fullSync(ctx, p, r, *paddr, *pid)
	}
	return fmt.Errorf("-mode %q: want lag or sync", *mode)
}

func field(info, name string) (int64, bool) {
	for _, line := range strings.Split(info, "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && k == name {
			n, err := strconv.ParseInt(v, 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

type sample struct {
	at  time.Time
	off int64
}

func lag(ctx context.Context, p, r *redis.Client, d time.Duration) error {
	var mu sync.Mutex
	var prim []sample
	var lags []int64
	var lagMs []float64
	stop := time.Now().Add(d)
	// The load's end: the primary's offset has grown, then stood still for
	// a second (the replica's last samples then count the catching up).
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the primary's offsets over time
		defer wg.Done()
		defer close(done)
		var last int64 = -1
		var first int64 = -1
		lastChange := time.Now()
		for time.Now().Before(stop) {
			info, err := p.Info(ctx, "replication").Result()
			if off, ok := field(info, "master_repl_offset"); err == nil && ok {
				mu.Lock()
				prim = append(prim, sample{time.Now(), off})
				mu.Unlock()
				if first < 0 {
					first = off
				}
				if off != last {
					last, lastChange = off, time.Now()
				} else if off > first+(1<<20) && time.Since(lastChange) > time.Second {
					return
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	for !isClosed(done) {
		info, err := r.Info(ctx, "replication").Result()
		now := time.Now()
		off, ok := field(info, "slave_repl_offset")
		if err != nil || !ok {
			time.Sleep(5 * time.Millisecond)
			continue
		}
		mu.Lock()
		if n := len(prim); n > 0 {
			lags = append(lags, max(0, prim[n-1].off-off))
			// The first primary sample past the replica's offset: the
			// replica is that far behind in time.
			i := sort.Search(n, func(i int) bool { return prim[i].off > off })
			if i < n {
				lagMs = append(lagMs, float64(now.Sub(prim[i].at).Microseconds())/1000)
			} else {
				lagMs = append(lagMs, 0)
			}
		}
		mu.Unlock()
		time.Sleep(5 * time.Millisecond)
	}
	wg.Wait()
	if len(lags) == 0 {
		return fmt.Errorf("no samples")
	}
	sort.Slice(lags, func(i, j int) bool { return lags[i] < lags[j] })
	sort.Float64s(lagMs)
	q := func(n int, f float64) int { return min(n-1, int(f*float64(n))) }
	fmt.Printf("lag-bytes-p50 %d lag-bytes-p99 %d lag-bytes-max %d lag-ms-p50 %.1f lag-ms-p99 %.1f samples %d\n",
		lags[q(len(lags), 0.5)], lags[q(len(lags), 0.99)], lags[len(lags)-1],
		lagMs[q(len(lagMs), 0.5)], lagMs[q(len(lagMs), 0.99)], len(lags))
	return nil
}

func rss(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, field+":") {
			f := strings.Fields(line)
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n << 10
		}
	}
	return 0
}

func fullSync(ctx context.Context, p, r *redis.Client, paddr string, pid int) error {
	var before int64
	if pid > 0 {
		os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
		before = rss(pid, "VmRSS")
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var lat []float64
	writes := 0
	wg.Add(2)
	go func() { // 1,000 writes a second during the sync
		defer wg.Done()
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			if p.Do(ctx, "BF.ADD", "during-sync", i).Err() == nil {
				mu.Lock()
				writes++
				mu.Unlock()
			}
		}
	}()
	go func() { // a reader's latency during the sync
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			t0 := time.Now()
			p.Do(ctx, "BF.EXISTS", "during-sync", "x")
			mu.Lock()
			lat = append(lat, float64(time.Since(t0).Microseconds())/1000)
			mu.Unlock()
		}
	}()
	host, port, _ := strings.Cut(paddr, ":")
	start := time.Now()
	if err := r.Do(ctx, "REPLICAOF", host, port).Err(); err != nil {
		close(stop)
		wg.Wait()
		return err
	}
	for {
		info, err := r.Info(ctx, "replication").Result()
		if err == nil && strings.Contains(info, "master_link_status:up") {
			roff, _ := field(info, "slave_repl_offset")
			pinfo, _ := p.Info(ctx, "replication").Result()
			poff, _ := field(pinfo, "master_repl_offset")
			if roff > 0 && roff >= poff-1<<20 {
				break
			}
		}
		if time.Since(start) > 10*time.Minute {
			close(stop)
			wg.Wait()
			return fmt.Errorf("no sync within 10 minutes")
		}
		time.Sleep(10 * time.Millisecond)
	}
	took := time.Since(start)
	close(stop)
	wg.Wait()
	sort.Float64s(lat)
	p99, mx := 0.0, 0.0
	if n := len(lat); n > 0 {
		p99, mx = lat[min(n-1, int(0.99*float64(n)))], lat[n-1]
	}
	fmt.Printf("sync-s %.3f exists-p99-ms %.1f exists-max-ms %.1f writes %d", took.Seconds(), p99, mx, writes)
	if pid > 0 {
		fmt.Printf(" peak-mib %d", (rss(pid, "VmHWM")-before)>>20)
	}
	fmt.Println()
	return nil
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
