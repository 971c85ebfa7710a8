package server

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/bloomlab/bloomlab/internal/sysmem"
)

// valueType is one kind of value a key holds: the name TYPE answers and
// how a snapshot stores it. A new type is declared by its family, in one
// file beside the others (cmd_bf.go, cmd_cms.go…: family.go), with a new
// tag, its value, its RDB codec and its commands; nothing else changes.
type valueType struct {
	name string // TYPE's reply (RedisBloom's module type names)
	tag  byte   // the value's tag in a snapshot record (never reused)
	// decode reads a value from exactly its payload bytes; it validates
	// before it allocates.
	decode func(r io.Reader, n int64) (value, error)
	fam    *family // the family that declares it (registerFamily)
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

// valueTypes are the value types by tag, registered by their families
// (registerFamily). The tags are part of the snapshot format
// (docs/SERVER.md) and are never reused: 1 BF (cmd_bf.go), 2 CMS
// (cmd_cms.go), 3 string (cmd_strings.go), 4 a BF.LOADCHUNK in progress
// (cmd_bf.go), 5 CF and 6 a CF.LOADCHUNK in progress (cmd_cf.go), 7 TOPK
// (cmd_topk.go), 8 TDIGEST (cmd_tdigest.go).
var valueTypes = map[byte]*valueType{}

// registerType registers t, whose tag no other type has.
func registerType(t *valueType) *valueType {
	if _, dup := valueTypes[t.tag]; dup {
		panic(fmt.Sprintf("server: value tag %d registered twice", t.tag))
	}
	valueTypes[t.tag] = t
	return t
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
