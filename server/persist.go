package server

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bloomlab/bloomlab"
)

// The snapshot, bloomlab.snap in Config.Dir (docs/SERVER.md):
//
//	header (32 bytes): magic "BLSN", version u16 = 1, flags u16 = 0,
//	    log generation G u64 (the log bloomlab.G.aof continues it),
//	    time of the snapshot (Unix ms, i64), reserved u32 = 0,
//	    CRC-32C of bytes 0–27 (u32)
//	records, each opened by a tag byte:
//	  'K' a key: value type (u8), key length (u32), key, expiry time
//	      (Unix ms, i64; 0: none), the value's payload (self-delimiting:
//	      a bloomlab file for filters and sketches; u64 length and bytes
//	      for a string; for a load in progress a u32 count of chunks and
//	      each chunk's iterator i64, length u64 and bytes), the payload's
//	      length (u64), CRC-32C of the record from its tag (u32)
//	  'L' a file of Config.Load already taken into account: name length
//	      (u32), name, CRC-32C of the record from its tag (u32)
//	  'E' the end: number of key records (u64), CRC-32C of every byte of
//	      the file before it (u32); nothing may follow
//
// All integers little-endian.

const (
	snapName      = "bloomlab.snap"
	snapMagic     = "BLSN"
	snapHeaderLen = 32
	maxKeyLen     = 512 << 20
)

// persistence is the state of the snapshot side.
type persistence struct {
	dir          string
	saveMu       sync.Mutex   // one snapshot at a time
	saving       atomic.Bool  // a snapshot is being written
	bgRunning    atomic.Bool  // a background snapshot was started
	dirty        atomic.Int64 // changes since the last snapshot
	lastSave     atomic.Int64 // Unix seconds of the last successful snapshot
	lastOK       atomic.Bool
	lastDur      atomic.Int64 // seconds the last snapshot took
	lastSnapSize atomic.Int64
	seen         map[string]bool // Config.Load names taken into account (under db.mu)
}

type snapItem struct {
	key      string
	v        value
	expireAt int64
}

// save takes a snapshot: it freezes every value under the exclusive lock
// (a writer then copies a value before changing it; keys whose time has
// passed are deleted), starts a new log generation, and writes the frozen values to a temporary file that is
// synced and renamed over the snapshot; then the older logs are removed.
// Writers and readers run meanwhile.
func (s *Server) save(final bool) error {
	p := s.persist
	p.saveMu.Lock()
	defer p.saveMu.Unlock()
	p.saving.Store(true)
	defer p.saving.Store(false)
	start := time.Now()
	if err := s.logErr(); err != nil {
		// The new generation cannot be started (rotate refuses a failed
		// log): fail before touching the keyspace, whose expired-key
		// deletions below would append DELs the failed log never holds,
		// turning a failure that lost nothing into one that did (and
		// every read into MISCONF).
		p.lastOK.Store(false)
		s.logf("bloomlab: snapshot failed: %v", err)
		return err
	}

	s.db.mu.Lock()
	id := s.freezes.begin()
	now := nowMs()
	items := make([]snapItem, 0, len(s.db.m))
	var ic *client
	for k, e := range s.db.m {
		if e.expired(now) {
			// Left out of the snapshot, so deleted now (logged in the
			// generation the snapshot ends): kept in memory, a write after
			// the wall clock stepped back would find it alive and log a
			// change to a key the snapshot does not hold.
			if ic == nil {
				ic = s.internalClient()
			}
			s.deleteKey(ic, k, e)
			ic.logArgs("DEL", k)
			continue
		}
		// Saved as RedisBloom saves it (settleKey: a digest's buffer
		// merged, and logged, in the generation the snapshot ends).
		if e.v.typ().fam.settle != nil && s.repl.replicaLink() == nil { // a replica's values change by its primary only
			if ic == nil {
				ic = s.internalClient()
			}
			if err := ic.settleKey(k, e); err != nil {
				s.db.mu.Unlock()
				s.freezes.end(id)
				p.lastOK.Store(false)
				s.logf("bloomlab: snapshot failed: key %q: %v", k, err)
				return err
			}
		}
		e.frozen = id
		items = append(items, snapItem{k, e.v, e.expireAt})
	}
	seen := make([]string, 0, len(p.seen))
	for k := range p.seen {
		seen = append(seen, k)
	}
	dirty := p.dirty.Load()
	gen := uint64(1)
	var err error
	if s.aof != nil {
		gen = s.aof.gen + 1
		err = s.aof.rotate(gen)
		if err == nil {
			s.repl.logState(s) // a replica's position, which the snapshot holds the data of
		}
	}
	s.db.mu.Unlock()
	if err == nil {
		sort.Slice(items, func(i, j int) bool { return items[i].key < items[j].key })
		sort.Strings(seen)
		var size int64
		size, err = writeSnapshot(p.dir, gen, items, seen)
		if err == nil {
			p.lastSnapSize.Store(size)
		}
	}
	s.freezes.end(id)
	p.lastDur.Store(int64(time.Since(start).Seconds()))
	p.lastOK.Store(err == nil)
	if err != nil {
		s.logf("bloomlab: snapshot failed: %v", err)
		return err
	}
	p.dirty.Add(-dirty)
	p.lastSave.Store(time.Now().Unix())
	removeLogsBefore(p.dir, gen)
	if !final {
		s.logf("bloomlab: snapshot of %d keys written (%s)", len(items), time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// bgsave starts a snapshot in the background unless one is running; it
// reports whether it started one.
func (s *Server) bgsave() bool {
	p := s.persist
	if p == nil || p.saving.Load() || !p.bgRunning.CompareAndSwap(false, true) {
		return false
	}
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		defer p.bgRunning.Store(false)
		s.save(false)
	}()
	return true
}

// crcWriter counts and checksums what passes through it.
type crcWriter struct {
	w   io.Writer
	h   hash.Hash32
	rec hash.Hash32 // the current record's checksum
	n   int64
}

func (c *crcWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.h.Write(p[:n])
	c.rec.Write(p[:n])
	c.n += int64(n)
	return n, err
}

func writeSnapshot(dir string, gen uint64, items []snapItem, seen []string) (size int64, err error) {
	tmp, err := os.CreateTemp(dir, "."+snapName+".tmp-*")
	if err != nil {
		return 0, err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	bw := bufio.NewWriterSize(tmp, 1<<20)
	cw := &crcWriter{w: bw, h: crc32.New(castagnoli), rec: crc32.New(castagnoli)}
	var h [snapHeaderLen]byte
	copy(h[:], snapMagic)
	binary.LittleEndian.PutUint16(h[4:], 1)
	binary.LittleEndian.PutUint64(h[8:], gen)
	binary.LittleEndian.PutUint64(h[16:], uint64(time.Now().UnixMilli()))
	binary.LittleEndian.PutUint32(h[28:], crc32.Checksum(h[:28], castagnoli))
	cw.Write(h[:])
	var b [16]byte
	for _, it := range items {
		cw.rec.Reset()
		b[0], b[1] = 'K', it.v.typ().tag
		binary.LittleEndian.PutUint32(b[2:], uint32(len(it.key)))
		cw.Write(b[:6])
		io.WriteString(cw, it.key)
		binary.LittleEndian.PutUint64(b[:], uint64(it.expireAt))
		cw.Write(b[:8])
		before := cw.n
		if err := it.v.encode(cw); err != nil {
			return 0, fmt.Errorf("snapshot: key %q: %w", it.key, err)
		}
		binary.LittleEndian.PutUint64(b[:], uint64(cw.n-before))
		cw.Write(b[:8])
		binary.LittleEndian.PutUint32(b[:], cw.rec.Sum32())
		cw.Write(b[:4])
	}
	for _, name := range seen {
		cw.rec.Reset()
		b[0] = 'L'
		binary.LittleEndian.PutUint32(b[1:], uint32(len(name)))
		cw.Write(b[:5])
		io.WriteString(cw, name)
		binary.LittleEndian.PutUint32(b[:], cw.rec.Sum32())
		cw.Write(b[:4])
	}
	b[0] = 'E'
	binary.LittleEndian.PutUint64(b[1:], uint64(len(items)))
	cw.Write(b[:9])
	binary.LittleEndian.PutUint32(b[:], cw.h.Sum32())
	if _, err := bw.Write(b[:4]); err != nil {
		return 0, err
	}
	if err := bw.Flush(); err != nil {
		return 0, err
	}
	if err := tmp.Sync(); err != nil {
		return 0, err
	}
	if err := tmp.Close(); err != nil {
		return 0, err
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, snapName)); err != nil {
		return 0, err
	}
	syncDir(dir)
	return cw.n + 4, nil
}

// removeStaleTemps removes the temporary files of snapshots that a crash
// interrupted (writeSnapshot's names). The caller holds the directory's
// lock: no other server is writing one.
func removeStaleTemps(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "."+snapName+".tmp-") && e.Type().IsRegular() {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// snapError is damage in the snapshot.
type snapError struct {
	path   string
	offset int64
	msg    string
}

func (e *snapError) Error() string {
	return fmt.Sprintf("snapshot %s: offset %d: %s (refusing to start)", e.path, e.offset, e.msg)
}

// crcReader counts and checksums what is read through it.
type crcReader struct {
	r   io.Reader
	h   hash.Hash32
	rec hash.Hash32
	n   int64
}

func (c *crcReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.h.Write(p[:n])
	c.rec.Write(p[:n])
	c.n += int64(n)
	return n, err
}

// loadSnapshot reads the snapshot in dir into the keyspace and returns its
// log generation (0 when there is no snapshot).
func (s *Server) loadSnapshot(dir string) (uint64, error) {
	path := filepath.Join(dir, snapName)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := st.Size()
	cr := &crcReader{r: bufio.NewReaderSize(f, 1<<20), h: crc32.New(castagnoli), rec: crc32.New(castagnoli)}
	fail := func(at int64, format string, args ...any) error {
		return &snapError{path, at, fmt.Sprintf(format, args...)}
	}
	var h [snapHeaderLen]byte
	if _, err := io.ReadFull(cr, h[:]); err != nil {
		return 0, fail(0, "short header")
	}
	switch {
	case string(h[:4]) != snapMagic:
		return 0, fail(0, "not a bloomlab snapshot (bad magic)")
	case binary.LittleEndian.Uint32(h[28:]) != crc32.Checksum(h[:28], castagnoli):
		return 0, fail(0, "header checksum mismatch")
	case binary.LittleEndian.Uint16(h[4:]) != 1:
		return 0, fail(4, "version %d, this build reads 1", binary.LittleEndian.Uint16(h[4:]))
	}
	gen := binary.LittleEndian.Uint64(h[8:])
	var b [16]byte
	var keys uint64
	for {
		at := cr.n
		cr.rec.Reset()
		if _, err := io.ReadFull(cr, b[:1]); err != nil {
			return 0, fail(at, "the file ends before its end record")
		}
		switch b[0] {
		case 'K':
			if _, err := io.ReadFull(cr, b[:5]); err != nil {
				return 0, fail(at, "truncated key record")
			}
			vt := valueTypes[b[0]]
			kl := int64(binary.LittleEndian.Uint32(b[1:]))
			if vt == nil {
				return 0, fail(at, "unknown value type %d", b[0])
			}
			if kl > maxKeyLen || kl > size-cr.n {
				return 0, fail(at, "key of %d bytes", kl)
			}
			key, err := readExact(cr, kl)
			if err != nil {
				return 0, fail(at, "truncated key")
			}
			if _, err := io.ReadFull(cr, b[:8]); err != nil {
				return 0, fail(at, "truncated key record")
			}
			exp := int64(binary.LittleEndian.Uint64(b[:8]))
			before := cr.n
			v, err := vt.decode(cr, size-cr.n)
			if err != nil {
				return 0, fail(before, "key %q: %v", key, err)
			}
			plen := cr.n - before
			if _, err := io.ReadFull(cr, b[:8]); err != nil || int64(binary.LittleEndian.Uint64(b[:8])) != plen {
				return 0, fail(cr.n, "key %q: payload length mismatch", key)
			}
			want := cr.rec.Sum32()
			if _, err := io.ReadFull(cr, b[:4]); err != nil || binary.LittleEndian.Uint32(b[:4]) != want {
				return 0, fail(at, "key %q: record checksum mismatch", key)
			}
			k := string(key)
			if _, dup := s.db.m[k]; dup {
				return 0, fail(at, "key %q twice", key)
			}
			e := s.add(k, v, 0)
			if exp != 0 {
				s.setExpire(k, e, exp)
			}
			keys++
		case 'L':
			if _, err := io.ReadFull(cr, b[:4]); err != nil {
				return 0, fail(at, "truncated load record")
			}
			nl := int64(binary.LittleEndian.Uint32(b[:4]))
			if nl > maxKeyLen || nl > size-cr.n {
				return 0, fail(at, "name of %d bytes", nl)
			}
			name, err := readExact(cr, nl)
			if err != nil {
				return 0, fail(at, "truncated load record")
			}
			want := cr.rec.Sum32()
			if _, err := io.ReadFull(cr, b[:4]); err != nil || binary.LittleEndian.Uint32(b[:4]) != want {
				return 0, fail(at, "load record checksum mismatch")
			}
			s.persist.seen[string(name)] = true
		case 'E':
			if _, err := io.ReadFull(cr, b[:8]); err != nil {
				return 0, fail(at, "truncated end record")
			}
			if n := binary.LittleEndian.Uint64(b[:8]); n != keys {
				return 0, fail(at, "end record counts %d keys, the file holds %d", n, keys)
			}
			want := cr.h.Sum32()
			if _, err := io.ReadFull(cr, b[:4]); err != nil || binary.LittleEndian.Uint32(b[:4]) != want {
				return 0, fail(cr.n, "file checksum mismatch")
			}
			if cr.n != size {
				return 0, fail(cr.n, "%d bytes after the end record", size-cr.n)
			}
			s.persist.lastSnapSize.Store(size)
			if st, err := os.Stat(path); err == nil {
				s.persist.lastSave.Store(st.ModTime().Unix())
			}
			return gen, nil
		default:
			return 0, fail(at, "unknown record tag %#x", b[0])
		}
	}
}

// open restores the keyspace: the snapshot, then the logs from its
// generation on (a directory with neither first loads Config.LoadRDB and
// writes it as the first snapshot, before the log exists); then it loads
// the files of Config.Load that are new and,
// if it loaded any, takes a snapshot so that they are part of the
// persisted state before any client writes.
func (s *Server) open() error {
	if s.cfg.Dir != "" {
		dir := s.cfg.Dir
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		lock, err := lockDir(dir, filepath.Join(dir, lockName))
		var unlocked errNoLock
		if errors.As(err, &unlocked) {
			s.logf("bloomlab: %s: no lock on this file system or platform (%v): a second server on this directory would not be detected", dir, unlocked)
		} else if err != nil {
			return err
		}
		s.dirLock = lock
		if err == nil {
			// Only the lock's holder may remove a temporary file: without
			// one, it could be another server's snapshot in progress.
			removeStaleTemps(dir)
		}
		s.persist = &persistence{dir: dir, seen: map[string]bool{}}
		s.persist.lastOK.Store(true)
		s.db.mu.Lock()
		gen, err := s.loadSnapshot(dir)
		s.db.mu.Unlock()
		if err != nil {
			return err
		}
		gens, err := listLogs(dir)
		if err != nil {
			return err
		}
		if s.cfg.LoadRDB != "" {
			if gen == 0 && len(gens) == 0 {
				// Loaded, then written as the first snapshot before the
				// log exists: a kill before the snapshot's rename leaves
				// the directory as empty as it was.
				if err := s.loadRDB(); err != nil {
					return err
				}
				if err := s.save(false); err != nil {
					return err
				}
				gen = 1
			} else {
				s.logf("bloomlab: -load-rdb %s: the directory %s already holds a dataset, which wins over the file: not loaded", s.cfg.LoadRDB, dir)
			}
		}
		var replay []uint64
		for _, g := range gens {
			if g >= gen {
				replay = append(replay, g)
			}
		}
		if err := s.replay(dir, replay); err != nil {
			return err
		}
		cur := max(gen, 1)
		if len(replay) > 0 {
			cur = replay[len(replay)-1]
		}
		a, err := openLog(dir, cur, s.cfg.AppendFsync, s.logf)
		if err != nil {
			return err
		}
		s.aof = a
		removeLogsBefore(dir, gen)
		if s.persist.lastSave.Load() == 0 {
			s.persist.lastSave.Store(time.Now().Unix())
		}
	} else if s.cfg.LoadRDB != "" {
		if err := s.loadRDB(); err != nil {
			return err
		}
	}
	changed, err := s.preload()
	if err != nil {
		return err
	}
	if changed && s.persist != nil {
		return s.save(false)
	}
	return nil
}

// replay runs the records of the given log generations. Each record
// counts as a change since the last snapshot (persistence.dirty), which
// lacks it: the next snapshot (the interval's, or the one a stop takes)
// folds the log into a snapshot, instead of every start replaying it.
func (s *Server) replay(dir string, gens []uint64) error {
	c := s.internalClient()
	c.replaying = true
	s.db.mu.Lock()
	s.loading = true // nothing expires during replay (see expiredNow)
	var records int64
	defer func() {
		s.persist.dirty.Add(records)
		s.loading = false
		if !s.repl.resume {
			// Not a replica's known position: a history of its own.
			s.repl.mu.Lock()
			s.repl.id, s.repl.head, s.repl.blocks = newReplID(), 0, nil
			s.repl.offset.Store(0)
			s.repl.mu.Unlock()
		}
		s.db.mu.Unlock()
	}()
	for i, g := range gens {
		path := filepath.Join(dir, logName(g))
		err := replayLog(path, g, i == len(gens)-1, s.readOnly, s.logf, func(cmds [][][]byte, off int64) error {
			for _, args := range cmds {
				c.lastErr = ""
				if s.repl.replayState(args) {
					continue
				}
				s.repl.resume = false // a change after the last position: no longer known
				cmd := lookupCommand(args[0], &c.lower)
				if cmd == nil || cmd.flags&fWrite == 0 {
					return fmt.Errorf("record %q is not a write command", args[0])
				}
				if !cmd.arityOK(len(args)) || !cmd.argsOK(len(args), true) {
					return fmt.Errorf("record %q has %d arguments", args[0], len(args))
				}
				cmd.run(c, args)
				records++
				if c.lastErr != "" {
					return fmt.Errorf("replaying %q: %s", args[0], c.lastErr)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// preload loads the files of Config.Load whose names the persisted state
// does not know yet. A name whose key already exists (from the snapshot or
// the log) keeps it: the file is ignored, with a warning.
func (s *Server) preload() (changed bool, err error) {
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	for _, ld := range s.cfg.Load {
		if s.persist != nil && s.persist.seen[ld.Name] {
			continue
		}
		if s.persist != nil {
			s.persist.seen[ld.Name] = true
		}
		changed = true
		if e := s.db.m[ld.Name]; e != nil {
			s.logf("bloomlab: -load %s=%s: the key exists in the persisted state, which wins over the file", ld.Name, ld.Path)
			continue
		}
		f, err := loadFile(ld.Path)
		if err != nil {
			return false, fmt.Errorf("-load %s=%s: %w", ld.Name, ld.Path, err)
		}
		v := fileValue(f) // its family's value: CF.* for a cuckoo filter, BF.* for every other kind
		if need := entryMem(ld.Name, v); !s.reserve(need) {
			return false, fmt.Errorf("-load %s=%s: the filter (%d bytes) does not fit under maxmemory (%d bytes, %d in use)", ld.Name, ld.Path, need, s.maxMem, s.mem.Load())
		} else {
			s.add(ld.Name, v, need)
		}
		s.logf("bloomlab: -load %s: %s filter of %d bytes from %s", ld.Name, f.Kind(), f.Bits()/8, ld.Path)
	}
	return changed, nil
}

func loadFile(path string) (bloomlab.Filter, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	// A section reader tells the decoder the size: each payload is
	// allocated once, at its final size.
	r := io.NewSectionReader(f, 0, st.Size())
	filter, err := bloomlab.ReadFrom(r)
	if err != nil {
		return nil, err
	}
	if n, _ := r.Read(make([]byte, 1)); n != 0 {
		return nil, fmt.Errorf("bytes after the filter: %w", bloomlab.ErrFormat)
	}
	return filter, nil
}

// lockName is the file whose lock marks a directory in use (lockDir).
const lockName = "bloomlab.lock"

// errNoLock is lockDir's report that it could not lock the directory on
// this platform or file system (Err: the lock's error, if any): the
// server runs, unlocked, with a warning.
type errNoLock struct{ Err error }

func (e errNoLock) Error() string {
	if e.Err == nil {
		return "flock is not available on this platform"
	}
	return e.Err.Error()
}

// errDirInUse is the error of a server started on a directory that
// another server (of this process or another) holds.
func errDirInUse(dir string) error {
	return fmt.Errorf("server: directory %s is in use by another bloomlab server (%s is locked): two servers would overwrite each other's log", dir, lockName)
}

// closeFiles closes the log, then releases the directory.
func (s *Server) closeFiles() error {
	var err error
	if s.aof != nil {
		err = s.aof.close()
		s.aof = nil
	}
	if s.dirLock != nil {
		s.dirLock.Close()
		s.dirLock = nil
	}
	return err
}

// logErr is the log's failure, if it failed.
func (s *Server) logErr() error {
	if s.aof == nil {
		return nil
	}
	return s.aof.err()
}

// errReloadOOM is reloadValues' refusal for want of memory.
var errReloadOOM = errors.New(errOOM)

// reloadValues is DEBUG RELOAD's round trip: every key's value goes
// through its snapshot encoding and decoding, and the decoded copies
// replace the originals only once all of them decoded; on any failure
// nothing changes. The copies' memory (and the encoding buffer's) is
// reserved against MaxMemory first: errReloadOOM if it does not fit. Keys
// keep their expiry times and entries (and so their place in the expiry
// index and their accounted memory); a load in progress (BF/CF.LOADCHUNK)
// is kept as it is; no watcher is touched: the state is the same by
// construction, but for the values settled first (settleAll: a digest's
// buffer merged), logged as c's. A value a snapshot in progress froze stays
// with that snapshot; its copy is not frozen. The caller holds db.mu
// exclusively.
func (s *Server) reloadValues(c *client) error {
	// Values are reloaded as RedisBloom saves them (a digest's buffer
	// merged, and logged), with a directory or without.
	if err := c.settleAll(); err != nil {
		return err
	}
	reloaded := func(v value) bool { _, loading := v.(*loadingValue); return !loading }
	var copies, largest int64
	n := 0
	for _, e := range s.db.m {
		if reloaded(e.v) {
			m := e.v.memory()
			copies += m
			largest = max(largest, m)
			n++
		}
	}
	// The copies, the encoding buffer (about the largest value) and the
	// list of replacements.
	reserved := copies + largest + 4096 + int64(n)*32
	if !s.reserve(reserved) {
		return errReloadOOM
	}
	defer func() { s.mem.Add(-reserved) }()
	type replacement struct {
		e *entry
		v value
	}
	repl := make([]replacement, 0, n)
	var buf bytes.Buffer
	buf.Grow(int(min(largest+4096, math.MaxInt32)))
	for k, e := range s.db.m {
		if !reloaded(e.v) {
			continue
		}
		buf.Reset()
		if err := e.v.encode(&buf); err != nil {
			return fmt.Errorf("key %q: encoding: %w", k, err)
		}
		if over := int64(buf.Cap()) - (largest + 4096); over > 0 {
			// The encoding grew the buffer past its reservation.
			if !s.reserve(over) {
				return errReloadOOM
			}
			reserved += over
			largest += over
		}
		r := bytes.NewReader(buf.Bytes())
		v, err := e.v.typ().decode(r, int64(r.Len()))
		if err != nil {
			return fmt.Errorf("key %q: decoding: %w", k, err)
		}
		if r.Len() != 0 {
			return fmt.Errorf("key %q: decoding left %d of %d bytes", k, r.Len(), buf.Len())
		}
		if v.typ() != e.v.typ() {
			return fmt.Errorf("key %q: decoded a %s from a %s", k, v.typ().name, e.v.typ().name)
		}
		repl = append(repl, replacement{e, v})
	}
	for _, r := range repl {
		old := r.e.v.memory()
		r.e.v, r.e.frozen = r.v, 0
		// The copy's accounting replaces the original's (its reservation
		// is given back by the deferred release).
		if d := r.v.memory() - old; d != 0 {
			r.e.mem += d
			s.mem.Add(d)
		}
	}
	return nil
}
