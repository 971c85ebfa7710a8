// Package server is a Redis-protocol server for bloomlab's filters: it
// speaks RESP2 and RESP3 and answers RedisBloom's BF.*, CF.*, CMS.*,
// TOPK.* and TDIGEST.* commands as RedisBloom 8.6.2 does (or, with
// Config.Dialect Dialect24, `bloomlab serve -dialect 2.4`, as RedisBloom
// 2.4.23 does), byte for byte (the recorded transcripts in testdata
// replay over a socket), so unchanged Redis
// clients (go-redis, redis-cli, redis-py, Jedis…) use it. It also serves
// filters built offline by bloomlab (Config.Load), of any kind. `bloomlab
// serve` is this package behind flags; tests and programs run it
// in-process on a listener (Run, Serve). docs/SERVER.md is the long form:
// commands, differences from RedisBloom, persistence formats, limits.
//
// # Guarantee
//
// No false negatives: a key whose BF.ADD was acknowledged is present for
// every later BF.EXISTS, across snapshots, log rewrites and restarts
// (with AppendFsync Always, across kill -9 too: a write is acknowledged
// only once its log record is on disk). A structure that cannot take a
// key answers an error, never a silent drop; a request the server cannot
// serve (a malformed command, a network failure, memory refused) is an
// error, never an "absent".
//
// # Persistence
//
// With Config.Dir set, every key is kept in a snapshot (every key in
// bloomlab's checksummed file format, written atomically: temporary file,
// fsync, rename, directory fsync) and an append-only log of the writes
// since that snapshot, replayed at start. A torn last log record is
// truncated with a warning; any other damage refuses to start, naming the
// file and offset. Snapshots are taken without stopping writers: values
// are frozen and a writer copies a frozen value before changing it.
//
// # Safety
//
// Input is hostile: the protocol reader (server/internal/resp) bounds every
// length before it allocates, a filter's requested size is checked against
// RedisBloom's ranges and against MaxMemory before it is allocated, and
// files and logs are validated before they are believed. Nothing a client
// sends makes the server panic: the dispatch path is fuzzed (FuzzConn),
// and so is every command with extreme arguments in every position
// (FuzzCommands; TestCommandWalk walks them all in every go test).
//
// # Panics
//
// Should a command panic anyway (a bug), a command that only reads (no
// write flag, not admin, not inside EXEC), or the reading of a command,
// costs only its client: its locks
// are released by defers, the stack is logged, the client gets "ERR
// internal error" and its connection is closed, and the other clients
// are served. A panic in any other command may have left a value or the
// keyspace half changed: the server stops as a crash would (the stack
// logged, exit status 2, no snapshot), holding the command's locks
// until the process is gone so that nobody reads or snapshots the half
// change; the log holds every acknowledged write.
//
// # Concurrency and cost
//
// One goroutine per connection reads pipelined commands and flushes the
// replies once per batch. The keyspace is guarded by a read-write lock
// that readers and single-key writers share (writers then serialise on
// the key itself); commands that create, delete or rename keys take it
// exclusively. Log records of concurrent writers are committed together
// (one write and, with Always, one fsync per group).
package server
