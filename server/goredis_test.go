package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func goRedis(t testing.TB, s *Server, protocol int, password string) *redis.Client {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr().String(), Protocol: protocol, Password: password,
		DialTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// forDialects runs f in a subtest for each dialect and protocol.
func forDialects(t *testing.T, f func(t *testing.T, d Dialect, proto int)) {
	for _, d := range []Dialect{Dialect8, Dialect24} {
		for _, proto := range []int{2, 3} {
			t.Run(fmt.Sprintf("dialect%v/RESP%d", d, proto), func(t *testing.T) { f(t, d, proto) })
		}
	}
}

// TestGoRedisTyped drives the server with go-redis v9's typed BF and CMS
// calls over RESP2 and RESP3 (go-redis checks the reply shapes), the
// single-field BF.INFO helpers included, and the generic commands it
// offers.
func TestGoRedisTyped(t *testing.T) {
	forDialects(t, func(t *testing.T, d Dialect, proto int) {
		ctx := context.Background()
		s := start(t, Config{Dialect: d})
		rdb := goRedis(t, s, proto, "")
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(rdb.Ping(ctx).Err())
		must(rdb.BFReserve(ctx, "f", 0.01, 100).Err())
		if err := rdb.BFReserve(ctx, "f", 0.01, 100).Err(); err == nil || err.Error() != "ERR item exists" {
			t.Fatalf("second reserve: %v", err)
		}
		must(rdb.BFReserveWithArgs(ctx, "g", &redis.BFReserveOptions{Error: 0.001, Capacity: 50, Expansion: 4}).Err())
		must(rdb.BFReserveNonScaling(ctx, "ns", 0.01, 3).Err())
		if added, err := rdb.BFAdd(ctx, "f", "a").Result(); err != nil || !added {
			t.Fatalf("BFAdd: %v %v", added, err)
		}
		if added, _ := rdb.BFAdd(ctx, "f", "a").Result(); added {
			t.Fatal("BFAdd of a present key answered added")
		}
		res, err := rdb.BFMAdd(ctx, "f", "b", "c", "a").Result()
		if err != nil || fmt.Sprint(res) != "[true true false]" {
			t.Fatalf("BFMAdd: %v %v", res, err)
		}
		if ok, _ := rdb.BFExists(ctx, "f", "b").Result(); !ok {
			t.Fatal("BFExists b")
		}
		if ok, _ := rdb.BFExists(ctx, "nokey", "b").Result(); ok {
			t.Fatal("BFExists on a missing key")
		}
		ex, err := rdb.BFMExists(ctx, "f", "a", "zz").Result()
		if err != nil || fmt.Sprint(ex) != "[true false]" {
			t.Fatalf("BFMExists: %v %v", ex, err)
		}
		info, err := rdb.BFInfo(ctx, "f").Result()
		if err != nil || info.Capacity != 100 || info.Size != 240 || info.Filters != 1 || info.ItemsInserted != 3 || info.ExpansionRate != 2 {
			t.Fatalf("BFInfo: %+v %v", info, err)
		}
		// The single-field helpers: BF.INFO KEY FIELD, answered with
		// an array of one (RedisBloom 2.4.23), which go-redis v9.23
		// reads as it reads Redis 8's map of one.
		for _, h := range []struct {
			name string
			cmd  *redis.BFInfoCmd
			want redis.BFInfo
		}{
			{"BFInfoCapacity", rdb.BFInfoCapacity(ctx, "f"), redis.BFInfo{Capacity: 100}},
			{"BFInfoSize", rdb.BFInfoSize(ctx, "f"), redis.BFInfo{Size: 240}},
			{"BFInfoFilters", rdb.BFInfoFilters(ctx, "f"), redis.BFInfo{Filters: 1}},
			{"BFInfoItems", rdb.BFInfoItems(ctx, "f"), redis.BFInfo{ItemsInserted: 3}},
			{"BFInfoExpansion", rdb.BFInfoExpansion(ctx, "f"), redis.BFInfo{ExpansionRate: 2}},
			{"BFInfoArg CAPACITY", rdb.BFInfoArg(ctx, "f", "CAPACITY"), redis.BFInfo{Capacity: 100}},
		} {
			if got, err := h.cmd.Result(); err != nil || got != h.want {
				t.Fatalf("%s: %+v %v, want %+v", h.name, got, err, h.want)
			}
		}
		if n, err := rdb.BFCard(ctx, "f").Result(); err != nil || n != 3 {
			t.Fatalf("BFCard: %d %v", n, err)
		}
		ins, err := rdb.BFInsert(ctx, "ins", &redis.BFInsertOptions{Capacity: 10, Error: 0.05, Expansion: 2}, "x", "y", "x").Result()
		if err != nil || fmt.Sprint(ins) != "[true true false]" {
			t.Fatalf("BFInsert: %v %v", ins, err)
		}
		if err := rdb.BFInsert(ctx, "missing", &redis.BFInsertOptions{NoCreate: true}, "x").Err(); err == nil || err.Error() != "ERR not found" {
			t.Fatalf("BFInsert NOCREATE: %v", err)
		}
		for i := 0; i < 3; i++ {
			rdb.BFAdd(ctx, "ns", fmt.Sprint("n", i))
		}
		if err := rdb.BFAdd(ctx, "ns", "more").Err(); err == nil || err.Error() != "ERR non scaling filter is full" {
			t.Fatalf("full: %v", err)
		}
		// The dump, chunk by chunk, into another key.
		for i := 0; i < 500; i++ {
			rdb.BFAdd(ctx, "g", fmt.Sprint("g", i))
		}
		it := int64(0)
		for {
			d, err := rdb.BFScanDump(ctx, "g", it).Result()
			must(err)
			if d.Iter == 0 {
				break
			}
			must(rdb.BFLoadChunk(ctx, "g2", d.Iter, d.Data).Err())
			it = d.Iter
		}
		for i := 0; i < 500; i++ {
			if ok, err := rdb.BFExists(ctx, "g2", fmt.Sprint("g", i)).Result(); err != nil || !ok {
				t.Fatalf("loaded copy lacks g%d: %v", i, err)
			}
		}
		i1, _ := rdb.BFInfo(ctx, "g").Result()
		i2, _ := rdb.BFInfo(ctx, "g2").Result()
		if i1 != i2 {
			t.Fatalf("BFInfo of the copy %+v, original %+v", i2, i1)
		}

		must(rdb.CMSInitByDim(ctx, "cm", 100, 5).Err())
		must(rdb.CMSInitByProb(ctx, "cp", 0.001, 0.01).Err())
		counts, err := rdb.CMSIncrBy(ctx, "cm", "a", 3, "b", 5, "a", 2).Result()
		if err != nil || fmt.Sprint(counts) != "[3 5 5]" {
			t.Fatalf("CMSIncrBy: %v %v", counts, err)
		}
		q, err := rdb.CMSQuery(ctx, "cm", "a", "b", "zz").Result()
		if err != nil || fmt.Sprint(q) != "[5 5 0]" {
			t.Fatalf("CMSQuery: %v %v", q, err)
		}
		ci, err := rdb.CMSInfo(ctx, "cp").Result()
		if err != nil || ci.Width != 2000 || ci.Depth != 7 || ci.Count != 0 {
			t.Fatalf("CMSInfo: %+v %v", ci, err)
		}
		must(rdb.CMSInitByDim(ctx, "cm2", 100, 5).Err())
		rdb.CMSIncrBy(ctx, "cm2", "a", 10)
		must(rdb.CMSInitByDim(ctx, "dst", 100, 5).Err())
		must(rdb.CMSMergeWithWeight(ctx, "dst", map[string]int64{"cm": 1, "cm2": 3}).Err())
		if q, _ := rdb.CMSQuery(ctx, "dst", "a", "b").Result(); fmt.Sprint(q) != "[35 5]" {
			t.Fatalf("after a weighted merge: %v", q)
		}
		must(rdb.CMSMerge(ctx, "dst", "cm", "cm2").Err())
		if q, _ := rdb.CMSQuery(ctx, "dst", "a").Result(); fmt.Sprint(q) != "[15]" {
			t.Fatalf("after a merge: %v", q)
		}
		if err := rdb.CMSQuery(ctx, "nokey", "a").Err(); err == nil || err.Error() != "CMS: key does not exist" {
			t.Fatalf("missing sketch: %v", err)
		}

		// Generic commands.
		must(rdb.Set(ctx, "str", "v", 0).Err())
		if err := rdb.BFAdd(ctx, "str", "x").Err(); err == nil || !strings.HasPrefix(err.Error(), "WRONGTYPE") {
			t.Fatalf("BFAdd on a string: %v", err)
		}
		if typ, _ := rdb.Type(ctx, "f").Result(); typ != "MBbloom--" {
			t.Fatalf("TYPE: %q", typ)
		}
		if typ, _ := rdb.Type(ctx, "cm").Result(); typ != "CMSk-TYPE" {
			t.Fatalf("TYPE: %q", typ)
		}
		if n, _ := rdb.Exists(ctx, "f", "g", "nokey").Result(); n != 2 {
			t.Fatalf("EXISTS: %d", n)
		}
		must(rdb.Expire(ctx, "g", time.Hour).Err())
		if ttl, _ := rdb.TTL(ctx, "g").Result(); ttl < 59*time.Minute || ttl > time.Hour {
			t.Fatalf("TTL: %v", ttl)
		}
		if ok, _ := rdb.Persist(ctx, "g").Result(); !ok {
			t.Fatal("PERSIST")
		}
		must(rdb.Rename(ctx, "g2", "g3").Err())
		if ok, _ := rdb.BFExists(ctx, "g3", "g7").Result(); !ok {
			t.Fatal("renamed filter lost a key")
		}
		keys, _ := rdb.Keys(ctx, "g*").Result()
		if fmt.Sprint(keys) != "[g g3]" && fmt.Sprint(keys) != "[g3 g]" {
			t.Fatalf("KEYS: %v", keys)
		}
		var scanned []string
		var cur uint64
		for {
			ks, next, err := rdb.Scan(ctx, cur, "*", 3).Result()
			must(err)
			scanned = append(scanned, ks...)
			if cur = next; cur == 0 {
				break
			}
		}
		n, _ := rdb.DBSize(ctx).Result()
		if int64(len(scanned)) != n || n != 10 {
			t.Fatalf("SCAN found %d keys, DBSIZE %d", len(scanned), n)
		}
		if info, _ := rdb.Info(ctx, "persistence").Result(); !strings.Contains(info, "rdb_bgsave_in_progress:0") {
			t.Fatalf("INFO: %q", info)
		}
		if cfg, err := rdb.ConfigGet(ctx, "maxmemory").Result(); err != nil || cfg["maxmemory"] == "" {
			t.Fatalf("CONFIG GET: %v %v", cfg, err)
		}
		if n, _ := rdb.Del(ctx, "f", "nokey").Result(); n != 1 {
			t.Fatalf("DEL: %d", n)
		}
		must(rdb.FlushAll(ctx).Err())
		if n, _ := rdb.DBSize(ctx).Result(); n != 0 {
			t.Fatalf("after FLUSHALL: %d keys", n)
		}
	})
}

// TestGoRedisTransactions: go-redis's MULTI/EXEC pipelines and WATCH-based
// optimistic transactions, including one that a concurrent write aborts.
func TestGoRedisTransactions(t *testing.T) {
	ctx := context.Background()
	s := start(t, Config{})
	for _, proto := range []int{2, 3} {
		rdb := goRedis(t, s, proto, "")
		cmds, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.BFAdd(ctx, "tx", "a")
			p.BFAdd(ctx, "tx", "b")
			p.BFCard(ctx, "tx")
			return nil
		})
		if err != nil || len(cmds) != 3 || cmds[2].(*redis.IntCmd).Val() != 2 {
			t.Fatalf("TxPipelined: %v %v", cmds, err)
		}
		rdb.FlushAll(ctx)
		other := goRedis(t, s, proto, "")
		attempts := 0
		err = rdb.Watch(ctx, func(tx *redis.Tx) error {
			attempts++
			n, err := tx.BFCard(ctx, "w").Result()
			if err != nil {
				return err
			}
			if attempts == 1 {
				other.BFAdd(ctx, "w", "intruder") // changes the watched key
			}
			_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.BFAdd(ctx, "w", fmt.Sprint("after-", n))
				return nil
			})
			return err
		}, "w")
		if !errors.Is(err, redis.TxFailedErr) || attempts != 1 {
			t.Fatalf("watched key changed: %v after %d attempts", err, attempts)
		}
		err = rdb.Watch(ctx, func(tx *redis.Tx) error {
			_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.BFAdd(ctx, "w", "ok")
				return nil
			})
			return err
		}, "w")
		if err != nil {
			t.Fatalf("unchanged watch: %v", err)
		}
		if ok, _ := rdb.BFExists(ctx, "w", "ok").Result(); !ok {
			t.Fatal("transaction not applied")
		}
		rdb.FlushAll(ctx)
	}
}

// TestGoRedisAuth: with a password, commands before AUTH get NOAUTH; the
// client that knows it (AUTH in RESP2, HELLO AUTH in RESP3) works.
func TestGoRedisAuth(t *testing.T) {
	ctx := context.Background()
	s := start(t, Config{Password: "sesame"})
	c := dial(t, s)
	if got := c.do("BF.ADD", "f", "x"); got != "-NOAUTH Authentication required." {
		t.Fatalf("before AUTH: %s", got)
	}
	if got := c.do("AUTH", "wrong"); got != "-WRONGPASS invalid username-password pair or user is disabled." {
		t.Fatalf("wrong password: %s", got)
	}
	for _, proto := range []int{2, 3} {
		rdb := goRedis(t, s, proto, "sesame")
		if err := rdb.BFAdd(ctx, "f", "x").Err(); err != nil {
			t.Fatalf("RESP%d with the password: %v", proto, err)
		}
		bad := goRedis(t, s, proto, "nope")
		if err := bad.Ping(ctx).Err(); err == nil {
			t.Fatalf("RESP%d with a wrong password: no error", proto)
		}
	}
}

// TestGoRedisCF drives the CF commands with go-redis v9's typed calls over
// RESP2 and RESP3 (go-redis checks CF.INFO's labels and the reply
// shapes): a dump taken with CFScanDump, which ends on RedisBloom's nil
// (redis.Nil), loads into another key with CFLoadChunk.
func TestGoRedisCF(t *testing.T) {
	forDialects(t, func(t *testing.T, d Dialect, proto int) {
		ctx := context.Background()
		s := start(t, Config{Dialect: d})
		rdb := goRedis(t, s, proto, "")
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(rdb.CFReserve(ctx, "c", 1000).Err())
		if err := rdb.CFReserve(ctx, "c", 1000).Err(); err == nil || err.Error() != "ERR item exists" {
			t.Fatalf("second reserve: %v", err)
		}
		must(rdb.CFReserveWithArgs(ctx, "g", &redis.CFReserveOptions{Capacity: 64, BucketSize: 4, MaxIterations: 50, Expansion: 2}).Err())
		must(rdb.CFReserveExpansion(ctx, "e", 100, 0).Err())
		must(rdb.CFReserveBucketSize(ctx, "b", 100, 3).Err())
		must(rdb.CFReserveMaxIterations(ctx, "m", 100, 9).Err())
		if added, err := rdb.CFAdd(ctx, "c", "a").Result(); err != nil || !added {
			t.Fatalf("CFAdd: %v %v", added, err)
		}
		if added, err := rdb.CFAddNX(ctx, "c", "a").Result(); err != nil || added {
			t.Fatalf("CFAddNX of a present key: %v %v", added, err)
		}
		if added, err := rdb.CFAddNX(ctx, "c", "b").Result(); err != nil || !added {
			t.Fatalf("CFAddNX: %v %v", added, err)
		}
		ins, err := rdb.CFInsert(ctx, "c", nil, "x", "y", "a").Result()
		if err != nil || fmt.Sprint(ins) != "[true true true]" {
			t.Fatalf("CFInsert: %v %v", ins, err)
		}
		nx, err := rdb.CFInsertNX(ctx, "new", &redis.CFInsertOptions{Capacity: 100}, "p", "q", "p").Result()
		if err != nil || fmt.Sprint(nx) != "[1 1 0]" {
			t.Fatalf("CFInsertNX: %v %v", nx, err)
		}
		if err := rdb.CFInsert(ctx, "missing", &redis.CFInsertOptions{NoCreate: true}, "x").Err(); err == nil || err.Error() != "ERR not found" {
			t.Fatalf("CFInsert NOCREATE: %v", err)
		}
		if ok, err := rdb.CFExists(ctx, "c", "x").Result(); err != nil || !ok {
			t.Fatalf("CFExists: %v %v", ok, err)
		}
		ex, err := rdb.CFMExists(ctx, "c", "a", "y", "zz").Result()
		if err != nil || fmt.Sprint(ex) != "[true true false]" {
			t.Fatalf("CFMExists: %v %v", ex, err)
		}
		if n, err := rdb.CFCount(ctx, "c", "a").Result(); err != nil || n != 2 {
			t.Fatalf("CFCount: %d %v", n, err)
		}
		if ok, err := rdb.CFDel(ctx, "c", "a").Result(); err != nil || !ok {
			t.Fatalf("CFDel: %v %v", ok, err)
		}
		if ok, err := rdb.CFDel(ctx, "c", "never").Result(); err != nil || ok {
			t.Fatalf("CFDel of a key never added: %v %v", ok, err)
		}
		info, err := rdb.CFInfo(ctx, "c").Result()
		want := redis.CFInfo{Size: 1080, NumBuckets: 512, NumFilters: 1, NumItemsInserted: 4, NumItemsDeleted: 1, BucketSize: 2, ExpansionRate: 1, MaxIteration: 20}
		if err != nil || info != want {
			t.Fatalf("CFInfo: %+v %v", info, err)
		}
		if info, _ := rdb.CFInfo(ctx, "m").Result(); info.MaxIteration != 9 || info.BucketSize != 2 {
			t.Fatalf("CFInfo after CFReserveMaxIterations: %+v", info)
		}
		if info, _ := rdb.CFInfo(ctx, "b").Result(); info.BucketSize != 3 || info.ExpansionRate != 1 {
			t.Fatalf("CFInfo after CFReserveBucketSize: %+v", info)
		}
		if info, _ := rdb.CFInfo(ctx, "e").Result(); info.ExpansionRate != 0 {
			t.Fatalf("CFInfo after CFReserveExpansion 0: %+v", info)
		}
		// The dump of a grown filter, chunk by chunk, into another key.
		for i := 0; i < 500; i++ {
			must(rdb.CFAdd(ctx, "g", fmt.Sprint("g", i)).Err())
		}
		it, chunks := int64(0), 0
		for {
			d, err := rdb.CFScanDump(ctx, "g", it).Result()
			if errors.Is(err, redis.Nil) && d.Iter == 0 {
				break // RedisBloom's [0, nil]
			}
			must(err)
			must(rdb.CFLoadChunk(ctx, "g2", d.Iter, d.Data).Err())
			it = d.Iter
			chunks++
		}
		if chunks < 3 {
			t.Fatalf("%d chunks", chunks)
		}
		for i := 0; i < 500; i++ {
			if ok, err := rdb.CFExists(ctx, "g2", fmt.Sprint("g", i)).Result(); err != nil || !ok {
				t.Fatalf("loaded copy lacks g%d: %v", i, err)
			}
		}
		i1, _ := rdb.CFInfo(ctx, "g").Result()
		i2, _ := rdb.CFInfo(ctx, "g2").Result()
		if i1 != i2 || i1.NumFilters < 2 {
			t.Fatalf("CFInfo of the copy %+v, original %+v", i2, i1)
		}
		if typ, _ := rdb.Type(ctx, "g2").Result(); typ != "MBbloomCF" {
			t.Fatalf("TYPE: %q", typ)
		}
		if err := rdb.BFExists(ctx, "g2", "g1").Err(); err == nil || !strings.HasPrefix(err.Error(), "WRONGTYPE") {
			t.Fatalf("BFExists on a CF key: %v", err)
		}
	})
}

// TestGoRedisModuleConfigs: go-redis's CONFIG SET and GET of the module
// configs under Dialect8, over RESP2 and RESP3 (a map under both in
// go-redis), RedisBloom's refusal included.
func TestGoRedisModuleConfigs(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			ctx := context.Background()
			s := start(t, Config{})
			rdb := goRedis(t, s, proto, "")
			cfg, err := rdb.ConfigGet(ctx, "bf-*").Result()
			if want := map[string]string{"bf-error-rate": "0.01", "bf-initial-size": "100", "bf-expansion-factor": "2"}; err != nil || fmt.Sprint(cfg) != fmt.Sprint(want) {
				t.Fatalf("CONFIG GET bf-*: %v %v, want %v", cfg, err, want)
			}
			if err := rdb.ConfigSet(ctx, "cf-max-expansions", "64").Err(); err != nil {
				t.Fatal(err)
			}
			if cfg, _ := rdb.ConfigGet(ctx, "cf-max-expansions").Result(); cfg["cf-max-expansions"] != "64" {
				t.Fatalf("after CONFIG SET: %v", cfg)
			}
			want := "ERR CONFIG SET failed (possibly related to argument 'cf-max-expansions') - Value for `cf-max-expansions` must be in the range [1, 65536]"
			if err := rdb.ConfigSet(ctx, "cf-max-expansions", "0").Err(); err == nil || err.Error() != want {
				t.Fatalf("CONFIG SET out of range: %v", err)
			}
		})
	}
}

// TestGoRedisDialect8: go-redis's typed calls see RedisBloom 8.6.2's
// answers under Dialect8 (each expectation measured on the real module):
// an error rate above 0.25 taken as 0.25, its range and BUCKETSIZE's in
// its words, CMS counters per row as RedisBloom hashes them, and new keys
// made with the module configs' defaults.
func TestGoRedisDialect8(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			ctx := context.Background()
			s := start(t, Config{})
			rdb := goRedis(t, s, proto, "")
			must := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			must(rdb.BFReserve(ctx, "hi", 0.5, 100).Err())
			if info, err := rdb.BFInfo(ctx, "hi").Result(); err != nil || info.Size != 152 || info.Capacity != 100 {
				t.Errorf("BF.RESERVE at error rate 0.5 (taken as 0.25): %+v %v", info, err)
			}
			if err := rdb.BFReserve(ctx, "bad", 1.5, 100).Err(); err == nil || err.Error() != "ERR error rate must be in the range (0.000000, 1.000000)" {
				t.Errorf("BF.RESERVE at error rate 1.5: %v", err)
			}
			if err := rdb.CFReserveBucketSize(ctx, "c", 100, 256).Err(); err == nil || err.Error() != "BUCKETSIZE: value must be in the range [1, 255]" {
				t.Errorf("CF.RESERVE BUCKETSIZE 256: %v", err)
			}
			must(rdb.CMSInitByDim(ctx, "cms", 2, 2).Err())
			if got, err := rdb.CMSIncrBy(ctx, "cms", "foo", 10, "bar", 42).Result(); err != nil || fmt.Sprint(got) != "[10 42]" {
				t.Errorf("CMS.INCRBY: %v %v", got, err)
			}
			if got, err := rdb.CMSQuery(ctx, "cms", "foo", "bar").Result(); err != nil || fmt.Sprint(got) != "[10 42]" {
				t.Errorf("CMS.QUERY: %v %v", got, err)
			}
			must(rdb.ConfigSet(ctx, "bf-error-rate", "0.02").Err())
			must(rdb.ConfigSet(ctx, "bf-initial-size", "200").Err())
			must(rdb.ConfigSet(ctx, "bf-expansion-factor", "3").Err())
			must(rdb.ConfigSet(ctx, "cf-initial-size", "2048").Err())
			must(rdb.ConfigSet(ctx, "cf-bucket-size", "3").Err())
			must(rdb.ConfigSet(ctx, "cf-max-iterations", "30").Err())
			must(rdb.BFAdd(ctx, "nb", "x").Err())
			if info, err := rdb.BFInfo(ctx, "nb").Result(); err != nil || info != (redis.BFInfo{Capacity: 200, Size: 336, Filters: 1, ItemsInserted: 1, ExpansionRate: 3}) {
				t.Errorf("BF.ADD after CONFIG SET: %+v %v", info, err)
			}
			must(rdb.CFAdd(ctx, "nc", "x").Err())
			want := redis.CFInfo{Size: 3128, NumBuckets: 1024, NumFilters: 1, NumItemsInserted: 1, BucketSize: 3, ExpansionRate: 1, MaxIteration: 30}
			if info, err := rdb.CFInfo(ctx, "nc").Result(); err != nil || info != want {
				t.Errorf("CF.ADD after CONFIG SET: %+v %v", info, err)
			}
		})
	}
}
