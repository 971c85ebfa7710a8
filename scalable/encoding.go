package scalable

import (
	"fmt"
	"io"
	"math"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/format"
)

// File layout (docs/FORMAT.md, kind 8): the common header with kind 8
// (scalable), scheme 3 (bloomlab profile: xxh3-128 with the header's
// seed, enhanced double hashing) or 64 (RedisBloom profile: hashing.RedisBloom,
// seed 0); a 28-byte parameter block
//
//	offset size field
//	0      4    expansion (bloomlab: ≥ 1; RedisBloom: as recorded, any)
//	4      4    options: RedisBloom's bits (FORCE64 required; NOROUND,
//	            NO_SCALING); bloomlab: 0 or 8 (NO_SCALING)
//	8      8    ratio (float64): bloomlab in (0, 1); RedisBloom 0.5
//	16     8    N: keys in the chain, the sum of the links' counts
//	24     4    L: links, 1 … 4096
//
// and a payload of L link records of 6 words each, oldest link first —
//
//	word 0  bits of the link: a multiple of 64, 64 … 2^48
//	word 1  capacity (entries), ≥ 1
//	word 2  keys added to the link
//	word 3  design rate (float64), in (0, 1)
//	word 4  RedisBloom's bits per entry (float64); bloomlab 0
//	word 5  k in bits 0–31 (bloomlab 1 … 64; RedisBloom ⌈0.693147180559945·bpe⌉);
//	        RedisBloom's n2 in bits 32–39 (0, or a link of 2^n2 positions;
//	        bloomlab 0); the other bits zero
//
// — then each link's bits/64 words, oldest link first (bit j of a link is
// bit j mod 64 of its word j/64; bits at and beyond a link's positions
// are zero), and the CRC-32C trailer. The RedisBloom profile records
// exactly what its SCANDUMP header does.

const (
	paramsLen = 28
	recordLen = 6 // words
)

// WriteTo writes f in the bloomlab file format.
func (f *Filter) WriteTo(w io.Writer) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ls := f.snapshot()
	if len(ls) == 0 {
		return 0, errZero
	}
	var p format.Params
	p.U32(f.growth)
	p.U32(f.options)
	p.U64(math.Float64bits(f.ratio))
	p.U64(f.card.Load())
	p.U32(uint32(len(ls)))
	recs := make([]uint64, 0, recordLen*len(ls))
	payload := uint64(8 * recordLen * len(ls))
	for _, l := range ls {
		recs = append(recs, l.bits, l.entries, l.size, math.Float64bits(l.errRate), math.Float64bits(l.bpe), uint64(l.k)|uint64(l.n2)<<32)
		payload += l.bits / 8
	}
	e := format.NewEncoder(w)
	e.Begin(format.Header{Kind: format.KindScalable, Scheme: uint8(f.profile.scheme()), Seed: f.seed, PayloadLen: payload}, p.Bytes())
	e.Words(recs)
	for _, l := range ls {
		e.Words(l.words)
	}
	return e.Close()
}

// MarshalBinary returns f in the bloomlab file format.
func (f *Filter) MarshalBinary() ([]byte, error) {
	return format.Marshal(f, int(min(f.Bits()/8, 1<<30))+256)
}

// UnmarshalBinary replaces f with the filter encoded in data, which must
// hold exactly one file. On error f is unchanged.
func (f *Filter) UnmarshalBinary(data []byte) error {
	g, err := format.Unmarshal(data, "scalable", decode)
	if err == nil {
		f.replace(g)
	}
	return err
}

// ReadFrom replaces f with the filter read from r, reading exactly one
// file. On error f is unchanged; corrupt or hostile input yields an error
// wrapping format.ErrFormat, never a panic, and nothing is allocated
// beyond what the bytes received justify.
func (f *Filter) ReadFrom(r io.Reader) (int64, error) {
	g, n, err := format.ReadFrom(r, decode)
	if err == nil {
		f.replace(g)
	}
	return n, err
}

// replace makes f the filter g (which nobody else holds).
func (f *Filter) replace(g *Filter) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.profile, f.seed, f.growth, f.ratio, f.options = g.profile, g.seed, g.growth, g.ratio, g.options
	f.card.Store(g.card.Load())
	f.links.Store(g.links.Load())
}

// decode reads one scalable filter in the bloomlab file format from d
// (Filter.ReadFrom, UnmarshalBinary and bloomlab.ReadFrom are the public
// ways in).
func decode(d *format.Decoder) (*Filter, error) {
	params, err := d.Begin(format.KindScalable)
	if err != nil {
		return nil, fmt.Errorf("scalable: %w", err)
	}
	bad := func(msg string, args ...any) error {
		return fmt.Errorf("scalable: "+msg+": %w", append(args, format.ErrFormat)...)
	}
	pr := format.NewParamReader(params)
	growth, options, ratio, card, nl := pr.U32(), pr.U32(), math.Float64frombits(pr.U64()), pr.U64(), pr.U32()
	if err := pr.Err(); err != nil {
		return nil, fmt.Errorf("scalable: %w", err)
	}
	f := &Filter{growth: growth, ratio: ratio, options: options, seed: d.Header.Seed}
	switch hashing.Scheme(d.Header.Scheme) {
	case hashing.Enhanced, hashing.Independent:
		f.profile = Bloomlab
		if hashing.Scheme(d.Header.Scheme) == hashing.Independent {
			f.profile = Blocked
		}
		if err := checkChain(f.profile, growth, options, ratio); err != nil {
			return nil, bad("%v", err)
		}
	case hashing.RedisBloom:
		f.profile = RedisBloom
		switch {
		case d.Header.Seed != 0:
			return nil, bad("seed %d: the redisbloom profile has no seed", d.Header.Seed)
		case options&^(optNoRound|optForce64|optNoScaling) != 0 || options&optForce64 == 0:
			return nil, bad("RedisBloom options %#x (want FORCE64, with NOROUND and NO_SCALING optional)", options)
		case ratio != redisTighten:
			return nil, bad("ratio %v: the redisbloom profile tightens by 0.5", ratio)
		}
	default:
		return nil, bad("hash scheme %d (want %d, bloomlab, %d, blocked, or %d, RedisBloom)", d.Header.Scheme, hashing.Enhanced, hashing.Independent, hashing.RedisBloom)
	}
	if nl < 1 || nl > maxLinks {
		return nil, bad("%d links, want 1 … %d", nl, maxLinks)
	}
	if d.Header.PayloadLen/8 < recordLen*uint64(nl) {
		return nil, bad("payload of %d bytes cannot hold %d link records", d.Header.PayloadLen, nl)
	}
	recs, err := d.Words(recordLen * uint64(nl))
	if err != nil {
		return nil, fmt.Errorf("scalable: %w", err)
	}
	ls := make([]*link, nl)
	var words, sum uint64
	for i := range ls {
		r := recs[recordLen*i:]
		bitsN, entries, size := r[0], r[1], r[2]
		errRate, bpe := math.Float64frombits(r[3]), math.Float64frombits(r[4])
		k, n2 := r[5]&0xffffffff, r[5]>>32
		if n2 > 0xff {
			return nil, bad("link %d: reserved bits of word 5 set", i)
		}
		if f.profile == RedisBloom {
			if bitsN%64 != 0 {
				return nil, bad("link %d: %d bits, not a multiple of 64", i, bitsN)
			}
			if err := checkRedisLink(bitsN/8, bitsN, errRate, bpe, uint32(k), entries, uint8(n2)); err != nil {
				return nil, bad("link %d: %v", i, err)
			}
			ls[i] = makeRedisLink(redisGeometry{bits: bitsN, entries: entries, bpe: bpe, k: int(k), n2: uint8(n2)}, errRate, nil, size)
		} else if ls[i], err = checkLink(f.profile, r); err != nil {
			return nil, bad("link %d: %v", i, err)
		}
		words += bitsN / 64
		var over bool
		if sum, over = addOverflow(sum, size); over {
			return nil, bad("link counts overflow")
		}
	}
	if sum != card {
		return nil, bad("N = %d, the links hold %d", card, sum)
	}
	if d.Header.PayloadLen/8 != recordLen*uint64(nl)+words {
		return nil, bad("payload of %d bytes, the links need %d", d.Header.PayloadLen, 8*(recordLen*uint64(nl)+words))
	}
	for i, l := range ls {
		if l.words, err = d.Words(l.bits / 64); err != nil {
			return nil, fmt.Errorf("scalable: %w", err)
		}
		if !l.tailClear() {
			return nil, bad("link %d: bits set beyond its %d positions", i, l.mod)
		}
	}
	if err := d.End(); err != nil {
		return nil, fmt.Errorf("scalable: %w", err)
	}
	f.card.Store(card)
	f.links.Store(&ls)
	return f, nil
}

// tailClear reports whether no bit at or beyond mod is set (only
// RedisBloom's power-of-two links smaller than 64 bits have such bits).
func (l *link) tailClear() bool {
	for j := l.mod; j < l.bits; {
		if j%64 == 0 {
			if l.words[j/64] != 0 {
				return false
			}
			j += 64
			continue
		}
		if l.words[j/64]>>(j%64) != 0 {
			return false
		}
		j = (j/64 + 1) * 64
	}
	return true
}

// checkChain validates the chain parameters of a bloomlab- or
// blocked-profile file or dump.
func checkChain(p Profile, growth, options uint32, ratio float64) error {
	switch {
	case growth < 1:
		return fmt.Errorf("expansion 0")
	case options&^optNoScaling != 0:
		return fmt.Errorf("options %#x, want 0 or %d (non-scaling) for the %v profile", options, optNoScaling, p)
	case !(ratio > 0 && ratio < 1):
		return fmt.Errorf("ratio %v out of (0, 1)", ratio)
	}
	return nil
}

// checkLink validates the link record r (recordLen words) of a bloomlab-
// or blocked-profile file or dump and returns the link it describes,
// without bits.
func checkLink(p Profile, r []uint64) (*link, error) {
	bitsN, entries, size := r[0], r[1], r[2]
	errRate, bpe := math.Float64frombits(r[3]), math.Float64frombits(r[4])
	k, n2 := r[5]&0xffffffff, r[5]>>32
	unit := uint64(64)
	if p == Blocked {
		unit = blockBits
	}
	switch {
	case bitsN < unit || bitsN > hashing.MaxM || bitsN%unit != 0:
		return nil, fmt.Errorf("%d bits, want a multiple of %d in [%d, 2^48]", bitsN, unit, unit)
	case k < 1 || k > hashing.MaxK:
		return nil, fmt.Errorf("k = %d out of [1, %d]", k, hashing.MaxK)
	case n2 != 0 || bpe != 0:
		return nil, fmt.Errorf("RedisBloom fields set in a %v link", p)
	case entries < 1 || !(errRate > 0 && errRate < 1):
		return nil, fmt.Errorf("capacity %d at rate %v", entries, errRate)
	}
	if p == Blocked {
		return makeBlockedLink(bitsN, int(k), entries, errRate, nil, size), nil
	}
	return makeBloomlabLink(bitsN, int(k), entries, errRate, nil, size)
}
