package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/redis/go-redis/v9"
)

// peakRSS returns the peak resident set (VmHWM) of process pid, in bytes,
// and whether the platform reports it.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(v)
			kb, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil || len(f) != 2 || f[1] != "kB" {
				t.Fatalf("VmHWM line %q", line)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}

// resetPeakRSS makes VmHWM of process pid its current resident set
// (Linux ≥ 4.0), so that the next peakRSS measures what follows.
func resetPeakRSS(t *testing.T, pid int) {
	t.Helper()
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
		t.Fatal(err)
	}
}

// usedMemory is INFO's used_memory_dataset: the bytes of the keyspace's
// values (used_memory adds the clients' buffers).
func usedMemory(t *testing.T, rdb *redis.Client) int64 {
	t.Helper()
	info, err := rdb.Info(context.Background(), "memory").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory_dataset:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no used_memory_dataset in INFO: %q", info)
	return 0
}

// TestRestartPeakRSS: a server's peak resident memory (VmHWM of the real
// `bloomlab serve` process) stays within 1.1 × the dataset (INFO
// used_memory: the structures' bytes) + 32 MiB — issue 21's goal — on its
// first -load of a big file (the load and the snapshot it takes), on a
// restart from its snapshot (a RedisBloom-profile chain made by
// BF.RESERVE, the bloomlab-profile chain of the -load, a chain of several
// links, a cuckoo filter, a sketch, a string, a load in progress), on a
// SAVE of all of it resident, and on a restart that replays a chain's
// BF.LOADCHUNK records (16 MiB each) from the log after kill -9.
//
// Before the fix the snapshot's decoders grew each payload as it
// arrived (2–3 × the dataset at restart) and the log's BF.LOADCHUNK
// grew each link by appending.
//
// The dataset is about 116 MiB; BLOOMLAB_BIG_RSS=1 makes it about 2.2
// GiB (BF.RESERVE of 1 GiB, a -load file of 1 GiB): the figure,
// measured by hand (docs/SERVER.md quotes it). It is not the default
// because `go test ./...` (CI's, on 2 cores, and a newcomer's on a
// laptop) would need 2.5 GiB of memory, 6 GiB of disk and two minutes;
// the bound asserted is the same. Skipped under the race detector, whose
// shadow memory the serve process's resident set would include.
func TestRestartPeakRSS(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc: VmHWM is Linux's")
	}
	if raceEnabled {
		t.Skip("the race detector's shadow memory multiplies the resident memory measured")
	}
	const mib = 1 << 20
	// Sizes: the -load file's keys, BF.RESERVE's capacity (RedisBloom
	// rounds its bits up to a power of two), the cuckoo filter's capacity
	// (bytes, with 2-slot buckets of 8-bit fingerprints), the sketch's
	// width (4 rows of 8-byte counters).
	loadKeys, bfCap, cfCap, cmsWidth := int64(36_000_000), int64(40_000_000), int64(8<<20), int64(256<<10)
	if os.Getenv("BLOOMLAB_BIG_RSS") == "1" {
		loadKeys, bfCap, cfCap, cmsWidth = 780_000_000, 800_000_000, 128<<20, 2<<20
	}
	ctx := context.Background()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := process(dir, nil, "build", "-kind", "scalable", "-n", fmt.Sprint(loadKeys), "-fpr", "0.01", "-o", "big.blf", os.DevNull).CombinedOutput(); err != nil {
		t.Fatalf("build: %v: %s", err, out)
	}
	args := []string{"-save", "0", "-appendfsync", "always", "-load", "big=" + filepath.Join(dir, "big.blf")}
	check := func(what string, p *serveProc, dataset int64) {
		t.Helper()
		peak := peakRSS(t, p.cmd.Process.Pid)
		limit := dataset*11/10 + 32*mib
		t.Logf("%s: peak RSS %.1f MiB, dataset %.1f MiB (%.2f×), limit %.1f MiB", what, float64(peak)/mib, float64(dataset)/mib, float64(peak)/float64(dataset), float64(limit)/mib)
		if peak > limit {
			t.Errorf("%s: peak RSS %.1f MiB exceeds 1.1 × the dataset (%.1f MiB) + 32 MiB", what, float64(peak)/mib, float64(dataset)/mib)
		}
	}
	do := func(rdb *redis.Client, args ...any) any {
		t.Helper()
		v, err := rdb.Do(ctx, args...).Result()
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return v
	}

	// The first -load (and the snapshot that makes it part of the state).
	p := startServe(t, data, args...)
	rdb := client(p.addr)
	check("first -load", p, usedMemory(t, rdb))

	// More values, a snapshot, a graceful stop.
	do(rdb, "BF.RESERVE", "rb", "0.01", bfCap)
	do(rdb, "CF.RESERVE", "cf", cfCap)
	do(rdb, "CMS.INITBYDIM", "cms", cmsWidth, 4)
	do(rdb, "BF.RESERVE", "chain", "0.01", 1000, "EXPANSION", 2)
	for i := 0; i < 100; i++ {
		k := fmt.Sprint("k", i)
		do(rdb, "BF.ADD", "rb", k)
		do(rdb, "BF.ADD", "big", k)
		do(rdb, "CF.ADD", "cf", k)
		do(rdb, "CMS.INCRBY", "cms", k, i+1)
	}
	keys := make([]any, 0, 30000)
	for i := 0; i < 30000; i++ {
		keys = append(keys, fmt.Sprint("c", i))
	}
	do(rdb, append([]any{"BF.MADD", "chain"}, keys...)...)
	card := do(rdb, "BF.CARD", "chain")
	do(rdb, "SET", "s", "a string")
	hdr := do(rdb, "BF.SCANDUMP", "chain", 0).([]any)
	do(rdb, "BF.LOADCHUNK", "part", hdr[0], hdr[1])
	first := do(rdb, "BF.SCANDUMP", "chain", hdr[0]).([]any)
	do(rdb, "BF.LOADCHUNK", "part", first[0], first[1])
	do(rdb, "SAVE")
	dataset := usedMemory(t, rdb)
	rdb.Close()
	p.cmd.Process.Signal(syscall.SIGTERM)
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("after SIGTERM: %v\n%s", err, p.stderr())
	}

	// The restart from the snapshot, then a SAVE with everything resident.
	p = startServe(t, data, args...)
	rdb = client(p.addr)
	if got := usedMemory(t, rdb); got != dataset {
		t.Fatalf("used_memory %d after the restart, %d before", got, dataset)
	}
	check("restart from the snapshot", p, dataset)
	for _, key := range []string{"rb", "big", "chain"} {
		// 1, or true: Redis 8's RESP3 boolean (go-redis speaks RESP3).
		if got := do(rdb, "BF.EXISTS", key, "k7"); key != "chain" && got != int64(1) && got != true {
			t.Fatalf("BF.EXISTS %s k7 after the restart: %v", key, got)
		}
	}
	if got := do(rdb, "BF.CARD", "chain"); got != card {
		t.Fatalf("BF.CARD chain after the restart: %v", got)
	}
	resetPeakRSS(t, p.cmd.Process.Pid)
	do(rdb, "SAVE")
	check("SAVE, everything resident", p, dataset)

	// rb again, from its dump, through the log: DEL, a snapshot without
	// it, BF.LOADCHUNK of every chunk, kill -9; the restart replays the
	// chunks.
	var chunks [][2]any
	for it := int64(0); ; {
		r := do(rdb, "BF.SCANDUMP", "rb", it).([]any)
		if r[0] == int64(0) {
			break
		}
		chunks = append(chunks, [2]any{r[0], r[1]})
		it = r[0].(int64)
	}
	do(rdb, "DEL", "rb")
	do(rdb, "SAVE")
	for _, c := range chunks {
		do(rdb, "BF.LOADCHUNK", "rb", c[0], c[1])
	}
	if got := usedMemory(t, rdb); got != dataset {
		t.Fatalf("used_memory %d after BF.LOADCHUNK, %d before", got, dataset)
	}
	rdb.Close()
	p.cmd.Process.Signal(syscall.SIGKILL)
	p.cmd.Wait()
	p = startServe(t, data, args...)
	rdb = client(p.addr)
	check("restart replaying BF.LOADCHUNK", p, dataset)
	for it := int64(0); ; {
		r := do(rdb, "BF.SCANDUMP", "rb", it).([]any)
		if r[0] == int64(0) {
			break
		}
		c := chunks[0]
		chunks = chunks[1:]
		if r[0] != c[0] || !bytes.Equal([]byte(r[1].(string)), []byte(c[1].(string))) {
			t.Fatalf("rb's dump at %d differs after the replay", it)
		}
		it = r[0].(int64)
	}
	if len(chunks) != 0 {
		t.Fatalf("rb's dump lacks %d chunks after the replay", len(chunks))
	}
	rdb.Close()
}
