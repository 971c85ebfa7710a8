package cuckoo

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"testing"

	"github.com/bloomlab/bloomlab/internal/blrd"
	"github.com/bloomlab/bloomlab/internal/format"
)

func grown(t testing.TB) *Filter {
	f := must(NewRedisBloom(32, 2, 20, 2))
	for i := 0; i < 300; i++ {
		if err := f.Add(key(i)); err != nil {
			t.Fatal(err)
		}
	}
	if f.Info().SubFilters < 3 {
		t.Fatalf("%d sub-filters", f.Info().SubFilters)
	}
	return f
}

// TestScanDump: CF.SCANDUMP's iterator protocol, its quirks included: an
// iterator inside a sub-filter no larger than the chunk limit returns the
// whole sub-filter; an empty filter returns (0, nil) even for iterator 0;
// past the end, (0, nil).
func TestScanDump(t *testing.T) {
	f := grown(t)
	it, hdr, err := f.ScanDump(nil, 0, 0)
	if err != nil || it != 1 || len(hdr) != headerSize || binary.LittleEndian.Uint64(hdr) != f.N() {
		t.Fatalf("header: %d %x %v", it, hdr, err)
	}
	var sizes []int // 16, 32, 64, … buckets of 2 bytes
	for _, s := range f.stats() {
		sizes = append(sizes, int(s.Buckets)*2)
	}
	if sizes[0] != 32 || sizes[1] != 64 {
		t.Fatalf("sub-filters of %v bytes", sizes)
	}
	for _, s := range sizes {
		next, d, err := f.ScanDump(nil, it, 0)
		if err != nil || len(d) != s || next != it+int64(s) {
			t.Fatalf("chunk at %d: next %d, %d bytes, %v", it, next, len(d), err)
		}
		it = next
	}
	if next, d, err := f.ScanDump(nil, it, 0); next != 0 || d != nil || err != nil {
		t.Fatalf("past the end: %d %x %v", next, d, err)
	}
	// An iterator in the middle of a small sub-filter: the whole
	// sub-filter, and the iterator moved by its size (RedisBloom).
	next, d, _ := f.ScanDump(nil, 66, 0)
	if next != 66+64 || len(d) != 64 {
		t.Errorf("mid-sub-filter iterator: next %d, %d bytes", next, len(d))
	}
	// With a smaller limit, pieces from the offset.
	next, d, _ = f.ScanDump(nil, 66, 10)
	if next != 76 || len(d) != 10 {
		t.Errorf("limited: next %d, %d bytes", next, len(d))
	}
	if _, _, err := f.ScanDump(nil, -1, 0); !errors.Is(err, ErrParam) {
		t.Errorf("negative iterator: %v", err)
	}
	e := must(NewRedisBloom(100, 2, 20, 1))
	if next, d, err := e.ScanDump(nil, 0, 0); next != 0 || d != nil || err != nil {
		t.Errorf("empty filter: %d %x %v", next, d, err)
	}
	if _, _, err := must(NewWithEstimates(100, 0.01, 0)).ScanDump(nil, 0, 0); !errors.Is(err, ErrParam) {
		t.Errorf("bloomlab profile: %v", err)
	}
	// Dump gives an empty filter anyway, and it loads.
	if g := must(loadChunks(must(e.Dump(0)))); !g.Equal(e) {
		t.Error("empty filter's dump")
	}
}

// TestLoaderRefuses: out of order, gaps, overlaps, chunks crossing a
// sub-filter, missing bytes, bad headers and an item count that is not
// the occupied slots are refused with errors wrapping format.ErrFormat.
func TestLoaderRefuses(t *testing.T) {
	f := grown(t)
	chunks := must(f.Dump(40))
	hdr := chunks[0].Data
	setHdr := func(off int, v uint64, size int) []byte {
		b := bytes.Clone(hdr)
		switch size {
		case 8:
			binary.LittleEndian.PutUint64(b[off:], v)
		case 2:
			binary.LittleEndian.PutUint16(b[off:], uint16(v))
		}
		return b
	}
	cases := map[string][]Chunk{
		"no chunks":        nil,
		"no header":        chunks[1:],
		"short header":     {{Iter: 1, Data: hdr[:37]}},
		"swapped":          append([]Chunk{chunks[0], chunks[2], chunks[1]}, chunks[3:]...),
		"missing chunk":    append([]Chunk{chunks[0]}, chunks[2:]...),
		"missing last":     chunks[:len(chunks)-1],
		"items off":        append([]Chunk{{Iter: 1, Data: setHdr(0, f.N()+1, 8)}}, chunks[1:]...),
		"buckets 3":        append([]Chunk{{Iter: 1, Data: setHdr(8, 3, 8)}}, chunks[1:]...),
		"buckets 0":        {{Iter: 1, Data: setHdr(8, 0, 8)}},
		"filters 0":        {{Iter: 1, Data: setHdr(24, 0, 8)}},
		"filters 70000":    {{Iter: 1, Data: setHdr(24, 70000, 8)}},
		"bucket size 0":    {{Iter: 1, Data: setHdr(32, 0, 2)}},
		"bucket size 256":  {{Iter: 1, Data: setHdr(32, 256, 2)}},
		"max iterations 0": {{Iter: 1, Data: setHdr(34, 0, 2)}},
		"expansion 3":      {{Iter: 1, Data: setHdr(36, 3, 2)}},
		"expansion 0":      {{Iter: 1, Data: setHdr(36, 0, 2)}},
		"huge":             {{Iter: 1, Data: setHdr(8, 1<<44, 8)}},
		"crossing":         {chunks[0], {Iter: 1 + 60, Data: bytes.Repeat([]byte{1}, 60)}},
		"after end":        append(append([]Chunk{}, chunks...), Chunk{Iter: 0, Data: nil}, Chunk{Iter: 9999, Data: []byte{1}}),
	}
	for name, cs := range cases {
		if _, err := loadChunks(cs); !errors.Is(err, format.ErrFormat) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// The final (0, nil) reply may be fed.
	if g, err := loadChunks(append(chunks, Chunk{Iter: 0, Data: nil})); err != nil || !g.Equal(f) {
		t.Errorf("with the end reply: %v", err)
	}
	// A loader fed one chunk at a time: Progress, Received, Check.
	var ld Loader
	for i, c := range chunks {
		if i > 0 {
			if err := ld.Check(c.Iter, len(c.Data)); err != nil {
				t.Fatalf("chunk %d: Check: %v", i, err)
			}
			if err := ld.Check(c.Iter+1, len(c.Data)); err == nil {
				t.Fatalf("chunk %d: Check accepts a wrong iterator", i)
			}
		}
		if err := ld.LoadChunk(c.Iter, c.Data); err != nil {
			t.Fatal(err)
		}
		got, total := ld.Progress()
		if total != f.Info().Slots || i > 0 && got != uint64(c.Iter-1) {
			t.Fatalf("chunk %d: progress %d of %d", i, got, total)
		}
		var again Loader
		for _, r := range ld.Received() {
			if err := again.LoadChunk(r.Iter, r.Data); err != nil {
				t.Fatalf("chunk %d: reloading Received: %v", i, err)
			}
		}
		for _, rest := range chunks[i+1:] {
			if err := again.LoadChunk(rest.Iter, rest.Data); err != nil {
				t.Fatalf("chunk %d: continuing: %v", i, err)
			}
		}
		if g, err := again.Filter(); err != nil || !g.Equal(f) {
			t.Fatalf("chunk %d: resumed load: %v", i, err)
		}
	}
	if g, err := ld.Filter(); err != nil || !g.Equal(f) || ld.Received() != nil {
		t.Fatal(err)
	}
	if _, err := ld.Filter(); !errors.Is(err, ErrParam) {
		t.Errorf("second Filter: %v", err)
	}
}

// TestFraming: WriteRedisBloom and ReadRedisBloom round-trip and read
// exactly the file; every truncation and changed byte is refused.
func TestFraming(t *testing.T) {
	f := grown(t)
	var buf bytes.Buffer
	n, err := f.WriteRedisBloom(&buf, 50)
	if err != nil || n != int64(buf.Len()) {
		t.Fatal(n, err)
	}
	data := bytes.Clone(buf.Bytes())
	buf.WriteString("next")
	if g, err := readRedisBloom(&buf); err != nil || !g.Equal(f) || buf.String() != "next" {
		t.Fatalf("read back: %v", err)
	}
	for i := 0; i < len(data); i++ {
		if _, err := readRedisBloom(bytes.NewReader(data[:i])); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("truncated at %d: %v", i, err)
		}
	}
	for i := range data {
		b := bytes.Clone(data)
		b[i] ^= 4
		if _, err := readRedisBloom(bytes.NewReader(b)); !errors.Is(err, format.ErrFormat) {
			t.Fatalf("byte %d changed: %v", i, err)
		}
	}
	if _, err := f.WriteRedisBloom(io.Discard, 1<<30); !errors.Is(err, ErrParam) {
		t.Errorf("chunk of 1 GiB: %v", err)
	}
}

func fuzzChunks(data []byte) []Chunk {
	var cs []Chunk
	for len(data) >= 10 {
		it := int64(binary.LittleEndian.Uint64(data))
		n := int(binary.LittleEndian.Uint16(data[8:]))
		data = data[10:]
		n = min(n, len(data))
		cs = append(cs, Chunk{Iter: it, Data: data[:n]})
		data = data[n:]
	}
	return cs
}

func encodeChunks(cs []Chunk) []byte {
	var b []byte
	for _, c := range cs {
		b = binary.LittleEndian.AppendUint64(b, uint64(c.Iter))
		b = binary.LittleEndian.AppendUint16(b, uint16(len(c.Data)))
		b = append(b, c.Data...)
	}
	return b
}

func FuzzLoadChunks(f *testing.F) {
	f.Add(encodeChunks(must(grown(f).Dump(30))))
	f.Add(encodeChunks(must(must(NewRedisBloom(8, 1, 3, 0)).Dump(0))))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := loadChunks(fuzzChunks(data))
		if err != nil {
			return
		}
		h, err := loadChunks(must(g.Dump(0)))
		if err != nil || !h.Equal(g) {
			t.Fatalf("reloading a loaded filter: %v", err)
		}
		if nb, err := g.nextSubFilterBits(); err != nil || nb > 1<<24 {
			return // a hostile filter may grow by a huge sub-filter
		}
		if err := g.Add(data); err == nil && !g.Contains(data) {
			t.Fatal("false negative")
		}
	})
}

func FuzzReadRedisBloom(f *testing.F) {
	var buf bytes.Buffer
	must(grown(f).WriteRedisBloom(&buf, 16))
	f.Add(buf.Bytes())
	buf.Reset()
	must(must(loadChunks(must(grown(f).Dump(16)))).WriteRedisBloom(&buf, 16)) // version 1
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := readRedisBloom(bytes.NewReader(data))
		if err != nil {
			return
		}
		var out bytes.Buffer
		if _, err := g.WriteRedisBloom(&out, 0); err != nil {
			t.Fatal(err)
		}
		h, err := readRedisBloom(&out)
		if err != nil || !h.Equal(g) || h.Capacity() != g.Capacity() {
			t.Fatalf("re-read: %v", err)
		}
	})
}

// TestLoaderReadChunk: at every point of a load, the chunks WalkReceived
// gives (those of Received), read back with ReadChunk as a snapshot
// stores a load in progress, bring a new Loader to the same state, with
// and without AllocateWhole; a chunk out of place, crossing a
// sub-filter or cut short is refused before anything is read, or as
// truncated.
func TestLoaderReadChunk(t *testing.T) {
	f := grown(t)
	chunks := must(f.Dump(0))
	for _, whole := range []bool{false, true} {
		var ld Loader
		for i, c := range chunks {
			if err := ld.LoadChunk(c.Iter, c.Data); err != nil {
				t.Fatal(err)
			}
			var again Loader
			if whole {
				again.AllocateWhole()
			}
			n := 0
			err := ld.WalkReceived(func(iter int64, size int, write func(io.Writer) error) error {
				var b bytes.Buffer
				if err := write(&b); err != nil || b.Len() != size {
					t.Fatalf("write: %v, %d bytes of %d", err, b.Len(), size)
				}
				if want := ld.Received()[n]; want.Iter != iter || !bytes.Equal(want.Data, b.Bytes()) {
					t.Fatalf("chunk %d: WalkReceived gives another chunk than Received", n)
				}
				n++
				if iter == 1 {
					return again.LoadChunk(iter, b.Bytes())
				}
				r := bytes.NewReader(b.Bytes())
				if err := again.ReadChunk(iter, size, r); err != nil || r.Len() != 0 {
					t.Fatalf("ReadChunk: %v, %d bytes left", err, r.Len())
				}
				return nil
			})
			if err != nil || n != len(ld.Received()) {
				t.Fatalf("chunk %d: WalkReceived: %v after %d chunks", i, err, n)
			}
			for _, rest := range chunks[i+1:] {
				if err := again.LoadChunk(rest.Iter, rest.Data); err != nil {
					t.Fatalf("chunk %d: continuing: %v", i, err)
				}
			}
			if g, err := again.Filter(); err != nil || !g.Equal(f) {
				t.Fatalf("chunk %d: resumed load: %v", i, err)
			}
		}
	}

	load := func() *Loader {
		var ld Loader
		if err := ld.LoadChunk(1, chunks[0].Data); err != nil {
			t.Fatal(err)
		}
		return &ld
	}
	first := chunks[1]
	for name, c := range map[string]struct {
		iter int64
		n    int
	}{
		"a gap":                   {first.Iter + 8, len(first.Data)},
		"crossing the sub-filter": {first.Iter + 8, len(first.Data) + 8},
		"negative":                {first.Iter, -1},
	} {
		r := bytes.NewReader(make([]byte, 1<<20))
		if err := load().ReadChunk(c.iter, c.n, r); !errors.Is(err, format.ErrFormat) || r.Len() != 1<<20 {
			t.Errorf("%s: %v, %d bytes read", name, err, 1<<20-r.Len())
		}
	}
	ld := load()
	if err := ld.ReadChunk(first.Iter, len(first.Data), bytes.NewReader(first.Data[:len(first.Data)-1])); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("a short chunk: %v", err)
	}
	if err := ld.ReadChunk(first.Iter, len(first.Data), bytes.NewReader(first.Data)); err == nil {
		t.Error("the Loader goes on after a short chunk")
	}
	var none Loader
	if err := none.ReadChunk(first.Iter, len(first.Data), bytes.NewReader(first.Data)); !errors.Is(err, format.ErrFormat) {
		t.Errorf("a chunk before the header: %v", err)
	}
}

// TestAllocateWhole: after AllocateWhole, an 8 MiB table loaded in 64 KiB
// chunks is allocated once; without it the table grows as the chunks
// come (several times its size); a header announcing more than the memory
// this process may use is still loaded as its bytes arrive.
func TestAllocateWhole(t *testing.T) {
	f := must(NewRedisBloom(8<<20, 2, 20, 2)) // 4 Mi buckets of 2
	chunks := must(f.Dump(64 << 10))
	size := f.Bits() / 8
	loadAll := func(whole bool) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		var ld Loader
		if whole {
			ld.AllocateWhole()
		}
		for _, c := range chunks {
			if err := ld.LoadChunk(c.Iter, c.Data); err != nil {
				t.Fatal(err)
			}
		}
		g, err := ld.Filter()
		runtime.ReadMemStats(&after)
		if err != nil || !g.Equal(f) {
			t.Fatalf("whole %v: %v", whole, err)
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	if a := loadAll(true); a > size+size/20 {
		t.Errorf("AllocateWhole: a table of %d bytes allocated %d", size, a)
	}
	if a := loadAll(false); a < 2*size {
		t.Errorf("without AllocateWhole: a table of %d bytes allocated only %d (does it still grow as bytes come?)", size, a)
	}
	defer func(f func() uint64) { blrd.MemLimit = f }(blrd.MemLimit)
	blrd.MemLimit = func() uint64 { return size / 2 }
	if a := loadAll(true); a < 2*size {
		t.Errorf("AllocateWhole of more than the memory limit: %d bytes allocated for %d, at once?", a, size)
	}
}
