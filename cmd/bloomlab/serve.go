package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/bloomlab/bloomlab/server"
)

func init() {
	register(&command{
		name: "serve",
		summary: "Serve filters over Redis's protocol: RedisBloom's BF.*, CF.*, CMS.*, TOPK.* and TDIGEST.* commands for any Redis client " +
			"(RESP2 and RESP3), filters built offline with -load, a snapshot and an append-only log in -dir. " +
			"SIGTERM or SIGINT finishes the commands in flight, takes a snapshot if anything changed since the last one and exits 0 (docs/SERVER.md).",
		usage:      "bloomlab serve [-addr HOST:PORT] [-dir DIR] [-appendfsync always|everysec|no] [-load NAME=FILE.blf …] [-load-rdb dump.rdb] [flags]",
		run:        runServe,
		ownSignals: true,
	})
}

// loadList is the repeatable -load NAME=FILE flag.
type loadList []server.Load

func (l *loadList) String() string {
	var parts []string
	for _, x := range *l {
		parts = append(parts, x.Name+"="+x.Path)
	}
	return strings.Join(parts, ",")
}

func (l *loadList) Set(s string) error {
	name, path, ok := strings.Cut(s, "=")
	if !ok || name == "" || path == "" {
		return fmt.Errorf("want NAME=FILE.blf, got %q", s)
	}
	for _, x := range *l {
		if x.Name == name {
			return fmt.Errorf("%s loaded twice", name)
		}
	}
	*l = append(*l, server.Load{Name: name, Path: path})
	return nil
}

// pairList is a repeatable NAME=VALUE flag.
type pairList [][2]string

func (l *pairList) String() string {
	var parts []string
	for _, x := range *l {
		parts = append(parts, x[0]+"="+x[1])
	}
	return strings.Join(parts, ",")
}

func (l *pairList) Set(s string) error {
	name, value, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return fmt.Errorf("want NAME=VALUE, got %q", s)
	}
	*l = append(*l, [2]string{name, value})
	return nil
}

// seconds is a duration flag that also takes a plain number of seconds
// (as Redis's save takes them).
type seconds time.Duration

func (d *seconds) String() string { return time.Duration(*d).String() }

func (d *seconds) Set(s string) error {
	if n, err := strconv.ParseUint(s, 10, 32); err == nil {
		*d = seconds(time.Duration(n) * time.Second)
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return fmt.Errorf("%q: want seconds or a duration (300, 5m)", s)
	}
	*d = seconds(v)
	return nil
}

// byteSize is a size flag in bytes with Redis's units (1k = 1000, 1kb =
// 1024, likewise m, mb, g, gb).
type byteSize int64

func (b *byteSize) String() string { return strconv.FormatInt(int64(*b), 10) }

func (b *byteSize) Set(s string) error {
	v, err := parseBytes(s)
	if err != nil {
		return err
	}
	*b = byteSize(v)
	return nil
}

func parseBytes(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mul := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"k", 1000}, {"m", 1000 * 1000}, {"g", 1000 * 1000 * 1000}, {"b", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mul = strings.TrimSuffix(t, u.suffix), u.m
			break
		}
	}
	v, err := strconv.ParseInt(t, 10, 64)
	if err != nil || v < 0 || v > (1<<62)/mul {
		return 0, fmt.Errorf("size %q: want a number of bytes, with k, kb, m, mb, g or gb", s)
	}
	return v * mul, nil
}

func runServe(e *env, args []string) error {
	fs := flagSet("serve")
	addr := fs.String("addr", "127.0.0.1:6379", "address to listen on (the loopback interface unless you say otherwise)")
	dir := fs.String("dir", ".", "directory of the snapshot (bloomlab.snap) and the log (bloomlab.N.aof)")
	fsync := fs.String("appendfsync", "everysec", "log durability: always (acknowledge after fsync), everysec, no (Redis's meanings)")
	save := seconds(5 * time.Minute)
	fs.Var(&save, "save", "SECONDS (or a duration: 5m): take a snapshot (and start a new log) this often when something changed; 0: only on SAVE, BGSAVE, BGREWRITEAOF, log growth and shutdown")
	rewrite := byteSize(64 << 20)
	fs.Var(&rewrite, "aof-rewrite-size", "compact the log (a snapshot) when it grows past this and past the snapshot's size; 0: never")
	pass := fs.String("requirepass", "", "password clients must give (AUTH, HELLO AUTH)")
	cert := fs.String("tls-cert", "", "TLS certificate (PEM); with -tls-key the server speaks only TLS")
	key := fs.String("tls-key", "", "TLS private key (PEM)")
	var maxmem byteSize
	fs.Var(&maxmem, "maxmemory", "memory for keys and for clients' requests and replies (INFO used_memory); writes and requests past it are refused with OOM (0: 3/4 of physical memory; units k, kb, m, mb, g, gb)")
	noLimit := fs.Bool("no-maxmemory", false, "no memory limit at all")
	maxClients := fs.Int("maxclients", 10000, "most concurrent connections")
	timeout := fs.Duration("timeout", 0, "close a client that sends no complete command for this long (0: never)")
	bulk := byteSize(512 << 20)
	fs.Var(&bulk, "proto-max-bulk-len", "longest argument a client may send")
	maxArgs := fs.Int("max-args", 1<<20, "most arguments in one command")
	dialect := fs.String("dialect", "8", "whose replies to give: 8 (RedisBloom 8.6.2, the RedisBloom of Redis 8: RESP3 booleans and maps, its ranges and error texts) or 2.4 (RedisBloom 2.4.23 on Redis 7.0); stored data is the same under both")
	var modcfg pairList
	fs.Var(&modcfg, "module-config", "NAME=VALUE: a RedisBloom module config at start, as CONFIG SET NAME VALUE (repeatable; dialect 8): bf-error-rate, bf-initial-size, bf-expansion-factor, cf-bucket-size, cf-initial-size, cf-max-iterations, cf-expansion-factor, cf-max-expansions, the defaults of new keys")
	bfLayout := fs.String("bf-layout", "redisbloom", "layout of new BF keys made without LAYOUT (the CONFIG parameter bloomlab-bf-layout at start): redisbloom (RedisBloom's links: BF.SCANDUMP loads into RedisBloom) or blocked (cache-line-blocked links, one cache line per link a query tests; BF.SCANDUMP in bloomlab's own framing, which only bloomlab loads)")
	pprofAddr := fs.String("pprof", "", "HOST:PORT: serve Go's profiles (net/http/pprof: /debug/pprof/profile, mutex, block) on this address, for measuring the server; mutex and block profiling are switched on with it (a loopback address unless you say otherwise: the profiles show commands' keys)")
	var loads loadList
	fs.Var(&loads, "load", "NAME=FILE.blf: serve a bloomlab file of any kind as key NAME (repeatable); the file is NAME's initial state")
	loadRDB := fs.String("load-rdb", "", "FILE.rdb: a Redis RDB file (Redis 7.0 to 8.x: strings and RedisBloom's BF, CF, CMS, TOPK and TDIGEST keys) as the initial state of an empty -dir, loaded once (a -dir that holds a dataset keeps it)")
	skipUnsupported := fs.Bool("skip-unsupported", false, "with -load-rdb: leave out (and count) the keys of other Redis types, other modules and other databases instead of refusing the file")
	rdbDB := fs.Int("db", 0, "with -load-rdb: the database of the file to load (one database per server); with -replicaof: the primary's database replicated")
	replicaOf := fs.String("replicaof", "", "HOST:PORT: start as a replica of this primary (serve, or Redis 7.0 to 8.x with RedisBloom), as REPLICAOF HOST PORT does (docs/REPLICATION.md)")
	masterAuth := fs.String("masterauth", "", "with -replicaof: the primary's password (Redis's masterauth)")
	masterUser := fs.String("masteruser", "", "with -replicaof: the user to authenticate as on the primary (Redis's masteruser)")
	replSkip := fs.Bool("replica-skip-unsupported", false, "with -replicaof: skip, and count in INFO, the primary's keys and commands of other Redis types instead of stopping replication at the first")
	minReplicas := fs.Int("min-replicas-to-write", 0, "refuse writes (NOREPLICAS) unless this many replicas are online and acknowledged within -min-replicas-max-lag (Redis's min-replicas-to-write; 0: never)")
	minLag := seconds(10 * time.Second)
	fs.Var(&minLag, "min-replicas-max-lag", "SECONDS: the lag within which a replica counts for -min-replicas-to-write")
	backlog := byteSize(1 << 20)
	fs.Var(&backlog, "repl-backlog-size", "the replication stream kept for replicas' partial resynchronisations (Redis's repl-backlog-size)")
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	if *rdbDB < 0 {
		return usagef("-db %d: want a database number (0 or more)", *rdbDB)
	}
	mode, err := server.ParseFsync(*fsync)
	if err != nil {
		return usagef("-appendfsync %q: want always, everysec or no", *fsync)
	}
	dia, err := server.ParseDialect(*dialect)
	if err != nil {
		return usagef("-dialect: %v", err)
	}
	if (*cert == "") != (*key == "") {
		return usagef("-tls-cert and -tls-key go together")
	}
	if *replicaOf != "" {
		if _, _, err := server.ParseReplicaOf(*replicaOf); err != nil {
			return usagef("-%v", err)
		}
	}
	if *bfLayout != "redisbloom" && *bfLayout != "blocked" {
		return usagef("-bf-layout %q: want redisbloom or blocked", *bfLayout)
	}
	cfg := server.Config{
		Dir: *dir, AppendFsync: mode, SaveInterval: time.Duration(save), AutoRewriteSize: int64(rewrite),
		Password: *pass, MaxMemory: int64(maxmem), MaxClients: *maxClients, IdleTimeout: *timeout,
		MaxBulk: int64(bulk), MaxArgs: *maxArgs, Load: loads, Dialect: dia, ModuleConfigs: modcfg, BFLayout: *bfLayout,
		LoadRDB: *loadRDB, LoadRDBSkipUnsupported: *skipUnsupported, LoadRDBDB: *rdbDB,
		ReplicaOf: *replicaOf, MasterAuth: *masterAuth, MasterUser: *masterUser, ReplicaSkipUnsupported: *replSkip,
		ReplBacklogSize: int64(backlog), MinReplicasToWrite: *minReplicas, MinReplicasMaxLag: time.Duration(minLag),
		Logger: log.New(e.stderr, "", log.LstdFlags),
	}
	if rewrite == 0 {
		cfg.AutoRewriteSize = -1
	}
	if *noLimit {
		cfg.MaxMemory = -1
	}
	if *cert != "" {
		c, err := tls.LoadX509KeyPair(*cert, *key)
		if err != nil {
			return fmt.Errorf("TLS: %w", err)
		}
		cfg.TLS = &tls.Config{Certificates: []tls.Certificate{c}, MinVersion: tls.VersionTLS12}
	}
	if *pprofAddr != "" {
		stop, err := servePprof(*pprofAddr, e.stderr)
		if err != nil {
			return fmt.Errorf("-pprof: %w", err)
		}
		defer stop()
	}
	// Signals first, so that a SIGTERM while the log is replayed is not lost.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv, err := server.New(cfg)
	if err != nil {
		l.Close()
		return err
	}
	fmt.Fprintf(e.stderr, "bloomlab serve: listening on %s (dir %s, appendfsync %s, dialect %s)\n", l.Addr(), *dir, mode, dia)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	select {
	case s := <-sig:
		fmt.Fprintf(e.stderr, "bloomlab serve: %v: finishing the commands in flight and saving\n", s)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			return fmt.Errorf("shutdown: %w", err)
		}
	case <-srv.Done():
		if err := srv.Err(); err != nil {
			return fmt.Errorf("shutdown: %w", err)
		}
	case err := <-served:
		if err != server.ErrServerClosed {
			srv.Close()
			return err
		}
		<-srv.Done()
	}
	fmt.Fprintln(e.stderr, "bloomlab serve: stopped")
	return nil
}
