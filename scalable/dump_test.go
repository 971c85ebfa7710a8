package scalable

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"runtime"
	"testing"

	"github.com/bloomlab/bloomlab/internal/blrd"
	"github.com/bloomlab/bloomlab/internal/format"
)

func redisChain(t testing.TB, keys int, c Config) *Filter {
	c.Profile = RedisBloom
	f := must(New(c))
	for i := 0; i < keys; i++ {
		if _, err := f.Add(key(i)); errors.Is(err, ErrFull) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// TestDumpChunkSizes: for any chunk size the chunks never cross a link,
// are at most the chunk size, agree with ScanDump called in a loop, and
// load back (LoadChunks and a streaming Loader) into an equal filter.
func TestDumpChunkSizes(t *testing.T) {
	f := redisChain(t, 2000, Config{Capacity: 100, FPR: 0.01})
	var linkEnds []int64
	end := int64(1)
	for _, l := range f.Stats().Links {
		end += int64(l.Bits / 8)
		linkEnds = append(linkEnds, end)
	}
	for _, size := range []int{1, 7, 8, 13, 100, 4096, 0} {
		chunks, err := f.Dump(size)
		if err != nil {
			t.Fatal(err)
		}
		it, li := int64(1), 0
		for i, c := range chunks[1:] {
			start := c.Iter - int64(len(c.Data))
			if start != it || size > 0 && len(c.Data) > size || c.Iter > linkEnds[li] {
				t.Fatalf("size %d chunk %d: iter %d, %d bytes (from %d, link ends %d)", size, i, c.Iter, len(c.Data), it, linkEnds[li])
			}
			if c.Iter == linkEnds[li] {
				li++
			}
			next, data, err := f.ScanDump(nil, it, size)
			if err != nil || next != c.Iter || !bytes.Equal(data, c.Data) {
				t.Fatalf("size %d: ScanDump(%d) differs from Dump", size, it)
			}
			it = c.Iter
		}
		if next, data, _ := f.ScanDump(nil, it, size); next != 0 || len(data) != 0 || li != len(linkEnds) {
			t.Fatalf("size %d: dump does not end at %d", size, it)
		}
		g, err := LoadChunks(chunks)
		if err != nil || !g.Equal(f) {
			t.Fatalf("size %d: LoadChunks: %v", size, err)
		}
		var ld Loader
		for _, c := range append(chunks, Chunk{}) {
			if err := ld.LoadChunk(c.Iter, c.Data); err != nil {
				t.Fatalf("size %d: Loader: %v", size, err)
			}
		}
		if g, err := ld.Filter(); err != nil || !g.Equal(f) {
			t.Fatalf("size %d: Loader: %v", size, err)
		}
	}
	if next, data, err := f.ScanDump(nil, -5, 0); next != 0 || len(data) != 0 || err != nil {
		t.Errorf("negative iterator: %d, %d bytes, %v", next, len(data), err)
	}
	var zero Filter
	if _, err := zero.Dump(0); !errors.Is(err, ErrParam) {
		t.Errorf("the zero Filter dumped: %v", err)
	}
}

// TestLoaderRefuses: chunks out of order, missing, overlapping, crossing a
// link, beyond the end or before the header are refused, and a dump that
// stops early yields no filter (a missing chunk would be false negatives).
func TestLoaderRefuses(t *testing.T) {
	f := redisChain(t, 300, Config{Capacity: 100})
	chunks, _ := f.Dump(64)
	n := len(chunks)
	swap := append([]Chunk(nil), chunks...)
	swap[2], swap[3] = swap[3], swap[2]
	crossing := append([]Chunk(nil), chunks[:1]...)
	all, _ := f.Dump(1 << 20) // one chunk per link
	crossing = append(crossing, Chunk{Iter: all[2].Iter, Data: append(append([]byte(nil), all[1].Data...), all[2].Data...)})
	crossing = append(crossing, all[3:]...)
	for name, cs := range map[string][]Chunk{
		"no header":      chunks[1:],
		"header twice":   append([]Chunk{chunks[0]}, chunks...),
		"swapped":        swap,
		"missing middle": append(append([]Chunk(nil), chunks[:3]...), chunks[4:]...),
		"missing last":   chunks[:n-1],
		"only header":    chunks[:1],
		"duplicate":      append(append([]Chunk(nil), chunks...), chunks[n-1]),
		"crosses a link": crossing,
		"bad iterator":   append(append([]Chunk(nil), chunks[:1]...), Chunk{Iter: 0, Data: chunks[1].Data}),
		"after the end":  append(append(append([]Chunk(nil), chunks...), Chunk{}), chunks[n-1]),
		"none":           nil,
	} {
		if _, err := LoadChunks(cs); !errors.Is(err, format.ErrFormat) {
			t.Errorf("%s: LoadChunks: %v", name, err)
		}
		var ld Loader
		var err error
		for _, c := range cs {
			if err = ld.LoadChunk(c.Iter, c.Data); err != nil {
				break
			}
		}
		if err == nil {
			_, err = ld.Filter()
		}
		if !errors.Is(err, format.ErrFormat) {
			t.Errorf("%s: Loader: %v", name, err)
		}
		if ld.LoadChunk(chunks[0].Iter, chunks[0].Data) == nil {
			t.Errorf("%s: a failed Loader took another chunk", name)
		}
	}
}

// header returns a SCANDUMP header with one record per link.
func header(size uint64, options, growth uint32, links ...[8]uint64) []byte {
	b := binary.LittleEndian.AppendUint64(nil, size)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(links)))
	b = binary.LittleEndian.AppendUint32(b, options)
	b = binary.LittleEndian.AppendUint32(b, growth)
	for _, l := range links { // bytes, bits, size, error, bpe, hashes, entries, n2
		for _, v := range l[:5] {
			b = binary.LittleEndian.AppendUint64(b, v)
		}
		b = binary.LittleEndian.AppendUint32(b, uint32(l[5]))
		b = binary.LittleEndian.AppendUint64(b, l[6])
		b = append(b, byte(l[7]))
	}
	return b
}

// TestHostileHeaders: headers RedisBloom itself would refuse, and ones
// that claim huge links, are refused or cost no more memory than the
// bytes that actually arrive.
func TestHostileHeaders(t *testing.T) {
	bpe := redisBPE(0.005)
	good := [8]uint64{144, 1152, 0, math.Float64bits(0.005), math.Float64bits(bpe), 8, 100, 0}
	mod := func(i int, v uint64) [8]uint64 { l := good; l[i] = v; return l }
	for name, h := range map[string][]byte{
		"short":           header(0, 5, 2, good)[:30],
		"no links":        header(0, 5, 2),
		"length":          append(header(0, 5, 2, good), 0),
		"no FORCE64":      header(0, 1, 2, good),
		"ENTS_IS_BITS":    header(0, 7, 2, good),
		"bits ≠ 8·bytes":  header(0, 5, 2, mod(1, 1160)),
		"bytes not ×8":    header(0, 5, 2, mod(0, 145)),
		"zero bytes":      header(0, 5, 2, mod(0, 0)),
		"2^46 bytes":      header(0, 5, 2, mod(0, 1<<46)),
		"hashes":          header(0, 5, 2, mod(5, 9)),
		"rate 0":          header(0, 5, 2, mod(3, 0)),
		"rate NaN":        header(0, 5, 2, mod(3, math.Float64bits(math.NaN()))),
		"bpe vs rate":     header(0, 5, 2, mod(3, math.Float64bits(0.0051))),
		"bpe huge":        header(0, 5, 2, mod(4, math.Float64bits(1e6))),
		"entries 0":       header(0, 5, 2, mod(6, 0)),
		"n2 too big":      header(0, 5, 2, mod(7, 11)),
		"size mismatch":   header(3, 5, 2, mod(2, 2)),
		"size overflow":   header(0, 5, 2, mod(2, 1<<63), mod(2, 1<<63)),
		"4097 links":      append(header(0, 5, 2), make([]byte, 53*4097)...),
		"huge link count": binary.LittleEndian.AppendUint32(header(0, 5, 2)[:8], 1<<31),
	} {
		var ld Loader
		if err := ld.LoadChunk(1, h); !errors.Is(err, format.ErrFormat) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// A consistent header announcing 2^45 bytes, then a few real chunks:
	// the streaming Loader allocates about what arrived.
	huge := header(0, 5, 2, [8]uint64{1 << 45, 1 << 48, 0, math.Float64bits(0.005), math.Float64bits(bpe), 8, 1 << 40, 0})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var ld Loader
	if err := ld.LoadChunk(1, huge); err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 4096)
	for it := int64(1); it < 1<<20; it += 4096 {
		if err := ld.LoadChunk(it+4096, data); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ld.Filter(); !errors.Is(err, format.ErrFormat) {
		t.Errorf("incomplete huge dump: %v", err)
	}
	runtime.ReadMemStats(&after)
	if d := after.TotalAlloc - before.TotalAlloc; d > 32<<20 {
		t.Errorf("1 MiB of a 32 TiB dump made the Loader allocate %d bytes", d)
	}
	if _, err := LoadChunks([]Chunk{{Iter: 1, Data: huge}, {Iter: 4097, Data: data}}); !errors.Is(err, format.ErrFormat) {
		t.Errorf("LoadChunks of a short huge dump: %v", err)
	}
}

// TestFraming: WriteRedisBloom and ReadRedisBloom round-trip, read exactly
// the file, and refuse every truncation and every changed byte.
func TestFraming(t *testing.T) {
	for _, c := range []Config{{Capacity: 100}, {Capacity: 20, NonScaling: true}, {Capacity: 1000, Expansion: 4}} {
		f := redisChain(t, 600, c)
		for _, size := range []int{0, 100, 5} {
			var buf bytes.Buffer
			n, err := f.WriteRedisBloom(&buf, size)
			if err != nil || n != int64(buf.Len()) {
				t.Fatalf("WriteRedisBloom: %d, %v", n, err)
			}
			buf.WriteString("next")
			g, err := ReadRedisBloom(&buf)
			if err != nil || !g.Equal(f) || buf.String() != "next" {
				t.Fatalf("%+v size %d: ReadRedisBloom: %v", c, size, err)
			}
		}
	}
	f := redisChain(t, 150, Config{Capacity: 100})
	var buf bytes.Buffer
	f.WriteRedisBloom(&buf, 64)
	data := buf.Bytes()
	for i := 0; i < len(data); i++ {
		if _, err := ReadRedisBloom(bytes.NewReader(data[:i])); !errors.Is(err, io.ErrUnexpectedEOF) || !errors.Is(err, format.ErrFormat) {
			t.Fatalf("truncated at %d: %v", i, err)
		}
	}
	for i := range data {
		for _, x := range []byte{0x01, 0x80} {
			b := bytes.Clone(data)
			b[i] ^= x
			if _, err := ReadRedisBloom(bytes.NewReader(b)); !errors.Is(err, format.ErrFormat) {
				t.Fatalf("byte %d ^ %#x: %v", i, x, err)
			}
		}
	}
	if _, err := must(New(Config{})).WriteRedisBloom(io.Discard, 0); !errors.Is(err, ErrParam) {
		t.Errorf("bloomlab profile exported: %v", err)
	}
	// A record claiming 512 MiB in a short stream costs nothing.
	hostile := append([]byte(frameMagic), 1, 0, 0, 0)
	hostile = binary.LittleEndian.AppendUint64(hostile, 1)
	hostile = binary.LittleEndian.AppendUint32(hostile, maxFrameChunk)
	if _, err := ReadRedisBloom(bytes.NewReader(hostile)); !errors.Is(err, format.ErrFormat) {
		t.Errorf("huge header record: %v", err)
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
	for _, c := range []Config{{Capacity: 10}, {Capacity: 5, NonScaling: true}} {
		g := redisChain(f, 30, c)
		cs, _ := g.Dump(40)
		f.Add(encodeChunks(cs))
	}
	// bloomlab's dumps of the blocked and bloomlab profiles.
	for _, c := range []Config{{Capacity: 10, Profile: Blocked}, {Capacity: 5, NonScaling: true, Profile: Blocked, Seed: 2}, {Capacity: 10, Seed: 3}} {
		g := must(New(c))
		for i := 0; i < 30; i++ {
			g.Add(key(i))
		}
		cs, _ := g.Dump(40)
		f.Add(encodeChunks(cs))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cs := fuzzChunks(data)
		g, err := LoadChunks(cs)
		if err != nil {
			return
		}
		again, err := g.Dump(0)
		if err != nil {
			t.Fatal(err)
		}
		h, err := LoadChunks(again)
		if err != nil || !h.Equal(g) {
			t.Fatalf("reloading a loaded filter: %v", err)
		}
		if b, err := g.NextLinkBits(); err != nil || b > 1<<24 {
			return // a hostile chain may grow by a huge link; see NextLinkBits
		}
		if _, err := g.Add(data); err == nil && !g.Contains(data) {
			t.Fatal("false negative")
		}
	})
}

func FuzzReadRedisBloom(f *testing.F) {
	g := redisChain(f, 30, Config{Capacity: 10})
	var buf bytes.Buffer
	g.WriteRedisBloom(&buf, 16)
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := ReadRedisBloom(bytes.NewReader(data))
		if err != nil {
			return
		}
		var out bytes.Buffer
		if _, err := g.WriteRedisBloom(&out, 0); err != nil {
			t.Fatal(err)
		}
		h, err := ReadRedisBloom(&out)
		if err != nil || !h.Equal(g) {
			t.Fatalf("re-read: %v", err)
		}
	})
}

// TestGrowthZero: RedisBloom 2.4's BF.RESERVE accepts EXPANSION 0; such a
// chain cannot open a second link (RedisBloom then replies 1 without
// adding the key). Loaded here, it refuses the new key with ErrFull and
// changes nothing.
func TestGrowthZero(t *testing.T) {
	f := redisChain(t, 0, Config{Capacity: 10})
	chunks := must(f.Dump(0))
	binary.LittleEndian.PutUint32(chunks[0].Data[16:], 0)
	g := must(LoadChunks(chunks))
	var err error
	for i := 0; err == nil && i < 100; i++ {
		_, err = g.Add(key(i))
	}
	before := g.Clone()
	if !errors.Is(err, ErrFull) || g.Links() != 1 || g.N() != 10 {
		t.Fatalf("expansion 0: %v, %d links, N = %d", err, g.Links(), g.N())
	}
	if _, err := g.Add([]byte("new")); !errors.Is(err, ErrFull) || !g.Equal(before) {
		t.Errorf("second refusal: %v", err)
	}
}

// TestLoaderReceived: at every point of a load (chunks of odd sizes, so
// links end mid-word and loads stop mid-word), the chunks Received returns
// bring a new Loader to the same state: fed the rest, both finish with the
// original filter. Progress counts the bytes.
func TestLoaderReceived(t *testing.T) {
	f := redisChain(t, 700, Config{Capacity: 100, FPR: 0.01})
	for _, size := range []int{5, 13, 64} {
		chunks, err := f.Dump(size)
		if err != nil {
			t.Fatal(err)
		}
		var ld Loader
		if ld.Received() != nil {
			t.Fatal("Received before the header")
		}
		for i, c := range chunks {
			if err := ld.LoadChunk(c.Iter, c.Data); err != nil {
				t.Fatal(err)
			}
			got, total := ld.Progress()
			if want := uint64(c.Iter - 1); i > 0 && got != want || total != f.Bits()/8 {
				t.Fatalf("size %d chunk %d: progress %d of %d, want %d of %d", size, i, got, total, want, f.Bits()/8)
			}
			var again Loader
			for _, r := range ld.Received() {
				if err := again.LoadChunk(r.Iter, r.Data); err != nil {
					t.Fatalf("size %d chunk %d: reloading Received: %v", size, i, err)
				}
			}
			for _, rest := range chunks[i+1:] {
				if err := again.LoadChunk(rest.Iter, rest.Data); err != nil {
					t.Fatalf("size %d chunk %d: continuing: %v", size, i, err)
				}
			}
			if g, err := again.Filter(); err != nil || !g.Equal(f) {
				t.Fatalf("size %d chunk %d: resumed load: %v", size, i, err)
			}
		}
		if g, err := ld.Filter(); err != nil || !g.Equal(f) || ld.Received() != nil {
			t.Fatalf("size %d: %v", size, err)
		}
	}
}

// TestRoom: Room counts down the newest link's free places and is 0 when
// the next new key opens a link (or, non-scaling, is refused).
func TestRoom(t *testing.T) {
	f := must(NewRedisBloom(0.01, 10, 2, false))
	for i := 0; i < 40; i++ {
		r := f.Room()
		links := f.Links()
		present, err := f.Add(key(i))
		if err != nil {
			t.Fatal(err)
		}
		if !present && (r == 0) != (f.Links() == links+1) {
			t.Fatalf("add %d: room %d before, links %d → %d", i, r, links, f.Links())
		}
	}
	ns := must(NewRedisBloom(0.01, 3, 0, true))
	for i := 0; ns.Room() > 0; i++ {
		ns.Add(key(i))
	}
	if _, err := ns.Add(key(1000)); !errors.Is(err, ErrFull) {
		t.Fatalf("room 0 but add: %v", err)
	}
	if (&Filter{}).Room() != 0 {
		t.Fatal("zero filter has room")
	}
}

// TestLoaderReadChunk: at every point of a load (chunks of odd sizes),
// the chunks WalkReceived gives, written to a buffer and read back with
// ReadChunk (as a snapshot stores a load in progress), bring a new Loader
// to the same state, with and without AllocateWhole; a chunk out of
// place, crossing a link or cut short is refused before anything is read
// or allocated, or as truncated.
func TestLoaderReadChunk(t *testing.T) {
	f := redisChain(t, 700, Config{Capacity: 100, FPR: 0.01})
	for _, whole := range []bool{false, true} {
		for _, size := range []int{5, 13, 64} {
			chunks := must(f.Dump(size))
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
					t.Fatalf("size %d chunk %d: WalkReceived: %v after %d chunks", size, i, err, n)
				}
				for _, rest := range chunks[i+1:] {
					if err := again.LoadChunk(rest.Iter, rest.Data); err != nil {
						t.Fatalf("size %d chunk %d: continuing: %v", size, i, err)
					}
				}
				if g, err := again.Filter(); err != nil || !g.Equal(f) {
					t.Fatalf("size %d chunk %d: resumed load: %v", size, i, err)
				}
			}
		}
	}

	chunks := must(f.Dump(0))
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
		"a gap":             {first.Iter + 8, len(first.Data)},
		"crossing the link": {first.Iter + 8, len(first.Data) + 8},
		"negative":          {first.Iter, -1},
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

// TestAllocateWhole: after AllocateWhole, a 16 MiB link loaded in 64 KiB
// chunks is allocated once (about 16 MiB in all); without it the link
// grows as the chunks come (several times that); and a header announcing
// more than the memory this process may use is still loaded as its bytes
// arrive. Before AllocateWhole, a server's BF.LOADCHUNK (and its replay
// of the log) grew every link.
func TestAllocateWhole(t *testing.T) {
	f := must(NewRedisBloom(0.01, 12000000, 2, false)) // 2^27 bits
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
		t.Errorf("AllocateWhole: a link of %d bytes allocated %d", size, a)
	}
	if a := loadAll(false); a < 2*size {
		t.Errorf("without AllocateWhole: a link of %d bytes allocated only %d (does it still grow as bytes come?)", size, a)
	}

	defer func(f func() uint64) { blrd.MemLimit = f }(blrd.MemLimit)
	blrd.MemLimit = func() uint64 { return size / 2 }
	if a := loadAll(true); a < 2*size {
		t.Errorf("AllocateWhole of more than the memory limit: %d bytes allocated for %d, at once?", a, size)
	}
}

// TestFramingTrailer: a version-2 framing (internal/blrd) with an empty
// trailer reads as version 1 does; a BF dump with a trailer is refused,
// since BF.SCANDUMP's header records everything.
func TestFramingTrailer(t *testing.T) {
	f := redisChain(t, 150, Config{Capacity: 100})
	chunks := must(f.Dump(0))
	for _, trailer := range [][]byte{nil, []byte("x")} {
		var buf bytes.Buffer
		w := blrd.NewTrailerWriter(&buf, trailer)
		for _, c := range chunks {
			w.Record(c.Iter, c.Data)
		}
		must(w.Close())
		g, err := ReadRedisBloom(&buf)
		if len(trailer) == 0 && (err != nil || !g.Equal(f)) || len(trailer) != 0 && !errors.Is(err, format.ErrFormat) {
			t.Errorf("trailer %q: %v", trailer, err)
		}
	}
}
