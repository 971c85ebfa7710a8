package scalable

import (
	"encoding/binary"
	"fmt"
	"github.com/bloomlab/bloomlab/internal/format"
	"github.com/bloomlab/bloomlab/internal/kind"
	"io"
	"math"
	"slices"

	"github.com/bloomlab/bloomlab/internal/blrd"
	"github.com/bloomlab/bloomlab/internal/hugepage"
)

// RedisBloom's BF.SCANDUMP format (src/sb.c, module 2.x). SCANDUMP key 0
// returns iterator 1 and the header; SCANDUMP key it (it ≥ 1) returns the
// bytes of the chain from byte offset it − 1, at most a chunk's worth and
// never past the end of a link, with the iterator it + length; past the
// last byte it returns 0 and an empty string. BF.LOADCHUNK key it data
// takes each pair back: it = 1 with the header creates the chain, and
// otherwise the data go to byte offset it − len(data) − 1.
//
// The header is packed, little-endian (20 + 53·L bytes):
//
//	offset size field
//	0      8    size: keys in the chain (N)
//	8      4    nfilters: L, the links
//	12     4    options (NOROUND 1 | FORCE64 4 | NO_SCALING 8)
//	16     4    growth: the expansion
//	20     53·L one record per link, oldest first:
//	            0  8  bytes of the link's bits (a multiple of 8)
//	            8  8  bits = 8·bytes
//	            16 8  size: keys in the link
//	            24 8  error: the link's rate (float64)
//	            32 8  bpe: bits per entry, −ln(error)/ln²2 (float64)
//	            40 4  hashes: k = ⌈0.693147180559945·bpe⌉
//	            44 8  entries: the link's capacity
//	            52 1  n2: 0, or the exponent of a power-of-two link
//
// Then the links' bytes, oldest link first, bit j of a link in byte j/8 at
// bit j mod 8.

const (
	headerFixed = 20
	headerLink  = 53
	// defaultChunkSize is RedisBloom's largest SCANDUMP chunk (16 MiB).
	defaultChunkSize = blrd.DefaultChunkSize
)

// Chunk is one BF.SCANDUMP reply: the iterator returned with the data,
// which is the iterator BF.LOADCHUNK takes with them.
type Chunk = blrd.Chunk

func (f *Filter) checkRedis() ([]*link, error) {
	ls := f.snapshot()
	if len(ls) == 0 {
		return nil, errZero
	}
	if f.profile != RedisBloom {
		return nil, kind.Paramf("scalable", "a %v-profile chain has no RedisBloom dump: build it with the RedisBloom profile (Config.Profile, or {profile} redisbloom)", f.profile)
	}
	return ls, nil
}

// dumpable returns the links of a chain that has a BF.SCANDUMP: every
// profile's (RedisBloom's own dump, or bloomlab's for the others).
func (f *Filter) dumpable() ([]*link, error) {
	ls := f.snapshot()
	if len(ls) == 0 {
		return nil, errZero
	}
	return ls, nil
}

// scanHeader returns the header chunk of the chain's dump: RedisBloom's
// for the RedisBloom profile, bloomlab's (bldump.go) for the others.
func (f *Filter) scanHeader(ls []*link) []byte {
	if f.profile == RedisBloom {
		return f.appendHeader(make([]byte, 0, headerFixed+headerLink*len(ls)), ls)
	}
	return f.appendDumpHeader(make([]byte, 0, dumpHeaderLen(uint64(len(ls)))), ls)
}

// appendHeader appends the SCANDUMP header of the chain (its mutex held).
func (f *Filter) appendHeader(b []byte, ls []*link) []byte {
	b = binary.LittleEndian.AppendUint64(b, f.card.Load())
	b = binary.LittleEndian.AppendUint32(b, uint32(len(ls)))
	b = binary.LittleEndian.AppendUint32(b, f.options)
	b = binary.LittleEndian.AppendUint32(b, f.growth)
	for _, l := range ls {
		b = binary.LittleEndian.AppendUint64(b, l.bits/8)
		b = binary.LittleEndian.AppendUint64(b, l.bits)
		b = binary.LittleEndian.AppendUint64(b, l.size)
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(l.errRate))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(l.bpe))
		b = binary.LittleEndian.AppendUint32(b, uint32(l.k))
		b = binary.LittleEndian.AppendUint64(b, l.entries)
		b = append(b, l.n2)
	}
	return b
}

// appendLinkBytes appends bytes off … off+n−1 of words, little-endian:
// whole words a store each, into room grown once.
func appendLinkBytes(b []byte, words []uint64, off, n uint64) []byte {
	b = slices.Grow(b, int(n))
	for n > 0 && off%8 != 0 {
		b = append(b, byte(words[off/8]>>(8*(off%8))))
		off, n = off+1, n-1
	}
	if nw := n / 8; nw > 0 {
		at := len(b)
		b = b[:at+int(8*nw)]
		format.PutBytes(b[at:], words[off/8:off/8+nw])
		off, n = off+8*nw, n-8*nw
	}
	for ; n > 0; off, n = off+1, n-1 {
		b = append(b, byte(words[off/8]>>(8*(off%8))))
	}
	return b
}

// ScanDump is BF.SCANDUMP on f, its chunk appended to dst (which may be
// nil; a server passes a buffer it reuses): iterator 0 gives (1, the
// header); an iterator it ≥ 1 gives (it + len(chunk), chunk), chunk the
// chain's bytes from offset it − 1, at most maxChunk of them (0:
// RedisBloom's largest, 16 MiB) and not past the end of a link; past the
// end (or for it < 0) it gives (0, nothing appended). Each call sees the
// state between two adds; a dump taken over several calls is consistent
// only if nothing is added meanwhile (Dump takes it in one). The chunk is
// a copy: it shares no memory with f. A RedisBloom-profile chain gives
// RedisBloom's header; the other profiles give bloomlab's (bldump.go),
// which RedisBloom's BF.LOADCHUNK refuses and Loader takes, with the same
// data chunks.
func (f *Filter) ScanDump(dst []byte, iter int64, maxChunk int) (next int64, chunk []byte, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ls, err := f.dumpable()
	if err != nil {
		return 0, dst, err
	}
	if iter == 0 {
		return 1, append(dst, f.scanHeader(ls)...), nil
	}
	n, d := scanLinks(dst, ls, iter, maxChunk)
	return n, d, nil
}

// scanLinks appends the chunk for iter ≥ 1 to dst (nothing past the end).
func scanLinks(dst []byte, ls []*link, iter int64, maxChunk int) (int64, []byte) {
	if maxChunk <= 0 {
		maxChunk = defaultChunkSize
	}
	if dst == nil {
		dst = []byte{}
	}
	if iter < 1 {
		return 0, dst
	}
	pos := uint64(iter - 1)
	for _, l := range ls {
		lb := l.bits / 8
		if pos < lb {
			n := min(lb-pos, uint64(maxChunk))
			return iter + int64(n), appendLinkBytes(dst, l.words, pos, n)
		}
		pos -= lb
	}
	return 0, dst
}

// Dump returns the chunks BF.SCANDUMP gives for f, header first, with
// chunks of at most chunkSize bytes (0: 16 MiB, as RedisBloom),
// taken in one consistent state. Feeding each (Iter, Data) to
// BF.LOADCHUNK, or to LoadChunks, recreates the filter (a chain of the
// bloomlab or blocked profile: bloomlab's BF.LOADCHUNK, not RedisBloom's;
// ScanDump). The terminating (0, "") reply is not included.
func (f *Filter) Dump(chunkSize int) ([]Chunk, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ls, err := f.dumpable()
	if err != nil {
		return nil, err
	}
	return blrd.Dump(f.scanHeader(ls), func(it int64) (int64, []byte) { return scanLinks(nil, ls, it, chunkSize) }), nil
}

func badDump(msg string, args ...any) error { return blrd.Bad("scalable", msg, args...) }

// parseHeader validates a SCANDUMP header and returns the chain it
// describes, its links without bits, and the number of bytes of bits to
// follow. Nothing is allocated before the header is known to be valid
// except the link descriptions (53 header bytes each).
func parseHeader(b []byte) (*Filter, []*link, uint64, error) {
	if len(b) < headerFixed {
		return nil, nil, 0, badDump("header of %d bytes, want at least %d", len(b), headerFixed)
	}
	size := binary.LittleEndian.Uint64(b)
	nf := binary.LittleEndian.Uint32(b[8:])
	options := binary.LittleEndian.Uint32(b[12:])
	growth := binary.LittleEndian.Uint32(b[16:])
	if err := checkRedisChain(uint64(nf), uint64(options)); err != nil {
		return nil, nil, 0, badDump("%v", err)
	}
	if uint64(len(b)) != headerFixed+headerLink*uint64(nf) {
		return nil, nil, 0, badDump("header of %d bytes for %d links, want %d", len(b), nf, headerFixed+headerLink*uint64(nf))
	}
	ls := make([]*link, nf)
	var total, sum uint64
	for i := range ls {
		r := b[headerFixed+headerLink*i:]
		bytes := binary.LittleEndian.Uint64(r)
		bitsN := binary.LittleEndian.Uint64(r[8:])
		lsize := binary.LittleEndian.Uint64(r[16:])
		errRate := math.Float64frombits(binary.LittleEndian.Uint64(r[24:]))
		bpe := math.Float64frombits(binary.LittleEndian.Uint64(r[32:]))
		hashes := binary.LittleEndian.Uint32(r[40:])
		entries := binary.LittleEndian.Uint64(r[44:])
		n2 := r[52]
		if err := checkRedisLink(bytes, bitsN, errRate, bpe, hashes, entries, n2); err != nil {
			return nil, nil, 0, badDump("link %d: %v", i, err)
		}
		ls[i] = makeRedisLink(redisGeometry{bits: bitsN, entries: entries, bpe: bpe, k: int(hashes), n2: n2}, errRate, nil, lsize)
		total += bytes
		var over bool
		if sum, over = addOverflow(sum, lsize); over {
			return nil, nil, 0, badDump("link sizes overflow")
		}
	}
	if sum != size {
		return nil, nil, 0, badDump("the chain holds %d keys, its links %d", size, sum)
	}
	f := &Filter{profile: RedisBloom, growth: growth, ratio: redisTighten, options: options}
	f.card.Store(size)
	return f, ls, total, nil
}

// checkRedisChain checks a RedisBloom chain's link count and options (a
// SCANDUMP header's or an RDB value's).
func checkRedisChain(nf, options uint64) error {
	switch {
	case nf < 1 || nf > maxLinks:
		return fmt.Errorf("%d links, want 1 … %d", nf, maxLinks)
	case options&^uint64(optNoRound|optForce64|optNoScaling) != 0:
		return fmt.Errorf("options %#x: only NOROUND (1), FORCE64 (4) and NO_SCALING (8) are supported", options)
	case options&uint64(optForce64) == 0:
		return fmt.Errorf("options %#x lack FORCE64: 32-bit hashing (RedisBloom 1.0) is not supported", options)
	}
	return nil
}

func addOverflow(a, b uint64) (uint64, bool) {
	s := a + b
	return s, s < a
}

// checkRedisLink applies RedisBloom's own checks (bloom_validate_integrity)
// and the bounds this package needs: at most 2^48 bits, k consistent with
// bpe and bpe with the rate, at least one entry.
func checkRedisLink(bytes, bitsN uint64, errRate, bpe float64, hashes uint32, entries uint64, n2 uint8) error {
	switch {
	case bytes == 0 || bytes%8 != 0 || bytes > (1<<48)/8:
		return fmt.Errorf("%d bytes, want a positive multiple of 8 up to 2^45", bytes)
	case bitsN != 8*bytes:
		return fmt.Errorf("%d bits for %d bytes", bitsN, bytes)
	case n2 > 48 || n2 != 0 && bitsN < 1<<n2:
		return fmt.Errorf("n2 = %d for %d bits", n2, bitsN)
	case !(errRate > 0 && errRate < 1):
		return fmt.Errorf("error rate %v out of (0, 1)", errRate)
	case !(bpe > 0 && bpe <= maxRedisBPE):
		return fmt.Errorf("bits per entry %v out of (0, %d]", bpe, maxRedisBPE)
	case int64(hashes) != int64(redisHashes(bpe)):
		return fmt.Errorf("%d hashes, bpe %v gives %d", hashes, bpe, redisHashes(bpe))
	case math.Abs(bpe+lnFull(errRate)/redisLn2Sq) > 1e-9*bpe:
		return fmt.Errorf("bits per entry %v disagree with the rate %v", bpe, errRate)
	case entries < 1:
		return fmt.Errorf("capacity 0")
	}
	return nil
}

// Loader rebuilds a filter from BF.SCANDUMP chunks (RedisBloom's dump of a
// RedisBloom-profile chain, or bloomlab's of the other profiles, told
// apart by the header), fed
// in the order SCANDUMP produced them, as BF.LOADCHUNK takes them: first
// (1, header), then every data chunk (iterator, bytes). Unlike
// BF.LOADCHUNK it insists that the chunks follow each other without gap
// or overlap, that none crosses a link, and that every byte arrives (a
// missing chunk would leave zero bits, that is, false negatives); the
// final (0, "") reply may be fed too and is ignored. The header is
// validated before anything is allocated, and a link's bits are
// allocated only as its bytes arrive. The zero Loader is ready. It
// implements internal/blrd's Loader through the Session it embeds.
type Loader struct {
	blrd.Session[loadBody, *loadBody]
}

var _ blrd.Loader = (*Loader)(nil)

// Filter returns the loaded filter once every byte the header announces
// has arrived.
func (ld *Loader) Filter() (*Filter, error) {
	b, err := blrd.Finish(&ld.Session)
	if err != nil {
		return nil, err
	}
	return b.f, nil
}

// LoadChunks recreates a filter from the chunks of Dump or BF.SCANDUMP
// (see Loader; the final (0, "") reply may be included). It checks that
// the chunks hold exactly the bytes the header announces before it
// allocates the links.
func LoadChunks(chunks []Chunk) (*Filter, error) {
	var ld Loader
	b, err := blrd.LoadAll(&ld.Session, chunks)
	if err != nil {
		return nil, err
	}
	return b.f, nil
}

// loadBody is a Loader's side of blrd.Core: the segments are the links,
// whose bytes are kept as little-endian words.
type loadBody struct {
	redisOnly bool // refuse bloomlab's dump header (ReadRedisBloom)
	f         *Filter
	ls        []*link
	part      uint64 // the partial word of the link being filled
}

func (b *loadBody) Names() (string, string) { return "scalable", "link" }

func (b *loadBody) Header(hdr []byte) ([]uint64, error) {
	var f *Filter
	var ls []*link
	var err error
	switch {
	case isDumpHeader(hdr) && b.redisOnly:
		err = badDump("a bloomlab dump (header %q), not RedisBloom's", dumpMagic)
	case isDumpHeader(hdr):
		f, ls, err = parseDumpHeader(hdr)
	default:
		f, ls, _, err = parseHeader(hdr)
	}
	if err != nil {
		return nil, err
	}
	b.f, b.ls = f, ls
	sizes := make([]uint64, len(ls))
	for i, l := range ls {
		sizes[i] = l.bits / 8
	}
	return sizes, nil
}

// Grow makes room for room bytes: ⌈room/8⌉ words.
func (b *loadBody) Grow(seg int, room uint64) {
	lk := b.ls[seg]
	if nw := (room + 7) / 8; uint64(cap(lk.words)) < nw {
		w := hugepage.WordsCap(uint64(len(lk.words)), nw)
		copy(w, lk.words)
		lk.words = w
	}
}

// Append appends data to link seg's words, have bytes of which have
// arrived (the last have mod 8 of them in part).
func (b *loadBody) Append(seg int, have uint64, data []byte) {
	lk := b.ls[seg]
	for len(data) > 0 {
		if have%8 == 0 && len(data) >= 8 {
			n := len(data) / 8
			at := len(lk.words)
			lk.words = slices.Grow(lk.words, n)[:at+n] // Grow made the room: no copy
			format.PutWords(lk.words[at:], data)
			data = data[8*n:]
			have += 8 * uint64(n)
			continue
		}
		b.part |= uint64(data[0]) << (8 * (have % 8))
		data = data[1:]
		have++
		if have%8 == 0 {
			lk.words = append(lk.words, b.part)
			b.part = 0
		}
	}
}

// WriteSegment writes the first n bytes of link seg: its complete words,
// then the bytes of part (n mod 8 ≠ 0 only for the link being filled).
func (b *loadBody) WriteSegment(w io.Writer, seg int, n uint64) error {
	return writeLinkBytes(w, b.ls[seg].words, b.part, n)
}

// Finish checks that no link has bits set beyond its positions, and
// gives the chain its links.
func (b *loadBody) Finish() error {
	for i, l := range b.ls {
		if !l.tailClear() {
			return badDump("link %d: bits set beyond its %d positions", i, l.mod)
		}
	}
	ls := b.ls
	b.f.links.Store(&ls)
	return nil
}

// writeLinkBytes writes the first n bytes of a link being loaded: its
// complete words, then the bytes of part, its partial word.
func writeLinkBytes(w io.Writer, words []uint64, part, n uint64) error {
	const piece = 64 << 10
	buf := make([]byte, 0, min(n, piece))
	for pos := uint64(0); pos < n; {
		c := min(n-pos, piece)
		whole := min(c, n/8*8-pos) // bytes of complete words
		b := appendLinkBytes(buf[:0], words, pos, whole)
		for j := pos + whole; j < pos+c; j++ {
			b = append(b, byte(part>>(8*(j%8))))
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
		pos += c
	}
	return nil
}
