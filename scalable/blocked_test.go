package scalable

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/bloomlab/bloomlab/blocked"
	"github.com/bloomlab/bloomlab/internal/blrd"
	"github.com/bloomlab/bloomlab/internal/stats"
	"github.com/bloomlab/bloomlab/theory"
)

// TestBlockedRate: a blocked-profile chain meets its target by the
// blocked filter's own theory. For a growing chain of several links
// (expansions 2 and 4, ratios 0.5 and 0.8), and a non-scaling filter,
// filled to the capacity of their last link: every link's rate at its
// capacity, theory.FPBlocked, is at most its share ε0·r^i; FormulaFPR,
// GrowthFPR and FPRBound are at most the target; the false positives
// among absent keys (fixed keys and seed) lie below the binomial
// acceptance bound (α = 10^-6) of the target, and within the two-sided
// region around the rate of the state (EstimatedFPR); no added key is
// missing.
func TestBlockedRate(t *testing.T) {
	queries := 400_000
	if testing.Short() {
		queries = 100_000
	}
	for _, c := range []Config{
		{Capacity: 1000, FPR: 0.01, Profile: Blocked, Seed: 3},
		{Capacity: 300, FPR: 0.02, Expansion: 4, Ratio: 0.8, Profile: Blocked, Seed: 4},
		{Capacity: 50_000, FPR: 0.01, NonScaling: true, Profile: Blocked, Seed: 5},
		{Capacity: 1, FPR: 0.001, Profile: Blocked},
	} {
		f := must(New(c))
		want := 5 // links
		if c.NonScaling {
			want = 1
		}
		n := 0
		for ; ; n++ {
			if f.Links() == want && f.Room() == 0 {
				break
			}
			if _, err := f.Add(key(n)); err != nil {
				t.Fatalf("%+v: add %d: %v", c, n, err)
			}
		}
		for i := 0; i < n; i++ {
			if !f.Contains(key(i)) {
				t.Fatalf("%+v: false negative for key %d", c, i)
			}
		}
		sum := 0.0
		for i, l := range f.Stats().Links {
			if l.AtCapacity > l.Rate || l.Bits%512 != 0 {
				t.Errorf("%+v link %d: %d bits, rate at capacity %v above its share %v", c, i, l.Bits, l.AtCapacity, l.Rate)
			}
			if fp := theory.FPBlocked(float64(l.Capacity), float64(l.Bits/512), 512, l.K); fp != l.AtCapacity {
				t.Errorf("%+v link %d: AtCapacity %v, theory.FPBlocked %v", c, i, l.AtCapacity, fp)
			}
			sum += l.Rate
		}
		target := f.Config().FPR
		if target != c.FPR && !(c.FPR-target < 1e-15) {
			t.Errorf("%+v: Config().FPR %v", c, target)
		}
		st := f.Stats()
		formula, growth, bound, est := st.Formula, st.Growth, st.Bound, f.EstimatedFPR()
		if formula > c.FPR || growth > c.FPR || bound > c.FPR*(1+1e-12) || sum > c.FPR*(1+1e-12) {
			t.Errorf("%+v: formula %v, growth %v, bound %v: want ≤ %v", c, formula, growth, bound, c.FPR)
		}
		fp := 0
		for i := 1 << 40; i < 1<<40+queries; i++ {
			if f.Contains(key(i)) {
				fp++
			}
		}
		_, hiTarget := stats.BinomialQuantileBounds(uint64(queries), c.FPR, 1e-6)
		lo, hi := stats.BinomialQuantileBounds(uint64(queries), est, 1e-6)
		if uint64(fp) > hiTarget || uint64(fp) < lo || uint64(fp) > hi {
			t.Errorf("%+v: %d false positives in %d: target bound %d, the state (%.5f) predicts [%d, %d]", c, fp, queries, hiTarget, est, lo, hi)
		}
		t.Logf("%+v: %d keys, %d links, %.1f bits/key; formula %.5f, state %.5f, growth %.5f; %d false positives in %d (%.5f)",
			c, n, f.Links(), float64(f.Bits())/float64(n), formula, est, growth, fp, queries, float64(fp)/float64(queries))
	}
}

// TestBlockedMatchesPackage: a blocked-profile link is package blocked's
// filter bit for bit: a non-scaling chain and a blocked.Filter of the
// same blocks, k and seed, given the same keys, answer every query alike
// and have the same bits.
func TestBlockedMatchesPackage(t *testing.T) {
	f := must(New(Config{Capacity: 5000, FPR: 0.01, NonScaling: true, Profile: Blocked, Seed: 9}))
	st := f.Stats().Links[0]
	g := must(blocked.New(st.Bits, st.K, blocked.WithSeed(9)))
	for i := 0; i < 5000; i++ {
		must(f.Add(key(i)))
		g.Add(key(i))
	}
	for i := 0; i < 200_000; i++ {
		if f.Contains(key(i)) != g.Contains(key(i)) {
			t.Fatalf("key %d: chain %v, blocked %v", i, f.Contains(key(i)), g.Contains(key(i)))
		}
	}
	fb, gb := must(f.MarshalBinary()), must(g.MarshalBinary())
	words := f.Bits() / 8
	if !bytes.Equal(fb[len(fb)-4-int(words):len(fb)-4], gb[len(gb)-4-int(words):len(gb)-4]) {
		t.Error("the chain's link and the blocked filter hold different bits")
	}
}

// TestBlockedDump: a blocked- or bloomlab-profile chain's BF.SCANDUMP
// begins with bloomlab's header (magic BLOOMLAB-BF1), which RedisBloom's
// header check refuses (its length is never 20 + 53 × the count RedisBloom
// reads at bytes 8–11) and ReadRedisBloom refuses; LoadChunks takes the
// dump back into an equal chain; corrupt headers are refused before
// anything is allocated.
func TestBlockedDump(t *testing.T) {
	for _, p := range []Profile{Blocked, Bloomlab} {
		f := must(New(Config{Capacity: 100, FPR: 0.01, Profile: p, Seed: 11}))
		for i := 0; i < 1000; i++ {
			must(f.Add(key(i)))
		}
		for _, size := range []int{0, 64, 1000} {
			cs := must(f.Dump(size))
			hdr := cs[0].Data
			if string(hdr[:12]) != "BLOOMLAB-BF1" || len(hdr) != 56+48*f.Links() {
				t.Fatalf("%v: header %q…, %d bytes", p, hdr[:12], len(hdr))
			}
			if nf := uint64(binary.LittleEndian.Uint32(hdr[8:])); uint64(len(hdr)) == 20+53*nf {
				t.Fatalf("%v: RedisBloom would read the header as %d links", p, nf)
			}
			if _, _, _, err := parseHeader(hdr); err == nil {
				t.Fatalf("%v: taken as a RedisBloom header", p)
			}
			g, err := LoadChunks(cs)
			if err != nil || !g.Equal(f) || g.profile != p {
				t.Fatalf("%v size %d: reloaded: %v", p, size, err)
			}
			var ld Loader
			for _, c := range cs {
				if err := ld.LoadChunk(c.Iter, c.Data); err != nil {
					t.Fatal(err)
				}
			}
			if g, err := ld.Filter(); err != nil || !g.Equal(f) {
				t.Fatalf("%v: Loader: %v", p, err)
			}
		}
		var buf bytes.Buffer
		if _, err := f.WriteRedisBloom(&buf, 0); !errors.Is(err, ErrParam) {
			t.Errorf("%v: WriteRedisBloom: %v", p, err)
		}
		// A RedisBloom framing of bloomlab's header is refused.
		cs := must(f.Dump(0))
		var fb bytes.Buffer
		w := blrd.NewWriter(&fb)
		for _, c := range cs {
			w.Record(c.Iter, c.Data)
		}
		w.Close()
		if _, err := ReadRedisBloom(&fb); err == nil {
			t.Errorf("%v: ReadRedisBloom took bloomlab's dump", p)
		}
		hdr := cs[0].Data
		for name, mut := range map[string]func(b []byte){
			"magic":        func(b []byte) { b[0] = 'X' },
			"scheme":       func(b []byte) { b[12] = 64 },
			"reserved":     func(b []byte) { b[14] = 1 },
			"expansion 0":  func(b []byte) { binary.LittleEndian.PutUint32(b[24:], 0) },
			"options":      func(b []byte) { binary.LittleEndian.PutUint32(b[28:], 4) },
			"ratio 1":      func(b []byte) { binary.LittleEndian.PutUint64(b[32:], 0x3ff0000000000000) },
			"N":            func(b []byte) { binary.LittleEndian.PutUint64(b[40:], 1) },
			"links":        func(b []byte) { binary.LittleEndian.PutUint32(b[48:], 5000) },
			"link count":   func(b []byte) { binary.LittleEndian.PutUint32(b[48:], 1) },
			"huge link":    func(b []byte) { binary.LittleEndian.PutUint64(b[52:], 1<<49) },
			"k = 0":        func(b []byte) { binary.LittleEndian.PutUint64(b[52+40:], 0) },
			"reserved k":   func(b []byte) { binary.LittleEndian.PutUint64(b[52+40:], 7|1<<40) },
			"odd bits":     func(b []byte) { binary.LittleEndian.PutUint64(b[52:], 100) },
			"capacity 0":   func(b []byte) { binary.LittleEndian.PutUint64(b[52+8:], 0) },
			"rate 0":       func(b []byte) { binary.LittleEndian.PutUint64(b[52+24:], 0) },
			"bpe set":      func(b []byte) { binary.LittleEndian.PutUint64(b[52+32:], 0x4000000000000000) },
			"short header": nil,
		} {
			b := bytes.Clone(hdr)
			if mut != nil {
				mut(b)
				// The checksum made right: each check refuses on its own.
				n := len(b) - 4
				binary.LittleEndian.PutUint32(b[n:], crc32.Checksum(b[:n], crc32.MakeTable(crc32.Castagnoli)))
			} else {
				b = b[:40]
			}
			var ld Loader
			if err := ld.LoadChunk(1, b); err == nil {
				t.Errorf("%v: header with %s taken", p, name)
			}
		}
		// A header damaged in transit, valid field by field, is refused by
		// its checksum: loaded, a changed seed or k answers "absent" for
		// the chain's keys.
		for name, mut := range map[string]func(b []byte){
			"seed":     func(b []byte) { b[16] ^= 1 },
			"k":        func(b []byte) { b[52+40]++ },
			"checksum": func(b []byte) { b[len(b)-1] ^= 0x80 },
		} {
			b := bytes.Clone(hdr)
			mut(b)
			var ld Loader
			if err := ld.LoadChunk(1, b); err == nil || !strings.Contains(err.Error(), "damaged") {
				t.Errorf("%v: header with a changed %s: %v", p, name, err)
			}
		}
	}
}
