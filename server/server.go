package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bloomlab/bloomlab/internal/sysmem"
	"github.com/bloomlab/bloomlab/server/internal/resp"
)

// Fsync is the log's durability policy, with Redis's appendfsync meanings.
type Fsync int

const (
	// EverySec writes the log at once and syncs it to disk once a second:
	// a crash of the machine loses at most about a second of writes (a
	// crash of the process alone loses nothing written).
	EverySec Fsync = iota
	// Always syncs the log before a write is acknowledged: an
	// acknowledged write survives kill -9 and power loss. Concurrent
	// writers share one fsync (group commit).
	Always
	// No writes the log and leaves syncing to the operating system.
	No
)

func (f Fsync) String() string {
	switch f {
	case Always:
		return "always"
	case No:
		return "no"
	}
	return "everysec"
}

// ParseFsync reads "always", "everysec" or "no".
func ParseFsync(s string) (Fsync, error) {
	for _, f := range []Fsync{Always, EverySec, No} {
		if strings.EqualFold(s, f.String()) {
			return f, nil
		}
	}
	return 0, fmt.Errorf("server: appendfsync %q: want always, everysec or no", s)
}

// Load names a bloomlab file whose filter is the initial state of a key.
type Load struct {
	Name string // the key
	Path string // a bloomlab file of any kind
}

// Config configures a Server. Zero fields take the documented defaults.
type Config struct {
	// Dir holds the snapshot and the log. Empty: nothing is persisted
	// (an in-memory server, as tests use it).
	Dir string
	// AppendFsync is the log's durability policy (default EverySec).
	AppendFsync Fsync
	// SaveInterval, when positive, takes a snapshot (and starts a new,
	// empty log) that often if anything changed since the last one.
	SaveInterval time.Duration
	// AutoRewriteSize, when the log grows past it and past the size of
	// the last snapshot, triggers a snapshot that compacts it (default
	// 64 MiB; negative: never).
	AutoRewriteSize int64
	// Password, if set, is required (AUTH or HELLO AUTH) before any
	// other command.
	Password string
	// MaxMemory bounds the used memory (bytes, as the server accounts
	// it: the keys' filters' bits, sketches' counters, strings and
	// per-key overhead, plus all that clients hold: each connection's
	// fixed buffers, commands being read, replies not yet sent, MULTI
	// queues). A write that would exceed it is refused with Redis's OOM
	// error, and so is a command whose bytes beyond the connection's
	// first 128 KiB would (it is read to its end without being kept).
	// 0: three quarters of the machine's physical memory; negative: no
	// limit.
	MaxMemory int64
	// MaxClients bounds concurrent connections (default 10,000).
	MaxClients int
	// MaxBulk bounds one argument (default 512 MiB), MaxArgs the
	// arguments of one command (default 1,048,576), MaxInline an inline
	// command's line (default 64 KiB), MaxCommand one command's total
	// argument bytes (default 1 GiB).
	MaxBulk    int64
	MaxArgs    int
	MaxInline  int
	MaxCommand int64
	// IdleTimeout closes a connection that sends no complete command for
	// that long (0: never, as Redis's default). A command must arrive
	// whole within it.
	IdleTimeout time.Duration
	// WriteTimeout closes a connection that does not take its replies
	// within it (default 60 s). The deadline moves only once half of it
	// has passed, so a write that stalls fails after WriteTimeout/2 to
	// WriteTimeout of stalling.
	WriteTimeout time.Duration
	// TLS, if set, makes Serve and ListenAndServe speak TLS.
	TLS *tls.Config
	// Load lists bloomlab files to serve. A file is the key's initial
	// state: it is read once, at the first start that names it, and from
	// then on the key persists like any other (the snapshot and the log
	// win over the file).
	Load []Load
	// LoadRDB names a Redis RDB file (versions 10 to 12: Redis 7.0 to
	// 8.x) whose keys (strings and RedisBloom's five types) are the
	// initial state of an empty Dir, loaded once, as Load's files are:
	// streamed, each value allocated once and checked against MaxMemory
	// first, then written as the first snapshot before any client is
	// served (a kill meanwhile leaves nothing half-loaded: the next start
	// loads the file again). A Dir that already holds a dataset (a
	// snapshot or a log) keeps it and the file is ignored, with a notice.
	// Keys already expired are dropped. Without Dir it is loaded at every
	// start.
	LoadRDB string
	// LoadRDBSkipUnsupported leaves out, and counts, the keys LoadRDB
	// cannot load (Redis's other types, other modules' values, keys of
	// other databases) instead of refusing the file.
	LoadRDBSkipUnsupported bool
	// LoadRDBDB is the database of LoadRDB's file that is loaded (default
	// 0; a negative one is an error); a key of another database refuses
	// the file (or is skipped).
	LoadRDBDB int
	// Dialect is the RedisBloom release whose replies the server gives
	// (default Dialect8, RedisBloom 8.6.2 of Redis 8; Dialect24,
	// RedisBloom 2.4.23 on Redis 7.0). It changes replies and the defaults
	// of new keys, never a stored structure.
	Dialect Dialect
	// ModuleConfigs sets RedisBloom's module configs at start, as pairs
	// of name and value ({"bf-error-rate", "0.001"}), checked and applied
	// as one CONFIG SET of them (Dialect8 only; New refuses a bad one).
	// Like CONFIG SET they are the defaults of new keys and nothing else:
	// no stored key depends on them.
	ModuleConfigs [][2]string
	// BFLayout is the layout of the BF keys made without a LAYOUT
	// keyword (BF.RESERVE, BF.ADD, BF.MADD, BF.INSERT): "redisbloom" (or
	// empty, the default: RedisBloom's links, whose BF.SCANDUMP RedisBloom
	// loads) or "blocked" (scalable's blocked profile: one cache line per
	// link a query tests; bloomlab's own dump). It is the initial value
	// of the CONFIG parameter bloomlab-bf-layout (every dialect); New
	// refuses another value. Like the module configs it is a default of
	// new keys and nothing else: the log records each key's layout.
	BFLayout string
	// ReplicaOf, "HOST:PORT", makes the server a replica of that primary
	// from its start (REPLICAOF at runtime does the same): serve or a
	// Redis 7.0 to 8.x with RedisBloom (docs/REPLICATION.md).
	ReplicaOf string
	// MasterAuth and MasterUser authenticate the replica to its primary
	// (AUTH [user] password), as Redis's masterauth and masteruser.
	MasterAuth, MasterUser string
	// ReplicaSkipUnsupported: a replica skips, and counts in INFO, the
	// keys and commands of its primary that serve has no place for
	// (Redis's other types) instead of refusing them and stopping.
	ReplicaSkipUnsupported bool
	// ReplBacklogSize is the replication backlog's size, the stream
	// kept for partial resynchronisations (default 1 MiB, as Redis's
	// repl-backlog-size).
	ReplBacklogSize int64
	// MinReplicasToWrite, when positive, refuses writes (Redis's
	// NOREPLICAS) unless that many replicas are online and acknowledged
	// within MinReplicasMaxLag (default 10 s), as Redis's
	// min-replicas-to-write and min-replicas-max-lag.
	MinReplicasToWrite int
	MinReplicasMaxLag  time.Duration
	// Logger receives warnings and notices (nil: discarded).
	Logger *log.Logger
}

// Server is a running keyspace and its listeners.
type Server struct {
	cfg    Config
	d      *dialect // cfg.Dialect's row: every dialect difference
	lim    resp.Limits
	logger *log.Logger
	// refusals gathers the log's LOADCHUNK refusals (logRefusal).
	refusals refusalLog
	maxMem   int64

	db      keyspace
	freezes freezes // serialisations in progress (db.go)
	// modcfg: RedisBloom's module configs, the defaults of new keys
	// (CONFIG GET/SET bf-error-rate …).
	modcfg moduleConfig
	mem    atomic.Int64 // used memory, governed by maxMem: the keys' accounted bytes plus clientMem
	// clientMem is the memory clients hold (clientmem.go), a part of mem.
	clientMem atomic.Int64
	memPeak   atomic.Int64 // the largest mem seen by a reservation or a client's growth
	// Large releases not yet returned to the system, the time of the
	// last one, and how many times memory was returned (returnMemory).
	released, lastRelease, memReturns atomic.Int64

	aof     *aof // nil: not persisted
	persist *persistence
	loading bool // the log is being replayed (before any client or background work)
	// readOnly: the server only reads its directory (WriteRDB): a torn
	// log's tail is left as it is, not truncated.
	readOnly bool
	dirLock  *os.File // holds Config.Dir's lock (lockDir)

	mu        sync.Mutex
	listeners map[net.Listener]struct{}
	clients   map[*client]struct{}
	nextID    atomic.Int64
	conns     sync.WaitGroup
	closing   atomic.Bool
	done      chan struct{} // closed when the server has shut down
	doneErr   error
	shutOnce  sync.Once
	bg        sync.WaitGroup // background goroutines (expiry, saver)
	stopBg    chan struct{}

	watch watchers
	ps    pubsubRegistry // cmd_pubsub.go
	repl  replication    // replication.go, replica.go

	started       time.Time
	totalConns    atomic.Int64
	totalCommands atomic.Int64
	rejectedConns atomic.Int64
	replStarted   bool   // Config.ReplicaOf's link was started (under mu)
	runID         string // INFO's run_id: this process's start (Sentinel tells restarts by it)
}

// errClosed is returned by Serve once the server is shut down.
var errClosed = errors.New("server: closed")

// ErrServerClosed is returned by Serve and ListenAndServe after Shutdown
// or Close.
var ErrServerClosed = errClosed

// New creates a server: it reads the snapshot and replays the log in
// cfg.Dir (if set), then loads the files of cfg.Load that are new. It does
// not listen: call Serve, ListenAndServe, or use Run.
func New(cfg Config) (*Server, error) {
	s, err := newServer(cfg)
	if err != nil {
		return nil, err
	}
	if err := s.open(); err != nil {
		s.closeFiles()
		return nil, err
	}
	s.bg.Add(1)
	go s.background()
	return s, nil
}

// newServer makes a server of cfg with an empty keyspace: nothing read,
// nothing started.
func newServer(cfg Config) (*Server, error) {
	s := &Server{
		cfg:       cfg,
		d:         cfg.Dialect.row(),
		logger:    cfg.Logger,
		listeners: map[net.Listener]struct{}{},
		clients:   map[*client]struct{}{},
		done:      make(chan struct{}),
		stopBg:    make(chan struct{}),
		started:   time.Now(),
	}
	if s.logger == nil {
		s.logger = log.New(io.Discard, "", 0)
	}
	s.lim = resp.Limits{MaxArgs: cfg.MaxArgs, MaxBulk: cfg.MaxBulk, MaxInline: cfg.MaxInline, MaxCommand: cfg.MaxCommand}
	switch {
	case cfg.MaxMemory > 0:
		s.maxMem = cfg.MaxMemory
	case cfg.MaxMemory == 0:
		s.maxMem = int64(sysmem.Limit() / 4 * 3)
	}
	if s.cfg.MaxClients <= 0 {
		s.cfg.MaxClients = 10000
	}
	if s.cfg.WriteTimeout <= 0 {
		s.cfg.WriteTimeout = 60 * time.Second
	}
	if s.cfg.AutoRewriteSize == 0 {
		s.cfg.AutoRewriteSize = 64 << 20
	}
	s.db.init()
	s.repl.init(cfg.ReplBacklogSize)
	s.runID = newReplID()
	s.modcfg.init()
	if err := s.setModuleConfigs(); err != nil {
		return nil, err
	}
	if s.cfg.BFLayout != "" {
		if i, msg := s.modcfg.set([]modSet{{mcBFLayout, []byte(s.cfg.BFLayout)}}); i >= 0 {
			return nil, fmt.Errorf("BF layout %q: %s", s.cfg.BFLayout, msg)
		}
	}
	return s, nil
}

// Run creates a server (New), listens on a free port of 127.0.0.1 and
// serves in the background until Close or Shutdown: the in-process server
// tests want. Addr tells where it listens.
func Run(cfg Config) (*Server, error) {
	s, err := New(cfg)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.Close()
		return nil, err
	}
	if s.cfg.TLS != nil {
		l = tls.NewListener(l, s.cfg.TLS)
	}
	if err := s.register(l); err != nil {
		return nil, err
	}
	go s.serve(l)
	return s, nil
}

// ListenAndServe listens on addr (TCP) and serves until the server shuts
// down.
func (s *Server) ListenAndServe(addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return s.Serve(l)
}

// Serve accepts connections on l (with TLS when Config.TLS is set) until
// the server shuts down; it then returns ErrServerClosed. It may be called
// on several listeners.
func (s *Server) Serve(l net.Listener) error {
	if s.cfg.TLS != nil {
		l = tls.NewListener(l, s.cfg.TLS)
	}
	if err := s.register(l); err != nil {
		return err
	}
	return s.serve(l)
}

func (s *Server) register(l net.Listener) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing.Load() {
		l.Close()
		return errClosed
	}
	s.listeners[l] = struct{}{}
	if s.cfg.ReplicaOf != "" && !s.replStarted {
		s.replStarted = true
		host, port, err := ParseReplicaOf(s.cfg.ReplicaOf)
		if err != nil {
			return err
		}
		go s.replicaOf(host, port)
	}
	return nil
}

func (s *Server) serve(l net.Listener) error {
	defer func() {
		s.mu.Lock()
		delete(s.listeners, l)
		s.mu.Unlock()
	}()
	var delay time.Duration
	for {
		conn, err := l.Accept()
		if err != nil {
			if s.closing.Load() {
				return errClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				time.Sleep(delay)
				continue
			}
			return err
		}
		delay = 0
		s.accept(conn)
	}
}

// Addr returns the address of one listener (nil if none).
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	for l := range s.listeners {
		return l.Addr()
	}
	return nil
}

// Done is closed when the server has shut down (Shutdown, Close, or a
// client's SHUTDOWN); Err then says how.
func (s *Server) Done() <-chan struct{} { return s.done }

// Err is the result of the shutdown once Done is closed (a failed final
// snapshot, for instance).
func (s *Server) Err() error {
	<-s.done
	return s.doneErr
}

// Shutdown stops the server gracefully: it stops accepting connections,
// lets every connection finish the commands it has received, then takes
// a final snapshot (when persisting, and unless nothing changed since the
// last one: the snapshot and the log then hold the state already) and
// closes the log. It returns the snapshot's error, if any. When ctx ends
// first, connections are closed at once (their unfinished commands get no
// reply).
func (s *Server) Shutdown(ctx context.Context) error {
	return s.shutdown(ctx, saveIfChanged)
}

// Close stops the server without a final snapshot: the log (when
// persisting) already holds every write. Connections are closed at once.
func (s *Server) Close() error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return s.shutdown(ctx, noSave)
}

// finalSave is what a shutdown does about a snapshot.
type finalSave int

const (
	noSave        finalSave = iota // Close, SHUTDOWN NOSAVE
	saveIfChanged                  // Shutdown, SIGTERM, SHUTDOWN
	saveAlways                     // SHUTDOWN SAVE
)

func (s *Server) shutdown(ctx context.Context, save finalSave) error {
	s.shutOnce.Do(func() {
		s.mu.Lock()
		s.closing.Store(true)
		for l := range s.listeners {
			l.Close()
		}
		for c := range s.clients {
			c.stop()
		}
		s.mu.Unlock()
		// Replication stops: the link to a primary, and the senders to
		// replicas (woken under the lock they check closing with).
		if l := s.repl.replicaLink(); l != nil {
			l.close()
		}
		s.repl.mu.Lock()
		s.repl.mu.Unlock()
		s.repl.cond.Broadcast()
		finished := make(chan struct{})
		go func() { s.conns.Wait(); close(finished) }()
		select {
		case <-finished:
		case <-ctx.Done():
			s.mu.Lock()
			for c := range s.clients {
				c.conn.Close()
			}
			s.mu.Unlock()
			<-finished
		}
		close(s.stopBg)
		s.bg.Wait()
		var err error
		if s.persist != nil && (save == saveAlways || save == saveIfChanged && s.persist.dirty.Load() != 0) {
			err = s.save(true)
		}
		if cerr := s.closeFiles(); err == nil {
			err = cerr
		}
		s.doneErr = err
		close(s.done)
	})
	<-s.done
	return s.doneErr
}

// background runs the periodic work: active expiry, interval snapshots,
// log rewrites.
func (s *Server) background() {
	defer s.bg.Done()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	lastSave := time.Now()
	for {
		select {
		case <-s.stopBg:
			return
		case <-tick.C:
		}
		if s.repl.replicaLink() == nil {
			s.expireCycle() // a replica's keys expire by its primary's DELs
		}
		s.replCron()
		s.returnMemory()
		if s.persist == nil {
			continue
		}
		if s.cfg.SaveInterval > 0 && time.Since(lastSave) >= s.cfg.SaveInterval && s.persist.dirty.Load() > 0 {
			lastSave = time.Now()
			s.bgsave()
		}
		if s.cfg.AutoRewriteSize > 0 && s.aof != nil {
			size := s.aof.size()
			if size > s.cfg.AutoRewriteSize && size > s.persist.lastSnapSize.Load() {
				s.bgsave()
			}
		}
	}
}

func (s *Server) logf(format string, args ...any) { s.logger.Printf(format, args...) }

// reportPanic logs a panic's report: to Config.Logger, or to standard
// error when there is none (a panic is a bug someone must see).
func (s *Server) reportPanic(msg string) {
	if s.cfg.Logger != nil {
		s.cfg.Logger.Print(msg)
		return
	}
	fmt.Fprintln(os.Stderr, msg)
}

// fatalPanic stops the process as an unrecovered panic would: the report
// (with the stack) logged, exit status 2, no snapshot: what the log holds
// is what a restart serves.
func (s *Server) fatalPanic(msg string) {
	s.reportPanic(msg)
	os.Exit(2)
}
