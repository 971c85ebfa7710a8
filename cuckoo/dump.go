package cuckoo

import (
	"encoding/binary"
	"fmt"
	"github.com/bloomlab/bloomlab/internal/kind"
	"io"

	"github.com/bloomlab/bloomlab/internal/blrd"
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
	// defaultChunkSize is RedisBloom's largest SCANDUMP piece (16 MiB).
	defaultChunkSize = blrd.DefaultChunkSize
)

// Chunk is one CF.SCANDUMP reply: the iterator returned with the data,
// which is the iterator CF.LOADCHUNK takes with them.
type Chunk = blrd.Chunk

func badDump(msg string, args ...any) error { return blrd.Bad("cuckoo", msg, args...) }

func (f *Filter) checkRedis() error {
	if len(f.subs) == 0 {
		return errZero
	}
	if f.profile != RedisBloom {
		return kind.Paramf("cuckoo", "a %v-profile filter has no RedisBloom dump: build it with the RedisBloom profile ({profile} redisbloom)", f.profile)
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
// RedisBloom's 16 MiB), the chunk appended to dst (which may
// be nil; a server passes a buffer it reuses): iterator 0 gives (1, the
// header); an iterator it ≥ 1 gives (it + len(chunk), chunk), chunk a
// copy of the sub-filter bytes RedisBloom's CF_GetEncodedChunk returns for
// it (for an iterator inside a sub-filter of at most maxChunk bytes, the
// whole sub-filter, as RedisBloom does); past the end, and on a filter
// holding no keys, next is 0 and nothing is appended: RedisBloom's nil
// reply. A negative iterator is an error wrapping ErrParam (RedisBloom:
// "Invalid position"). Only RedisBloom-profile filters have this format.
func (f *Filter) ScanDump(dst []byte, iter int64, maxChunk int) (next int64, chunk []byte, err error) {
	if err := f.checkRedis(); err != nil {
		return 0, dst, err
	}
	if iter < 0 {
		return 0, dst, fmt.Errorf("cuckoo: SCANDUMP iterator %d is negative: %w", iter, ErrParam)
	}
	if f.n == 0 {
		return 0, dst, nil
	}
	if iter == 0 {
		return 1, f.appendHeader(dst), nil
	}
	next, d := f.chunkAt(iter, maxChunk)
	if d == nil {
		return 0, dst, nil
	}
	return next, append(dst, d...), nil
}

// chunkAt is CF_GetEncodedChunk: the bytes for iterator iter ≥ 1, not
// copied, and the next iterator; nil past the end.
func (f *Filter) chunkAt(iter int64, maxChunk int) (int64, []byte) {
	if maxChunk <= 0 {
		maxChunk = defaultChunkSize
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
// chunks of at most chunkSize bytes (0: RedisBloom's 16 MiB), copied.
// Feeding each (Iter, Data) to CF.LOADCHUNK, or to a Loader, recreates the
// filter. The terminating (0, nil) reply is not included. Unlike
// CF.SCANDUMP, which returns nothing for a filter holding no keys, Dump
// returns the header and bytes of an empty filter too.
func (f *Filter) Dump(chunkSize int) ([]Chunk, error) {
	if err := f.checkRedis(); err != nil {
		return nil, err
	}
	return blrd.Dump(f.appendHeader(nil), func(it int64) (int64, []byte) {
		next, data := f.chunkAt(it, chunkSize)
		return next, append([]byte(nil), data...)
	}), nil
}

// parseHeader validates a SCANDUMP header and returns the filter it
// describes, its sub-filters without bytes.
// Nothing is allocated before the header is known to be valid except the
// sub-filter descriptions (at most maxSubFilters).
func parseHeader(h []byte) (*Filter, error) {
	if len(h) != headerSize {
		return nil, badDump("header of %d bytes, want %d", len(h), headerSize)
	}
	items := binary.LittleEndian.Uint64(h)
	nb := binary.LittleEndian.Uint64(h[8:])
	deletes := binary.LittleEndian.Uint64(h[16:])
	nf := binary.LittleEndian.Uint64(h[24:])
	bs := uint64(binary.LittleEndian.Uint16(h[32:]))
	mi := int(binary.LittleEndian.Uint16(h[34:]))
	exp := uint64(binary.LittleEndian.Uint16(h[36:]))
	switch {
	case bs < 1 || bs > redisMaxBucketSize:
		return nil, badDump("bucket size %d, want 1 … 255", bs)
	case nb == 0 || nb&(nb-1) != 0 || nb > maxTableBits/8/bs:
		return nil, badDump("%d buckets, want a power of two with at most 2^48 bits of buckets", nb)
	case nf < 1 || nf > maxSubFilters:
		return nil, badDump("%d sub-filters, want 1 … %d", nf, maxSubFilters)
	case mi < 1:
		return nil, badDump("max iterations 0")
	case exp > maxExpansion || exp&(exp-1) != 0:
		return nil, badDump("expansion %d, want 0 or a power of two up to %d (other values make sub-filters whose buckets are not powers of two, and lose keys)", exp, maxExpansion)
	case exp == 0 && nf > 1:
		return nil, badDump("expansion 0 with %d sub-filters", nf)
	}
	f := &Filter{profile: RedisBloom, maxKicks: mi, expansion: exp, m0: nb, n: items, deletes: deletes,
		lay: layout{mode: modeRedis, b: int(bs), f: 8, bucketBits: 8 * bs, fpMask: 255}}
	f.subs = make([]sub, nf)
	var total uint64
	m := nb
	for i := range f.subs {
		if i > 0 {
			if m > maxTableBits/8/bs/exp {
				return nil, badDump("sub-filter %d would have more than 2^48 bits", i)
			}
			m *= exp
		}
		f.subs[i].m = m
		total += m * bs
		if total > 1<<62 {
			return nil, badDump("the sub-filters hold more than 2^62 bytes")
		}
	}
	if items > total {
		return nil, badDump("%d items in %d slots", items, total)
	}
	return f, nil
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
// ready:
//
//	var ld cuckoo.Loader
//	for _, c := range chunks { // Dump's, or CF.SCANDUMP's replies
//		if err := ld.LoadChunk(c.Iter, c.Data); err != nil {
//			return err
//		}
//	}
//	f, err := ld.Filter()
//
// Its methods (LoadChunk, ReadChunk, Check, Progress, …) are those of
// the Session it embeds, internal/blrd's Loader.
type Loader struct {
	blrd.Session[loadBody, *loadBody]
}

var _ blrd.Loader = (*Loader)(nil)

// Filter returns the loaded filter once every byte the header announces
// has arrived, after checking that the header's item count is the number
// of occupied slots.
func (ld *Loader) Filter() (*Filter, error) {
	b, err := blrd.Finish(&ld.Session)
	if err != nil {
		return nil, err
	}
	return b.f, nil
}

// loadChunks recreates a filter from the chunks of Dump or CF.SCANDUMP
// (see Loader; the final (0, nil) reply may be included). It checks that
// the chunks hold exactly the bytes the header announces before it
// allocates the sub-filters.
func loadChunks(chunks []Chunk) (*Filter, error) {
	var ld Loader
	b, err := blrd.LoadAll(&ld.Session, chunks)
	if err != nil {
		return nil, err
	}
	return b.f, nil
}

// loadBody is a Loader's side of blrd.Core: the segments are the
// sub-filters, each a byte per slot.
type loadBody struct{ f *Filter }

func (b *loadBody) Names() (string, string) { return "cuckoo", "sub-filter" }

func (b *loadBody) Header(hdr []byte) ([]uint64, error) {
	f, err := parseHeader(hdr)
	if err != nil {
		return nil, err
	}
	b.f = f
	sizes := make([]uint64, len(f.subs))
	for i := range f.subs {
		sizes[i] = f.subs[i].m * uint64(f.lay.b)
	}
	return sizes, nil
}

func (b *loadBody) Grow(seg int, room uint64) {
	s := &b.f.subs[seg]
	if uint64(cap(s.bytes)) < room {
		nb := make([]byte, len(s.bytes), room)
		copy(nb, s.bytes)
		s.bytes = nb
	}
}

func (b *loadBody) Append(seg int, _ uint64, data []byte) {
	b.f.subs[seg].bytes = append(b.f.subs[seg].bytes, data...)
}

func (b *loadBody) WriteSegment(w io.Writer, seg int, n uint64) error {
	_, err := w.Write(b.f.subs[seg].bytes[:n])
	return err
}

// Finish checks that the header's item count is the number of occupied
// slots.
func (b *loadBody) Finish() error {
	var held uint64
	for i := range b.f.subs {
		held += nonzeroBytes(b.f.subs[i].bytes)
	}
	if held != b.f.n {
		return badDump("the header says %d items, the buckets hold %d", b.f.n, held)
	}
	return nil
}
