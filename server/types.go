package server

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/bloomlab/bloomlab"
	"github.com/bloomlab/bloomlab/countmin"
	"github.com/bloomlab/bloomlab/cuckoo"
	"github.com/bloomlab/bloomlab/internal/kind"
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
	f, err := bloomlab.ReadFrom(&io.LimitedReader{R: r, N: n})
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
	if _, err := s.ReadFrom(&io.LimitedReader{R: r, N: n}); err != nil {
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
	b, err := readBounded(r, int64(size))
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
	for _, c := range v.ld.Received() {
		if err := ld.LoadChunk(c.Iter, c.Data); err != nil {
			return nil, err
		}
	}
	return &loadingValue{ld: &ld, reserved: v.reserved, ends: v.ends}, nil
}

// encode writes the chunks received so far (writeChunks).
func (v *loadingValue) encode(w io.Writer) error {
	chunks := v.ld.Received()
	return writeChunks(w, len(chunks), func(i int) (int64, []byte) { return chunks[i].Iter, chunks[i].Data })
}

func decodeLoading(r io.Reader, n int64) (value, error) {
	var ld scalable.Loader
	var ends []uint64
	err := readChunks(r, n, func(i uint32, iter int64, data []byte) error {
		if i == 0 {
			ends = linkEnds(data)
		}
		return ld.LoadChunk(iter, data)
	})
	if err != nil {
		return nil, err
	}
	got, total := ld.Progress()
	if got == total {
		return nil, fmt.Errorf("a load in progress that holds every byte")
	}
	return &loadingValue{ld: &ld, reserved: int64(total), ends: ends}, nil
}

// writeChunks writes a load in progress: a count (u32), then each
// chunk's iterator (i64), length (u64) and bytes.
func writeChunks(w io.Writer, count int, chunk func(i int) (int64, []byte)) error {
	var hdr [16]byte
	binary.LittleEndian.PutUint32(hdr[:4], uint32(count))
	if _, err := w.Write(hdr[:4]); err != nil {
		return err
	}
	for i := 0; i < count; i++ {
		iter, data := chunk(i)
		binary.LittleEndian.PutUint64(hdr[:8], uint64(iter))
		binary.LittleEndian.PutUint64(hdr[8:], uint64(len(data)))
		if _, err := w.Write(hdr[:]); err != nil {
			return err
		}
		if _, err := w.Write(data); err != nil {
			return err
		}
	}
	return nil
}

// readChunks reads what writeChunks wrote, from exactly n bytes of r,
// handing each chunk to load (a Loader, which validates it before
// anything is allocated for the filter); a chunk's bytes are allocated
// only as they arrive.
func readChunks(r io.Reader, n int64, load func(i uint32, iter int64, data []byte) error) error {
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
		data, err := readBounded(lr, int64(min(size, uint64(lr.N)+1)))
		if err != nil {
			return err
		}
		if uint64(len(data)) != size {
			return fmt.Errorf("chunk of %d bytes, %d present", size, len(data))
		}
		if err := load(i, iter, data); err != nil {
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
	if _, err := f.ReadFrom(&io.LimitedReader{R: r, N: n}); err != nil {
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
	for _, c := range v.ld.Received() {
		if err := ld.LoadChunk(c.Iter, c.Data); err != nil {
			return nil, err
		}
	}
	return &cfLoadingValue{ld: &ld, reserved: v.reserved}, nil
}

// encode writes the chunks received so far (writeChunks).
func (v *cfLoadingValue) encode(w io.Writer) error {
	chunks := v.ld.Received()
	return writeChunks(w, len(chunks), func(i int) (int64, []byte) { return chunks[i].Iter, chunks[i].Data })
}

func decodeCFLoading(r io.Reader, n int64) (value, error) {
	var ld cuckoo.Loader
	err := readChunks(r, n, func(_ uint32, iter int64, data []byte) error {
		if iter == 0 {
			return fmt.Errorf("a load in progress holding the end of a dump")
		}
		return ld.LoadChunk(iter, data)
	})
	if err != nil {
		return nil, err
	}
	got, total := ld.Progress()
	if got == total {
		return nil, fmt.Errorf("a load in progress that holds every byte")
	}
	return &cfLoadingValue{ld: &ld, reserved: int64(total)}, nil
}

// readBounded reads exactly n bytes, allocating only as they arrive.
func readBounded(r io.Reader, n int64) ([]byte, error) {
	var b bytes.Buffer
	b.Grow(int(min(n, 1<<20)))
	got, err := io.CopyN(&b, r, n)
	if got != n {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return b.Bytes(), nil
}

func eofErr(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
