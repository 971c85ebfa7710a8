package choices

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/bloomlab/bloomlab/hashing"
)

// KeyedFilter is a c-choice filter that keeps the digests of its keys, so
// that it can be re-optimised by the offline algorithm while it is in use:
// the background task suggested at the end of 000 §3.2.
//
// Add inserts online (greedy, 000 §3.1) into the current bit array and
// records the key's digest (16 bytes per key). Reoptimize rebuilds a new
// bit array from the recorded keys off to the side (Builder, rounds as
// given to NewKeyed), applies the keys added meanwhile to it, and publishes
// it with one atomic pointer swap, if it has no more ones than the current
// array (so re-optimising never raises the false-positive rate).
//
// The zero KeyedFilter is an empty filter with no room: Contains answers
// false, Len 0, Snapshot a zero Filter, Reoptimize an error wrapping
// ErrParam; Add panics naming NewKeyed, without taking a lock.
//
// Concurrency: every method is safe for concurrent use. Contains never
// blocks: it reads the bit array published last, and every array ever
// published covers every key whose Add returned before the array was
// published, so a lookup never misses a key added before it started (no
// false negatives at any instant). Adds are serialised with each other
// and with the publishing step; one Reoptimize runs at a time.
type KeyedFilter struct {
	cur    atomic.Pointer[Filter]
	wmu    sync.Mutex // writers: Add, and Reoptimize's replay and publish
	keys   []hashing.Digest
	rmu    sync.Mutex // one Reoptimize at a time; guards b
	b      Builder
	rounds int
}

// NewKeyed returns an empty KeyedFilter for cfg whose Reoptimize runs the
// given number of offline rounds (1 … MaxRounds; 000 Table 3 uses 10–15
// for c = 2 and 30–40 for c = 3).
func NewKeyed(cfg Config, rounds int) (*KeyedFilter, error) {
	if rounds < 1 || rounds > MaxRounds {
		return nil, fmt.Errorf("choices: rounds = %d out of range [1, %d]: %w", rounds, MaxRounds, ErrParam)
	}
	f, err := New(cfg)
	if err != nil {
		return nil, err
	}
	kf := &KeyedFilter{rounds: rounds}
	kf.cur.Store(f)
	return kf, nil
}

// filter returns the current filter, or for the zero KeyedFilter the zero
// Filter (empty: every read answers as for an empty filter).
func (kf *KeyedFilter) filter() *Filter {
	if f := kf.cur.Load(); f != nil {
		return f
	}
	return &emptyFilter
}

// emptyFilter is what the zero KeyedFilter reads. Nothing ever writes it:
// every mutator checks for the zero KeyedFilter first.
var emptyFilter Filter

// made returns the current filter, panicking (before any lock is taken or
// anything changes) for the zero KeyedFilter.
func (kf *KeyedFilter) made(method string) *Filter {
	f := kf.cur.Load()
	if f == nil {
		zeroKeyed.Panic(method)
	}
	return f
}

// Add inserts key.
func (kf *KeyedFilter) Add(key []byte) { kf.AddHash(hashing.Sum(key, kf.made("Add").seed)) }

// AddString inserts key.
func (kf *KeyedFilter) AddString(key string) {
	kf.AddHash(hashing.SumString(key, kf.made("AddString").seed))
}

// AddHash inserts the key with digest d (under the filter's seed): online
// greedy into the current bit array, with atomic bit updates so that
// concurrent lookups are safe, and records d for the next Reoptimize.
func (kf *KeyedFilter) AddHash(d hashing.Digest) {
	kf.made("AddHash")
	kf.wmu.Lock()
	defer kf.wmu.Unlock()
	kf.cur.Load().add(d, true)
	kf.keys = append(kf.keys, d)
}

// Contains reports whether key may have been added.
func (kf *KeyedFilter) Contains(key []byte) bool {
	f := kf.filter()
	return f.ContainsHash(hashing.Sum(key, f.seed))
}

// ContainsString is Contains for a string key.
func (kf *KeyedFilter) ContainsString(key string) bool {
	f := kf.filter()
	return f.ContainsHash(hashing.SumString(key, f.seed))
}

// ContainsHash is Contains for a pre-hashed key. It never blocks.
func (kf *KeyedFilter) ContainsHash(d hashing.Digest) bool {
	return kf.filter().ContainsHash(d)
}

// Len returns the number of keys added.
func (kf *KeyedFilter) Len() int {
	kf.wmu.Lock()
	defer kf.wmu.Unlock()
	return len(kf.keys)
}

// Snapshot returns a copy of the current filter (bits only), for example to
// write it to a file; for the zero KeyedFilter, a zero Filter.
func (kf *KeyedFilter) Snapshot() *Filter {
	kf.wmu.Lock()
	defer kf.wmu.Unlock()
	return kf.filter().Clone()
}

// Reoptimize rebuilds the filter offline from every key added so far and
// publishes the result if it has no more ones than the current filter; it
// reports whether it published. Adds and lookups continue while it runs;
// keys added during the rebuild are inserted online into the new array
// before it is published. ctx is checked between rounds; a cancelled
// Reoptimize changes nothing. Call it from its own goroutine to run it in
// the background.
func (kf *KeyedFilter) Reoptimize(ctx context.Context) (bool, error) {
	if kf.cur.Load() == nil {
		return false, zeroKeyed.Err("Reoptimize")
	}
	kf.rmu.Lock()
	defer kf.rmu.Unlock()

	kf.wmu.Lock()
	keys := kf.keys[:len(kf.keys):len(kf.keys)] // appends never touch this view
	cur := kf.cur.Load()
	cfg := cur.Config()
	cfg.TieSeed = splitmix(cur.rng ^ uint64(len(keys))) // a fresh stream for the rebuild
	capacity := cur.capacity
	kf.wmu.Unlock()

	nf, err := New(cfg)
	if err != nil {
		return false, err
	}
	nf.capacity = capacity
	if len(keys) > 0 {
		if err := kf.b.build(nf, keys, []int{kf.rounds}, nil, ctx.Err); err != nil {
			return false, fmt.Errorf("choices: reoptimize: %w", err)
		}
	}
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("choices: reoptimize: %w", err)
	}

	kf.wmu.Lock()
	defer kf.wmu.Unlock()
	// Keys added since the snapshot are already in cur; apply them to nf.
	for _, d := range kf.keys[len(keys):] {
		nf.add(d, false) // nf is not yet visible to readers
	}
	cur = kf.cur.Load()
	if nf.Ones() > cur.Ones() {
		return false, nil
	}
	kf.cur.Store(nf)
	return true, nil
}
