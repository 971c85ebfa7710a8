// Package format implements the container shared by every bloomlab file:
// a fixed header (magic, format version, kind, hash scheme, seed, lengths),
// kind-specific parameters, a payload of little-endian 64-bit words, and a
// CRC-32C trailer over everything before it. docs/FORMAT.md specifies it byte
// by byte.
//
// Decoders validate before they allocate: the header's own checksum is
// verified before any length in it is believed, lengths are bounded, and the
// payload is read in chunks so that a hostile length in a short stream can
// never make the reader allocate more than about twice what it has received.
package format

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"slices"

	"github.com/bloomlab/bloomlab/internal/hugepage"
	"github.com/bloomlab/bloomlab/internal/sysmem"
)

// Magic is the first four bytes of every bloomlab file.
const Magic = "BLMF"

// Version is the format version this package writes and reads.
const Version = 1

// HeaderSize is the size of the fixed header in bytes.
const HeaderSize = 32

// MaxParams bounds the kind-specific parameter block.
const MaxParams = 4096

// Kind identifies the structure a file holds. Values are permanent.
type Kind uint8

// Kinds. Values not listed are reserved.
const (
	KindBloom    Kind = 1  // bloom.Filter (standard and partitioned)
	KindCounting Kind = 2  // counting.Filter
	KindBlocked  Kind = 3  // blocked.Filter
	KindChoices  Kind = 4  // choices.Filter
	KindDleft    Kind = 5  // dleft.Filter
	KindDlcbf    Kind = 6  // dlcbf.Filter
	KindCountMin Kind = 7  // countmin.Sketch
	KindScalable Kind = 8  // scalable.Filter (growing chain; bloomlab or RedisBloom profile)
	KindCuckoo   Kind = 9  // cuckoo.Filter (bloomlab or RedisBloom profile)
	KindSBBF     Kind = 10 // sbbf.Filter (Parquet's split-block Bloom filter)
	KindFuse     Kind = 11 // fuse.Filter (binary fuse filter; static)
	KindRibbon   Kind = 12 // ribbon.Filter (standard Ribbon filter; static)
)

var kindNames = map[Kind]string{
	KindBloom: "bloom", KindCounting: "counting", KindBlocked: "blocked",
	KindChoices: "choices", KindDleft: "dleft", KindDlcbf: "dlcbf", KindCountMin: "countmin",
	KindScalable: "scalable", KindCuckoo: "cuckoo", KindSBBF: "sbbf",
	KindFuse: "fuse", KindRibbon: "ribbon",
}

func (k Kind) String() string {
	if n, ok := kindNames[k]; ok {
		return n
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Errors. Every decoding error wraps ErrFormat except ErrTooLarge (a
// well-formed file of a structure larger than the memory this process may
// use); ErrChecksum and ErrVersion
// are more specific.
var (
	// ErrTooLarge: a file (or dump) describes a structure larger than the
	// memory this process may use. It is not a malformed file.
	ErrTooLarge = errors.New("structure larger than the available memory")
	ErrFormat   = errors.New("invalid bloomlab file")
	ErrChecksum = fmt.Errorf("checksum mismatch: %w", ErrFormat)
	ErrVersion  = fmt.Errorf("unsupported format version: %w", ErrFormat)
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Header is the fixed part of a file.
type Header struct {
	Kind       Kind
	Scheme     uint8
	Seed       uint64
	ParamsLen  uint32
	PayloadLen uint64 // bytes; always a multiple of 8
}

// Encoder writes one file. Use: NewEncoder, Header, Params, Words (any number
// of times, totalling PayloadLen bytes), Close.
type Encoder struct {
	w       io.Writer
	crc     uint32
	n       int64
	err     error
	buf     []byte
	payload uint64 // payload bytes still expected
}

// NewEncoder returns an Encoder writing to w.
func NewEncoder(w io.Writer) *Encoder { return &Encoder{w: w} }

func (e *Encoder) write(p []byte) {
	if e.err != nil {
		return
	}
	e.crc = crc32.Update(e.crc, castagnoli, p)
	n, err := e.w.Write(p)
	e.n += int64(n)
	e.err = err
}

// Begin writes the header and the parameter block.
func (e *Encoder) Begin(h Header, params []byte) {
	if len(params) > MaxParams {
		e.err = fmt.Errorf("format: parameter block of %d bytes exceeds %d", len(params), MaxParams)
		return
	}
	if h.PayloadLen%8 != 0 {
		e.err = fmt.Errorf("format: payload length %d is not a multiple of 8", h.PayloadLen)
		return
	}
	h.ParamsLen = uint32(len(params))
	var b [HeaderSize]byte
	copy(b[0:4], Magic)
	binary.LittleEndian.PutUint16(b[4:], Version)
	b[6] = byte(h.Kind)
	b[7] = h.Scheme
	binary.LittleEndian.PutUint64(b[8:], h.Seed)
	binary.LittleEndian.PutUint32(b[16:], h.ParamsLen)
	binary.LittleEndian.PutUint64(b[20:], h.PayloadLen)
	binary.LittleEndian.PutUint32(b[28:], crc32.Checksum(b[:28], castagnoli))
	e.write(b[:])
	e.write(params)
	e.payload = h.PayloadLen
}

// Words writes words as little-endian payload.
func (e *Encoder) Words(words []uint64) {
	if e.err != nil {
		return
	}
	if uint64(len(words))*8 > e.payload {
		e.err = errors.New("format: payload longer than declared")
		return
	}
	e.payload -= uint64(len(words)) * 8
	if e.buf == nil {
		e.buf = make([]byte, 64<<10)
	}
	for len(words) > 0 && e.err == nil {
		c := min(len(words), len(e.buf)/8)
		for i, w := range words[:c] {
			binary.LittleEndian.PutUint64(e.buf[8*i:], w)
		}
		e.write(e.buf[:8*c])
		words = words[c:]
	}
}

// Payload writes p, raw payload bytes (little-endian words, as a file
// holds them): for a writer that has the payload as bytes (a download) and
// need not decode it into words first. len(p) must be a multiple of 8.
func (e *Encoder) Payload(p []byte) {
	if e.err != nil {
		return
	}
	if len(p)%8 != 0 {
		e.err = fmt.Errorf("format: payload chunk of %d bytes is not a multiple of 8", len(p))
		return
	}
	if uint64(len(p)) > e.payload {
		e.err = errors.New("format: payload longer than declared")
		return
	}
	e.payload -= uint64(len(p))
	e.write(p)
}

// Close writes the trailer and returns the number of bytes written and the
// first error.
func (e *Encoder) Close() (int64, error) {
	if e.err == nil && e.payload != 0 {
		e.err = errors.New("format: payload shorter than declared")
	}
	if e.err != nil {
		return e.n, e.err
	}
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], e.crc)
	n, err := e.w.Write(b[:])
	e.n += int64(n)
	return e.n, err
}

// Decoder reads one file.
type Decoder struct {
	r       io.Reader
	crc     uint32
	n       int64
	payload uint64 // payload bytes still to read
	Header  Header
	// hdr holds the header once PeekKind has read it; Begin then uses it
	// instead of reading again.
	hdr    [HeaderSize]byte
	peeked bool
	// avail is the number of bytes the reader had left when the decoder
	// was made, or -1 if unknown.
	avail int64
	// buf is fillSafe's read buffer.
	buf []byte
}

// NewDecoder returns a Decoder reading from r. It reads exactly the bytes of
// one file and no more.
//
// If r can say how many bytes remain — a Len() int method (bytes.Reader,
// strings.Reader), or a Size() int64 or Stat method with Seek
// (io.SectionReader, *os.File) — the decoder uses it to allocate each
// payload once at its final size (see Words).
func NewDecoder(r io.Reader) *Decoder { return &Decoder{r: r, avail: remaining(r)} }

// remaining returns the number of bytes r has left, or -1 if it cannot tell.
func remaining(r io.Reader) int64 {
	if l, ok := r.(interface{ Len() int }); ok {
		return int64(l.Len())
	}
	s, ok := r.(io.Seeker)
	if !ok {
		return -1
	}
	var size int64 = -1
	switch v := r.(type) {
	case interface{ Size() int64 }:
		size = v.Size()
	case interface{ Stat() (fs.FileInfo, error) }:
		if st, err := v.Stat(); err == nil && st.Mode().IsRegular() {
			size = st.Size()
		}
	}
	if size < 0 {
		return -1
	}
	cur, err := s.Seek(0, io.SeekCurrent)
	if err != nil || cur > size {
		return -1
	}
	return size - cur
}

// N returns the number of bytes read so far.
func (d *Decoder) N() int64 { return d.n }

func (d *Decoder) read(p []byte, what string) error {
	n, err := io.ReadFull(d.r, p)
	d.n += int64(n)
	if err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return fmt.Errorf("format: truncated %s after %d bytes: %w: %w", what, d.n, io.ErrUnexpectedEOF, ErrFormat)
		}
		return fmt.Errorf("format: reading %s: %w", what, err)
	}
	d.crc = crc32.Update(d.crc, castagnoli, p)
	return nil
}

// PeekKind reads the header, if Begin has not, and returns the kind it
// names after checking the magic; Begin validates the rest.
func (d *Decoder) PeekKind() (Kind, error) {
	if !d.peeked {
		if err := d.read(d.hdr[:], "header"); err != nil {
			return 0, err
		}
		d.peeked = true
	}
	if string(d.hdr[0:4]) != Magic {
		return 0, fmt.Errorf("format: bad magic %q, not a bloomlab file: %w", d.hdr[0:4], ErrFormat)
	}
	return Kind(d.hdr[6]), nil
}

// Begin reads and validates the header and returns the parameter block.
// want is the kind the caller expects (0: any).
func (d *Decoder) Begin(want Kind) ([]byte, error) {
	if !d.peeked {
		if err := d.read(d.hdr[:], "header"); err != nil {
			return nil, err
		}
		d.peeked = true
	}
	b := d.hdr
	if string(b[0:4]) != Magic {
		return nil, fmt.Errorf("format: bad magic %q, not a bloomlab file: %w", b[0:4], ErrFormat)
	}
	if v := binary.LittleEndian.Uint16(b[4:]); v != Version {
		return nil, fmt.Errorf("format: version %d (this build reads %d): %w", v, Version, ErrVersion)
	}
	if got, want := binary.LittleEndian.Uint32(b[28:]), crc32.Checksum(b[:28], castagnoli); got != want {
		return nil, fmt.Errorf("format: header checksum %08x, computed %08x: %w", got, want, ErrChecksum)
	}
	h := Header{
		Kind:       Kind(b[6]),
		Scheme:     b[7],
		Seed:       binary.LittleEndian.Uint64(b[8:]),
		ParamsLen:  binary.LittleEndian.Uint32(b[16:]),
		PayloadLen: binary.LittleEndian.Uint64(b[20:]),
	}
	if want != 0 && h.Kind != want {
		return nil, fmt.Errorf("format: file holds a %v, not a %v: %w", h.Kind, want, ErrFormat)
	}
	if h.ParamsLen > MaxParams {
		return nil, fmt.Errorf("format: parameter block of %d bytes exceeds %d: %w", h.ParamsLen, MaxParams, ErrFormat)
	}
	if h.PayloadLen%8 != 0 {
		return nil, fmt.Errorf("format: payload length %d is not a multiple of 8: %w", h.PayloadLen, ErrFormat)
	}
	d.Header = h
	d.payload = h.PayloadLen
	params := make([]byte, h.ParamsLen)
	if err := d.read(params, "parameters"); err != nil {
		return nil, err
	}
	return params, nil
}

// Words reads n payload words. The caller must already have checked that n
// agrees with the parameters; Words checks it against the declared payload
// length.
//
// Memory: when the reader says how many bytes remain (a file, a
// bytes.Reader, a section: see NewDecoder) and they cover the n words, the
// result is allocated once, at its final size, and filled in place: a
// structure of S bytes costs S bytes (plus a 256 KiB buffer on big-endian
// machines and under the purego tag). Otherwise (a pipe, or a stream
// shorter than its header claims) the result grows only as data arrives, so
// a hostile length in a short stream never makes the decoder allocate more
// than about twice what it has received.
func (d *Decoder) Words(n uint64) ([]uint64, error) { return d.WordsFunc(n, 0, nil) }

// memLimit is sysmem.Limit, replaceable by tests.
var memLimit = sysmem.Limit

// chunkWords is the number of payload words Words reads at a time (256
// KiB): small enough that a chunk is still in the CPU's cache when the
// checksum and each read it, large enough that the read calls cost nothing.
const chunkWords = 1 << 15

// WordsFunc is Words with two additions for the kinds whose payload needs
// checking word by word:
//
//   - The result has room for spare more words (its capacity is n +
//     spare, allocated once when the reader knows its length), so that a
//     kind which keeps padding after its payload appends it without a
//     second copy of the payload.
//   - If each is not nil, it is called after every chunk is read, with the
//     words read so far (words[from:] are the new ones), while they are
//     still in cache: a kind checks its payload as it arrives instead of in
//     a second pass over memory. each must not keep or change words. The
//     chunks have a multiple of 2^15 words except the last, so groups of a
//     power-of-two number of words up to 2^15 never straddle two calls.
//
// The checksum is not known to be right until End: a kind should record
// the first error each finds, call End, and report its own error only if
// End succeeded, so that a damaged file is reported as damaged (ErrChecksum)
// whatever its damage looks like.
func (d *Decoder) WordsFunc(n, spare uint64, each func(words []uint64, from int)) ([]uint64, error) {
	if n > d.payload/8 {
		return nil, fmt.Errorf("format: %d payload words needed, %d declared: %w", n, d.payload/8, ErrFormat)
	}
	// A payload larger than the memory this process may use would end it
	// with a fatal out-of-memory error (a sparse file can claim any size
	// and back it with nothing): refuse it first, unless the reader is
	// known to end before it (then the read below reports the truncation).
	known := d.avail >= d.n
	short := known && n > uint64(d.avail-d.n)/8
	if limit := memLimit(); limit > 0 && n > limit/8 && !short {
		return nil, fmt.Errorf("format: a payload of %d bytes needs more memory than the %d bytes this process may use: %w", 8*n, limit, ErrTooLarge)
	}
	var out []uint64
	if known && !short {
		// spare ≤ a few words in practice; n + spare cannot overflow
		// for n ≤ 2^61.
		out = hugepage.WordsCap(0, n+spare)
	}
	for uint64(len(out)) < n {
		c := int(min(n-uint64(len(out)), chunkWords))
		if cap(out)-len(out) < c {
			// Unknown length: grow as the data arrives.
			out = slices.Grow(out, c)
		}
		from := len(out)
		if err := d.fill(out[from : from+c]); err != nil {
			return nil, err
		}
		out = out[:from+c]
		if each != nil {
			each(out, from)
		}
	}
	if uint64(cap(out)-len(out)) < spare {
		out = slices.Grow(out, int(spare))
	}
	d.payload -= 8 * n
	return out, nil
}

// Bytes reads the next n payload bytes (n a multiple of 8) as the file
// holds them: for a kind whose table is bytes rather than words (a
// RedisBloom cuckoo table), which would otherwise read words and copy
// them into bytes, holding its table twice. The result has room for
// spare more bytes. Memory as for WordsFunc: allocated once, at its final
// size, when the reader says the bytes are there; otherwise grown only as
// they arrive; refused (ErrTooLarge) beyond the memory this process may
// use.
func (d *Decoder) Bytes(n, spare uint64) ([]byte, error) {
	if n%8 != 0 || n > d.payload {
		return nil, fmt.Errorf("format: %d payload bytes needed, %d declared: %w", n, d.payload, ErrFormat)
	}
	known := d.avail >= d.n
	short := known && n > uint64(d.avail-d.n)
	if limit := memLimit(); limit > 0 && n > limit && !short {
		return nil, fmt.Errorf("format: a payload of %d bytes needs more memory than the %d bytes this process may use: %w", n, limit, ErrTooLarge)
	}
	var out []byte
	if known && !short {
		out = make([]byte, 0, n+spare) // n ≤ 2^61: no overflow
	}
	for uint64(len(out)) < n {
		c := int(min(n-uint64(len(out)), 8*chunkWords))
		if cap(out)-len(out) < c {
			out = slices.Grow(out, c) // unknown length: grow as data arrives
		}
		from := len(out)
		if err := d.read(out[from:from+c], "payload"); err != nil {
			return nil, err
		}
		out = out[:from+c]
	}
	if uint64(cap(out)-len(out)) < spare {
		out = slices.Grow(out, int(spare))
	}
	d.payload -= n
	return out, nil
}

// fillSafe reads len(dst) payload words into dst through a buffer, decoding
// each little-endian word: what fill does where the machine's byte order
// is not the file's (words_safe.go), and the reference for the in-place
// version (words_unsafe.go).
func (d *Decoder) fillSafe(dst []uint64) error {
	for len(dst) > 0 {
		c := min(len(dst), chunkWords)
		if len(d.buf) < 8*c {
			d.buf = make([]byte, 8*c)
		}
		b := d.buf[:8*c]
		if err := d.read(b, "payload"); err != nil {
			return err
		}
		decodeWords(dst[:c], b)
		dst = dst[c:]
	}
	return nil
}

// decodeWords sets dst to the little-endian words of b (len(b) =
// 8·len(dst)).
func decodeWords(dst []uint64, b []byte) {
	b = b[:8*len(dst)]
	for i := range dst {
		dst[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
}

// Payload streams the next n payload bytes through fn, chunk bytes at a
// time (the last chunk shorter), without holding more than one chunk: for
// a reader that copies the payload elsewhere (an upload) instead of
// keeping it. The chunks are checksummed as they pass, but the checksum is
// known to be right only at End: a caller must not act on what it copied
// until End succeeds. fn must not keep the slice. n must be a multiple of
// 8, chunk a positive multiple of 8.
func (d *Decoder) Payload(n uint64, chunk int, fn func(p []byte) error) error {
	if n%8 != 0 || chunk <= 0 || chunk%8 != 0 {
		return fmt.Errorf("format: Payload(%d, %d): want multiples of 8", n, chunk)
	}
	if n > d.payload {
		return fmt.Errorf("format: %d payload bytes needed, %d declared: %w", n, d.payload, ErrFormat)
	}
	buf := make([]byte, min(uint64(chunk), n))
	for left := n; left > 0; {
		c := min(left, uint64(len(buf)))
		if err := d.read(buf[:c], "payload"); err != nil {
			return err
		}
		d.payload -= c
		left -= c
		if err := fn(buf[:c]); err != nil {
			return err
		}
	}
	return nil
}

// End checks that the whole payload was consumed and verifies the trailer.
func (d *Decoder) End() error {
	if d.payload != 0 {
		return fmt.Errorf("format: %d payload bytes left unread (declared length disagrees with parameters): %w", d.payload, ErrFormat)
	}
	sum := d.crc
	var b [4]byte
	if err := d.read(b[:], "checksum"); err != nil {
		return err
	}
	if got := binary.LittleEndian.Uint32(b[:]); got != sum {
		return fmt.Errorf("format: file checksum %08x, computed %08x: %w", got, sum, ErrChecksum)
	}
	return nil
}

// Params builds a little-endian parameter block.
type Params struct{ b []byte }

func (p *Params) U8(v uint8)   { p.b = append(p.b, v) }
func (p *Params) U32(v uint32) { p.b = binary.LittleEndian.AppendUint32(p.b, v) }
func (p *Params) U64(v uint64) { p.b = binary.LittleEndian.AppendUint64(p.b, v) }

// Bytes returns the block.
func (p *Params) Bytes() []byte { return p.b }

// ParamReader reads a parameter block, recording the first short read.
type ParamReader struct {
	b   []byte
	err error
}

// NewParamReader returns a reader over b.
func NewParamReader(b []byte) *ParamReader { return &ParamReader{b: b} }

func (r *ParamReader) take(n int) []byte {
	if r.err != nil {
		return make([]byte, n)
	}
	if len(r.b) < n {
		r.err = fmt.Errorf("format: parameter block too short: %w", ErrFormat)
		return make([]byte, n)
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *ParamReader) U8() uint8   { return r.take(1)[0] }
func (r *ParamReader) U32() uint32 { return binary.LittleEndian.Uint32(r.take(4)) }
func (r *ParamReader) U64() uint64 { return binary.LittleEndian.Uint64(r.take(8)) }

// Err returns the first error, or an error if bytes are left over.
func (r *ParamReader) Err() error {
	if r.err == nil && len(r.b) != 0 {
		return fmt.Errorf("format: %d unexpected bytes in parameter block: %w", len(r.b), ErrFormat)
	}
	return r.err
}
