package bloom

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/format"
)

// boomClassic returns the bytes BoomFilters' classic WriteTo writes for a
// filter of m bits, k hashes and count keys whose bits are data.
func boomClassic(count, m, k uint64, data []byte) []byte {
	b := binary.BigEndian.AppendUint64(nil, count)
	b = binary.BigEndian.AppendUint64(b, m)
	b = binary.BigEndian.AppendUint64(b, k)
	return boomBuckets(b, m, data)
}

func boomBuckets(b []byte, n uint64, data []byte) []byte {
	b = append(b, 1, 1)
	b = binary.BigEndian.AppendUint64(b, n)
	b = binary.BigEndian.AppendUint64(b, uint64(len(data)))
	return append(b, data...)
}

func blobloomDump(blocks, nh uint32, body []byte) []byte {
	b := make([]byte, 64)
	copy(b, "blobloom")
	binary.LittleEndian.PutUint32(b[12:], blocks-1)
	binary.LittleEndian.PutUint32(b[16:], nh)
	return append(b, body...)
}

// TestPeerKnownAnswers pins the positions of the foreign schemes on keys
// whose hashes are worked out by hand from the libraries' definitions:
// FNV-1 64 of "" is its offset basis, so lower = 0x84222325, upper =
// 0xcbf29ce4, and position i of a 1000-bit BoomFilters filter is
// (lower + i·upper) mod 1000.
func TestPeerKnownAnswers(t *testing.T) {
	if got := hashing.FNV1(""); got != 14695981039346656037 {
		t.Fatalf("FNV1(\"\") = %d", got)
	}
	if got := hashing.FNV1("a"); got != 0xaf63bd4c8601b7be { // hash/fnv New64 of "a"
		t.Fatalf("FNV1(a) = %#x", got)
	}
	ix, err := hashing.NewIndexer(hashing.BoomFilters, 1000, 3)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := uint64(0x84222325), uint64(0xcbf29ce4)
	var out [3]uint64
	for i, p := range ix.Positions(hashing.ForeignSum(hashing.BoomFilters, nil), out[:]) {
		if want := (lo + uint64(i)*hi) % 1000; p != want {
			t.Errorf("position %d = %d, want %d", i, p, want)
		}
	}
}

// TestPeerDecodeErrors: each malformed field is refused with ErrFormat
// before the bits are read, and blobloom without a hash is refused.
func TestPeerDecodeErrors(t *testing.T) {
	classic := func(b []byte) error { _, err := ReadBoomFilters(bytes.NewReader(b)); return err }
	blob := func(b []byte) error { _, err := ReadBlobloom(bytes.NewReader(b), "xxhash64"); return err }
	for name, err := range map[string]error{
		"m 0":            classic(boomClassic(0, 0, 3, nil)),
		"m > 2^32":       classic(boomClassic(0, 1<<33, 3, nil)),
		"k 0":            classic(boomClassic(0, 64, 0, make([]byte, 8))),
		"k 65":           classic(boomClassic(0, 64, 65, make([]byte, 8))),
		"length":         classic(boomClassic(0, 64, 3, make([]byte, 9))),
		"truncated":      classic(boomClassic(0, 1<<32, 3, nil)[:30]),
		"short bits":     classic(boomClassic(0, 1<<32, 3, make([]byte, 100))[:130]),
		"tail bit":       classic(boomClassic(0, 60, 3, []byte{0, 0, 0, 0, 0, 0, 0, 0x80})),
		"blob magic":     blob(append([]byte("blobloo!"), make([]byte, 56+64)...)),
		"blob hashes 0":  blob(blobloomDump(1, 0, make([]byte, 64))),
		"blob hashes 66": blob(blobloomDump(1, 66, make([]byte, 64))),
		"blob short":     blob(blobloomDump(1<<20, 4, make([]byte, 64))),
	} {
		if !errors.Is(err, format.ErrFormat) {
			t.Errorf("%s: %v, want ErrFormat", name, err)
		}
	}
	if _, err := ReadBlobloom(bytes.NewReader(blobloomDump(1, 4, make([]byte, 64))), ""); !errors.Is(err, ErrHashUnknown) {
		t.Errorf("no hash: %v", err)
	}
	if _, err := ReadBlobloom(bytes.NewReader(blobloomDump(1, 4, make([]byte, 64))), "fnv"); !errors.Is(err, ErrHashUnknown) {
		t.Errorf("hash fnv: %v", err)
	}
	f, err := ReadBlobloom(bytes.NewReader(blobloomDump(2, 4, make([]byte, 128))), "xxhash64")
	if err != nil || f.M() != 1024 || f.K() != 3 || f.Scheme() != hashing.BlobloomXXH64 {
		t.Fatalf("valid dump: %v", err)
	}
}

// FuzzPeerImports: no input makes the three decoders panic or allocate
// beyond what it carries; what they accept answers Contains for the keys
// added to it afterwards and survives a round trip through the bloomlab
// file format.
func FuzzPeerImports(f *testing.F) {
	f.Add(uint8(0), boomClassic(2, 100, 3, make([]byte, 13)))
	p := binary.BigEndian.AppendUint64(nil, 10)
	for _, v := range []uint64{2, 5, 0, 2} {
		p = binary.BigEndian.AppendUint64(p, v)
	}
	p = boomBuckets(boomBuckets(p, 5, []byte{3}), 5, []byte{1})
	f.Add(uint8(1), p)
	f.Add(uint8(2), blobloomDump(2, 5, make([]byte, 128)))
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		var g *Filter
		var err error
		switch which % 3 {
		case 0:
			g, err = ReadBoomFilters(bytes.NewReader(data))
		case 1:
			g, err = ReadBoomPartitioned(bytes.NewReader(data))
		case 2:
			g, err = ReadBlobloom(bytes.NewReader(data), "xxhash64")
		}
		if err != nil {
			if !errors.Is(err, format.ErrFormat) {
				t.Fatalf("error %v does not wrap ErrFormat", err)
			}
			return
		}
		if g.M()/8 > uint64(len(data))+8 {
			t.Fatalf("%d bits from %d bytes", g.M(), len(data))
		}
		for _, k := range []string{"a", "key", ""} {
			g.AddString(k)
			if !g.Contains([]byte(k)) {
				t.Fatalf("%q absent after Add", k)
			}
		}
		b, err := g.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var h Filter
		if err := h.UnmarshalBinary(b); err != nil || !h.Equal(g) {
			t.Fatalf("round trip: %v", err)
		}
	})
}
