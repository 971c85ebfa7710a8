package main

import (
	"bytes"
	"os"
	"testing"

	"github.com/bloomlab/bloomlab"
	"github.com/bloomlab/bloomlab/sbbf"
)

// TestSBBFParquetExportImport: export -format parquet writes the header
// and bitset a Parquet file stores, import -format parquet reads them
// back into an sbbf file equal to the one built, answering the same.
func TestSBBFParquetExportImport(t *testing.T) {
	t.Chdir(t.TempDir())
	var keys bytes.Buffer
	for i := range 3000 {
		keys.WriteString("user-")
		keys.WriteString(string(rune('a' + i%26)))
		keys.WriteString(string(rune('0' + i%10)))
		keys.WriteByte(byte('0' + i/300%10))
		keys.WriteString("\n")
	}
	os.WriteFile("keys.txt", keys.Bytes(), 0o644)
	for _, c := range [][]string{
		{"build", "-kind", "sbbf", "-n", "3000", "-bits-per-key", "10", "-parquet-sizing", "-o", "f.blf", "keys.txt"},
		{"export", "-format", "parquet", "-o", "f.parquet-bloom", "f.blf"},
		{"import", "-format", "parquet", "-o", "g.blf", "f.parquet-bloom"},
	} {
		if _, e, code := invoke(c, ""); code != 0 {
			t.Fatalf("%v: exit %d: %s", c, code, e)
		}
	}
	load := func(name string) *sbbf.Filter {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := bloomlab.Unmarshal(data)
		if err != nil {
			t.Fatal(err)
		}
		return f.(*sbbf.Filter)
	}
	f, g := load("f.blf"), load("g.blf")
	if !f.Equal(g) || f.Blocks() != sbbf.BlocksFor(3000, 10) {
		t.Fatalf("imported filter differs (%d and %d blocks)", f.Blocks(), g.Blocks())
	}
	raw, _ := os.ReadFile("f.parquet-bloom")
	if !bytes.HasSuffix(raw, f.Bytes()) || len(raw) != len(f.Bytes())+16 {
		t.Errorf("export: %d bytes, want a 16-byte header and the %d-byte bitset", len(raw), len(f.Bytes()))
	}
	if out, e, code := invoke([]string{"query", "-c", "g.blf", "keys.txt"}, ""); code != 0 || out != "3000\n" {
		t.Errorf("query of the imported filter: %q, exit %d, %s", out, code, e)
	}
	os.WriteFile("bad", append([]byte{0x15, 0x42}, raw[3:]...), 0o644) // numBytes 33 for 3776
	if _, e, code := invoke([]string{"import", "-format", "parquet", "-o", "h.blf", "bad"}, ""); code == 0 || !bytes.Contains([]byte(e), []byte("numBytes")) {
		t.Errorf("import of a bad header: exit %d, %s", code, e)
	}
}
