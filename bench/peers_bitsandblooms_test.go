package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/bits-and-blooms/bitset"
	bb "github.com/bits-and-blooms/bloom/v3"
	"github.com/bloomlab/bloomlab/bloom"
	"github.com/bloomlab/bloomlab/hashing"
)

// TestBitsAndBloomsHashing: bloomlab's MurmurHash3 and location rule give
// the peer's unreduced locations (bits-and-blooms/bloom v3's Locations,
// 64 of them) for keys of every length 0 … 100, random bytes; its first
// location is MurmurHash3_x64_128's h1.
func TestBitsAndBloomsHashing(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 1))
	for n := range 101 {
		for range 20 {
			key := make([]byte, n)
			for i := range key {
				key[i] = byte(r.Uint32())
			}
			h := hashing.BitsAndBloomsHashes(key)
			if h1, _ := hashing.MurmurHash3_x64_128(key, 0); h1 != h[0] {
				t.Fatalf("len %d: h1 %#x vs %#x", n, h1, h[0])
			}
			for i, want := range bb.Locations(key, hashing.MaxK) {
				if got := hashing.BitsAndBloomsLocation(h, uint64(i)); got != want {
					t.Fatalf("len %d location %d: %#x, the peer's %#x", n, i, got, want)
				}
			}
		}
	}
}

// bbForm is one way the peer serialises a filter.
type bbForm struct {
	name  string
	write func(f *bb.BloomFilter) ([]byte, error)
	o     bloom.BitsAndBloomsOptions
	// set and reset switch the peer's process-wide bitset settings around
	// the write.
	set, reset func()
}

func bbForms() []bbForm {
	nop := func() {}
	writeTo := func(f *bb.BloomFilter) ([]byte, error) {
		var b bytes.Buffer
		_, err := f.WriteTo(&b)
		return b.Bytes(), err
	}
	marshalBinary := func(f *bb.BloomFilter) ([]byte, error) { return f.MarshalBinary() }
	gobEncode := func(f *bb.BloomFilter) ([]byte, error) { return f.GobEncode() }
	marshalJSON := func(f *bb.BloomFilter) ([]byte, error) { return json.Marshal(f) }
	little := func() { bitset.LittleEndian() }
	big := func() { bitset.BigEndian() }
	std := func() { bitset.Base64StdEncoding() }
	// bitset has no switch back to the URL alphabet: the StdEncoding form
	// is the last one, which the test runs after all the others.
	return []bbForm{
		{"WriteTo", writeTo, bloom.BitsAndBloomsOptions{}, nop, nop},
		{"MarshalBinary", marshalBinary, bloom.BitsAndBloomsOptions{}, nop, nop},
		{"GobEncode", gobEncode, bloom.BitsAndBloomsOptions{}, nop, nop},
		{"MarshalJSON", marshalJSON, bloom.BitsAndBloomsOptions{}, nop, nop},
		{"WriteTo/LittleEndian", writeTo, bloom.BitsAndBloomsOptions{LittleEndian: true}, little, big},
		{"MarshalJSON/LittleEndian", marshalJSON, bloom.BitsAndBloomsOptions{LittleEndian: true}, little, big},
		{"MarshalJSON/Base64StdEncoding", marshalJSON, bloom.BitsAndBloomsOptions{Base64Std: true}, std, nop},
	}
}

func bbKey(prefix string, i int) []byte {
	return binary.LittleEndian.AppendUint64([]byte(prefix), uint64(i))
}

// TestBitsAndBloomsDifferential is the differential test of issue 26 §1:
// the peer builds filters (m a power of two and not, k from 1 to 20) from
// keys and serialises each in every form; bloomlab imports each and answers
// Contains exactly as the peer's Test for every added key and as many
// absent ones — 10^6 and 10^6 for the largest filter, 0 differences —
// and after 10^4 more keys added on both sides the two filters hold the
// same bits (the peer's bytes re-imported equal bloomlab's filter). With
// -short the largest filter holds 10^5 keys.
func TestBitsAndBloomsDifferential(t *testing.T) {
	big := 1_000_000
	if testing.Short() {
		big = 100_000
	}
	bigM, bigK := bb.EstimateParameters(uint(big), 0.01) // 9585059 and 7 for 10^6
	sizes := []struct {
		m, k uint
		n    int
	}{
		{bigM, bigK, big},
		{1 << 16, 4, 5_000},
		{100_003, 20, 3_000},
		{1000, 3, 100},
		{77, 12, 5},
		{4099, 1, 300},
	}
	peers := make([]*bb.BloomFilter, len(sizes))
	for j, s := range sizes {
		peers[j] = bb.New(s.m, s.k)
		for i := range s.n {
			peers[j].Add(bbKey("present-", i))
		}
	}
	check := func(peer *bb.BloomFilter, n int, fm bbForm) {
		name := fmt.Sprintf("m=%d,k=%d,n=%d/%s", peer.Cap(), peer.K(), n, fm.name)
		fm.set()
		data, err := fm.write(peer)
		fm.reset()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		f, err := bloom.ReadBitsAndBlooms(bytes.NewReader(data), fm.o)
		if err != nil {
			t.Fatalf("%s: import: %v", name, err)
		}
		if f.M() != uint64(peer.Cap()) || f.K() != int(peer.K()) {
			t.Fatalf("%s: m = %d k = %d", name, f.M(), f.K())
		}
		queries := max(n, 10_000)
		diff, fp := 0, 0
		for i := range n {
			key := bbKey("present-", i)
			if f.Contains(key) != peer.Test(key) {
				diff++
			}
		}
		for i := range queries {
			key := bbKey("absent-", i)
			got := f.Contains(key)
			if got != peer.Test(key) {
				diff++
			}
			if got {
				fp++
			}
		}
		if diff != 0 {
			t.Errorf("%s: %d of %d answers differ from the peer's Test", name, diff, n+queries)
		}
		if fm.name == "WriteTo" {
			t.Logf("%s: %d present and %d absent keys, 0 differences (%d false positives)", name, n, queries, fp)
		}
	}
	forms := bbForms()
	std := forms[len(forms)-1]
	for j, s := range sizes {
		for _, fm := range forms[:len(forms)-1] {
			check(peers[j], s.n, fm)
		}
		// Add on both sides.
		peer := peers[j]
		f, err := bloom.ReadBitsAndBlooms(bytes.NewReader(mustBytes(peer.MarshalBinary())), bloom.BitsAndBloomsOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 10_000 {
			peer.Add(bbKey("later-", i))
			f.Add(bbKey("later-", i))
		}
		again, err := bloom.ReadBitsAndBlooms(bytes.NewReader(mustBytes(peer.MarshalBinary())), bloom.BitsAndBloomsOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !again.Equal(f) {
			t.Errorf("m=%d,k=%d: after 10^4 adds on both sides the bits differ", s.m, s.k)
		}
	}
	// bitset cannot switch back to the URL alphabet: the standard
	// alphabet's form comes last, for every filter (with its later keys).
	for j, s := range sizes {
		check(peers[j], s.n, std)
	}
	gob, _ := bb.New(1000, 3).GobEncode()
	bin, _ := bb.New(1000, 3).MarshalBinary()
	if !bytes.Equal(gob, bin) {
		t.Error("the peer's GobEncode differs from its MarshalBinary")
	}
}

func mustBytes(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// BenchmarkBitsAndBloomsImported compares, at the same m and k (10^6 keys
// at 1%: m = 9585059, k = 7), the peer's Test, the imported filter's
// Contains (the peer's MurmurHash3 hashing) and a native bloomlab filter's
// (xxh3, enhanced double hashing), for present and absent keys: what
// re-adding the keys into a native filter gains in query time.
//
//	cd bench && go test -run XXX -bench BitsAndBloomsImported -benchtime 2000000x -count 3
func BenchmarkBitsAndBloomsImported(b *testing.B) {
	const n = 1_000_000
	m, k := bb.EstimateParameters(n, 0.01)
	peer := bb.New(m, k)
	native, err := bloom.New(uint64(m), int(k))
	if err != nil {
		b.Fatal(err)
	}
	present := make([][]byte, n)
	absent := make([][]byte, n)
	for i := range n {
		present[i], absent[i] = bbKey("present-", i), bbKey("absent-", i)
		peer.Add(present[i])
		native.Add(present[i])
	}
	imported, err := bloom.ReadBitsAndBlooms(bytes.NewReader(mustBytes(peer.MarshalBinary())), bloom.BitsAndBloomsOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		test func([]byte) bool
	}{{"peer", peer.Test}, {"imported", imported.Contains}, {"native", native.Contains}} {
		for _, q := range []struct {
			name string
			keys [][]byte
		}{{"present", present}, {"absent", absent}} {
			b.Run(c.name+"/"+q.name, func(b *testing.B) {
				hits := 0
				for i := 0; i < b.N; i++ {
					if c.test(q.keys[i%n]) {
						hits++
					}
				}
				if q.name == "present" && hits != b.N {
					b.Fatalf("%d of %d present keys found", hits, b.N)
				}
			})
		}
	}
}
