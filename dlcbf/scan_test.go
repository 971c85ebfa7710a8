package dlcbf

import (
	"encoding/binary"
	"math/rand/v2"
	"strconv"
	"testing"
)

// scanVerdict runs scan over payload (without its padding word) as the
// decoder would, handing it the words in chunks that end at the given
// sizes, and returns its verdict for n keys.
func scanVerdict(cfg Config, payload []uint64, n uint64, cuts []int) bool {
	s := newLoadScan(shell(cfg))
	for _, c := range cuts {
		if c > 0 && c < len(payload) {
			s.each(payload[:c], 0)
		}
	}
	s.each(payload, 0)
	return s.finish(append(payload[:len(payload):len(payload)], 0), n)
}

// validateVerdict is validate's verdict on the same payload.
func validateVerdict(cfg Config, payload []uint64, n uint64) bool {
	f := build(cfg, append([]uint64(nil), payload...))
	f.n = n
	return f.validate() == nil
}

// scanConfigs are configurations with every counter and remainder width
// class: lanes of 2 to 40 bits (one to 32 cells per window), cells that
// straddle words, dynamic cells without counters.
func scanConfigs() []Config {
	var out []Config
	for _, rc := range [][2]int{{1, 1}, {6, 1}, {12, 2}, {14, 2}, {13, 3}, {5, 8}, {32, 8}, {31, 1}, {2, 5}} {
		out = append(out, Config{Variant: Static, Subtables: 3, Buckets: 5, Cells: 4, RemainderBits: rc[0], CounterBits: rc[1], Seed: 7})
	}
	for _, v := range []Variant{Dynamic, TwoSizes} {
		for _, rc := range [][3]int{{6, 1, 40}, {14, 1, 150}, {8, 0, 70}, {10, 3, 200}, {4, NoCounter, 33}, {20, 8, 600}} {
			cfg := Config{Variant: v, Subtables: 2, Buckets: 7, Cells: 5, RemainderBits: rc[0], CounterBits: rc[1], BucketBits: rc[2], Seed: 3}
			if v == TwoSizes && cfg.CounterBits == NoCounter {
				continue
			}
			out = append(out, cfg)
		}
	}
	return out
}

// TestScanAgrees: scan, the check decode runs as the payload arrives,
// accepts exactly what validate accepts, for filters of every variant
// (filled, emptied, overfull with repeated keys) and every kind of damage:
// single bits flipped, words replaced, the key count off by one.
func TestScanAgrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 11))
	for _, cfg := range scanConfigs() {
		cfg, err := normalize(cfg)
		if err != nil {
			t.Fatalf("%+v: %v", cfg, err)
		}
		f := build(cfg, nil)
		for i := 0; i < 200; i++ {
			key := strconv.Itoa(i % 60) // repeated keys exercise the counters
			if f.AddString(key) != nil {
				break
			}
			if i%7 == 3 {
				f.RemoveString(strconv.Itoa(i % 60))
			}
		}
		good := f.words[:len(f.words)-1]
		nw := len(good)
		check := func(what string, payload []uint64, n uint64) {
			t.Helper()
			want := validateVerdict(cfg, payload, n)
			cuts := []int{rng.IntN(nw + 1), rng.IntN(nw + 1)}
			if cuts[0] > cuts[1] {
				cuts[0], cuts[1] = cuts[1], cuts[0]
			}
			if got := scanVerdict(cfg, payload, n, cuts); got != want {
				t.Fatalf("%v r=%d c=%d R=%d, %s: scan says %v, validate %v (chunks %v)\npayload %x",
					cfg.Variant, cfg.RemainderBits, cfg.CounterBits, cfg.BucketBits, what, got, want, cuts, payload)
			}
		}
		check("as built", good, f.n)
		check("n + 1", good, f.n+1)
		check("n − 1", good, f.n-1)
		if !validateVerdict(cfg, good, f.n) {
			t.Fatalf("%v: a built filter does not validate", cfg.Variant)
		}
		empty := make([]uint64, nw)
		check("empty", empty, 0)
		for bit := 0; bit < 64*nw; bit++ {
			p := append([]uint64(nil), good...)
			p[bit/64] ^= 1 << (bit % 64)
			check("bit "+strconv.Itoa(bit)+" flipped", p, f.n)
			p = append([]uint64(nil), empty...)
			p[bit/64] ^= 1 << (bit % 64)
			check("bit "+strconv.Itoa(bit)+" set in an empty filter", p, 0)
			check("bit "+strconv.Itoa(bit)+" set in an empty filter, n = 1", p, 1)
		}
		for range 2000 {
			p := append([]uint64(nil), good...)
			p[rng.IntN(nw)] = rng.Uint64() >> rng.UintN(64)
			check("word replaced", p, f.n)
			check("word replaced, n + 1", p, f.n+1)
		}
	}
}

// FuzzScan: scan and validate agree on arbitrary payloads, for a
// configuration and chunking taken from the input.
func FuzzScan(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0}, uint64(0), uint16(3))
	f.Add([]byte{1, 3, 2, 5, 1, 40, 0xff, 0x0f, 1, 2, 3, 4, 5, 6, 7, 8, 9}, uint64(5), uint16(1))
	f.Add([]byte{2, 1, 4, 6, 1, 60, 0x45, 0x06, 0, 0, 0, 0, 0, 0, 0, 0, 0x11}, uint64(2), uint16(2))
	f.Fuzz(func(t *testing.T, data []byte, n uint64, cut uint16) {
		if len(data) < 6 {
			return
		}
		cfg := Config{
			Variant:       Variant(data[0]%3 + 1),
			Subtables:     int(data[1]%3 + 1),
			Buckets:       uint64(data[2]%6 + 1),
			Cells:         int(data[3]%MaxCells + 1),
			RemainderBits: int(data[4]%MaxRemainder + 1),
			CounterBits:   int(data[5]%9) - 1,
			Seed:          1,
		}
		if cfg.Variant == Static && cfg.CounterBits < 1 {
			cfg.CounterBits = 1
		}
		if cfg.Variant != Static && len(data) > 6 {
			cfg.BucketBits = int(data[6]) * 8
		}
		cfg, err := normalize(cfg)
		if err != nil {
			return
		}
		total := uint64(cfg.Subtables) * cfg.Buckets * bucketBits(cfg)
		payload := make([]uint64, (total+63)/64)
		for i := range payload {
			var b [8]byte
			copy(b[:], data[min(len(data), 7+8*i):])
			payload[i] = binary.LittleEndian.Uint64(b[:])
		}
		n %= 64
		want := validateVerdict(cfg, payload, n)
		if got := scanVerdict(cfg, payload, n, []int{int(cut) % (len(payload) + 1)}); got != want {
			t.Fatalf("%+v: scan says %v, validate %v\npayload %x, n = %d", cfg, got, want, payload, n)
		}
	})
}

// BenchmarkScan: the load-time check per variant over a 1 MiB payload of a
// filter at its design load (in cache: the check's own cost, which the
// decoder pays chunk by chunk while the chunk is in cache).
func BenchmarkScan(b *testing.B) {
	for _, v := range variants {
		b.Run(v.String(), func(b *testing.B) {
			p, err := PlanFPR(v, 1<<17, 0.01)
			if err != nil {
				b.Fatal(err)
			}
			f, err := p.new(1)
			if err != nil {
				b.Fatal(err)
			}
			for i := range p.N * 3 / 4 {
				if f.AddString(strconv.FormatUint(i, 10)) != nil {
					break
				}
			}
			b.SetBytes(int64(8 * (len(f.words) - 1)))
			for b.Loop() {
				s := newLoadScan(shell(f.cfg))
				if !s.finish(f.words, f.n) {
					b.Fatal("scan rejects a built filter")
				}
			}
		})
	}
}

// TestWindow: window and load64 (an unaligned load where the machine allows
// it, window_unsafe.go) return the bits that windowSafe does,
// at every bit position of a payload whose every position may start a
// window.
func TestWindow(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	w := make([]uint64, 9)
	for i := range w {
		w[i] = rng.Uint64()
	}
	const mask = 1<<windowBits - 1
	for pos := uint64(0); pos < 64*uint64(len(w)-1); pos++ {
		if got, want := window(w, pos)&mask, windowSafe(w, pos)&mask; got != want {
			t.Fatalf("bit %d: window %#x, windowSafe %#x", pos, got, want)
		}
		if pos%8 == 0 {
			if got, want := load64(w, pos/8), windowSafe(w, pos); got != want {
				t.Fatalf("byte %d: load64 %#x, windowSafe %#x", pos/8, got, want)
			}
		}
	}
}
