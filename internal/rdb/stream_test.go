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
