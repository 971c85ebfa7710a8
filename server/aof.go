package server

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The log. Each generation is one file, bloomlab.<G>.aof, holding the
// writes made after the snapshot of generation G:
//
//	header (24 bytes): magic "BLAO", version u16 = 1, flags u16 = 0,
//	    generation u64, reserved u32 = 0, CRC-32C of bytes 0–19 (u32)
//	records: body length L (u32), CRC-32C of the body (u32), body:
//	    argument count n (u32), then n × (length u32, bytes)
//
// All integers little-endian. A record is one command as the server ran
// it (relative times turned absolute: EXPIRE is logged as PEXPIREAT); a
// MULTI/EXEC block is logged between a MULTI and an EXEC record and
// replayed whole or not at all.

const (
	aofMagic     = "BLAO"
	aofHeaderLen = 24
	maxArgsInLog = 1 << 24
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func logName(gen uint64) string { return "bloomlab." + strconv.FormatUint(gen, 10) + ".aof" }

// parseLogName returns the generation of a log file name.
func parseLogName(name string) (uint64, bool) {
	if !strings.HasPrefix(name, "bloomlab.") || !strings.HasSuffix(name, ".aof") {
		return 0, false
	}
	g, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(name, "bloomlab."), ".aof"), 10, 64)
	return g, err == nil && g > 0
}

type aof struct {
	dir    string
	mode   Fsync
	logger func(format string, args ...any)

	mu  sync.Mutex   // buf, and end's changes
	buf []byte       // records appended and not yet written
	end atomic.Int64 // logical position after the last record appended (changed under mu, read anywhere)

	io      sync.Mutex // file writes, syncs and rotation
	f       *os.File
	gen     uint64
	base    int64 // logical position of the current file's first record
	spare   []byte
	written atomic.Int64 // logical position written to the file
	synced  atomic.Int64 // logical position synced to disk
	failure atomic.Pointer[error]

	stop chan struct{}
	done chan struct{}

	// wait's rounds: leading is whether a waiter is writing (and
	// syncing) for the others; round is signalled when it is done.
	rmu     sync.Mutex
	leading bool
	round   sync.Cond
}

// openLog opens generation gen for appending at its end (creating it
// with its header if missing).
func openLog(dir string, gen uint64, mode Fsync, logger func(string, ...any)) (*aof, error) {
	a := &aof{dir: dir, mode: mode, logger: logger, stop: make(chan struct{}), done: make(chan struct{})}
	a.round.L = &a.rmu
	f, err := a.create(gen, true)
	if err != nil {
		return nil, err
	}
	a.f, a.gen = f, gen
	go a.syncer()
	return a, nil
}

// create opens (or, if missing, creates with its header) a log file,
// positioned at its end. A file it creates and cannot complete is removed:
// left behind, it would follow the current log, which could then no
// longer have its torn tail cut at the next start.
func (a *aof) create(gen uint64, reuse bool) (f *os.File, err error) {
	path := filepath.Join(a.dir, logName(gen))
	if reuse {
		if f, err := os.OpenFile(path, os.O_RDWR, 0); err == nil {
			if _, err := f.Seek(0, io.SeekEnd); err != nil {
				f.Close()
				return nil, err
			}
			return f, nil
		}
	}
	f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(path)
			syncDir(a.dir)
		}
	}()
	var h [aofHeaderLen]byte
	copy(h[:], aofMagic)
	binary.LittleEndian.PutUint16(h[4:], 1)
	binary.LittleEndian.PutUint64(h[8:], gen)
	binary.LittleEndian.PutUint32(h[20:], crc32.Checksum(h[:20], castagnoli))
	if _, err := f.Write(h[:]); err != nil {
		return nil, err
	}
	if err := syncLog(f); err != nil {
		return nil, err
	}
	syncDir(a.dir)
	return f, nil
}

// appendRecord encodes args as a record at the end of the buffer and
// returns the logical position after it.
//
// A record of directRecord bytes or more (LOADCHUNK's 16 MiB chunks) is
// not copied into the buffer: it is written to the file at once, from the
// command's own arguments, after what the buffer holds, so that a run of
// big records costs no memory beyond the arguments, which the connection
// holds anyway. Redis writes its log before the reply too (everysec and
// no write it before the next replies go out), so what a crash of the
// process can lose is the same; a write that fails fails the log as a
// group write does, and the caller's wait reports it.
func (a *aof) appendRecord(args [][]byte) int64 {
	if recordLen(args) >= directRecord {
		return a.writeRecord(args)
	}
	a.mu.Lock()
	a.buf = appendRecord(a.buf, args)
	end := a.end.Add(int64(recordLen(args)))
	a.mu.Unlock()
	return end
}

// directRecord is the size from which appendRecord writes a record to
// the file instead of copying it into the buffer.
const directRecord = 1 << 20

// writeRecord is appendRecord's direct write: under a.io (no other write
// meanwhile), it takes the buffer's records and reserves the record's
// place after them (records appended later go after it), then writes
// both, the record's small parts gathered and its large arguments written
// from where they are.
func (a *aof) writeRecord(args [][]byte) int64 {
	a.io.Lock()
	defer a.io.Unlock()
	a.mu.Lock()
	out := a.buf
	a.buf = a.spare[:0]
	a.spare = nil
	end := a.end.Add(int64(recordLen(args)))
	a.mu.Unlock()
	if a.err() != nil {
		return end // never written: the caller's wait reports the failure
	}
	var n [4]byte
	binary.LittleEndian.PutUint32(n[:], uint32(len(args)))
	crc := crc32.Update(0, castagnoli, n[:])
	for _, x := range args {
		binary.LittleEndian.PutUint32(n[:], uint32(len(x)))
		crc = crc32.Update(crc, castagnoli, n[:])
		crc = crc32.Update(crc, castagnoli, x)
	}
	out = binary.LittleEndian.AppendUint32(out, uint32(recordLen(args)-8))
	out = binary.LittleEndian.AppendUint32(out, crc)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(args)))
	for _, x := range args {
		out = binary.LittleEndian.AppendUint32(out, uint32(len(x)))
		if len(x) < directRecord/16 {
			out = append(out, x...)
			continue
		}
		if _, err := a.f.Write(out); err != nil {
			a.fail(err)
			return end
		}
		if _, err := a.f.Write(x); err != nil {
			a.fail(err)
			return end
		}
		out = out[:0]
	}
	if _, err := a.f.Write(out); err != nil {
		a.fail(err)
		return end
	}
	if cap(out) <= keepLogBuf {
		a.spare = out[:0]
	}
	a.written.Store(end)
	return end
}

// appendRaw appends records already encoded (an EXEC block) as one unit.
func (a *aof) appendRaw(recs ...[]byte) int64 {
	a.mu.Lock()
	for _, r := range recs {
		a.buf = append(a.buf, r...)
		a.end.Add(int64(len(r)))
	}
	end := a.end.Load()
	a.mu.Unlock()
	return end
}

func recordLen(args [][]byte) int {
	n := 12
	for _, x := range args {
		n += 4 + len(x)
	}
	return n
}

func appendRecord(b []byte, args [][]byte) []byte {
	start := len(b)
	b = binary.LittleEndian.AppendUint64(b, 0) // length and CRC, filled below
	b = binary.LittleEndian.AppendUint32(b, uint32(len(args)))
	for _, x := range args {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(x)))
		b = append(b, x...)
	}
	body := b[start+8:]
	binary.LittleEndian.PutUint32(b[start:], uint32(len(body)))
	binary.LittleEndian.PutUint32(b[start+4:], crc32.Checksum(body, castagnoli))
	return b
}

func (a *aof) err() error {
	if p := a.failure.Load(); p != nil {
		return *p
	}
	return nil
}

func (a *aof) fail(err error) error {
	err = fmt.Errorf("log %s: %w", logName(a.gen), err)
	a.failure.CompareAndSwap(nil, &err)
	a.logger("bloomlab: %v: writes are refused from now on", err)
	return a.err()
}

// wait returns once the log holds everything up to pos: written to the
// file (EverySec, No: a crash of the process loses nothing acknowledged)
// or synced to disk (Always). The first waiter writes (and syncs) for
// every record appended so far: concurrent writers share one write and
// one fsync.
// A position already durable is not an error even after a failure: what
// the log held before it failed stays acknowledged.
//
// The waiters do not queue for the file: one of them (the leader) writes
// and syncs everything appended so far while the others wait for the
// round to end (a.round), then every waiter the round covered returns at
// once, and one that came too late leads the next round. Queued on the
// file's lock instead, a waiter that the round in progress covers waited
// behind one that it did not, for a whole second fsync.
func (a *aof) wait(pos int64) error {
	if a == nil || a.durable(pos) {
		return nil
	}
	sync := a.mode == Always
	a.rmu.Lock()
	for {
		if a.durable(pos) {
			a.rmu.Unlock()
			return nil
		}
		if !a.leading {
			break
		}
		a.round.Wait()
	}
	a.leading = true
	a.rmu.Unlock()
	err := a.flush(a.end.Load(), sync)
	a.rmu.Lock()
	a.leading = false
	a.round.Broadcast()
	a.rmu.Unlock()
	return err
}

// durable reports whether the log holds everything up to pos as the mode
// promises: synced (Always) or written to the file (EverySec, No).
func (a *aof) durable(pos int64) bool {
	if a.mode == Always {
		return a.synced.Load() >= pos
	}
	return a.written.Load() >= pos
}

// lost reports whether the log has failed with records appended that it
// will never hold durably: changes in memory that a crash takes back.
func (a *aof) lost() bool {
	return a != nil && a.err() != nil && !a.durable(a.end.Load())
}

func (a *aof) flush(pos int64, sync bool) error {
	a.io.Lock()
	defer a.io.Unlock()
	if sync && a.synced.Load() >= pos || !sync && a.written.Load() >= pos {
		return nil
	}
	if err := a.err(); err != nil {
		return err
	}
	if err := a.writeOut(); err != nil {
		return a.fail(err)
	}
	if sync {
		if err := syncLog(a.f); err != nil {
			return a.fail(err)
		}
		a.synced.Store(a.written.Load())
	}
	return nil
}

// syncHook, when set, replaces syncLog's fsync: tests delay it or make it
// fail (atomic: the server's goroutines sync meanwhile).
var syncHook atomic.Pointer[func(*os.File) error]

// syncLog is the sync of a group commit and of a new log's header: its
// data and what reading them back needs (the file's size), as Redis's
// fdatasync on Linux, not its times (dataSync).
func syncLog(f *os.File) error {
	if h := syncHook.Load(); h != nil {
		return (*h)(f)
	}
	return dataSync(f)
}

// appendedEnd returns the logical position after the last record appended
// so far (0 without a log).
func (a *aof) appendedEnd() int64 {
	if a == nil {
		return 0
	}
	return a.end.Load()
}

// writeOut writes the buffer to the file; the caller holds a.io.
func (a *aof) writeOut() error {
	a.mu.Lock()
	buf, end := a.buf, a.end.Load()
	a.buf = a.spare[:0]
	a.mu.Unlock()
	if len(buf) > 0 {
		if _, err := a.f.Write(buf); err != nil {
			return err
		}
	}
	// A buffer is kept for the next write up to keepLogBuf, so that a
	// run of large records (LOADCHUNK's 16 MiB chunks) reuses two
	// buffers instead of leaving one of garbage per record; the syncer
	// drops a large one once the log has been idle for a tick (dropIdle).
	if cap(buf) <= keepLogBuf {
		a.spare = buf[:0]
	} else {
		a.spare = nil
	}
	a.written.Store(end)
	return nil
}

// keepLogBuf is the largest log buffer kept between writes while the log
// is busy; smallLogBuf the largest kept while it is idle.
const (
	keepLogBuf  = 64 << 20
	smallLogBuf = 4 << 20
)

// dropIdle drops the log's buffers beyond smallLogBuf when nothing was
// appended for a tick of the syncer.
func (a *aof) dropIdle() {
	a.io.Lock()
	if cap(a.spare) > smallLogBuf {
		a.spare = nil
	}
	a.io.Unlock()
	a.mu.Lock()
	if len(a.buf) == 0 && cap(a.buf) > smallLogBuf {
		a.buf = nil
	}
	a.mu.Unlock()
}

// syncer writes and syncs the log once a second (EverySec; with No it
// only writes).
func (a *aof) syncer() {
	defer close(a.done)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	idleEnd := int64(-1)
	for {
		select {
		case <-a.stop:
			return
		case <-t.C:
		}
		end := a.end.Load()
		if end == idleEnd {
			a.dropIdle()
		}
		idleEnd = end
		switch a.mode {
		case EverySec:
			if a.synced.Load() < end {
				a.flush(end, true)
			}
		case No:
			if a.written.Load() < end {
				a.flush(end, false)
			}
		}
	}
}

// rotate writes and syncs the current file and starts generation gen.
// The caller holds the keyspace exclusively: nothing is appended
// meanwhile.
func (a *aof) rotate(gen uint64) error {
	a.io.Lock()
	defer a.io.Unlock()
	if err := a.err(); err != nil {
		return err
	}
	if err := a.writeOut(); err != nil {
		return a.fail(err)
	}
	if err := a.f.Sync(); err != nil {
		return a.fail(err)
	}
	a.synced.Store(a.written.Load())
	f, err := a.create(gen, false)
	if err != nil {
		return fmt.Errorf("log %s: %w", logName(gen), err)
	}
	a.f.Close()
	a.f, a.gen = f, gen
	a.mu.Lock()
	a.base = a.end.Load()
	a.mu.Unlock()
	return nil
}

// size is the current file's size in bytes.
func (a *aof) size() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return aofHeaderLen + a.end.Load() - a.base
}

// close writes, syncs and closes the file.
func (a *aof) close() error {
	close(a.stop)
	<-a.done
	a.io.Lock()
	defer a.io.Unlock()
	var err error
	if a.err() == nil {
		if err = a.writeOut(); err == nil {
			err = a.f.Sync()
		}
	}
	if cerr := a.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// removeBefore deletes the log files of generations before gen (their
// writes are in the snapshot of gen).
func removeLogsBefore(dir string, gen uint64) {
	gens, _ := listLogs(dir)
	for _, g := range gens {
		if g < gen {
			os.Remove(filepath.Join(dir, logName(g)))
		}
	}
	syncDir(dir)
}

// listLogs returns the generations of the log files in dir, ascending.
func listLogs(dir string) ([]uint64, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var gens []uint64
	for _, e := range ents {
		if g, ok := parseLogName(e.Name()); ok && e.Type().IsRegular() {
			gens = append(gens, g)
		}
	}
	sort.Slice(gens, func(i, j int) bool { return gens[i] < gens[j] })
	return gens, nil
}

// logError is damage in a log that is not a torn last record.
type logError struct {
	path   string
	offset int64
	msg    string
}

func (e *logError) Error() string {
	return fmt.Sprintf("log %s: offset %d: %s (refusing to start: repair or remove the file)", e.path, e.offset, e.msg)
}

// replayLog reads the log file at path (generation gen) and calls apply
// for each record, a MULTI/EXEC block as one call. If last is set, a torn
// last record (the file ends inside it, or it is the last and fails its
// checksum, or it is followed by zeros only) is cut off, with a warning;
// any other damage returns a *logError naming the offset. If readOnly is
// set, the file is only read: a torn tail is left out, not cut off.
func replayLog(path string, gen uint64, last, readOnly bool, logf func(string, ...any), apply func(cmds [][][]byte, offset int64) error) error {
	mode := os.O_RDWR
	if readOnly {
		mode = os.O_RDONLY
	}
	f, err := os.OpenFile(path, mode, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	br := bufio.NewReaderSize(f, 1<<20)
	var h [aofHeaderLen]byte
	if _, err := io.ReadFull(br, h[:]); err != nil {
		if last && size < aofHeaderLen {
			// Torn while the file was being created: nothing was logged.
			if readOnly {
				return nil
			}
			logf("bloomlab: log %s: torn header (%d bytes) rewritten", path, size)
			return rewriteHeader(f, gen)
		}
		return &logError{path, 0, "short header"}
	}
	switch {
	case string(h[:4]) != aofMagic:
		return &logError{path, 0, "not a bloomlab log (bad magic)"}
	case binary.LittleEndian.Uint32(h[20:]) != crc32.Checksum(h[:20], castagnoli):
		return &logError{path, 0, "header checksum mismatch"}
	case binary.LittleEndian.Uint16(h[4:]) != 1:
		return &logError{path, 4, fmt.Sprintf("version %d, this build reads 1", binary.LittleEndian.Uint16(h[4:]))}
	case binary.LittleEndian.Uint64(h[8:]) != gen:
		return &logError{path, 8, fmt.Sprintf("generation %d in a file named for %d", binary.LittleEndian.Uint64(h[8:]), gen)}
	}
	off := int64(aofHeaderLen)
	var body []byte
	var block [][][]byte // a MULTI block being read
	var blockAt int64
	var blockBufs [][]byte
	torn := func(at int64, why string) error {
		if !last {
			return &logError{path, at, why + " (in a log that is not the last one)"}
		}
		if readOnly {
			logf("bloomlab: log %s: torn last record at offset %d (%s): its %d bytes left out", path, at, why, size-at)
			return nil
		}
		logf("bloomlab: log %s: torn last record at offset %d (%s): %d bytes truncated", path, at, why, size-at)
		if err := f.Truncate(at); err != nil {
			return err
		}
		return f.Sync()
	}
	for {
		if off == size {
			if block != nil {
				return torn(blockAt, "a MULTI block without its EXEC")
			}
			return nil
		}
		var rh [8]byte
		if size-off < 8 {
			return torn(orBlock(block, blockAt, off), "the file ends inside a record header")
		}
		if _, err := io.ReadFull(br, rh[:]); err != nil {
			return err
		}
		n := int64(binary.LittleEndian.Uint32(rh[:4]))
		sum := binary.LittleEndian.Uint32(rh[4:])
		if n > size-off-8 {
			return torn(orBlock(block, blockAt, off), "the file ends inside a record")
		}
		if n < 4 {
			if n == 0 && sum == 0 && zerosToEnd(f, off, size) {
				return torn(orBlock(block, blockAt, off), "zeros after the last record")
			}
			return &logError{path, off, fmt.Sprintf("record length %d", n)}
		}
		if int64(cap(body)) < n {
			body = make([]byte, n)
		}
		body = body[:n]
		if _, err := io.ReadFull(br, body); err != nil {
			return err
		}
		if crc32.Checksum(body, castagnoli) != sum {
			if off+8+n == size {
				return torn(orBlock(block, blockAt, off), "the last record fails its checksum")
			}
			return &logError{path, off, "record checksum mismatch"}
		}
		args, err := parseRecord(body)
		if err != nil {
			return &logError{path, off, err.Error()}
		}
		switch {
		case len(args) == 1 && strings.EqualFold(string(args[0]), "MULTI"):
			if block != nil {
				return &logError{path, off, "MULTI inside a MULTI block"}
			}
			block, blockAt, blockBufs = [][][]byte{}, off, nil
		case len(args) == 1 && strings.EqualFold(string(args[0]), "EXEC"):
			if block == nil {
				return &logError{path, off, "EXEC without MULTI"}
			}
			if err := apply(block, blockAt); err != nil {
				return &logError{path, blockAt, err.Error()}
			}
			block, blockBufs = nil, nil
		case block != nil:
			own := append([]byte(nil), body...) // the block's records outlive body
			blockBufs = append(blockBufs, own)
			a, _ := parseRecord(own)
			block = append(block, a)
		default:
			if err := apply([][][]byte{args}, off); err != nil {
				return &logError{path, off, err.Error()}
			}
		}
		off += 8 + n
	}
}

func orBlock(block [][][]byte, blockAt, off int64) int64 {
	if block != nil {
		return blockAt
	}
	return off
}

// zerosToEnd reports whether the file holds only zero bytes from off.
func zerosToEnd(f *os.File, off, size int64) bool {
	buf := make([]byte, 64<<10)
	for off < size {
		n, err := f.ReadAt(buf[:min(int64(len(buf)), size-off)], off)
		for _, b := range buf[:n] {
			if b != 0 {
				return false
			}
		}
		if err != nil && n == 0 {
			return false
		}
		off += int64(n)
	}
	return true
}

func rewriteHeader(f *os.File, gen uint64) error {
	var h [aofHeaderLen]byte
	copy(h[:], aofMagic)
	binary.LittleEndian.PutUint16(h[4:], 1)
	binary.LittleEndian.PutUint64(h[8:], gen)
	binary.LittleEndian.PutUint32(h[20:], crc32.Checksum(h[:20], castagnoli))
	if err := f.Truncate(0); err != nil {
		return err
	}
	if _, err := f.WriteAt(h[:], 0); err != nil {
		return err
	}
	return f.Sync()
}

// parseRecord splits a record body into its arguments (slices of body).
func parseRecord(body []byte) ([][]byte, error) {
	if len(body) < 4 {
		return nil, errors.New("record too short")
	}
	n := binary.LittleEndian.Uint32(body)
	if n == 0 || n > maxArgsInLog || int64(n)*4 > int64(len(body)-4) {
		return nil, fmt.Errorf("record of %d arguments in %d bytes", n, len(body))
	}
	args := make([][]byte, 0, n)
	p := body[4:]
	for i := uint32(0); i < n; i++ {
		if len(p) < 4 {
			return nil, errors.New("record ends inside an argument length")
		}
		l := binary.LittleEndian.Uint32(p)
		p = p[4:]
		if uint64(l) > uint64(len(p)) {
			return nil, fmt.Errorf("argument of %d bytes, %d left in the record", l, len(p))
		}
		args = append(args, p[:l:l])
		p = p[l:]
	}
	if len(p) != 0 {
		return nil, fmt.Errorf("%d bytes after the arguments", len(p))
	}
	return args, nil
}

// syncDir makes a directory's entries (a rename, a new file) durable.
// Some file systems cannot sync a directory; the files themselves are
// complete either way.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
