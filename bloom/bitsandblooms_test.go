package bloom

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/format"
)

// The files in testdata/bitsandblooms were written by
// github.com/bits-and-blooms/bloom/v3 v3.7.1 (bitset v1.24.2): MarshalBinary
// (.bin) and json.Marshal (.json) of filters holding the keys "k0" … "kN",
// the -le files after bitset.LittleEndian(), the -std file after
// bitset.Base64StdEncoding(); answers.json holds, for each filter, its Test
// of "k0" … "k2999" (1 present, 0 absent). The filters: New(1000, 7) with
// 100 keys; New(77, 12) with 4 keys (k > 4, m not a power of two); New(0,
// 3) with 5 keys and with none (m = 1, a bitset of 0 or 1 bit);
// FromWithM of 2 words with m = 300 and 20 keys (a bitset shorter than m,
// grown by Add); FromWithM of 3 all-ones words with m = 100 (bits set past m).
// The differential test against the library itself is in the bench module
// (bench/peers_bitsandblooms_test.go).
func readBBFixture(t *testing.T, name string, o BitsAndBloomsOptions) *Filter {
	t.Helper()
	data, err := os.ReadFile("testdata/bitsandblooms/" + name)
	if err != nil {
		t.Fatal(err)
	}
	f, err := ReadBitsAndBlooms(bytes.NewReader(data), o)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return f
}

// TestReadBitsAndBloomsFixtures: every form of every recorded filter
// imports and answers exactly as the original's Test for 3000 keys, added
// and not; the forms of one filter import to equal filters.
func TestReadBitsAndBloomsFixtures(t *testing.T) {
	raw, err := os.ReadFile("testdata/bitsandblooms/answers.json")
	if err != nil {
		t.Fatal(err)
	}
	var answers map[string]string
	if err := json.Unmarshal(raw, &answers); err != nil {
		t.Fatal(err)
	}
	forms := map[string][]struct {
		file string
		o    BitsAndBloomsOptions
	}{}
	for name := range answers {
		forms[name] = append(forms[name], struct {
			file string
			o    BitsAndBloomsOptions
		}{name + ".bin", BitsAndBloomsOptions{}}, struct {
			file string
			o    BitsAndBloomsOptions
		}{name + ".json", BitsAndBloomsOptions{}})
	}
	forms["m1000k7"] = append(forms["m1000k7"], struct {
		file string
		o    BitsAndBloomsOptions
	}{"m1000k7-le.bin", BitsAndBloomsOptions{LittleEndian: true}}, struct {
		file string
		o    BitsAndBloomsOptions
	}{"m1000k7-le.json", BitsAndBloomsOptions{LittleEndian: true}}, struct {
		file string
		o    BitsAndBloomsOptions
	}{"m1000k7-std.json", BitsAndBloomsOptions{Base64Std: true}})
	for name, want := range answers {
		var first *Filter
		for _, fm := range forms[name] {
			f := readBBFixture(t, fm.file, fm.o)
			if f.Scheme() != hashing.BitsAndBlooms || f.Seed() != 0 || f.Kind() != "bloom" {
				t.Errorf("%s: scheme %v seed %d kind %s", fm.file, f.Scheme(), f.Seed(), f.Kind())
			}
			diff := 0
			for i := range len(want) {
				if f.ContainsString(fmt.Sprintf("k%d", i)) != (want[i] == '1') {
					diff++
				}
			}
			if diff != 0 {
				t.Errorf("%s: %d of %d answers differ from the original's Test", fm.file, diff, len(want))
			}
			if first == nil {
				first = f
			} else if !f.Equal(first) {
				t.Errorf("%s: differs from %s", fm.file, forms[name][0].file)
			}
		}
	}
	if f := readBBFixture(t, "m0k3.bin", BitsAndBloomsOptions{}); f.M() != 1 || f.K() != 3 {
		t.Errorf("New(0, 3): m = %d k = %d, want 1 and 3", f.M(), f.K())
	}
	if f := readBBFixture(t, "long.bin", BitsAndBloomsOptions{}); f.Ones() != 100 {
		t.Errorf("bits past m kept: %d ones in m = 100", f.Ones())
	}
}

// TestBitsAndBloomsFilter: an imported filter takes Add, AddAtomic and
// batches (every added key present), survives the bloomlab file format
// bit for bit, unions only with filters of its scheme, m and k, refuses
// digests with a panic that changes nothing, and allocates nothing per key.
func TestBitsAndBloomsFilter(t *testing.T) {
	f := readBBFixture(t, "m77k12.bin", BitsAndBloomsOptions{})
	for i := range 50 {
		key := fmt.Sprintf("new%d", i)
		switch i % 4 {
		case 0:
			f.AddString(key)
		case 1:
			f.AddAtomic([]byte(key))
		case 2:
			f.AddStringAtomic(key)
		default:
			f.AddBatch([][]byte{[]byte(key)})
		}
	}
	keys := make([][]byte, 50)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("new%d", i))
		if !f.Contains(keys[i]) || !f.ContainsString(string(keys[i])) {
			t.Fatalf("new%d: false negative", i)
		}
	}
	for i, ok := range f.ContainsBatch(keys, nil) {
		if !ok {
			t.Fatalf("ContainsBatch new%d: false negative", i)
		}
	}
	data, err := f.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var g Filter
	if err := g.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	if !g.Equal(f) || g.Scheme() != hashing.BitsAndBlooms || g.N() != f.N() {
		t.Fatal("bloomlab file round trip changed the filter")
	}
	h := readBBFixture(t, "m77k12.json", BitsAndBloomsOptions{})
	h.AddString("only in h")
	if err := g.Union(h); err != nil || !g.ContainsString("only in h") || !g.ContainsString("new3") {
		t.Fatalf("union: %v", err)
	}
	native := must(New(77, 12, WithScheme(hashing.Double)))
	if err := g.Union(native); !errors.Is(err, ErrIncompatible) {
		t.Errorf("union with a native filter of the same m and k: %v", err)
	}
	if err := g.Union(readBBFixture(t, "m1000k7.bin", BitsAndBloomsOptions{})); !errors.Is(err, ErrIncompatible) {
		t.Errorf("union with another m: %v", err)
	}
	// A filter made here with the scheme equals one imported and grown alike.
	made := must(New(77, 12, WithScheme(hashing.BitsAndBlooms)))
	empty := readBBFixture(t, "m0k3empty.bin", BitsAndBloomsOptions{})
	if made.Ones() != 0 || empty.Ones() != 0 {
		t.Fatal("new filters not empty")
	}
	if _, err := New(77, 12, WithScheme(hashing.BitsAndBlooms), WithSeed(1)); !errors.Is(err, ErrParam) {
		t.Errorf("seed with scheme bitsandblooms: %v", err)
	}
	before := g.Clone()
	for name, fn := range map[string]func(){
		"AddHash":           func() { g.AddHash(g.Digest([]byte("x"))) },
		"AddHashAtomic":     func() { g.AddHashAtomic(g.Digest([]byte("x"))) },
		"ContainsHash":      func() { g.ContainsHash(g.Digest([]byte("x"))) },
		"ContainsHashBatch": func() { g.ContainsHashBatch([]hashing.Digest{{}}, nil) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic", name)
				}
			}()
			fn()
		}()
	}
	if !g.Equal(before) || g.N() != before.N() {
		t.Error("a refused digest changed the filter")
	}
	key := []byte("some key")
	if a := testing.AllocsPerRun(100, func() { g.Add(key); g.Contains(key); g.AddAtomic(key) }); a != 0 {
		t.Errorf("%v allocations per Add, Contains and AddAtomic", a)
	}
}

// bbBinary writes the bytes of the original's WriteTo for m, k, a bitset
// length l and words, the bitset in order.
func bbBinary(m, k, l uint64, order binary.AppendByteOrder, words ...uint64) []byte {
	b := binary.BigEndian.AppendUint64(nil, m)
	b = binary.BigEndian.AppendUint64(b, k)
	b = order.AppendUint64(b, l)
	for _, w := range words {
		b = order.AppendUint64(b, w)
	}
	return b
}

// TestReadBitsAndBloomsRefuses: bad parameters, lengths, truncation,
// the wrong byte order or alphabet, and malformed JSON are errors wrapping
// format.ErrFormat that say what is wrong (and which option to give), never
// a panic; a hostile length allocates nothing before the data arrives.
func TestReadBitsAndBloomsRefuses(t *testing.T) {
	be, le := binary.BigEndian, binary.LittleEndian
	good, _ := os.ReadFile("testdata/bitsandblooms/m1000k7.bin")
	goodLE, _ := os.ReadFile("testdata/bitsandblooms/m1000k7-le.bin")
	goodStd, _ := os.ReadFile("testdata/bitsandblooms/m1000k7-std.json")
	for _, c := range []struct {
		name string
		data []byte
		o    BitsAndBloomsOptions
		want string
		eof  bool
	}{
		{"empty", nil, BitsAndBloomsOptions{}, "empty input", true},
		{"m = 0", bbBinary(0, 3, 0, be), BitsAndBloomsOptions{}, "m = 0", false},
		{"k = 0", bbBinary(64, 0, 64, be, 0), BitsAndBloomsOptions{}, "k = 0", false},
		{"k = 65", bbBinary(64, 65, 64, be, 0), BitsAndBloomsOptions{}, "k = 65", false},
		{"m > 2^48", bbBinary(1<<48+1, 3, 1<<48+1, be), BitsAndBloomsOptions{}, "more than bloomlab's 2^48", false},
		{"length far short of m", bbBinary(1<<40, 3, 64, be, 0), BitsAndBloomsOptions{}, "holds 64 bits for a filter of m = 1099511627776", false},
		{"length huge", bbBinary(64, 3, 1<<60, be), BitsAndBloomsOptions{}, "holds 1152921504606846976 bits", false},
		{"little-endian read as big", goodLE, BitsAndBloomsOptions{}, "try -endian little", false},
		{"big-endian read as little", good, BitsAndBloomsOptions{LittleEndian: true}, "try the default big-endian order", false},
		{"truncated header", good[:10], BitsAndBloomsOptions{}, "truncated (m and k)", true},
		{"truncated length", good[:20], BitsAndBloomsOptions{}, "truncated (the bitset's length)", true},
		{"truncated words", good[:len(good)-1], BitsAndBloomsOptions{}, "truncated (the bitset's 16 words)", true},
		{"std read as url", goodStd, BitsAndBloomsOptions{}, "give -base64 std", false},
		{"not JSON", []byte("{nope"), BitsAndBloomsOptions{}, "JSON", false},
		{"no m", []byte(`{"k":3,"b":""}`), BitsAndBloomsOptions{}, `without "m"`, false},
		{"no k", []byte(`{"m":3,"b":""}`), BitsAndBloomsOptions{}, `without "k"`, false},
		{"no b", []byte(`{"m":3,"k":3}`), BitsAndBloomsOptions{}, `without "b"`, false},
		{"negative m", []byte(`{"m":-3,"k":3,"b":""}`), BitsAndBloomsOptions{}, "JSON", false},
		{"b too long", []byte(`{"m":64,"k":3,"b":"` + base64.URLEncoding.EncodeToString(append(bbBinary(64, 3, 64, be, 0)[16:], 0)) + `"}`), BitsAndBloomsOptions{}, "1 bytes in \"b\" after the bitset", false},
		{"b truncated", []byte(`{"m":1000,"k":7,"b":"AAAAAAAAA-g="}`), BitsAndBloomsOptions{}, "truncated", true},
	} {
		f, err := ReadBitsAndBlooms(bytes.NewReader(c.data), c.o)
		if err == nil {
			t.Errorf("%s: accepted (m = %d)", c.name, f.M())
			continue
		}
		if !errors.Is(err, format.ErrFormat) || !strings.Contains(err.Error(), c.want) || errors.Is(err, io.ErrUnexpectedEOF) != c.eof {
			t.Errorf("%s: %v (want ErrFormat, %q, unexpected EOF %v)", c.name, err, c.want, c.eof)
		}
	}
	// A bitset shorter than m by at most 2^23 bits reads as zeros there.
	f, err := ReadBitsAndBlooms(bytes.NewReader(bbBinary(1<<23+64, 2, 64, be, ^uint64(0))), BitsAndBloomsOptions{})
	if err != nil || f.Ones() != 64 {
		t.Errorf("short bitset: %v", err)
	}
	// Little-endian words: bit j of word i is still position 64i + j.
	f, err = ReadBitsAndBlooms(bytes.NewReader(bbBinary(70, 1, 70, le, 1, 1<<5|1<<6)), BitsAndBloomsOptions{LittleEndian: true})
	if err != nil || f.Ones() != 2 {
		t.Errorf("little-endian words: %v, ones %d (bit 70 is past m)", err, f.Ones())
	}
}

// FuzzReadBitsAndBlooms: no input panics, and an accepted filter has m
// and k in range, no bit past m, re-reads from its bloomlab file, and
// keeps every key added to it.
func FuzzReadBitsAndBlooms(f *testing.F) {
	for _, name := range []string{"m1000k7.bin", "m1000k7.json", "m77k12.bin", "m0k3.json", "short.bin", "long.json", "m1000k7-std.json"} {
		data, err := os.ReadFile("testdata/bitsandblooms/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, name == "m1000k7-std.json", false)
	}
	le, _ := os.ReadFile("testdata/bitsandblooms/m1000k7-le.bin")
	f.Add(le, false, true)
	f.Add(bbBinary(1<<48, 64, 1<<48, binary.BigEndian), false, false)
	f.Fuzz(func(t *testing.T, data []byte, std, little bool) {
		g, err := ReadBitsAndBlooms(bytes.NewReader(data), BitsAndBloomsOptions{Base64Std: std, LittleEndian: little})
		if err != nil {
			if !errors.Is(err, format.ErrFormat) && !errors.Is(err, format.ErrTooLarge) {
				t.Fatalf("error not wrapping ErrFormat: %v", err)
			}
			return
		}
		if g.M() < 1 || g.M() > hashing.MaxM || g.K() < 1 || g.K() > hashing.MaxK {
			t.Fatalf("m = %d k = %d accepted", g.M(), g.K())
		}
		b, err := g.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var h Filter
		if err := h.UnmarshalBinary(b); err != nil || !h.Equal(g) {
			t.Fatalf("re-read: %v", err)
		}
		g.Add(data)
		if !g.Contains(data) {
			t.Fatal("false negative")
		}
	})
}

// TestBitsAndBloomsGolden pins the bloomlab file of an imported filter
// (scheme byte 65, seed 0): testdata/bloom-bitsandblooms-v1.golden is the
// import of testdata/bitsandblooms/m77k12.bin, rewritten only with -update.
func TestBitsAndBloomsGolden(t *testing.T) {
	const name = "testdata/bloom-bitsandblooms-v1.golden"
	got, err := readBBFixture(t, "m77k12.bin", BitsAndBloomsOptions{}).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(name, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(name)
	if err != nil {
		t.Fatalf("%v (run go test -update to create)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s: encoding changed:\n got %x\nwant %x", name, got, want)
	}
	if want[7] != 65 {
		t.Errorf("scheme byte %d, want 65", want[7])
	}
	var g Filter
	if err := g.UnmarshalBinary(want); err != nil || !g.ContainsString("k0") || !g.ContainsString("k3") {
		t.Errorf("golden file does not load with its keys: %v", err)
	}
	// The scheme has no seed: a file (or bits) with one is refused.
	if _, err := FromBits(77, 12, hashing.BitsAndBlooms, 1, make([]uint64, 2), 0); !errors.Is(err, ErrParam) {
		t.Errorf("bitsandblooms bits with seed 1: %v", err)
	}
}

// TestBitsAndBloomsAtomic: AddAtomic of an imported filter may run beside
// other AddAtomic calls and Contains (go test -race): every key whose
// AddAtomic returned is present.
func TestBitsAndBloomsAtomic(t *testing.T) {
	f := must(New(1<<14, 7, WithScheme(hashing.BitsAndBlooms)))
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				key := []byte(fmt.Sprintf("w%d-%d", w, i))
				f.AddAtomic(key)
				if !f.Contains(key) {
					t.Errorf("w%d-%d: false negative after AddAtomic", w, i)
					return
				}
				f.Contains([]byte(fmt.Sprintf("w%d-%d", (w+1)%4, i)))
			}
		}()
	}
	wg.Wait()
	if f.N() != 2000 {
		t.Errorf("N = %d, want 2000", f.N())
	}
}

// TestReadBitsAndBloomsSaturated: a filter whose bits are all set held at
// least m/k keys; its N is the count the fill suggests with half a bit
// unset, not 0 (which made info say "keys added: 0" and "fpr at keys
// added: 0" of a filter that answers every key present).
func TestReadBitsAndBloomsSaturated(t *testing.T) {
	for _, c := range []struct{ m, k uint64 }{{64, 3}, {1000, 7}, {1, 1}, {77, 64}} {
		words := make([]uint64, (c.m+63)/64)
		for i := range words {
			words[i] = ^uint64(0)
		}
		f, err := ReadBitsAndBlooms(bytes.NewReader(bbBinary(c.m, c.k, c.m, binary.BigEndian, words...)), BitsAndBloomsOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if min := (c.m + c.k - 1) / c.k; f.N() < min {
			t.Errorf("m = %d, k = %d, all bits set: N = %d, want at least %d", c.m, c.k, f.N(), min)
		}
		if !f.Contains([]byte("anything")) {
			t.Errorf("m = %d: a saturated filter answers absent", c.m)
		}
	}
}
