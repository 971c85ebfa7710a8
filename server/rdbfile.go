package server

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/bloomlab/bloomlab/rdb"
)

// RDBWriteOptions configure WriteRDB.
type RDBWriteOptions struct {
	// Version is the RDB version written: 10 (the default; Redis 7.0 to
	// 8.x load it) to 12.
	Version int
	// Dialect picks the module encoding versions and the AUX fields
	// (redis-ver) of the RedisBloom release named.
	Dialect Dialect
	// SkipUnsupported leaves out the keys of bloomlab's own kinds, which
	// Redis cannot load, instead of refusing the whole file.
	SkipUnsupported bool
	// NoCompress writes strings without LZF compression (Redis's
	// rdbcompression no).
	NoCompress bool
}

// RDBStats count what WriteRDB or a load of an RDB file did.
type RDBStats struct {
	Keys    int64            // keys written or loaded
	Skipped map[string]int64 // keys left out, by type or kind name
	Expired int64            // keys dropped because they had expired
}

// skippedText is the counts of s.Skipped as "n type, …" ("none").
func (st RDBStats) skippedText() string {
	if len(st.Skipped) == 0 {
		return "none"
	}
	var parts []string
	for k, n := range st.Skipped {
		parts = append(parts, fmt.Sprintf("%d %s", n, k))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

func (st *RDBStats) skip(what string) {
	if st.Skipped == nil {
		st.Skipped = map[string]int64{}
	}
	st.Skipped[what]++
}

// rdbRedisVersion is the redis-ver AUX field written for a dialect: the
// Redis whose replies the dialect follows (INFO's redis_version).
func rdbRedisVersion(d Dialect) string { return d.row().redisVersion }

// WriteRDB writes the dataset of a stopped server's directory dir (its
// snapshot and log replayed as a start does, under the directory's lock,
// which a running server holds, and without writing anything into dir)
// to w as a Redis RDB file of opt.Version: AUX fields as Redis 7.0 writes
// them (redis-ver, redis-bits, ctime, used-mem, aof-base), database 0
// with its RESIZEDB hint, then every key in byte order of its name, with
// its expiry. Keys whose time has passed are left out (Expired). A key
// Redis cannot load (a bloomlab kind, a blocked-layout BF, a LOADCHUNK in
// progress) refuses the whole file before anything is written, naming
// the key, unless opt.SkipUnsupported leaves such keys out (Skipped, by
// what they hold).
func WriteRDB(dir string, w io.Writer, opt RDBWriteOptions) (RDBStats, error) {
	var st RDBStats
	if opt.Version == 0 {
		opt.Version = rdb.DumpVersion
	}
	if opt.Version < rdb.MinVersion || opt.Version > rdb.MaxVersion {
		return st, fmt.Errorf("server: RDB version %d: this build writes %d to %d", opt.Version, rdb.MinVersion, rdb.MaxVersion)
	}
	s, err := openReadOnly(dir, opt.Dialect)
	if err != nil {
		return st, err
	}
	defer s.closeFiles()
	now := nowMs()
	keys := make([]string, 0, len(s.db.m))
	var refused []string
	for k, e := range s.db.m {
		if e.expired(now) {
			st.Expired++
			continue
		}
		if what := rdbUnsupported(e.v); what != "" {
			if opt.SkipUnsupported {
				st.skip(what)
				continue
			}
			refused = append(refused, fmt.Sprintf("%q holds a %s", k, what))
			continue
		}
		keys = append(keys, k)
	}
	if len(refused) > 0 {
		sort.Strings(refused)
		more := ""
		if len(refused) > 5 {
			more = fmt.Sprintf(" (and %d more)", len(refused)-5)
			refused = refused[:5]
		}
		return RDBStats{}, fmt.Errorf("server: Redis cannot load these keys: %s%s; -skip-unsupported leaves them out", strings.Join(refused, "; "), more)
	}
	sort.Strings(keys)
	var expires uint64
	for _, k := range keys {
		e := s.db.m[k]
		if e.expireAt != 0 {
			expires++
		}
		if settle := e.v.typ().fam.settle; settle != nil {
			// RedisBloom's save settles the value (a digest's buffer
			// merged; the copy is the private server's: nothing is logged).
			if _, err := settle(k, e.v); err != nil {
				return RDBStats{}, fmt.Errorf("server: key %q: %w", k, err)
			}
		}
	}
	rw, err := rdb.NewWriter(w, opt.Version, !opt.NoCompress)
	if err != nil {
		return RDBStats{}, err
	}
	aux := [][2]string{
		{"redis-ver", rdbRedisVersion(opt.Dialect)},
		{"redis-bits", "64"},
		{"ctime", strconv.FormatInt(time.Now().Unix(), 10)},
		{"used-mem", strconv.FormatInt(s.mem.Load(), 10)},
		{"aof-base", "0"},
	}
	for _, a := range aux {
		if err := rw.Aux(a[0], a[1]); err != nil {
			return RDBStats{}, err
		}
	}
	if len(keys) > 0 {
		if err := rw.SelectDB(0); err != nil {
			return RDBStats{}, err
		}
		if err := rw.ResizeDB(uint64(len(keys)), expires); err != nil {
			return RDBStats{}, err
		}
	}
	for _, k := range keys {
		e := s.db.m[k]
		if e.expireAt != 0 {
			if err := rw.Expire(e.expireAt); err != nil {
				return RDBStats{}, err
			}
		}
		if err := writeRDBValue(e.v, fileSink{rw, []byte(k)}); err != nil {
			return RDBStats{}, fmt.Errorf("server: key %q: %w", k, err)
		}
		st.Keys++
	}
	if err := rw.Close(); err != nil {
		return RDBStats{}, err
	}
	return st, nil
}

// openReadOnly restores the dataset of dir (its snapshot and logs) into a
// server that serves nothing and writes nothing into dir, holding dir's
// lock (a running server's lock is an error naming it). The caller
// closes it with closeFiles.
func openReadOnly(dir string, d Dialect) (*Server, error) {
	if st, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("server: %s is not a directory", dir)
	}
	gens, err := listLogs(dir)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, snapName)); errors.Is(err, os.ErrNotExist) && len(gens) == 0 {
		return nil, fmt.Errorf("server: %s holds no bloomlab dataset (no %s, no log)", dir, snapName)
	}
	s, err := newServer(Config{Dir: dir, Dialect: d, MaxMemory: -1})
	if err != nil {
		return nil, err
	}
	s.readOnly = true
	lock, err := lockDir(dir, filepath.Join(dir, lockName))
	var unlocked errNoLock
	if err != nil && !errors.As(err, &unlocked) {
		return nil, err
	}
	s.dirLock = lock
	s.persist = &persistence{dir: dir, seen: map[string]bool{}}
	s.db.mu.Lock()
	gen, err := s.loadSnapshot(dir)
	s.db.mu.Unlock()
	if err == nil {
		// Listed again under the lock: a server may have rotated its log
		// before it stopped.
		gens, err = listLogs(dir)
	}
	if err != nil {
		s.closeFiles()
		return nil, err
	}
	var replay []uint64
	for _, g := range gens {
		if g >= gen {
			replay = append(replay, g)
		}
	}
	if err := s.replay(dir, replay); err != nil {
		s.closeFiles()
		return nil, err
	}
	return s, nil
}

// loadRDB loads Config.LoadRDB into the keyspace (empty, before any
// client): streamed, each value's memory reserved against MaxMemory
// before it is allocated; a file that does not fit, or holds a key the
// server cannot load (unless LoadRDBSkipUnsupported), is an error and
// New fails (nothing is persisted before the whole file has loaded).
func (s *Server) loadRDB() error {
	path := s.cfg.LoadRDB
	fail := func(format string, args ...any) error {
		msg := fmt.Sprintf(format, args...)
		for _, a := range args {
			if err, ok := a.(error); ok && errors.Is(err, rdb.ErrNoRoom) {
				msg += fmt.Sprintf(" (it does not fit under maxmemory, %d bytes, %d in use); nothing loaded", s.maxMem, s.mem.Load())
			}
		}
		return fmt.Errorf("-load-rdb %s: %s", path, msg)
	}
	if s.cfg.LoadRDBDB < 0 {
		return fail("database %d: want a database number (0 or more)", s.cfg.LoadRDBDB)
	}
	start := time.Now()
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("-load-rdb: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("-load-rdb: %w", err)
	}
	size := fi.Size()
	if s.maxMem > 0 && size > s.maxMem-s.mem.Load() {
		// Its values hold at least the file's bytes, but for compressed
		// strings and the framing: refused before anything is read.
		return fail("the file (%d bytes) is larger than maxmemory allows (%d bytes, %d in use); nothing loaded", size, s.maxMem, s.mem.Load())
	}
	r, err := rdb.NewReader(f, rdb.Limits{InputSize: size, Room: s.room})
	if err != nil {
		return fail("%v", err)
	}
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	st, err := s.loadRDBEntries(r, uint64(s.cfg.LoadRDBDB), s.cfg.LoadRDBSkipUnsupported, "-skip-unsupported")
	if err != nil {
		return fail("%v", err)
	}
	s.logf("bloomlab: -load-rdb %s: %d keys loaded, %d skipped (%s), %d expired, in %s", path, st.Keys, sumSkipped(st), st.skippedText(), st.Expired, time.Since(start).Round(time.Millisecond))
	return nil
}

// loadRDBEntries loads r's keys of database db into the keyspace, which
// the caller holds exclusively: each value's memory reserved against
// MaxMemory before it is allocated, keys already expired dropped, the
// keys of other databases and of types serve does not have refused (an
// error naming the first, and skipFlag, the option that would skip it)
// or, with skipOK, skipped and counted. On an error the keys loaded so far
// stay: the caller drops them.
func (s *Server) loadRDBEntries(r *rdb.Reader, db uint64, skipOK bool, skipFlag string) (RDBStats, error) {
	fail := func(format string, args ...any) error {
		msg := fmt.Sprintf(format, args...)
		for _, a := range args {
			if err, ok := a.(error); ok && errors.Is(err, rdb.ErrNoRoom) {
				msg += fmt.Sprintf(" (it does not fit under maxmemory, %d bytes, %d in use); nothing loaded", s.maxMem, s.mem.Load())
			}
		}
		return errors.New(msg)
	}
	var st RDBStats
	now := nowMs()
	for {
		ent, err := r.Next()
		if err == io.EOF {
			break
		}
		var ut *rdb.UnsupportedTypeError
		if errors.As(err, &ut) && ent != nil {
			what := (&errRDBType{rdb.TypeName(ut.Type)}).Error()
			if ent.DB != db {
				what = fmt.Sprintf("in database %d (-db %d loads that one)", ent.DB, ent.DB)
			}
			if !skipOK {
				return st, fail("key %q: %s; "+skipFlag+" leaves such keys out", ent.Key, what)
			}
			if err := r.Skip(); err != nil {
				return st, fail("%v", err)
			}
			if ent.DB != db {
				st.skip(fmt.Sprintf("in database %d", ent.DB))
			} else {
				st.skip(rdb.TypeName(ut.Type))
			}
			continue
		}
		if err != nil {
			return st, fail("%v", err)
		}
		skipValue := func() error {
			if ent.Module != nil {
				return ent.Module.Skip()
			}
			return nil
		}
		key := string(ent.Key)
		if ent.DB != db {
			if !skipOK {
				return st, fail("key %q is in database %d, and this server loads database %d (-db %d loads that one; one database per server)", key, ent.DB, db, ent.DB)
			}
			if err := skipValue(); err != nil {
				return st, fail("%v", err)
			}
			st.skip(fmt.Sprintf("in database %d", ent.DB))
			continue
		}
		if ent.Type == rdb.TypeModule2 {
			if rdbCodecOf(ent.Module.Name) == nil {
				if !skipOK {
					return st, fail("key %q: %s; "+skipFlag+" leaves such keys out", key, (&errRDBType{rdbTypeName(ent.Type, ent.Module)}).Error())
				}
				if err := skipValue(); err != nil {
					return st, fail("%v", err)
				}
				st.skip("module " + ent.Module.Name)
				continue
			}
		}
		// -1 is no expiry, as in Redis; any other time before now,
		// negative ones included, has passed.
		if ent.ExpireMs != -1 && ent.ExpireMs <= now {
			if err := skipValue(); err != nil {
				return st, fail("%v", err)
			}
			st.Expired++
			continue
		}
		if _, dup := s.db.m[key]; dup {
			return st, fail("key %q twice in the file", key)
		}
		var reserved int64
		alloc := func(n int64) error {
			if n < 0 || !s.reserve(n) {
				return fmt.Errorf("key %q does not fit under maxmemory (%d more bytes; %d bytes, %d in use); nothing loaded", key, n, s.maxMem, s.mem.Load())
			}
			reserved += n
			return nil
		}
		if ent.Type == rdb.TypeString {
			if err := alloc(int64(len(ent.String))); err != nil {
				return st, fail("%v", err)
			}
		}
		v, err := readRDBValue(ent.Type, ent.String, ent.Module, alloc)
		if err != nil {
			var ve *rdb.ValueError
			if err = ent.Module.Err(err); errors.As(err, &ve) {
				return st, fail("%v", err) // names the key
			}
			return st, fail("key %q: %v", key, err)
		}
		if need := entryMem(key, v); need > reserved {
			if err := alloc(need - reserved); err != nil {
				return st, fail("%v", err)
			}
		}
		e := s.add(key, v, reserved)
		if ent.ExpireMs != -1 {
			s.setExpire(key, e, ent.ExpireMs)
		}
		st.Keys++
		if loadRDBHook != nil {
			loadRDBHook(st.Keys)
		}
	}
	return st, nil
}

// loadRDBHook, when set (tests), is called after each key loadRDB loads
// with the count so far.
var loadRDBHook func(keys int64)

func sumSkipped(st RDBStats) int64 {
	var n int64
	for _, c := range st.Skipped {
		n += c
	}
	return n
}
