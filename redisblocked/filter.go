package redisblocked

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bloomlab/bloomlab/blocked"
	"github.com/bloomlab/bloomlab/hashing"
	"github.com/redis/go-redis/v9"
)

// Method is how an operation runs on the server. Both give the same
// answers and touch the same bits; they differ in speed (docs/REDIS.md has
// the measurements) and in what the server must allow.
type Method int

const (
	// Bitfield (the default, the faster): the client computes the bit
	// offsets and sends one BITFIELD (add) or BITFIELD_RO (query) per
	// shard, whose first subcommand reads the shard's marker, so that a
	// retired or missing shard is detected in the same command.
	Bitfield Method = iota
	// Script: the same offsets are sent to a Lua script (loaded once, run
	// by EVALSHA, sent again with EVAL after a NOSCRIPT) that checks the
	// marker before it touches anything and answers one character per
	// key.
	Script
)

func (m Method) String() string {
	switch m {
	case Bitfield:
		return "bitfield"
	case Script:
		return "script"
	}
	return fmt.Sprintf("Method(%d)", int(m))
}

// ParseMethod returns the Method named s ("bitfield" or "script").
func ParseMethod(s string) (Method, error) {
	switch strings.ToLower(s) {
	case "bitfield", "":
		return Bitfield, nil
	case "script":
		return Script, nil
	}
	return 0, fmt.Errorf("redisblocked: method %q, want bitfield or script: %w", s, ErrParam)
}

// Config configures a Filter. The zero Config is the default; Open and
// Upload take nil for it.
type Config struct {
	// Method: Bitfield (default) or Script.
	Method Method
	// Refresh: metadata older than this is read again before the next
	// operation, so that a client learns of a new generation even if it
	// never meets a retired shard (default 1 minute; at most
	// TombstoneTTL/2).
	Refresh time.Duration

	// Upload only.

	// Replace: an upload onto an existing bloomlab filter replaces it
	// (default: it fails with ErrExists). A key holding anything else is
	// never replaced.
	Replace bool
	// Shards: the number of shard keys (0: PlanShards chooses from the
	// filter's size and the number of masters).
	Shards int
	// MaxShardBytes: the largest shard string when Shards is 0 (0:
	// DefaultShardBytes; at most MaxShardBytes).
	MaxShardBytes int64
}

func (c *Config) withDefaults() (Config, error) {
	var d Config
	if c != nil {
		d = *c
	}
	if d.Method != Bitfield && d.Method != Script {
		return d, fmt.Errorf("redisblocked: %v: %w", d.Method, ErrParam)
	}
	if d.Refresh == 0 {
		d.Refresh = time.Minute
	}
	if d.Refresh < 0 || d.Refresh > TombstoneTTL/2 {
		return d, fmt.Errorf("redisblocked: Refresh %v out of range (0, %v]: %w", d.Refresh, TombstoneTTL/2, ErrParam)
	}
	return d, nil
}

// Filter is a blocked Bloom filter whose blocks live in Redis (see the
// package doc). It is safe for concurrent use by many goroutines, and any
// number of Filters, in any number of processes, may use one filter.
type Filter struct {
	c    redis.UniversalClient
	name string
	cfg  Config
	cur  atomic.Pointer[layout]
	mu   sync.Mutex // serialises metadata reloads
	pool sync.Pool  // *batch
}

// Open returns the filter named name (its metadata key) on the server or
// cluster c. The metadata is read and validated: a key that is missing is
// an error wrapping ErrNotFound, one that holds anything but a bloomlab
// filter of this layout one wrapping ErrNotFilter (ErrVersion for another
// layout version).
func Open(ctx context.Context, c redis.UniversalClient, name string, cfg *Config) (*Filter, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	d, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	m, raw, err := readMeta(ctx, c, name)
	if err != nil {
		return nil, err
	}
	f := &Filter{c: c, name: name, cfg: d}
	f.cur.Store(newLayout(name, raw, m))
	return f, nil
}

// readMeta reads and validates name's metadata, reading at most maxMeta
// bytes whatever the key holds.
func readMeta(ctx context.Context, c redis.UniversalClient, name string) (*meta, string, error) {
	v, err := c.GetRange(ctx, name, 0, maxMeta-1).Result()
	if err != nil {
		if isWrongType(err) {
			if t, terr := c.Type(ctx, name).Result(); terr == nil {
				hint := ""
				if t == "MBbloom--" {
					hint = " (a RedisBloom filter: bloomlab redis pull -key moves those)"
				}
				return nil, "", fmt.Errorf("redisblocked: key %q holds a %s, not a bloomlab filter%s: %w", name, t, hint, ErrNotFilter)
			}
		}
		return nil, "", fmt.Errorf("redisblocked: reading the metadata %q: %w", name, err)
	}
	if v == "" {
		n, err := c.Exists(ctx, name).Result()
		if err != nil {
			return nil, "", fmt.Errorf("redisblocked: reading the metadata %q: %w", name, err)
		}
		if n == 0 {
			return nil, "", fmt.Errorf("redisblocked: no key %q: %w", name, ErrNotFound)
		}
	}
	m, err := decodeMeta(name, v)
	if err != nil {
		return nil, "", err
	}
	return m, v, nil
}

func isWrongType(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && strings.HasPrefix(re.Error(), "WRONGTYPE")
}

func isNoScript(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && strings.HasPrefix(re.Error(), "NOSCRIPT")
}

// errRetired marks an operation that met a retired or missing shard; the
// caller re-reads the metadata and retries.
type retiredError struct{ cause string }

func (e *retiredError) Error() string { return e.cause }

func retired(format string, args ...any) error { return &retiredError{fmt.Sprintf(format, args...)} }

// classify turns a command's error into a retired shard (retry after
// re-reading the metadata) or leaves it.
func classify(err error) error {
	var re redis.Error
	if errors.As(err, &re) && (strings.HasPrefix(re.Error(), "WRONGTYPE") || strings.HasPrefix(re.Error(), "BLOOMLABRETIRED")) {
		return &retiredError{re.Error()}
	}
	return err
}

// Name returns the filter's name: its metadata key.
func (f *Filter) Name() string { return f.name }

// Kind returns "blocked".
func (f *Filter) Kind() string { return "blocked" }

// The accessors below describe the generation the Filter last read.

// Blocks returns the number of 512-bit blocks.
func (f *Filter) Blocks() uint64 { return f.cur.Load().blocks }

// M returns the number of bits: 512·Blocks.
func (f *Filter) M() uint64 { return f.cur.Load().blocks * blocked.BlockBits }

// K returns the number of bits set per key.
func (f *Filter) K() int { return f.cur.Load().k }

// Seed returns the seed of the base hash.
func (f *Filter) Seed() uint64 { return f.cur.Load().seed }

// Capacity returns the number of keys the filter was designed for (0 if
// unknown).
func (f *Filter) Capacity() uint64 { return f.cur.Load().capacity }

// Generation returns the generation: a random non-zero number chosen by
// the upload that wrote the shards.
func (f *Filter) Generation() uint64 { return f.cur.Load().gen }

// Plan returns the shard plan of the generation.
func (f *Filter) Plan() Plan {
	l := f.cur.Load()
	return Plan{Blocks: l.blocks, Shards: l.shards, ShardBlocks: l.shardBlocks, ShardBytes: l.shardBlocks*blockBytes + trailerLen}
}

// ShardKeys returns the keys of the generation's shards, in order.
func (f *Filter) ShardKeys() []string { return slices.Clone(f.cur.Load().keys) }

// current returns the layout to use: the cached one, read again first when
// it is older than Config.Refresh. A failed re-read keeps the cached one
// (every operation checks its shards' markers anyway) and is tried again
// after another Refresh.
func (f *Filter) current(ctx context.Context) *layout {
	l := f.cur.Load()
	if time.Since(l.read) < f.cfg.Refresh || !f.mu.TryLock() {
		return l
	}
	defer f.mu.Unlock()
	if l = f.cur.Load(); time.Since(l.read) < f.cfg.Refresh {
		return l
	}
	nl, err := f.reload(ctx, l)
	if err != nil {
		c := *l
		c.read = time.Now()
		f.cur.Store(&c)
		return &c
	}
	return nl
}

// reload reads the metadata again and installs what it names. f.mu is
// held.
func (f *Filter) reload(ctx context.Context, old *layout) (*layout, error) {
	m, raw, err := readMeta(ctx, f.c, f.name)
	if err != nil {
		return nil, err
	}
	var l *layout
	if raw == old.raw {
		c := *old
		c.read = time.Now()
		l = &c
	} else {
		l = newLayout(f.name, raw, m)
	}
	f.cur.Store(l)
	return l, nil
}

// maxRetiredWaits bounds the retries of an operation that keeps meeting a
// retired shard of the generation the metadata still names (an upload
// between retiring the old generation and switching the metadata takes
// milliseconds): the waits total about 1.6 s. A variable for tests.
var maxRetiredWaits = 8

// afterRetired is called when an operation on layout l met a retired or
// missing shard. It re-reads the metadata: a new generation means retry
// now; the same one, retry after a wait, up to maxRetiredWaits times, then
// give up with ErrRetired.
func (f *Filter) afterRetired(ctx context.Context, l *layout, attempt int, cause error) error {
	f.mu.Lock()
	cur := f.cur.Load()
	if cur.gen != l.gen {
		f.mu.Unlock()
		return nil // reloaded meanwhile
	}
	nl, err := f.reload(ctx, cur)
	f.mu.Unlock()
	if err != nil {
		return fmt.Errorf("redisblocked: %s: %v; reading the metadata again: %w", f.name, cause, err)
	}
	if nl.gen != l.gen {
		return nil
	}
	if attempt >= maxRetiredWaits {
		return fmt.Errorf("redisblocked: %s: %v, and the metadata still names generation %016x (an upload interrupted, or shard keys deleted or evicted; run the upload again): %w", f.name, cause, l.gen, ErrRetired)
	}
	t := time.NewTimer(min(10*time.Millisecond<<attempt, 500*time.Millisecond))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return fmt.Errorf("redisblocked: %s: %v: %w", f.name, cause, ctx.Err())
	case <-t.C:
	}
	return nil
}

// Boxed constant arguments: converting them to interfaces once keeps the
// hot path free of allocations.
var (
	argBitfield   any = "bitfield"
	argBitfieldRO any = "bitfield_ro"
	argEvalSHA    any = "evalsha"
	argEval       any = "eval"
	argOne        any = "1"
	argGet        any = "GET"
	argSet        any = "SET"
	argIncrBy     any = "INCRBY"
	argOverflow   any = "OVERFLOW"
	argSat        any = "SAT"
	argI64        any = "i64"
	argU1         any = "u1"
	argAddSHA     any = addSHA
	argContSHA    any = containsSHA
	argAddBody    any = addScript
	argContBody   any = containsScript
)

// batch is the scratch state of one operation, reused through f.pool.
type batch struct {
	pos    []uint16
	offs   []uint64 // k bit offsets per key, in key order
	sk     []uint64 // shard<<32 | index, sorted by shard
	counts []uint64 // keys per command (the counter's increment)
	kArg   uint64
	args   []any
	cmds   []redis.Cmder
	shard  []int // shard of each command
	span   []int // first sk index of each command; one more entry at the end
	failed []int // indices of failed keys
	again  []int // indices to retry after a retired shard
	ferr   error
	cspan  []int // first b.cmds index of each shard's commands; one more entry at the end
	// GETRANGE commands, reused from batch to batch for keys of the slot
	// they were made for (see ranges); rangeN counts them, rangeUsed lists
	// the slots the current attempt took commands from.
	ranges    map[int]*slotRanges
	rangeN    int
	rangeUsed []*slotRanges
}

// rangeCmd is a reusable GETRANGE of one block: its arguments point at its
// own fields, so that a batch sets them instead of making a command per
// key (go-redis then allocates only the reply).
type rangeCmd struct {
	cmd        *redis.StringCmd
	args       [4]any
	start, end uint64
}

// slotRanges are the GETRANGE commands made for the shard keys of one
// cluster slot; the current attempt has taken the first used.
type slotRanges struct {
	cmds []*rangeCmd
	used int
}

// maxRanges bounds the GETRANGE commands a batch keeps for reuse: past it,
// they are dropped at the next chunk.
const maxRanges = 2 * maxBatch

func (f *Filter) getBatch() *batch {
	if b, ok := f.pool.Get().(*batch); ok {
		return b
	}
	return &batch{}
}

func (f *Filter) putBatch(b *batch) {
	clear(b.args) // drop references to keys and offsets
	clear(b.cmds)
	b.args, b.cmds = b.args[:0], b.cmds[:0]
	b.ferr = nil
	f.pool.Put(b)
}

// maxBatch is the most keys one pipeline carries; larger batches are
// split.
const maxBatch = 4096

// keyRef is a key as []byte or string, hashed without conversion.
type keyRef struct {
	b     []byte
	s     string
	isStr bool
}

func (r keyRef) digest(seed uint64) hashing.Digest {
	if r.isStr {
		return hashing.SumString(r.s, seed)
	}
	return hashing.Sum(r.b, seed)
}

// Add adds key. It returns nil only once the key's bits are set on the
// server: every later Contains, by any client, answers true. One round
// trip: one BITFIELD (or EVALSHA) on the key's shard.
func (f *Filter) Add(ctx context.Context, key []byte) error { return f.one(ctx, keyRef{b: key}, nil) }

// AddString is Add for a string key.
func (f *Filter) AddString(ctx context.Context, key string) error {
	return f.one(ctx, keyRef{s: key, isStr: true}, nil)
}

// Contains reports whether key may have been added: false means certainly
// not. An error (a node down, a timeout, a retired shard that stays
// retired) is never reported as false. One round trip: one BITFIELD_RO
// (or EVALSHA).
func (f *Filter) Contains(ctx context.Context, key []byte) (bool, error) {
	var present bool
	err := f.one(ctx, keyRef{b: key}, &present)
	return present, err
}

// ContainsString is Contains for a string key.
func (f *Filter) ContainsString(ctx context.Context, key string) (bool, error) {
	var present bool
	err := f.one(ctx, keyRef{s: key, isStr: true}, &present)
	return present, err
}

// one runs a single add (present == nil) or query.
func (f *Filter) one(ctx context.Context, key keyRef, present *bool) error {
	b := f.getBatch()
	defer f.putBatch(b)
	for attempt := 0; ; attempt++ {
		l := f.current(ctx)
		s := 0
		s, b.pos, b.offs = l.locate(key.digest(l.seed), b.pos, b.offs[:0])
		b.sk = append(b.sk[:0], uint64(s)<<32)
		b.counts = append(b.counts[:0], 1)
		b.shard = append(b.shard[:0], s)
		b.span = append(b.span[:0], 0, 1)
		b.args = b.args[:0]
		b.kArg = uint64(l.k)
		cmd := f.command(ctx, b, l, 0, present == nil)
		err := f.c.Process(ctx, cmd)
		if err != nil && f.cfg.Method == Script && isNoScript(err) {
			cmd = f.evalInstead(ctx, cmd)
			err = f.c.Process(ctx, cmd)
		}
		if err == nil {
			err = f.reply(ctx, b, l, 0, cmd, func(_ int, v bool) {
				if present != nil {
					*present = v
				}
			})
		} else {
			err = classify(err)
		}
		var re *retiredError
		if !errors.As(err, &re) {
			if err != nil {
				return fmt.Errorf("redisblocked: %s: %w", f.name, err)
			}
			return nil
		}
		if err := f.afterRetired(ctx, l, attempt, err); err != nil {
			return err
		}
	}
}

// command builds the command of b's command c (its shard b.shard[c], its
// keys b.sk[b.span[c]:b.span[c+1]]): an add or a query, by f's method.
// Its arguments point into b and l, which must not change until the
// command has run.
func (f *Filter) command(ctx context.Context, b *batch, l *layout, c int, add bool) redis.Cmder {
	s := b.shard[c]
	keys := b.sk[b.span[c]:b.span[c+1]]
	k := l.k
	start := len(b.args)
	if f.cfg.Method == Script {
		sha := argContSHA
		if add {
			sha = argAddSHA
		}
		b.args = append(b.args, argEvalSHA, sha, argOne, l.keyArgs[s], &l.dataBytes[s])
		if add {
			b.args = append(b.args, &b.counts[c])
		} else {
			b.args = append(b.args, &b.kArg)
		}
		for _, e := range keys {
			i := int(uint32(e))
			for j := range k {
				b.args = append(b.args, &b.offs[i*k+j])
			}
		}
		args := b.args[start:len(b.args):len(b.args)]
		if add {
			return redis.NewCmd(ctx, args...)
		}
		return redis.NewStringCmd(ctx, args...)
	}
	if add {
		b.args = append(b.args, argBitfield, l.keyArgs[s], argGet, argI64, &l.markerOff[s], argOverflow, argSat, argIncrBy, argI64, &l.countOff[s], &b.counts[c])
		for _, e := range keys {
			i := int(uint32(e))
			for j := range k {
				b.args = append(b.args, argSet, argU1, &b.offs[i*k+j], argOne)
			}
		}
	} else {
		b.args = append(b.args, argBitfieldRO, l.keyArgs[s], argGet, argI64, &l.markerOff[s])
		for _, e := range keys {
			i := int(uint32(e))
			for j := range k {
				b.args = append(b.args, argGet, argU1, &b.offs[i*k+j])
			}
		}
	}
	return redis.NewIntSliceCmd(ctx, b.args[start:len(b.args):len(b.args)]...)
}

// evalInstead returns cmd (an EVALSHA that met NOSCRIPT: the server lost
// its script cache, after a restart or a failover) as an EVAL of the
// script's body, which also loads it for the next EVALSHA.
func (f *Filter) evalInstead(ctx context.Context, cmd redis.Cmder) redis.Cmder {
	args := slices.Clone(cmd.Args())
	args[0] = argEval
	if args[1] == argAddSHA {
		args[1] = argAddBody
		return redis.NewCmd(ctx, args...)
	}
	args[1] = argContBody
	return redis.NewStringCmd(ctx, args...)
}

// reply checks the reply of command c and reports each query answer with
// set(index, present). A shard without its marker is a retired shard.
func (f *Filter) reply(ctx context.Context, b *batch, l *layout, c int, cmd redis.Cmder, set func(i int, present bool)) error {
	s := b.shard[c]
	keys := b.sk[b.span[c]:b.span[c+1]]
	k := l.k
	switch cmd := cmd.(type) {
	case *redis.IntSliceCmd: // BITFIELD / BITFIELD_RO
		v := cmd.Val()
		if len(v) == 0 || v[0] != markerValue {
			if len(v) > 0 && v[0] == 0 && cmd.Args()[0] == argBitfield {
				f.dropGarbage(ctx, l, s)
			}
			return retired("shard %s has no marker", l.keys[s])
		}
		if cmd.Args()[0] == argBitfield {
			return nil
		}
		if len(v) != 1+len(keys)*k {
			return fmt.Errorf("BITFIELD_RO %s answered %d values, want %d", l.keys[s], len(v), 1+len(keys)*k)
		}
		v = v[1:]
		for x, e := range keys {
			all := int64(1)
			for _, bit := range v[x*k : x*k+k] {
				all &= bit
			}
			set(int(uint32(e)), all == 1)
		}
	case *redis.StringCmd: // the query script
		v := cmd.Val()
		if len(v) != len(keys) {
			return fmt.Errorf("the query script on %s answered %d results, want %d", l.keys[s], len(v), len(keys))
		}
		for x, e := range keys {
			set(int(uint32(e)), v[x] == '1')
		}
	}
	return nil
}

// dropGarbage deletes shard s's key if it is a string without the marker:
// what a BITFIELD add makes of a shard key that no longer exists (it
// creates the string before it can see the marker is missing). The key
// belongs to a retired generation that nobody writes legitimately; the
// check and the delete are one transaction, so a tombstone or a live shard
// is never deleted.
func (f *Filter) dropGarbage(ctx context.Context, l *layout, s int) {
	key := l.keys[s]
	_ = f.c.Watch(ctx, func(tx *redis.Tx) error {
		t, err := tx.Type(ctx, key).Result()
		if err != nil || t != "string" {
			return err
		}
		cmd := redis.NewIntSliceCmd(ctx, "bitfield_ro", key, "GET", "i64", l.markerOff[s])
		_ = tx.Process(ctx, cmd)
		v, err := cmd.Result()
		if err != nil || len(v) != 1 || v[0] == markerValue {
			return err
		}
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error { return p.Del(ctx, key).Err() })
		return err
	}, key)
}

// AddBatch adds every key. The keys are grouped by shard, one command per
// shard, and the commands pipelined: one round trip per node (per 4096
// keys). If some keys fail (their node down, a timeout), it returns a
// *BatchError listing them; every other key is added.
func (f *Filter) AddBatch(ctx context.Context, keys [][]byte) error {
	_, err := f.batchOp(ctx, keys, nil, true)
	return err
}

// ContainsBatch answers Contains for every key into out (reused when its
// capacity allows) and returns out[:len(keys)]. The keys are grouped by
// shard and pipelined as AddBatch's are. If some keys' queries fail, it
// returns a *BatchError listing them, and answers them true (may be
// present), never false.
func (f *Filter) ContainsBatch(ctx context.Context, keys [][]byte, out []bool) ([]bool, error) {
	if cap(out) < len(keys) {
		out = make([]bool, len(keys))
	}
	out = out[:len(keys)]
	return f.batchOp(ctx, keys, out, false)
}

func (f *Filter) batchOp(ctx context.Context, keys [][]byte, out []bool, add bool) ([]bool, error) {
	b := f.getBatch()
	defer f.putBatch(b)
	b.failed = b.failed[:0]
	for start := 0; start < len(keys); start += maxBatch {
		f.chunk(ctx, b, keys, start, min(start+maxBatch, len(keys)), out, add)
	}
	if len(b.failed) == 0 {
		return out, nil
	}
	slices.Sort(b.failed)
	return out, &BatchError{Failed: slices.Clone(b.failed), Err: b.ferr}
}

// chunk runs keys[lo:hi] (at most maxBatch), retrying the keys of retired
// shards under the new generation.
func (f *Filter) chunk(ctx context.Context, b *batch, keys [][]byte, lo, hi int, out []bool, add bool) {
	b.again = b.again[:0]
	for i := lo; i < hi; i++ {
		b.again = append(b.again, i)
	}
	for attempt := 0; len(b.again) > 0; attempt++ {
		l := f.current(ctx)
		// Locate every key, then sort them by shard.
		b.offs, b.sk = b.offs[:0], b.sk[:0]
		for x, i := range b.again {
			var s int
			s, b.pos, b.offs = l.locate(hashing.Sum(keys[i], l.seed), b.pos, b.offs)
			b.sk = append(b.sk, uint64(s)<<32|uint64(x))
		}
		slices.Sort(b.sk)
		b.shard, b.span, b.counts = b.shard[:0], b.span[:0], b.counts[:0]
		for j, e := range b.sk {
			if j == 0 || e>>32 != b.sk[j-1]>>32 {
				b.shard = append(b.shard, int(e>>32))
				b.span = append(b.span, j)
			}
		}
		b.span = append(b.span, len(b.sk))
		for c := range b.shard {
			b.counts = append(b.counts, uint64(b.span[c+1]-b.span[c]))
		}
		b.kArg = uint64(l.k)
		b.args, b.cmds, b.cspan = b.args[:0], b.cmds[:0], b.cspan[:0]
		for _, r := range b.rangeUsed {
			r.used = 0
		}
		b.rangeUsed = b.rangeUsed[:0]
		if b.rangeN > maxRanges {
			b.ranges, b.rangeN = nil, 0
		}
		for c := range b.shard {
			b.cspan = append(b.cspan, len(b.cmds))
			if !add && f.cfg.Method == Bitfield {
				f.ranges(ctx, b, l, c)
			} else {
				b.cmds = append(b.cmds, f.command(ctx, b, l, c, add))
			}
		}
		b.cspan = append(b.cspan, len(b.cmds))
		f.run(ctx, b.cmds)
		// Results: answers, failures, and the keys of retired shards.
		var retry []int
		var cause error
		for c := range b.shard {
			set := func(x int, v bool) { out[b.again[x]] = v }
			var err error
			if cmds := b.cmds[b.cspan[c]:b.cspan[c+1]]; len(cmds) == 1 {
				if err = cmds[0].Err(); err == nil {
					err = f.reply(ctx, b, l, c, cmds[0], set)
				} else {
					err = classify(err)
				}
			} else {
				err = f.rangeReply(b, l, c, cmds, set)
			}
			if err == nil {
				continue
			}
			var re *retiredError
			for _, e := range b.sk[b.span[c]:b.span[c+1]] {
				i := b.again[int(uint32(e))]
				if errors.As(err, &re) {
					retry = append(retry, i)
				} else {
					f.fail(b, out, i, fmt.Errorf("redisblocked: %s: shard %s: %w", f.name, l.keys[b.shard[c]], err))
				}
			}
			cause = err
		}
		clear(b.args)
		if len(retry) == 0 {
			return
		}
		if err := f.afterRetired(ctx, l, attempt, cause); err != nil {
			for _, i := range retry {
				f.fail(b, out, i, err)
			}
			return
		}
		b.again = append(b.again[:0], retry...)
	}
}

// ranges queues the queries of shard command c's keys as one GETRANGE of
// each key's block, then a read of the shard's marker: a batch query costs
// the server about four times less than a BITFIELD_RO of k bits per key
// (Redis spends most of a command's time on its arguments: 4 per key here,
// 3k there). The marker is read after the blocks on the same connection
// (a redirection moves a shard's commands together, in order), so a block
// read from a string that is not a live shard — a zero string a stale add
// made of a deleted shard — is caught, never taken for zeros.
//
// A GETRANGE command is reused only for keys of the cluster slot it was
// first made for: go-redis (since v9.22) computes a command's slot once, at
// its first routing by a cluster client, and keeps it. A command reused for
// another slot's key went to the node of its first key, was answered MOVED
// and sent again after the marker (two round trips per node, and the
// marker no longer read after the blocks).
func (f *Filter) ranges(ctx context.Context, b *batch, l *layout, c int) {
	s := b.shard[c]
	k := l.k
	r := b.ranges[l.slots[s]]
	if r == nil {
		if b.ranges == nil {
			b.ranges = map[int]*slotRanges{}
		}
		r = &slotRanges{}
		b.ranges[l.slots[s]] = r
	}
	if r.used == 0 {
		b.rangeUsed = append(b.rangeUsed, r)
	}
	for _, e := range b.sk[b.span[c]:b.span[c+1]] {
		i := int(uint32(e))
		if r.used == len(r.cmds) {
			g := &rangeCmd{}
			g.args = [4]any{"getrange", nil, &g.start, &g.end}
			g.cmd = redis.NewStringCmd(ctx, g.args[:]...)
			r.cmds = append(r.cmds, g)
			b.rangeN++
		}
		g := r.cmds[r.used]
		r.used++
		g.args[1] = l.keyArgs[s]
		g.start = (b.offs[i*k] &^ (blocked.BlockBits - 1)) / 8
		g.end = g.start + blockBytes - 1
		g.cmd.SetErr(nil)
		g.cmd.SetVal("")
		b.cmds = append(b.cmds, g.cmd)
	}
	b.args = append(b.args, argBitfieldRO, l.keyArgs[s], argGet, argI64, &l.markerOff[s])
	b.cmds = append(b.cmds, redis.NewIntSliceCmd(ctx, b.args[len(b.args)-5:len(b.args):len(b.args)]...))
}

// rangeReply checks shard command c's GETRANGEs and marker (cmds) and
// reports each key's answer with set.
func (f *Filter) rangeReply(b *batch, l *layout, c int, cmds []redis.Cmder, set func(i int, present bool)) error {
	s := b.shard[c]
	keys := b.sk[b.span[c]:b.span[c+1]]
	mark := cmds[len(cmds)-1].(*redis.IntSliceCmd)
	if err := mark.Err(); err != nil {
		return classify(err)
	}
	if v := mark.Val(); len(v) != 1 || v[0] != markerValue {
		return retired("shard %s has no marker", l.keys[s])
	}
	for _, cmd := range cmds[:len(keys)] {
		if err := cmd.Err(); err != nil {
			return classify(err)
		}
		if v := cmd.(*redis.StringCmd).Val(); len(v) != blockBytes {
			return fmt.Errorf("GETRANGE %s answered %d bytes, want %d", l.keys[s], len(v), blockBytes)
		}
	}
	k := l.k
	for x, e := range keys {
		i := int(uint32(e))
		blk := cmds[x].(*redis.StringCmd).Val()
		var miss byte
		for _, o := range b.offs[i*k : i*k+k] {
			r := o & (blocked.BlockBits - 1) // the bit in the block, Redis's numbering
			miss |= 0x80 >> (r & 7) &^ blk[r>>3]
		}
		set(i, miss == 0)
	}
	return nil
}

// fail records key i as failed: a query answers true.
func (f *Filter) fail(b *batch, out []bool, i int, err error) {
	b.failed = append(b.failed, i)
	if b.ferr == nil {
		b.ferr = err
	}
	if out != nil {
		out[i] = true
	}
}

// run sends cmds in one pipeline: one round trip on a server, one per
// node (concurrently) on a cluster, whose client follows MOVED and ASK
// redirections. With the Script method, commands that met NOSCRIPT are
// sent again as EVAL.
func (f *Filter) run(ctx context.Context, cmds []redis.Cmder) {
	exec := func(cmds []redis.Cmder) {
		if len(cmds) == 1 {
			_ = f.c.Process(ctx, cmds[0])
			return
		}
		p := f.c.Pipeline()
		for _, c := range cmds {
			_ = p.Process(ctx, c)
		}
		_, _ = p.Exec(ctx)
	}
	exec(cmds)
	if f.cfg.Method != Script {
		return
	}
	var again []redis.Cmder
	var at []int
	for i, c := range cmds {
		if isNoScript(c.Err()) {
			cmds[i] = f.evalInstead(ctx, c)
			again = append(again, cmds[i])
			at = append(at, i)
		}
	}
	if len(again) > 0 {
		exec(again)
	}
}
