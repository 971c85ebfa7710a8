package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/bloomlab/bloomlab"
	"github.com/bloomlab/bloomlab/cuckoo"
	"github.com/bloomlab/bloomlab/internal/blrd"
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
	chunk := fs.Int("chunk", blrd.DefaultChunkSize, "push: bytes per BF.LOADCHUNK or CF.LOADCHUNK")
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

// rbFilter is a filter with a RedisBloom dump (a RedisBloom-profile
// scalable.Filter or cuckoo.Filter).
type rbFilter interface {
	Dump(chunkSize int) ([]blrd.Chunk, error)
}

// rbFamily is a RedisBloom family with a dump, as pull and push move it:
// its type, its commands and its loader (internal/blrd's contract).
type rbFamily struct {
	name string // "BF": the commands are BF.SCANDUMP, BF.LOADCHUNK
	typ  string // TYPE's reply for its keys
	// watched: a dump is taken under WATCH, and taken again if the key
	// changed meanwhile.
	watched   bool
	scan      func(c redis.Cmdable, ctx context.Context, key string, iter int64) *redis.ScanDumpCmd
	load      func(c redis.Cmdable, ctx context.Context, key string, iter int64, data any) *redis.StatusCmd
	newLoader func() blrd.Loader
	finish    func(ld blrd.Loader) (writerTo, error)
	nothing   string // why SCANDUMP key 0 may return nothing
	// of returns a file's filter as one of this family (ok false:
	// another family's, or one without a RedisBloom form).
	of func(g bloomlab.Filter) (f rbFilter, ok bool)
	// check compares the key's INFO after a push with the file's
	// filter, and returns what push reports.
	check func(ctx context.Context, rdb *redis.Client, key string, g bloomlab.Filter) (string, error)
}

// rbFamilies are BF and CF, in the order push tries them.
var rbFamilies = []*rbFamily{
	{
		name: "CF", typ: "MBbloomCF",
		// A cuckoo filter's add moves fingerprints between buckets (and
		// a delete removes them), so a dump whose chunks straddle a
		// write can miss a key that was in the filter throughout — a
		// false negative in the file.
		watched:   true,
		scan:      redis.Cmdable.CFScanDump,
		load:      redis.Cmdable.CFLoadChunk,
		newLoader: func() blrd.Loader { return new(cuckoo.Loader) },
		finish:    func(ld blrd.Loader) (writerTo, error) { return ld.(*cuckoo.Loader).Filter() },
		nothing:   ": RedisBloom dumps no cuckoo filter that holds no keys",
		of: func(g bloomlab.Filter) (rbFilter, bool) {
			f, ok := g.(*cuckoo.Filter)
			return f, ok && f.Info().Profile == cuckoo.RedisBloom
		},
		check: func(ctx context.Context, rdb *redis.Client, key string, g bloomlab.Filter) (string, error) {
			info, err := rdb.CFInfo(ctx, key).Result()
			if err != nil {
				return "", fmt.Errorf("CF.INFO %s after the load: %w", key, err)
			}
			want := g.(*cuckoo.Filter).Info()
			if info.NumBuckets != int64(want.Buckets) || info.NumFilters != int64(want.SubFilters) || info.NumItemsInserted != int64(want.N) ||
				info.NumItemsDeleted != int64(want.Deletes) || info.BucketSize != int64(want.BucketSize) {
				return "", fmt.Errorf("after the load, CF.INFO %s says %d buckets, %d filters, %d items, %d deleted, bucket size %d; the file has %d, %d, %d, %d, %d",
					key, info.NumBuckets, info.NumFilters, info.NumItemsInserted, info.NumItemsDeleted, info.BucketSize,
					want.Buckets, want.SubFilters, want.N, want.Deletes, want.BucketSize)
			}
			return fmt.Sprintf("%d filters, %d items (cuckoo)", info.NumFilters, info.NumItemsInserted), nil
		},
	},
	{
		name: "BF", typ: "MBbloom--",
		scan:      redis.Cmdable.BFScanDump,
		load:      redis.Cmdable.BFLoadChunk,
		newLoader: func() blrd.Loader { return new(scalable.Loader) },
		finish:    func(ld blrd.Loader) (writerTo, error) { return ld.(*scalable.Loader).Filter() },
		of: func(g bloomlab.Filter) (rbFilter, bool) {
			f, ok := g.(*scalable.Filter)
			return f, ok && f.Config().Profile == scalable.RedisBloom
		},
		check: func(ctx context.Context, rdb *redis.Client, key string, g bloomlab.Filter) (string, error) {
			// BF.INFO read field by field: go-redis's BFInfo gives up at
			// a NONSCALING filter's nil "Expansion rate" (RedisBloom 8),
			// leaving every field zero.
			info, err := bfInfoInts(ctx, rdb, key)
			if err != nil {
				return "", fmt.Errorf("BF.INFO %s after the load: %w", key, err)
			}
			want := g.(*scalable.Filter).RedisInfo()
			capacity, filters, items := info["Capacity"], info["Number of filters"], info["Number of items inserted"]
			if capacity != int64(want.Capacity) || filters != int64(want.Filters) || items != int64(want.Items) {
				return "", fmt.Errorf("after the load, BF.INFO %s says capacity %d, %d filters, %d items; the file has %d, %d, %d",
					key, capacity, filters, items, want.Capacity, want.Filters, want.Items)
			}
			return fmt.Sprintf("%d filters, %d items", filters, items), nil
		},
	},
}

// bfInfoInts returns BF.INFO's integer fields by name, from its RESP2
// array of names and values or its RESP3 map; a field whose value is not
// an integer (a NONSCALING filter's nil expansion) is left out.
func bfInfoInts(ctx context.Context, rdb *redis.Client, key string) (map[string]int64, error) {
	v, err := rdb.Do(ctx, "BF.INFO", key).Result()
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	put := func(name, value any) {
		n, ok1 := name.(string)
		x, ok2 := value.(int64)
		if ok1 && ok2 {
			out[n] = x
		}
	}
	switch r := v.(type) {
	case []any:
		for i := 0; i+1 < len(r); i += 2 {
			put(r[i], r[i+1])
		}
	case map[any]any:
		for name, value := range r {
			put(name, value)
		}
	default:
		return nil, fmt.Errorf("a reply of type %T, not BF.INFO's", v)
	}
	return out, nil
}

// pullAny pulls key by its type: MBbloom-- with BF.SCANDUMP, MBbloomCF
// with CF.SCANDUMP. A missing key, or a key of another type, is an error.
func pullAny(ctx context.Context, rdb *redis.Client, key string) (writerTo, error) {
	typ, err := rdb.Type(ctx, key).Result()
	if err != nil {
		return nil, fmt.Errorf("TYPE %s: %w", key, err)
	}
	for _, fam := range rbFamilies {
		if typ == fam.typ {
			return pull(ctx, rdb, key, fam)
		}
	}
	if typ == "none" {
		return nil, fmt.Errorf("key %s does not exist", key)
	}
	return nil, fmt.Errorf("key %s is a %s, not a RedisBloom filter (MBbloom-- or MBbloomCF)", key, typ)
}

// pullAttempts is how many times pull dumps a watched key that keeps
// changing during its dump.
const pullAttempts = 5

// afterScanChunk, if set, is called after each SCANDUMP chunk (tests).
var afterScanChunk func(iter int64)

// pull reads key with the family's SCANDUMP: the header (iterator 0),
// then chunks until the iterator comes back as 0, checked as they come
// (the family's loader: order, sizes, the header before any allocation).
// A watched family's dump (CF) is taken under WATCH: a dump during which
// the key changed is discarded and taken again, up to pullAttempts times,
// then refused. A BF dump is taken chunk by chunk: a key written during
// it may give a file whose count disagrees with its bits. A key that
// dumps nothing (RedisBloom's CF of no keys: its reply is 0 at once) is
// an error, since its parameters cannot be recovered.
func pull(ctx context.Context, rdb *redis.Client, key string, fam *rbFamily) (writerTo, error) {
	if !fam.watched {
		return dump(ctx, rdb, key, fam)
	}
	var f writerTo
	for range pullAttempts {
		err := rdb.Watch(ctx, func(tx *redis.Tx) error {
			var derr error
			f, derr = dump(ctx, tx, key, fam)
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
	return nil, fmt.Errorf("key %s changed during each of %d dumps (%s.SCANDUMP under WATCH); stop its writers during the pull", key, pullAttempts, fam.name)
}

// dump reads key with the family's SCANDUMP on c's connection.
func dump(ctx context.Context, c redis.Cmdable, key string, fam *rbFamily) (writerTo, error) {
	ld := fam.newLoader()
	it := int64(0)
	for n := 0; ; n++ {
		d, err := fam.scan(c, ctx, key, it).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return nil, fmt.Errorf("%s.SCANDUMP %s %d: %w", fam.name, key, it, err)
		}
		if afterScanChunk != nil {
			afterScanChunk(d.Iter)
		}
		if d.Iter == 0 {
			if n == 0 {
				return nil, fmt.Errorf("%s.SCANDUMP %s 0 returned nothing%s", fam.name, key, fam.nothing)
			}
			break
		}
		if n == 0 && d.Iter != 1 {
			return nil, fmt.Errorf("%s.SCANDUMP %s 0 answered iterator %d, want 1", fam.name, key, d.Iter)
		}
		if err := ld.LoadChunk(d.Iter, []byte(d.Data)); err != nil {
			return nil, fmt.Errorf("%s.SCANDUMP %s %d: %w", fam.name, key, it, err)
		}
		it = d.Iter
	}
	f, err := fam.finish(ld)
	if err != nil {
		return nil, fmt.Errorf("the dump of %s: %w", key, err)
	}
	return f, nil
}

// push writes the file's filter (a RedisBloom-profile chain or cuckoo
// filter) to key with its family's LOADCHUNK and checks that the
// server's INFO then describes the same filter.
func push(ctx context.Context, rdb *redis.Client, key, path string, chunk int, force bool, e *env) error {
	g, err := loadFile(path)
	if err != nil {
		return err
	}
	for _, fam := range rbFamilies {
		f, ok := fam.of(g)
		if !ok {
			continue
		}
		chunks, err := f.Dump(chunk)
		if err != nil {
			return err
		}
		if err := clearKey(ctx, rdb, key, force); err != nil {
			return err
		}
		for _, c := range chunks {
			if err := fam.load(rdb, ctx, key, c.Iter, c.Data).Err(); err != nil {
				return fmt.Errorf("%s.LOADCHUNK %s %d (%d bytes): %w", fam.name, key, c.Iter, len(c.Data), err)
			}
		}
		done, err := fam.check(ctx, rdb, key, g)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "bloomlab redis push: %s: %d chunks, %s\n", key, len(chunks), done)
		return nil
	}
	return fmt.Errorf("%s: a %s filter has no RedisBloom form; push takes a scalable or cuckoo filter of the redisbloom profile (bloomlab build -kind scalable|cuckoo -profile redisbloom)", path, g.Kind())
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
