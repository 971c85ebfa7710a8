package server

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/bloomlab/bloomlab/scalable"
)

// allocatedBy returns the bytes f allocates (runtime.MemStats.TotalAlloc).
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// residentOf returns the bytes the keyspace holds: what it accounts for,
// less the bytes loads in progress announce but have not received (they
// are accounted from the header on, allocated as they arrive).
func residentOf(s *Server) int64 {
	s.db.mu.RLock()
	defer s.db.mu.RUnlock()
	n := s.mem.Load() - s.clientMem.Load()
	for _, e := range s.db.m {
		switch v := e.v.(type) {
		case *loadingValue:
			got, total := v.ld.Progress()
			n -= int64(total - got)
		}
	}
	return n
}

// loadChunks sends BF.LOADCHUNK key for each chunk.
func loadChunks(t *testing.T, c *rawConn, key string, chunks []scalable.Chunk) {
	t.Helper()
	for _, ch := range chunks {
		if got := c.do("BF.LOADCHUNK", key, fmt.Sprint(ch.Iter), string(ch.Data)); got != "+OK" {
			t.Fatalf("BF.LOADCHUNK %s %d: %s", key, ch.Iter, got)
		}
	}
}

// TestRestartAllocatesDataset: a restart from a snapshot allocates about
// the dataset (≤ 1.1 × its bytes + 2 MiB): each value's payload is read
// straight into its final allocation — chains of both profiles (one from
// a -load file, one of several links), a RedisBloom cuckoo filter, a
// sketch, a string, a load in progress holding half a link. Before, the
// snapshot's decoders read through an io.LimitedReader that hid the
// payload's length, so each payload grew as it arrived (about 4 × the
// dataset allocated, 2–3 × resident at the peak).
func TestRestartAllocatesDataset(t *testing.T) {
	dir := t.TempDir()
	loaded, err := scalable.New(scalable.Config{Capacity: 4 << 20, FPR: 0.01, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	loaded.Add([]byte("x"))
	path := filepath.Join(t.TempDir(), "loaded.blf")
	writeFilter(t, path, loaded)
	cfg := Config{Dir: dir, AppendFsync: No, MaxMemory: -1, Load: []Load{{Name: "loaded", Path: path}}}
	s := start(t, cfg)
	c := dial(t, s)
	for _, cmd := range [][]string{
		{"BF.RESERVE", "bf", "0.01", "12000000"}, // 2^27 bits: 16 MiB
		{"BF.ADD", "bf", "a"},
		{"BF.RESERVE", "chain", "0.01", "100", "EXPANSION", "2"},
		{"CF.RESERVE", "cf", "8000000"}, // 4 Mi buckets of 2: 8 MiB
		{"CF.ADD", "cf", "a"},
		{"CMS.INITBYDIM", "cms", "131072", "4"}, // 4 MiB
		{"CMS.INCRBY", "cms", "a", "3"},
		{"SET", "s", strings.Repeat("v", 1<<20)},
	} {
		if got := c.do(cmd...); strings.HasPrefix(got, "-") {
			t.Fatalf("%v: %s", cmd, got)
		}
	}
	for i := 0; i < 20000; i++ {
		c.send("BF.ADD", "chain", fmt.Sprint("k", i))
	}
	for i := 0; i < 20000; i++ {
		c.read()
	}
	// Half of a 16 MiB link, in 1 MiB chunks.
	src, _ := scalable.NewRedisBloom(0.01, 12000000, 2, false)
	chunks, err := src.Dump(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	loadChunks(t, c, "part", chunks[:1+(len(chunks)-1)/2])
	if got := c.do("SAVE"); got != "+OK" {
		t.Fatal(got)
	}
	want := residentOf(s)
	s.Close()

	var s2 *Server
	alloc := allocatedBy(func() {
		if s2, err = Run(Config{Dir: dir, AppendFsync: No, MaxMemory: -1}); err != nil {
			t.Fatal(err)
		}
	})
	defer s2.Close()
	if got := residentOf(s2); got != want {
		t.Fatalf("the restart holds %d bytes, the server before it %d", got, want)
	}
	limit := uint64(want)*11/10 + 2<<20
	t.Logf("dataset %.1f MiB, allocated %.1f MiB at the restart (%.2f ×)", float64(want)/(1<<20), float64(alloc)/(1<<20), float64(alloc)/float64(want))
	if alloc > limit {
		t.Errorf("a restart from a snapshot of %d bytes of values allocated %d bytes (limit 1.1 × + 2 MiB = %d)", want, alloc, limit)
	}
}

// TestReplayLoadChunkAllocatesOnce: a restart that replays the
// BF.LOADCHUNK records of a 32 MiB chain from the log allocates the chain
// once, plus one record's buffer (16 MiB chunks): each link is allocated
// whole when its first bytes arrive, the memory having been accounted at
// the header. Before, a link grew by appending as chunks arrived (about 5
// × the link allocated, 2.25 × held at the last growth), live and at
// replay.
func TestReplayLoadChunkAllocatesOnce(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Dir: dir, AppendFsync: No, MaxMemory: -1}
	s := start(t, cfg)
	c := dial(t, s)
	src, _ := scalable.NewRedisBloom(0.01, 24000000, 2, false) // 2^28 bits: 32 MiB
	src.Add([]byte("a"))
	chunks, err := src.Dump(0)
	if err != nil {
		t.Fatal(err)
	}
	loadChunks(t, c, "bf", chunks)
	want := residentOf(s)
	if got := c.do("BF.EXISTS", "bf", "a"); got != ":1" {
		t.Fatalf("BF.EXISTS after the load: %s", got)
	}
	s.Close()

	var s2 *Server
	alloc := allocatedBy(func() {
		if s2, err = Run(cfg); err != nil {
			t.Fatal(err)
		}
	})
	defer s2.Close()
	if got := residentOf(s2); got != want {
		t.Fatalf("the restart holds %d bytes, the server before it %d", got, want)
	}
	limit := uint64(want)*11/10 + 2<<20 + maxScanChunk
	t.Logf("dataset %.1f MiB, allocated %.1f MiB replaying it (%.2f ×)", float64(want)/(1<<20), float64(alloc)/(1<<20), float64(alloc)/float64(want))
	if alloc > limit {
		t.Errorf("replaying the BF.LOADCHUNK of %d bytes allocated %d bytes (limit 1.1 × + 2 MiB + a chunk = %d)", want, alloc, limit)
	}
	c2 := dial(t, s2)
	if got := c2.do("BF.EXISTS", "bf", "a"); got != ":1" {
		t.Fatalf("BF.EXISTS after the replay: %s", got)
	}
}

func writeFilter(t *testing.T, path string, f io.WriterTo) {
	t.Helper()
	w, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteTo(w); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestSnapshotBeyondMemoryRefused: a snapshot whose string (or key, or a
// chunk of a load in progress) is larger than the memory this process
// may use — a sparse file can claim any size — is refused at start with
// an error, before anything is allocated for it, instead of ending the
// process with Go's fatal out-of-memory error.
func TestSnapshotBeyondMemoryRefused(t *testing.T) {
	dir := t.TempDir()
	s := start(t, Config{Dir: dir})
	if got := dial(t, s).do("SET", "s", strings.Repeat("v", 2<<20)); got != "+OK" {
		t.Fatal(got)
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer func(f func() uint64) { memLimit = f }(memLimit)
	memLimit = func() uint64 { return 1 << 20 }
	if s, err := New(Config{Dir: dir}); err == nil || !strings.Contains(err.Error(), "this process may use") {
		if s != nil {
			s.Close()
		}
		t.Fatalf("a 2 MiB string under a 1 MiB limit: %v", err)
	}
}
