package blrd

import (
	"bytes"
	"fmt"
	"io"

	"github.com/bloomlab/bloomlab/internal/base"
	"github.com/bloomlab/bloomlab/internal/format"
	"github.com/bloomlab/bloomlab/internal/sysmem"
)

// RedisBloom's dumps, whatever the kind: SCANDUMP key 0 returns iterator
// 1 and a header; SCANDUMP key it (it ≥ 1) returns the data from byte
// offset it − 1 on with the iterator it + their length, and past the end
// iterator 0. LOADCHUNK key it data takes each pair back: it = 1 with the
// header creates the filter, otherwise the data go to byte offset
// it − len(data) − 1. The data are the filter's segments (a chain's links,
// a cuckoo filter's sub-filters), oldest first, each the size the header
// says; no chunk crosses from one segment into the next.
//
// What differs between the kinds (the header's layout, how a segment
// stores its bytes, what is checked once every byte has come) is a Body;
// the rest — the order of the chunks, the allocation policy, the chunks
// received so far, the framing in a file — is here, once.

// DefaultChunkSize is RedisBloom's largest SCANDUMP chunk (16 MiB,
// MAX_SCANDUMP_SIZE).
const DefaultChunkSize = 16 << 20

// Chunk is one SCANDUMP reply: the iterator returned with the data,
// which is the iterator LOADCHUNK takes with them.
type Chunk struct {
	Iter int64
	Data []byte
}

// WalkFunc is what a Loader's WalkReceived calls for each chunk received:
// its iterator and size, and a function that writes its bytes to a
// writer (from the filter's memory, not copied first).
type WalkFunc = func(iter int64, size int, write func(io.Writer) error) error

// Loader is the contract of every kind's loader (scalable.Loader,
// cuckoo.Loader): what the server and the command use, whatever the kind.
// A Loader takes the chunks of one dump in SCANDUMP's order, header
// first; it validates the header before it allocates, and allocates a
// segment only as its bytes arrive. After an error it is spent. Each
// kind's Loader has a Filter method besides, which returns its filter
// once every byte has arrived.
type Loader interface {
	// LoadChunk takes one chunk (LOADCHUNK's iterator and data); the
	// final (0, empty) reply of SCANDUMP may be fed and is ignored.
	LoadChunk(iter int64, data []byte) error
	// ReadChunk is LoadChunk for a data chunk of n bytes read from r; the
	// chunk is checked before anything is allocated or read.
	ReadChunk(iter int64, n int, r io.Reader) error
	// Check reports, without taking it, whether a data chunk of n bytes
	// with iterator iter is the next one and lies within one segment; a
	// refusal is a *ChunkError.
	Check(iter int64, n int) error
	// Progress returns the bytes received and the total the header
	// announces (0, 0 before a valid header).
	Progress() (received, total uint64)
	// WalkReceived calls fn for the chunks that bring a new Loader to
	// this one's state: the header, then at most one chunk per segment.
	WalkReceived(fn WalkFunc) error
	// AllocateWhole makes the Loader allocate each segment whole when its
	// first bytes arrive, for a caller that has accounted for the total.
	AllocateWhole()
}

// Body is a kind's side of a Core: its header, its segments' storage and
// its last checks. The Core calls it only with valid arguments: a
// segment it announced, bytes that fit.
type Body interface {
	// Names returns the kind's package ("scalable"), which prefixes
	// errors, and what it calls a segment ("link").
	Names() (pkg, segment string)
	// Header validates a SCANDUMP header, prepares the filter it
	// describes without allocating its segments, and returns the
	// segments' sizes in bytes, in order (each at least 1).
	Header(hdr []byte) (sizes []uint64, err error)
	// Grow makes segment seg's storage hold room bytes in all without
	// growing again (when it allocates, exactly that many).
	Grow(seg int, room uint64)
	// Append appends data to segment seg, which holds have bytes.
	Append(seg int, have uint64, data []byte)
	// WriteSegment writes the first n bytes of segment seg.
	WriteSegment(w io.Writer, seg int, n uint64) error
	// Finish checks the filter once every byte has arrived.
	Finish() error
}

// Core is the mechanics of a Loader, for the kinds that build one on a
// Body: the kind's Loader holds a Core and its Body and passes the Body
// to each call. The zero Core is ready.
type Core struct {
	hdr    []byte   // a copy of the header chunk, for WalkReceived
	sizes  []uint64 // the segments' sizes; nil before a valid header
	total  uint64   // their sum: the bytes the header announces
	done   uint64   // bytes received
	seg    int      // segment being filled
	have   uint64   // bytes of it received
	exact  bool     // allocate each segment whole on its first chunk (LoadAll)
	whole  int8     // AllocateWhole: 1 asked, 2 asked and the total fits, -1 asked but it does not
	ended  bool     // the final (0, empty) reply was seen
	err    error    // sticky
	result bool     // Finish succeeded
}

// Reason says why Check refused a chunk.
type Reason uint8

const (
	// BadIterator: the chunk is empty, or its iterator cannot follow that
	// many bytes (it < len(data) + 1).
	BadIterator Reason = iota + 1
	// OutOfOrder: the chunk is not the next one (a gap, an overlap).
	OutOfOrder
	// Beyond: every byte the header announces has arrived.
	Beyond
	// Crossing: the chunk crosses the end of its segment.
	Crossing
)

// ChunkError is Check's refusal of a chunk. It wraps format.ErrFormat.
type ChunkError struct {
	Reason Reason
	// Start and End are the bytes the chunk would cover (start
	// inclusive, end exclusive), Next the byte expected next; for
	// BadIterator only Next is set.
	Start, End, Next uint64
	msg              string
}

func (e *ChunkError) Error() string { return e.msg }
func (e *ChunkError) Unwrap() error { return format.ErrFormat }

// Bad returns a dump error of package pkg: "pkg: RedisBloom dump: msg",
// wrapping format.ErrFormat.
func Bad(pkg, msg string, args ...any) error {
	return fmt.Errorf("%s: RedisBloom dump: %s: %w", pkg, fmt.Sprintf(msg, args...), format.ErrFormat)
}

func chunkErr(pkg string, e ChunkError, msg string, args ...any) *ChunkError {
	e.msg = Bad(pkg, msg, args...).Error()
	return &e
}

// LoadChunk takes one chunk: the header first (iterator 1), then the data
// chunks in SCANDUMP's order; the final (0, empty) reply may be fed. A
// segment is allocated when its first bytes arrive: whole (AllocateWhole,
// LoadAll), or for at least 1 MiB and grown as more arrive. After an
// error the Core is spent and returns it again.
func (c *Core) LoadChunk(b Body, iter int64, data []byte) error {
	if c.err == nil {
		c.err = c.load(b, iter, data)
	}
	return c.err
}

func (c *Core) load(b Body, iter int64, data []byte) error {
	pkg, _ := b.Names()
	switch {
	case c.result:
		return fmt.Errorf("%s: Loader already returned its filter: %w", pkg, base.ErrParam)
	case c.sizes == nil:
		if iter != 1 {
			return Bad(pkg, "the first chunk must be the header, with iterator 1 (got %d)", iter)
		}
		sizes, err := b.Header(data)
		if err != nil {
			return err
		}
		var total uint64
		for _, s := range sizes {
			total += s
		}
		c.sizes, c.total, c.hdr = sizes, total, append([]byte(nil), data...)
		return nil
	case iter == 0 && len(data) == 0:
		c.ended = true
		return nil
	case c.ended:
		return Bad(pkg, "chunk after the end of the dump")
	}
	if err := c.Check(b, iter, len(data)); err != nil {
		return err
	}
	size := c.sizes[c.seg]
	switch {
	case c.allocWhole():
		b.Grow(c.seg, size)
	case c.have == 0:
		// At least this chunk (its bytes have arrived), at least 1 MiB;
		// Append grows it as more arrive.
		b.Grow(c.seg, min(size, max(1<<20, uint64(len(data)))))
	}
	b.Append(c.seg, c.have, data)
	c.advance(uint64(len(data)))
	return nil
}

// advance counts n bytes received into the current segment.
func (c *Core) advance(n uint64) {
	c.done += n
	c.have += n
	if c.have == c.sizes[c.seg] {
		c.seg, c.have = c.seg+1, 0
	}
}

// Check reports, without taking it, whether a data chunk of n bytes with
// iterator iter is the next one and lies within one segment. Its refusal
// of the chunk is a *ChunkError; before a valid header, or after an
// error, it returns that error.
func (c *Core) Check(b Body, iter int64, n int) error {
	pkg, segment := b.Names()
	switch {
	case c.err != nil:
		return c.err
	case c.sizes == nil:
		return Bad(pkg, "no header yet")
	case n <= 0 || iter < 1 || uint64(iter)-1 < uint64(n):
		return chunkErr(pkg, ChunkError{Reason: BadIterator, Next: c.done}, "iterator %d with %d bytes", iter, n)
	}
	start := uint64(iter) - 1 - uint64(n)
	e := ChunkError{Start: start, End: start + uint64(n), Next: c.done}
	switch {
	case start != c.done:
		e.Reason = OutOfOrder
		return chunkErr(pkg, e, "chunk for bytes %d … %d, expected byte %d next (chunks must come in SCANDUMP order)", start, e.End, c.done)
	case c.seg >= len(c.sizes):
		e.Reason = Beyond
		return chunkErr(pkg, e, "%d bytes beyond the %d the header announces", n, c.total)
	}
	if left := c.sizes[c.seg] - c.have; uint64(n) > left {
		e.Reason = Crossing
		return chunkErr(pkg, e, "chunk of %d bytes crosses the end of %s %d (%d bytes left in it)", n, segment, c.seg, left)
	}
	return nil
}

// MemLimit is sysmem.Limit, replaceable by tests.
var MemLimit = sysmem.Limit

// AllocateWhole makes the Core allocate each segment at its full size
// when its first bytes arrive (one begun smaller grows to its full size
// in one step) instead of growing it as its bytes arrive, which
// allocates about five times the segment in all and holds up to 2.25
// times it at the last growth. It is for a caller that has accounted for
// the total Progress reports (a server that reserved it against its
// memory limit when the header came). It may be called before or after
// the header. A header whose total exceeds the memory this process may
// use (MemLimit) is still loaded as its bytes arrive: a header alone
// never makes a Loader allocate beyond the machine.
func (c *Core) AllocateWhole() {
	if c.whole == 0 {
		c.whole = 1
	}
}

// allocWhole reports whether a segment is allocated whole (LoadAll, or
// AllocateWhole with a total that fits the memory this process may use).
func (c *Core) allocWhole() bool {
	if c.whole == 1 {
		c.whole = -1
		if limit := MemLimit(); limit == 0 || c.total <= limit {
			c.whole = 2
		}
	}
	return c.exact || c.whole == 2
}

// readPiece is the most bytes ReadChunk buffers at a time.
const readPiece = 64 << 10

// ReadChunk is LoadChunk for a data chunk of n bytes read from r, so that
// a caller reading chunks from a file does not hold each twice: the chunk
// is checked (Check) before anything is allocated or read, the segment's
// room for it is allocated once (the whole segment after AllocateWhole),
// and its bytes go into the segment through a buffer of at most 64 KiB.
// Fewer than n bytes in r is an error wrapping io.ErrUnexpectedEOF. The
// header comes through LoadChunk. After an error the Core is spent.
func (c *Core) ReadChunk(b Body, iter int64, n int, r io.Reader) error {
	if c.err == nil {
		c.err = c.readChunk(b, iter, n, r)
	}
	return c.err
}

func (c *Core) readChunk(b Body, iter int64, n int, r io.Reader) error {
	pkg, _ := b.Names()
	switch {
	case c.result:
		return fmt.Errorf("%s: Loader already returned its filter: %w", pkg, base.ErrParam)
	case c.sizes == nil:
		return Bad(pkg, "the first chunk must be the header (LoadChunk)")
	case c.ended:
		return Bad(pkg, "chunk after the end of the dump")
	}
	if err := c.Check(b, iter, n); err != nil {
		return err
	}
	room := c.have + uint64(n)
	if c.allocWhole() {
		room = c.sizes[c.seg]
	}
	b.Grow(c.seg, room)
	buf := make([]byte, min(n, readPiece))
	for n > 0 {
		p := buf[:min(n, len(buf))]
		if _, err := io.ReadFull(r, p); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("%s: reading a chunk: %w", pkg, err)
		}
		b.Append(c.seg, c.have, p)
		c.advance(uint64(len(p)))
		n -= len(p)
	}
	return nil
}

// Progress returns the bytes received so far and the total the header
// announces (0, 0 before a valid header). The total is known, and
// bounded, before any segment is allocated: a caller bounding memory
// reads it after the header chunk.
func (c *Core) Progress() (received, total uint64) { return c.done, c.total }

// WalkReceived calls fn for each chunk that Received returns, in order,
// without copying them: fn gets the chunk's iterator and size and a write
// function that writes the chunk's bytes (from the segment itself) to a
// writer. fn may call write once, or not at all (to count the chunks).
// It calls fn for nothing before a valid header, after an error, and once
// Finish has succeeded; it stops at fn's first error and returns it. The
// Core must not take chunks meanwhile.
func (c *Core) WalkReceived(b Body, fn WalkFunc) error {
	if c.sizes == nil || c.err != nil || c.result {
		return nil
	}
	hdr := c.hdr
	if err := fn(1, len(hdr), func(w io.Writer) error { _, err := w.Write(hdr); return err }); err != nil {
		return err
	}
	var off uint64
	for seg, size := range c.sizes {
		n := size
		switch {
		case seg == c.seg:
			n = c.have
		case seg > c.seg:
			n = 0
		}
		if n == 0 {
			break
		}
		off += n
		if err := fn(int64(off)+1, int(n), func(w io.Writer) error { return b.WriteSegment(w, seg, n) }); err != nil {
			return err
		}
	}
	return nil
}

// Received returns the chunks that bring a new Loader to this one's
// state: the header, then the bytes received so far, at most one chunk
// per segment (copies). It is how a load in progress is persisted. It
// returns nil before a valid header, after an error, and once Finish has
// succeeded.
func (c *Core) Received(b Body) []Chunk {
	var out []Chunk
	c.WalkReceived(b, func(iter int64, size int, write func(io.Writer) error) error {
		buf := bytes.NewBuffer(make([]byte, 0, size))
		write(buf)
		out = append(out, Chunk{Iter: iter, Data: buf.Bytes()})
		return nil
	})
	return out
}

// Finish checks that every byte the header announces has arrived, then
// the Body's own checks (Body.Finish); once it has succeeded the Core
// takes nothing more.
func (c *Core) Finish(b Body) error {
	if c.err != nil {
		return c.err
	}
	pkg, _ := b.Names()
	switch {
	case c.result:
		return fmt.Errorf("%s: Loader already returned its filter: %w", pkg, base.ErrParam)
	case c.sizes == nil:
		c.err = Bad(pkg, "no header")
	case c.done != c.total:
		c.err = Bad(pkg, "%d of %d bytes loaded", c.done, c.total)
	default:
		c.err = b.Finish()
	}
	if c.err != nil {
		return c.err
	}
	c.result = true
	return nil
}

// LoadAll loads a whole dump (SCANDUMP's chunks, header first; the final
// (0, empty) reply may be included) and finishes it. It checks that the
// chunks hold exactly the bytes the header announces before it allocates
// the segments, each then allocated whole.
func (c *Core) LoadAll(b Body, chunks []Chunk) error {
	pkg, _ := b.Names()
	if len(chunks) == 0 {
		return Bad(pkg, "no chunks")
	}
	if err := c.LoadChunk(b, chunks[0].Iter, chunks[0].Data); err != nil {
		return err
	}
	var have uint64
	for _, ch := range chunks[1:] {
		have += uint64(len(ch.Data))
	}
	if have != c.total {
		return Bad(pkg, "the chunks hold %d bytes, the header announces %d", have, c.total)
	}
	c.exact = true
	for _, ch := range chunks[1:] {
		if err := c.LoadChunk(b, ch.Iter, ch.Data); err != nil {
			return err
		}
	}
	return c.Finish(b)
}
