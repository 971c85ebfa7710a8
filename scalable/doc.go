// Package scalable implements a growing ("scalable") Bloom filter: a chain
// of standard Bloom filters, each link larger and stricter than the last,
// that takes keys without a bound on their number (Almeida, Baquero,
// Preguiça and Hutchison, "Scalable Bloom Filters", 2007), byte-compatible
// with RedisBloom's BF.* filters. docs/SCALABLE.md is the long form.
//
// # Guarantee
//
// No false negatives, under any sequence of calls: a key that Add accepted
// is reported present forever after, whatever else was added, unioned or
// dumped and loaded. A filter that cannot take a key — a non-scaling filter
// at its capacity, or a chain whose next link would exceed 2^48 bits, its
// memory budget (Config.MaxBits, SetMaxBits) or 4096 links, or whose
// expansion exceeds MaxExpansion (bloomlab profile, a file's) — returns an
// error wrapping ErrFull and changes nothing; it never drops a key.
//
// # Growth and the compound rate
//
// Link i (i = 0, 1, …) is sized for n0·s^i keys, n0 the initial capacity
// (Config.Capacity) and s the expansion (Config.Expansion, default 2), at
// rate ε0·r^i, r the tightening ratio (Config.Ratio, default 1/2). A key
// goes into the newest link; when that link holds its capacity, the next
// new key opens a new link. A key is present when any link answers it, so
// by the union bound the chain's false-positive rate is at most
//
//	Σ_{i<L} ε0·r^i = ε0·(1 − r^L)/(1 − r) < ε0/(1 − r) = ε
//
// with ε0 = ε·(1 − r), however many links L it has (theory.FPScalableBound;
// RedisBloom: ε0 = ε/2, r = 1/2). This bounds the expected rate at each
// link's capacity provided each link meets its share ε0·r^i there. In the
// bloomlab profile each does, for any initial capacity n0 ≥ 1: a link is
// sized by its rate with the pair floor of double hashing included (a
// query whose (h1, h2) is one of the link's keys' probes exactly that key's
// bits, about keys/(m²/2), which a link of few keys would otherwise
// exceed its share by; theory.SizeSchemeUnit), so Stats().Growth is at
// most the target Config().FPR. The rate of one particular filter, computed from its bits by
// EstimatedFPR (with the floor; exact for small links), scatters around
// the expected one by a few percent (its small first links are the
// noisiest). The RedisBloom profile keeps RedisBloom's layout and exceeds
// its target when its first links are small: see Profiles. A non-scaling filter (Config.NonScaling,
// RedisBloom's NONSCALING) is one link at rate ε that refuses new keys past
// its capacity. The price of not knowing n is memory: holding n keys, a
// chain started at n0 takes about theory.OverheadScalable times the bits of
// a filter sized for n (2.4× at 10^6 keys, 4.8× at 10^7 from 1,000 at 1%).
//
// # Counting
//
// Add first checks every link; a key that is already present (or a false
// positive) changes nothing and is not counted. N (BF.CARD) counts the
// adds that were new, exactly as RedisBloom's "Number of items inserted"
// and BF.CARD do, and each link's count decides when it is full.
// Add reports which case happened, as BF.ADD's 1 or 0 does.
//
// # Profiles
//
// A chain hashes and lays out its links in one of three profiles:
//
//   - Bloomlab (the default): xxh3-128 with the filter's seed, hashed once
//     per key; each link a standard filter with enhanced double hashing
//     (hashing.Enhanced), sized by theory.SizeSchemeUnit for its capacity
//     and rate: the smallest multiple of 64 bits, and k ≤ 64, whose rate at
//     capacity, the pair floor included, is at most its share ε0·r^i; any
//     ratio in (0, 1). Choose it for Go programs that do not exchange
//     filters with Redis: faster hashing, a seed, sizing that meets the
//     target for any initial capacity, any ratio. A tiny initial capacity
//     costs memory: links whose floor rules take about √(2/(n0·ε0)) bits
//     per key (63 for n0 = 1 at 0.1%), and with expansion 1 and ratio 1/2
//     each link is √2 times the last.
//   - RedisBloom: bit for bit what RedisBloom 2.x stores, so that a filter
//     built here loads into Redis (BF.LOADCHUNK) and one dumped from Redis
//     (BF.SCANDUMP) is queried and grown here with identical answers: the
//     two MurmurHash64A hashes (hashing.RedisBloomHash), positions
//     (a + i·b) mod bits in wrapping 64-bit arithmetic, bit j of a link in
//     byte j/8 at bit j mod 8, ⌊entries·bpe⌋ bits with bpe = −ln ε_i/ln²2
//     rounded up to a multiple of 64, k = ⌈0.693147180559945·bpe⌉, the
//     first link at ε/2 (ε for NONSCALING), each next link at half the
//     previous rate and the previous link's entries times the expansion.
//     Choose it when the filter goes to or comes from Redis. Its links of
//     few keys exceed their rates, so a chain whose first link is small
//     exceeds its target: on a link whose bits are a power of two (64 or
//     128 for links of up to about 10 keys) steps b of short additive
//     order probe few positions (b ≡ 0 probes one, and a key whose step
//     has order k sets a whole coset that every query of such a step
//     from it hits), and two keys share (a mod m, b mod m) about once in
//     m²/2; RedisBloom's k = ⌈ln2·bpe⌉ puts even large links 0.4% above
//     their share. Measured (docs/SCALABLE.md; 10^5 keys, five key sets)
//     at 1%: 3.2% from a first link of 1 key, 2.1% from 10, 1.06% from
//     100, 0.98% from 1000. EstimatedFPR counts these effects (exactly for
//     small power-of-two links, by theory.FPAnyStep for the others: a
//     model on power-of-two sizes, an upper bound on the others, where
//     the wraps of a + i·b modulo 2^64 spread the probes), Stats().Growth says
//     what the chain is expected to reach as it fills, and `bloomlab
//     build` and `plan` say so when it exceeds the target by more than 5%.
//   - Blocked: xxh3-128 with the filter's seed, hashed once per key, each
//     link a cache-line-blocked filter in package blocked's layout (the
//     key's block hashing.Reduce(H1, blocks), its k in-block positions
//     from H2: blocked.BlockContains and BlockAddAtomic), so a query
//     touches one cache line per link it tests. A link is sized by the
//     blocked filter's own rate (theory.SizeBlocked: the fewest 512-bit
//     blocks for which some k ≤ 64 gives theory.FPBlocked ≤ its share
//     ε0·r^i at its capacity), so Stats().Growth is at most the target, as in
//     the bloomlab profile, and EstimatedFPR is the mean over each link's
//     blocks of (ones/512)^k. Blocks of unequal load need more bits for
//     the same rate: about 3% more at 1%, a third more at 10^-5, 1.21
//     times the bloomlab profile for a chain of 10^6 keys from 1,000 at
//     1% (docs/SCALABLE.md). Choose it for large filters queried often:
//     `bloomlab serve -bf-layout blocked`, BF.RESERVE … LAYOUT BLOCKED.
//
// # Memory
//
// Only the add that opens a link allocates, and what it allocates is known
// before (NextLinkBits). A chain refuses to grow (ErrFull, nothing
// changed) past 2^48 bits per link, 4096 links, or its memory budget:
// Config.MaxBits or SetMaxBits bounds Bits(), and is not stored in files
// (a chain read from a file has none until it is set). Expansion is at
// most MaxExpansion = 32768, as in RedisBloom 8, at construction; a
// bloomlab-profile file recording more loads and answers but does not
// grow. `bloomlab build` and `add` set the budget to the memory the
// process may use (internal/kind.MemoryBudgeter, internal/sysmem.Limit).
//
// # RedisBloom
//
// Besides the RedisBloom profile, what concerns Redis is in a few names:
// NewRedisBloom (BF.RESERVE), RedisInfo (BF.INFO and BF.DEBUG), ScanDump,
// Dump, Loader and LoadChunks (BF.SCANDUMP and BF.LOADCHUNK, their Chunk),
// WriteRedisBloom and ReadRedisBloom (those chunks in a file), and
// WriteRedisBloomRDB and ReadRedisBloomRDB (an RDB file's or DUMP's value
// of module type RDBTypeName).
//
// Dump and ScanDump produce BF.SCANDUMP's chunks — a packed little-endian
// header with one record per link, then each link's bytes, the iterator
// being 1 + the byte offset in the chain — and LoadChunks and Loader take
// them back as BF.LOADCHUNK does; both checked byte for byte against a
// real RedisBloom 2.4.23. A chain of the bloomlab or blocked profile
// dumps the same data chunks after a header of bloomlab's own (magic
// BLOOMLAB-BF1, bldump.go), which RedisBloom's BF.LOADCHUNK refuses and
// Loader takes; WriteRedisBloom and ReadRedisBloom refuse it.
// WriteRedisBloom and ReadRedisBloom frame the chunks in a file
// (docs/SCALABLE.md). Decoders validate the header before
// allocating anything, allocate a link's bits only as its bytes arrive,
// and never panic.
//
// ReadRedisBloomRDB and WriteRedisBloomRDB read and write the chain as
// RedisBloom saves it in an RDB file or a DUMP payload (module type
// MBbloom--, encoding versions 2 to 4 read, 4 written), with the checks
// of the dump's header; only the RedisBloom profile has that layout.
//
// # Cost
//
// Add and Contains hash the key once (one xxh3-128, or two MurmurHash64A
// passes); no allocation, no division and no interface call per probe
// (a blocked link: one multiply-shift for the block, then shifts of H2)
// (positions are reduced with a precomputed reciprocal, hashing.ModSmall
// and hashing.Mod64). Contains tests the links newest first and stops at
// the first that answers: with expansion s the newest link holds a
// fraction (s − 1)/s of the keys, so a present key is found after about
// s/(s − 1) links, where oldest first would test nearly all of them; an
// absent key tests every link either way, each stopping after its first
// batch of four probes that holds a zero (the probes of a batch are loaded
// together and tested with one branch). Add tests every link (to
// count only new keys), then sets k bits in the newest. Only the add that
// opens a link allocates (the link's bits and a new list of links).
//
// # Concurrency
//
// Every method is safe for concurrent use, except ReadFrom and
// UnmarshalBinary, which replace the filter and need it to themselves.
// Contains (and ContainsHash, Digest, N, Capacity, Bits, Links, Config
// and MaxBits) never block and may run alongside anything, including the
// add that opens a link: bits are set and read atomically and the list of
// links is replaced atomically, so a query sees every key whose Add
// returned before the query began. Adds run one at a time (an internal
// mutex), which is what makes "already present" and the counts exact
// under concurrent adds. WriteTo, Dump,
// ScanDump, WriteRedisBloom, WriteRedisBloomRDB, Union, Clone, Equal,
// EstimatedFPR, Stats, RedisInfo, Room and NextLinkBits take the same
// mutex, so they see a state between two adds.
package scalable
