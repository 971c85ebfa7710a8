package redisblocked

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bloomlab/bloomlab/blocked"
	"github.com/bloomlab/bloomlab/internal/redistest"
	"github.com/redis/go-redis/v9"
)

var methods = []Method{Bitfield, Script}

// keys returns n distinct keys with a prefix.
func keys(prefix string, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = fmt.Appendf(nil, "%s-%d", prefix, i)
	}
	return out
}

// local returns an empty local filter sized for n keys at 1%.
func local(t testing.TB, n uint64) *blocked.Filter {
	t.Helper()
	f, err := blocked.NewWithEstimates(n, 0.01, blocked.WithSeed(7))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func fileBytes(t testing.TB, f *blocked.Filter) []byte {
	t.Helper()
	b, err := f.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The filter in Redis is the local filter: adds (single and batched)
// through it set exactly the bits a local blocked.Filter sets for the same
// keys, so its answers — false positives included — are the local
// filter's, and its download is the local filter's file byte for byte
// (N included).
func TestAgreesWithLocal(t *testing.T) {
	s := redistest.Start(t, redistest.Options{})
	c := s.Client("")
	ctx := context.Background()
	for _, m := range methods {
		t.Run(m.String(), func(t *testing.T) {
			want := local(t, 20000)
			f, err := UploadFilter(ctx, c, "agree-"+m.String(), want, &Config{Method: m, Shards: 5})
			if err != nil {
				t.Fatal(err)
			}
			added := keys("in", 20000)
			for _, k := range added[:300] {
				if err := f.Add(ctx, k); err != nil {
					t.Fatal(err)
				}
				want.Add(k)
			}
			for _, k := range added[300:400] {
				if err := f.AddString(ctx, string(k)); err != nil {
					t.Fatal(err)
				}
				want.Add(k)
			}
			if err := f.AddBatch(ctx, added[400:]); err != nil { // several pipelines of 4096
				t.Fatal(err)
			}
			for _, k := range added[400:] {
				want.Add(k)
			}
			probe := append(keys("out", 30000), added...)
			got, err := f.ContainsBatch(ctx, probe, nil)
			if err != nil {
				t.Fatal(err)
			}
			fp := 0
			for i, k := range probe {
				if got[i] != want.Contains(k) {
					t.Fatalf("key %q: Redis says %v, local %v", k, got[i], !got[i])
				}
				if i < 30000 && got[i] {
					fp++
				}
			}
			if fp == 0 || fp > 600 { // 1% of 30,000, with room
				t.Errorf("%d false positives of 30,000 at 1%%", fp)
			}
			for _, k := range probe[29900:30100] {
				v, err := f.Contains(ctx, k)
				if err != nil || v != want.Contains(k) {
					t.Fatalf("Contains(%q) = %v, %v", k, v, err)
				}
				if v2, err := f.ContainsString(ctx, string(k)); v2 != v || err != nil {
					t.Fatalf("ContainsString(%q) = %v, %v", k, v2, err)
				}
			}
			var buf bytes.Buffer
			if _, err := f.WriteTo(ctx, &buf); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), fileBytes(t, want)) {
				t.Fatal("the downloaded file differs from the local filter's")
			}
			g, err := f.Download(ctx)
			if err != nil || !g.Equal(want) || g.N() != want.N() || g.Capacity() != 20000 {
				t.Fatalf("Download: %v (equal %v, N %d)", err, g != nil && g.Equal(want), g.N())
			}
			in, err := f.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if in.Ones != want.Ones() || in.N != want.N() || len(in.Shards) != 5 || in.Blocks != want.Blocks() {
				t.Errorf("Info: ones %d (local %d), N %d (local %d), %d shards", in.Ones, want.Ones(), in.N, want.N(), len(in.Shards))
			}
			if r := in.EstimatedFPR(); r < 0.3*want.EstimatedFPR() || r > 3*want.EstimatedFPR() {
				t.Errorf("Info's rate %v, the local filter's %v", r, want.EstimatedFPR())
			}
		})
	}
}

// An uploaded filter is the file: upload a filled filter, download it,
// get the same bytes; zero blocks are not sent.
func TestUploadDownload(t *testing.T) {
	s := redistest.Start(t, redistest.Options{})
	c := s.Client("")
	ctx := context.Background()
	want := local(t, 200000)
	for _, k := range keys("k", 50000) {
		want.Add(k)
	}
	// Shards small enough that a 1 MiB chunk spans several.
	f, err := UploadFilter(ctx, c, "up", want, &Config{MaxShardBytes: 20000})
	if err != nil {
		t.Fatal(err)
	}
	if p := f.Plan(); p.Shards < 10 || p.ShardBytes > 20000 {
		t.Errorf("plan %+v", p)
	}
	var buf bytes.Buffer
	if _, err := f.WriteTo(ctx, &buf); err != nil || !bytes.Equal(buf.Bytes(), fileBytes(t, want)) {
		t.Fatalf("round trip: %v", err)
	}
	// Every shard is a string of its blocks and the trailer.
	for i, key := range f.ShardKeys() {
		v, err := c.Get(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(v[:len(v)-8], marker) {
			t.Errorf("shard %d: no marker", i)
		}
	}
	// An upload of an empty filter of 8 MiB sends the trailers, not 8 MiB.
	c.ConfigResetStat(ctx)
	if _, err := UploadFilter(ctx, c, "empty", local(t, 7_000_000), nil); err != nil {
		t.Fatal(err)
	}
	calls, _ := redistest.CommandCalls(ctx, c)
	if calls["setrange"] != 1 {
		t.Errorf("an empty filter in one shard took %d SETRANGEs, want 1 (the trailer)", calls["setrange"])
	}
}

// One round trip per single operation, one per batch on a server: counted
// by the client (go-redis hooks) and by the server (INFO commandstats).
func TestRoundTrips(t *testing.T) {
	s := redistest.Start(t, redistest.Options{})
	c := s.Client("")
	h := &countHook{}
	c.AddHook(h)
	ctx := context.Background()
	for _, m := range methods {
		t.Run(m.String(), func(t *testing.T) {
			f, err := UploadFilter(ctx, c, "rt-"+m.String(), local(t, 100000), &Config{Method: m, Shards: 8})
			if err != nil {
				t.Fatal(err)
			}
			// Load the scripts once, as the first operation after a
			// server start would (EVALSHA, NOSCRIPT, EVAL).
			f.AddString(ctx, "warm")
			f.ContainsString(ctx, "warm")
			cmd := map[Method][2]string{Bitfield: {"bitfield", "bitfield_ro"}, Script: {"evalsha", "evalsha"}}[m]
			for i, op := range []func() error{
				func() error { return f.AddString(ctx, "a") },
				func() error { _, err := f.ContainsString(ctx, "a"); return err },
			} {
				c.ConfigResetStat(ctx)
				h.reset()
				if err := op(); err != nil {
					t.Fatal(err)
				}
				rt := h.rt()
				calls, _ := redistest.CommandCalls(ctx, c)
				if rt != 1 || calls[cmd[i]] != 1 || topLevel(m, calls) != 1 {
					t.Errorf("op %d: %d round trips, server calls %v; want 1 round trip and 1 %s", i, rt, calls, cmd[i])
				}
			}
			batch := keys("b", 1000)
			for i, op := range []func() error{
				func() error { return f.AddBatch(ctx, batch) },
				func() error { _, err := f.ContainsBatch(ctx, batch, nil); return err },
			} {
				c.ConfigResetStat(ctx)
				h.reset()
				if err := op(); err != nil {
					t.Fatal(err)
				}
				rt := h.rt()
				calls, _ := redistest.CommandCalls(ctx, c)
				want := map[string]int64{cmd[i]: 8} // one command per shard
				if m == Bitfield && i == 1 {
					// A GETRANGE per key's block and a marker read per shard.
					want = map[string]int64{"getrange": 1000, "bitfield_ro": 8}
				}
				var n int64
				for name, c := range want {
					if calls[name] != c {
						t.Errorf("batch %d: %d %s, want %d (server calls %v)", i, calls[name], name, c, calls)
					}
					n += c
				}
				if rt != 1 || topLevel(m, calls) != n {
					t.Errorf("batch %d: %d round trips, server calls %v; want 1 round trip and %v", i, rt, calls, want)
				}
			}
		})
	}
}

// topLevel returns the number of commands clients sent, from INFO
// commandstats (which also counts the commands scripts call: GETRANGE and
// BITFIELD[_RO] inside the Script method's EVALSHA), less the test's own
// CONFIG RESETSTAT.
func topLevel(m Method, calls map[string]int64) int64 {
	var n int64
	for k, v := range calls {
		switch {
		case k == "config|resetstat", k == "info":
		case m == Script && (k == "getrange" || strings.HasPrefix(k, "bitfield")):
		default:
			n += v
		}
	}
	return n
}

// countHook counts round trips: each Process and each pipeline.
type countHook struct{ n atomic.Int64 }

func (h *countHook) reset()    { h.n.Store(0) }
func (h *countHook) rt() int64 { return h.n.Load() }

func (h *countHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *countHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { h.n.Add(1); return next(ctx, cmd) }
}
func (h *countHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmds)
	}
}

// The hot path allocates per shard command (go-redis's command and reply),
// never per bit; per key only the reply of a batch query's GETRANGE.
func TestBatchAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	s := redistest.Start(t, redistest.Options{})
	c := s.Client("")
	ctx := context.Background()
	f, err := UploadFilter(ctx, c, "allocs", local(t, 100000), &Config{Shards: 4})
	if err != nil {
		t.Fatal(err)
	}
	batch := keys("x", 1000)
	out := make([]bool, len(batch))
	f.AddBatch(ctx, batch)
	add := testing.AllocsPerRun(20, func() { f.AddBatch(ctx, batch) })
	query := testing.AllocsPerRun(20, func() { f.ContainsBatch(ctx, batch, out) })
	one := testing.AllocsPerRun(50, func() { f.Contains(ctx, batch[0]) })
	t.Logf("allocations: AddBatch of 1000 keys (4 shards) %v, ContainsBatch %v, Contains %v", add, query, one)
	// Per shard command, go-redis's command and reply objects; per key
	// of a query, the 64-byte GETRANGE reply string go-redis reads (its
	// commands are reused).
	if add > 60 || query > 1000+60 || one > 15 {
		t.Errorf("allocations: AddBatch %v (want ≤ 60: per command, not per key), ContainsBatch %v (want ≤ one per key + 60), Contains %v", add, query, one)
	}
}

// Metadata is untrusted: keys that are not bloomlab filters are clear
// errors, and are never replaced by an upload.
func TestNotAFilter(t *testing.T) {
	s := redistest.Start(t, redistest.Options{})
	c := s.Client("")
	ctx := context.Background()
	c.Set(ctx, "str", "hello", 0)
	c.HSet(ctx, "hash", "a", "b")
	c.Set(ctx, "long", strings.Repeat("x", 10<<20), 0)
	c.Set(ctx, "v2", "bloomlab-redis 2 kind=blocked blocks=1", 0)
	c.Set(ctx, "empty", "", 0)
	good := (&meta{blocks: 10, k: 7, shards: 1, shardBlocks: 10, gen: 1}).encode()
	c.Set(ctx, "bloomkind", strings.Replace(good, "kind=blocked", "kind=bloom", 1), 0)
	for name, want := range map[string]string{
		"str":       `holds a string that is not bloomlab metadata`,
		"hash":      `holds a hash, not a bloomlab filter`,
		"long":      `1024 bytes or more`,
		"v2":        `layout version "2"`,
		"empty":     `not bloomlab metadata`,
		"bloomkind": `checksum`,
		"missing":   `no key "missing"`,
	} {
		_, err := Open(ctx, c, name, nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Open(%s): %v, want %q", name, err, want)
		}
		if name != "missing" && !errors.Is(err, ErrNotFilter) {
			t.Errorf("Open(%s): %v does not wrap ErrNotFilter", name, err)
		}
		if name == "missing" {
			continue
		}
		before, _ := c.Dump(ctx, name).Result()
		if _, err := UploadFilter(ctx, c, name, local(t, 100), &Config{Replace: true}); !errors.Is(err, ErrNotFilter) {
			t.Errorf("upload over %s: %v, want ErrNotFilter", name, err)
		}
		if after, _ := c.Dump(ctx, name).Result(); after != before {
			t.Errorf("upload changed %s", name)
		}
	}
	if _, err := Open(ctx, c, "a{b}", nil); !errors.Is(err, ErrParam) {
		t.Errorf("a name with braces: %v", err)
	}
	// A file of another kind is refused before anything is written.
	if _, err := Upload(ctx, c, "kind", strings.NewReader("BLMF\x01\x00\x01\x00"+strings.Repeat("\x00", 100)), nil); !errors.Is(err, ErrParam) || !strings.Contains(err.Error(), "bloom filter") {
		t.Errorf("upload of a bloom file: %v", err)
	}
}

// build -o onto an existing filter: refused without Replace, then
// replaced; a damaged upload leaves the old filter serving and nothing of
// itself behind.
func TestReplace(t *testing.T) {
	s := redistest.Start(t, redistest.Options{})
	c := s.Client("")
	ctx := context.Background()
	old := local(t, 1000)
	old.AddString("old")
	f, err := UploadFilter(ctx, c, "r", old, &Config{Shards: 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := UploadFilter(ctx, c, "r", local(t, 1000), nil); !errors.Is(err, ErrExists) {
		t.Fatalf("upload over a filter without Replace: %v", err)
	}
	// A damaged file: the last byte of its checksum.
	nf := local(t, 5000)
	nf.AddString("new")
	b := fileBytes(t, nf)
	b[len(b)-1] ^= 1
	if _, err := Upload(ctx, c, "r", bytes.NewReader(b), &Config{Replace: true}); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("damaged upload: %v", err)
	}
	if v, err := f.ContainsString(ctx, "old"); !v || err != nil {
		t.Fatalf("after a failed upload the old filter answers %v, %v", v, err)
	}
	if n := c.DBSize(ctx).Val(); n != 4 { // metadata and 3 shards
		t.Errorf("%d keys after a failed upload, want 4: %v", n, c.Keys(ctx, "*").Val())
	}
	g, err := Upload(ctx, c, "r", bytes.NewReader(fileBytes(t, nf)), &Config{Replace: true})
	if err != nil {
		t.Fatal(err)
	}
	if g.Generation() == f.Generation() {
		t.Fatal("same generation")
	}
	// The old shards are tombstones, expiring.
	for _, key := range f.ShardKeys() {
		if typ := c.Type(ctx, key).Val(); typ != "hash" || c.TTL(ctx, key).Val() < 23*time.Hour {
			t.Errorf("old shard %s: %s, ttl %v", key, typ, c.TTL(ctx, key).Val())
		}
	}
	// A client holding the old metadata meets a tombstone, reads the
	// metadata again and answers from the new filter; its adds land there.
	if v, err := f.ContainsString(ctx, "new"); !v || err != nil {
		t.Fatalf("stale client: Contains(new) = %v, %v", v, err)
	}
	if f.Generation() != g.Generation() {
		t.Fatal("the stale client did not move to the new generation")
	}
	if err := f.AddString(ctx, "later"); err != nil {
		t.Fatal(err)
	}
	if v, _ := g.ContainsString(ctx, "later"); !v {
		t.Fatal("an add by the stale client is not in the new generation")
	}
	if err := g.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ContainsString(ctx, "new"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after Delete: %v, want ErrNotFound", err)
	}
	if _, err := Open(ctx, c, "r", nil); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Open after Delete: %v", err)
	}
}

// A reader never sees a half-written filter: readers query keys that
// every generation holds while uploads replace the filter again and
// again; no answer is false and no error escapes the retries.
func TestUploadInvisible(t *testing.T) {
	s := redistest.Start(t, redistest.Options{})
	c := s.Client("")
	ctx := context.Background()
	base := keys("base", 2000)
	gen := func(i int) *blocked.Filter {
		f := local(t, 50000)
		for _, k := range base {
			f.Add(k)
		}
		for _, k := range keys(fmt.Sprint("extra", i), 10000) {
			f.Add(k)
		}
		return f
	}
	if _, err := UploadFilter(ctx, c, "inv", gen(0), &Config{Shards: 6}); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	var queries, falses, errs atomic.Int64
	for _, m := range methods {
		r, err := Open(ctx, c, "inv", &Config{Method: m})
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out := make([]bool, len(base))
				for !stop.Load() {
					out, err := r.ContainsBatch(ctx, base, out)
					if err != nil {
						errs.Add(1)
						t.Error(err)
						continue
					}
					for _, v := range out {
						queries.Add(1)
						if !v {
							falses.Add(1)
						}
					}
				}
			}()
		}
	}
	for i := 1; i <= 20; i++ {
		if _, err := UploadFilter(ctx, c, "inv", gen(i), &Config{Replace: true, Shards: 3 + i%5}); err != nil {
			t.Fatal(err)
		}
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("%d answers during 20 replacements: %d false, %d errors", queries.Load(), falses.Load(), errs.Load())
	if falses.Load() != 0 || queries.Load() == 0 {
		t.Fatalf("%d false answers of %d", falses.Load(), queries.Load())
	}
	// The old generations are gone: the metadata, the live shards and
	// the tombstones remain.
	var data int
	for _, k := range c.Keys(ctx, "inv:*").Val() {
		if c.Type(ctx, k).Val() == "string" {
			data++
		}
	}
	if f, _ := Open(ctx, c, "inv", nil); data != f.Plan().Shards {
		t.Errorf("%d shard strings after 20 replacements, want %d", data, f.Plan().Shards)
	}
}

// An upload interrupted between retiring the old generation and switching
// the metadata: operations retry, then fail with ErrRetired; none answers
// false. A shard deleted or evicted behind the filter's back: the same,
// and an add does not leave a zero string in its place.
func TestRetired(t *testing.T) {
	if testing.Short() {
		t.Skip("waits through the retries: the full run has it")
	}
	s := redistest.Start(t, redistest.Options{})
	c := s.Client("")
	ctx := context.Background()
	for _, m := range methods {
		lf := local(t, 1000)
		lf.AddString("x")
		f, err := UploadFilter(ctx, c, "ret-"+m.String(), lf, &Config{Method: m, Shards: 2})
		if err != nil {
			t.Fatal(err)
		}
		l := f.cur.Load()
		if err := retire(ctx, c, l, 99); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		v, err := f.ContainsString(ctx, "x")
		if !errors.Is(err, ErrRetired) || v {
			t.Errorf("%v: Contains on a retired generation: %v, %v", m, v, err)
		}
		if d := time.Since(start); m == Bitfield && (d < time.Second || d > 5*time.Second) {
			t.Errorf("%v: gave up after %v, want about 1.6 s of retries", m, d)
		}
		if m == Bitfield {
			defer func(w int) { maxRetiredWaits = w }(maxRetiredWaits)
			maxRetiredWaits = 1 // the rest need not wait as long
		}
		out, err := f.ContainsBatch(ctx, [][]byte{[]byte("x"), []byte("y")}, nil)
		var be *BatchError
		if !errors.As(err, &be) || len(be.Failed) != 2 || !out[0] || !out[1] || !errors.Is(err, ErrRetired) {
			t.Errorf("%v: ContainsBatch: %v, %v", m, out, err)
		}
		if err := f.AddString(ctx, "y"); !errors.Is(err, ErrRetired) {
			t.Errorf("%v: Add: %v", m, err)
		}
		// Deleted shards.
		c.Del(ctx, l.keys...)
		if v, err := f.ContainsString(ctx, "x"); !errors.Is(err, ErrRetired) || v {
			t.Errorf("%v: Contains on deleted shards: %v, %v", m, v, err)
		}
		if err := f.AddString(ctx, "y"); !errors.Is(err, ErrRetired) {
			t.Errorf("%v: Add on deleted shards: %v", m, err)
		}
		if n := c.Exists(ctx, l.keys...).Val(); n != 0 {
			t.Errorf("%v: the add left %d keys where the shards were", m, n)
		}
	}
}

// The Script method survives the server losing its scripts (a restart, a
// failover, SCRIPT FLUSH): NOSCRIPT is answered with EVAL.
func TestNoScript(t *testing.T) {
	s := redistest.Start(t, redistest.Options{})
	c := s.Client("")
	ctx := context.Background()
	f, err := UploadFilter(ctx, c, "ns", local(t, 1000), &Config{Method: Script, Shards: 3})
	if err != nil {
		t.Fatal(err)
	}
	batch := keys("n", 100)
	for range 2 {
		c.ScriptFlush(ctx)
		if err := f.AddString(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		c.ScriptFlush(ctx)
		if v, err := f.ContainsString(ctx, "a"); !v || err != nil {
			t.Fatal(v, err)
		}
		c.ScriptFlush(ctx)
		if err := f.AddBatch(ctx, batch); err != nil {
			t.Fatal(err)
		}
		c.ScriptFlush(ctx)
		if out, err := f.ContainsBatch(ctx, batch, nil); err != nil || !all(out) {
			t.Fatal(err)
		}
	}
}

func all(v []bool) bool {
	for _, x := range v {
		if !x {
			return false
		}
	}
	return true
}

// A timeout and a dead server are errors, never "absent"; with
// appendfsync always, every acknowledged add survives kill -9. The filter
// is filled and checked through a client with the usual timeouts (a
// pipeline of 4096 adds, synced, can take more than 200 ms on a loaded
// machine); the one with 200 ms timeouts meets the pause and the kill.
func TestTimeoutAndCrash(t *testing.T) {
	s := redistest.Start(t, redistest.Options{AppendFsync: "always"})
	admin := s.Client("")
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: s.Addr, DisableIdentity: true, MaxRetries: -1,
		ReadTimeout: 200 * time.Millisecond, WriteTimeout: 200 * time.Millisecond, DialTimeout: 200 * time.Millisecond})
	defer c.Close()
	filled, err := UploadFilter(ctx, admin, "tc", local(t, 100000), &Config{Shards: 4})
	if err != nil {
		t.Fatal(err)
	}
	added := keys("a", 20000)
	if err := filled.AddBatch(ctx, added); err != nil {
		t.Fatal(err)
	}
	f, err := Open(ctx, c, "tc", nil)
	if err != nil {
		t.Fatal(err)
	}
	admin.Do(ctx, "CLIENT", "PAUSE", "1500", "ALL")
	v, err := f.Contains(ctx, added[0])
	if err == nil || v {
		t.Errorf("Contains during a pause: %v, %v; want a timeout", v, err)
	}
	out, err := f.ContainsBatch(ctx, added[:100], nil)
	var be *BatchError
	if !errors.As(err, &be) || len(be.Failed) != 100 || !all(out) {
		t.Errorf("ContainsBatch during a pause: %v", err)
	}
	time.Sleep(1600 * time.Millisecond)
	s.Kill()
	if v, err := f.Contains(ctx, added[0]); err == nil || v {
		t.Errorf("Contains with the server down: %v, %v", v, err)
	}
	if err := f.AddBatch(ctx, added[:10]); !errors.As(err, &be) || len(be.Failed) != 10 {
		t.Errorf("AddBatch with the server down: %v", err)
	}
	s.Restart()
	if v, err := f.Contains(ctx, added[0]); err != nil || !v {
		t.Errorf("Contains after the restart: %v, %v", v, err)
	}
	out, err = filled.ContainsBatch(ctx, added, nil)
	if err != nil || !all(out) {
		t.Fatalf("after kill -9 and restart: %v, all present %v", err, all(out))
	}
}

// Many clients share one filter: concurrent adds from several Filters are
// all present (run under -race in CI).
func TestConcurrentClients(t *testing.T) {
	s := redistest.Start(t, redistest.Options{})
	c := s.Client("")
	ctx := context.Background()
	if _, err := UploadFilter(ctx, c, "cc", local(t, 100000), &Config{Shards: 7}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 4 {
		f, err := Open(ctx, c, "cc", &Config{Method: methods[w%2]})
		if err != nil {
			t.Fatal(err)
		}
		for g := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ks := keys(fmt.Sprint(w, "-", g), 3000)
				for i := 0; i < len(ks); i += 250 {
					if err := f.AddBatch(ctx, ks[i:i+250]); err != nil {
						t.Error(err)
					}
				}
				for _, k := range ks[:50] {
					if err := f.Add(ctx, k); err != nil {
						t.Error(err)
					}
				}
			}()
		}
	}
	wg.Wait()
	f, _ := Open(ctx, c, "cc", nil)
	for w := range 4 {
		for g := range 2 {
			out, err := f.ContainsBatch(ctx, keys(fmt.Sprint(w, "-", g), 3000), nil)
			if err != nil || !all(out) {
				t.Fatalf("client %d/%d: %v", w, g, err)
			}
		}
	}
	in, _ := f.Info(ctx)
	if in.N != 8*3050 {
		t.Errorf("N = %d, want %d", in.N, 8*3050)
	}
}

// The shard counter is where the doc says: the 8 bytes after the marker,
// big-endian.
func TestTrailer(t *testing.T) {
	s := redistest.Start(t, redistest.Options{})
	c := s.Client("")
	ctx := context.Background()
	f, err := UploadFilter(ctx, c, "tr", local(t, 100), nil)
	if err != nil {
		t.Fatal(err)
	}
	f.AddBatch(ctx, keys("t", 5))
	v := c.Get(ctx, f.ShardKeys()[0]).Val()
	tr := v[len(v)-16:]
	if tr[:8] != marker || binary.BigEndian.Uint64([]byte(tr[8:])) != 5 {
		t.Errorf("trailer %q", tr)
	}
}

// Add counters written by a hostile client: a negative counter is an
// error (not 2^64 − 5 keys), and counters whose sum would wrap report the
// largest count instead of a small one.
func TestHostileCounters(t *testing.T) {
	s := redistest.Start(t, redistest.Options{})
	c := s.Client("")
	ctx := context.Background()
	f, err := UploadFilter(ctx, c, "hc", local(t, 2000), &Config{Shards: 3})
	if err != nil {
		t.Fatal(err)
	}
	sk := f.ShardKeys()
	setCounter := func(key string, v int64) {
		t.Helper()
		n := c.StrLen(ctx, key).Val()
		if err := c.Do(ctx, "BITFIELD", key, "SET", "i64", (n-8)*8, v).Err(); err != nil {
			t.Fatal(err)
		}
	}
	setCounter(sk[0], -5)
	if _, err := f.N(ctx); !errors.Is(err, ErrNotFilter) {
		t.Errorf("N with a negative counter: %v", err)
	}
	if _, err := f.Info(ctx); !errors.Is(err, ErrNotFilter) {
		t.Errorf("Info with a negative counter: %v", err)
	}
	for _, k := range sk {
		setCounter(k, math.MaxInt64)
	}
	if err := f.Add(ctx, []byte("one more")); err != nil { // saturates its shard's counter
		t.Fatal(err)
	}
	if n, err := f.N(ctx); err != nil || n != math.MaxUint64 {
		t.Errorf("N with counters summing past 2^64: %d, %v", n, err)
	}
	if in, err := f.Info(ctx); err != nil || in.N != math.MaxUint64 {
		t.Errorf("Info.N with counters summing past 2^64: %v", err)
	}
}

// pipeHook records, for each pipeline, the bytes of the strings its
// SETRANGEs would create (offset + value length).
type pipeHook struct {
	mu      sync.Mutex
	created []uint64
}

func (h *pipeHook) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *pipeHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h *pipeHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		var n uint64
		for _, c := range cmds {
			if a := c.Args(); c.Name() == "setrange" && len(a) == 4 {
				if b, ok := a[3].([]byte); ok && string(b[:8]) == marker {
					n += a[2].(uint64) + uint64(len(b))
				}
			}
		}
		h.mu.Lock()
		h.created = append(h.created, n)
		h.mu.Unlock()
		return next(ctx, cmds)
	}
}

// An upload creates its shards in pipelines of at most createBytes (and
// one shard), so that a large filter's first pipeline does not outlast
// the client's read timeout: a 3.6 GB filter's 54 shards in one pipeline
// failed with an i/o timeout. Shown here with small shards and a small
// bound.
func TestUploadCreatesInSteps(t *testing.T) {
	defer func(v uint64) { createBytes = v }(createBytes)
	createBytes = 3000
	s := redistest.Start(t, redistest.Options{})
	c := s.Client("")
	h := &pipeHook{}
	c.AddHook(h)
	ctx := context.Background()
	f, err := UploadFilter(ctx, c, "steps", local(t, 20000), &Config{Shards: 16})
	if err != nil {
		t.Fatal(err)
	}
	shard := f.Plan().ShardBytes
	var total, pipes uint64
	for _, n := range h.created {
		if n > createBytes+shard {
			t.Errorf("a pipeline creates %d bytes of shards, more than %d + one shard of %d", n, createBytes, shard)
		}
		if n > 0 {
			pipes++
		}
		total += n
	}
	if want := f.Blocks()*blockBytes + 16*trailerLen; total != want {
		t.Errorf("the pipelines create %d bytes, want %d", total, want)
	}
	if pipes < 2 {
		t.Errorf("%d pipelines create the shards, want several", pipes)
	}
	if err := f.AddString(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	if ok, err := f.ContainsString(ctx, "x"); !ok || err != nil {
		t.Errorf("Contains after the upload: %v, %v", ok, err)
	}
}
