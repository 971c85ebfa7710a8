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
// at its capacity, or a chain whose next link would exceed 2^48 bits, 64
// hash functions (bloomlab profile) or MaxLinks links — returns an error
// wrapping ErrFull and changes nothing; it never drops a key.
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
// link's capacity; the rate of one particular filter, computed from its
// bits by EstimatedFPR, scatters around it by a few percent (its small
// first links are the noisiest). A non-scaling filter (Config.NonScaling,
// RedisBloom's NONSCALING) is one link at rate ε that refuses new keys past
// its capacity. The price of not knowing n is memory: holding n keys, a
// chain started at n0 takes about theory.OverheadScalable times the bits of
// a filter sized for n (2.4× at 10^6 keys, 4.8× at 10^7 from 1,000 at 1%).
//
// # Counting
//
// Add first checks every link; a key that is already present (or a false
// positive) changes nothing and is not counted. N (also Card) counts the
// adds that were new, exactly as RedisBloom's "Number of items inserted"
// and BF.CARD do, and each link's count decides when it is full.
// Add reports which case happened, as BF.ADD's 1 or 0 does.
//
// # Profiles
//
// A chain hashes and lays out its links in one of two profiles:
//
//   - Bloomlab (the default): xxh3-128 with the filter's seed, hashed once
//     per key; each link a standard filter with enhanced double hashing
//     (hashing.Enhanced), sized exactly by theory.Size for its capacity and
//     rate (so at capacity its rate is at most its share ε0·r^i), bits
//     rounded up to 64; any ratio in (0, 1). Choose it for Go programs that
//     do not exchange filters with Redis: faster hashing, a seed, exact
//     sizing, any ratio.
//   - RedisBloom: bit for bit what RedisBloom 2.x stores, so that a filter
//     built here loads into Redis (BF.LOADCHUNK) and one dumped from Redis
//     (BF.SCANDUMP) is queried and grown here with identical answers: the
//     two MurmurHash64A hashes (hashing.RedisBloomHash), positions
//     (a + i·b) mod bits in wrapping 64-bit arithmetic, bit j of a link in
//     byte j/8 at bit j mod 8, ⌊entries·bpe⌋ bits with bpe = −ln ε_i/ln²2
//     rounded up to a multiple of 64, k = ⌈0.693147180559945·bpe⌉, the
//     first link at ε/2 (ε for NONSCALING), each next link at half the
//     previous rate and the previous link's entries times the expansion.
//     Choose it when the filter goes to or comes from Redis.
//
// # RedisBloom dumps
//
// Dump and ScanDump produce BF.SCANDUMP's chunks — a packed little-endian
// header with one record per link, then each link's bytes, the iterator
// being 1 + the byte offset in the chain — and LoadChunks and Loader take
// them back as BF.LOADCHUNK does; both checked byte for byte against a
// real RedisBloom 2.4.23. WriteRedisBloom and ReadRedisBloom frame the
// chunks in a file (docs/SCALABLE.md). Decoders validate the header before
// allocating anything, allocate a link's bits only as its bytes arrive,
// and never panic.
//
// # Cost
//
// Add and Contains hash the key once (one xxh3-128, or two MurmurHash64A
// passes); no allocation, no division and no interface call per probe
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
// Contains (and ContainsHash,
// Digest, N, Card, Capacity, Bits, Links) never block and may run alongside
// anything, including the add that opens a link: bits are set and read
// atomically and the list of links is replaced atomically, so a query sees
// every key whose Add returned before the query began. Add and Add
// run one at a time (an internal mutex), which is what makes "already
// present" and the counts exact under concurrent adds. WriteTo, Dump,
// ScanDump, Union, Clone, Equal, EstimatedFPR, LinkStats and the other
// statistics take the same mutex, so they see a state between two adds.
package scalable
