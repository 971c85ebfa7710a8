package server_test

import (
	"context"
	"fmt"
	"log"

	"github.com/bloomlab/bloomlab/server"
	"github.com/redis/go-redis/v9"
)

// A server in the test's own process, on a free port of 127.0.0.1, kept in
// memory, used with an unchanged Redis client (go-redis v9 here).
func Example() {
	s, err := server.Run(server.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr().String()})
	defer rdb.Close()

	rdb.BFReserve(ctx, "users", 0.001, 10000)
	added, _ := rdb.BFAdd(ctx, "users", "alice").Result()
	again, _ := rdb.BFAdd(ctx, "users", "alice").Result()
	found, _ := rdb.BFMExists(ctx, "users", "alice", "bob").Result()
	info, _ := rdb.BFInfo(ctx, "users").Result()
	fmt.Println(added, again, found)
	fmt.Println(info.Capacity, info.ItemsInserted)

	rdb.CMSInitByDim(ctx, "clicks", 2000, 5)
	rdb.CMSIncrBy(ctx, "clicks", "home", 3, "about", 1)
	counts, _ := rdb.CMSQuery(ctx, "clicks", "home", "about", "never").Result()
	fmt.Println(counts)
	// Output:
	// true false [true false]
	// 10000 1
	// [3 1 0]
}

// Serving a filter built offline (bloomlab build) under a key: the file is
// the key's initial state; with Dir set, additions persist across
// restarts.
func ExampleConfig_load() {
	cfg := server.Config{
		Dir:         "data", // created if missing
		AppendFsync: server.Always,
		Load:        []server.Load{{Name: "users", Path: "users.blf"}},
	}
	_ = cfg // server.New(cfg), then s.ListenAndServe("127.0.0.1:6380")
}
