package scalable

import (
	"errors"
	"fmt"
	"math"

	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/clog"
)

// RedisBloom's chains: the constructor BF.RESERVE's, what BF.INFO and
// BF.DEBUG report, and RedisBloom's sizing and option bits. Its formats
// are in dump.go (BF.SCANDUMP, BF.LOADCHUNK), framing.go (the chunks in a
// file) and rdb.go (the RDB value).

// NewRedisBloom returns the chain BF.RESERVE key errorRate capacity
// [EXPANSION expansion] [NONSCALING] creates (expansion 0: the default 2
// for a chain that scales; a non-scaling one records 0, as RedisBloom 8
// records EXPANSION 0, which its dump header then holds).
func NewRedisBloom(errorRate float64, capacity uint64, expansion uint32, nonScaling bool) (*Filter, error) {
	if capacity == 0 {
		return nil, fmt.Errorf("scalable: capacity 0, want at least 1: %w", ErrParam)
	}
	f, err := New(Config{Capacity: capacity, FPR: errorRate, Expansion: expansion, NonScaling: nonScaling, Profile: RedisBloom})
	if err == nil && nonScaling && expansion == 0 {
		f.growth = 0
	}
	return f, err
}

// Info is what RedisBloom's BF.INFO and BF.DEBUG report of a chain.
type Info struct {
	Capacity  uint64 // Σ of the links' entries (wrapping around, as RedisBloom's)
	Size      uint64 // RedisBloom's memory usage in bytes: 32 + Σ (64 + link bytes)
	Filters   int    // links
	Items     uint64 // "Number of items inserted" (N)
	Expansion uint32 // 0 for a non-scaling filter (RedisBloom replies nil)
	// Links are BF.DEBUG's lines, oldest link first.
	Links []RedisLink
}

// RedisLink is one link as RedisBloom's BF.DEBUG describes it.
type RedisLink struct {
	Bytes    uint64  // its memory
	Bits     uint64  // its bits (Bytes·8)
	Hashes   int     // positions per key
	Capacity uint64  // keys it was sized for
	Size     uint64  // keys added to it
	Ratio    float64 // the rate it was sized for
}

// RedisInfo returns the BF.INFO and BF.DEBUG figures of f, of any
// profile, in one consistent state; unlike Stats it reads no bit.
func (f *Filter) RedisInfo() Info {
	f.mu.Lock()
	defer f.mu.Unlock()
	ls := f.snapshot()
	info := Info{Filters: len(ls), Items: f.card.Load(), Expansion: f.growth, Links: make([]RedisLink, len(ls))}
	var bytes uint64
	for i, l := range ls {
		info.Capacity += l.entries
		bytes += l.bits / 8
		info.Links[i] = RedisLink{Bytes: l.bits / 8, Bits: l.bits, Hashes: l.k, Capacity: l.entries, Size: l.size, Ratio: l.errRate}
	}
	info.Size = redisMemUsage(bytes, len(ls))
	if f.nonScaling() {
		info.Expansion = 0
	}
	return info
}

// RedisBloom's option bits (deps/bloom/bloom.h), stored in every chain and
// in its SCANDUMP header.
const (
	// optNoRound: a link has ⌊entries·bpe⌋ bits (rounded up to 64), not a
	// power of two. Set on every filter RedisBloom ≥ 2.2 creates.
	optNoRound uint32 = 1
	// optEntsIsBits: "entries" is a number of bits. Never set by the
	// module's commands; not supported.
	optEntsIsBits uint32 = 2
	// optForce64: 64-bit hashing (MurmurHash64A). Set on every filter
	// RedisBloom ≥ 1.1 creates; required here.
	optForce64 uint32 = 4
	// optNoScaling: the chain never grows (BF.RESERVE … NONSCALING).
	optNoScaling uint32 = 8

	// redisOptions is what BF.RESERVE, BF.ADD and BF.INSERT set.
	redisOptions = optNoRound | optForce64
)

// Constants of RedisBloom's sizing (deps/bloom/bloom.c), as C doubles.
const (
	redisLn2     = 0.693147180559945 // the LN2 of bloom.c: k = ⌈LN2·bpe⌉
	redisLn2Sq   = 0.480453013918201 // ln²2 in calc_bpe
	redisTighten = 0.5               // ERROR_TIGHTENING_RATIO
	// maxRedisBPE bounds the bits per entry of a link read from a dump:
	// the smallest positive double as error rate gives 1549.5.
	maxRedisBPE = 1600
)

// redisBPE is RedisBloom's calc_bpe: −ln(error)/ln²2, with the C library's
// log. Go's math.Log is not that function: it differs from glibc's in the
// last bit on 10 of 1,600 rates ε·2^−i (20 common ε, i < 80), among them
// 0.01 and 0.0003125 (the first link of a non-scaling 1% filter, link 4
// of a 1% chain), which would change bpe in the dump header. The
// logarithm here is correctly rounded (internal/clog) and agrees with glibc
// 2.36 on all 1,600; glibc's log is documented within 0.52 ulp and was
// not correctly rounded on 80 of 200,000 random doubles, so a rare rate
// can still differ in bpe's last bit, which changes nothing but that
// header field unless entries·bpe or LN2·bpe lies within an ulp of an
// integer. clog's TestLog and TestRedisBloomC pin this against glibc.
func redisBPE(errRate float64) float64 {
	bpe := -(clog.Log(errRate) / redisLn2Sq) // once per link created
	if bpe < 0 {
		bpe = -bpe
	}
	return bpe
}

// lnFull is math.Log, correct for subnormal x too: Go's math.Log on amd64
// (its assembly) is not (ln 5e-324 gives −709.09, not −744.44), and the
// tightened rates of a long RedisBloom chain (error 0.0001, EXPANSION 1,
// a thousand links) are subnormal. x·2^54 is exact and normal.
func lnFull(x float64) float64 {
	if x > 0 && x < 0x1p-1022 {
		return math.Log(x*0x1p54) - 54*math.Ln2
	}
	return math.Log(x)
}

// redisHashes is bloom.c's ⌈LN2·bpe⌉.
func redisHashes(bpe float64) int { return int(math.Ceil(redisLn2 * bpe)) }

// errCannotGrow is wrapped, with ErrFull, when a link cannot be created.
var errCannotGrow = errors.New("cannot create the link")

// redisGeometry is what RedisBloom's bloom_init computes for a link of
// entries keys at rate errRate with the chain's options: its bits (a
// multiple of 64), its power-of-two exponent n2 (0 unless the chain lacks
// optNoRound), its k, its bits per entry and its entries (raised, without
// optNoRound, by the keys the power-of-two rounding leaves room for).
type redisGeometry struct {
	bits, entries uint64
	bpe           float64
	k             int
	n2            uint8
}

// redisInit mirrors bloom_init for the options this package supports
// (optForce64, with or without optNoRound), refusing links larger than
// hashing.MaxM bits.
func redisInit(entries uint64, errRate float64, options uint32) (redisGeometry, error) {
	if entries < 1 || !(errRate > 0 && errRate < 1) {
		return redisGeometry{}, fmt.Errorf("link of %d entries at rate %v: %w", entries, errRate, errCannotGrow)
	}
	g := redisGeometry{entries: entries, bpe: redisBPE(errRate)}
	x := float64(entries) * g.bpe
	if !(x <= hashing.MaxM-64) {
		return redisGeometry{}, fmt.Errorf("link of %d entries at rate %v needs %.4g bits, more than 2^48: %w", entries, errRate, x, errCannotGrow)
	}
	var bits uint64
	if options&optNoRound != 0 {
		bits = uint64(x)
		if bits == 0 {
			bits = 1
		}
	} else {
		if x < 1 {
			return redisGeometry{}, fmt.Errorf("power-of-two link of %d entries at rate %v holds less than one bit: %w", entries, errRate, errCannotGrow)
		}
		g.n2 = uint8(math.Logb(x) + 1)
		bits = 1 << g.n2
		bitDiff := uint64(float64(bits) - x)
		g.entries += uint64(float64(bitDiff) / g.bpe)
	}
	g.bits = (bits + 63) / 64 * 64
	g.k = redisHashes(g.bpe)
	return g, nil
}

// redisMemUsage is RedisBloom's BFMemUsage on a 64-bit build: the chain
// (32 bytes), and per link its struct (64 bytes) and its bytes.
func redisMemUsage(linkBytes uint64, links int) uint64 {
	return 32 + 64*uint64(links) + linkBytes
}
