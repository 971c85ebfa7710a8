package scalable_test

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/bloomlab/bloomlab/rdb"
	"github.com/bloomlab/bloomlab/scalable"
)

// Every BF key of a Redis RDB file (here one saved by Redis 7.0 with
// RedisBloom 8.6.2) read as a chain that answers exactly as RedisBloom
// did, without re-adding a key; the file is streamed, each filter
// allocated once.
func ExampleReadRedisBloomRDB() {
	f, err := os.Open("../rdb/testdata/redisbloom-8.6.2-rdb.rdb")
	if err != nil {
		panic(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	r, err := rdb.NewReader(f, rdb.Limits{InputSize: st.Size()})
	if err != nil {
		panic(err)
	}
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		var unsupported *rdb.UnsupportedTypeError
		if errors.As(err, &unsupported) {
			if err := r.Skip(); err != nil { // a list, a set…: passed over
				panic(err)
			}
			continue
		}
		if err != nil {
			panic(err)
		}
		if e.Module == nil || e.Module.Name != scalable.RDBTypeName {
			if e.Module != nil {
				if err := e.Module.Skip(); err != nil {
					panic(err)
				}
			}
			continue
		}
		bf, err := scalable.ReadRedisBloomRDB(e.Module, nil)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s: links %d, keys %d\n", e.Key, bf.Links(), bf.N())
	}
	// Output:
	// ins: links 2, keys 12
	// big: links 1, keys 199999
	// ns: links 1, keys 20
	// small: links 2, keys 148
	// grow4: links 3, keys 5999
}
