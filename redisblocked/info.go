package redisblocked

import (
	"context"
	"fmt"
	"math"

	"github.com/bloomlab/bloomlab/blocked"
	"github.com/bloomlab/bloomlab/theory"
	"github.com/redis/go-redis/v9"
)

// Info describes a filter from its metadata and from counts the servers
// make (BITCOUNT, the shards' add counters), without downloading its bits.
type Info struct {
	Name          string
	FormatVersion int
	Generation    uint64
	Blocks        uint64
	K             int
	Seed          uint64
	Capacity      uint64 // keys it was designed for (0: unknown)
	// N is the keys added: the uploaded filter's N plus every add since
	// (each shard counts the keys of the adds it executed; an add retried
	// after a lost reply counts twice).
	N uint64
	// Ones is the number of bits set, counted by the servers.
	Ones   uint64
	Shards []ShardInfo
}

// ShardInfo describes one shard.
type ShardInfo struct {
	Key    string
	Slot   int    // its hash slot
	Node   string // the address of the master serving it ("" on a single server)
	Blocks uint64
	Bytes  uint64 // the string's length: data and the 16-byte trailer
	Ones   uint64 // bits set
	Adds   uint64 // keys added through it since the upload
}

// M returns the number of bits.
func (i *Info) M() uint64 { return i.Blocks * blocked.BlockBits }

// FillRatio returns the fraction of bits set.
func (i *Info) FillRatio() float64 { return float64(i.Ones) / float64(i.M()) }

// ApproxCount estimates the distinct keys added from the fill:
// Blocks · ln(1 − fill) / (k · ln(1 − 1/512)), the blocked filter's
// estimate with every block at the mean fill (+Inf when full).
func (i *Info) ApproxCount() float64 {
	fill := i.FillRatio()
	if fill >= 1 {
		return math.Inf(1)
	}
	return float64(i.Blocks) * math.Log1p(-fill) / (float64(i.K) * math.Log1p(-1.0/blocked.BlockBits))
}

// EstimatedFPR returns the false-positive rate of the current state by the
// blocked model (theory.FPBlocked) at ApproxCount keys: the per-block
// fills that blocked.Filter.EstimatedFPR averages are not fetched.
func (i *Info) EstimatedFPR() float64 {
	n := i.ApproxCount()
	if math.IsInf(n, 1) {
		return 1
	}
	return theory.FPBlocked(n, float64(i.Blocks), blocked.BlockBits, i.K)
}

// bitcountChunk bounds one BITCOUNT, so that no command keeps a server
// busy for more than about a millisecond.
const bitcountChunk = 8 << 20

// Info reads the metadata again and counts each shard's bits and adds on
// its server (BITCOUNT over ranges of 8 MiB, pipelined).
func (f *Filter) Info(ctx context.Context) (*Info, error) {
	l, err := f.fresh(ctx)
	if err != nil {
		return nil, err
	}
	cs, err := counts(ctx, f.c, l)
	if err != nil {
		return nil, err
	}
	in := &Info{Name: l.name, FormatVersion: FormatVersion, Generation: l.gen, Blocks: l.blocks, K: l.k,
		Seed: l.seed, Capacity: l.capacity, N: l.n, Shards: make([]ShardInfo, l.shards)}
	p := f.c.Pipeline()
	var bc []*redis.IntCmd
	var of []int
	for s, key := range l.keys {
		for off := uint64(0); off < l.dataBytes[s]; off += bitcountChunk {
			end := min(off+bitcountChunk, l.dataBytes[s]) - 1
			bc = append(bc, p.BitCount(ctx, key, &redis.BitCount{Start: int64(off), End: int64(end), Unit: redis.BitCountIndexByte}))
			of = append(of, s)
		}
	}
	_, _ = p.Exec(ctx)
	for s, key := range l.keys {
		in.Shards[s] = ShardInfo{Key: key, Slot: Slot(key), Blocks: l.dataBytes[s] / blockBytes,
			Bytes: l.dataBytes[s] + trailerLen, Adds: cs[s]}
		in.N += cs[s]
		if cc, ok := f.c.(*redis.ClusterClient); ok {
			if m, err := cc.MasterForKey(ctx, key); err == nil {
				in.Shards[s].Node = m.Options().Addr
			}
		}
	}
	for j, c := range bc {
		v, err := c.Result()
		if err != nil {
			return nil, fmt.Errorf("redisblocked: BITCOUNT %s: %w", l.keys[of[j]], err)
		}
		in.Shards[of[j]].Ones += uint64(v)
		in.Ones += uint64(v)
	}
	return in, nil
}

// N returns the number of keys added: the uploaded filter's N plus every
// shard's add counter (one command per shard, pipelined; the bits are not
// read).
func (f *Filter) N(ctx context.Context) (uint64, error) {
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
	return n, nil
}
