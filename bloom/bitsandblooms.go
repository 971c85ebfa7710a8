package bloom

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"
	"sync/atomic"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/bitvec"
	"github.com/bloomlab/bloomlab/internal/format"
	"github.com/bloomlab/bloomlab/internal/sysmem"
	"github.com/bloomlab/bloomlab/theory"
)

// BitsAndBloomsOptions says how the program that wrote a
// github.com/bits-and-blooms/bloom/v3 filter had set the process-wide
// switches of github.com/bits-and-blooms/bitset, which its bytes do not
// record. The zero value is that package's default.
type BitsAndBloomsOptions struct {
	// LittleEndian: the filter was written after bitset.LittleEndian():
	// the bitset's length and words are little-endian (m and k stay
	// big-endian: package bloom writes them itself).
	LittleEndian bool
	// Base64Std: the JSON form was written after
	// bitset.Base64StdEncoding(): the bitset is in base64's standard
	// alphabet (+ and /) instead of the URL alphabet (- and _).
	Base64Std bool
}

// ReadBitsAndBlooms reads one filter of github.com/bits-and-blooms/bloom/v3
// (its BloomFilter) from r, in either of its forms: the bytes of WriteTo,
// MarshalBinary and GobEncode (one form: m and k as big-endian uint64, then
// the bitset's WriteTo: its length in bits as a uint64 and its words), or
// the JSON of MarshalJSON ({"m": M, "k": K, "b": "BASE64"}, b the base64 of
// the bitset's WriteTo), told apart by the first byte. The result is a
// standard filter of m bits and k hash functions with scheme
// hashing.BitsAndBlooms and seed 0, whose Contains answers exactly as the
// original's Test for every key, whose Add sets exactly the bits the
// original's Add sets, and which combines with filters of the same scheme, m
// and k. Its N starts at the distinct keys its fill suggests (the original
// does not count its keys; for a filter whose bits are all set, the count
// with half a bit unset, at least m/k); its capacity is unknown (0).
//
// It validates m (1 … 2^48), k (1 … 64), the bitset's length and its number
// of words before it allocates, and allocates no more than the bytes it
// received justify: the bitset must hold at least m bits, or at most 2^23
// fewer (the bits the original's Test reads as 0 because its bitset is
// shorter than m, as in New(0, k)); bits at and beyond m, which the original
// never tests, are dropped. Errors wrap format.ErrFormat (bloomlab.ErrFormat),
// truncation also io.ErrUnexpectedEOF, and a filter larger than the memory
// the process may use format.ErrTooLarge. Bytes after the filter are not
// read from a binary stream; the JSON form must be the whole of r.
//
// A stream written by an encoding/gob Encoder frames these bytes in gob's
// own records: decode it into a []byte (or with the original's GobDecode)
// first.
func ReadBitsAndBlooms(r io.Reader, o BitsAndBloomsOptions) (*Filter, error) {
	br := bufio.NewReader(r)
	first, err := br.Peek(1)
	if err != nil {
		return nil, bbTruncated(err, "empty input")
	}
	switch first[0] {
	case '{', ' ', '\t', '\r', '\n':
		return readBBJSON(br, o)
	}
	return readBBBinary(br, o)
}

// bbMissingBits is how many bits shorter than m the bitset may be: the
// zeros ReadBitsAndBlooms adds beyond what the input holds.
const bbMissingBits = 1 << 23

// bbError is an input ReadBitsAndBlooms refuses: it wraps
// format.ErrFormat (and io.ErrUnexpectedEOF for a truncation) without
// that error's text, which speaks of bloomlab's own files.
type bbError struct {
	msg       string
	truncated bool
}

func (e *bbError) Error() string { return "bloom: bits-and-blooms filter: " + e.msg }

func (e *bbError) Unwrap() []error {
	if e.truncated {
		return []error{format.ErrFormat, io.ErrUnexpectedEOF}
	}
	return []error{format.ErrFormat}
}

func bbErr(msg string, args ...any) error { return &bbError{msg: fmt.Sprintf(msg, args...)} }

func bbTruncated(err error, what string) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &bbError{msg: "truncated (" + what + ")", truncated: true}
	}
	return fmt.Errorf("bloom: bits-and-blooms filter: %w", err)
}

// checkBBParams validates m and k as the original recorded them.
func checkBBParams(m, k uint64) error {
	switch {
	case m == 0:
		return bbErr("m = 0 (the original's Test would divide by zero)")
	case m > hashing.MaxM:
		return bbErr("m = %d bits, more than bloomlab's 2^48", m)
	case k == 0:
		return bbErr("k = 0 (the original answers every Test true: nothing to import)")
	case k > hashing.MaxK:
		return bbErr("k = %d hash functions, more than bloomlab's %d", k, hashing.MaxK)
	}
	return nil
}

func readBBBinary(r io.Reader, o BitsAndBloomsOptions) (*Filter, error) {
	var head [16]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return nil, bbTruncated(err, "m and k")
	}
	m, k := binary.BigEndian.Uint64(head[:]), binary.BigEndian.Uint64(head[8:])
	if err := checkBBParams(m, k); err != nil {
		return nil, err
	}
	return readBBBitset(r, m, int(k), o)
}

// readBBBitset reads the bitset's WriteTo (length, then words) and returns
// the filter of m bits and k hash functions over it.
func readBBBitset(r io.Reader, m uint64, k int, o BitsAndBloomsOptions) (*Filter, error) {
	var order binary.ByteOrder = binary.BigEndian
	if o.LittleEndian {
		order = binary.LittleEndian
	}
	var lb [8]byte
	if _, err := io.ReadFull(r, lb[:]); err != nil {
		return nil, bbTruncated(err, "the bitset's length")
	}
	l := order.Uint64(lb[:])
	if l > hashing.MaxM+63 || l+bbMissingBits < m {
		hint := ""
		if sw := bits.ReverseBytes64(l); sw >= m && sw <= hashing.MaxM+63 {
			other := "-endian little (BitsAndBloomsOptions.LittleEndian), for a bitset written after bitset.LittleEndian()"
			if o.LittleEndian {
				other = "the default big-endian order"
			}
			hint = "; read in the other byte order it is " + fmt.Sprint(sw) + ": try " + other
		}
		return nil, bbErr("the bitset holds %d bits for a filter of m = %d%s", l, m, hint)
	}
	words := l/64 + min(l%64, 1) // the bitset's words, as it wrote them
	nw := bitvec.Words(m)
	keep := min(words, nw)
	if limit := sysmem.Limit(); limit > 0 && nw > limit/8 {
		return nil, fmt.Errorf("bloom: bits-and-blooms filter of %d bits needs more memory than the %d bytes this process may use: %w", m, limit, format.ErrTooLarge)
	}
	if bitvec.Words(m) > math.MaxInt/8 {
		return nil, bbErr("m = %d bits exceed what a 32-bit platform can allocate", m)
	}
	// Read as the data arrives, 256 KiB at a time: a short stream
	// claiming a long bitset fails having allocated about what it sent.
	const chunk = 1 << 15
	var buf [8 * 512]byte
	var v []uint64
	for uint64(len(v)) < keep {
		c := int(min(keep-uint64(len(v)), chunk))
		v = slices.Grow(v, c)
		for c > 0 {
			n := min(c, len(buf)/8)
			if _, err := io.ReadFull(r, buf[:8*n]); err != nil {
				return nil, bbTruncated(err, fmt.Sprintf("the bitset's %d words", words))
			}
			for i := range n {
				v = append(v, order.Uint64(buf[8*i:]))
			}
			c -= n
		}
	}
	for rest := words - keep; rest > 0; {
		n := min(rest, uint64(len(buf)/8))
		if _, err := io.ReadFull(r, buf[:8*n]); err != nil {
			return nil, bbTruncated(err, fmt.Sprintf("the bitset's %d words", words))
		}
		rest -= n
	}
	if uint64(len(v)) < nw {
		v = append(v, make([]uint64, nw-uint64(len(v)))...)
	}
	// The original's Test reads every bit at or past its bitset's length
	// as 0, and never tests a bit at or past m.
	if end := min(l, m); end < nw*64 {
		clear(v[end/64+min(end%64, 1):])
		if end%64 != 0 {
			v[end/64] &= 1<<(end%64) - 1
		}
	}
	ix, err := newBBIndexer(m, k, 0)
	if err != nil {
		return nil, bbErr("%v", err)
	}
	f, err := fromIndexer(ix, 0, v, 0)
	if err != nil {
		return nil, bbErr("%v", err)
	}
	c := f.ApproxCount()
	if math.IsInf(c, 1) { // every bit set: the count with half a bit unset
		fm := float64(m)
		c = max(math.Ceil(fm/float64(k)), theory.CountFromFill(fm, k, (fm-0.5)/fm))
	}
	if c < 1<<63 {
		f.n = uint64(math.Round(c))
	}
	return f, nil
}

// newBBIndexer returns the indexer of a filter of scheme BitsAndBlooms,
// whose hashing has no seed.
func newBBIndexer(m uint64, k int, seed uint64) (*hashing.Indexer, error) {
	if seed != 0 {
		return nil, fmt.Errorf("scheme %v has no seed (seed %d given)", hashing.BitsAndBlooms, seed)
	}
	return hashing.NewBitsAndBloomsIndexer(m, k)
}

func readBBJSON(r io.Reader, o BitsAndBloomsOptions) (*Filter, error) {
	// The whole document is needed to find m and k (JSON does not order
	// an object's fields): read it, refusing more than the process may
	// hold, so what is allocated is what was received.
	limit := int64(math.MaxInt64)
	if l := sysmem.Limit(); l > 0 && l < math.MaxInt64 {
		limit = int64(l)
	}
	data, err := io.ReadAll(io.LimitReader(r, limit))
	if err != nil {
		return nil, fmt.Errorf("bloom: bits-and-blooms filter: %w", err)
	}
	var doc struct {
		M *uint64 `json:"m"`
		K *uint64 `json:"k"`
		B *string `json:"b"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, bbErr("JSON: %v", err)
	}
	switch {
	case doc.M == nil:
		return nil, bbErr(`JSON without "m"`)
	case doc.K == nil:
		return nil, bbErr(`JSON without "k"`)
	case doc.B == nil:
		return nil, bbErr(`JSON without "b" (the bitset)`)
	}
	if err := checkBBParams(*doc.M, *doc.K); err != nil {
		return nil, err
	}
	enc, name, other := base64.URLEncoding, "URL", "; if the filter was written after bitset.Base64StdEncoding(), give -base64 std (BitsAndBloomsOptions.Base64Std)"
	if o.Base64Std {
		enc, name, other = base64.StdEncoding, "standard", "; if the filter was written with bitset's default alphabet, leave out -base64 std"
	}
	raw, err := enc.DecodeString(*doc.B)
	if err != nil {
		return nil, bbErr(`"b" is not base64 in the %s alphabet (%v)%s`, name, err, other)
	}
	br := bytes.NewReader(raw)
	f, err := readBBBitset(br, *doc.M, int(*doc.K), o)
	if err != nil {
		return nil, err
	}
	if br.Len() != 0 {
		return nil, bbErr(`%d bytes in "b" after the bitset`, br.Len())
	}
	return f, nil
}

// addBB inserts key into a filter of scheme BitsAndBlooms: the bits the
// original's Add sets.
func (f *Filter) addBB(key []byte, atomically bool) {
	f.mustBeMade("Add")
	h := hashing.BitsAndBloomsHashes(key)
	m, r := f.m, f.ix.Recip()
	for i := range uint64(f.k) {
		p := hashing.Mod64(hashing.BitsAndBloomsLocation(h, i), m, r)
		if atomically {
			f.bits.SetAtomic(p)
		} else {
			f.bits[p>>6] |= 1 << (p & 63)
		}
	}
	if atomically {
		atomic.AddUint64(&f.n, 1)
	} else {
		f.n++
	}
}

// hasBB is Contains for a filter of scheme BitsAndBlooms: the original's
// Test.
func (f *Filter) hasBB(key []byte) bool {
	h := hashing.BitsAndBloomsHashes(key)
	m, r := f.m, f.ix.Recip()
	for i := range uint64(f.k) {
		if !f.bits.Has(hashing.Mod64(hashing.BitsAndBloomsLocation(h, i), m, r)) {
			return false
		}
	}
	return true
}
