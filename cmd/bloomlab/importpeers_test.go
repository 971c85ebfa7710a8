package main

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportPeers: import -format boom-classic, boom-partitioned and
// blobloom (with -hash xxhash64) make bloom and partitioned files that
// query and take add; blobloom without -hash, -hash with another format
// and a mismatched -kind are usage errors; a corrupt dump is refused.
func TestImportPeers(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// A classic filter of m = 64 bits, all set: every key is present.
	c := binary.BigEndian.AppendUint64(nil, 3)
	c = binary.BigEndian.AppendUint64(c, 64)
	c = binary.BigEndian.AppendUint64(c, 4)
	c = append(c, 1, 1)
	c = binary.BigEndian.AppendUint64(c, 64)
	c = binary.BigEndian.AppendUint64(c, 8)
	c = append(c, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)
	classic := write("classic.boom", c)
	// A partitioned filter of k = 2 partitions of 5 bits, empty.
	p := binary.BigEndian.AppendUint64(nil, 10)
	for _, v := range []uint64{2, 5, 0, 2} {
		p = binary.BigEndian.AppendUint64(p, v)
	}
	for range 2 {
		p = append(p, 1, 1)
		p = binary.BigEndian.AppendUint64(p, 5)
		p = binary.BigEndian.AppendUint64(p, 1)
		p = append(p, 0)
	}
	part := write("part.boom", p)
	b := make([]byte, 64+128)
	copy(b, "blobloom")
	binary.LittleEndian.PutUint32(b[12:], 1)
	binary.LittleEndian.PutUint32(b[16:], 5)
	blob := write("f.blobloom", b)

	run := func(args ...string) (string, string, int) { return invoke(args, "") }
	for _, tc := range []struct {
		format, in, kind string
		extra            []string
	}{
		{"boom-classic", classic, "bloom", nil},
		{"boom-partitioned", part, "partitioned", nil},
		{"blobloom", blob, "bloom", []string{"-hash", "xxhash64"}},
	} {
		out := filepath.Join(dir, tc.format+".blf")
		if _, e, code := run(append([]string{"import", "-format", tc.format, "-o", out}, append(tc.extra, tc.in)...)...); code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.format, code, e)
		}
		o, e, code := run("info", out)
		if code != 0 || !strings.Contains(o, tc.kind) {
			t.Fatalf("%s: info: exit %d: %s%s", tc.format, code, o, e)
		}
		if tc.format == "boom-classic" {
			continue // all ones
		}
		if o, _, code := invoke([]string{"query", out}, "k1\n"); code != 1 || o != "" {
			t.Fatalf("%s: k1 in the empty import: exit %d, %q", tc.format, code, o)
		}
		if _, e, code := invoke([]string{"add", out}, "k1\n"); code != 0 {
			t.Fatalf("%s: add: exit %d: %s", tc.format, code, e)
		}
		if o, e, code := invoke([]string{"query", out}, "k1\n"); code != 0 || o != "k1\n" {
			t.Fatalf("%s: k1 after add: exit %d, %q %s", tc.format, code, o, e)
		}
	}
	if o, e, code := invoke([]string{"query", filepath.Join(dir, "boom-classic.blf"), "-"}, "x\ny\n"); code != 0 || strings.Count(o, "\n") != 2 {
		t.Errorf("query of the all-ones classic filter: exit %d: %q %s", code, o, e)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"import", "-format", "blobloom", "-o", filepath.Join(dir, "x.blf"), blob}, "needs -hash"},
		{[]string{"import", "-format", "blobloom", "-hash", "fnv", "-o", filepath.Join(dir, "x.blf"), blob}, "not supported"},
		{[]string{"import", "-format", "boom-classic", "-hash", "xxhash64", "-o", filepath.Join(dir, "x.blf"), classic}, "-hash goes with -format blobloom"},
		{[]string{"import", "-format", "boom-classic", "-kind", "partitioned", "-o", filepath.Join(dir, "x.blf"), classic}, "imports as -kind bloom"},
		{[]string{"import", "-format", "boom-classic", "-o", filepath.Join(dir, "x.blf"), blob}, "boom-classic"},
	} {
		_, e, code := run(tc.args...)
		if code == 0 || !strings.Contains(e, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, e, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x.blf")); err == nil {
		t.Error("a refused import wrote its output")
	}
}

// TestServePeerImports: serve -load serves BoomFilters and blobloom
// imports: BF.EXISTS answers from their bits, BF.ADD takes new keys.
func TestServePeerImports(t *testing.T) {
	dir := t.TempDir()
	p := binary.BigEndian.AppendUint64(nil, 10)
	for _, v := range []uint64{2, 5, 0, 2} {
		p = binary.BigEndian.AppendUint64(p, v)
	}
	for range 2 {
		p = append(p, 1, 1)
		p = binary.BigEndian.AppendUint64(p, 5)
		p = binary.BigEndian.AppendUint64(p, 1)
		p = append(p, 0)
	}
	b := make([]byte, 64+128)
	copy(b, "blobloom")
	binary.LittleEndian.PutUint32(b[12:], 1)
	binary.LittleEndian.PutUint32(b[16:], 5)
	var loads []string
	for _, in := range []struct {
		name, format string
		data         []byte
		extra        []string
	}{
		{"part", "boom-partitioned", p, nil},
		{"blob", "blobloom", b, []string{"-hash", "xxhash64"}},
	} {
		src := filepath.Join(dir, in.name+".in")
		if err := os.WriteFile(src, in.data, 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, in.name+".blf")
		if _, e, code := invoke(append(append([]string{"import", "-format", in.format, "-o", out}, in.extra...), src), ""); code != 0 {
			t.Fatal(e)
		}
		loads = append(loads, "-load", in.name+"="+out)
	}
	s := startServe(t, dir, append([]string{"-save", "0"}, loads...)...)
	c := client(s.addr)
	defer c.Close()
	ctx := context.Background()
	for _, key := range []string{"part", "blob"} {
		if ok, err := c.BFExists(ctx, key, "k1").Result(); err != nil || ok {
			t.Fatalf("BF.EXISTS %s k1 on the empty import: %v %v", key, ok, err)
		}
		if ok, err := c.BFAdd(ctx, key, "k1").Result(); err != nil || !ok {
			t.Fatalf("BF.ADD %s: %v %v", key, ok, err)
		}
		if ok, err := c.BFExists(ctx, key, "k1").Result(); err != nil || !ok {
			t.Fatalf("BF.EXISTS %s k1 after BF.ADD: %v %v", key, ok, err)
		}
	}
}
