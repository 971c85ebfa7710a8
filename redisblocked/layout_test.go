package redisblocked

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// Redis Cluster's key hash is CRC-16/XMODEM: the cluster specification's
// test vector, and hash tags as the specification reads them.
func TestSlot(t *testing.T) {
	if got := crc16("123456789"); got != 0x31C3 {
		t.Fatalf("crc16(123456789) = %#x, want 0x31c3", got)
	}
	for _, c := range []struct {
		key  string
		slot int
	}{
		{"123456789", 0x31C3 % 16384},
		{"{user1000}.following", Slot("user1000")},
		{"foo{}{bar}", Slot("foo{}{bar}")}, // an empty tag: the whole key
		{"foo{{bar}}zap", Slot("{bar")},
		{"foo{bar}{zap}", Slot("bar")},
	} {
		if got := Slot(c.key); got != c.slot {
			t.Errorf("Slot(%q) = %d, want %d", c.key, got, c.slot)
		}
	}
}

// Every slot has a tag, the tags are the smallest numbers with their slot,
// and every shard key lands in the slot its index asks for.
func TestSlotTags(t *testing.T) {
	tags := slotTags()
	var most uint32
	for s, n := range tags {
		if got := Slot(fmt.Sprint(n)); got != s {
			t.Fatalf("tag %d of slot %d hashes to slot %d", n, s, got)
		}
		most = max(most, n)
	}
	if most >= 200000 {
		t.Errorf("largest tag %d, the doc says below 200,000", most)
	}
	// Pinned: the tags are part of the layout (a reader derives the shard
	// keys from them).
	if got := fmt.Sprint(tags[0], tags[1], tags[12182], tags[16383]); got != "3560 22179 43681 39296" {
		t.Errorf("tags of slots 0, 1, 12182, 16383: %s", got)
	}
	m := &meta{blocks: 1000, k: 7, shards: 12, shardBlocks: 84, gen: 0x0123456789abcdef, slot: Slot("users")}
	perNode := [3]int{}
	for i := range m.shards {
		key := m.shardKey("users", i)
		if Slot(key) != m.shardSlot(i) {
			t.Errorf("shard %d: key %s in slot %d, want %d", i, key, Slot(key), m.shardSlot(i))
		}
		perNode[m.shardSlot(i)*3/16384]++ // redis-cli --cluster create's even split, roughly
	}
	if perNode != [3]int{4, 4, 4} {
		t.Errorf("12 shards over three even slot ranges: %v, want 4 each", perNode)
	}
	if got, want := m.shardKey("users", 3), "users:{1231}:g0123456789abcdef:s3"; got != want {
		t.Errorf("shard key %s, want %s", got, want)
	}
}

// The metadata value, pinned byte for byte, and its round trip.
func TestMetaEncoding(t *testing.T) {
	m := &meta{blocks: 19532, k: 7, seed: 42, capacity: 100000, n: 99999, shards: 12, shardBlocks: 1628, gen: 0xfeedface01234567, slot: 14124}
	const want = "bloomlab-redis 1 kind=blocked blocks=19532 k=7 seed=42 capacity=100000 n=99999 shards=12 shard-blocks=1628 gen=feedface01234567 slot=14124 crc=63be14b2"
	if got := m.encode(); got != want {
		t.Fatalf("encode:\n got %s\nwant %s", got, want)
	}
	back, err := decodeMeta("x", want)
	if err != nil || *back != *m {
		t.Fatalf("decode: %+v, %v", back, err)
	}
}

// Metadata read from Redis is untrusted: anything but a valid value of
// this layout is a clear error, before anything is allocated from it.
func TestMetaHostile(t *testing.T) {
	good := (&meta{blocks: 100, k: 7, seed: 1, shards: 4, shardBlocks: 25, gen: 9, slot: 5}).encode()
	resum := func(body string) string {
		return body + fmt.Sprintf(" crc=%08x", crcOf(body))
	}
	body, _, _ := strings.Cut(good, " crc=")
	for _, c := range []struct {
		name, v string
		want    error
		says    string
	}{
		{"empty", "", ErrNotFilter, "not bloomlab metadata"},
		{"other string", "hello world", ErrNotFilter, "not bloomlab metadata"},
		{"long", strings.Repeat("a", 1024), ErrNotFilter, "1024 bytes or more"},
		{"version 2", strings.Replace(good, "bloomlab-redis 1 ", "bloomlab-redis 2 ", 1), ErrVersion, "layout version \"2\""},
		{"bad crc", body + " crc=00000000", ErrNotFilter, "checksum"},
		{"no crc", body, ErrNotFilter, "checksum"},
		{"other kind", resum(strings.Replace(body, "kind=blocked", "kind=bloom", 1)), ErrNotFilter, "kind \"bloom\""},
		{"blocks 0", resum(strings.Replace(body, "blocks=100", "blocks=0", 1)), ErrNotFilter, "blocks = 0"},
		{"blocks huge", resum(strings.Replace(body, "blocks=100", "blocks=99999999999999999", 1)), ErrNotFilter, "out of range"},
		{"k 0", resum(strings.Replace(body, " k=7", " k=0", 1)), ErrNotFilter, "k = 0"},
		{"k 65", resum(strings.Replace(body, " k=7", " k=65", 1)), ErrNotFilter, "k = 65"},
		{"shards disagree", resum(strings.Replace(body, "shards=4", "shards=5", 1)), ErrNotFilter, "shards = 5"},
		{"shards huge", resum(strings.Replace(strings.Replace(body, "shards=4", "shards=100000000", 1), "shard-blocks=25", "shard-blocks=1", 1)), ErrNotFilter, "shards = 100000000"},
		{"shard too big", resum(strings.Replace(body, "shard-blocks=25", "shard-blocks=8388608", 1)), ErrNotFilter, "shard-blocks"},
		{"gen 0", resum(strings.Replace(body, "gen=0000000000000009", "gen=0000000000000000", 1)), ErrNotFilter, "generation 0"},
		{"slot", resum(strings.Replace(body, "slot=5", "slot=16384", 1)), ErrNotFilter, "slot"},
		{"negative", resum(strings.Replace(body, "seed=1", "seed=-1", 1)), ErrNotFilter, "not a number"},
		{"field order", resum(strings.Replace(body, "seed=1 capacity=0", "capacity=0 seed=1", 1)), ErrNotFilter, "want seed="},
		{"extra field", resum(body + " extra=1"), ErrNotFilter, "fields"},
	} {
		_, err := decodeMeta("x", c.v)
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v, want %v saying %q", c.name, err, c.want, c.says)
		}
	}
}

func FuzzDecodeMeta(f *testing.F) {
	f.Add((&meta{blocks: 100, k: 7, seed: 1, shards: 4, shardBlocks: 25, gen: 9, slot: 5}).encode())
	f.Add("bloomlab-redis 1 kind=blocked")
	f.Fuzz(func(t *testing.T, v string) {
		m, err := decodeMeta("x", v)
		if err != nil {
			if !errors.Is(err, ErrNotFilter) {
				t.Fatalf("error not wrapping ErrNotFilter: %v", err)
			}
			return
		}
		if m.shards > MaxShards || m.blocks > MaxBlocks {
			t.Fatalf("accepted %+v", m)
		}
		if back, err := decodeMeta("x", m.encode()); err != nil || *back != *m {
			t.Fatalf("round trip of %q: %+v, %v", v, back, err)
		}
	})
}

func TestCheckName(t *testing.T) {
	for _, n := range []string{"", "a{b", "a}b", strings.Repeat("x", MaxNameLen+1)} {
		if err := checkName(n); !errors.Is(err, ErrParam) {
			t.Errorf("name %q: %v", n, err)
		}
	}
	for _, n := range []string{"users", "a b:c/d", "é", strings.Repeat("x", MaxNameLen)} {
		if err := checkName(n); err != nil {
			t.Errorf("name %q: %v", n, err)
		}
	}
}

// The shard plan: no shard over the limit, ShardsPerMaster per master on a
// cluster, the last shard the rest.
func TestPlanShards(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		blocks         uint64
		masters, ask   int
		max            int64
		shards         int
		per, lastBytes uint64
	}{
		{1, 1, 0, 0, 1, 1, 64 + 16},
		{1, 3, 0, 0, 1, 1, 64 + 16},                           // fewer blocks than shards wanted
		{1000, 1, 0, 0, 1, 1000, 64000 + 16},                  // one shard on a single server
		{1000, 3, 0, 0, 12, 84, 76*64 + 16},                   // 4 per master
		{1 << 20, 1, 0, 0, 2, 1 << 19, 32*mib + 16},           // 64 MiB of blocks and the trailer exceed 64 MiB
		{1<<20 - 1, 1, 0, 0, 1, 1<<20 - 1, (1<<20-1)*64 + 16}, // the most one 64 MiB shard holds
		{1000, 1, 7, 0, 7, 143, 142*64 + 16},
		{1000, 1, 0, 64 * 100, 11, 91, 90*64 + 16}, // 99 blocks fit in 6400 bytes with the trailer
		{MaxBlocks, 1, 0, MaxShardBytes, MaxShards, MaxShardBlocks, MaxShardBlocks*64 + 16},
	} {
		p, err := PlanShards(c.blocks, c.masters, c.ask, c.max)
		if err != nil {
			t.Errorf("%+v: %v", c, err)
			continue
		}
		last := (c.blocks-uint64(p.Shards-1)*p.ShardBlocks)*64 + 16
		if p.Shards != c.shards || p.ShardBlocks != c.per || last != c.lastBytes {
			t.Errorf("PlanShards(%d, %d, %d, %d) = %d shards of %d blocks, last %d bytes; want %d of %d, last %d",
				c.blocks, c.masters, c.ask, c.max, p.Shards, p.ShardBlocks, last, c.shards, c.per, c.lastBytes)
		}
		if p.ShardBytes > MaxShardBytes || (c.max > 0 && int64(p.ShardBytes) > c.max) || (c.max == 0 && p.ShardBytes > DefaultShardBytes && c.ask == 0) {
			t.Errorf("%+v: shard of %d bytes", c, p.ShardBytes)
		}
	}
	for _, c := range []struct {
		blocks    uint64
		ask       int
		max       int64
		complains string
	}{
		{0, 0, 0, "blocks"},
		{MaxBlocks + 1, 0, 0, "blocks"},
		{100, -1, 0, "shards"},
		{100, MaxShards + 1, 0, "shards"},
		{100, 0, MaxShardBytes + 1, "largest shard"},
		{100, 0, 79, "largest shard"},
		{1 << 30, 1, 0, "blocks per shard"},
	} {
		if _, err := PlanShards(c.blocks, 1, c.ask, c.max); !errors.Is(err, ErrParam) || !strings.Contains(err.Error(), c.complains) {
			t.Errorf("PlanShards(%d, 1, %d, %d): %v, want ErrParam about %s", c.blocks, c.ask, c.max, err, c.complains)
		}
	}
}
