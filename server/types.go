package server

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/bloomlab/bloomlab"
	"github.com/bloomlab/bloomlab/countmin"
	"github.com/bloomlab/bloomlab/cuckoo"
	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/internal/sysmem"
	"github.com/bloomlab/bloomlab/scalable"
)

// valueType is one kind of value a key holds: the name TYPE answers and
// how a snapshot stores it. A new type is a valueType registered here,
// its value, and its commands registered in the command table
// (commands.go); nothing else changes.
type valueType struct {
	name string // TYPE's reply (RedisBloom's module type names)
	tag  byte   // the value's tag in a snapshot record (never reused)
	// decode reads a value from exactly its payload bytes; it validates
	// before it allocates.
	decode func(r io.Reader, n int64) (value, error)
}

// payloadReader reads at most n bytes of r and says how many are left
// (Len), so that a bloomlab file's decoder allocates each payload once,
// at its final size, instead of growing it as it arrives (which costs 2–3
// times the payload: format.NewDecoder). n is what is left of the
// snapshot: a length in the payload beyond it is still refused, or read
// as it arrives, never allocated in advance.
type payloadReader struct {
	r io.Reader
	n int64
}

func (p *payloadReader) Read(b []byte) (int, error) {
	if p.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(b)) > p.n {
		b = b[:p.n]
	}
	k, err := p.r.Read(b)
	p.n -= int64(k)
	return k, err
}

// Len is the number of bytes left.
func (p *payloadReader) Len() int { return int(min(p.n, math.MaxInt)) }

// value is what a key holds.
type value interface {
	typ() *valueType
	// encode writes the snapshot payload.
	encode(w io.Writer) error
	// clone returns a copy that a writer may change while a snapshot
	// still reads the original (immutable values return themselves).
	clone() (value, error)
	// memory is the bytes the value accounts for against MaxMemory.
	memory() int64
}

var valueTypes = map[byte]*valueType{}

func registerType(t *valueType) *valueType {
	if _, dup := valueTypes[t.tag]; dup {
		panic(fmt.Sprintf("server: value tag %d registered twice", t.tag))
	}
	valueTypes[t.tag] = t
	return t
}

// The value types. Tags are part of the snapshot format (docs/SERVER.md).
var (
	bfType      = registerType(&valueType{name: "MBbloom--", tag: 1, decode: decodeBF})
	cmsType     = registerType(&valueType{name: "CMSk-TYPE", tag: 2, decode: decodeCMS})
	stringType  = registerType(&valueType{name: "string", tag: 3, decode: decodeString})
	loadingType = registerType(&valueType{name: "MBbloom--", tag: 4, decode: decodeLoading})
	cfType      = registerType(&valueType{name: "MBbloomCF", tag: 5, decode: decodeCF})
	cfLoadType  = registerType(&valueType{name: "MBbloomCF", tag: 6, decode: decodeCFLoading})
)

// bfValue is a filter answering BF.*: a growing chain (BF.RESERVE, BF.ADD,
// BF.LOADCHUNK, or a scalable file), or a filter of any other kind loaded
// from a file.
type bfValue struct {
	f     kind.Filter
	chain *scalable.Filter   // f, when it is a chain
	add   func([]byte) error // the other kinds' insert; nil if read-only
}

func newBF(f kind.Filter) *bfValue {
	v := &bfValue{f: f}
	if c, ok := f.(*scalable.Filter); ok {
		v.chain = c
		return v
	}
	if add, ok := kind.Adder(f); ok {
		v.add = add
	}
	return v
}

func (v *bfValue) typ() *valueType { return bfType }
func (v *bfValue) memory() int64   { return int64(v.f.Bits()/8) + 96 }

func (v *bfValue) encode(w io.Writer) error {
	_, err := v.f.WriteTo(w)
	return err
}

func (v *bfValue) clone() (value, error) {
	switch {
	case v.chain != nil:
		return newBF(v.chain.Clone()), nil
	case v.add == nil:
		return v, nil // never changed
	}
	var b bytes.Buffer
	b.Grow(int(min(v.f.Bits()/8, math.MaxInt32)) + 8192) // the file: no growth while it is written
	if _, err := v.f.WriteTo(&b); err != nil {
		return nil, err
	}
	f, err := bloomlab.Unmarshal(b.Bytes())
	if err != nil {
		return nil, err
	}
	return newBF(f), nil
}

// info returns BF.INFO's fields: a chain's as RedisBloom computes them;
// another kind's as one filter that cannot expand.
func (v *bfValue) info() (capacity, size, filters, items int64, expansion int64, scales bool) {
	if v.chain != nil {
		in := v.chain.RedisInfo()
		return int64(in.Capacity), int64(in.Size), int64(in.Filters), int64(in.Items), int64(in.Expansion), !v.chain.NonScaling()
	}
	return int64(v.f.Capacity()), int64(v.f.Bits() / 8), 1, int64(v.f.N()), 0, false
}

func decodeBF(r io.Reader, n int64) (value, error) {
	f, err := bloomlab.ReadFrom(&payloadReader{r, n})
	if err != nil {
		return nil, err
	}
	return newBF(f), nil
}

// cmsValue is a Count-Min sketch answering CMS.*.
type cmsValue struct{ s *countmin.Sketch }

func (v *cmsValue) typ() *valueType       { return cmsType }
func (v *cmsValue) memory() int64         { return int64(v.s.Bits()/8) + 96 }
func (v *cmsValue) clone() (value, error) { return &cmsValue{v.s.Clone()}, nil }

func (v *cmsValue) encode(w io.Writer) error {
	_, err := v.s.WriteTo(w)
	return err
}

func decodeCMS(r io.Reader, n int64) (value, error) {
	var s countmin.Sketch
	if _, err := s.ReadFrom(&payloadReader{r, n}); err != nil {
		return nil, err
	}
	return &cmsValue{&s}, nil
}

// strValue is a string (SET/GET): there so that clients' probes and
// WRONGTYPE behave as with Redis. It is never changed in place.
type strValue struct{ b []byte }

func (v *strValue) typ() *valueType       { return stringType }
func (v *strValue) memory() int64         { return int64(len(v.b)) + 32 }
func (v *strValue) clone() (value, error) { return v, nil }

// encode writes the length (u64) and the bytes.
func (v *strValue) encode(w io.Writer) error {
	var l [8]byte
	binary.LittleEndian.PutUint64(l[:], uint64(len(v.b)))
	if _, err := w.Write(l[:]); err != nil {
		return err
	}
	_, err := w.Write(v.b)
	return err
}

func decodeString(r io.Reader, n int64) (value, error) {
	var l [8]byte
	if _, err := io.ReadFull(r, l[:]); err != nil {
		return nil, eofErr(err)
	}
	size := binary.LittleEndian.Uint64(l[:])
	if n < 8 || size > uint64(n-8) {
		return nil, fmt.Errorf("string of %d bytes, %d left", size, n-8)
	}
	b, err := readExact(r, int64(size))
	if err != nil {
		return nil, err
	}
	return &strValue{b}, nil
}

// loadingValue is a chain being loaded with BF.LOADCHUNK: it answers no
// query until every byte has arrived (RedisBloom answers from zero bits
// meanwhile: false negatives).
type loadingValue struct {
	ld       *scalable.Loader
	reserved int64    // bytes the header announced, accounted at the header
	ends     []uint64 // where the header's links end (byte offsets)
}

func (v *loadingValue) typ() *valueType { return loadingType }
func (v *loadingValue) memory() int64   { return v.reserved + 96 }

func (v *loadingValue) clone() (value, error) {
	var ld scalable.Loader
	ld.AllocateWhole() // accounted for since the header
	if err := cloneChunks(v.ld.WalkReceived, ld.LoadChunk); err != nil {
		return nil, err
	}
	return &loadingValue{ld: &ld, reserved: v.reserved, ends: v.ends}, nil
}

// encode writes the chunks received so far (writeChunks).
func (v *loadingValue) encode(w io.Writer) error { return writeChunks(w, v.ld.WalkReceived) }

func decodeLoading(r io.Reader, n int64) (value, error) {
	var ld scalable.Loader
	var ends []uint64
	err := readChunks(r, n, func(iter int64, hdr []byte) error {
		ends = linkEnds(hdr)
		return ld.LoadChunk(iter, hdr)
	}, ld.ReadChunk)
	if err != nil {
		return nil, err
	}
	got, total := ld.Progress()
	if got == total {
		return nil, fmt.Errorf("a load in progress that holds every byte")
	}
	// The chunks read above were allocated at the size the file holds;
	// the rest, accounted for from the header on, arrives from clients.
	ld.AllocateWhole()
	return &loadingValue{ld: &ld, reserved: int64(total), ends: ends}, nil
}

// walkFunc is a Loader's WalkReceived.
type walkFunc = func(fn func(iter int64, size int, write func(io.Writer) error) error) error

// writeChunks writes a load in progress: a count (u32), then each
// chunk's iterator (i64), length (u64) and bytes, from walk (a Loader's
// WalkReceived: the header, then at most a chunk per link or sub-filter,
// written from the filter's memory, not copied first). It walks twice, to
// count the chunks and to write them: the value is frozen meanwhile (a
// writer copies it before changing it).
func writeChunks(w io.Writer, walk walkFunc) error {
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
func cloneChunks(walk walkFunc, load func(iter int64, data []byte) error) error {
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

// cfValue is a cuckoo filter answering CF.*: RedisBloom's profile
// (CF.RESERVE, CF.ADD, CF.LOADCHUNK, or a file of that profile), or a
// bloomlab-profile cuckoo filter loaded from a file.
type cfValue struct{ f *cuckoo.Filter }

func (v *cfValue) typ() *valueType       { return cfType }
func (v *cfValue) memory() int64         { return int64(v.f.Bits()/8) + 96 }
func (v *cfValue) clone() (value, error) { return &cfValue{v.f.Clone()}, nil }

func (v *cfValue) encode(w io.Writer) error {
	_, err := v.f.WriteTo(w)
	return err
}

func decodeCF(r io.Reader, n int64) (value, error) {
	var f cuckoo.Filter
	if _, err := f.ReadFrom(&payloadReader{r, n}); err != nil {
		return nil, err
	}
	return &cfValue{&f}, nil
}

// cfLoadingValue is a cuckoo filter being loaded with CF.LOADCHUNK: like
// loadingValue, it answers no query until every byte has arrived.
type cfLoadingValue struct {
	ld       *cuckoo.Loader
	reserved int64 // bytes the header announced, accounted at the header
}

func (v *cfLoadingValue) typ() *valueType { return cfLoadType }
func (v *cfLoadingValue) memory() int64   { return v.reserved + 96 }

func (v *cfLoadingValue) clone() (value, error) {
	var ld cuckoo.Loader
	ld.AllocateWhole() // accounted for since the header
	if err := cloneChunks(v.ld.WalkReceived, ld.LoadChunk); err != nil {
		return nil, err
	}
	return &cfLoadingValue{ld: &ld, reserved: v.reserved}, nil
}

// encode writes the chunks received so far (writeChunks).
func (v *cfLoadingValue) encode(w io.Writer) error { return writeChunks(w, v.ld.WalkReceived) }

func decodeCFLoading(r io.Reader, n int64) (value, error) {
	var ld cuckoo.Loader
	err := readChunks(r, n, ld.LoadChunk, func(iter int64, size int, r io.Reader) error {
		if iter == 0 {
			return fmt.Errorf("a load in progress holding the end of a dump")
		}
		return ld.ReadChunk(iter, size, r)
	})
	if err != nil {
		return nil, err
	}
	got, total := ld.Progress()
	if got == total {
		return nil, fmt.Errorf("a load in progress that holds every byte")
	}
	ld.AllocateWhole() // as decodeLoading
	return &cfLoadingValue{ld: &ld, reserved: int64(total)}, nil
}

// memLimit is sysmem.Limit, replaceable by tests.
var memLimit = sysmem.Limit

// readExact reads exactly n bytes into one allocation of n bytes. The
// caller has checked that n bytes are left in the file; n beyond the
// memory this process may use (a sparse file) is refused before anything
// is allocated.
func readExact(r io.Reader, n int64) ([]byte, error) {
	if limit := memLimit(); limit > 0 && uint64(n) > limit {
		return nil, fmt.Errorf("%d bytes: more than the %d bytes this process may use", n, limit)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, eofErr(err)
	}
	return b, nil
}

func eofErr(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
