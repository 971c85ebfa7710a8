package rdb

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

// fuzzLimits keep every value the fuzzers can declare small.
var fuzzLimits = Limits{MaxString: 1 << 20, MaxFields: 1 << 16}

// seedFile is a small written file with every opcode the Writer has.
func seedFile(compress bool) []byte {
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, 10, compress)
	w.Aux("redis-ver", "7.0.15")
	w.SelectDB(0)
	w.ResizeDB(3, 1)
	w.Expire(1795682407123)
	w.String([]byte("s"), bytes.Repeat([]byte("ab"), 40))
	w.String([]byte("n"), []byte("-70000"))
	m, _ := w.Module([]byte("m"), "MBbloom--", 4)
	writeFields(m, sampleFields[:12])
	m.String(bytes.Repeat([]byte{0}, 100))
	m.End()
	w.Close()
	return buf.Bytes()
}

// FuzzReader: any input read to its end (module values skipped, other
// types skipped where possible) ends in an error or io.EOF, never a panic,
// and allocates within the limits (the fuzzer's own memory limit catches
// an allocation of a declared size); read again with module values' fields
// read, it gives the same strings with ReadStringTo as with ReadString,
// and fails at the same point.
func FuzzReader(f *testing.F) {
	f.Add(seedFile(false))
	f.Add(seedFile(true))
	f.Add(rawFile([]byte{2, 1, 'k', 1, 1, 'a'}))
	f.Add(v12File("0012"))
	f.Add(seedStreamFile())
	f.Fuzz(func(t *testing.T, p []byte) {
		readToEnd(p)
		compareStreamed(t, p)
	})
}

// seedStreamFile is a file whose module value has strings in every
// encoding, one LZF-compressed over two pieces.
func seedStreamFile() []byte {
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, 10, true)
	m, _ := w.Module([]byte("m"), "MBbloom--", 4)
	m.Unsigned(1)
	for _, s := range []string{"", "-5", "70000", "abc", strings.Repeat("abcdefgh", 40000)} {
		m.String([]byte(s))
	}
	m.End()
	w.Close()
	return buf.Bytes()
}

// readAllFields reads a module value's fields to its end or the first
// error, its strings with ReadString or, if stream, ReadStringTo.
func readAllFields(t *testing.T, m *ModuleValue, stream bool) ([]field, error) {
	var fs []field
	for {
		op, err := m.Next()
		if err != nil {
			return fs, err
		}
		f := field{op: op}
		switch op {
		case modEOF:
			return fs, m.End()
		case modUint:
			f.u, err = m.ReadUnsigned()
		case modSint:
			f.s, err = m.ReadSigned()
		case modFloat:
			f.f, err = m.ReadFloat()
		case modDouble:
			f.d, err = m.ReadDouble()
		case modString:
			if stream {
				f.b, err = streamed(t, m)
			} else {
				f.b, err = m.ReadString()
			}
		}
		if err != nil {
			return fs, err
		}
		fs = append(fs, f)
	}
}

// compareStreamed reads p's entries with two readers in step, module
// values' strings with ReadString in one and ReadStringTo in the other:
// they must read the same fields and fail at the same point.
func compareStreamed(t *testing.T, p []byte) {
	ra, errA := NewReader(bytes.NewReader(p), fuzzLimits)
	rb, errB := NewReader(bytes.NewReader(p), fuzzLimits)
	if errA != nil || errB != nil {
		return
	}
	for range 1 << 10 {
		ea, errA := ra.Next()
		eb, errB := rb.Next()
		if (errA == nil) != (errB == nil) {
			t.Fatalf("Next: %v against %v", errA, errB)
		}
		var ue *UnsupportedTypeError
		if errors.As(errA, &ue) {
			if ra.Skip() != nil || rb.Skip() != nil {
				return
			}
			continue
		}
		if errA != nil {
			return
		}
		if ea.Module == nil {
			continue
		}
		fa, errA := readAllFields(t, ea.Module, false)
		fb, errB := readAllFields(t, eb.Module, true)
		if !fieldsEqual(fa, fb) || (errA == nil) != (errB == nil) {
			t.Fatalf("ReadString read %d fields (%v), ReadStringTo %d (%v)", len(fa), errA, len(fb), errB)
		}
		if errA != nil {
			return
		}
	}
}

// FuzzDumpPayload: a value with a right footer, read field by field to
// its end, never panics, and reads the same with ReadStringTo as with
// ReadString; a payload read as given (footer and all) never
// panics either. A value that reads cleanly written back reads back equal.
func FuzzDumpPayload(f *testing.F) {
	d := NewDumpWriter(true)
	m, _ := d.Module("TopK-TYPE", 0)
	writeFields(m, sampleFields[:14])
	f.Add(d.Payload(10)[:len(d.Payload(10))-10])
	for _, k := range loadVectors(f, "redisbloom-8.6.2").Keys {
		if p, _ := hex.DecodeString(k.Dump); len(p) < 4096 {
			f.Add(p[:len(p)-10])
		}
	}
	f.Add(moduleValue(lzfString([]byte{0x00, 'a', 0xe0, 0xff, 0x00}, 264), rawString([]byte("-123"), true)))
	f.Fuzz(func(t *testing.T, value []byte) {
		ReadDump(value, fuzzLimits)
		// ReadString and ReadStringTo read the same fields.
		if va, err := ReadDump(EncodeDump(value, 10), fuzzLimits); err == nil && va.Module != nil {
			vb, _ := ReadDump(EncodeDump(value, 10), fuzzLimits)
			fa, errA := readAllFields(t, va.Module, false)
			fb, errB := readAllFields(t, vb.Module, true)
			if !fieldsEqual(fa, fb) || (errA == nil) != (errB == nil) {
				t.Fatalf("ReadString read %d fields (%v), ReadStringTo %d (%v)", len(fa), errA, len(fb), errB)
			}
		}
		v, err := ReadDump(EncodeDump(value, 10), fuzzLimits)
		if err != nil {
			if errors.Is(err, ErrDumpPayload) {
				t.Fatalf("a right footer refused: %v", err)
			}
			return
		}
		if v.Module == nil {
			v.Finish()
			return
		}
		var fs []field
		for {
			op, err := v.Module.Next()
			if err != nil {
				return
			}
			if op == modEOF {
				if v.Module.End() != nil {
					t.Fatal("End after an EOF opcode failed")
				}
				break
			}
			fl := field{op: op}
			switch op {
			case modUint:
				fl.u, err = v.Module.ReadUnsigned()
			case modSint:
				fl.s, err = v.Module.ReadSigned()
			case modFloat:
				fl.f, err = v.Module.ReadFloat()
			case modDouble:
				fl.d, err = v.Module.ReadDouble()
			case modString:
				fl.b, err = v.Module.ReadString()
			}
			if err != nil {
				return
			}
			fs = append(fs, fl)
		}
		if v.Finish() != nil {
			return
		}
		w := NewDumpWriter(true)
		mw, _ := w.Module(v.Module.Name, v.Module.EncVer)
		writeFields(mw, fs)
		v2, err := ReadDump(w.Payload(10), fuzzLimits)
		if err != nil {
			t.Fatal(err)
		}
		if !fieldsEqual(readFields(t, v2.Module), fs) {
			t.Fatal("written fields do not read back")
		}
	})
}

// FuzzLZF: decompressing any input to any length either fails with ErrLZF
// or fills exactly that length; compressing any input round-trips, within
// the bound asked for.
func FuzzLZF(f *testing.F) {
	f.Add([]byte{0x00, 'a', 0xe0, 0x00, 0x00}, uint16(10))
	f.Add(LZFCompress(bytes.Repeat([]byte("abc"), 300), 1000), uint16(900))
	f.Add([]byte("hello hello hello hello"), uint16(23))
	f.Fuzz(func(t *testing.T, p []byte, n uint16) {
		out, err := LZFDecompress(p, int(n))
		if err == nil && len(out) != int(n) {
			t.Fatalf("%d bytes out, %d asked", len(out), n)
		}
		if err != nil && !errors.Is(err, ErrLZF) {
			t.Fatal(err)
		}
		max := len(p) + len(p)/32 + 4
		if n%2 == 1 {
			max = int(n) % (len(p) + 1)
		}
		c := LZFCompress(p, max)
		if c == nil {
			if max >= len(p)+len(p)/32+4 && len(p) > 0 {
				t.Fatal("not compressed within the worst-case bound")
			}
			return
		}
		if len(c) > max {
			t.Fatalf("%d bytes past the bound %d", len(c), max)
		}
		back, err := LZFDecompress(c, len(p))
		if err != nil || !bytes.Equal(back, p) {
			t.Fatalf("round trip: %v", err)
		}
	})
}
