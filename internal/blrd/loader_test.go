package blrd

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/bloomlab/bloomlab/internal/format"
)

// toyBody is a Body whose header is the segments' sizes (u16 each) and
// whose segments are plain byte slices; Finish refuses a zero byte.
type toyBody struct {
	segs  [][]byte
	grown []uint64 // the room of each Grow that allocated
}

func (b *toyBody) Names() (string, string) { return "toy", "segment" }

func (b *toyBody) Header(hdr []byte) ([]uint64, error) {
	if len(hdr) == 0 || len(hdr)%2 != 0 {
		return nil, Bad("toy", "header of %d bytes", len(hdr))
	}
	sizes := make([]uint64, len(hdr)/2)
	for i := range sizes {
		if sizes[i] = uint64(binary.LittleEndian.Uint16(hdr[2*i:])); sizes[i] == 0 {
			return nil, Bad("toy", "segment %d empty", i)
		}
	}
	b.segs = make([][]byte, len(sizes))
	return sizes, nil
}

func (b *toyBody) Grow(seg int, room uint64) {
	if uint64(cap(b.segs[seg])) < room {
		s := make([]byte, len(b.segs[seg]), room)
		copy(s, b.segs[seg])
		b.segs[seg] = s
		b.grown = append(b.grown, room)
	}
}

func (b *toyBody) Append(seg int, have uint64, data []byte) {
	if uint64(len(b.segs[seg])) != have {
		panic("Append: have disagrees")
	}
	b.segs[seg] = append(b.segs[seg], data...)
}

func (b *toyBody) WriteSegment(w io.Writer, seg int, n uint64) error {
	_, err := w.Write(b.segs[seg][:n])
	return err
}

func (b *toyBody) Finish() error {
	for _, s := range b.segs {
		if bytes.IndexByte(s, 0) >= 0 {
			return Bad("toy", "a zero byte")
		}
	}
	return nil
}

func toyHeader(sizes ...uint16) []byte {
	var h []byte
	for _, s := range sizes {
		h = binary.LittleEndian.AppendUint16(h, s)
	}
	return h
}

// TestCoreCheck: Check's refusals carry their Reason and the chunk's
// span, wrap format.ErrFormat, and leave the Core usable; LoadChunk
// refuses what Check refuses and is spent after.
func TestCoreCheck(t *testing.T) {
	var c Core
	b := &toyBody{}
	if err := c.Check(b, 2, 1); err == nil || errors.As(err, new(*ChunkError)) {
		t.Fatalf("Check before a header: %v", err)
	}
	if err := c.LoadChunk(b, 1, toyHeader(4, 2)); err != nil {
		t.Fatal(err)
	}
	if got, total := c.Progress(); got != 0 || total != 6 {
		t.Fatalf("Progress %d of %d", got, total)
	}
	if err := c.LoadChunk(b, 4, []byte("abc")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		iter   int64
		n      int
		reason Reason
		start  uint64
	}{
		{5, 0, BadIterator, 0},  // empty
		{2, 3, BadIterator, 0},  // the iterator cannot follow 3 bytes
		{0, 1, BadIterator, 0},  // no iterator is 0 but the end's
		{6, 1, OutOfOrder, 4},   // a gap
		{4, 1, OutOfOrder, 2},   // an overlap
		{6, 2, Crossing, 3},     // into segment 1
		{10, 6, Crossing, 3},    // beyond everything, from segment 0
		{5, 1, 0, 3},            // the next chunk
		{100, 96, Crossing, 3},  // far beyond
		{8, 4, Crossing, 3},     // 1 byte of segment 0, 3 of segment 1
		{-1, 1, BadIterator, 0}, // negative
	} {
		err := c.Check(b, tc.iter, tc.n)
		var ce *ChunkError
		switch {
		case tc.reason == 0 && err != nil:
			t.Errorf("Check(%d, %d): %v", tc.iter, tc.n, err)
		case tc.reason != 0 && (!errors.As(err, &ce) || ce.Reason != tc.reason || !errors.Is(err, format.ErrFormat)):
			t.Errorf("Check(%d, %d) = %v, want reason %d", tc.iter, tc.n, err, tc.reason)
		case ce != nil && tc.reason != BadIterator && (ce.Start != tc.start || ce.End != tc.start+uint64(tc.n) || ce.Next != 3):
			t.Errorf("Check(%d, %d): span %d … %d, next %d", tc.iter, tc.n, ce.Start, ce.End, ce.Next)
		}
	}
	// Beyond: every byte has come.
	for _, ch := range []Chunk{{Iter: 5, Data: []byte("d")}, {Iter: 7, Data: []byte("ef")}} {
		if err := c.LoadChunk(b, ch.Iter, ch.Data); err != nil {
			t.Fatal(err)
		}
	}
	var ce *ChunkError
	if err := c.Check(b, 8, 1); !errors.As(err, &ce) || ce.Reason != Beyond {
		t.Errorf("Check past the total: %v", err)
	}
	if err := c.LoadChunk(b, 9, []byte("x")); err == nil {
		t.Fatal("LoadChunk past the total")
	}
	if err := c.Finish(b); err == nil || c.LoadChunk(b, 0, nil) == nil {
		t.Errorf("a Core is spent after an error: %v", err)
	}
}

// TestCoreWalk: WalkReceived (and Received) give the chunks that bring a
// new Core to the same state at every step, one per segment, the current
// one partial; a Core loaded whole finishes and walks nothing.
func TestCoreWalk(t *testing.T) {
	hdr := toyHeader(5, 3, 4)
	data := []byte("abcdefghijkl")
	var c Core
	b := &toyBody{}
	c.LoadChunk(b, 1, hdr)
	for at := 0; at <= len(data); at++ {
		var d Core
		db := &toyBody{}
		got := c.Received(b)
		for _, ch := range got {
			if err := d.LoadChunk(db, ch.Iter, ch.Data); err != nil {
				t.Fatalf("at %d: %v", at, err)
			}
		}
		if p, _ := d.Progress(); p != uint64(at) || !bytes.Equal(bytes.Join(db.segs, nil), data[:at]) {
			t.Fatalf("at %d: the received chunks load %d bytes %q", at, p, bytes.Join(db.segs, nil))
		}
		if want := 1 + min(at, 1) + min(max(at-5, 0), 1) + min(max(at-8, 0), 1); len(got) != want {
			t.Fatalf("at %d: %d chunks, want %d", at, len(got), want)
		}
		if at < len(data) {
			if err := c.LoadChunk(b, int64(at)+2, data[at:at+1]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := c.Finish(b); err != nil || c.Received(b) != nil {
		t.Fatalf("Finish: %v", err)
	}
	if err := c.Finish(b); err == nil {
		t.Fatal("Finish twice")
	}
}

// TestCoreAllocation: a segment is allocated whole under LoadAll and
// AllocateWhole (unless the total exceeds MemLimit), else for its first
// chunk (at least 1 MiB) and grown as its bytes come; ReadChunk makes room
// once per chunk.
func TestCoreAllocation(t *testing.T) {
	hdr := toyHeader(60000, 40000)
	data := bytes.Repeat([]byte{7}, 100000)
	chunks := []Chunk{{Iter: 1, Data: hdr}, {Iter: 1 + 1000, Data: data[:1000]}, {Iter: 1 + 60000, Data: data[1000:60000]}, {Iter: 1 + 100000, Data: data[60000:]}}
	load := func(whole bool, limit uint64, read bool) []uint64 {
		defer func(f func() uint64) { MemLimit = f }(MemLimit)
		MemLimit = func() uint64 { return limit }
		var c Core
		b := &toyBody{}
		if whole {
			c.AllocateWhole()
		}
		for i, ch := range chunks {
			var err error
			if read && i > 0 {
				err = c.ReadChunk(b, ch.Iter, len(ch.Data), bytes.NewReader(ch.Data))
			} else {
				err = c.LoadChunk(b, ch.Iter, ch.Data)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := c.Finish(b); err != nil {
			t.Fatal(err)
		}
		return b.grown
	}
	for _, tc := range []struct {
		whole bool
		limit uint64
		read  bool
		want  string
	}{
		{true, 0, false, "[60000 40000]"},
		{true, 1 << 30, true, "[60000 40000]"},
		{true, 99999, false, "[60000 40000]"}, // over the limit: 1 MiB at first, at most the segment
		{false, 0, false, "[60000 40000]"},
		{false, 0, true, "[1000 60000 40000]"},
		{true, 99999, true, "[1000 60000 40000]"},
	} {
		if got := fmt.Sprint(load(tc.whole, tc.limit, tc.read)); got != tc.want {
			t.Errorf("whole %v limit %d read %v: grown %s, want %s", tc.whole, tc.limit, tc.read, got, tc.want)
		}
	}
	var c Core
	b := &toyBody{}
	if err := c.LoadAll(b, chunks); err != nil || fmt.Sprint(b.grown) != "[60000 40000]" {
		t.Errorf("LoadAll: %v, grown %v", err, b.grown)
	}
	if err := new(Core).LoadAll(&toyBody{}, chunks[:3]); !errors.Is(err, format.ErrFormat) {
		t.Errorf("LoadAll of a short dump: %v", err)
	}
}

// TestReadWriteFile: WriteFile and ReadFile round-trip a dump, header
// length hook and trailer included; Dump gives the same chunks.
func TestReadWriteFile(t *testing.T) {
	hdr := toyHeader(5, 3)
	data := []byte("abcdefgh")
	scan := func(it int64) (int64, []byte) {
		switch it {
		case 1:
			return 4, data[:3]
		case 4:
			return 6, data[3:5]
		case 6:
			return 9, data[5:]
		}
		return 0, nil
	}
	if d := Dump(hdr, scan); len(d) != 4 || d[3].Iter != 9 || string(d[2].Data) != "de" {
		t.Fatalf("Dump: %v", d)
	}
	for _, trailer := range [][]byte{nil, {}, []byte("cap")} {
		var buf bytes.Buffer
		n, err := WriteFile(&buf, trailer, hdr, scan)
		if err != nil || n != int64(buf.Len()) {
			t.Fatal(n, err)
		}
		ld := &Session[toyBody, *toyBody]{}
		got, err := ReadFile(&buf, "toy", ld, func(n uint32) error { return nil })
		b, ferr := Finish(ld)
		if err != nil || !bytes.Equal(got, trailer) || (got == nil) != (trailer == nil) || ferr != nil || !bytes.Equal(bytes.Join(b.segs, nil), data) {
			t.Errorf("trailer %q: %q, %v", trailer, got, err)
		}
		buf.Reset()
		WriteFile(&buf, trailer, hdr, scan)
		if _, err := ReadFile(&buf, "toy", &Session[toyBody, *toyBody]{}, func(n uint32) error { return Bad("toy", "no") }); !errors.Is(err, format.ErrFormat) {
			t.Errorf("the header hook's refusal: %v", err)
		}
	}
}
