package redisblocked

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bloomlab/bloomlab/blocked"
	"github.com/bloomlab/bloomlab/hashing"
)

// Layout constants (docs/REDIS.md). They are part of the format: a change
// is a new FormatVersion.
const (
	// FormatVersion is the version of the layout this package writes and
	// reads, recorded in the metadata.
	FormatVersion = 1
	// magic opens every metadata value.
	magic = "bloomlab-redis"
	// maxMeta bounds the metadata value: longer values are not ours, and
	// are never read whole (GETRANGE 0 maxMeta-1).
	maxMeta = 1024
	// MaxNameLen bounds a filter's name (its metadata key).
	MaxNameLen = 1024
	// blockBytes is a block's size in bytes.
	blockBytes = blocked.BlockBits / 8
	// trailerLen is the length of a shard's trailer: the 8 marker bytes
	// "bloomlab", then the shard's add counter (a big-endian int64, as
	// BITFIELD OVERFLOW SAT INCRBY i64 keeps it: it saturates, never wraps).
	trailerLen = 16
	// MaxShardBytes is the largest shard string: Redis's 512 MB limit on a
	// string (proto-max-bulk-len and the string length), less nothing:
	// the data bytes of a shard are at most MaxShardBlocks blocks, so data
	// and trailer fit in 512 MiB.
	MaxShardBytes = 512 << 20
	// MaxShardBlocks is the most blocks a shard holds: (512 MiB − 16)/64.
	MaxShardBlocks = (MaxShardBytes - trailerLen) / blockBytes
	// MaxShards bounds the number of shard keys (and what a client
	// allocates for them: a few MB at most).
	MaxShards = 1 << 16
	// MaxBlocks is the largest filter: MaxShards shards of MaxShardBlocks
	// blocks (just under 32 TiB), within blocked.MaxBlocks.
	MaxBlocks = MaxShards * MaxShardBlocks
	// DefaultShardBytes is the default largest shard: 64 MiB, far below
	// Redis's limit, so that one shard moves (resharding, replication,
	// DEL) in well under a second.
	DefaultShardBytes = 64 << 20
	// ShardsPerMaster is the fewest shards per master of a cluster the
	// default plan makes: room to spread over four times as many masters
	// later, and an even spread now.
	ShardsPerMaster = 4
	// clusterSlots is Redis Cluster's number of hash slots.
	clusterSlots = 16384
	// TombstoneTTL is how long the tombstone that replaces a retired shard
	// lives: far longer than a client uses metadata without re-reading it
	// (Config.Refresh), so every client learns of a new generation before
	// the tombstones expire.
	TombstoneTTL = 24 * time.Hour
)

// marker is the first 8 bytes of a shard's trailer, and the value
// BITFIELD GET i64 reads from them.
const marker = "bloomlab"

var markerValue = int64(binary.BigEndian.Uint64([]byte(marker)))

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// meta is a filter's metadata: what the metadata key holds.
type meta struct {
	blocks      uint64
	k           int
	seed        uint64
	capacity    uint64
	n           uint64 // keys added before the upload (the file's N)
	shards      int
	shardBlocks uint64
	gen         uint64
	slot        int // slot of shard 0's tag; shard i's is slot + ⌊i·16384/shards⌋ mod 16384
}

// encode returns the metadata value:
//
//	bloomlab-redis 1 kind=blocked blocks=B k=K seed=S capacity=C n=N shards=S shard-blocks=P gen=G slot=T crc=X
//
// with decimal numbers, gen as 16 hex digits and crc the CRC-32C (8 hex
// digits) of every byte before " crc=".
func (m *meta) encode() string {
	s := fmt.Sprintf("%s %d kind=blocked blocks=%d k=%d seed=%d capacity=%d n=%d shards=%d shard-blocks=%d gen=%016x slot=%d",
		magic, FormatVersion, m.blocks, m.k, m.seed, m.capacity, m.n, m.shards, m.shardBlocks, m.gen, m.slot)
	return fmt.Sprintf("%s crc=%08x", s, crc32.Checksum([]byte(s), castagnoli))
}

// decodeMeta parses and validates a metadata value read from Redis, which
// is untrusted: every field is checked, and the sizes bounded, before
// anything is allocated from it.
func decodeMeta(name, v string) (*meta, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("redisblocked: key %q "+format+": %w", append([]any{name}, append(args, ErrNotFilter)...)...)
	}
	if len(v) >= maxMeta {
		return nil, bad("holds a string of %d bytes or more, not bloomlab metadata", maxMeta)
	}
	fields := strings.Split(v, " ")
	if len(fields) < 2 || fields[0] != magic {
		return nil, bad("holds a string that is not bloomlab metadata")
	}
	if fields[1] != strconv.Itoa(FormatVersion) {
		return nil, fmt.Errorf("redisblocked: key %q holds bloomlab metadata of layout version %q; this build reads version %d: %w", name, fields[1], FormatVersion, ErrVersion)
	}
	body, sum, ok := strings.Cut(v, " crc=")
	if !ok || len(sum) != 8 {
		return nil, bad("holds metadata without its checksum")
	}
	if c, err := strconv.ParseUint(sum, 16, 32); err != nil || uint32(c) != crc32.Checksum([]byte(body), castagnoli) {
		return nil, bad("holds metadata whose checksum %q does not match", sum)
	}
	names := []string{"kind", "blocks", "k", "seed", "capacity", "n", "shards", "shard-blocks", "gen", "slot", "crc"}
	if len(fields) != 2+len(names) {
		return nil, bad("holds metadata of %d fields, want %d", len(fields), 2+len(names))
	}
	val := map[string]string{}
	for i, want := range names {
		k, v, ok := strings.Cut(fields[2+i], "=")
		if !ok || k != want {
			return nil, bad("holds metadata whose field %d is %q, want %s=…", 3+i, fields[2+i], want)
		}
		val[k] = v
	}
	if val["kind"] != "blocked" {
		return nil, fmt.Errorf("redisblocked: key %q holds a bloomlab filter of kind %q; this package serves blocked filters: %w", name, val["kind"], ErrNotFilter)
	}
	var m meta
	var err error
	num := func(f string, base int) uint64 {
		x, e := strconv.ParseUint(val[f], base, 64)
		if e != nil && err == nil {
			err = bad("holds metadata whose field %s=%q is not a number", f, val[f])
		}
		return x
	}
	m.blocks, m.seed, m.capacity, m.n = num("blocks", 10), num("seed", 10), num("capacity", 10), num("n", 10)
	k, shards, shardBlocks, slot := num("k", 10), num("shards", 10), num("shard-blocks", 10), num("slot", 10)
	m.gen = num("gen", 16)
	if err != nil {
		return nil, err
	}
	switch {
	case m.blocks < 1 || m.blocks > MaxBlocks:
		return nil, bad("holds metadata with blocks = %d out of range [1, %d]", m.blocks, uint64(MaxBlocks))
	case k < 1 || k > hashing.MaxK:
		return nil, bad("holds metadata with k = %d out of range [1, %d]", k, hashing.MaxK)
	case shardBlocks < 1 || shardBlocks > MaxShardBlocks:
		return nil, bad("holds metadata with shard-blocks = %d out of range [1, %d]", shardBlocks, MaxShardBlocks)
	case shards < 1 || shards > MaxShards || shards != (m.blocks+shardBlocks-1)/shardBlocks:
		return nil, bad("holds metadata with shards = %d, but %d blocks in shards of %d make %d (at most %d)", shards, m.blocks, shardBlocks, (m.blocks+shardBlocks-1)/shardBlocks, MaxShards)
	case m.gen == 0:
		return nil, bad("holds metadata of generation 0")
	case slot >= clusterSlots:
		return nil, bad("holds metadata with slot = %d out of range [0, %d)", slot, clusterSlots)
	}
	m.k, m.shards, m.shardBlocks, m.slot = int(k), int(shards), shardBlocks, int(slot)
	return &m, nil
}

// checkName refuses names the layout cannot use: empty, too long, or with
// a brace, which would change the shard keys' hash tags (Redis Cluster
// hashes the text between the first "{" and the next "}").
func checkName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("redisblocked: empty filter name: %w", ErrParam)
	case len(name) > MaxNameLen:
		return fmt.Errorf("redisblocked: filter name of %d bytes, at most %d: %w", len(name), MaxNameLen, ErrParam)
	case strings.ContainsAny(name, "{}"):
		return fmt.Errorf("redisblocked: filter name %q contains a brace, which would change its shards' hash tags: %w", name, ErrParam)
	}
	return nil
}

// crc16 is Redis Cluster's key hash: CRC-16/XMODEM (polynomial 0x1021,
// initial value 0), of which the slot is the low 14 bits.
func crc16(s string) uint16 {
	var c uint16
	for i := 0; i < len(s); i++ {
		c ^= uint16(s[i]) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
	}
	return c
}

// Slot returns the Redis Cluster hash slot of key (its hash tag's, when
// it has one).
func Slot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	return int(crc16(key) % clusterSlots)
}

// slotTags[s] is the hash tag of slot s: the smallest decimal number
// whose CRC-16 falls in slot s (every slot has one below 200,000).
var slotTags = sync.OnceValue(func() *[clusterSlots]uint32 {
	var t [clusterSlots]uint32
	var found [clusterSlots]bool
	left := clusterSlots
	var buf [12]byte
	for n := uint32(0); left > 0; n++ {
		s := crc16(string(strconv.AppendUint(buf[:0], uint64(n), 10))) % clusterSlots
		if !found[s] {
			found[s], t[s] = true, n
			left--
		}
	}
	return &t
})

// shardSlot returns the slot of shard i: the shards' slots are spread
// evenly over the 16384 slots from m.slot, so that every master of a
// cluster whose slots are split evenly (redis-cli --cluster create) holds
// the same number of shards, to within one.
func (m *meta) shardSlot(i int) int {
	return (m.slot + int(uint64(i)*clusterSlots/uint64(m.shards))) % clusterSlots
}

// shardKey returns the key of shard i of generation m.gen:
// NAME:{TAG}:gGEN:sI, TAG the decimal hash tag of the shard's slot.
func (m *meta) shardKey(name string, i int) string {
	return fmt.Sprintf("%s:{%d}:g%016x:s%d", name, slotTags()[m.shardSlot(i)], m.gen, i)
}

// shardBlocksOf returns the number of blocks of shard i (the last may
// have fewer).
func (m *meta) shardBlocksOf(i int) uint64 {
	if i == m.shards-1 {
		return m.blocks - uint64(m.shards-1)*m.shardBlocks
	}
	return m.shardBlocks
}

// Plan is a shard plan: how a filter of Blocks blocks is split into Redis
// strings.
type Plan struct {
	Blocks      uint64 // the filter's 512-bit blocks
	Shards      int    // shard keys
	ShardBlocks uint64 // blocks per shard (the last may have fewer)
	ShardBytes  uint64 // the largest shard string: ShardBlocks·64 bytes and the 16-byte trailer
}

// PlanShards splits a filter of the given number of blocks into shards.
// shards > 0 asks for that many (fewer when there are fewer blocks);
// shards = 0 chooses: enough that no shard exceeds maxShardBytes (0:
// DefaultShardBytes), and at least ShardsPerMaster per master when
// masters > 1 (a cluster). maxShardBytes may be at most MaxShardBytes,
// Redis's limit on a string. Shards hold ⌈blocks/shards⌉ blocks each, the
// last one the rest.
func PlanShards(blocks uint64, masters, shards int, maxShardBytes int64) (Plan, error) {
	if blocks < 1 || blocks > MaxBlocks {
		return Plan{}, fmt.Errorf("redisblocked: %d blocks out of range [1, %d]: %w", blocks, uint64(MaxBlocks), ErrParam)
	}
	if maxShardBytes == 0 {
		maxShardBytes = DefaultShardBytes
	}
	if maxShardBytes < blockBytes+trailerLen || maxShardBytes > MaxShardBytes {
		return Plan{}, fmt.Errorf("redisblocked: largest shard of %d bytes out of range [%d, %d]: %w", maxShardBytes, blockBytes+trailerLen, MaxShardBytes, ErrParam)
	}
	if shards < 0 || shards > MaxShards {
		return Plan{}, fmt.Errorf("redisblocked: %d shards out of range [0, %d]: %w", shards, MaxShards, ErrParam)
	}
	perShard := uint64(maxShardBytes-trailerLen) / blockBytes
	n := uint64(shards)
	if n == 0 {
		n = (blocks + perShard - 1) / perShard
		if masters > 1 {
			n = max(n, uint64(masters)*ShardsPerMaster)
		}
	}
	n = min(n, blocks, MaxShards)
	p := (blocks + n - 1) / n
	if p > perShard || p > MaxShardBlocks {
		return Plan{}, fmt.Errorf("redisblocked: %d blocks in %d shards need %d blocks per shard, more than a shard of %d bytes holds: %w", blocks, n, p, maxShardBytes, ErrParam)
	}
	n = (blocks + p - 1) / p
	return Plan{Blocks: blocks, Shards: int(n), ShardBlocks: p, ShardBytes: p*blockBytes + trailerLen}, nil
}

// layout is everything a client derives from the metadata, made once per
// generation and never changed: the shards' keys and offsets, with the
// arguments the commands need already boxed, so that the hot path
// allocates nothing for them.
type layout struct {
	meta
	name      string
	raw       string   // the metadata value as read (compared before a switch)
	keys      []string // shard keys
	keyArgs   []any    // keys, boxed
	slots     []int    // each shard key's cluster slot
	dataBytes []uint64 // each shard's data bytes
	markerOff []uint64 // each shard's marker bit offset: 8·dataBytes
	countOff  []uint64 // each shard's counter bit offset: marker + 64
	read      time.Time
}

func newLayout(name, raw string, m *meta) *layout {
	l := &layout{meta: *m, name: name, raw: raw, read: time.Now(),
		keys: make([]string, m.shards), keyArgs: make([]any, m.shards), slots: make([]int, m.shards),
		dataBytes: make([]uint64, m.shards), markerOff: make([]uint64, m.shards), countOff: make([]uint64, m.shards)}
	for i := range m.shards {
		l.keys[i] = m.shardKey(name, i)
		l.keyArgs[i] = l.keys[i]
		l.slots[i] = Slot(l.keys[i])
		l.dataBytes[i] = m.shardBlocksOf(i) * blockBytes
		l.markerOff[i] = 8 * l.dataBytes[i]
		l.countOff[i] = l.markerOff[i] + 64
	}
	return l
}

// locate returns the shard of the key whose digest is d and appends the
// bit offsets, within that shard's string, of the key's k bits to offs.
// Redis numbers the bits of a string from the most significant bit of
// byte 0; the file's payload (and blocked.Filter) from the least
// significant: bit p of a block is Redis bit p XOR 7 of the block's 64
// bytes, so a shard's bytes are exactly the file's payload bytes.
func (l *layout) locate(d hashing.Digest, pos []uint16, offs []uint64) (int, []uint16, []uint64) {
	g := blocked.BlockOf(d, l.blocks)
	s := g / l.shardBlocks
	base := (g - s*l.shardBlocks) * blocked.BlockBits
	pos = blocked.AppendPositions(pos[:0], d, l.k)
	for _, p := range pos {
		offs = append(offs, base+uint64(p^7))
	}
	return int(s), pos, offs
}

// crcOf is the metadata checksum of body.
func crcOf(body string) uint32 { return crc32.Checksum([]byte(body), castagnoli) }
