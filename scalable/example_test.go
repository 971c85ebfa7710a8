package scalable_test

import (
	"errors"
	"fmt"

	"github.com/bloomlab/bloomlab/scalable"
)

// A chain for an unknown number of keys: it starts at 1,000 and grows,
// and its false-positive rate stays below 1% however many keys come.
func Example() {
	f, err := scalable.New(scalable.Config{Capacity: 1000, FPR: 0.01})
	if err != nil {
		panic(err)
	}
	for i := 0; i < 10000; i++ {
		if _, err := f.Add([]byte(fmt.Sprint("user-", i))); err != nil {
			panic(err)
		}
	}
	fmt.Println(f.Contains([]byte("user-42")), f.Links(), f.Stats().Bound <= 0.01)
	// Output: true 4 true
}

// The RedisBloom profile: BF.RESERVE, BF.ADD, and the chunks that
// BF.SCANDUMP returns and BF.LOADCHUNK takes.
func Example_redisBloom() {
	f, _ := scalable.NewRedisBloom(0.01, 100, 2, false) // BF.RESERVE key 0.01 100
	added, _ := f.Add([]byte("a"))                      // BF.ADD key a
	again, _ := f.Add([]byte("a"))
	fmt.Println(!added, again, f.N())
	chunks, _ := f.Dump(0)
	for _, c := range chunks {
		fmt.Printf("BF.LOADCHUNK key %d <%d bytes>\n", c.Iter, len(c.Data))
	}
	g, _ := scalable.LoadChunks(chunks)
	fmt.Println(g.Contains([]byte("a")), g.RedisInfo()) // BF.INFO's fields, then BF.DEBUG's links
	// Output:
	// true true 1
	// BF.LOADCHUNK key 1 <73 bytes>
	// BF.LOADCHUNK key 145 <144 bytes>
	// true {100 240 1 1 2 [{144 1152 8 100 1 0.005}]}
}

// A non-scaling filter refuses new keys past its capacity and changes
// nothing; keys already present are still answered.
func ExampleFilter_Add() {
	f, _ := scalable.New(scalable.Config{Capacity: 2, NonScaling: true})
	for _, k := range []string{"a", "b", "c", "a"} {
		present, err := f.Add([]byte(k))
		fmt.Println(k, present, errors.Is(err, scalable.ErrFull))
	}
	// Output:
	// a false false
	// b false false
	// c false true
	// a true false
}
