package cuckoo

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"hash/crc32"
	"io"
	"os"
	"runtime"
	"testing"

	"github.com/bloomlab/bloomlab/internal/format"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// goldenFilters are the small filters whose bytes are pinned in
// testdata/cuckoo-<name>-v1.golden. A change to these bytes breaks every
// file ever written; they are only rewritten on purpose (-update).
func goldenFilters() map[string]*Filter {
	out := map[string]*Filter{}
	add := func(name string, f *Filter, n int) {
		for i := 0; i < n; i++ {
			if err := f.Add([]byte{'k', byte(i)}); err != nil {
				panic(err)
			}
		}
		f.Delete([]byte{'k', 0})
		out[name] = f
	}
	add("bloomlab", must(New(Config{Capacity: 20, FPR: 0.01, Seed: 7})), 20)
	add("semisort", must(New(Config{Capacity: 20, FingerprintBits: 9, Semisort: true, Seed: 7})), 20)
	add("growing", must(New(Config{Buckets: 4, FingerprintBits: 6, BucketSize: 2, Expansion: 2, MaxKicks: 10})), 40)
	add("redisbloom", must(NewRedisBloom(16, 2, 20, 2)), 40)
	return out
}

func TestGolden(t *testing.T) {
	for name, f := range goldenFilters() {
		path := "testdata/cuckoo-" + name + "-v1.golden"
		got, err := f.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -update to create)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: encoding changed:\n got %x\nwant %x", path, got, want)
		}
		var g Filter
		if err := g.UnmarshalBinary(want); err != nil {
			t.Fatal(err)
		}
		if !g.Equal(f) || g.Capacity() != f.Capacity() || !g.Contains([]byte{'k', 1}) || want[6] != uint8(format.KindCuckoo) || want[7] != f.profile.scheme() {
			t.Errorf("%s: decoded filter differs", path)
		}
		if name == "growing" && g.Info().SubFilters < 2 || name == "redisbloom" && g.Info().SubFilters < 2 {
			t.Errorf("%s: %d sub-filters, want a grown filter", path, g.Info().SubFilters)
		}
	}
}

// TestRoundTrip: every configuration, filled past full load, survives
// WriteTo / ReadFrom (reading exactly the file) and MarshalBinary /
// UnmarshalBinary, equal and with every key present.
func TestRoundTrip(t *testing.T) {
	for _, c := range configs {
		f := c.new()
		var keys [][]byte
		for i := 0; i < 1000; i++ {
			if f.Add(key(i)) == nil {
				keys = append(keys, key(i))
			}
		}
		f.Delete(keys[0])
		keys = keys[1:]
		var buf bytes.Buffer
		n, err := f.WriteTo(&buf)
		if err != nil || n != int64(buf.Len()) {
			t.Fatalf("%s: WriteTo %d, %v", c.name, n, err)
		}
		buf.WriteString("tail")
		var g Filter
		if m, err := g.ReadFrom(&buf); err != nil || m != n || buf.String() != "tail" {
			t.Fatalf("%s: ReadFrom %d, %v", c.name, m, err)
		}
		h := must(unmarshal(must(f.MarshalBinary())))
		if !g.Equal(f) || !h.Equal(f) || g.Capacity() != f.Capacity() {
			t.Fatalf("%s: round trip differs", c.name)
		}
		for _, k := range keys {
			if !g.Contains(k) {
				t.Fatalf("%s: false negative after a round trip", c.name)
			}
		}
		if f.profile == RedisBloom {
			chunks := must(f.Dump(7))
			l := must(loadChunks(chunks))
			var fb bytes.Buffer
			must(f.WriteRedisBloom(&fb, 33))
			r := must(readRedisBloom(&fb))
			if !l.Equal(f) || !r.Equal(f) {
				t.Fatalf("%s: dump round trip differs", c.name)
			}
		}
	}
}

// TestCorruptInput: every truncation and every single changed byte of
// every golden file is refused with an error wrapping format.ErrFormat
// (never a panic), and the receiver stays as it was.
func TestCorruptInput(t *testing.T) {
	for name, f := range goldenFilters() {
		data := must(f.MarshalBinary())
		for i := 0; i < len(data); i++ {
			if _, err := unmarshal(data[:i]); !errors.Is(err, format.ErrFormat) {
				t.Fatalf("%s truncated at %d: %v", name, i, err)
			}
		}
		for i := range data {
			for _, x := range []byte{1, 0x80} {
				b := bytes.Clone(data)
				b[i] ^= x
				g := must(NewRedisBloom(4, 1, 1, 0))
				before := g.Clone()
				if err := g.UnmarshalBinary(b); !errors.Is(err, format.ErrFormat) {
					t.Fatalf("%s byte %d ^ %#x: %v", name, i, x, err)
				}
				if !g.Equal(before) {
					t.Fatal("a failed UnmarshalBinary changed the receiver")
				}
			}
		}
	}
}

// reseal rewrites the header CRC and the trailing CRC of a file whose
// parameter block was edited, so that the decoder's own checks are what
// refuses it.
func reseal(b []byte) []byte {
	t := crc32.MakeTable(crc32.Castagnoli)
	binary.LittleEndian.PutUint32(b[28:], crc32.Checksum(b[:28], t))
	binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.Checksum(b[:len(b)-4], t))
	return b
}

// TestHostileFiles: files with valid checksums whose parameters are
// inconsistent or claim huge tables are refused, and a claim of 2^48
// bits in a short stream allocates nothing of that size.
func TestHostileFiles(t *testing.T) {
	base := must(goldenFilters()["bloomlab"].MarshalBinary())
	rbase := must(goldenFilters()["redisbloom"].MarshalBinary())
	p := format.HeaderSize
	cases := map[string][]byte{}
	edit := func(name string, src []byte, fn func(b []byte)) {
		b := bytes.Clone(src)
		fn(b)
		cases[name] = reseal(b)
	}
	edit("b=3", base, func(b []byte) { b[p] = 3 })
	edit("f=33", base, func(b []byte) { b[p+1] = 33 })
	edit("flags", base, func(b []byte) { b[p+2] = 2 })
	edit("semisort b=4 f=10 on a plain table", base, func(b []byte) { b[p+2] = 1 })
	edit("kicks 0", base, func(b []byte) { binary.LittleEndian.PutUint32(b[p+3:], 0) })
	edit("expansion 3", base, func(b []byte) { binary.LittleEndian.PutUint32(b[p+7:], 3) })
	edit("buckets 33", base, func(b []byte) { binary.LittleEndian.PutUint64(b[p+11:], 33) })
	edit("buckets 2^46", base, func(b []byte) { binary.LittleEndian.PutUint64(b[p+11:], 1<<46) })
	edit("two sub-filters without expansion", base, func(b []byte) { binary.LittleEndian.PutUint32(b[p+19:], 2) })
	edit("N off by one", base, func(b []byte) { b[p+23]++ })
	edit("capacity above the slots", base, func(b []byte) { binary.LittleEndian.PutUint64(b[p+39:], 1<<40) })
	edit("scheme 3", base, func(b []byte) { b[7] = 3 })
	edit("guard word", base, func(b []byte) { b[len(b)-5] = 1 })
	edit("redis f=9", rbase, func(b []byte) { b[p+1] = 9 })
	edit("redis buckets 3", rbase, func(b []byte) { binary.LittleEndian.PutUint64(b[p+11:], 3) })
	edit("redis seed", rbase, func(b []byte) { b[8] = 1 })
	edit("redis 70000 sub-filters", rbase, func(b []byte) { binary.LittleEndian.PutUint32(b[p+19:], 70000) })
	edit("redis huge growth", rbase, func(b []byte) {
		binary.LittleEndian.PutUint32(b[p+7:], 32768)
		binary.LittleEndian.PutUint32(b[p+19:], 60)
	})
	for name, b := range cases {
		if _, err := unmarshal(b); !errors.Is(err, format.ErrFormat) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// A header claiming a table of 2^41 buckets (over 2^46 bits), then
	// nothing.
	b := bytes.Clone(base[:p+paramsLen])
	binary.LittleEndian.PutUint64(b[p+11:], 1<<41)
	bb := uint64(b[p]) * uint64(b[p+1])
	binary.LittleEndian.PutUint64(b[20:], ((1<<41)*bb/64+2)*8)
	binary.LittleEndian.PutUint32(b[28:], crc32.Checksum(b[:28], crc32.MakeTable(crc32.Castagnoli)))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := unmarshal(b); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("huge claim: %v", err)
	}
	runtime.ReadMemStats(&after)
	if d := after.TotalAlloc - before.TotalAlloc; d > 4<<20 {
		t.Errorf("a 2^46-bit claim in a short stream allocated %d bytes", d)
	}
}

func FuzzUnmarshal(f *testing.F) {
	for _, g := range goldenFilters() {
		f.Add(must(g.MarshalBinary()))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := unmarshal(data)
		if err != nil {
			return
		}
		b, err := g.MarshalBinary()
		if err != nil || !bytes.Equal(b, data) {
			t.Fatalf("accepted input does not re-encode to itself: %v", err)
		}
		if nb, err := g.nextSubFilterBits(); err != nil || nb > 1<<24 || g.Bits() > 1<<24 {
			return
		}
		if err := g.Add(data); err == nil && !g.Contains(data) {
			t.Fatal("false negative")
		}
	})
}

// TestRedisLoadAllocatedOnce: a RedisBloom-profile filter of S bytes read
// from a reader that knows its length allocates about S bytes: its tables
// are read straight into the bytes the filter keeps. Before, each table
// was read as words and copied into bytes: 2 × S (a server restarting
// from a snapshot held each CF.RESERVE table twice).
func TestRedisLoadAllocatedOnce(t *testing.T) {
	f, err := NewRedisBloom(8<<20, 2, 20, 2) // 4 Mi buckets of 2: 8 MiB
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 1000; i++ {
		if err := f.Add([]byte{byte(i), byte(i >> 8)}); err != nil {
			t.Fatal(err)
		}
	}
	data := must(f.MarshalBinary())
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	g, err := unmarshal(data)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if a, limit := after.TotalAlloc-before.TotalAlloc, uint64(len(data))*11/10+(1<<20); a > limit {
		t.Errorf("a file of %d bytes allocated %d bytes (limit %d)", len(data), a, limit)
	}
	if !bytes.Equal(must(g.MarshalBinary()), data) {
		t.Error("the filter read back writes other bytes")
	}
	for i := 0; i < 1000; i++ {
		if !g.Contains([]byte{byte(i), byte(i >> 8)}) {
			t.Fatalf("key %d absent after the round trip", i)
		}
	}
}
