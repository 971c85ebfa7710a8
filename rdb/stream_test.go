package rdb

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

// moduleValue returns the value of a DUMP payload: a module value whose
// fields are the given raw string encodings.
func moduleValue(raws ...[]byte) []byte {
	var e enc
	e.byte(TypeModule2)
	id, _ := ModuleID("MBbloom--", 4)
	e.length(id)
	for _, r := range raws {
		e.length(modString)
		e.buf = append(e.buf, r...)
	}
	e.length(modEOF)
	return e.buf
}

// rawString is s as enc writes it (integer, LZF when compress, raw).
func rawString(s []byte, compress bool) []byte {
	e := enc{compress: compress}
	e.string(s)
	return e.buf
}

// lzfString is an LZF string encoding of compressed bytes c announced to
// decompress to n bytes.
func lzfString(c []byte, n int) []byte {
	var e enc
	e.byte(0xC0 | encLZF)
	e.length(uint64(len(c)))
	e.length(uint64(n))
	return append(e.buf, c...)
}

// streamed reads the next string field of m with ReadStringTo, checking
// that size comes once, first, with the length the pieces add up to, and
// that no piece is empty or over PieceSize.
func streamed(t testing.TB, m *ModuleValue) ([]byte, error) {
	var out []byte
	announced := int64(-1)
	err := m.ReadStringTo(func(n int64) error {
		if announced >= 0 || out != nil {
			t.Fatal("size called twice or after a piece")
		}
		announced = n
		out = make([]byte, 0, n)
		return nil
	}, func(p []byte) error {
		if announced < 0 {
			t.Fatal("a piece before size")
		}
		if len(p) == 0 || len(p) > PieceSize {
			t.Fatalf("a piece of %d bytes", len(p))
		}
		out = append(out, p...)
		return nil
	})
	if err == nil && int64(len(out)) != announced {
		t.Fatalf("size said %d, the pieces came to %d", announced, len(out))
	}
	return out, err
}

// TestReadStringTo: plain strings (empty, small, over 3 pieces),
// integer-encoded ones, and LZF ones (short, long runs, a 5000-byte
// pattern over 3 pieces, references 8 KiB back crossing every piece
// boundary and window slide, data of random repeats over 3 pieces) come
// out of
// ReadStringTo in pieces that add up to what ReadString returns, with
// size called first with their length; both read the fields of one value
// in turn, in a DUMP payload and in a file.
func TestReadStringTo(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	random := func(n int) []byte {
		p := make([]byte, n)
		for i := range p {
			p[i] = byte(rng.Uint32())
		}
		return p
	}
	repeats := make([]byte, 3*PieceSize+12345) // repeats near and far
	for i := 0; i < len(repeats); {
		if i > 8200 && rng.IntN(4) != 0 { // a run copied from up to 8 KiB back
			back := 1 + rng.IntN(8192)
			for n := 3 + rng.IntN(300); n > 0 && i < len(repeats); n-- {
				repeats[i] = repeats[i-back]
				i++
			}
		} else {
			repeats[i] = byte(rng.Uint32())
			i++
		}
	}
	// References exactly 8 KiB back: 8192 literal bytes, then references
	// of 264 bytes, offset 8191, past three pieces.
	var far []byte
	head := random(lzfHist)
	for i := 0; i < len(head); i += 32 {
		far = append(far, 31)
		far = append(far, head[i:i+32]...)
	}
	farLen := lzfHist
	for farLen < 3*PieceSize+lzfHist {
		far = append(far, 7<<5|0x1f, 255, 0xff)
		farLen += 264
	}
	farOut, err := LZFDecompress(far, farLen)
	must(t, err)

	var raws [][]byte
	var want [][]byte
	add := func(raw, s []byte) { raws = append(raws, raw); want = append(want, s) }
	for _, s := range []string{"", "x", "-12", "127", "-32768", "40000", "2147483647", "-2147483648", "007", "hello world"} {
		add(rawString([]byte(s), true), []byte(s))
	}
	big := random(3*PieceSize + 777)
	add(rawString(big, false), big)
	for _, s := range [][]byte{
		bytes.Repeat([]byte("ab"), 40),
		bytes.Repeat([]byte{0}, 5*PieceSize+3),
		bytes.Repeat(random(5000), 700),
		repeats,
	} {
		raw := rawString(s, true)
		if raw[0] != 0xC0|encLZF {
			t.Fatalf("a %d-byte test string was not compressed", len(s))
		}
		add(raw, s)
	}
	add(lzfString(far, farLen), farOut)
	value := moduleValue(raws...)

	check := func(where string, ms, mt *ModuleValue) {
		for i := range want {
			s, err := ms.ReadString()
			must(t, err)
			p, err := streamed(t, mt)
			if err != nil {
				t.Fatalf("%s: field %d: %v", where, i, err)
			}
			if !bytes.Equal(s, want[i]) || !bytes.Equal(p, s) {
				t.Fatalf("%s: field %d (%d bytes): ReadString gave %d bytes, ReadStringTo %d, equal %v", where, i, len(want[i]), len(s), len(p), bytes.Equal(p, s))
			}
		}
		must(t, ms.End())
		must(t, mt.End())
	}
	payload := EncodeDump(value, 10)
	v1, err := ReadDump(payload, Limits{})
	must(t, err)
	v2, err := ReadDump(payload, Limits{})
	must(t, err)
	check("DUMP", v1.Module, v2.Module)
	must(t, v2.Finish())

	var e enc
	e.byte(TypeModule2)
	e.string([]byte("key"))
	file := rawFile(e.buf, value[1:])
	for _, size := range []int64{0, int64(len(file))} {
		r1, err := NewReader(bytes.NewReader(file), Limits{InputSize: size})
		must(t, err)
		r2, err := NewReader(bytes.NewReader(file), Limits{InputSize: size})
		must(t, err)
		e1, err := r1.Next()
		must(t, err)
		e2, err := r2.Next()
		must(t, err)
		check(fmt.Sprintf("file, InputSize %d", size), e1.Module, e2.Module)
		if _, err := r2.Next(); err != io.EOF {
			t.Fatalf("after the streamed value: %v (the checksum covers streamed bytes)", err)
		}
	}
}

// TestReadStringToMemory: a 64 MiB string, LZF-compressed, costs
// ReadStringTo about a MiB beyond its compressed bytes, where ReadString
// allocates the whole string.
func TestReadStringToMemory(t *testing.T) {
	s := bytes.Repeat([]byte("0123456789abcdef"), 4<<20)
	value := moduleValue(rawString(s, true))
	payload := EncodeDump(value, 10)
	var sum int
	grown := heapGrowth(func() {
		v, err := ReadDump(payload, Limits{})
		must(t, err)
		must(t, v.Module.ReadStringTo(nil, func(p []byte) error { sum += len(p); return nil }))
	})
	if sum != len(s) {
		t.Fatalf("%d bytes handed on, want %d", sum, len(s))
	}
	if grown > PieceSize+lzfHist+lzfChunk+256<<10 {
		t.Fatalf("streaming a 64 MiB compressed string allocated %d bytes", grown)
	}
	t.Logf("64 MiB string (%d compressed): ReadStringTo allocated %d bytes", len(value), grown)
}

// TestReadStringToRefuses: a length past MaxString, or (with InputSize)
// past what is left of the input, is refused before size is called; a
// length size refuses costs nothing of its size (1 TiB plain, 88 GiB
// compressed announced); a piece's error stops the read; a truncated
// string and every malformed LZF stream are *FormatErrors.
func TestReadStringToRefuses(t *testing.T) {
	var e enc
	e.length(1 << 40)
	plainHuge := append(e.buf, "0123456789"...)
	e = enc{}
	e.byte(0xC0 | encLZF)
	e.length(1 << 30)
	e.length(88 << 30)
	lzfHuge := append(e.buf, 0, 'a')
	errSize := errors.New("no room")
	for _, raw := range [][]byte{plainHuge, lzfHuge} {
		file := rawFile([]byte{TypeModule2, 1, 'k'}, moduleValue(raw)[1:])
		called := false
		// Refused by the limit, or by the input's size, before size.
		for _, lim := range []Limits{{MaxString: 1 << 20}, {MaxString: 1 << 41, InputSize: int64(len(file))}} {
			r, err := NewReader(bytes.NewReader(file), lim)
			must(t, err)
			ent, err := r.Next()
			must(t, err)
			err = ent.Module.ReadStringTo(func(int64) error { called = true; return nil }, func([]byte) error { return nil })
			var fe *FormatError
			if !errors.As(err, &fe) || called {
				t.Fatalf("limits %+v: %v, size called %v", lim, err, called)
			}
		}
		// Refused by size: nothing of the announced size allocated.
		var got int64
		grown := heapGrowth(func() {
			r, err := NewReader(bytes.NewReader(file), Limits{MaxString: 1 << 41})
			must(t, err)
			ent, err := r.Next()
			must(t, err)
			err = ent.Module.ReadStringTo(func(n int64) error { got = n; return errSize }, func([]byte) error { t.Fatal("a piece after size refused"); return nil })
			if err != errSize {
				t.Fatalf("size's error: %v", err)
			}
		})
		if (got != 1<<40 && got != 88<<30) || grown > 256<<10 {
			t.Fatalf("size called with %d; %d bytes allocated", got, grown)
		}
	}

	// A piece's error stops the read, after the first piece.
	big := rawString(make([]byte, 3*PieceSize), true)
	for _, raw := range [][]byte{big, rawString(make([]byte, 3*PieceSize), false)} {
		v, err := ReadDump(EncodeDump(moduleValue(raw), 10), Limits{})
		must(t, err)
		calls := 0
		errStop := errors.New("stop")
		err = v.Module.ReadStringTo(nil, func([]byte) error { calls++; return errStop })
		if err != errStop || calls != 1 {
			t.Fatalf("piece's error: %v after %d calls", err, calls)
		}
	}

	for _, c := range []struct {
		name string
		in   []byte
		n    int
	}{
		{"reference before start", []byte{0x20, 0x00}, 3},
		{"reference one too far", []byte{0x00, 'a', 0x20, 0x01}, 4},
		{"literal past end", []byte{0x02, 'a', 'b', 'c'}, 2},
		{"literal truncated", []byte{0x05, 'a'}, 6},
		{"reference past end", []byte{0x00, 'a', 0x40, 0x00}, 3},
		{"long reference truncated", []byte{0x00, 'a', 0xe0}, 20},
		{"reference offset truncated", []byte{0x00, 'a', 0x20}, 4},
		{"short output", []byte{0x01, 'a', 'b'}, 3},
		{"cannot expand", []byte{0x00, 'a'}, 1000},
		{"empty", []byte{0x00, 'a'}, 0},
		{"far reference before start", append(append([]byte{31}, make([]byte, 32)...), 0xff, 0xff, 0xff), 500},
	} {
		value := moduleValue(lzfString(c.in, c.n))
		for _, cut := range []int{0, 1} { // whole, and the payload's last byte missing
			file := rawFile([]byte{TypeModule2, 1, 'k'}, value[1:len(value)-1-cut])
			r, err := NewReader(bytes.NewReader(file), Limits{})
			must(t, err)
			ent, err := r.Next()
			must(t, err)
			_, err = streamed(t, ent.Module)
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Errorf("%s (cut %d): %v, want a *FormatError", c.name, cut, err)
			}
			if cut == 0 && c.name != "cannot expand" && !strings.Contains(err.Error(), "LZF") {
				t.Errorf("%s: %v does not say LZF", c.name, err)
			}
		}
	}
	// A plain string cut short.
	v := moduleValue(rawString(bytes.Repeat([]byte{1}, 100), false))
	r, _ := NewReader(bytes.NewReader(rawFile([]byte{TypeModule2, 1, 'k'}, v[1:60])), Limits{})
	ent, err := r.Next()
	must(t, err)
	var fe *FormatError
	if _, err := streamed(t, ent.Module); !errors.As(err, &fe) {
		t.Fatalf("truncated plain string: %v", err)
	}
}

// fillFrom returns a StringFunc fill that writes s in writes of varied
// sizes (1 byte, 7, 70000, 1000, ...), failing on a Write's error.
func fillFrom(s []byte) func(w io.Writer) error {
	return func(w io.Writer) error {
		sizes := []int{1, 7, 70000, 1000, 3 << 20}
		for i := 0; len(s) > 0; i++ {
			k := min(len(s), sizes[i%len(sizes)])
			if _, err := w.Write(s[:k]); err != nil {
				return err
			}
			s = s[k:]
		}
		return nil
	}
}

// TestStringFunc: with the streaming threshold lowered to 1 MiB, a file
// whose string fields are written with StringFunc (integer-looking,
// empty, short, compressible under the threshold, compressible and
// random over it) is byte for byte the file String writes, except the
// string over the threshold, which StringFunc writes raw, and reads back
// equal with its checksum verified; with compression off the two files
// are identical. A DUMP payload built the same way reads back equal.
func TestStringFunc(t *testing.T) {
	defer func(v int64) { streamOver = v }(streamOver)
	streamOver = 1 << 20
	rng := rand.New(rand.NewPCG(7, 8))
	random := make([]byte, 3<<20)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	strs := [][]byte{
		[]byte("12345"), {}, []byte("-7"), []byte("a short string, over 20 bytes, compressible compressible"),
		bytes.Repeat([]byte("bloom"), 100000), // 500 KB: compressed
		bytes.Repeat([]byte("cuckoo"), 1<<20), // 6 MiB: streamed raw
		random,                                // streamed raw
		bytes.Repeat([]byte{9}, 70000),        // over 64 KiB
	}
	for _, compress := range []bool{true, false} {
		write := func(useFunc bool) []byte {
			var buf bytes.Buffer
			w, err := NewWriter(&buf, 12, compress)
			must(t, err)
			m, err := w.Module([]byte("k"), "MBbloom--", 4)
			must(t, err)
			m.Unsigned(3)
			for _, s := range strs {
				if useFunc {
					must(t, m.StringFunc(int64(len(s)), fillFrom(s)))
				} else {
					m.String(s)
				}
				m.Double(0.5)
			}
			must(t, m.End())
			must(t, w.Close())
			return buf.Bytes()
		}
		byString, byFunc := write(false), write(true)
		if !compress && !bytes.Equal(byString, byFunc) {
			t.Fatal("compression off: StringFunc's file differs from String's")
		}
		if compress {
			// Identical up to the first string over the threshold.
			cut := bytes.Index(byString, []byte{modString, 0xC0 | encLZF, 0x80})
			if cut < 0 || !bytes.Equal(byString[:cut], byFunc[:cut]) {
				t.Fatalf("compression on: the files differ before the streamed string (%d)", cut)
			}
			if len(byFunc) < len(byString)+5<<20 {
				t.Fatalf("compression on: %d bytes, String's %d: the 6 MiB string was not written raw", len(byFunc), len(byString))
			}
		}
		r, err := NewReader(bytes.NewReader(byFunc), Limits{})
		must(t, err)
		e, err := r.Next()
		must(t, err)
		fs := readFields(t, e.Module)
		if len(fs) != 1+2*len(strs) {
			t.Fatalf("%d fields", len(fs))
		}
		for i, s := range strs {
			if !bytes.Equal(fs[1+2*i].b, s) {
				t.Fatalf("compress %v: string %d (%d bytes) reads back as %d bytes", compress, i, len(s), len(fs[1+2*i].b))
			}
		}
		if _, err := r.Next(); err != io.EOF {
			t.Fatalf("end (checksum): %v", err)
		}

		d := NewDumpWriter(compress)
		m, err := d.Module("CMSk-TYPE", 0)
		must(t, err)
		d2 := NewDumpWriter(compress)
		m2, _ := d2.Module("CMSk-TYPE", 0)
		for _, s := range strs {
			must(t, m.StringFunc(int64(len(s)), fillFrom(s)))
			m2.String(s)
		}
		must(t, m.End())
		must(t, m2.End())
		v, err := ReadDump(d.Payload(10), Limits{})
		must(t, err)
		for i, f := range readFields(t, v.Module) {
			if !bytes.Equal(f.b, strs[i]) {
				t.Fatalf("DUMP: string %d does not read back", i)
			}
		}
		if !compress && !bytes.Equal(d.Payload(10), d2.Payload(10)) {
			t.Fatal("DUMP, compression off: StringFunc's payload differs from String's")
		}
	}
}

// TestStringFuncStreams: a 65 MiB string (over the threshold) and, with
// compression off, an 8 MiB one go to the file as fill writes them,
// costing the writer under 1 MiB, and the file reads back.
func TestStringFuncStreams(t *testing.T) {
	chunk := bytes.Repeat([]byte("0123456789abcdef"), 4096) // 64 KiB
	for _, c := range []struct {
		n        int64
		compress bool
	}{{65 << 20, true}, {8 << 20, false}} {
		var out countingWriter
		grown := heapGrowth(func() {
			w, err := NewWriter(&out, 10, c.compress)
			must(t, err)
			m, err := w.Module([]byte("big"), "MBbloom--", 4)
			must(t, err)
			must(t, m.StringFunc(c.n, func(w io.Writer) error {
				for left := c.n; left > 0; left -= int64(len(chunk)) {
					if _, err := w.Write(chunk[:min(left, int64(len(chunk)))]); err != nil {
						return err
					}
				}
				return nil
			}))
			must(t, m.End())
			must(t, w.Close())
		})
		if grown > 1<<20 || out.n < c.n {
			t.Fatalf("%d MiB string (compress %v): %d bytes allocated, %d written", c.n>>20, c.compress, grown, out.n)
		}
	}
	// The 8 MiB file reads back (a smaller one kept whole).
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, 10, true)
	m, _ := w.Module([]byte("big"), "MBbloom--", 4)
	s := bytes.Repeat([]byte("0123456789abcdef"), 5<<16)
	must(t, m.StringFunc(int64(len(s)), fillFrom(s)))
	must(t, m.End())
	must(t, w.Close())
	r, err := NewReader(bytes.NewReader(buf.Bytes()), Limits{})
	must(t, err)
	e, err := r.Next()
	must(t, err)
	got, err := e.Module.ReadString()
	if err != nil || !bytes.Equal(got, s) {
		t.Fatalf("read back: %v", err)
	}
}

type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// TestStringFuncLength: fill writing fewer or more bytes than announced,
// or failing, is an error from StringFunc, then from End, and (for a
// file) from every later call of the Writer and from Close; streamed or
// gathered, file or DUMP payload.
func TestStringFuncLength(t *testing.T) {
	defer func(v int64) { streamOver = v }(streamOver)
	streamOver = 1 << 20
	errFill := errors.New("fill failed")
	fills := map[string]struct {
		n    int64
		fill func(io.Writer) error
	}{}
	for _, n := range []int64{100, 2 << 20} { // gathered, streamed
		s := make([]byte, n+1)
		fills[fmt.Sprintf("%d bytes, one short", n)] = struct {
			n    int64
			fill func(io.Writer) error
		}{n, fillFrom(s[:n-1])}
		fills[fmt.Sprintf("%d bytes, one over", n)] = struct {
			n    int64
			fill func(io.Writer) error
		}{n, fillFrom(s)}
		fills[fmt.Sprintf("%d bytes, one over, the Write error ignored", n)] = struct {
			n    int64
			fill func(io.Writer) error
		}{n, func(w io.Writer) error { w.Write(s); return nil }}
		fills[fmt.Sprintf("%d bytes, fill fails", n)] = struct {
			n    int64
			fill func(io.Writer) error
		}{n, func(w io.Writer) error { w.Write(s[:10]); return errFill }}
	}
	fills["negative"] = struct {
		n    int64
		fill func(io.Writer) error
	}{-1, fillFrom(nil)}
	for name, f := range fills {
		var buf bytes.Buffer
		w, _ := NewWriter(&buf, 10, true)
		m, _ := w.Module([]byte("k"), "MBbloom--", 4)
		err := m.StringFunc(f.n, f.fill)
		if err == nil {
			t.Fatalf("%s: accepted", name)
		}
		if strings.Contains(name, "fails") && err != errFill {
			t.Fatalf("%s: %v, not fill's error", name, err)
		}
		if m.End() == nil || w.String([]byte("x"), []byte("y")) == nil || w.Close() == nil {
			t.Fatalf("%s: the error is not sticky", name)
		}
		d := NewDumpWriter(true)
		m, _ = d.Module("MBbloom--", 4)
		if m.StringFunc(f.n, f.fill) == nil || m.End() == nil {
			t.Fatalf("%s: DUMP: accepted", name)
		}
	}
}

// BenchmarkReadStringTo reads a 64 MiB string field, raw and
// LZF-compressed, with ReadStringTo and with ReadString.
func BenchmarkReadStringTo(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 10))
	s := make([]byte, 64<<20) // sparse bits, as a lightly filled filter
	for range 1 << 20 {
		s[rng.IntN(len(s))] |= 1 << rng.IntN(8)
	}
	for _, compress := range []bool{false, true} {
		payload := EncodeDump(moduleValue(rawString(s, compress)), 10)
		for _, stream := range []bool{true, false} {
			b.Run(fmt.Sprintf("compressed=%v/stream=%v", compress, stream), func(b *testing.B) {
				b.SetBytes(int64(len(s)))
				for b.Loop() {
					v, err := ReadDump(payload, Limits{})
					if err != nil {
						b.Fatal(err)
					}
					if stream {
						err = v.Module.ReadStringTo(nil, func([]byte) error { return nil })
					} else {
						_, err = v.Module.ReadString()
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
