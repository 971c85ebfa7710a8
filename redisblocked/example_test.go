package redisblocked_test

import (
	"cmp"
	"context"
	"fmt"
	"log"
	"os"

	"github.com/bloomlab/bloomlab/blocked"
	"github.com/bloomlab/bloomlab/redisblocked"
	"github.com/redis/go-redis/v9"
)

// A filter built here, uploaded to Redis, then shared: any number of
// processes open it by name and add and query keys in place. It needs a
// Redis 6.2 or later (or Valkey, or a cluster: redis.NewClusterClient) at
// REDIS_ADDR, 127.0.0.1:6380 if unset; it has no Output because go test
// has no Redis of its own: TestExample runs it against a redis-server it
// starts and checks what it prints.
func Example() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: cmp.Or(os.Getenv("REDIS_ADDR"), "127.0.0.1:6380")})
	defer rdb.Close()

	local, err := blocked.NewWithEstimates(100_000, 0.01) // as bloomlab build makes it
	if err != nil {
		log.Fatal(err)
	}
	local.AddString("alice")
	f, err := redisblocked.UploadFilter(ctx, rdb, "users", local, &redisblocked.Config{Replace: true})
	if err != nil {
		log.Fatal(err)
	}
	if err := f.AddString(ctx, "bob"); err != nil {
		log.Fatal(err)
	}

	g, err := redisblocked.Open(ctx, rdb, "users", nil) // another process, another machine
	if err != nil {
		log.Fatal(err)
	}
	for _, key := range []string{"alice", "bob", "carol"} {
		present, err := g.ContainsString(ctx, key) // an error (a node down…) is never an "absent"
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(key, present)
	}
	fmt.Println(g.Blocks(), "blocks in", len(g.ShardKeys()), "shard")
}
