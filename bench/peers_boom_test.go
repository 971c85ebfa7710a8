package main

import (
	"bytes"
	"errors"
	"math"
	"strconv"
	"testing"

	"github.com/bloomlab/bloomlab/blocked"
	"github.com/bloomlab/bloomlab/bloom"
	"github.com/cespare/xxhash/v2"
	"github.com/greatroar/blobloom"
	boom "github.com/tylertreat/BoomFilters"
)

// peerKey returns key i of a set ("p" present, "a" absent, "x" added after
// the import) in buf's storage.
func peerKey(buf []byte, set byte, i int) []byte {
	return strconv.AppendInt(append(buf[:0], set), int64(i), 10)
}

// peerSizes are the sizes each peer is tested at: the first with 10^6
// present and 10^6 absent keys, the others smaller.
var peerSizes = []struct {
	n   int
	fpr float64
}{{1_000_000, 0.01}, {1000, 0.1}, {20_000, 0.001}, {100, 0.05}}

// comparePeer counts the keys of sets on which got and want disagree.
func comparePeer(t *testing.T, name string, n int, want, got func([]byte) bool) {
	t.Helper()
	var buf []byte
	diff := 0
	for _, set := range []byte{'p', 'a'} {
		for i := range n {
			buf = peerKey(buf, set, i)
			if want(buf) != got(buf) {
				if diff < 3 {
					t.Errorf("%s: key %q: peer %v, bloomlab %v", name, buf, want(buf), got(buf))
				}
				diff++
			}
		}
	}
	if diff > 0 {
		t.Fatalf("%s: %d differences over %d present and %d absent keys", name, diff, n, n)
	}
}

// addBoth adds keys "x0" … to the peer and the import, then checks that
// both still answer alike for every key and that the new keys are present.
func addBoth(t *testing.T, name string, n int, f *bloom.Filter, add func([]byte), want func([]byte) bool) {
	t.Helper()
	var buf []byte
	extra := max(n/10, 10)
	for i := range extra {
		buf = peerKey(buf, 'x', i)
		add(buf)
		f.Add(buf)
		if !f.Contains(buf) {
			t.Fatalf("%s: key %q added after the import is absent", name, buf)
		}
	}
	comparePeer(t, name+" after Add", n, want, f.Contains)
	comparePeer(t, name+" after Add (x keys)", extra, func(k []byte) bool {
		if k[0] == 'p' {
			k = append([]byte{'x'}, k[1:]...)
		}
		return want(k)
	}, func(k []byte) bool {
		if k[0] == 'p' {
			k = append([]byte{'x'}, k[1:]...)
		}
		return f.Contains(k)
	})
}

// sameBits serialises the peer again after both sides took the same keys,
// imports it and checks that the bits equal the import's: Add sets the
// bits the peer's Add sets.
func sameBits(t *testing.T, name string, f *bloom.Filter, write func(*bytes.Buffer) error, read func(*bytes.Buffer) (*bloom.Filter, error)) {
	t.Helper()
	var w bytes.Buffer
	if err := write(&w); err != nil {
		t.Fatal(err)
	}
	g, err := read(&w)
	if err != nil {
		t.Fatalf("%s: re-import: %v", name, err)
	}
	if !g.Equal(f) {
		t.Fatalf("%s: after the same Adds, the peer's bits differ from the import's", name)
	}
}

// roundTrip writes f as a bloomlab file and reads it back: the scheme, and
// with it the peer's hash, survives.
func roundTrip(t *testing.T, f *bloom.Filter) *bloom.Filter {
	t.Helper()
	b, err := f.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var g bloom.Filter
	if err := g.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if !g.Equal(f) || g.Scheme() != f.Scheme() {
		t.Fatalf("round trip changed the filter (scheme %v, read %v)", f.Scheme(), g.Scheme())
	}
	return &g
}

// TestBoomClassicDifferential: a tylertreat/BoomFilters classic filter, written by
// WriteTo and by GobEncode, imports as a bloom filter that answers exactly
// as Test for 10^6 present and 10^6 absent keys, and after more keys are
// added to both.
func TestBoomClassicDifferential(t *testing.T) {
	for _, sz := range peerSizes {
		name := "boom-classic n=" + strconv.Itoa(sz.n)
		p := boom.NewBloomFilter(uint(sz.n), sz.fpr)
		var buf []byte
		for i := range sz.n {
			buf = peerKey(buf, 'p', i)
			p.Add(buf)
		}
		var w bytes.Buffer
		if _, err := p.WriteTo(&w); err != nil {
			t.Fatal(err)
		}
		gob, err := p.GobEncode()
		if err != nil || !bytes.Equal(gob, w.Bytes()) {
			t.Fatalf("%s: GobEncode differs from WriteTo (%v)", name, err)
		}
		f, err := bloom.ReadBoomFilters(bytes.NewReader(w.Bytes()))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if f.Kind() != "bloom" || f.M() != uint64(p.Capacity()) || f.K() != int(p.K()) || f.N() != uint64(sz.n) {
			t.Fatalf("%s: imported %s m=%d k=%d n=%d, peer m=%d k=%d", name, f.Kind(), f.M(), f.K(), f.N(), p.Capacity(), p.K())
		}
		comparePeer(t, name, sz.n, p.Test, f.Contains)
		f = roundTrip(t, f)
		addBoth(t, name, sz.n, f, func(k []byte) { p.Add(k) }, p.Test)
		sameBits(t, name, f, func(w *bytes.Buffer) error { _, err := p.WriteTo(w); return err }, func(r *bytes.Buffer) (*bloom.Filter, error) { return bloom.ReadBoomFilters(r) })
	}
}

// TestBoomPartitionedDifferential is TestBoomClassicDifferential for BoomFilters'
// partitioned filter, imported as kind partitioned.
func TestBoomPartitionedDifferential(t *testing.T) {
	for _, sz := range peerSizes {
		name := "boom-partitioned n=" + strconv.Itoa(sz.n)
		p := boom.NewPartitionedBloomFilter(uint(sz.n), sz.fpr)
		var buf []byte
		for i := range sz.n {
			buf = peerKey(buf, 'p', i)
			p.Add(buf)
		}
		var w bytes.Buffer
		if _, err := p.WriteTo(&w); err != nil {
			t.Fatal(err)
		}
		f, err := bloom.ReadBoomPartitioned(bytes.NewReader(w.Bytes()))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if f.Kind() != "partitioned" || f.K() != int(p.K()) {
			t.Fatalf("%s: imported %s k=%d, peer k=%d", name, f.Kind(), f.K(), p.K())
		}
		comparePeer(t, name, sz.n, p.Test, f.Contains)
		f = roundTrip(t, f)
		addBoth(t, name, sz.n, f, func(k []byte) { p.Add(k) }, p.Test)
		sameBits(t, name, f, func(w *bytes.Buffer) error { _, err := p.WriteTo(w); return err }, func(r *bytes.Buffer) (*bloom.Filter, error) { return bloom.ReadBoomPartitioned(r) })
	}
}

// TestBlobloomDifferential: a greatroar/blobloom filter fed cespare/xxhash's Sum64,
// dumped by Dump (and a SyncFilter by DumpSync), imports with hash
// "xxhash64" as a bloom filter that answers exactly as Has; without a hash
// the import refuses.
func TestBlobloomDifferential(t *testing.T) {
	for j, sz := range peerSizes {
		name := "blobloom n=" + strconv.Itoa(sz.n)
		cfg := blobloom.Config{Capacity: uint64(sz.n), FPRate: sz.fpr}
		var w bytes.Buffer
		var has func([]byte) bool
		var add func([]byte)
		var card float64
		var dumpAgain func(w *bytes.Buffer) (int64, error)
		if j%2 == 0 {
			p := blobloom.NewOptimized(cfg)
			add = func(k []byte) { p.Add(xxhash.Sum64(k)) }
			has = func(k []byte) bool { return p.Has(xxhash.Sum64(k)) }
			var buf []byte
			for i := range sz.n {
				buf = peerKey(buf, 'p', i)
				add(buf)
			}
			card = p.Cardinality()
			dumpAgain = func(w *bytes.Buffer) (int64, error) { return blobloom.Dump(w, p, "") }
			if _, err := blobloom.Dump(&w, p, "bloomlab test"); err != nil {
				t.Fatal(err)
			}
		} else {
			p := blobloom.NewSyncOptimized(cfg)
			add = func(k []byte) { p.Add(xxhash.Sum64(k)) }
			has = func(k []byte) bool { return p.Has(xxhash.Sum64(k)) }
			var buf []byte
			for i := range sz.n {
				buf = peerKey(buf, 'p', i)
				add(buf)
			}
			card = p.Cardinality()
			dumpAgain = func(w *bytes.Buffer) (int64, error) { return blobloom.DumpSync(w, p, "") }
			if _, err := blobloom.DumpSync(&w, p, ""); err != nil {
				t.Fatal(err)
			}
		}
		dump := bytes.Clone(w.Bytes())
		if _, err := bloom.ReadBlobloom(bytes.NewReader(dump), ""); !errors.Is(err, bloom.ErrHashUnknown) {
			t.Fatalf("%s: import without a hash: %v, want ErrHashUnknown", name, err)
		}
		f, err := bloom.ReadBlobloom(bytes.NewReader(dump), "xxhash64")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if f.N() != uint64(math.Round(card)) {
			t.Errorf("%s: N = %d, blobloom's Cardinality %v", name, f.N(), card)
		}
		comparePeer(t, name, sz.n, has, f.Contains)
		f = roundTrip(t, f)
		addBoth(t, name, sz.n, f, add, has)
		sameBits(t, name, f, func(w *bytes.Buffer) error { _, err := dumpAgain(w); return err }, func(r *bytes.Buffer) (*bloom.Filter, error) { return bloom.ReadBlobloom(r, "xxhash64") })
	}
}

// BenchmarkBoomImported compares, at 10^6 keys and 1%, a query of the
// peers (BoomFilters classic Test, blobloom Has of xxhash Sum64), of their
// imports (Contains on the imported filter) and of native bloomlab filters
// built from the same keys (bloom of the same m and k, blocked at 1%).
func BenchmarkBoomImported(b *testing.B) {
	const n = 1_000_000
	keys := make([][]byte, 2*n)
	for i := range n {
		keys[i] = peerKey(nil, 'p', i)
		keys[n+i] = peerKey(nil, 'a', i)
	}
	bc := boom.NewBloomFilter(n, 0.01)
	bl := blobloom.NewOptimized(blobloom.Config{Capacity: n, FPRate: 0.01})
	for _, k := range keys[:n] {
		bc.Add(k)
		bl.Add(xxhash.Sum64(k))
	}
	var w bytes.Buffer
	bc.WriteTo(&w)
	ic, err := bloom.ReadBoomFilters(&w)
	if err != nil {
		b.Fatal(err)
	}
	w.Reset()
	blobloom.Dump(&w, bl, "")
	ib, err := bloom.ReadBlobloom(&w, "xxhash64")
	if err != nil {
		b.Fatal(err)
	}
	nc, _ := bloom.New(ic.M(), ic.K())
	nb, _ := blocked.NewWithEstimates(n, 0.01)
	for _, k := range keys[:n] {
		nc.Add(k)
		nb.Add(k)
	}
	for _, c := range []struct {
		name string
		has  func([]byte) bool
	}{
		{"boom-classic", bc.Test}, {"boom-classic-imported", ic.Contains}, {"bloom-native", nc.Contains},
		{"blobloom", func(k []byte) bool { return bl.Has(xxhash.Sum64(k)) }}, {"blobloom-imported", ib.Contains}, {"blocked-native", nb.Contains},
	} {
		for _, set := range []string{"present", "absent"} {
			ks := keys[:n]
			if set == "absent" {
				ks = keys[n:]
			}
			b.Run(c.name+"/"+set, func(b *testing.B) {
				hits := 0
				for i := 0; b.Loop(); i++ {
					if c.has(ks[i%n]) {
						hits++
					}
				}
				if set == "present" && hits != b.N {
					b.Fatalf("%d of %d present keys found", hits, b.N)
				}
			})
		}
	}
}
