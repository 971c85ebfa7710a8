package redisblocked

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/bloomlab/bloomlab/blocked"
	"github.com/bloomlab/bloomlab/hashing"
	"github.com/bloomlab/bloomlab/internal/format"
	"github.com/redis/go-redis/v9"
)

// transferChunk is the size of one SETRANGE or GETRANGE of an upload or a
// download, and window the bytes one pipeline carries.
const (
	transferChunk = 1 << 20
	window        = 16 << 20
)

// UploadFilter writes f to Redis as the filter named name; see Upload.
func UploadFilter(ctx context.Context, c redis.UniversalClient, name string, f *blocked.Filter, cfg *Config) (*Filter, error) {
	pr, pw := io.Pipe()
	go func() {
		_, err := f.WriteTo(pw)
		pw.CloseWithError(err)
	}()
	g, err := Upload(ctx, c, name, pr, cfg)
	pr.CloseWithError(errors.New("upload ended"))
	return g, err
}

// Upload reads one blocked filter in the bloomlab file format from r and
// writes it to Redis as the filter named name, split into shards as
// PlanShards says (cfg.Shards, cfg.MaxShardBytes; the number of masters
// when c is a cluster client). The file is streamed: the upload holds one
// window of 16 MiB, whatever the filter's size; blocks that are all zero
// are not sent.
//
// The upload is invisible until it is complete (docs/REDIS.md): the
// shards are written under a new generation, which no metadata names; the
// file's checksum and every shard are checked; then the shards of the
// generation being replaced are retired (each replaced by a tombstone, so
// that no client can read or write them any more) and the metadata is
// switched to the new generation, if nobody changed it since the upload
// read it (otherwise ErrChanged, and the new generation is deleted). A
// reader therefore sees the old filter, then errors for the milliseconds
// between the retirement and the switch (which operations retry through),
// then the new filter; never a half-written one.
//
// An existing bloomlab filter of that name is replaced only with
// cfg.Replace (otherwise ErrExists); a key holding anything else is never
// replaced (ErrNotFilter). A file of another kind, or a damaged one, is
// an error and nothing becomes visible.
func Upload(ctx context.Context, c redis.UniversalClient, name string, r io.Reader, cfg *Config) (*Filter, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	d, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	dec := format.NewDecoder(r)
	if k, err := dec.PeekKind(); err != nil {
		return nil, fmt.Errorf("redisblocked: reading the filter: %w", err)
	} else if k != format.KindBlocked {
		return nil, fmt.Errorf("redisblocked: the file holds a %v filter; Redis holds blocked filters (bloomlab build -kind blocked): %w", k, ErrParam)
	}
	params, err := dec.Begin(format.KindBlocked)
	if err != nil {
		return nil, fmt.Errorf("redisblocked: reading the filter: %w", err)
	}
	pr := format.NewParamReader(params)
	blocks, k, n, capacity := pr.U64(), pr.U32(), pr.U64(), pr.U64()
	if err := pr.Err(); err != nil {
		return nil, fmt.Errorf("redisblocked: reading the filter: %w", err)
	}
	switch {
	case dec.Header.Scheme != uint8(hashing.Independent):
		return nil, fmt.Errorf("redisblocked: blocked filter of scheme %d, want 1: %w", dec.Header.Scheme, format.ErrFormat)
	case blocks < 1 || blocks > blocked.MaxBlocks:
		return nil, fmt.Errorf("redisblocked: blocked filter of %d blocks: %w", blocks, format.ErrFormat)
	case k < 1 || k > hashing.MaxK:
		return nil, fmt.Errorf("redisblocked: blocked filter with k = %d: %w", k, format.ErrFormat)
	case dec.Header.PayloadLen != blocks*blockBytes:
		return nil, fmt.Errorf("redisblocked: payload of %d bytes for %d blocks: %w", dec.Header.PayloadLen, blocks, format.ErrFormat)
	}
	masters, err := Masters(ctx, c)
	if err != nil {
		return nil, err
	}
	plan, err := PlanShards(blocks, masters, d.Shards, d.MaxShardBytes)
	if err != nil {
		return nil, err
	}
	old, oldRaw, err := readMeta(ctx, c, name)
	switch {
	case errors.Is(err, ErrNotFound):
		old = nil
	case err != nil:
		if errors.Is(err, ErrNotFilter) {
			return nil, fmt.Errorf("%w; not replaced", err)
		}
		return nil, err
	case !d.Replace:
		return nil, fmt.Errorf("redisblocked: %q holds a blocked filter of %d blocks (generation %016x); not replaced: %w", name, old.blocks, old.gen, ErrExists)
	}
	m := &meta{blocks: blocks, k: int(k), seed: dec.Header.Seed, capacity: capacity, n: n,
		shards: plan.Shards, shardBlocks: plan.ShardBlocks, gen: newGen(old), slot: Slot(name)}
	raw := m.encode()
	l := newLayout(name, raw, m)
	u := &uploader{c: c, l: l}
	if err := u.run(ctx, dec); err != nil {
		u.abort()
		return nil, fmt.Errorf("redisblocked: upload of %q: %w; nothing changed", name, err)
	}
	// From here the upload finishes even if ctx is cancelled: an upload
	// stopped between the retirement and the switch would leave the
	// filter answering errors until it is run again.
	ctx = context.WithoutCancel(ctx)
	if old != nil {
		if err := retire(ctx, c, newLayout(name, oldRaw, old), m.gen); err != nil {
			u.abort()
			return nil, fmt.Errorf("redisblocked: upload of %q: retiring generation %016x: %w", name, old.gen, err)
		}
	}
	if err := swapMeta(ctx, c, name, oldRaw, raw); err != nil {
		u.abort()
		return nil, fmt.Errorf("redisblocked: upload of %q: %w", name, err)
	}
	f := &Filter{c: c, name: name, cfg: d}
	f.cur.Store(l)
	return f, nil
}

// newGen returns a random generation, non-zero and not old's.
func newGen(old *meta) uint64 {
	for {
		var b [8]byte
		rand.Read(b[:])
		g := binary.LittleEndian.Uint64(b[:])
		if g != 0 && (old == nil || g != old.gen) {
			return g
		}
	}
}

// Masters returns the number of masters serving c: those of CLUSTER SLOTS
// for a cluster client, 1 otherwise.
func Masters(ctx context.Context, c redis.UniversalClient) (int, error) {
	cc, ok := c.(*redis.ClusterClient)
	if !ok {
		return 1, nil
	}
	slots, err := cc.ClusterSlots(ctx).Result()
	if err != nil {
		return 0, fmt.Errorf("redisblocked: CLUSTER SLOTS: %w", err)
	}
	seen := map[string]bool{}
	for _, s := range slots {
		if len(s.Nodes) > 0 {
			seen[s.Nodes[0].Addr] = true
		}
	}
	return max(1, len(seen)), nil
}

// uploader writes the shards of a new generation.
type uploader struct {
	c       redis.UniversalClient
	l       *layout
	buf     []byte
	cmds    []redis.Cmder
	off     uint64 // payload offset of the next byte
	created bool
}

func (u *uploader) run(ctx context.Context, dec *format.Decoder) error {
	// Every shard at its full length, zero bytes and the trailer (marker,
	// counter 0): the blocks that are all zero need nothing more.
	trailer := append([]byte(marker), make([]byte, 8)...)
	u.created = true
	for s, key := range u.l.keys {
		u.cmds = append(u.cmds, redis.NewIntCmd(ctx, "setrange", key, u.l.dataBytes[s], trailer))
	}
	if err := u.flush(ctx); err != nil {
		return err
	}
	u.buf = make([]byte, 0, window)
	if err := dec.Payload(u.l.blocks*blockBytes, transferChunk, func(p []byte) error { return u.write(ctx, p) }); err != nil {
		return err
	}
	if err := u.flush(ctx); err != nil {
		return err
	}
	if err := dec.End(); err != nil {
		return err
	}
	// Every shard complete: its length and its marker.
	for s, key := range u.l.keys {
		u.cmds = append(u.cmds, redis.NewIntCmd(ctx, "strlen", key),
			redis.NewIntSliceCmd(ctx, "bitfield_ro", key, "GET", "i64", u.l.markerOff[s]))
	}
	cmds := u.cmds
	if err := u.flush(ctx); err != nil {
		return err
	}
	for s := range u.l.keys {
		n := cmds[2*s].(*redis.IntCmd).Val()
		v := cmds[2*s+1].(*redis.IntSliceCmd).Val()
		if uint64(n) != u.l.dataBytes[s]+trailerLen || len(v) != 1 || v[0] != markerValue {
			return fmt.Errorf("shard %s holds %d bytes after the upload, want %d with its marker (evicted? check maxmemory-policy)", u.l.keys[s], n, u.l.dataBytes[s]+trailerLen)
		}
	}
	return nil
}

// write queues the payload bytes p (at u.off) as SETRANGEs of their
// shards, skipping zero runs.
func (u *uploader) write(ctx context.Context, p []byte) error {
	per := u.l.shardBlocks * blockBytes
	for len(p) > 0 {
		s := u.off / per
		in := u.off - s*per
		n := min(uint64(len(p)), u.l.dataBytes[s]-in)
		piece := p[:n]
		if !zero(piece) {
			if len(u.buf)+len(piece) > cap(u.buf) {
				if err := u.flush(ctx); err != nil {
					return err
				}
			}
			at := len(u.buf)
			u.buf = append(u.buf, piece...)
			u.cmds = append(u.cmds, redis.NewIntCmd(ctx, "setrange", u.l.keys[s], in, u.buf[at:len(u.buf):len(u.buf)]))
		}
		u.off += n
		p = p[n:]
	}
	return nil
}

func zero(p []byte) bool {
	for len(p) >= 8 {
		if binary.LittleEndian.Uint64(p) != 0 {
			return false
		}
		p = p[8:]
	}
	for _, b := range p {
		if b != 0 {
			return false
		}
	}
	return true
}

// flush runs the queued commands in one pipeline and reports the first
// error.
func (u *uploader) flush(ctx context.Context) error {
	defer func() { u.cmds, u.buf = u.cmds[:0], u.buf[:0] }()
	if len(u.cmds) == 0 {
		return nil
	}
	p := u.c.Pipeline()
	for _, c := range u.cmds {
		_ = p.Process(ctx, c)
	}
	_, _ = p.Exec(ctx)
	for _, c := range u.cmds {
		if err := c.Err(); err != nil {
			return fmt.Errorf("%s: %w", c.Name(), err)
		}
	}
	return nil
}

// abort deletes the shards of the generation being written (best effort:
// they are invisible anyway, and named by a generation nothing will use).
func (u *uploader) abort() {
	if !u.created {
		return
	}
	ctx := context.Background()
	p := u.c.Pipeline()
	for _, key := range u.l.keys {
		p.Del(ctx, key)
	}
	_, _ = p.Exec(ctx)
}

// retire replaces every shard of l with a tombstone (a small hash naming
// the generation that replaced it, expiring after TombstoneTTL): from then
// on no operation can read or write the generation (a BITFIELD or a
// script on a hash fails with WRONGTYPE), so a client holding old metadata
// learns of the change instead of reading or adding to retired bits.
func retire(ctx context.Context, c redis.UniversalClient, l *layout, by uint64) error {
	keys := l.keys
	for attempt := 0; len(keys) > 0; attempt++ {
		if attempt == 5 {
			return fmt.Errorf("shard %s would not become a tombstone", keys[0])
		}
		p := c.Pipeline()
		var types []*redis.StatusCmd
		for _, key := range keys {
			p.Del(ctx, key)
			p.HSet(ctx, key, "retired-by-generation", fmt.Sprintf("%016x", by), "filter", l.name)
			p.PExpire(ctx, key, TombstoneTTL)
			types = append(types, p.Type(ctx, key))
		}
		cmds, _ := p.Exec(ctx)
		var again []string
		for _, cmd := range cmds {
			if err := cmd.Err(); err != nil && !isWrongType(err) {
				return fmt.Errorf("%s: %w", cmd.Name(), err)
			}
		}
		// A stale BITFIELD add between DEL and HSET recreates the key as
		// a string (the HSET then fails): do that shard again.
		for i, t := range types {
			if t.Val() != "hash" {
				again = append(again, keys[i])
			}
		}
		keys = again
	}
	return nil
}

// swapMeta sets name's metadata to raw if it still holds old ("" : no
// key), in one transaction.
func swapMeta(ctx context.Context, c redis.UniversalClient, name, old, raw string) error {
	err := c.Watch(ctx, func(tx *redis.Tx) error {
		cur, err := tx.GetRange(ctx, name, 0, maxMeta-1).Result()
		if err != nil && !isWrongType(err) {
			return err
		}
		if err != nil || cur != old {
			return fmt.Errorf("the metadata %q changed while the upload ran (another writer): %w", name, ErrChanged)
		}
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			if raw == "" {
				return p.Del(ctx, name).Err()
			}
			return p.Set(ctx, name, raw, 0).Err()
		})
		return err
	}, name)
	if errors.Is(err, redis.TxFailedErr) {
		return fmt.Errorf("the metadata %q changed while the upload ran (another writer): %w", name, ErrChanged)
	}
	return err
}

// Delete removes the filter: its shards are retired (tombstones that
// expire after TombstoneTTL) and its metadata deleted, if nobody replaced
// it meanwhile (ErrChanged). Other clients' operations then fail with
// ErrNotFound.
func (f *Filter) Delete(ctx context.Context) error {
	f.mu.Lock()
	l, err := f.reload(ctx, f.cur.Load())
	f.mu.Unlock()
	if err != nil {
		return err
	}
	if err := retire(ctx, f.c, l, 0); err != nil {
		return fmt.Errorf("redisblocked: delete %q: %w", f.name, err)
	}
	if err := swapMeta(ctx, f.c, f.name, l.raw, ""); err != nil {
		return fmt.Errorf("redisblocked: delete %q: %w", f.name, err)
	}
	return nil
}

// counts returns every shard's add counter, checking its marker.
func counts(ctx context.Context, c redis.UniversalClient, l *layout) ([]uint64, error) {
	p := c.Pipeline()
	cmds := make([]*redis.IntSliceCmd, l.shards)
	for s, key := range l.keys {
		cmds[s] = redis.NewIntSliceCmd(ctx, "bitfield_ro", key, "GET", "i64", l.markerOff[s], "GET", "i64", l.countOff[s])
		_ = p.Process(ctx, cmds[s])
	}
	_, _ = p.Exec(ctx)
	out := make([]uint64, l.shards)
	for s, cmd := range cmds {
		v, err := cmd.Result()
		if err != nil {
			return nil, fmt.Errorf("redisblocked: shard %s: %w", l.keys[s], err)
		}
		if len(v) != 2 || v[0] != markerValue {
			return nil, fmt.Errorf("redisblocked: shard %s is not a live shard of %q: %w", l.keys[s], l.name, ErrRetired)
		}
		out[s] = uint64(v[1])
	}
	return out, nil
}

// fresh reads the metadata now and returns the layout it names.
func (f *Filter) fresh(ctx context.Context) (*layout, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reload(ctx, f.cur.Load())
}

// WriteTo writes the filter to w in the bloomlab file format (a blocked
// filter whose N is the keys added: the uploaded N and every shard's add
// counter), reading the shards with GETRANGE in chunks of 1 MiB, 16 MiB
// per pipeline: it holds one window whatever the filter's size. Every key
// whose Add returned before WriteTo was called is in the file. If the
// filter is replaced or deleted meanwhile, WriteTo fails (ErrChanged)
// rather than write a mixture.
func (f *Filter) WriteTo(ctx context.Context, w io.Writer) (int64, error) {
	l, err := f.fresh(ctx)
	if err != nil {
		return 0, err
	}
	cs, err := counts(ctx, f.c, l)
	if err != nil {
		return 0, err
	}
	n := l.n
	for _, c := range cs {
		n += c
	}
	var p format.Params
	p.U64(l.blocks)
	p.U32(uint32(l.k))
	p.U64(n)
	p.U64(l.capacity)
	e := format.NewEncoder(w)
	e.Begin(format.Header{Kind: format.KindBlocked, Scheme: uint8(hashing.Independent), Seed: l.seed, PayloadLen: l.blocks * blockBytes}, p.Bytes())
	for s, key := range l.keys {
		for off := uint64(0); off < l.dataBytes[s]; {
			pipe := f.c.Pipeline()
			var cmds []*redis.StringCmd
			for ; off < l.dataBytes[s] && len(cmds) < window/transferChunk; off += transferChunk {
				end := min(off+transferChunk, l.dataBytes[s])
				cmds = append(cmds, pipe.GetRange(ctx, key, int64(off), int64(end-1)))
			}
			last := off >= l.dataBytes[s]
			var mark *redis.IntSliceCmd
			if last { // the marker after the data: the shard was live throughout
				mark = redis.NewIntSliceCmd(ctx, "bitfield_ro", key, "GET", "i64", l.markerOff[s])
				_ = pipe.Process(ctx, mark)
			}
			_, _ = pipe.Exec(ctx)
			for _, c := range cmds {
				v, err := c.Result()
				if err != nil {
					if isWrongType(err) {
						err = ErrChanged
					}
					return 0, fmt.Errorf("redisblocked: download of %q: shard %s: %w", f.name, key, err)
				}
				want := (c.Args()[3].(int64) - c.Args()[2].(int64)) + 1
				if int64(len(v)) != want {
					return 0, fmt.Errorf("redisblocked: download of %q: shard %s answered %d bytes, want %d (replaced or deleted meanwhile): %w", f.name, key, len(v), want, ErrChanged)
				}
				e.Payload([]byte(v))
			}
			if mark != nil {
				v, err := mark.Result()
				if err != nil || len(v) != 1 || v[0] != markerValue {
					return 0, fmt.Errorf("redisblocked: download of %q: shard %s is no longer live (%v): %w", f.name, key, err, ErrChanged)
				}
			}
		}
	}
	return e.Close()
}

// Download returns the filter as a local blocked.Filter (allocated once,
// at its size), read as WriteTo reads it.
func (f *Filter) Download(ctx context.Context) (*blocked.Filter, error) {
	l, err := f.fresh(ctx)
	if err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	go func() {
		_, err := f.WriteTo(ctx, pw)
		pw.CloseWithError(err)
	}()
	var g blocked.Filter
	size := format.HeaderSize + 28 + int(l.blocks*blockBytes) + 4
	_, err = g.ReadFrom(&sized{r: pr, left: size})
	pr.CloseWithError(errors.New("download ended"))
	if err != nil {
		return nil, err
	}
	return &g, nil
}

// sized is a reader that says how many bytes are left, so that the
// decoder allocates the filter once at its final size.
type sized struct {
	r    io.Reader
	left int
}

func (s *sized) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.left -= n
	return n, err
}

func (s *sized) Len() int { return max(s.left, 0) }
