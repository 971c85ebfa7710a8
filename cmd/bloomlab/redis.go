package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/bloomlab/bloomlab/cuckoo"
	"github.com/bloomlab/bloomlab/scalable"
	"github.com/redis/go-redis/v9"
)

func init() {
	register(&command{
		name: "redis",
		summary: "Move a filter between a file and Redis. With a TARGET (redis://…?key=NAME, rediss://…, redis+cluster://…; see build): " +
			"push uploads a blocked file into bloomlab's layout of plain strings (any Redis, Valkey, a cluster), streaming it, visible only once " +
			"complete, replacing an existing filter only with -force; pull downloads it into a bloomlab file. With -addr and -key: a filter " +
			"of RedisBloom's BF or CF commands (bloomlab serve, Redis 8, Redis Stack): pull reads KEY with BF.SCANDUMP (a cuckoo key with " +
			"CF.SCANDUMP, under WATCH) into a bloomlab file; push writes a RedisBloom-profile scalable or cuckoo file (bloomlab build " +
			"-kind scalable|cuckoo -profile redisbloom, or an earlier pull) to KEY with BF.LOADCHUNK or CF.LOADCHUNK and checks BF.INFO or " +
			"CF.INFO afterwards. A BF dump is taken chunk by chunk: add nothing to KEY during a pull.",
		usage: "bloomlab redis push [-force] FILE.blf TARGET | pull TARGET -o FILE.blf | pull|push -addr HOST:PORT -key KEY … (RedisBloom)",
		run:   runRedis,
	})
}

func runRedis(e *env, args []string) error {
	if len(args) == 0 || args[0] != "pull" && args[0] != "push" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			return &helpRequest{fs: flagSet("redis")}
		}
		return usagef("want pull or push")
	}
	op := args[0]
	fs := flagSet("redis " + op)
	addr := fs.String("addr", "127.0.0.1:6379", "server address")
	pass := fs.String("password", "", "password (AUTH)")
	user := fs.String("user", "", "user name (Redis ACL), with -password")
	useTLS := fs.Bool("tls", false, "connect with TLS")
	insecure := fs.Bool("tls-insecure", false, "with -tls: do not verify the server's certificate")
	key := fs.String("key", "", "the filter's key")
	out := fs.String("o", "", "pull: the bloomlab file to write (\"-\": standard output)")
	force := fs.Bool("force", false, "push: replace KEY (TARGET) if it exists")
	chunk := fs.Int("chunk", scalable.DefaultChunkSize, "push: bytes per BF.LOADCHUNK or CF.LOADCHUNK")
	timeout := fs.Duration("timeout", time.Minute, "timeout of each command")
	pos, err := parseFlags(fs, args[1:])
	if err != nil {
		return err
	}
	if t := len(pos) - 1; t >= 0 && isRedisURL(pos[t]) {
		// bloomlab's layout: push FILE TARGET, pull TARGET -o FILE.
		for _, f := range []string{"addr", "key", "password", "user", "tls", "tls-insecure", "chunk"} {
			if isSet(fs, f) {
				return usagef("-%s is for RedisBloom keys; a TARGET carries its address, password and key", f)
			}
		}
		switch {
		case op == "push" && len(pos) == 2:
			return pushTarget(e, pos[0], pos[1], *force)
		case op == "pull" && len(pos) == 1 && *out != "":
			return pullTarget(e, pos[0], *out)
		case op == "push":
			return usagef("push takes FILE.blf TARGET")
		}
		return usagef("pull takes TARGET -o FILE.blf")
	}
	if *key == "" {
		return usagef("-key KEY is required")
	}
	opt := redisBloomOptions(*addr, *user, *pass, *timeout)
	if *useTLS {
		opt.TLSConfig = &tls.Config{InsecureSkipVerify: *insecure, MinVersion: tls.VersionTLS12}
	}
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	ctx := context.Background()
	switch op {
	case "pull":
		if len(pos) != 0 || *out == "" {
			return usagef("pull takes -key KEY -o FILE.blf and no other argument")
		}
		f, err := pullAny(ctx, rdb, *key)
		if err != nil {
			return err
		}
		if *out == "-" {
			_, err = f.WriteTo(e.stdout)
			return err
		}
		return writeFileAtomic(*out, func(w io.Writer) error { _, err := f.WriteTo(w); return err })
	default:
		if len(pos) != 1 {
			return usagef("push takes -key KEY and one FILE.blf")
		}
		return push(ctx, rdb, *key, pos[0], *chunk, *force, e)
	}
}

// redisBloomOptions are the client options of pull and push with -addr:
// RESP2, each command's timeout, no retries, one dial (see dialerRetries).
func redisBloomOptions(addr, user, pass string, timeout time.Duration) *redis.Options {
	return &redis.Options{Addr: addr, Username: user, Password: pass, Protocol: 2,
		ReadTimeout: timeout, WriteTimeout: timeout, DialTimeout: 10 * time.Second, MaxRetries: -1,
		DialerRetries: dialerRetries, DisableIdentity: true}
}

// dialerRetries is the number of dials (a first one and its retries) each
// attempt of a command makes: 1, so that a server that is down is an error
// as soon as a dial fails. go-redis's default (v9.15 and later) is 5 dials
// 100 ms apart in each attempt: 1.7 s for a refused connection with the 3
// retries of a redis:// target, 5 dial timeouts for an address that does
// not answer. A client that retries commands (a redis:// target, 3 times)
// still does, with one dial each.
const dialerRetries = 1

// writerTo is what pull returns: a scalable (BF) or cuckoo (CF) filter.
type writerTo interface {
	WriteTo(w io.Writer) (int64, error)
}

// pullAny pulls key by its type: MBbloom-- with BF.SCANDUMP, MBbloomCF
// with CF.SCANDUMP. A missing key, or a key of another type, is an error.
func pullAny(ctx context.Context, rdb *redis.Client, key string) (writerTo, error) {
	typ, err := rdb.Type(ctx, key).Result()
	if err != nil {
		return nil, fmt.Errorf("TYPE %s: %w", key, err)
	}
	switch typ {
	case "MBbloom--":
		return pull(ctx, rdb, key)
	case "MBbloomCF":
		return pullCF(ctx, rdb, key)
	case "none":
		return nil, fmt.Errorf("key %s does not exist", key)
	}
	return nil, fmt.Errorf("key %s is a %s, not a RedisBloom filter (MBbloom-- or MBbloomCF)", key, typ)
}

// pullCFAttempts is how many times pullCF dumps a key that keeps changing
// during its dump.
const pullCFAttempts = 5

// afterCFChunk, if set, is called after each CF.SCANDUMP chunk (tests).
var afterCFChunk func(iter int64)

// pullCF reads key with CF.SCANDUMP, as pull does with BF.SCANDUMP, under
// WATCH: a cuckoo filter's add moves fingerprints between buckets (and a
// delete removes them), so a dump whose chunks straddle a write can miss a
// key that was in the filter throughout — a false negative in the file.
// A dump during which the key changed is discarded and taken again, up to
// pullCFAttempts times, then refused. A CF filter holding no keys dumps
// nothing (RedisBloom's reply is 0 at once): that is an error here, since
// its parameters cannot be recovered.
func pullCF(ctx context.Context, rdb *redis.Client, key string) (*cuckoo.Filter, error) {
	var f *cuckoo.Filter
	for range pullCFAttempts {
		err := rdb.Watch(ctx, func(tx *redis.Tx) error {
			var derr error
			f, derr = dumpCF(ctx, tx, key)
			// EXEC fails if the key was written since WATCH: then the
			// dump, or its failure (a mixture whose item count does not
			// match its buckets), is discarded and the dump taken again.
			_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error { return p.Ping(ctx).Err() })
			if err != nil {
				return err
			}
			return derr
		}, key)
		if errors.Is(err, redis.TxFailedErr) {
			continue
		}
		return f, err
	}
	return nil, fmt.Errorf("key %s changed during each of %d dumps (CF.SCANDUMP under WATCH); stop its writers during the pull", key, pullCFAttempts)
}

// dumpCF reads key with CF.SCANDUMP on tx's connection.
func dumpCF(ctx context.Context, tx *redis.Tx, key string) (*cuckoo.Filter, error) {
	var ld cuckoo.Loader
	it := int64(0)
	for n := 0; ; n++ {
		d, err := tx.CFScanDump(ctx, key, it).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return nil, fmt.Errorf("CF.SCANDUMP %s %d: %w", key, it, err)
		}
		if afterCFChunk != nil {
			afterCFChunk(d.Iter)
		}
		if d.Iter == 0 {
			if n == 0 {
				return nil, fmt.Errorf("CF.SCANDUMP %s 0 returned nothing: RedisBloom dumps no cuckoo filter that holds no keys", key)
			}
			break
		}
		if n == 0 && d.Iter != 1 {
			return nil, fmt.Errorf("CF.SCANDUMP %s 0 answered iterator %d, want 1", key, d.Iter)
		}
		if err := ld.LoadChunk(d.Iter, []byte(d.Data)); err != nil {
			return nil, fmt.Errorf("CF.SCANDUMP %s %d: %w", key, it, err)
		}
		it = d.Iter
	}
	f, err := ld.Filter()
	if err != nil {
		return nil, fmt.Errorf("the dump of %s: %w", key, err)
	}
	return f, nil
}

// pull reads key with BF.SCANDUMP: the header (iterator 0), then chunks
// until the iterator comes back as 0. The chunks are checked as they come
// (scalable.Loader: order, sizes, the header before any allocation).
func pull(ctx context.Context, rdb *redis.Client, key string) (*scalable.Filter, error) {
	var ld scalable.Loader
	it := int64(0)
	for n := 0; ; n++ {
		d, err := rdb.BFScanDump(ctx, key, it).Result()
		if err != nil {
			return nil, fmt.Errorf("BF.SCANDUMP %s %d: %w", key, it, err)
		}
		if d.Iter == 0 {
			break
		}
		if err := ld.LoadChunk(d.Iter, []byte(d.Data)); err != nil {
			return nil, fmt.Errorf("BF.SCANDUMP %s %d: %w", key, it, err)
		}
		if n == 0 && d.Iter != 1 {
			return nil, fmt.Errorf("BF.SCANDUMP %s 0 answered iterator %d, want 1", key, d.Iter)
		}
		it = d.Iter
	}
	f, err := ld.Filter()
	if err != nil {
		return nil, fmt.Errorf("the dump of %s: %w", key, err)
	}
	return f, nil
}

// push writes the file's chain to key with BF.LOADCHUNK and checks that
// the server's BF.INFO then describes the same chain.
func push(ctx context.Context, rdb *redis.Client, key, path string, chunk int, force bool, e *env) error {
	g, err := loadFile(path)
	if err != nil {
		return err
	}
	if cf, ok := g.(*cuckoo.Filter); ok && cf.Profile() == cuckoo.RedisBloom {
		return pushCF(ctx, rdb, key, cf, chunk, force, e)
	}
	f, ok := g.(*scalable.Filter)
	if !ok || f.Profile() != scalable.RedisBloom {
		return fmt.Errorf("%s: a %s filter has no RedisBloom form; push takes a scalable or cuckoo filter of the redisbloom profile (bloomlab build -kind scalable|cuckoo -profile redisbloom)", path, g.Kind())
	}
	chunks, err := f.Dump(chunk)
	if err != nil {
		return err
	}
	if err := clearKey(ctx, rdb, key, force); err != nil {
		return err
	}
	for _, c := range chunks {
		if err := rdb.BFLoadChunk(ctx, key, c.Iter, c.Data).Err(); err != nil {
			return fmt.Errorf("BF.LOADCHUNK %s %d (%d bytes): %w", key, c.Iter, len(c.Data), err)
		}
	}
	info, err := rdb.BFInfo(ctx, key).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("BF.INFO %s after the load: %w", key, err)
	}
	want := f.RedisInfo()
	if info.Capacity != int64(want.Capacity) || info.Filters != int64(want.Filters) || info.ItemsInserted != int64(want.Items) {
		return fmt.Errorf("after the load, BF.INFO %s says capacity %d, %d filters, %d items; the file has %d, %d, %d",
			key, info.Capacity, info.Filters, info.ItemsInserted, want.Capacity, want.Filters, want.Items)
	}
	fmt.Fprintf(e.stderr, "bloomlab redis push: %s: %d chunks, %d filters, %d items\n", key, len(chunks), info.Filters, info.ItemsInserted)
	return nil
}

// clearKey deletes key with force and refuses an existing key without.
func clearKey(ctx context.Context, rdb *redis.Client, key string, force bool) error {
	n, err := rdb.Exists(ctx, key).Result()
	if err != nil {
		return err
	}
	if n > 0 {
		if !force {
			return fmt.Errorf("key %s exists (-force deletes it first)", key)
		}
		if err := rdb.Del(ctx, key).Err(); err != nil {
			return err
		}
	}
	return nil
}

// pushCF writes a RedisBloom-profile cuckoo filter to key with
// CF.LOADCHUNK and checks CF.INFO afterwards.
func pushCF(ctx context.Context, rdb *redis.Client, key string, f *cuckoo.Filter, chunk int, force bool, e *env) error {
	chunks, err := f.Dump(chunk)
	if err != nil {
		return err
	}
	if err := clearKey(ctx, rdb, key, force); err != nil {
		return err
	}
	for _, c := range chunks {
		if err := rdb.CFLoadChunk(ctx, key, c.Iter, c.Data).Err(); err != nil {
			return fmt.Errorf("CF.LOADCHUNK %s %d (%d bytes): %w", key, c.Iter, len(c.Data), err)
		}
	}
	info, err := rdb.CFInfo(ctx, key).Result()
	if err != nil {
		return fmt.Errorf("CF.INFO %s after the load: %w", key, err)
	}
	want := f.RedisInfo()
	if info.NumBuckets != int64(want.Buckets) || info.NumFilters != int64(want.Filters) || info.NumItemsInserted != int64(want.Items) ||
		info.NumItemsDeleted != int64(want.Deletes) || info.BucketSize != int64(want.BucketSize) {
		return fmt.Errorf("after the load, CF.INFO %s says %d buckets, %d filters, %d items, %d deleted, bucket size %d; the file has %d, %d, %d, %d, %d",
			key, info.NumBuckets, info.NumFilters, info.NumItemsInserted, info.NumItemsDeleted, info.BucketSize,
			want.Buckets, want.Filters, want.Items, want.Deletes, want.BucketSize)
	}
	fmt.Fprintf(e.stderr, "bloomlab redis push: %s: %d chunks, %d filters, %d items (cuckoo)\n", key, len(chunks), info.NumFilters, info.NumItemsInserted)
	return nil
}
