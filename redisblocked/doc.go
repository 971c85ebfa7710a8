// Package redisblocked is a blocked Bloom filter (package blocked: one
// 512-bit block per key) whose blocks live in Redis or Redis Cluster, so
// that many processes on many machines share one filter, as large as the
// servers' memory, on an engine that already replicates and scales. It
// needs no server module: the bits are plain Redis strings, read and
// written with BITFIELD (or a Lua script), which Redis 6.2 and later,
// Valkey and managed Redis offer.
//
// A key's bits are exactly those package blocked sets (blocked.BlockOf,
// blocked.AppendPositions), and a shard's bytes are exactly the bloomlab
// file's payload bytes: a filter built offline with bloomlab build is
// uploaded as it is (Upload), and a shared one is downloaded into a local
// blocked.Filter or file (Download, WriteTo) that answers exactly as the
// shared one does.
//
// # Layout in Redis (docs/REDIS.md)
//
// A filter named NAME is the metadata key NAME, a string
//
//	bloomlab-redis 1 kind=blocked blocks=B k=K seed=S capacity=C n=N shards=S shard-blocks=P gen=G slot=T crc=X
//
// and S shard keys NAME:{TAG}:gG:sI, each a string of the bytes of P
// consecutive blocks (the last shard the rest) followed by a 16-byte
// trailer: the marker "bloomlab" and the shard's add counter. The hash tag
// TAG puts shard I in slot T + ⌊I·16384/S⌋ mod 16384, so that the shards
// spread evenly over a cluster's masters. G, the generation, is chosen at
// random by each upload.
//
// # Guarantee
//
// No false negatives: Add returns nil only once the key's bits are set on
// the server that holds them, and from then on every Contains by any
// client answers true — unless the filter is replaced by an upload or
// deleted, which is the caller's explicit act (keys added while an upload
// replaces the filter are added to the old generation or the new one; an
// add that returns after the switch is in the new one). Whatever goes
// wrong on the way — a node down, a timeout, a MOVED or ASK that cannot be
// followed, a NOSCRIPT that EVAL cannot recover, CLUSTERDOWN, a shard
// retired or missing — is an error to the caller, never an "absent":
// every command that reads bits also reads the shard's marker, so a shard
// that vanished reads as an error, not as zeros. ContainsBatch answers
// the keys it could not query true (and says which they were). Durability
// is Redis's: with appendfsync always, an acknowledged add survives kill
// -9 of the node holding it (tested); with replicas, an add acknowledged
// by a master that fails before its replica has it is lost (asynchronous
// replication).
//
// How soon a node that is down becomes an error is the client's to say:
// go-redis (v9.15 and later) dials 5 times, 100 ms apart, in each attempt
// (DialerRetries, DialerRetryTimeout), and a cluster client makes
// MaxRedirects+1 attempts, so that with its defaults a batch that touches
// a dead master took 3.4 s (a refused connection; an address that does not
// answer costs DialTimeout per dial) instead of 0.1 s. Give the client
// DialerRetries: 1 (go-redis reads 0 as its default, 5) and a DialTimeout
// that suits the network, as bloomlab's command does.
//
// # False positives
//
// As package blocked's: theory.FPBlocked at the number of distinct keys
// added; Info estimates it from the bits the servers count, without
// downloading them.
//
// # Cost
//
// Add and Contains: one round trip, one command on one shard (BITFIELD or
// BITFIELD_RO with k bit subcommands and the marker's; with the Script
// method, one EVALSHA). AddBatch and ContainsBatch: the keys are hashed
// and grouped by shard, one command per shard touched, pipelined: one
// round trip per node (on a cluster, the nodes concurrently), per 4096
// keys. The hot path allocates for go-redis's command and reply objects
// per shard command, never per key or bit. Operations retry where Redis's
// semantics allow (adds are idempotent): MOVED and ASK are followed,
// NOSCRIPT is answered by EVAL, a retired shard makes the client read the
// metadata again and retry on the new generation.
//
// # Concurrency
//
// A Filter is safe for concurrent use, and any number of Filters in any
// number of processes may use one filter. Uploads and Delete are
// serialised by a compare-and-swap of the metadata (ErrChanged for the
// loser). A client re-reads the metadata when it meets a retired shard, and
// every Config.Refresh (default 1 minute) in any case.
package redisblocked
