package sbbf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/bloomlab/bloomlab/internal/format"
)

// The form in which a Parquet file stores a column chunk's filter, at the
// column's bloom_filter_offset: a BloomFilterHeader in Thrift's compact
// protocol (parquet-format's parquet.thrift),
//
//	struct BloomFilterHeader {
//	  1: required i32 numBytes;                        // of the bitset
//	  2: required BloomFilterAlgorithm algorithm;      // union, 1: BLOCK {}
//	  3: required BloomFilterHash hash;                // union, 1: XXHASH {}
//	  4: required BloomFilterCompression compression;  // union, 1: UNCOMPRESSED {}
//	}
//
// followed by the numBytes bytes of the bitset (Bytes).

// Thrift compact protocol type codes.
const (
	tcStop     = 0
	tcTrue     = 1
	tcFalse    = 2
	tcByte     = 3
	tcI16      = 4
	tcI32      = 5
	tcI64      = 6
	tcDouble   = 7
	tcBinary   = 8
	tcList     = 9
	tcSet      = 10
	tcMap      = 11
	tcStruct   = 12
	maxDepth   = 16
	maxSkipLen = 1 << 16 // the longest string or collection a header may hold
)

// appendParquetHeader appends the BloomFilterHeader of a bitset of
// numBytes bytes (at most 2^31 − 1), as Parquet writers encode it (Thrift
// compact protocol: numBytes, then the algorithm BLOCK, the hash XXHASH
// and the compression UNCOMPRESSED), to dst.
func appendParquetHeader(dst []byte, numBytes uint64) []byte {
	dst = append(dst, 0x15) // field 1, i32, zigzag varint
	dst = binary.AppendUvarint(dst, numBytes<<1)
	for range 3 { // fields 2, 3, 4: a union whose field 1 is an empty struct
		dst = append(dst, 0x1c, 0x1c, tcStop, tcStop)
	}
	return append(dst, tcStop)
}

// WriteParquet writes f as a Parquet file stores it at a column's
// bloom_filter_offset: its BloomFilterHeader and its bitset. A filter of
// more than 2^31 − 1 bytes (over 67,108,863 blocks) cannot be written:
// numBytes is a Thrift i32.
func (f *Filter) WriteParquet(w io.Writer) error {
	if f.blocks == 0 {
		return zero.Err("WriteParquet")
	}
	if f.blocks*BlockBytes > 1<<31-1 {
		return fmt.Errorf("sbbf: %d blocks are %d bytes, more than a Parquet header's i32 numBytes holds: %w", f.blocks, f.blocks*BlockBytes, ErrParam)
	}
	bw := bufio.NewWriter(w)
	bw.Write(appendParquetHeader(nil, f.blocks*BlockBytes))
	var b [8]byte
	for _, x := range f.bits {
		binary.LittleEndian.PutUint64(b[:], x)
		bw.Write(b[:])
	}
	return bw.Flush()
}

// ReadParquet reads a filter as a Parquet file stores it (WriteParquet's
// form): the header, which must name the split-block algorithm, XXH64 and
// no compression, and numBytes of bitset (a positive multiple of 32), and
// nothing after them. Errors wrap format.ErrFormat; memory grows with the
// bytes read, not with what the header claims. Its N and Capacity are 0.
func ReadParquet(r io.Reader) (*Filter, error) {
	br := bufio.NewReader(r)
	f, err := readParquet(br)
	if err != nil {
		return nil, err
	}
	if _, err := br.ReadByte(); err != io.EOF {
		if err == nil {
			return nil, fmt.Errorf("sbbf: parquet filter: bytes after the %d-byte bitset: %w", f.blocks*BlockBytes, format.ErrFormat)
		}
		return nil, fmt.Errorf("sbbf: parquet filter: %w", err)
	}
	return f, nil
}

// ReadParquetPrefix is ReadParquet for a stream that goes on after the
// filter (a Parquet file read from a column chunk's bloom_filter_offset):
// it reads the header and the bitset, and what r has buffered beyond them
// is the rest of the stream.
func ReadParquetPrefix(r *bufio.Reader) (*Filter, error) { return readParquet(r) }

// readParquet reads a header and its bitset from r.
func readParquet(br interface {
	io.ByteReader
	io.Reader
}) (*Filter, error) {
	numBytes, err := readParquetHeader(br)
	if err != nil {
		return nil, err
	}
	const chunk = 1 << 16 // words read per step: memory follows the input
	words := make([]uint64, 0, min(numBytes/8, chunk))
	var b [8]byte
	for uint64(len(words)) < numBytes/8 {
		if _, err := io.ReadFull(br, b[:]); err != nil {
			return nil, fmt.Errorf("sbbf: parquet bitset: %d of %d bytes: %w (%w)", 8*len(words), numBytes, format.ErrFormat, io.ErrUnexpectedEOF)
		}
		words = append(words, binary.LittleEndian.Uint64(b[:]))
	}
	blocks := numBytes / BlockBytes
	return &Filter{bits: words[:len(words):len(words)], blocks: blocks}, nil
}

var errHeader = errors.New("sbbf: parquet BloomFilterHeader")

// readParquetHeader reads a BloomFilterHeader and returns numBytes,
// validated: a positive multiple of 32 of at most 2^31 − 1.
func readParquetHeader(r io.ByteReader) (uint64, error) {
	bad := func(msg string, args ...any) error {
		return fmt.Errorf("%w: "+msg+": %w", append(append([]any{errHeader}, args...), format.ErrFormat)...)
	}
	var numBytes int64 = -1
	seen := map[int16]bool{}
	last := int16(0)
	for {
		id, typ, err := fieldHeader(r, &last)
		if err != nil {
			return 0, bad("%v", err)
		}
		if typ == tcStop {
			break
		}
		if seen[id] {
			return 0, bad("field %d twice", id)
		}
		seen[id] = true
		switch {
		case id == 1 && typ == tcI32:
			v, err := readVarint(r)
			if err != nil {
				return 0, bad("numBytes: %v", err)
			}
			numBytes = zigzag(v)
		case id >= 2 && id <= 4 && typ == tcStruct:
			// A union: exactly one field, which must be field 1 (BLOCK,
			// XXHASH, UNCOMPRESSED), an empty struct (its own fields, if a
			// later version adds some, are skipped).
			what := [...]string{2: "algorithm", 3: "hash", 4: "compression"}[id]
			want := [...]string{2: "BLOCK (split block)", 3: "XXHASH", 4: "UNCOMPRESSED"}[id]
			var ulast int16
			uid, utyp, err := fieldHeader(r, &ulast)
			if err != nil {
				return 0, bad("%s: %v", what, err)
			}
			if uid != 1 || utyp != tcStruct {
				return 0, bad("%s is field %d of type %d, want 1 (%s): bloomlab reads only the split-block filter with XXH64, uncompressed", what, uid, utyp, want)
			}
			if err := skip(r, tcStruct, 1); err != nil {
				return 0, bad("%s: %v", what, err)
			}
			if _, utyp, err = fieldHeader(r, &ulast); err != nil || utyp != tcStop {
				return 0, bad("%s: a union with more than one field", what)
			}
		default:
			if err := skip(r, typ, 0); err != nil {
				return 0, bad("field %d: %v", id, err)
			}
		}
	}
	for id := int16(1); id <= 4; id++ {
		if !seen[id] {
			return 0, bad("required field %d missing", id)
		}
	}
	if numBytes < BlockBytes || numBytes%BlockBytes != 0 {
		return 0, bad("numBytes %d: want a positive multiple of %d", numBytes, BlockBytes)
	}
	if numBytes > 1<<31-1 {
		return 0, bad("numBytes %d exceeds an i32", numBytes)
	}
	return uint64(numBytes), nil
}

// fieldHeader reads a compact-protocol field header: the field id (delta
// from *last, or an explicit zigzag i16) and type.
func fieldHeader(r io.ByteReader, last *int16) (int16, byte, error) {
	b, err := r.ReadByte()
	if err != nil {
		return 0, 0, fmt.Errorf("truncated: %w", io.ErrUnexpectedEOF)
	}
	typ := b & 0x0f
	if typ == tcStop {
		if b != 0 {
			return 0, 0, fmt.Errorf("bad stop byte %#x", b)
		}
		return 0, tcStop, nil
	}
	if typ > tcStruct {
		return 0, 0, fmt.Errorf("unknown type %d", typ)
	}
	var id int16
	if d := int16(b >> 4); d != 0 {
		id = *last + d
	} else {
		v, err := readVarint(r)
		if err != nil {
			return 0, 0, err
		}
		z := zigzag(v)
		if z < -1<<15 || z >= 1<<15 {
			return 0, 0, fmt.Errorf("field id %d out of range", z)
		}
		id = int16(z)
	}
	*last = id
	return id, typ, nil
}

// skip reads past a value of compact type typ, depth levels deep.
func skip(r io.ByteReader, typ byte, depth int) error {
	if depth > maxDepth {
		return errors.New("nested too deep")
	}
	switch typ {
	case tcTrue, tcFalse:
		return nil
	case tcByte:
		_, err := r.ReadByte()
		return err
	case tcI16, tcI32, tcI64:
		_, err := readVarint(r)
		return err
	case tcDouble:
		for range 8 {
			if _, err := r.ReadByte(); err != nil {
				return err
			}
		}
		return nil
	case tcBinary:
		n, err := readVarint(r)
		if err != nil {
			return err
		}
		if n > maxSkipLen {
			return fmt.Errorf("a string of %d bytes", n)
		}
		for range n {
			if _, err := r.ReadByte(); err != nil {
				return err
			}
		}
		return nil
	case tcStruct:
		var last int16
		for {
			_, t, err := fieldHeader(r, &last)
			if err != nil {
				return err
			}
			if t == tcStop {
				return nil
			}
			if err := skip(r, t, depth+1); err != nil {
				return err
			}
		}
	case tcList, tcSet:
		b, err := r.ReadByte()
		if err != nil {
			return err
		}
		n, et := uint64(b>>4), b&0x0f
		if n == 15 {
			if n, err = readVarint(r); err != nil {
				return err
			}
		}
		if n > maxSkipLen {
			return fmt.Errorf("a list of %d elements", n)
		}
		for range n {
			if err := skipElem(r, et, depth+1); err != nil {
				return err
			}
		}
		return nil
	case tcMap:
		n, err := readVarint(r)
		if err != nil || n == 0 {
			return err
		}
		if n > maxSkipLen {
			return fmt.Errorf("a map of %d entries", n)
		}
		kv, err := r.ReadByte()
		if err != nil {
			return err
		}
		for range n {
			if err := skipElem(r, kv>>4, depth+1); err != nil {
				return err
			}
			if err := skipElem(r, kv&0x0f, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("unknown type %d", typ)
}

// skipElem skips a collection element: booleans there take a byte.
func skipElem(r io.ByteReader, typ byte, depth int) error {
	if typ == tcTrue || typ == tcFalse {
		_, err := r.ReadByte()
		return err
	}
	return skip(r, typ, depth)
}

// readVarint reads an unsigned LEB128 varint of at most 10 bytes.
func readVarint(r io.ByteReader) (uint64, error) {
	v, err := binary.ReadUvarint(r)
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return 0, err
	}
	return v, nil
}

func zigzag(v uint64) int64 { return int64(v>>1) ^ -int64(v&1) }
