package format

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func encode(t *testing.T, h Header, params []byte, words []uint64) []byte {
	t.Helper()
	b := encodeF(h, params, words)
	if len(b) != HeaderSize+len(params)+8*len(words)+4 {
		t.Fatalf("encoded %d bytes", len(b))
	}
	return b
}

func TestRoundTrip(t *testing.T) {
	var p Params
	p.U8(7)
	p.U32(1 << 30)
	p.U64(1 << 60)
	words := make([]uint64, 300000) // more than one read chunk
	for i := range words {
		words[i] = uint64(i) * 0x9E3779B97F4A7C15
	}
	data := encode(t, Header{Kind: KindCounting, Scheme: 3, Seed: 99}, p.Bytes(), words)
	if len(data) != HeaderSize+13+8*len(words)+4 {
		t.Fatalf("size %d", len(data))
	}
	d := NewDecoder(bytes.NewReader(data))
	params, err := d.Begin(KindCounting)
	if err != nil {
		t.Fatal(err)
	}
	pr := NewParamReader(params)
	if pr.U8() != 7 || pr.U32() != 1<<30 || pr.U64() != 1<<60 || pr.Err() != nil {
		t.Fatal("params differ")
	}
	if d.Header.Seed != 99 || d.Header.Scheme != 3 || d.Header.Kind != KindCounting {
		t.Fatalf("header %+v", d.Header)
	}
	got, err := d.Words(uint64(len(words)))
	if err != nil {
		t.Fatal(err)
	}
	for i := range words {
		if got[i] != words[i] {
			t.Fatal("payload differs")
		}
	}
	if err := d.End(); err != nil {
		t.Fatal(err)
	}
	if d.N() != int64(len(data)) {
		t.Errorf("N = %d", d.N())
	}
}

func TestErrors(t *testing.T) {
	data := encode(t, Header{Kind: KindBloom}, []byte{1, 2, 3, 4}, []uint64{1, 2})
	if _, err := NewDecoder(bytes.NewReader(data)).Begin(KindCounting); !errors.Is(err, ErrFormat) {
		t.Errorf("wrong kind accepted: %v", err)
	}
	bad := bytes.Clone(data)
	bad[4] = 2
	if _, err := NewDecoder(bytes.NewReader(bad)).Begin(0); !errors.Is(err, ErrVersion) {
		t.Errorf("version: %v", err)
	}
	bad = bytes.Clone(data)
	bad[9] ^= 1
	if _, err := NewDecoder(bytes.NewReader(bad)).Begin(0); !errors.Is(err, ErrChecksum) {
		t.Errorf("header checksum: %v", err)
	}
	bad = bytes.Clone(data)
	bad[len(bad)-6] ^= 1 // payload
	d := NewDecoder(bytes.NewReader(bad))
	d.Begin(0)
	d.Words(2)
	if err := d.End(); !errors.Is(err, ErrChecksum) {
		t.Errorf("payload checksum: %v", err)
	}
	d = NewDecoder(bytes.NewReader(data))
	d.Begin(0)
	d.Words(1)
	if err := d.End(); !errors.Is(err, ErrFormat) {
		t.Errorf("unread payload: %v", err)
	}
	d = NewDecoder(bytes.NewReader(data))
	d.Begin(0)
	if _, err := d.Words(3); !errors.Is(err, ErrFormat) {
		t.Errorf("overlong read: %v", err)
	}
	_, err := NewDecoder(bytes.NewReader(data[:20])).Begin(0)
	if !errors.Is(err, io.ErrUnexpectedEOF) || !errors.Is(err, ErrFormat) {
		t.Errorf("truncated: %v", err)
	}
	pr := NewParamReader([]byte{1, 2})
	pr.U32()
	if pr.Err() == nil {
		t.Error("short params accepted")
	}
	pr = NewParamReader([]byte{1, 2})
	pr.U8()
	if pr.Err() == nil {
		t.Error("leftover params accepted")
	}
	var b bytes.Buffer
	e := NewEncoder(&b)
	e.Begin(Header{PayloadLen: 16}, nil)
	e.Words([]uint64{1})
	if _, err := e.Close(); err == nil {
		t.Error("short payload written without error")
	}
}

// TestHostilePayloadLength: a header claiming a huge payload, followed by a
// short stream, must fail without allocating anywhere near the claim.
func TestHostilePayloadLength(t *testing.T) {
	var b bytes.Buffer
	e := NewEncoder(&b)
	e.Begin(Header{Kind: KindBloom, PayloadLen: 1 << 40}, nil)
	data := append(b.Bytes(), make([]byte, 1000)...)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	d := NewDecoder(bytes.NewReader(data))
	if _, err := d.Begin(KindBloom); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Words(1 << 37); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("got %v", err)
	}
	runtime.ReadMemStats(&after)
	if a := after.TotalAlloc - before.TotalAlloc; a > 8<<20 {
		t.Errorf("allocated %d bytes for a 1 KB stream", a)
	}
}

// A payload of S bytes from a reader that knows its length (a file, a
// bytes.Reader) is allocated once: S bytes (plus the 256 KiB read buffer of
// the portable read), not
// the doubling growth that costs several times S (the load of a 114 MiB
// filter once peaked at 433-466 MiB of RSS).
func TestPayloadAllocatedOnce(t *testing.T) {
	const words = 8 << 20 // 64 MiB
	var b bytes.Buffer
	e := NewEncoder(&b)
	e.Begin(Header{Kind: KindBloom, PayloadLen: words * 8}, nil)
	e.Words(make([]uint64, words))
	if _, err := e.Close(); err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]func() io.Reader{
		"bytes.Reader":  func() io.Reader { return bytes.NewReader(b.Bytes()) },
		"SectionReader": func() io.Reader { return io.NewSectionReader(bytes.NewReader(b.Bytes()), 0, int64(b.Len())) },
		"file": func() io.Reader {
			path := filepath.Join(t.TempDir(), "f")
			if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			return f
		},
	} {
		rd := r()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		d := NewDecoder(rd)
		if _, err := d.Begin(KindBloom); err != nil {
			t.Fatal(err)
		}
		got, err := d.Words(words)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.End(); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		if a, limit := after.TotalAlloc-before.TotalAlloc, uint64(words*8+(512<<10)); a > limit {
			t.Errorf("%s: allocated %d bytes for a %d-byte payload (limit %d)", name, a, words*8, limit)
		}
		if len(got) != words {
			t.Errorf("%s: %d words", name, len(got))
		}
	}
}

func TestKindNames(t *testing.T) {
	if KindBloom.String() != "bloom" || Kind(200).String() != "kind(200)" {
		t.Error("kind names")
	}
	d := NewDecoder(strings.NewReader(strings.Repeat("nope", 8)))
	if _, err := d.PeekKind(); err == nil {
		t.Error("PeekKind accepted garbage")
	}
}

func FuzzDecoder(f *testing.F) {
	f.Add(encodeF(Header{Kind: KindBloom, Seed: 1}, []byte{1, 2, 3}, []uint64{5, 6}))
	f.Fuzz(func(t *testing.T, data []byte) {
		d := NewDecoder(bytes.NewReader(data))
		params, err := d.Begin(0)
		if err != nil {
			return
		}
		_ = params
		if _, err := d.Words(d.Header.PayloadLen / 8); err != nil {
			return
		}
		_ = d.End()
	})
}

func encodeF(h Header, params []byte, words []uint64) []byte {
	var b bytes.Buffer
	e := NewEncoder(&b)
	h.PayloadLen = uint64(len(words)) * 8
	e.Begin(h, params)
	e.Words(words)
	e.Close()
	return b.Bytes()
}

// TestWordsFunc: the chunks are handed over in order, contiguous, aligned
// on chunkWords, each with every word read so far; the result has the spare
// capacity asked for, from a reader that knows its length or not.
func TestWordsFunc(t *testing.T) {
	for _, n := range []int{0, 1, chunkWords, chunkWords + 1, 2*chunkWords + 3} {
		words := make([]uint64, n)
		for i := range words {
			words[i] = uint64(i)*0x9E3779B97F4A7C15 + 1
		}
		data := encodeF(Header{Kind: KindBloom}, nil, words)
		for _, r := range []io.Reader{bytes.NewReader(data), io.MultiReader(bytes.NewReader(data))} {
			d := NewDecoder(r)
			if _, err := d.Begin(KindBloom); err != nil {
				t.Fatal(err)
			}
			next := 0
			got, err := d.WordsFunc(uint64(n), 3, func(w []uint64, from int) {
				if from != next || from%chunkWords != 0 || len(w) <= from || len(w) > from+chunkWords {
					t.Fatalf("n = %d: chunk [%d, %d) after %d", n, from, len(w), next)
				}
				for i := range w {
					if w[i] != words[i] {
						t.Fatalf("n = %d: word %d is %#x, want %#x", n, i, w[i], words[i])
					}
				}
				next = len(w)
			})
			if err != nil {
				t.Fatal(err)
			}
			if next != n || len(got) != n || cap(got) < n+3 {
				t.Errorf("n = %d (%T): chunks up to %d, len %d, cap %d", n, r, next, len(got), cap(got))
			}
			if err := d.End(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// A payload larger than the memory the process may use is refused before
// anything is allocated (a sparse file claiming 32 GiB crashed the
// command with a fatal out-of-memory error).
func TestPayloadBeyondMemoryRefused(t *testing.T) {
	defer func(f func() uint64) { memLimit = f }(memLimit)
	memLimit = func() uint64 { return 1 << 20 }
	var b bytes.Buffer
	e := NewEncoder(&b)
	e.Begin(Header{Kind: KindBloom, PayloadLen: 2 << 20}, nil)
	e.Words(make([]uint64, (2<<20)/8))
	e.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	d := NewDecoder(bytes.NewReader(b.Bytes()))
	if _, err := d.Begin(KindBloom); err != nil {
		t.Fatal(err)
	}
	_, err := d.Words((2 << 20) / 8)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrTooLarge) || errors.Is(err, ErrFormat) {
		t.Fatalf("got %v, want ErrTooLarge", err)
	}
	if a := after.TotalAlloc - before.TotalAlloc; a > 64<<10 {
		t.Errorf("allocated %d bytes before refusing", a)
	}
}

// Payload (Encoder) and Payload (Decoder) move the payload as raw bytes:
// the file they write is byte for byte the one Words writes, a payload
// streamed in chunks arrives whole and in order, and a damaged payload is
// reported by End (the caller acts on what it copied only then).
func TestPayloadBytes(t *testing.T) {
	var p Params
	p.U64(5)
	words := make([]uint64, 3000)
	for i := range words {
		words[i] = uint64(i+1) * 0x9E3779B97F4A7C15
	}
	h := Header{Kind: KindBlocked, Scheme: 1, Seed: 7, PayloadLen: 8 * uint64(len(words))}
	want := encode(t, h, p.Bytes(), words)
	raw := want[HeaderSize+8 : len(want)-4]
	var b bytes.Buffer
	e := NewEncoder(&b)
	e.Begin(h, p.Bytes())
	e.Payload(raw[:800])
	e.Payload(raw[800:])
	if _, err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Fatal("Encoder.Payload wrote other bytes than Encoder.Words")
	}
	e = NewEncoder(io.Discard)
	e.Begin(h, p.Bytes())
	e.Payload(raw[:12])
	if _, err := e.Close(); err == nil {
		t.Error("a chunk of 12 bytes accepted")
	}

	read := func(data []byte) ([]byte, error) {
		d := NewDecoder(bytes.NewReader(data))
		if _, err := d.Begin(KindBlocked); err != nil {
			return nil, err
		}
		var got []byte
		calls := 0
		err := d.Payload(d.Header.PayloadLen, 4096, func(c []byte) error {
			calls++
			if len(c) > 4096 {
				t.Errorf("chunk of %d bytes", len(c))
			}
			got = append(got, c...)
			return nil
		})
		if err != nil {
			return got, err
		}
		if calls != (len(raw)+4095)/4096 {
			t.Errorf("%d chunks", calls)
		}
		return got, d.End()
	}
	got, err := read(want)
	if err != nil || !bytes.Equal(got, raw) {
		t.Fatalf("Decoder.Payload: %v, equal %v", err, bytes.Equal(got, raw))
	}
	bad := bytes.Clone(want)
	bad[HeaderSize+8+100] ^= 1
	if _, err := read(bad); !errors.Is(err, ErrChecksum) {
		t.Errorf("damaged payload: %v, want ErrChecksum", err)
	}
	if _, err := read(want[:len(want)-50]); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("truncated payload: %v, want io.ErrUnexpectedEOF", err)
	}
}

// TestBytes: Bytes reads the payload as the file holds it, with the spare
// capacity asked for; from a reader that knows its length it allocates
// the payload once; a short stream claiming a huge payload fails without
// allocating near the claim; a payload beyond the memory limit is refused.
func TestBytes(t *testing.T) {
	words := make([]uint64, 3*chunkWords+5)
	for i := range words {
		words[i] = uint64(i+1) * 0x9E3779B97F4A7C15
	}
	h := Header{Kind: KindCuckoo, PayloadLen: 8 * uint64(len(words))}
	data := encode(t, h, nil, words)
	raw := data[HeaderSize : len(data)-4]
	for name, r := range map[string]io.Reader{
		"bytes.Reader": bytes.NewReader(data),
		"a pipe":       io.MultiReader(bytes.NewReader(data)), // no length
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		d := NewDecoder(r)
		if _, err := d.Begin(KindCuckoo); err != nil {
			t.Fatal(err)
		}
		got, err := d.Bytes(uint64(len(raw)), 8)
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := d.End(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(got, raw) || cap(got)-len(got) < 8 {
			t.Errorf("%s: %d bytes (cap %d), not the payload with 8 spare", name, len(got), cap(got))
		}
		if a := after.TotalAlloc - before.TotalAlloc; name == "bytes.Reader" && a > uint64(len(raw))+(64<<10) {
			t.Errorf("%s: allocated %d bytes for a %d-byte payload", name, a, len(raw))
		}
	}
	d := NewDecoder(bytes.NewReader(data))
	d.Begin(KindCuckoo)
	if _, err := d.Bytes(12, 0); !errors.Is(err, ErrFormat) {
		t.Errorf("12 bytes: %v", err)
	}

	var b bytes.Buffer
	e := NewEncoder(&b)
	e.Begin(Header{Kind: KindCuckoo, PayloadLen: 1 << 40}, nil)
	short := append(b.Bytes(), make([]byte, 1000)...)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	d = NewDecoder(bytes.NewReader(short))
	d.Begin(KindCuckoo)
	if _, err := d.Bytes(1<<40, 0); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("huge claim: %v", err)
	}
	runtime.ReadMemStats(&after)
	if a := after.TotalAlloc - before.TotalAlloc; a > 8<<20 {
		t.Errorf("allocated %d bytes for a 1 KB stream", a)
	}

	defer func(f func() uint64) { memLimit = f }(memLimit)
	memLimit = func() uint64 { return 1 << 10 }
	d = NewDecoder(bytes.NewReader(data))
	d.Begin(KindCuckoo)
	if _, err := d.Bytes(uint64(len(raw)), 0); !errors.Is(err, ErrTooLarge) {
		t.Errorf("beyond the memory limit: %v", err)
	}
}

// TestPutWordsBytes: PutWords and PutBytes are little-endian conversions
// (whichever twin this build has), and each other's inverse.
func TestPutWordsBytes(t *testing.T) {
	src := make([]byte, 8*37+5)
	for i := range src {
		src[i] = byte(i*131 + 7)
	}
	w := make([]uint64, 37)
	PutWords(w, src)
	for i, x := range w {
		if want := binary.LittleEndian.Uint64(src[8*i:]); x != want {
			t.Fatalf("word %d: %#x, want %#x", i, x, want)
		}
	}
	back := make([]byte, 8*37)
	PutBytes(back, w)
	if !bytes.Equal(back, src[:8*37]) {
		t.Fatal("PutBytes(PutWords(b)) != b")
	}
}
