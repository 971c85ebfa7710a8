package server

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/bloomlab/bloomlab/internal/blrd"
	"github.com/bloomlab/bloomlab/server/internal/resp"
)

// RedisBloom's dumps: SCANDUMP and LOADCHUNK of every family that has
// them (BF, CF), one implementation each, and the value of a load in
// progress. A family with a dump is a dumpFamily beside its commands
// (cmd_bf.go, cmd_cf.go): its value types, its loader (internal/blrd's
// contract, which knows the kind's layout) and RedisBloom's texts.

// maxScanChunk is RedisBloom's MAX_SCANDUMP_SIZE.
const maxScanChunk = blrd.DefaultChunkSize

// scanDumper is a complete filter's SCANDUMP (scalable.Filter,
// cuckoo.Filter).
type scanDumper interface {
	ScanDump(dst []byte, iter int64, maxChunk int) (next int64, chunk []byte, err error)
}

// getChunk returns a buffer for a SCANDUMP chunk (maxScanChunk bytes and
// more): a chunk is built in one, sent from it (replyBuf.Hold) and the
// buffer goes back to the pool, so that a dump of a 1 GiB filter reuses a
// buffer instead of leaving 16 MiB of garbage per chunk (which Go's
// collector, pacing itself by the live heap, let grow to the filter's
// size). The pool is the one LOADCHUNK's arguments are read into.
func getChunk() []byte { return resp.BigBuf() }

// putChunk returns a buffer of getChunk.
func (s *Server) putChunk(b []byte) { resp.PutBigBuf(b) }

// dumpFamily is what SCANDUMP and LOADCHUNK differ in from one family to
// another: value types, loader, and RedisBloom's texts and order of
// checks, which differ between its commands.
type dumpFamily struct {
	prefix   string     // "bf": the commands are prefix.scandump and prefix.loadchunk
	complete *valueType // the family's filter
	loading  *valueType // a load in progress (loadingValue)

	// of returns e's value for a command of the family, or writes the
	// error reply (WRONGTYPE, a load in progress) and returns nil.
	of func(c *client, e *entry) value
	// dumper returns v's SCANDUMP, or the error reply for a filter that
	// has none.
	dumper func(v value) (scanDumper, string)
	// scanIter parses SCANDUMP's iterator, or returns the error reply;
	// scanIterFirst: before the key is looked up (CF), else once the
	// key's value is known (BF).
	scanIter      func(arg []byte) (int64, string)
	scanIterFirst bool
	// endNil: the reply past the end (and to an empty filter) is (0, nil),
	// not (0, "") (CF).
	endNil bool

	newLoader func() blrd.Loader
	// finish returns the value of a load that holds every byte, after
	// the loader's last checks.
	finish func(ld blrd.Loader) (value, error)
	// loadIter parses LOADCHUNK's iterator, or returns the error reply.
	loadIter func(arg []byte) (int64, string)
	// headerOnKey: iterator 1 is a header whatever the key holds (CF:
	// "item exists" on a key of the family); otherwise only on a missing
	// key, and a chunk to check on an existing one (BF).
	headerOnKey bool
	// headerLen, if not 0, is the header's length; another answers
	// errHeaderLen.
	headerLen    int
	errHeaderLen string
	// checkHeader, if set, refuses a header (of headerLen bytes) that the
	// loader would take but the family does not (answered with
	// badHeader); a replay does not check it, taking what was accepted.
	checkHeader func(hdr []byte) error
	// badHeader, badChunk and badLoad are the replies to a header the
	// loader refuses, a chunk Check refuses (a *blrd.ChunkError) and a
	// load that fails after Check (the key is then dropped).
	badHeader, badChunk, badLoad func(err error) string
	// errComplete answers a chunk for a key holding a complete filter.
	errComplete string
	// refuse8, if set, words the refusals above under Dialect8 (those
	// RedisBloom 8's tests match), and logs the detail they drop.
	refuse8 func(c *client, r loadRefusal) string
}

// loadRefusal is a LOADCHUNK refused: the reply as dumpFamily's texts
// word it, its cause (the loader's error; nil for a chunk onto a
// complete filter), the chunk, and what the key holds (nil: nothing, a
// header refused).
type loadRefusal struct {
	key   []byte
	reply string
	err   error
	iter  int64
	n     int
	v     value
}

// refuse answers a LOADCHUNK refused, in c's dialect.
func (fam *dumpFamily) refuse(c *client, r loadRefusal) {
	if fam.refuse8 != nil && c.d.shortLoadRefusal {
		c.err(fam.refuse8(c, r))
		return
	}
	c.err(r.reply)
}

// valueOf adapts a family's lookup (bfOf, cfOf: its value, or nil with
// the error reply written) to dumpFamily.of.
func valueOf[V interface {
	value
	comparable
}](of func(*client, *entry) V) func(*client, *entry) value {
	return func(c *client, e *entry) value {
		var none V
		if v := of(c, e); v != none {
			return v
		}
		return nil
	}
}

// loadingValue is a filter being loaded with LOADCHUNK: it answers no
// query until every byte has arrived (RedisBloom answers from the bytes
// not loaded yet meanwhile: false negatives).
type loadingValue struct {
	fam      *dumpFamily
	ld       blrd.Loader
	reserved int64 // bytes the header announced, accounted at the header
}

func (v *loadingValue) typ() *valueType { return v.fam.loading }
func (v *loadingValue) memory() int64   { return v.reserved + 96 }

func (v *loadingValue) clone() (value, error) {
	ld := v.fam.newLoader()
	ld.AllocateWhole() // accounted for since the header
	if err := cloneChunks(v.ld.WalkReceived, ld.LoadChunk); err != nil {
		return nil, err
	}
	return &loadingValue{fam: v.fam, ld: ld, reserved: v.reserved}, nil
}

// encode writes the chunks received so far (writeChunks).
func (v *loadingValue) encode(w io.Writer) error { return writeChunks(w, v.ld.WalkReceived) }

// decodeLoading reads a load in progress of the family (writeChunks).
func (fam *dumpFamily) decodeLoading(r io.Reader, n int64) (value, error) {
	ld := fam.newLoader()
	if err := readChunks(r, n, ld.LoadChunk, ld.ReadChunk); err != nil {
		return nil, err
	}
	got, total := ld.Progress()
	if got == total {
		return nil, fmt.Errorf("a load in progress that holds every byte")
	}
	// The chunks read above were allocated at the size the file holds;
	// the rest, accounted for from the header on, arrives from clients.
	ld.AllocateWhole()
	return &loadingValue{fam: fam, ld: ld, reserved: int64(total)}, nil
}

// scanDump is SCANDUMP key iterator: (1, the header) for iterator 0, then
// the data chunks, then (0, an empty or nil bulk string).
func (fam *dumpFamily) scanDump(c *client, args [][]byte) bool {
	var iter int64
	var msg string
	if fam.scanIterFirst {
		if iter, msg = fam.scanIter(args[2]); msg != "" {
			c.err(msg)
			return false
		}
	}
	e, v := readKey(c, args[1], fam.of)
	if e == nil {
		return false
	}
	defer e.mu.RUnlock()
	if !fam.scanIterFirst {
		if iter, msg = fam.scanIter(args[2]); msg != "" {
			c.err(msg)
			return false
		}
	}
	d, msg := fam.dumper(v)
	if msg != "" {
		c.err(msg)
		return false
	}
	// A data chunk is reserved before it is built: at most maxScanChunk,
	// and no more than the value holds (iterator 0 is the header, a few
	// bytes a link, checked once built).
	if iter != 0 && !c.replyFits(min(int64(maxScanChunk), v.memory())) {
		c.err(errOOM)
		return false
	}
	var buf []byte
	if iter != 0 && v.memory() >= maxScanChunk/4 {
		buf = getChunk() // a big filter's chunks: a pooled buffer (a small one's are allocated as large as they are)
	}
	next, data, err := d.ScanDump(buf, iter, maxScanChunk)
	if err != nil {
		c.s.putChunk(data)
		c.err("ERR " + oneLine(err.Error()))
		return false
	}
	if !c.replyFits(int64(len(data))) {
		c.s.putChunk(data)
		c.err(errOOM)
		return false
	}
	c.w.Array(2)
	c.w.Int(next)
	switch {
	case next == 0 && fam.endNil:
		c.w.Null() // CF: RedisBloom ends a dump (and dumps an empty filter) with a nil
		c.s.putChunk(data)
	case !c.w.BulkHeld(data):
		c.s.putChunk(data)
	}
	return false
}

// loadChunk is LOADCHUNK key iterator data. Unlike RedisBloom it insists
// on SCANDUMP's order, without gap or overlap, and the key answers only
// once every byte has arrived (the loader's last checks passed); loading
// onto a complete filter is refused.
func (fam *dumpFamily) loadChunk(c *client, args [][]byte) bool {
	s := c.s
	iter, msg := fam.loadIter(args[2])
	if msg != "" {
		c.err(msg)
		return false
	}
	key, data := args[1], args[3]
	e := s.getForCreate(c, key)
	if iter == 1 && (e == nil || fam.headerOnKey) {
		return fam.loadHeader(c, args, e)
	}
	if e == nil {
		c.err(errBFNotFound)
		return false
	}
	e.mu.Lock()
	defer unlockWritten(e)
	v, loading := e.v.(*loadingValue)
	if !loading || v.fam != fam {
		if e.v.typ() == fam.complete {
			fam.refuse(c, loadRefusal{key: args[1], reply: fam.errComplete, iter: iter, n: len(data), v: e.v})
		} else {
			c.err(errWrongType)
		}
		return false
	}
	if err := v.ld.Check(iter, len(data)); err != nil {
		fam.refuse(c, loadRefusal{key: args[1], reply: fam.badChunk(err), err: err, iter: iter, n: len(data), v: v})
		return false
	}
	if err := s.writable(e); err != nil {
		c.err("ERR " + err.Error())
		return false
	}
	v = e.v.(*loadingValue)
	if err := v.ld.LoadChunk(iter, data); err != nil {
		// Checked above; should the loader refuse anyway, the partial
		// key is removed rather than left unusable.
		fam.refuse(c, loadRefusal{key: args[1], reply: fam.badLoad(err), err: err, iter: iter, n: len(data), v: v})
		s.dropBroken(c, key, e)
		return false
	}
	if got, total := v.ld.Progress(); got == total {
		// The last chunk: the filter is checked before the chunk is
		// logged, so that the log never holds a chunk that fails at
		// replay (which would refuse to start).
		done, err := fam.finish(v.ld)
		if err != nil {
			fam.refuse(c, loadRefusal{key: args[1], reply: fam.badLoad(err), err: err, iter: iter, n: len(data), v: v})
			s.dropBroken(c, key, e)
			return false
		}
		e.v = done
		s.resize(key, e)
	}
	c.log(args)
	s.touchKey(key)
	c.w.Simple("OK")
	return false
}

// loadHeader is LOADCHUNK key 1 header: a new key holding a load in
// progress, whose total the header announces is accounted for at once.
func (fam *dumpFamily) loadHeader(c *client, args [][]byte, e *entry) bool {
	s := c.s
	key, data := args[1], args[3]
	switch {
	case e != nil && (e.v.typ() == fam.complete || e.v.typ() == fam.loading):
		c.err(errBFExists)
		return false
	case e != nil:
		c.err(errWrongType)
		return false
	case fam.headerLen != 0 && len(data) != fam.headerLen:
		c.err(fam.errHeaderLen)
		return false
	}
	if fam.checkHeader != nil && !c.replaying {
		if err := fam.checkHeader(data); err != nil {
			fam.refuse(c, loadRefusal{key: args[1], reply: fam.badHeader(err), err: err, iter: 1, n: len(data)})
			return false
		}
	}
	ld := fam.newLoader()
	if err := ld.LoadChunk(1, data); err != nil {
		fam.refuse(c, loadRefusal{key: args[1], reply: fam.badHeader(err), err: err, iter: 1, n: len(data)})
		return false
	}
	_, total := ld.Progress()
	v := &loadingValue{fam: fam, ld: ld, reserved: int64(total)}
	need := entryMem(string(key), v)
	if !c.reserve(need) {
		c.err(errOOM)
		return false
	}
	// Accounted for: each segment is allocated once, whole, when its
	// first bytes come, not grown as they come.
	ld.AllocateWhole()
	s.add(string(key), v, need)
	c.log(args)
	c.w.Simple("OK")
	return false
}

// dropBroken deletes a key whose load failed (the caller holds the
// keyspace exclusively).
func (s *Server) dropBroken(c *client, key []byte, e *entry) {
	s.deleteKey(c, string(key), e)
	c.logArgs("DEL", string(key))
}

// writeChunks writes a load in progress: a count (u32), then each
// chunk's iterator (i64), length (u64) and bytes, from walk (a Loader's
// WalkReceived: the header, then at most a chunk per link or sub-filter,
// written from the filter's memory, not copied first). It walks twice, to
// count the chunks and to write them: the value is frozen meanwhile (a
// writer copies it before changing it).
func writeChunks(w io.Writer, walk func(blrd.WalkFunc) error) error {
	count := 0
	walk(func(int64, int, func(io.Writer) error) error { count++; return nil })
	var hdr [16]byte
	binary.LittleEndian.PutUint32(hdr[:4], uint32(count))
	if _, err := w.Write(hdr[:4]); err != nil {
		return err
	}
	written := 0
	err := walk(func(iter int64, size int, write func(io.Writer) error) error {
		binary.LittleEndian.PutUint64(hdr[:8], uint64(iter))
		binary.LittleEndian.PutUint64(hdr[8:], uint64(size))
		if _, err := w.Write(hdr[:]); err != nil {
			return err
		}
		written++
		return write(w)
	})
	if err == nil && written != count {
		err = fmt.Errorf("a load in progress of %d chunks, then %d", count, written)
	}
	return err
}

// cloneChunks feeds the chunks of walk to load (a new Loader's
// LoadChunk, which the caller has told to AllocateWhole): the header as
// it is, each other chunk in the pieces its write function writes, so
// that no chunk is copied whole in between.
func cloneChunks(walk func(blrd.WalkFunc) error, load func(iter int64, data []byte) error) error {
	return walk(func(iter int64, size int, write func(io.Writer) error) error {
		if iter == 1 {
			var b bytes.Buffer
			write(&b)
			return load(iter, b.Bytes())
		}
		return write(&feedWriter{load: load, at: iter - 1 - int64(size)})
	})
}

// feedWriter hands what is written to it to load as consecutive chunks,
// at offset at of the dump.
type feedWriter struct {
	load func(iter int64, data []byte) error
	at   int64
}

func (f *feedWriter) Write(p []byte) (int, error) {
	f.at += int64(len(p))
	if err := f.load(f.at+1, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// readChunks reads what writeChunks wrote, from exactly n bytes of r:
// the first chunk (the header) is read and handed to header, each of the
// others is handed to chunk to read from r (a Loader's ReadChunk, which
// validates it before it allocates, and reads it straight into the
// filter), once its length is known to lie within the n bytes.
func readChunks(r io.Reader, n int64, header func(iter int64, data []byte) error, chunk func(iter int64, size int, r io.Reader) error) error {
	lr := &io.LimitedReader{R: r, N: n}
	var hdr [16]byte
	if _, err := io.ReadFull(lr, hdr[:4]); err != nil {
		return eofErr(err)
	}
	count := binary.LittleEndian.Uint32(hdr[:4])
	if count == 0 || int64(count) > n/16+1 {
		return fmt.Errorf("load in progress with %d chunks in %d bytes", count, n)
	}
	for i := uint32(0); i < count; i++ {
		if _, err := io.ReadFull(lr, hdr[:]); err != nil {
			return eofErr(err)
		}
		iter := int64(binary.LittleEndian.Uint64(hdr[:8]))
		size := binary.LittleEndian.Uint64(hdr[8:])
		if size > uint64(lr.N) || size > math.MaxInt {
			return fmt.Errorf("chunk of %d bytes, %d present", size, lr.N)
		}
		if i > 0 {
			left := lr.N
			if err := chunk(iter, int(size), lr); err != nil {
				return err
			}
			if left-lr.N != int64(size) {
				return fmt.Errorf("chunk of %d bytes, %d read", size, left-lr.N)
			}
			continue
		}
		data, err := readExact(lr, int64(size))
		if err != nil {
			return err
		}
		if err := header(iter, data); err != nil {
			return err
		}
	}
	return nil
}

// refusalLog gathers LOADCHUNK refusals for the log: the first of a burst
// is logged, the others of the burst (the same key and the same refusal,
// each within a second of the last) are counted and said in one line when
// the next refusal that differs is logged. A client replaying a dump onto a complete filter
// sends thousands of chunks: they were a line each (2,155 identical
// lines in one of RedisBloom's flow tests).
type refusalLog struct {
	mu   sync.Mutex
	key  string
	msg  string
	n    int
	last time.Time
}

// logRefusal logs msg, a LOADCHUNK refusal for key, once per key and
// burst (refusalLog).
func (s *Server) logRefusal(key []byte, msg string) {
	r := &s.refusals
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	if r.key == string(key) && r.msg == sameRefusal(msg) && now.Sub(r.last) < time.Second {
		r.n++
		r.last = now
		return
	}
	if r.n > 0 {
		s.logf("bloomlab: %d more LOADCHUNK refusals for key %q like the last", r.n, r.key)
	}
	r.key, r.msg, r.n, r.last = string(key), sameRefusal(msg), 0, now
	s.logf("%s", msg)
}

// sameRefusal is a refusal's text without its iterator and size, which
// every chunk of a burst has its own of.
func sameRefusal(msg string) string {
	if i := strings.Index(msg, "): "); i >= 0 {
		return msg[i:]
	}
	return msg
}
