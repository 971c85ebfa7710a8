// Package cuckoo implements the cuckoo filter: partial-key cuckoo hashing
// of f-bit fingerprints in buckets of b slots (Fan, Andersen, Kaminsky,
// Mitzenmacher, "Cuckoo Filter: Practically Better Than Bloom", CoNEXT
// 2014; cited as CF §n), a filter that deletes, counts and grows, and at
// equal memory has a lower false-positive rate than a Bloom filter from
// about 13 bits per key (ε ≈ 0.2%; semi-sorted from about 9, ε ≈ 1.5%),
// with a profile that is bit for bit RedisBloom's CF.* filter.
// docs/CUCKOO.md is the long form.
//
// # Structure
//
// A key hashes once to (H1, H2). Its fingerprint fp is H2 mapped to
// [1, 2^f − 1] (0 marks an empty slot); its first bucket i1 is H1 mapped
// to [0, m) by multiply-shift; its second is i2 = i1 ⊕ h(fp), which
// depends only on i1 and the fingerprint, so an entry can move between
// its two buckets without the key (CF §3). Contains reads the 2b slots of
// the two buckets. Add puts fp in a free slot of either bucket; when both
// are full it moves a random entry of one to that entry's other bucket,
// and so on, up to MaxKicks relocations (500 by default, CF §3 Algorithm
// 1). Delete removes one copy of fp from the key's buckets; Count counts
// them.
//
// # Guarantee
//
// No false negatives under any sequence of Add, AddUnique, Delete, Merge,
// Compact, dump and load, provided only keys that were added are deleted
// (as often as they were added at most). An insert that finds no free
// slot within the relocation budget undoes every relocation, in reverse
// order, so the table is exactly as before; the filter then grows by a
// sub-filter if it may (Config.Expansion), and otherwise Add returns an
// error wrapping ErrFull. No fingerprint is ever dropped. (Other
// implementations keep the last evicted fingerprint out of the table on a
// failed insert, losing a key that was added earlier.) Deleting a key
// that was never added is the caller's mistake to avoid, as with counting
// Bloom filters: if it is a false positive, the fingerprint it removes
// belongs to another key, which can become a false negative.
//
// # False positives
//
// A query for an absent key compares its fingerprint with the entries of
// two buckets; each matches with probability 1/(2^f − 1), so at load
// factor α the rate is about 1 − (1 − α/(2^f − 1))^{2b} ≈ 2bα/2^f
// (theory.FPCuckoo; full-table bound theory.FPCuckooBound, CF §5.1).
// EstimatedFPR computes the exact rate of the filter's state for a random
// absent key. With b = 4 a table takes about 95% of its slots before the
// first insert fails (theory.LoadCuckoo; 96% measured here), so a filter
// needs about (log2(1/ε) + 3)/0.95 bits per key (semi-sorted + 2), fewer
// than a Bloom filter's 1.44·log2(1/ε) once the fingerprints are long
// enough (CF §5.1 puts the crossing near 3% for semi-sorted buckets at 95%
// load; integral fingerprints at the 93% design load put it at 0.2%, 1.5%
// semi-sorted: docs/CUCKOO.md).
//
// Semi-sorting (Config.Semisort, b = 4, CF §5.2) keeps each bucket's four
// fingerprints sorted and stores their four 4-bit prefixes as one of the
// 3876 sorted multisets, in 12 bits instead of 16: 4f − 4 bits per bucket
// for the same rate, one bit per entry less, at the price of slower
// operations. 002's semi-sorting (package dleft) does the same job for
// d-left buckets with 1 or 2 prefix bits counted in the bucket's counter
// field; docs/CUCKOO.md compares the two.
//
// # Sizing
//
// NewWithEstimates (its Plan: PlanFPR) and NewWithBitsPerKey size a table
// for n keys at a design load (93% for b = 4, a margin below where inserts
// start to fail) and choose the shortest fingerprint meeting the rate, or
// the longest the bit budget affords; a Plan is computed without
// allocating. Bucket counts are powers of two, or, for tables of 24,576
// buckets or more, c·2^j with c odd up to 31 and 2^j ≥ 8192 (at most 1/16
// above the need for a million keys or more). The second bucket flips
// only the low j bits of the first, so the index rule needs no division,
// and sub-filters of a growing filter nest (a key's buckets in an older
// sub-filter are its buckets in a newer one shifted right).
//
// # Growing
//
// With Config.Expansion E (a power of two) a filter that cannot place a key
// adds a sub-filter of E^i times the first one's buckets and puts the key
// there, as RedisBloom's CF filters do. Contains and Count look at every
// sub-filter; Delete removes from the newest sub-filter that holds the
// fingerprint in the key's buckets, which is sound because sub-filters nest
// (docs/CUCKOO.md). Each sub-filter adds its own rate to the filter's.
// Compact moves entries back into older sub-filters and frees emptied
// newest ones.
//
// Every copy of a key takes a slot (as CF.ADD's do), so copies of one key
// force a growth every 2b copies whatever the capacity: with E = 2 the
// tables double every 2b copies. A growing filter's tables are therefore
// bounded by a memory budget (Config.MaxBits, SetMaxBits,
// kind.MemoryBudgeter): an add that would grow them past it fails with an
// error wrapping ErrCannotGrow (and ErrFull) and changes nothing. A filter
// given none has the default (Info.DefaultMaxBits): 1024 times its first
// sub-filter's bits or 2^30 bits (128 MiB), whichever is larger, but at
// most half the memory the process may use, so that a program that sets
// nothing gets an error, not a fatal out-of-memory; NoMaxBits (or
// SetMaxBits(0)) removes it. The budget is not stored in files. Growth is
// also bounded by 2^48 bits per sub-filter and 65535 sub-filters. A caller
// that accounts for memory itself adds with AddHashReserve, which asks it
// before a growth allocates. AddUnique adds a key only if it is not
// already reported present.
//
// # Profiles
//
//   - Bloomlab (the default): xxh3-128 with the filter's seed; b = 1, 2, 4
//     or 8; f = 4 … 32 bits packed; semi-sorting optional;
//     500 relocations by default; a seed.
//   - RedisBloom: bit for bit what RedisBloom 2.4 stores and answers: the
//     hash MurmurHash64A(key, 0), fingerprint h mod 255 + 1 in a byte,
//     buckets h and h ⊕ fp·0x5bd1e995 modulo a power of two, b = 1 … 255
//     (default 2), MAXITERATIONS (default 20) relocations in RedisBloom's
//     order, sub-filters on EXPANSION, its automatic compaction on delete,
//     CF.COUNT's and CF.INFO's numbers. Checked against the
//     recorded transcripts of a RedisBloom 2.4.23 server and against
//     RedisBloom's own C code (testdata). Its deviations, none of which
//     changes a reply of the transcripts, are in docs/CUCKOO.md.
//
// # RedisBloom's formats
//
// A RedisBloom-profile filter is made by NewRedisBloom (CF.RESERVE), or by
// New with Config.Profile RedisBloom. Its RedisBloom forms:
//
//   - CF.SCANDUMP: ScanDump (one call) or Dump (every Chunk, an empty
//     filter's too); CF.LOADCHUNK: a Loader fed those chunks.
//   - A Redis RDB file or DUMP payload (module type MBbloomCF, encoding
//     version 4): ReadRedisBloomRDB, WriteRedisBloomRDB (package rdb).
//   - A file of CF.SCANDUMP chunks (BLRD framing, docs/CUCKOO.md):
//     WriteRedisBloom (bloomlab import -format redisbloom reads it).
//   - CF.INFO's fields: Info (Size, Buckets, SubFilters, N, Deletes,
//     BucketSize, Expansion, MaxKicks).
//
// The bloomlab profile has none of them (its file format is WriteTo's).
//
// # Cost
//
// Contains, Add (without relocations), Delete and Count hash the key once
// and read two buckets per sub-filter; they allocate nothing and do no
// division: indices are multiply-shift and masks, and a bucket of up to 64
// bits is compared with one unaligned load and a few word operations
// (SWAR), both buckets without a branch between them. A relocation walk
// reads and writes one bucket per step; the first walk allocates a
// scratch of 8 bytes per MaxKicks once. Only growth allocates after that.
//
// # Concurrency
//
// Read methods (Contains, Count, EstimatedFPR, Info, WriteTo, Dump,
// ScanDump, WriteRedisBloomRDB, Clone, Equal, …) may run concurrently with
// each other. Add, AddUnique, Delete, Remove, Merge, Compact, Clear,
// SetMaxBits, ReadFrom and UnmarshalBinary need the filter to themselves.
//
// The zero Filter is an empty filter with no room (docs/API.md).
package cuckoo
