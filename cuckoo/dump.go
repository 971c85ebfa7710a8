package cuckoo

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/bloomlab/bloomlab/internal/format"
	"github.com/bloomlab/bloomlab/internal/sysmem"
)

// RedisBloom's CF.SCANDUMP format (src/cf.c, src/rebloom.c, module 2.4).
// CF.SCANDUMP key 0 returns iterator 1 and the header; CF.SCANDUMP key it
// (it ≥ 1) returns a piece of the sub-filters' bytes with the iterator
// it + its length; past the end it returns 0 and a nil bulk string, and so
// does every call on a filter holding no keys. CF.LOADCHUNK key it data
// takes each pair back: it = 1 with the header creates the filter, and
// otherwise the data go to byte offset it − len(data) − 1.
//
// The header is a packed little-endian struct of 38 bytes:
//
//	offset size field
//	0      8    numItems: N
//	8      8    numBuckets: the first sub-filter's buckets (a power of two)
//	16     8    numDeletes
//	24     8    numFilters: L
//	32     2    bucketSize: b
//	34     2    maxIterations
//	36     2    expansion (a power of two, or 0)
//
// Then the sub-filters' bytes, oldest first: sub-filter s holds
// numBuckets·expansion^s buckets of b bytes, bucket i at bytes i·b …
// i·b + b − 1, one fingerprint (or 0) per byte. A piece is the whole
// sub-filter when it holds at most the chunk limit (16 MiB), and
// otherwise at most that many bytes from the iterator's offset on, never
// crossing into the next sub-filter.

const (
	headerSize = 38
	// DefaultChunkSize is RedisBloom's largest SCANDUMP piece (16 MiB).
	DefaultChunkSize = 16 << 20
)

// Chunk is one CF.SCANDUMP reply: the iterator returned with the data,
// which is the iterator CF.LOADCHUNK takes with them.
type Chunk struct {
	Iter int64
	Data []byte
}

func badDump(msg string, args ...any) error {
	return fmt.Errorf("cuckoo: RedisBloom dump: "+msg+": %w", append(args, format.ErrFormat)...)
}

func (f *Filter) checkRedis() error {
	if len(f.subs) == 0 {
		return errZero
	}
	if f.profile != RedisBloom {
		return fmt.Errorf("cuckoo: a %v-profile filter has no RedisBloom dump: build it with the RedisBloom profile (-profile redisbloom): %w", f.profile, ErrParam)
	}
	return nil
}

// appendHeader appends the 38-byte SCANDUMP header.
func (f *Filter) appendHeader(b []byte) []byte {
	b = binary.LittleEndian.AppendUint64(b, f.n)
	b = binary.LittleEndian.AppendUint64(b, f.m0)
	b = binary.LittleEndian.AppendUint64(b, f.deletes)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(f.subs)))
	b = binary.LittleEndian.AppendUint16(b, uint16(f.lay.b))
	b = binary.LittleEndian.AppendUint16(b, uint16(f.maxKicks))
	return binary.LittleEndian.AppendUint16(b, uint16(f.expansion))
}

// ScanDump is CF.SCANDUMP on f with chunks of at most maxChunk bytes (0:
// DefaultChunkSize, as RedisBloom): iterator 0 gives (1, the header);
// an iterator it ≥ 1 gives (it + len(data), data), data a copy of the
// sub-filter bytes RedisBloom's CF_GetEncodedChunk returns for it (for an
// iterator inside a sub-filter of at most maxChunk bytes, the whole
// sub-filter, as RedisBloom does); past the end, and on a filter holding
// no keys, (0, nil): RedisBloom's nil reply. A negative iterator is an
// error wrapping ErrParam (RedisBloom: "Invalid position"). Only
// RedisBloom-profile filters have this format.
func (f *Filter) ScanDump(iter int64, maxChunk int) (next int64, data []byte, err error) {
	if err := f.checkRedis(); err != nil {
		return 0, nil, err
	}
	if iter < 0 {
		return 0, nil, fmt.Errorf("cuckoo: SCANDUMP iterator %d is negative: %w", iter, ErrParam)
	}
	if f.n == 0 {
		return 0, nil, nil
	}
	if iter == 0 {
		return 1, f.appendHeader(make([]byte, 0, headerSize)), nil
	}
	next, d := f.chunkAt(iter, maxChunk)
	if d == nil {
		return 0, nil, nil
	}
	return next, append([]byte(nil), d...), nil
}

// chunkAt is CF_GetEncodedChunk: the bytes for iterator iter ≥ 1, not
// copied, and the next iterator; nil past the end.
func (f *Filter) chunkAt(iter int64, maxChunk int) (int64, []byte) {
	if maxChunk <= 0 {
		maxChunk = DefaultChunkSize
	}
	offset := uint64(iter - 1)
	for i := range f.subs {
		b := f.subs[i].bytes
		size := uint64(len(b))
		if offset >= size {
			offset -= size
			continue
		}
		if size <= uint64(maxChunk) {
			return iter + int64(size), b
		}
		n := min(size-offset, uint64(maxChunk))
		return iter + int64(n), b[offset : offset+n]
	}
	return 0, nil
}

// Dump returns the chunks CF.SCANDUMP gives for f, header first, with
// chunks of at most chunkSize bytes (0: DefaultChunkSize), copied. Feeding
// each (Iter, Data) to CF.LOADCHUNK, or to LoadChunks, recreates the
// filter. The terminating (0, nil) reply is not included. Unlike
// CF.SCANDUMP, which returns nothing for a filter holding no keys, Dump
// returns the header and bytes of an empty filter too.
func (f *Filter) Dump(chunkSize int) ([]Chunk, error) {
	if err := f.checkRedis(); err != nil {
		return nil, err
	}
	chunks := []Chunk{{Iter: 1, Data: f.appendHeader(nil)}}
	for it := int64(1); ; {
		next, data := f.chunkAt(it, chunkSize)
		if data == nil {
			return chunks, nil
		}
		chunks = append(chunks, Chunk{Iter: next, Data: append([]byte(nil), data...)})
		it = next
	}
}

// parseHeader validates a SCANDUMP header and returns the filter it
// describes, its sub-filters without bytes, and the bytes to follow.
// Nothing is allocated before the header is known to be valid except the
// sub-filter descriptions (at most MaxSubFilters).
func parseHeader(h []byte) (*Filter, uint64, error) {
	if len(h) != headerSize {
		return nil, 0, badDump("header of %d bytes, want %d", len(h), headerSize)
	}
	items := binary.LittleEndian.Uint64(h)
	nb := binary.LittleEndian.Uint64(h[8:])
	deletes := binary.LittleEndian.Uint64(h[16:])
	nf := binary.LittleEndian.Uint64(h[24:])
	bs := uint64(binary.LittleEndian.Uint16(h[32:]))
	mi := int(binary.LittleEndian.Uint16(h[34:]))
	exp := uint64(binary.LittleEndian.Uint16(h[36:]))
	switch {
	case bs < 1 || bs > RedisMaxBucketSize:
		return nil, 0, badDump("bucket size %d, want 1 … 255", bs)
	case nb == 0 || nb&(nb-1) != 0 || nb > MaxBits/8/bs:
		return nil, 0, badDump("%d buckets, want a power of two with at most 2^48 bits of buckets", nb)
	case nf < 1 || nf > MaxSubFilters:
		return nil, 0, badDump("%d sub-filters, want 1 … %d", nf, MaxSubFilters)
	case mi < 1:
		return nil, 0, badDump("max iterations 0")
	case exp > MaxExpansion || exp&(exp-1) != 0:
		return nil, 0, badDump("expansion %d, want 0 or a power of two up to %d (other values make sub-filters whose buckets are not powers of two, and lose keys)", exp, MaxExpansion)
	case exp == 0 && nf > 1:
		return nil, 0, badDump("expansion 0 with %d sub-filters", nf)
	}
	f := &Filter{profile: RedisBloom, maxKicks: mi, expansion: exp, m0: nb, n: items, deletes: deletes,
		lay: layout{mode: modeRedis, b: int(bs), f: 8, bucketBits: 8 * bs, fpMask: 255}}
	f.subs = make([]sub, nf)
	var total uint64
	m := nb
	for i := range f.subs {
		if i > 0 {
			if m > MaxBits/8/bs/exp {
				return nil, 0, badDump("sub-filter %d would have more than 2^48 bits", i)
			}
			m *= exp
		}
		f.subs[i].m = m
		total += m * bs
		if total > 1<<62 {
			return nil, 0, badDump("the sub-filters hold more than 2^62 bytes")
		}
	}
	if items > total {
		return nil, 0, badDump("%d items in %d slots", items, total)
	}
	return f, total, nil
}

// Loader rebuilds a RedisBloom-profile filter from CF.SCANDUMP chunks fed
// in the order SCANDUMP produced them, as CF.LOADCHUNK takes them: first
// (1, header), then every data chunk (iterator, bytes). Unlike
// CF.LOADCHUNK it insists that the chunks follow each other without gap
// or overlap, that none crosses a sub-filter, and that every byte arrives
// (a missing chunk would leave empty slots, that is, false negatives);
// and Filter checks that the header's item count is the number of
// occupied slots. The final (0, nil) reply may be fed too and is ignored.
// The header is validated before anything is allocated, and a
// sub-filter's bytes are allocated only as they arrive. The zero Loader is
// ready.
type Loader struct {
	f      *Filter
	hdr    []byte
	total  uint64 // bytes the header announces
	done   uint64 // bytes received
	si     int    // sub-filter being filled
	exact  bool   // allocate each sub-filter whole on its first chunk
	whole  int8   // AllocateWhole: 1 asked, 2 asked and the total fits, -1 asked but it does not
	ended  bool
	err    error // sticky
	result bool  // Filter was called
}

// LoadChunk takes one chunk. After an error the Loader is spent and
// returns it again.
func (ld *Loader) LoadChunk(iter int64, data []byte) error {
	if ld.err == nil {
		ld.err = ld.load(iter, data)
	}
	return ld.err
}

// Check reports, without taking it, whether a data chunk of n bytes with
// iterator iter is the next one and lies within one sub-filter; the
// error wraps format.ErrFormat.
func (ld *Loader) Check(iter int64, n int) error {
	switch {
	case ld.err != nil:
		return ld.err
	case ld.f == nil:
		return badDump("no header yet")
	case n <= 0 || iter < 1 || uint64(iter)-1 < uint64(n):
		return badDump("iterator %d with %d bytes", iter, n)
	}
	start := uint64(iter) - 1 - uint64(n)
	if start != ld.done {
		return badDump("chunk for bytes %d … %d, expected byte %d next (chunks must come in SCANDUMP order)", start, start+uint64(n), ld.done)
	}
	if ld.si >= len(ld.f.subs) {
		return badDump("%d bytes beyond the %d the header announces", n, ld.total)
	}
	s := &ld.f.subs[ld.si]
	if left := s.m*uint64(ld.f.lay.b) - uint64(len(s.bytes)); uint64(n) > left {
		// CF.LOADCHUNK: "Couldn't load chunk!".
		return badDump("chunk of %d bytes crosses the end of sub-filter %d (%d bytes left in it)", n, ld.si, left)
	}
	return nil
}

func (ld *Loader) load(iter int64, data []byte) error {
	switch {
	case ld.result:
		return fmt.Errorf("cuckoo: Loader already returned its filter: %w", ErrParam)
	case ld.f == nil:
		if iter != 1 {
			return badDump("the first chunk must be the header, with iterator 1 (got %d)", iter)
		}
		f, total, err := parseHeader(data)
		if err != nil {
			return err
		}
		ld.f, ld.total, ld.hdr = f, total, append([]byte(nil), data...)
		return nil
	case iter == 0 && len(data) == 0:
		ld.ended = true
		return nil
	case ld.ended:
		return badDump("chunk after the end of the dump")
	}
	if err := ld.Check(iter, len(data)); err != nil {
		return err
	}
	s := &ld.f.subs[ld.si]
	size := s.m * uint64(ld.f.lay.b)
	switch {
	case ld.allocWhole() && uint64(cap(s.bytes)) < size:
		b := make([]byte, len(s.bytes), size)
		copy(b, s.bytes)
		s.bytes = b
	case s.bytes == nil:
		// At least this chunk (its bytes have arrived), at least 1 MiB;
		// append grows it as more arrive.
		s.bytes = make([]byte, 0, min(size, max(1<<20, uint64(len(data)))))
	}
	s.bytes = append(s.bytes, data...)
	ld.done += uint64(len(data))
	if uint64(len(s.bytes)) == size {
		ld.si++
	}
	return nil
}

// memLimit is sysmem.Limit, replaceable by tests.
var memLimit = sysmem.Limit

// AllocateWhole makes the Loader allocate each sub-filter at its full
// size when its first bytes arrive (one begun smaller grows to its full
// size in one step) instead of growing it as its bytes arrive, which
// allocates about five times the sub-filter in all and holds up to 2.25
// times it at the last growth. It is for a caller that has accounted for
// the total Progress reports (a server that reserved it against its
// memory limit when the header came). It may be called before or after
// the header. A header whose total exceeds the memory this process may
// use (internal/sysmem.Limit) is still loaded as its bytes arrive: a
// header alone never makes the Loader allocate beyond the machine.
func (ld *Loader) AllocateWhole() {
	if ld.whole == 0 {
		ld.whole = 1
	}
}

// allocWhole reports whether a sub-filter is allocated whole
// (LoadChunks, or AllocateWhole with a total that fits the memory this
// process may use).
func (ld *Loader) allocWhole() bool {
	if ld.whole == 1 {
		ld.whole = -1
		if limit := memLimit(); limit == 0 || ld.total <= limit {
			ld.whole = 2
		}
	}
	return ld.exact || ld.whole == 2
}

// ReadChunk is LoadChunk for a data chunk of n bytes read from r: the
// bytes are read straight into the sub-filter, so that a caller reading
// chunks from a file does not hold each twice. The chunk is checked (Check)
// before anything is allocated or read; the sub-filter's room for it is
// allocated once (the whole sub-filter after AllocateWhole). Fewer than n
// bytes in r is an error wrapping io.ErrUnexpectedEOF. The header comes
// through LoadChunk. After an error the Loader is spent.
func (ld *Loader) ReadChunk(iter int64, n int, r io.Reader) error {
	if ld.err == nil {
		ld.err = ld.readChunk(iter, n, r)
	}
	return ld.err
}

func (ld *Loader) readChunk(iter int64, n int, r io.Reader) error {
	switch {
	case ld.result:
		return fmt.Errorf("cuckoo: Loader already returned its filter: %w", ErrParam)
	case ld.f == nil:
		return badDump("the first chunk must be the header (LoadChunk)")
	case ld.ended:
		return badDump("chunk after the end of the dump")
	}
	if err := ld.Check(iter, n); err != nil {
		return err
	}
	s := &ld.f.subs[ld.si]
	size := s.m * uint64(ld.f.lay.b)
	at := len(s.bytes)
	room := uint64(at + n)
	if ld.allocWhole() {
		room = size
	}
	if uint64(cap(s.bytes)) < room {
		b := make([]byte, at, room)
		copy(b, s.bytes)
		s.bytes = b
	}
	if _, err := io.ReadFull(r, s.bytes[at:at+n]); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("cuckoo: reading a chunk: %w", err)
	}
	s.bytes = s.bytes[:at+n]
	ld.done += uint64(n)
	if uint64(len(s.bytes)) == size {
		ld.si++
	}
	return nil
}

// WalkReceived calls fn for each chunk that Received returns, in order,
// without copying them: fn gets the chunk's iterator and size and a write
// function that writes the chunk's bytes (from the sub-filter itself) to
// a writer. fn may call write once, or not at all (to count the chunks).
// It calls fn for nothing before a valid header, after an error, and once
// Filter has returned; it stops at fn's first error and returns it. The
// Loader must not take chunks meanwhile.
func (ld *Loader) WalkReceived(fn func(iter int64, size int, write func(io.Writer) error) error) error {
	if ld.f == nil || ld.err != nil || ld.result {
		return nil
	}
	var off int64
	for i := -1; i < len(ld.f.subs); i++ {
		b, iter := ld.hdr, int64(1)
		if i >= 0 {
			if b = ld.f.subs[i].bytes; len(b) == 0 {
				break
			}
			off += int64(len(b))
			iter = off + 1
		}
		if err := fn(iter, len(b), func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
			return err
		}
	}
	return nil
}

// Progress returns the bytes received so far and the total the header
// announces (0, 0 before a valid header). The total is known, and
// bounded, before any sub-filter is allocated.
func (ld *Loader) Progress() (received, total uint64) { return ld.done, ld.total }

// Received returns the chunks that bring a new Loader to this one's state:
// the header, then the bytes received so far, one chunk per sub-filter
// (copies). It returns nil before a valid header, after an error, and
// once Filter has returned.
func (ld *Loader) Received() []Chunk {
	var out []Chunk
	ld.WalkReceived(func(iter int64, size int, write func(io.Writer) error) error {
		b := bytes.NewBuffer(make([]byte, 0, size))
		write(b)
		out = append(out, Chunk{Iter: iter, Data: b.Bytes()})
		return nil
	})
	return out
}

// Filter returns the loaded filter once every byte the header announces
// has arrived, after checking that the header's item count is the number
// of occupied slots.
func (ld *Loader) Filter() (*Filter, error) {
	if ld.err != nil {
		return nil, ld.err
	}
	switch {
	case ld.result:
		return nil, fmt.Errorf("cuckoo: Loader already returned its filter: %w", ErrParam)
	case ld.f == nil:
		ld.err = badDump("no header")
	case ld.done != ld.total:
		ld.err = badDump("%d of %d bytes loaded", ld.done, ld.total)
	}
	if ld.err != nil {
		return nil, ld.err
	}
	var held uint64
	for i := range ld.f.subs {
		for _, x := range ld.f.subs[i].bytes {
			if x != 0 {
				held++
			}
		}
	}
	if held != ld.f.n {
		ld.err = badDump("the header says %d items, the buckets hold %d", ld.f.n, held)
		return nil, ld.err
	}
	ld.result = true
	return ld.f, nil
}

// LoadChunks recreates a filter from the chunks of Dump or CF.SCANDUMP
// (see Loader; the final (0, nil) reply may be included). It checks that
// the chunks hold exactly the bytes the header announces before it
// allocates the sub-filters.
func LoadChunks(chunks []Chunk) (*Filter, error) {
	if len(chunks) == 0 {
		return nil, badDump("no chunks")
	}
	var ld Loader
	if err := ld.LoadChunk(chunks[0].Iter, chunks[0].Data); err != nil {
		return nil, err
	}
	var have uint64
	for _, c := range chunks[1:] {
		have += uint64(len(c.Data))
	}
	if have != ld.total {
		return nil, badDump("the chunks hold %d bytes, the header announces %d", have, ld.total)
	}
	ld.exact = true
	for _, c := range chunks[1:] {
		if err := ld.LoadChunk(c.Iter, c.Data); err != nil {
			return nil, err
		}
	}
	return ld.Filter()
}
