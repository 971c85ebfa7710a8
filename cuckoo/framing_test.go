package cuckoo

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"strings"
	"testing"

	"github.com/bloomlab/bloomlab/internal/format"
)

// TestFramingCapacity: the design capacity, which CF.SCANDUMP's header
// does not carry, survives a framed dump (BLRD version 2: the trailer
// after the end record); it read back as the slots, buckets × bucket
// size (a filter of capacity 1000 came back with 1024, one grown to two
// sub-filters with 2048 for 2000). A filter whose capacity is unknown
// (loaded from chunks) is written as version 1, and version-1 files, as
// older builds wrote them, still load, with their slots as capacity.
func TestFramingCapacity(t *testing.T) {
	empty := must(NewRedisBloom(1000, 2, 20, 1))
	full := must(NewRedisBloom(1000, 2, 20, 1))
	for i := 0; i < 1500; i++ {
		if err := full.Add(key(i)); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []*Filter{empty, full} {
		var buf bytes.Buffer
		must(f.WriteRedisBloom(&buf, 0))
		if v := binary.LittleEndian.Uint16(buf.Bytes()[4:]); v != 2 {
			t.Errorf("capacity %d: written as version %d", f.Capacity(), v)
		}
		g, err := readRedisBloom(&buf)
		if err != nil {
			t.Fatalf("capacity %d: %v", f.Capacity(), err)
		}
		if !g.Equal(f) || g.Capacity() != f.Capacity() || g.Capacity() == g.Info().Slots {
			t.Errorf("capacity %d (slots %d): read back with capacity %d", f.Capacity(), f.Info().Slots, g.Capacity())
		}
	}
	// Unknown capacity: from chunks, as from CF.SCANDUMP.
	loaded := must(loadChunks(must(full.Dump(0))))
	if loaded.Capacity() != loaded.Info().Slots {
		t.Fatalf("from chunks: capacity %d, slots %d", loaded.Capacity(), loaded.Info().Slots)
	}
	var buf bytes.Buffer
	must(loaded.WriteRedisBloom(&buf, 0))
	if v := binary.LittleEndian.Uint16(buf.Bytes()[4:]); v != 1 {
		t.Errorf("unknown capacity written as version %d", v)
	}
	if g := must(readRedisBloom(&buf)); !g.Equal(full) || g.Capacity() != g.Info().Slots || !strings.Contains(describeText(g), "capacity recorded false") {
		t.Errorf("version 1: capacity %d; described as\n%s", g.Capacity(), describeText(g))
	}
	// A version-1 file written before version 2 existed.
	old, err := os.ReadFile("testdata/cuckoo-redisbloom-v1.blrd")
	if err != nil {
		t.Fatal(err)
	}
	g, err := readRedisBloom(bytes.NewReader(old))
	if err != nil || !g.Equal(grown(t)) || g.Capacity() != g.Info().Slots {
		t.Fatalf("golden version-1 file: %v", err)
	}
}

// TestFramingTrailerRefused: a version-2 trailer that is not one
// capacity consistent with the header is refused, even under a valid
// checksum: a trailer of another length, capacity 0, or a capacity of
// (buckets + 1) × bucket size or more, which no CF.RESERVE of these
// buckets has (the rule of the bloomlab file, docs/FORMAT.md, kind 9).
func TestFramingTrailerRefused(t *testing.T) {
	f := must(NewRedisBloom(1000, 2, 20, 1)) // 512 buckets of 2
	var buf bytes.Buffer
	must(f.WriteRedisBloom(&buf, 0))
	good := buf.Bytes()
	body := good[:len(good)-4-4-8] // before the trailer's length
	for name, trailer := range map[string][]byte{
		"empty":         {},
		"7 bytes":       make([]byte, 7),
		"9 bytes":       make([]byte, 9),
		"capacity 0":    binary.LittleEndian.AppendUint64(nil, 0),
		"capacity 1026": binary.LittleEndian.AppendUint64(nil, 1026), // 513 buckets of 2: 1024
		"capacity max":  binary.LittleEndian.AppendUint64(nil, 1<<64-1),
	} {
		b := binary.LittleEndian.AppendUint32(bytes.Clone(body), uint32(len(trailer)))
		b = append(b, trailer...)
		b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))
		if _, err := readRedisBloom(bytes.NewReader(b)); !errors.Is(err, format.ErrFormat) {
			t.Errorf("trailer %s: %v", name, err)
		}
	}
	for _, c := range []uint64{1, 1000, 1025} { // 1025: the most 512 buckets of 2 have
		b := binary.LittleEndian.AppendUint32(bytes.Clone(body), 8)
		b = binary.LittleEndian.AppendUint64(b, c)
		b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))
		if g, err := readRedisBloom(bytes.NewReader(b)); err != nil || g.Capacity() != c {
			t.Errorf("capacity %d: %v", c, err)
		}
	}
}
