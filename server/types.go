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
	loadingType = registerType(&valueType{name: "MBbloom--", tag: 4, decode: bfDumps.decodeLoading})
	cfType      = registerType(&valueType{name: "MBbloomCF", tag: 5, decode: decodeCF})
	cfLoadType  = registerType(&valueType{name: "MBbloomCF", tag: 6, decode: cfDumps.decodeLoading})
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
