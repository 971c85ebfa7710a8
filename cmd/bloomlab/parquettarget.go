package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/bloomlab/bloomlab"
	"github.com/bloomlab/bloomlab/internal/kind"
	"github.com/bloomlab/bloomlab/sbbf"
)

// A parquet target, parquet://FILE.parquet?column=NAME, is the split-block
// Bloom filters a Parquet file holds for one column, one per row group: a
// read-only target of query and info. A key may be in the file when any
// row group's filter may hold it, or when a row group has no filter for
// the column (nothing rules the key out there). Each key line is converted
// to the value's plain encoding by the column's physical type, as Parquet
// hashes it: INT32 and INT64 from decimal text, FLOAT and DOUBLE from
// decimal (or Go float) text, little-endian; BYTE_ARRAY and
// FIXED_LEN_BYTE_ARRAY as the raw line. INT96 and BOOLEAN columns are
// refused. A nested column is named by its dotted path (a.b.c).
//
// parquet-go reads the file's metadata (the schema and every column
// chunk's bloom_filter_offset); the filters themselves are read with
// sbbf.ReadParquetPrefix, which validates them before it allocates; the
// row groups' filters together must fit in the file (they are disjoint), so
// a footer pointing many row groups at one filter cannot multiply it.
func init() { registerTarget(openParquetTarget, "parquet") }

type parquetTarget struct {
	name   string // as given
	path   string
	column string
}

func openParquetTarget(name string) (target, error) {
	rest := name[len("parquet://"):]
	path, rawQuery, _ := strings.Cut(rest, "?")
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return nil, usagef("%s: %v", name, err)
	}
	column := q.Get("column")
	for k := range q {
		if k != "column" {
			return nil, usagef("%s: unknown parameter %q (parquet://FILE.parquet?column=NAME)", name, k)
		}
	}
	if path == "" || column == "" || len(q["column"]) != 1 {
		return nil, usagef("%s: want parquet://FILE.parquet?column=NAME (one column; a nested one by its dotted path)", name)
	}
	return &parquetTarget{name: name, path: path, column: column}, nil
}

func (t *parquetTarget) String() string { return t.name }

func (t *parquetTarget) readOnly() error {
	return usagef("%s: a Parquet file is a read-only target (query, info); build -kind sbbf and export -format parquet make a filter to embed", t.name)
}

func (t *parquetTarget) checkBuild(*env, string, bool, []string) error { return t.readOnly() }
func (t *parquetTarget) write(*env, bloomlab.Filter, bool) error       { return t.readOnly() }
func (t *parquetTarget) add(*env, []string) error                      { return t.readOnly() }

// parquetColumn is one column's filters, one per row group (nil: the row
// group has no filter for the column), and the conversion of key lines.
type parquetColumn struct {
	filters []*sbbf.Filter
	kind    parquet.Kind
	encode  func(buf []byte, key []byte) ([]byte, error)
}

// load opens the file and reads the column's filters.
func (t *parquetTarget) load() (*parquetColumn, error) {
	fh, err := os.Open(t.path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", t.path)
	}
	size := st.Size()
	if err := checkParquetFooter(fh, size); err != nil {
		return nil, fmt.Errorf("%s: %w", t.path, err)
	}
	f, err := openParquet(fh, size)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.path, err)
	}
	leaf, ok := f.Schema().Lookup(strings.Split(t.column, ".")...)
	if !ok || leaf.Node == nil || !leaf.Node.Leaf() {
		return nil, fmt.Errorf("%s: no column %q (columns: %s)", t.path, t.column, columnNames(f))
	}
	c := &parquetColumn{kind: leaf.Node.Type().Kind()}
	if c.encode, err = keyEncoder(leaf.Node.Type()); err != nil {
		return nil, fmt.Errorf("%s: column %s: %w", t.path, t.column, err)
	}
	md := f.Metadata()
	var total int64 // bytes of the filters read: disjoint in a valid file
	for i, rg := range md.RowGroups {
		if leaf.ColumnIndex >= len(rg.Columns) {
			return nil, fmt.Errorf("%s: row group %d has %d columns, not column %d", t.path, i, len(rg.Columns), leaf.ColumnIndex)
		}
		cc := rg.Columns[leaf.ColumnIndex]
		off := cc.MetaData.BloomFilterOffset
		if off == 0 {
			c.filters = append(c.filters, nil)
			continue
		}
		if off < 0 || off >= size {
			return nil, fmt.Errorf("%s: row group %d: bloom_filter_offset %d outside the file of %d bytes", t.path, i, off, size)
		}
		if cc.CryptoMetadata.Value != nil {
			return nil, fmt.Errorf("%s: row group %d: the column is encrypted", t.path, i)
		}
		r := bufio.NewReader(io.NewSectionReader(fh, off, size-off))
		sf, err := sbbf.ReadParquetPrefix(r)
		if err != nil {
			return nil, fmt.Errorf("%s: row group %d: %w", t.path, i, err)
		}
		if total += int64(sf.Blocks()) * sbbf.BlockBytes; total > size {
			return nil, fmt.Errorf("%s: row group %d: the column's filters overlap (%d bytes of filters in a file of %d): a corrupt file", t.path, i, total, size)
		}
		c.filters = append(c.filters, sf)
	}
	return c, nil
}

// openParquet opens the file's metadata with parquet-go, a panic in its
// parser recovered into an error.
func openParquet(fh *os.File, size int64) (f *parquet.File, err error) {
	defer func() {
		if p := recover(); p != nil {
			f, err = nil, fmt.Errorf("not a readable Parquet file (the parser failed: %v)", p)
		}
	}()
	return parquet.OpenFile(fh, size, parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true))
}

// checkParquetFooter validates the file's footer before parquet-go reads
// it, whose decoder allocates what the bytes claim: the footer's length
// (at most the file less its two magic numbers, where parquet-go would
// allocate up to 4 GiB first) and, in the FileMetaData's Thrift, every
// string's length and every list's, set's and map's count against the
// bytes left (each element takes at least one), with nesting at most
// parquetMaxDepth deep. What parquet-go then allocates is a bounded
// multiple of the footer's bytes. An encrypted footer (PARE) is refused.
func checkParquetFooter(r io.ReaderAt, size int64) error {
	var tail [8]byte
	if size < 12 {
		return fmt.Errorf("not a Parquet file (%d bytes, fewer than its two magic numbers and footer length)", size)
	}
	if _, err := r.ReadAt(tail[:], size-8); err != nil {
		return err
	}
	switch string(tail[4:]) {
	case "PAR1":
	case "PARE":
		return fmt.Errorf("an encrypted footer (PARE): bloomlab reads only plaintext Parquet files")
	default:
		return fmt.Errorf("not a Parquet file (it does not end in PAR1)")
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if n == 0 || n > size-12 {
		return fmt.Errorf("not a Parquet file: a footer of %d bytes in a file of %d", n, size)
	}
	footer := make([]byte, n)
	if _, err := r.ReadAt(footer, size-8-n); err != nil {
		return err
	}
	p := &thriftScan{b: footer}
	if err := p.skip(12, 0); err != nil { // FileMetaData is a struct
		return fmt.Errorf("corrupt Parquet footer at byte %d of %d: %w", p.i, n, err)
	}
	return nil
}

// parquetMaxDepth bounds the nesting of a footer's Thrift values (a valid
// FileMetaData nests about eight deep).
const parquetMaxDepth = 64

// thriftScan walks Thrift compact-protocol values in b without
// allocating.
type thriftScan struct {
	b []byte
	i int
}

func (p *thriftScan) byte() (byte, error) {
	if p.i >= len(p.b) {
		return 0, io.ErrUnexpectedEOF
	}
	p.i++
	return p.b[p.i-1], nil
}

func (p *thriftScan) uvarint() (uint64, error) {
	v, n := binary.Uvarint(p.b[p.i:])
	if n <= 0 {
		return 0, fmt.Errorf("bad varint")
	}
	p.i += n
	return v, nil
}

// count reads a length or count and checks it against the bytes left.
func (p *thriftScan) count(v uint64, what string) (int, error) {
	if v > uint64(len(p.b)-p.i) {
		return 0, fmt.Errorf("%s of %d with %d bytes left", what, v, len(p.b)-p.i)
	}
	return int(v), nil
}

// skip passes over one value of compact type typ.
func (p *thriftScan) skip(typ byte, depth int) error {
	if depth > parquetMaxDepth {
		return fmt.Errorf("nested more than %d deep", parquetMaxDepth)
	}
	switch typ {
	case 1, 2: // bool in a field header
		return nil
	case 3:
		_, err := p.byte()
		return err
	case 4, 5, 6:
		_, err := p.uvarint()
		return err
	case 7:
		if len(p.b)-p.i < 8 {
			return io.ErrUnexpectedEOF
		}
		p.i += 8
		return nil
	case 8:
		v, err := p.uvarint()
		if err != nil {
			return err
		}
		n, err := p.count(v, "a string")
		p.i += n
		return err
	case 9, 10:
		h, err := p.byte()
		if err != nil {
			return err
		}
		v, et := uint64(h>>4), h&0x0f
		if v == 15 {
			if v, err = p.uvarint(); err != nil {
				return err
			}
		}
		n, err := p.count(v, "a list")
		if err != nil {
			return err
		}
		for range n {
			if err := p.elem(et, depth+1); err != nil {
				return err
			}
		}
		return nil
	case 11:
		v, err := p.uvarint()
		if err != nil || v == 0 {
			return err
		}
		n, err := p.count(v, "a map")
		if err != nil {
			return err
		}
		kv, err := p.byte()
		if err != nil {
			return err
		}
		for range n {
			if err := p.elem(kv>>4, depth+1); err != nil {
				return err
			}
			if err := p.elem(kv&0x0f, depth+1); err != nil {
				return err
			}
		}
		return nil
	case 12:
		for {
			h, err := p.byte()
			if err != nil {
				return err
			}
			if h == 0 {
				return nil
			}
			if h>>4 == 0 { // an explicit field id
				if _, err := p.uvarint(); err != nil {
					return err
				}
			}
			if err := p.skip(h&0x0f, depth+1); err != nil {
				return err
			}
		}
	}
	return fmt.Errorf("unknown Thrift type %d", typ)
}

// elem passes over a collection element: a boolean there takes a byte.
func (p *thriftScan) elem(typ byte, depth int) error {
	if typ == 1 || typ == 2 {
		_, err := p.byte()
		return err
	}
	return p.skip(typ, depth)
}

func columnNames(f *parquet.File) string {
	var names []string
	for _, p := range f.Schema().Columns() {
		names = append(names, strings.Join(p, "."))
	}
	return strings.Join(names, ", ")
}

// keyEncoder returns the conversion of a key line to the plain encoding
// of a value of type typ.
func keyEncoder(typ parquet.Type) (func(buf, key []byte) ([]byte, error), error) {
	switch typ.Kind() {
	case parquet.Int32:
		return func(buf, key []byte) ([]byte, error) {
			v, err := strconv.ParseInt(string(key), 10, 32)
			if err != nil {
				return nil, fmt.Errorf("not an INT32: %v", err.(*strconv.NumError).Err)
			}
			return binary.LittleEndian.AppendUint32(buf[:0], uint32(int32(v))), nil
		}, nil
	case parquet.Int64:
		return func(buf, key []byte) ([]byte, error) {
			v, err := strconv.ParseInt(string(key), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("not an INT64: %v", err.(*strconv.NumError).Err)
			}
			return binary.LittleEndian.AppendUint64(buf[:0], uint64(v)), nil
		}, nil
	case parquet.Float:
		return func(buf, key []byte) ([]byte, error) {
			v, err := strconv.ParseFloat(string(key), 32)
			if err != nil {
				return nil, fmt.Errorf("not a FLOAT: %v", err.(*strconv.NumError).Err)
			}
			return binary.LittleEndian.AppendUint32(buf[:0], math.Float32bits(float32(v))), nil
		}, nil
	case parquet.Double:
		return func(buf, key []byte) ([]byte, error) {
			v, err := strconv.ParseFloat(string(key), 64)
			if err != nil {
				return nil, fmt.Errorf("not a DOUBLE: %v", err.(*strconv.NumError).Err)
			}
			return binary.LittleEndian.AppendUint64(buf[:0], math.Float64bits(v)), nil
		}, nil
	case parquet.ByteArray, parquet.FixedLenByteArray:
		return func(_, key []byte) ([]byte, error) { return key, nil }, nil
	}
	return nil, fmt.Errorf("physical type %s: bloomlab queries INT32, INT64, FLOAT, DOUBLE, BYTE_ARRAY and FIXED_LEN_BYTE_ARRAY columns", typ.Kind())
}

// groups calls fn with every key of files and the row groups that may hold
// it (in a buffer reused between calls).
func (t *parquetTarget) groups(e *env, files []string, fn func(key []byte, groups []int) error) error {
	c, err := t.load()
	if err != nil {
		return err
	}
	var buf []byte
	var groups []int
	return e.forEachKey(files, func(key []byte, file string, line int) error {
		v, err := c.encode(buf, key)
		if err != nil {
			return fmt.Errorf("%s:%d: key %s: %v (column %s)", sourceName(file), line, quoteKey(key), err, t.column)
		}
		buf = v[:0:cap(v)]
		h := sbbf.Hash(v)
		groups = groups[:0]
		for i, f := range c.filters {
			if f == nil || f.ContainsHash(h) {
				groups = append(groups, i)
			}
		}
		return fn(key, groups)
	})
}

func (t *parquetTarget) query(e *env, files []string, fn func(key []byte, present bool) error) error {
	return t.groups(e, files, func(key []byte, groups []int) error { return fn(key, len(groups) > 0) })
}

func (t *parquetTarget) info(e *env) (infoReport, error) {
	c, err := t.load()
	if err != nil {
		return infoReport{}, err
	}
	r := infoReport{File: t.name, Kind: "sbbf", FPRMethod: "per row group: the state's rate (sbbf EstimatedFPR)"}
	with := 0
	for i, f := range c.filters {
		if f == nil {
			r.Fields = append(r.Fields, kind.Field{Name: fmt.Sprintf("row group %d", i), Value: "no filter", Note: "every key may be there", Warn: true})
			continue
		}
		with++
		r.Bits += f.Bits()
		r.Fields = append(r.Fields, kind.Field{Name: fmt.Sprintf("row group %d", i), Value: fmt.Sprintf("%d blocks", f.Blocks()),
			Note: fmt.Sprintf("fill %.3g, rate of the state %.3g", f.FillRatio(), f.EstimatedFPR())})
	}
	r.Fields = append([]kind.Field{
		{Name: "column", Value: t.column, Note: "physical type " + c.kind.String()},
		{Name: "row groups", Value: len(c.filters), Note: fmt.Sprintf("%d with a filter", with)},
	}, r.Fields...)
	r.FPR = fptr(math.NaN())
	return r, nil
}
