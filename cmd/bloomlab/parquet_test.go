package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"

	"github.com/bloomlab/bloomlab"
	"github.com/bloomlab/bloomlab/sbbf"
)

type parquetRow struct {
	ID    int64   `parquet:"id"`
	Name  string  `parquet:"name"`
	Score float64 `parquet:"score"`
	Small int32   `parquet:"small"`
	Ratio float32 `parquet:"ratio"`
	Flag  bool    `parquet:"flag"`
	Addr  struct {
		City string `parquet:"city"`
	} `parquet:"addr"`
	Plain string `parquet:"plain"` // no filter
}

const parquetRows, parquetGroupRows = 3000, 1000

func parquetValue(i int) parquetRow {
	var r parquetRow
	r.ID = int64(i)*7919 - 5000
	r.Name = "user-" + strconv.Itoa(i)
	r.Score = float64(i) * 0.25
	r.Small = int32(i * 3)
	r.Ratio = float32(i) / 8
	r.Flag = i%2 == 0
	r.Addr.City = "city-" + strconv.Itoa(i%500)
	r.Plain = "p" + strconv.Itoa(i)
	return r
}

// writeParquet writes rows 0 … parquetRows−1 with parquet-go, in row
// groups of 1000, with split-block filters of 10 bits per value on every
// column but plain.
func writeParquet(t *testing.T, path string) {
	t.Helper()
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[parquetRow](fh, parquet.MaxRowsPerRowGroup(parquetGroupRows), parquet.BloomFilters(
		parquet.SplitBlockFilter(10, "id"), parquet.SplitBlockFilter(10, "name"), parquet.SplitBlockFilter(10, "score"),
		parquet.SplitBlockFilter(10, "small"), parquet.SplitBlockFilter(10, "ratio"), parquet.SplitBlockFilter(10, "flag"),
		parquet.SplitBlockFilter(10, "addr", "city")))
	rows := make([]parquetRow, parquetRows)
	for i := range rows {
		rows[i] = parquetValue(i)
	}
	for i := 0; i < parquetRows; i += parquetGroupRows {
		if _, err := w.Write(rows[i : i+parquetGroupRows]); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := fh.Close(); err != nil {
		t.Fatal(err)
	}
}

// parquetGoGroups answers as parquet-go's own Check: the row groups whose
// filter of the column may hold v (or that have none).
func parquetGoGroups(t *testing.T, f *parquet.File, col int, v parquet.Value) []int {
	var out []int
	for i, rg := range f.RowGroups() {
		bf := rg.ColumnChunks()[col].BloomFilter()
		if bf == nil {
			out = append(out, i)
			continue
		}
		ok, err := bf.Check(v)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			out = append(out, i)
		}
	}
	return out
}

// TestParquetQueryInterop: a file parquet-go wrote with column filters is
// queried with parquet://FILE?column=NAME; for every column type bloomlab
// converts, and 3000 present and 3000 absent keys, query -row-groups
// prints exactly the row groups parquet-go's Check accepts; query -c
// counts the keys any row group accepts.
func TestParquetQueryInterop(t *testing.T) {
	t.Chdir(t.TempDir())
	writeParquet(t, "data.parquet")
	fh, err := os.Open("data.parquet")
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	st, _ := fh.Stat()
	pf, err := parquet.OpenFile(fh, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	if len(pf.RowGroups()) != 3 {
		t.Fatalf("%d row groups, want 3", len(pf.RowGroups()))
	}
	type column struct {
		name string
		key  func(i int) (string, any) // line, Go value
	}
	for _, c := range []column{
		{"id", func(i int) (string, any) { v := parquetValue(i).ID; return strconv.FormatInt(v, 10), v }},
		{"name", func(i int) (string, any) { v := parquetValue(i).Name; return v, v }},
		{"score", func(i int) (string, any) { v := parquetValue(i).Score; return strconv.FormatFloat(v, 'g', -1, 64), v }},
		{"small", func(i int) (string, any) { v := parquetValue(i).Small; return strconv.Itoa(int(v)), v }},
		{"ratio", func(i int) (string, any) {
			v := parquetValue(i).Ratio
			return strconv.FormatFloat(float64(v), 'g', -1, 32), v
		}},
		{"addr.city", func(i int) (string, any) { v := parquetValue(i).Addr.City; return v, v }},
		{"plain", func(i int) (string, any) { v := parquetValue(i).Plain; return v, v }},
	} {
		leaf, ok := pf.Schema().Lookup(strings.Split(c.name, ".")...)
		if !ok {
			t.Fatalf("no column %s", c.name)
		}
		var keys, want strings.Builder
		wantAny := 0
		for i := -parquetRows; i < parquetRows; i++ { // negative i: absent values
			line, v := c.key(i)
			keys.WriteString(line + "\n")
			groups := parquetGoGroups(t, pf, leaf.ColumnIndex, parquet.ValueOf(v))
			if len(groups) == 0 {
				continue
			}
			wantAny++
			want.WriteString(line)
			for j, g := range groups {
				want.WriteString(map[bool]string{true: "\t", false: ","}[j == 0] + strconv.Itoa(g))
			}
			want.WriteString("\n")
		}
		os.WriteFile("keys.txt", []byte(keys.String()), 0o644)
		target := "parquet://data.parquet?column=" + c.name
		out, e, code := invoke([]string{"query", "-row-groups", target, "keys.txt"}, "")
		if code != 0 || out != want.String() {
			t.Errorf("%s: query -row-groups differs from parquet-go's Check (exit %d, %s)", c.name, code, e)
		}
		out, _, _ = invoke([]string{"query", "-c", target, "keys.txt"}, "")
		if out != strconv.Itoa(wantAny)+"\n" {
			t.Errorf("%s: query -c = %q, parquet-go accepts %d", c.name, out, wantAny)
		}
		if c.name == "plain" && wantAny != 2*parquetRows {
			t.Errorf("plain has no filter: every key may be present, got %d", wantAny)
		}
		if c.name == "id" && (wantAny < parquetRows || wantAny > parquetRows+parquetRows/20) {
			t.Errorf("id: %d keys accepted of %d present and %d absent", wantAny, parquetRows, parquetRows)
		}
		t.Logf("%s: %d of %d keys may be present (%d present)", c.name, wantAny, 2*parquetRows, parquetRows)
	}
	// Refusals: a BOOLEAN column, a missing column, a key that is not an
	// INT64, writes.
	os.WriteFile("bad.txt", []byte("12\nx\n"), 0o644)
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"query", "parquet://data.parquet?column=flag", "keys.txt"}, 2, "BOOLEAN"},
		{[]string{"query", "parquet://data.parquet?column=nope", "keys.txt"}, 2, "no column"},
		{[]string{"query", "parquet://data.parquet?column=id", "bad.txt"}, 2, "bad.txt:2"},
		{[]string{"query", "parquet://data.parquet", "keys.txt"}, 2, "column=NAME"},
		{[]string{"add", "parquet://data.parquet?column=id", "keys.txt"}, 2, "read-only"},
		{[]string{"query", "-row-groups", "x.blf", "keys.txt"}, 2, "parquet://"},
	} {
		if _, e, code := invoke(c.args, ""); code != c.code || !strings.Contains(e, c.msg) {
			t.Errorf("%v: exit %d, %s; want %d and %q", c.args, code, e, c.code, c.msg)
		}
	}
	if out, e, code := invoke([]string{"info", "parquet://data.parquet?column=name"}, ""); code != 0 || !strings.Contains(out, "row group 2") {
		t.Errorf("info: exit %d: %s %s", code, out, e)
	}
}

// TestParquetImportInterop: the bytes at a column chunk's
// bloom_filter_offset in a file parquet-go wrote, read with import
// -format parquet, are an sbbf filter equal to the one bloomlab builds
// (build -kind sbbf -parquet-sizing) from the same values and size.
func TestParquetImportInterop(t *testing.T) {
	t.Chdir(t.TempDir())
	writeParquet(t, "data.parquet")
	data, err := os.ReadFile("data.parquet")
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := pf.Schema().Lookup("name")
	for g, rg := range pf.Metadata().RowGroups {
		md := rg.Columns[leaf.ColumnIndex].MetaData
		off, n := md.BloomFilterOffset, int64(md.BloomFilterLength)
		if off <= 0 {
			t.Fatalf("row group %d: no filter", g)
		}
		if n <= 0 {
			t.Fatalf("row group %d: no bloom_filter_length", g)
		}
		os.WriteFile("f.bloom", data[off:off+n], 0o644)
		var names strings.Builder
		for i := g * parquetGroupRows; i < (g+1)*parquetGroupRows; i++ {
			names.WriteString(parquetValue(i).Name + "\n")
		}
		os.WriteFile("names.txt", []byte(names.String()), 0o644)
		for _, c := range [][]string{
			{"import", "-format", "parquet", "-o", "imported.blf", "f.bloom"},
			{"build", "-kind", "sbbf", "-n", strconv.Itoa(parquetGroupRows), "-bits-per-key", "10", "-parquet-sizing", "-o", "built.blf", "names.txt"},
			{"export", "-format", "parquet", "-o", "again.bloom", "built.blf"},
		} {
			if _, e, code := invoke(c, ""); code != 0 {
				t.Fatalf("row group %d: %v: exit %d: %s", g, c, code, e)
			}
		}
		load := func(name string) *sbbf.Filter {
			b, _ := os.ReadFile(name)
			f, err := bloomlab.Unmarshal(b)
			if err != nil {
				t.Fatal(err)
			}
			return f.(*sbbf.Filter)
		}
		imported, built := load("imported.blf"), load("built.blf")
		if !imported.Equal(built) {
			t.Errorf("row group %d: imported filter (%d blocks) differs from the one built (%d blocks)", g, imported.Blocks(), built.Blocks())
		}
		again, _ := os.ReadFile("again.bloom")
		if !bytes.Equal(again, data[off:off+n]) {
			t.Errorf("row group %d: export -format parquet wrote %d bytes differing from parquet-go's %d", g, len(again), n)
		}
	}
}

// TestParquetFooterBounded: a crafted Parquet file of a few bytes whose
// footer claims more than it holds (a footer length of 4 GiB, a schema
// list of 2^28 elements, a string of 2^40 bytes, nesting a thousand deep)
// is refused with an error, exit 2 (query is grep-like), having allocated little: parquet-go's
// decoder allocates what the bytes claim (the list alone: a fatal "out of
// memory" that no recover catches).
func TestParquetFooterBounded(t *testing.T) {
	t.Chdir(t.TempDir())
	os.WriteFile("keys.txt", []byte("5\n"), 0o644)
	file := func(meta []byte, claim int) []byte {
		b := append([]byte("PAR1"), meta...)
		b = binary.LittleEndian.AppendUint32(b, uint32(claim))
		return append(b, "PAR1"...)
	}
	deep := bytes.Repeat([]byte{0x1c}, 1000) // field +1, a struct, nested
	for _, c := range []struct {
		name string
		data []byte
		msg  string
	}{
		{"footer length", file([]byte{0x15, 0x02, 0}, 1<<32-1), "footer of 4294967295 bytes"},
		{"schema list", file(append([]byte{0x15, 0x02, 0x19, 0xfc}, binary.AppendUvarint(nil, 1<<28)...), 9), "a list of 268435456"},
		{"string", file(append([]byte{0x15, 0x02, 0x58}, binary.AppendUvarint(nil, 1<<40)...), 9), "a string of"},
		{"nesting", file(deep, len(deep)), "nested more than"},
		{"encrypted", append(file([]byte{0}, 1)[:9], "PARE"...), "encrypted"},
		{"short", []byte("PAR1PAR1"), "not a Parquet file"},
	} {
		os.WriteFile("c.parquet", c.data, 0o644)
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		_, e, code := invoke([]string{"query", "parquet://c.parquet?column=id", "keys.txt"}, "")
		runtime.ReadMemStats(&m1)
		if code != 2 || !strings.Contains(e, c.msg) {
			t.Errorf("%s: exit %d, %q; want 2 and %q", c.name, code, e, c.msg)
		}
		if a := m1.TotalAlloc - m0.TotalAlloc; a > 16<<20 {
			t.Errorf("%s: %d bytes allocated for a file of %d", c.name, a, len(c.data))
		}
	}
}

// TestParquetFiltersBounded: a file whose footer points 1000 row groups
// at one filter of 160 KiB is refused (the filters of a Parquet file are
// disjoint: together they fit in it), having allocated about the file's
// size, not the 160 MB the row groups would read.
func TestParquetFiltersBounded(t *testing.T) {
	t.Chdir(t.TempDir())
	type row struct {
		ID int64 `parquet:"id"`
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[row](&buf, parquet.BloomFilters(parquet.SplitBlockFilter(10, "id")))
	rows := make([]row, 1<<17)
	for i := range rows {
		rows[i].ID = int64(i)
	}
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	md := *f.Metadata()
	for len(md.RowGroups) < 1000 {
		md.RowGroups = append(md.RowGroups, md.RowGroups[0])
	}
	footer, err := thrift.Marshal(new(thrift.CompactProtocol), &md)
	if err != nil {
		t.Fatal(err)
	}
	n := int(binary.LittleEndian.Uint32(data[len(data)-8:]))
	crafted := append(append([]byte(nil), data[:len(data)-8-n]...), footer...)
	crafted = binary.LittleEndian.AppendUint32(crafted, uint32(len(footer)))
	crafted = append(crafted, "PAR1"...)
	os.WriteFile("c.parquet", crafted, 0o644)
	os.WriteFile("keys.txt", []byte("5\n"), 0o644)
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	_, e, code := invoke([]string{"query", "parquet://c.parquet?column=id", "keys.txt"}, "")
	runtime.ReadMemStats(&m1)
	if code != 2 || !strings.Contains(e, "overlap") {
		t.Errorf("exit %d, %q; want 2 and the filters overlap", code, e)
	}
	if a := m1.TotalAlloc - m0.TotalAlloc; a > 8*uint64(len(crafted)) {
		t.Errorf("%d bytes allocated for a file of %d", a, len(crafted))
	}
}

// FuzzParquetFooter: whatever its footer, a Parquet file is read by the
// parquet:// target (checkParquetFooter, parquet-go, the filters) without
// a panic, and allocates a bounded multiple of the file's size.
func FuzzParquetFooter(f *testing.F) {
	dir := f.TempDir()
	path := dir + "/seed.parquet"
	fh, err := os.Create(path)
	if err != nil {
		f.Fatal(err)
	}
	type row struct {
		ID   int64  `parquet:"id"`
		Name string `parquet:"name"`
	}
	w := parquet.NewGenericWriter[row](fh, parquet.MaxRowsPerRowGroup(50), parquet.BloomFilters(parquet.SplitBlockFilter(10, "id")))
	for i := range 100 {
		w.Write([]row{{int64(i), strconv.Itoa(i)}})
	}
	w.Close()
	fh.Close()
	data, _ := os.ReadFile(path)
	n := int(binary.LittleEndian.Uint32(data[len(data)-8:]))
	body := data[:len(data)-8-n]
	f.Add(data[len(data)-8-n : len(data)-8])
	f.Add([]byte{0x15, 0x02, 0x19, 0xfc, 0x80, 0x80, 0x80, 0x80, 0x01})
	f.Fuzz(func(t *testing.T, footer []byte) {
		b := append(append([]byte(nil), body...), footer...)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(footer)))
		b = append(b, "PAR1"...)
		p := dir + "/f.parquet"
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, col := range []string{"id", "name"} {
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			c, err := (&parquetTarget{path: p, column: col}).load()
			runtime.ReadMemStats(&m1)
			if a := m1.TotalAlloc - m0.TotalAlloc; a > 64<<20 && a > 64*uint64(len(b)) {
				t.Fatalf("%d bytes allocated for a file of %d", a, len(b))
			}
			if err == nil && c == nil {
				t.Fatal("no column and no error")
			}
		}
	})
}
